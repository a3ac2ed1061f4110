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

#include "encoder.h"
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

simdbpe_status simdbpe__nfc(simdbpe_encoder *e, const uint8_t **text, size_t *len)
{
    return simdbpe__nfc_into(&e->norm, &e->norm_cap, text, len);
}

simdbpe_status simdbpe__nfc_into(uint8_t **buf, size_t *cap, const uint8_t **text, size_t *len)
{
    const uint8_t *s = *text;
    size_t n = *len, used = 0, copied = 0; /* s[0..copied) is in *buf */
    size_t starter = 0; /* where the last safe code point starts */
    int changed = 0;
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
        if (got < 0) {
            free(norm);
            return got == UTF8PROC_ERROR_NOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_INVALID_UTF8;
        }
        if ((size_t)got != end - starter || (got && memcmp(norm, s + starter, (size_t)got) != 0)) {
            if (append(buf, cap, &used, s + copied, starter - copied) != SIMDBPE_OK ||
                append(buf, cap, &used, norm, (size_t)got) != SIMDBPE_OK) {
                free(norm);
                return SIMDBPE_ERR_NOMEM;
            }
            copied = end;
            changed = 1;
        }
        free(norm);
        starter = end;
        i = end;
    }
    if (!changed)
        return SIMDBPE_OK;
    if (append(buf, cap, &used, s + copied, n - copied) != SIMDBPE_OK)
        return SIMDBPE_ERR_NOMEM;
    *text = *buf;
    *len = used;
    return SIMDBPE_OK;
}
