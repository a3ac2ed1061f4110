/*
 * nfc.c - the NFC normalizer (Qwen2/3, GPT-NeoX), over utf8proc.
 *
 * utf8proc normalizes at tens of MB/s and copies everything; nearly all
 * text is NFC already. So the text is cut before every code point that
 * is "safe": canonical combining class 0, its own NFC, and never the
 * second character of a composition (utf8proc's comb_index marks those;
 * Hangul vowel and trailing jamo compose by rule and are listed here).
 * Nothing before such a code point interacts with it or anything after
 * it, so the NFC of the text is the NFC of each stretch between them, and
 * a stretch of safe code points is its own NFC. Only the stretches around
 * other code points (a safe starter, then the unsafe ones) go through
 * utf8proc; the rest is copied, and if there are none the text is used
 * as it is. Which code points are safe is worked out once per block of
 * 64, the first time one of them is met.
 *
 * The reference, HF tokenizers, normalizes with Unicode 9.0's tables, so
 * a code point assigned since (nfc_unknown.c) is to it an unassigned one:
 * combining class 0, no mappings. Such a code point is therefore safe
 * here too, and never the starter a stretch begins with: nothing
 * composes with it or moves across it. (utf8proc's tables are Unicode
 * 15.0's; those of the code points it also has from 9.0 are the same,
 * decompositions and classes being stable.)
 */
#include <stdlib.h>

#include <utf8proc.h>

#include "common.h"
#include "nfc.h"
#include "utf8_valid.h"

#define BLOCKS (0x110000 / 64)
static uint64_t safe_bits[BLOCKS];      /* bit cp & 63 of word cp >> 6 */
static uint64_t new_bits[BLOCKS];       /* ... of code points HF's NFC does not know */
static uint64_t known_bits[BLOCKS / 64]; /* which blocks are worked out */

/* Whether cp was assigned after Unicode 9.0 (nfc_unknown.c). */
static int unknown_to_hf(uint32_t cp)
{
    size_t lo = 0, hi = simdbpe__nfc_unknown_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < simdbpe__nfc_unknown[mid][0])
            hi = mid;
        else if (cp > simdbpe__nfc_unknown[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int safe_slow(uint32_t cp)
{
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 1; /* never in valid UTF-8 */
    if ((cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2))
        return 0; /* Hangul V and T jamo */
    const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)cp);
    if (p->combining_class != 0 || (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000))
        return 0;
    if (p->decomp_type != 0 || p->decomp_seqindex == UINT16_MAX)
        return 1; /* no canonical decomposition */
    /* Precomposed: safe if NFC keeps it (not a singleton or exclusion). */
    utf8proc_int32_t out[8];
    int last = 0;
    utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)cp, out, 8, UTF8PROC_COMPOSE,
                                                 &last);
    if (n != 1 || out[0] != (utf8proc_int32_t)cp) {
        utf8proc_uint8_t buf[4], *norm = NULL;
        utf8proc_ssize_t len = utf8proc_encode_char((utf8proc_int32_t)cp, buf);
        utf8proc_ssize_t got =
            utf8proc_map(buf, len, &norm, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        int same = got == len && memcmp(norm, buf, (size_t)len) == 0;
        free(norm);
        return same;
    }
    return 1;
}

static int safe(uint32_t cp)
{
    if (cp < 0x300)
        return 1;
    size_t b = cp >> 6;
    if (!(__atomic_load_n(&known_bits[b >> 6], __ATOMIC_ACQUIRE) >> (b & 63) & 1)) {
        uint64_t w = 0, fresh = 0;
        for (uint32_t k = 0; k < 64; k++) {
            uint32_t c = (uint32_t)(b << 6) + k;
            uint64_t u = (uint64_t)unknown_to_hf(c);
            fresh |= u << k;
            w |= (u | (uint64_t)safe_slow(c)) << k;
        }
        __atomic_store_n(&safe_bits[b], w, __ATOMIC_RELAXED);
        __atomic_store_n(&new_bits[b], fresh, __ATOMIC_RELAXED);
        __atomic_fetch_or(&known_bits[b >> 6], 1ULL << (b & 63), __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&safe_bits[b], __ATOMIC_RELAXED) >> (cp & 63) & 1;
}

/* Whether cp (known safe, >= U+0300) is one HF's NFC does not know. */
static int is_new(uint32_t cp)
{
    return __atomic_load_n(&new_bits[cp >> 6], __ATOMIC_RELAXED) >> (cp & 63) & 1;
}

int simdbpe__nfc_stretches(const uint8_t *s, size_t n, simdbpe__nfc_stretch_fn fn, void *ctx)
{
    size_t starter = 0; /* where the last safe code point starts */
    for (size_t i = 0; i < n;) {
        if (s[i] < 0xCC) { /* below U+0300: safe */
            starter = i;
            i += 1 + (s[i] >= 0xC0);
            continue;
        }
        size_t l;
        uint32_t cp = simdbpe__utf8_decode(s, i, &l);
        if (safe(cp)) {
            starter = is_new(cp) ? i + l : i;
            i += l;
            continue;
        }
        /* The stretch from the last safe code point to the next one. */
        size_t end = i + l;
        while (end < n) {
            if (s[end] < 0xCC)
                break;
            size_t l2;
            uint32_t c2 = simdbpe__utf8_decode(s, end, &l2);
            if (safe(c2))
                break;
            end += l2;
        }
        utf8proc_uint8_t *norm = NULL;
        utf8proc_ssize_t got = utf8proc_map(s + starter, (utf8proc_ssize_t)(end - starter), &norm,
                                            UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        int r = got < 0 ? -1 : 0;
        if (!r && ((size_t)got != end - starter || (got && memcmp(norm, s + starter, (size_t)got))))
            r = fn(ctx, starter, end, norm, (size_t)got);
        free(norm);
        if (r)
            return r;
        starter = end;
        i = end;
    }
    return 0;
}

/* ------------------------------------------------------------ alignment */

/* A character of the stretch on its way through normalization: the code
 * point, its combining class and HF's change tag (0: replaces the next
 * original character; -k: and the k after it; 1: inserted). */
typedef struct tagged {
    int32_t cp;
    int ccc;
    long change;
} tagged;

static int ccc_of(int32_t cp)
{
    return utf8proc_get_property(cp)->combining_class;
}

/* The primary composite of a + b, or -1. */
static int32_t compose_pair(int32_t a, int32_t b)
{
    utf8proc_int32_t buf[2] = {a, b};
    utf8proc_ssize_t n = utf8proc_normalize_utf32(buf, 2, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    return n == 1 ? buf[0] : -1;
}

/* Sorts t[0..n) by combining class, stably (insertion for short runs,
 * counting for long ones: a long run of marks is no quadratic case). */
static void sort_run(tagged *t, size_t n, tagged *tmp)
{
    if (n < 32) {
        for (size_t i = 1; i < n; i++) {
            tagged x = t[i];
            size_t j = i;
            while (j > 0 && t[j - 1].ccc > x.ccc) {
                t[j] = t[j - 1];
                j--;
            }
            t[j] = x;
        }
        return;
    }
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++)
        count[t[i].ccc + 1]++;
    for (int c = 1; c < 257; c++)
        count[c] += count[c - 1];
    for (size_t i = 0; i < n; i++)
        tmp[count[t[i].ccc]++] = t[i];
    memcpy(t, tmp, n * sizeof *t);
}

/* Canonical decomposition with the change tags (a character's first part
 * replaces it, the others are inserted), each run of non-starters in
 * canonical order. `out` has room for 4 entries a byte of s[start..end)
 * (no canonical decomposition is longer than 4 code points), `tmp` too. */
static size_t decompose_tagged(const uint8_t *s, size_t start, size_t end, tagged *out,
                               tagged *tmp)
{
    size_t n = 0;
    for (size_t i = start; i < end;) {
        size_t l;
        uint32_t cp = simdbpe__utf8_decode(s, i, &l);
        utf8proc_int32_t d[4];
        int last = 0;
        utf8proc_ssize_t k =
            utf8proc_decompose_char((utf8proc_int32_t)cp, d, 4, UTF8PROC_DECOMPOSE, &last);
        if (k < 1 || k > 4) {
            d[0] = (utf8proc_int32_t)cp;
            k = 1;
        }
        for (utf8proc_ssize_t j = 0; j < k; j++)
            out[n++] = (tagged){d[j], ccc_of(d[j]), j ? 1 : 0};
        i += l;
    }
    for (size_t a = 0; a < n;) {
        if (out[a].ccc == 0) {
            a++;
            continue;
        }
        size_t b = a;
        while (b < n && out[b].ccc != 0)
            b++;
        sort_run(out + a, b - a, tmp);
        a = b;
    }
    return n;
}

/* Canonical composition of in[0..n) with the tags (a composite's tag is
 * its parts' summed, less one for each part absorbed), as HF's normalizer
 * composes: a starter takes each following character not blocked from it
 * (nothing between of the same or a higher class, and no starter) that
 * composes with it; the rest come out in order. */
static size_t compose_tagged(const tagged *in, size_t n, tagged *out)
{
    size_t m = 0;
    long composee = -1; /* index in out of the starter being composed, or -1 */
    int last_ccc = -1;  /* class of the last character kept after it; -1: none */
    for (size_t i = 0; i < n; i++) {
        tagged c = in[i];
        if (composee < 0) {
            out[m++] = c;
            if (c.ccc == 0) {
                composee = (long)m - 1;
                last_ccc = -1;
            }
            continue;
        }
        int blocked = last_ccc >= 0 && (last_ccc >= c.ccc);
        int32_t r = blocked ? -1 : compose_pair(out[composee].cp, c.cp);
        if (r >= 0) {
            out[composee].cp = r;
            out[composee].change += c.change - 1;
            continue;
        }
        out[m++] = c;
        if (c.ccc == 0) {
            composee = (long)m - 1;
            last_ccc = -1;
        } else {
            last_ccc = c.ccc;
        }
    }
    return m;
}

/* The start of the character that ends at s[i] (i > 0, valid UTF-8). */
static size_t char_before(const uint8_t *s, size_t i)
{
    size_t k = i - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

int simdbpe__nfc_align(const uint8_t *s, size_t lo, size_t start, size_t end, const uint8_t *norm,
                       size_t norm_len, size_t *align)
{
    size_t cap = 4 * (end - start) + 1;
    tagged *dec = malloc(cap * sizeof *dec), *comp = malloc(cap * sizeof *comp);
    int ok = dec && comp;
    size_t n = ok ? compose_tagged(dec, decompose_tagged(s, start, end, dec, comp), comp) : 0;
    size_t prev_a = start > lo ? char_before(s, start) : lo, prev_b = start > lo ? start : lo;
    size_t at = start, k = 0; /* the next original character; the next byte of norm */
    for (size_t j = 0; ok && j < n; j++) {
        uint8_t u[4];
        size_t len = simdbpe__utf8_encode((uint32_t)comp[j].cp, u);
        if (k + len > norm_len || memcmp(norm + k, u, len) != 0) {
            ok = 0;
            break;
        }
        if (comp[j].change <= 0) {
            if (at >= end) {
                ok = 0;
                break;
            }
            size_t l;
            simdbpe__utf8_decode(s, at, &l);
            size_t a = at, b = at + l;
            for (long more = -comp[j].change; more > 0 && at < end; more--)
                simdbpe__utf8_decode(s, at += l, &l);
            at += l;
            prev_a = at - l; /* the last character taken */
            prev_b = at;
            for (size_t x = 0; x < len; x++) {
                align[2 * (k + x)] = a;
                align[2 * (k + x) + 1] = b;
            }
        } else {
            for (size_t x = 0; x < len; x++) {
                align[2 * (k + x)] = prev_a;
                align[2 * (k + x) + 1] = prev_b;
            }
        }
        k += len;
    }
    free(dec);
    free(comp);
    if (ok && k == norm_len && at == end)
        return 0;
    for (size_t x = 0; x < norm_len; x++) {
        align[2 * x] = start;
        align[2 * x + 1] = end;
    }
    return -1;
}

/* Appends s[0..n) to *buf (capacity *cap, length *used). */
static simdbpe_status append(uint8_t **buf, size_t *cap, size_t *used, const uint8_t *s,
                             size_t n)
{
    if (n == 0)
        return SIMDBPE_OK;
    if (simdbpe__grow((void **)buf, cap, *used + n, 1))
        return SIMDBPE_ERR_NOMEM;
    memcpy(*buf + *used, s, n);
    *used += n;
    return SIMDBPE_OK;
}

/* simdbpe__nfc_into's walk: the unchanged text between stretches and each
 * stretch's NFC appended to *buf. */
typedef struct nfc_copy {
    uint8_t **buf;
    size_t *cap;
    const uint8_t *s;
    size_t used, copied; /* bytes in *buf; s[0..copied) is in it */
} nfc_copy;

static int copy_stretch(void *ctx, size_t start, size_t end, const uint8_t *norm, size_t len)
{
    nfc_copy *c = ctx;
    if (append(c->buf, c->cap, &c->used, c->s + c->copied, start - c->copied) != SIMDBPE_OK ||
        append(c->buf, c->cap, &c->used, norm, len) != SIMDBPE_OK)
        return -1;
    c->copied = end;
    return 0;
}

simdbpe_status simdbpe__nfc_into(uint8_t **buf, size_t *cap, const uint8_t **text, size_t *len)
{
    nfc_copy c = {buf, cap, *text, 0, 0};
    if (simdbpe__nfc_stretches(*text, *len, copy_stretch, &c) != 0)
        return SIMDBPE_ERR_NOMEM;
    if (c.copied == 0 && c.used == 0)
        return SIMDBPE_OK; /* nothing changed */
    if (append(buf, cap, &c.used, *text + c.copied, *len - c.copied) != SIMDBPE_OK)
        return SIMDBPE_ERR_NOMEM;
    *text = *buf;
    *len = c.used;
    return SIMDBPE_OK;
}
