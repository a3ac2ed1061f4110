/*
 * nfc.h - the Unicode normalizers as HF tokenizers applies them
 * (internal; nfc.c): their stretches and alignments, which the encoder
 * (simdbpe__nfc in encode/encoder.h) and the offsets (encode/offsets.c)
 * share, and the normal form of a whole text, for the loaders too (an
 * added token with "normalized": true is matched by the normal form of its
 * content). `form` is a model's SIMDBPE__NORM_* (NFC, NFKC, NFD or NFKD;
 * not NONE).
 */
#ifndef SIMDBPE_NFC_H
#define SIMDBPE_NFC_H

#include <stddef.h>
#include <stdint.h>

#include "simdbpe.h"

/* Normalizers a model may have (stored in model files: never renumber):
 * the four Unicode normalization forms as HF tokenizers applies them
 * (nfc.c), or any other chain of HF's normalizers (model/normalizer.h). */
enum {
    SIMDBPE__NORM_NONE = 0,
    SIMDBPE__NORM_NFC = 1,
    SIMDBPE__NORM_NFKC = 2,
    SIMDBPE__NORM_NFD = 3,
    SIMDBPE__NORM_NFKD = 4,
    SIMDBPE__NORM_CHAIN = 5,
    SIMDBPE__NORM_LAST = SIMDBPE__NORM_CHAIN
};

/* Called for each stretch s[start..end) that the form changes, in order,
 * with its normal form norm[0..norm_len) (valid during the call only). Returns 0 to go
 * on; anything else stops the walk and is returned. */
typedef int (*simdbpe__nfc_stretch_fn)(void *ctx, size_t start, size_t end, const uint8_t *norm,
                                       size_t norm_len);

/* Walks the stretches of s[0..n) (valid UTF-8) that the form changes; the
 * rest of the text is its own normal form. Returns 0, the callback's
 * value, or -1 when utf8proc fails (out of memory). */
int simdbpe__nfc_stretches(unsigned form, const uint8_t *s, size_t n, simdbpe__nfc_stretch_fn fn,
                           void *ctx);

/*
 * Where each byte of a changed stretch's normal form comes from, as HF
 * tokenizers' NormalizedString aligns it (Unicode normalization with each output
 * character tagged "replaces the next original character and -k more
 * after it", or "inserted"): a character that replaces original ones is
 * aligned to the first of them; an inserted one (the second part of a
 * decomposition left uncomposed) to the one before it. Every byte of an
 * output character gets that character's span: align[2k], align[2k + 1]
 * are the start and end (offsets in s) of byte k of norm. `lo` is where
 * the text s belongs to starts (an inserted character at the very start
 * gets [lo, lo)). Returns 0, or -1 if the walk does not end on norm (then
 * every byte is aligned to the whole stretch).
 */
int simdbpe__nfc_align(unsigned form, const uint8_t *s, size_t lo, size_t start, size_t end, const uint8_t *norm,
                       size_t norm_len, size_t *align);

/* The ranges of code points HF's NFC does not know (nfc_unknown.c). */
extern const uint32_t simdbpe__nfc_unknown[][2];
extern const size_t simdbpe__nfc_unknown_count;

/* The normal form `form` of *text[0..*len) (valid UTF-8): unchanged, or
 * *text and *len set to the normalized copy in *buf (grown as needed,
 * capacity *cap; the caller frees it). */
simdbpe_status simdbpe__nfc_into(unsigned form, uint8_t **buf, size_t *cap, const uint8_t **text,
                                 size_t *len);

#endif
