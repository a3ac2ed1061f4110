/*
 * nfc.c - the Unicode normalizers as HF tokenizers applies them: NFC
 * (Qwen2/3, GPT-NeoX), NFKC (Anthropic's tokenizer), NFD and NFKD, over
 * utf8proc.
 *
 * utf8proc normalizes at tens of MB/s and copies everything; nearly all
 * text is in every normal form already. So the text is cut before every
 * code point that is "safe" for the form: canonical combining class 0,
 * its own normal form, and never the second character of a composition
 * (utf8proc's comb_index marks those; Hangul vowel and trailing jamo
 * compose by rule and are listed here). Nothing before such a code point
 * interacts with it or anything after it, so the normal form of the text
 * is that of each stretch between them, and a stretch of safe code points
 * is its own normal form. Only the stretches around other code points (a
 * safe starter, then the unsafe ones) go through utf8proc; the rest is
 * copied, and if there are none the text is used as it is. Which code
 * points are safe is worked out once per form and block of 64, the first
 * time one of them is met. ASCII is safe in every form; the rest of
 * U+0080..U+02FF in NFC only (NFKC maps U+00A0 to a space, NFD splits
 * U+00E9...).
 *
 * The reference, HF tokenizers, normalizes with Unicode 9.0's tables, so
 * a code point assigned since (nfc_unknown.c) is to it an unassigned one:
 * combining class 0, no mappings. Such a code point is therefore safe
 * here too, and never the starter a stretch begins with: nothing
 * composes with it or moves across it. (utf8proc's tables are Unicode
 * 15.0's; those of the code points it also has from 9.0 are the same,
 * decompositions and classes being stable. With that rule, all four forms
 * give HF tokenizers 0.23.2's output on every code point, alone and after
 * a letter: tests/encode/test_nfc.c.)
 */
#include <stdlib.h>

#include <utf8proc.h>

#include "common.h"
#include "nfc.h"
#include "utf8_valid.h"

#define BLOCKS (0x110000 / 64)
#define FORMS 4                                 /* SIMDBPE__NORM_NFC .. _NFKD */
static uint64_t safe_bits[FORMS][BLOCKS];       /* bit cp & 63 of word cp >> 6 */
static uint64_t new_bits[BLOCKS];               /* ... of code points HF's tables do not know */
static uint64_t known_bits[FORMS][BLOCKS / 64]; /* which blocks are worked out */

/* utf8proc's options for a form. */
static utf8proc_option_t form_options(unsigned form)
{
    switch (form) {
    case SIMDBPE__NORM_NFKC:
        return UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    case SIMDBPE__NORM_NFD:
        return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
    case SIMDBPE__NORM_NFKD:
        return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    default:
        return UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    }
}

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

static int safe_slow(unsigned form, uint32_t cp)
{
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 1; /* never in valid UTF-8 */
    if ((cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2))
        return 0; /* Hangul V and T jamo */
    const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)cp);
    if (p->combining_class != 0 || (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000))
        return 0;
    if (p->decomp_seqindex == UINT16_MAX && !(cp >= 0xAC00 && cp <= 0xD7A3))
        return 1; /* no decomposition at all */
    if (form == SIMDBPE__NORM_NFC && p->decomp_type != 0)
        return 1; /* a compatibility decomposition only: NFC keeps it */
    /* Safe if the form keeps it (not decomposed, a singleton or an
     * exclusion). */
    utf8proc_uint8_t buf[4], *norm = NULL;
    utf8proc_ssize_t len = utf8proc_encode_char((utf8proc_int32_t)cp, buf);
    utf8proc_ssize_t got = utf8proc_map(buf, len, &norm, form_options(form));
    int same = got == len && memcmp(norm, buf, (size_t)len) == 0;
    free(norm);
    return same;
}

static int safe(unsigned form, uint32_t cp)
{
    if (cp < 0x80 || (form == SIMDBPE__NORM_NFC && cp < 0x300))
        return 1;
    unsigned f = form - SIMDBPE__NORM_NFC;
    size_t b = cp >> 6;
    if (!(__atomic_load_n(&known_bits[f][b >> 6], __ATOMIC_ACQUIRE) >> (b & 63) & 1)) {
        uint64_t w = 0, fresh = 0;
        for (uint32_t k = 0; k < 64; k++) {
            uint32_t c = (uint32_t)(b << 6) + k;
            uint64_t u = (uint64_t)unknown_to_hf(c);
            fresh |= u << k;
            w |= (u | (uint64_t)safe_slow(form, c)) << k;
        }
        __atomic_store_n(&safe_bits[f][b], w, __ATOMIC_RELAXED);
        __atomic_store_n(&new_bits[b], fresh, __ATOMIC_RELAXED);
        __atomic_fetch_or(&known_bits[f][b >> 6], 1ULL << (b & 63), __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&safe_bits[f][b], __ATOMIC_RELAXED) >> (cp & 63) & 1;
}

/* Whether cp (known safe in some form) is one HF's tables do not know. */
static int is_new(uint32_t cp)
{
    return cp >= 0x300 && (__atomic_load_n(&new_bits[cp >> 6], __ATOMIC_RELAXED) >> (cp & 63) & 1);
}

int simdbpe__nfc_stretches(unsigned form, const uint8_t *s, size_t n, simdbpe__nfc_stretch_fn fn,
                           void *ctx)
{
    /* Bytes below `fast` lead code points that are safe in this form. */
    const uint8_t fast = form == SIMDBPE__NORM_NFC ? 0xCC : 0x80;
    size_t starter = 0; /* where the last safe code point starts */
    for (size_t i = 0; i < n;) {
        if (s[i] < fast) {
            starter = i;
            i += 1 + (s[i] >= 0xC0);
            continue;
        }
        size_t l;
        uint32_t cp = simdbpe__utf8_decode(s, i, &l);
        if (safe(form, cp)) {
            starter = is_new(cp) ? i + l : i;
            i += l;
            continue;
        }
        /* The stretch from the last safe code point to the next one. */
        size_t end = i + l;
        while (end < n) {
            if (s[end] < fast)
                break;
            size_t l2;
            uint32_t c2 = simdbpe__utf8_decode(s, end, &l2);
            if (safe(form, c2))
                break;
            end += l2;
        }
        utf8proc_uint8_t *norm = NULL;
        utf8proc_ssize_t got = utf8proc_map(s + starter, (utf8proc_ssize_t)(end - starter), &norm,
                                            form_options(form));
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

/* The longest decomposition (U+FDFA's compatibility one), and how many
 * code points a byte of text decomposes into at most (its 3 bytes give
 * 18). */
#define MAX_DECOMP 18
#define DECOMP_PER_BYTE 6

/* Canonical (or, for NFKC and NFKD, compatibility) decomposition with the
 * change tags (a character's first part replaces it, the others are
 * inserted), each run of non-starters in canonical order. `out` has room
 * for DECOMP_PER_BYTE entries a byte of s[start..end), `tmp` too. */
static size_t decompose_tagged(unsigned form, const uint8_t *s, size_t start, size_t end,
                               tagged *out, tagged *tmp)
{
    utf8proc_option_t opt = UTF8PROC_DECOMPOSE | (form_options(form) & UTF8PROC_COMPAT);
    size_t n = 0;
    for (size_t i = start; i < end;) {
        size_t l;
        uint32_t cp = simdbpe__utf8_decode(s, i, &l);
        utf8proc_int32_t d[MAX_DECOMP];
        int last = 0;
        utf8proc_ssize_t k =
            utf8proc_decompose_char((utf8proc_int32_t)cp, d, MAX_DECOMP, opt, &last);
        if (k < 1 || k > MAX_DECOMP) {
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

int simdbpe__nfc_align(unsigned form, const uint8_t *s, size_t lo, size_t start, size_t end,
                       const uint8_t *norm, size_t norm_len, size_t *align)
{
    size_t cap = DECOMP_PER_BYTE * (end - start) + 1;
    tagged *dec = malloc(cap * sizeof *dec), *comp = malloc(cap * sizeof *comp);
    int ok = dec && comp;
    size_t n = ok ? decompose_tagged(form, s, start, end, dec, comp) : 0;
    if (form == SIMDBPE__NORM_NFC || form == SIMDBPE__NORM_NFKC)
        n = compose_tagged(dec, n, comp);
    else if (ok)
        memcpy(comp, dec, n * sizeof *dec);
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

simdbpe_status simdbpe__nfc_into(unsigned form, uint8_t **buf, size_t *cap, const uint8_t **text,
                                 size_t *len)
{
    nfc_copy c = {buf, cap, *text, 0, 0};
    if (simdbpe__nfc_stretches(form, *text, *len, copy_stretch, &c) != 0)
        return SIMDBPE_ERR_NOMEM;
    if (c.copied == 0 && c.used == 0)
        return SIMDBPE_OK; /* nothing changed */
    if (append(buf, cap, &c.used, *text + c.copied, *len - c.copied) != SIMDBPE_OK)
        return SIMDBPE_ERR_NOMEM;
    *text = *buf;
    *len = c.used;
    return SIMDBPE_OK;
}
