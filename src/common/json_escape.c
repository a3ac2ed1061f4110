/*
 * json_escape.c - JSON string escapes (json_escape.h).
 */
#include "json_escape.h"

/* The value of four hex digits at s, or -1. */
static long hex4(const char *s)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        v = v << 4 | d;
    }
    return v;
}

size_t simdbpe__json_escape(const char *s, size_t n, uint32_t *cp)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (n == 0)
        return 0;
    for (int k = 0; from[k]; k++)
        if (s[0] == from[k]) {
            *cp = (unsigned char)to[k];
            return 1;
        }
    long hi = s[0] == 'u' && n >= 5 ? hex4(s + 1) : -1;
    if (hi < 0)
        return 0;
    *cp = (uint32_t)hi;
    if (hi >= 0xD800 && hi <= 0xDBFF && n >= 11 && s[5] == '\\' && s[6] == 'u') {
        long lo = hex4(s + 7);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *cp = 0x10000 + ((uint32_t)(hi - 0xD800) << 10) + (uint32_t)(lo - 0xDC00);
            return 11;
        }
    }
    return 5;
}
