/*
 * safecut.c - safe cut points for long documents (see safecut.h for why
 * the rule is exact).
 */
#include "safecut.h"

#include <stdint.h>

#include "utf8.h"

int safecut_is_space(unsigned cp)
{
    if (cp <= 0x20)
        return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
    if (cp < 0x85)
        return 0;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* The well-formed character that ends exactly at p (p >= 1), or 0. */
static int decode_before(const unsigned char *s, size_t n, size_t p, unsigned *cp)
{
    for (size_t back = 1; back <= 4 && back <= p; back++) {
        unsigned b = s[p - back];
        if (back == 1 && b < 0x80) {
            *cp = b;
            return 1;
        }
        if (b >= 0x80 && b <= 0xBF)
            continue; /* a continuation byte: the lead is further back */
        return utf8_decode(s, n, p - back, cp) == back;
    }
    return 0;
}

/* Whether s[p] can start a White_Space character (cheap pre-check). */
static int may_start_space(unsigned b)
{
    return b == 0x20 || (b >= 0x09 && b <= 0x0D) || b == 0xC2 || (b >= 0xE1 && b <= 0xE3);
}

static int cut_ok(const unsigned char *s, size_t n, size_t p, int line_breaks)
{
    unsigned x, w, y;
    if (p == 0 || p >= n || !may_start_space(s[p]))
        return 0;
    size_t wl = utf8_decode(s, n, p, &w);
    if (!wl || !safecut_is_space(w) || p + wl >= n || (!line_breaks && (w == '\r' || w == '\n')))
        return 0;
    if (!utf8_decode(s, n, p + wl, &y) || safecut_is_space(y))
        return 0;
    return decode_before(s, n, p, &x) && !safecut_is_space(x);
}

size_t safecut_find(const unsigned char *s, size_t n, size_t lo, size_t hi, int line_breaks)
{
    if (n == 0)
        return SAFECUT_NONE;
    if (hi >= n)
        hi = n - 1;
    if (lo > hi)
        return SAFECUT_NONE;
    for (size_t p = hi + 1; p-- > lo;)
        if (cut_ok(s, n, p, line_breaks))
            return p;
    return SAFECUT_NONE;
}
