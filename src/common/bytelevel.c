/*
 * bytelevel.c - GPT-2's byte-level alphabet (bytelevel.h): the mapping is
 * one rule (which bytes print as themselves); the tables below are filled
 * from it once.
 */
#include "bytelevel.h"

#include <pthread.h>
#include <string.h>

#include "utf8_valid.h"

#define FIRST_SHIFTED 0x100
#define END_SHIFTED 0x144 /* one past the last code point of the alphabet */

static struct {
    uint16_t cp[256];           /* byte -> code point */
    int16_t byte[END_SHIFTED];  /* code point -> byte, or -1 */
    uint8_t utf8[256][2], utf8_len[256];
    uint8_t rank[256], at_rank[256];
} tab;
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static int prints_as_itself(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

static void fill(void)
{
    for (unsigned cp = 0; cp < END_SHIFTED; cp++)
        tab.byte[cp] = -1;
    unsigned shifted = FIRST_SHIFTED, r = 0;
    for (unsigned b = 0; b < 256; b++) {
        unsigned cp = prints_as_itself(b) ? b : shifted++;
        tab.cp[b] = (uint16_t)cp;
        tab.byte[cp] = (int16_t)b;
        uint8_t u[4] = {0};
        tab.utf8_len[b] = (uint8_t)simdbpe__utf8_encode(cp, u); /* below U+0800: 1 or 2 */
        tab.utf8[b][0] = u[0];
        tab.utf8[b][1] = u[1];
    }
    /* Ranks: the code points in increasing order are the bytes that print
     * as themselves, in byte order, then U+0100... */
    for (unsigned pass = 0; pass < 2; pass++)
        for (unsigned b = 0; b < 256; b++)
            if (prints_as_itself(b) == (pass == 0)) {
                tab.rank[b] = (uint8_t)r;
                tab.at_rank[r++] = (uint8_t)b;
            }
}

static inline void ready(void)
{
    pthread_once(&tab_once, fill);
}

uint32_t simdbpe__bytelevel_cp(uint8_t b)
{
    ready();
    return tab.cp[b];
}

int simdbpe__bytelevel_byte(uint32_t cp)
{
    ready();
    return cp < END_SHIFTED ? tab.byte[cp] : -1;
}

size_t simdbpe__bytelevel_utf8(uint8_t b, uint8_t out[2])
{
    ready();
    out[0] = tab.utf8[b][0];
    out[1] = tab.utf8[b][1];
    return tab.utf8_len[b];
}

size_t simdbpe__bytelevel_string(const uint8_t *b, size_t n, char *out)
{
    ready();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(out + k, tab.utf8[b[i]], tab.utf8_len[b[i]]);
        k += tab.utf8_len[b[i]];
    }
    return k;
}

uint32_t simdbpe__bytelevel_rank(uint8_t b)
{
    ready();
    return tab.rank[b];
}

uint8_t simdbpe__bytelevel_at_rank(uint32_t r)
{
    ready();
    return tab.at_rank[r & 0xFF];
}

long simdbpe__bytelevel_decode(const uint8_t *s, size_t len, uint8_t *out, uint32_t *bad_cp)
{
    ready();
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t l;
        uint32_t cp = s[i] < 0x80 ? (l = 1, s[i]) : simdbpe__utf8_decode(s, i, &l);
        if (cp >= END_SHIFTED || tab.byte[cp] < 0) {
            *bad_cp = cp;
            return -1;
        }
        out[n++] = (uint8_t)tab.byte[cp];
        i += l;
    }
    return (long)n;
}
