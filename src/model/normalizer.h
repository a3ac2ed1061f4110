/*
 * normalizer.h - HF tokenizers' normalizers beyond a single Unicode form
 * (internal; normalizer.c): a chain of steps applied in order to each
 * stretch of text between the added tokens matched in the raw text, as
 * HF's Sequence normalizer applies its normalizers
 * (tokenizers/src/normalizers/, NormalizedString in normalizer.rs):
 *
 *   FORM     NFC, NFKC, NFD or NFKD (common/nfc.c)
 *   LOWERCASE  each character's Rust char::to_lowercase, no context (so
 *            no final sigma; U+0130 gives "i\u0307"), Unicode 17.0
 *            (lowercase.c)
 *   STRIP    leading (arg bit 1) and/or trailing (bit 2) characters that
 *            are White_Space (Rust's char::is_whitespace) removed
 *   REPLACE  every occurrence of the string a, left to right, not
 *            overlapping, replaced by b (HF escapes the string into a
 *            regex; for a non-empty string that is the same); an empty a
 *            is refused when the file is read
 *   REPLACE_REGEX  every match of the Oniguruma regex a (pretok/regex.h:
 *            the same engine, rewriting and refusals as a Split's, and
 *            onig's find_iter, empty matches included) replaced by b
 *   PREPEND  the string a put before a text that is not empty
 *
 * A model whose normalizer is one Unicode form (or, SentencePiece-style,
 * a form then Prepend("\u2581") and/or Replace(" ", "\u2581")) keeps the
 * older, faster representation (model->normalizer, SIMDBPE__SP_* flags);
 * every other normalizer is a chain (model->normalizer ==
 * SIMDBPE__NORM_CHAIN), stored in the compiled image as
 *
 *   u32 count, then per step: u8 kind, u8 arg (FORM: the form; STRIP:
 *   bits), u16 0, u32 length of a, a, u32 length of b, b
 *
 * (little-endian, no padding) and compiled when the model is opened.
 */
#ifndef SIMDBPE_NORMALIZER_H
#define SIMDBPE_NORMALIZER_H

#include <stddef.h>
#include <stdint.h>

#include "simdbpe.h"

/* Step kinds (stored in model files: never renumber). */
enum {
    SIMDBPE__NZ_FORM = 1,
    SIMDBPE__NZ_LOWERCASE = 2,
    SIMDBPE__NZ_STRIP = 3,
    SIMDBPE__NZ_REPLACE = 4,
    SIMDBPE__NZ_REPLACE_REGEX = 5,
    SIMDBPE__NZ_PREPEND = 6,
    SIMDBPE__NZ_LAST = SIMDBPE__NZ_PREPEND
};
#define SIMDBPE__NZ_STRIP_LEFT 1u
#define SIMDBPE__NZ_STRIP_RIGHT 2u
#define SIMDBPE__NZ_MAX_STEPS 64

typedef struct simdbpe__normalizer simdbpe__normalizer;

/* ---- building the image (loaders) ---- */

/* A chain being built: its image bytes so far (malloc'd, *len bytes). */
typedef struct simdbpe__nz_image {
    uint8_t *p;
    size_t len, cap;
    uint32_t n;
    int nomem;
} simdbpe__nz_image;

/* Appends a step (a, b may be NULL with length 0). */
void simdbpe__nz_image_step(simdbpe__nz_image *im, uint8_t kind, uint8_t arg, const uint8_t *a,
                            size_t a_len, const uint8_t *b, size_t b_len);

/* Checks and compiles a chain's image p[0..len) (not copied: it must
 * outlive the result). `what` names the source in errors ("compiled
 * model", "tokenizer.json"); a bad image is SIMDBPE_ERR_MODEL_FILE, a
 * regex this library cannot match as HF does SIMDBPE_ERR_UNSUPPORTED. */
simdbpe_status simdbpe__normalizer_new(const uint8_t *p, size_t len, const char *what,
                                       simdbpe__normalizer **out, simdbpe_error *err);
void simdbpe__normalizer_free(simdbpe__normalizer *nz);

/* Whether every step keeps the first character where it was (Unicode
 * forms and Lowercase only): what a Metaspace "first" scheme needs to tell
 * the text's start (HF asks the original offset). */
int simdbpe__normalizer_keeps_start(const simdbpe__normalizer *nz);

/* ---- applying it ---- */

/* Two buffers the steps write into in turn (an encoder's, or a loader's);
 * zero-initialise, free with simdbpe__nz_work_free. */
typedef struct simdbpe__nz_work {
    uint8_t *buf[2];
    size_t cap[2];
    size_t *al[2]; /* simdbpe__normalize_aligned's */
    size_t al_cap[2];
} simdbpe__nz_work;
void simdbpe__nz_work_free(simdbpe__nz_work *w);

/* The chain applied to *text[0..*len) (valid UTF-8): unchanged, or *text
 * and *len set to the result in one of w's buffers (valid until the next
 * call with w). SIMDBPE_OK, SIMDBPE_ERR_NOMEM, or SIMDBPE_ERR_TOO_LARGE
 * when Oniguruma gives up on a Replace's regex (its retry limit, as in HF
 * tokenizers). */
simdbpe_status simdbpe__normalize(const simdbpe__normalizer *nz, simdbpe__nz_work *w,
                                  const uint8_t **text, size_t *len);

/* simdbpe__normalize carrying alignments, as HF's NormalizedString does:
 * (*al)[2 k], (*al)[2 k + 1] span byte k of the text in an earlier one
 * (every byte of a character alike; 2 *len entries), set to the result's
 * (the caller's, or in one of w's buffers). A kept character keeps its
 * span; Lowercase's characters take the one lowercased; Strip drops;
 * Replace's content takes the span of the last character before the
 * match's end (the match's last; for an empty match the one before it),
 * [lo, lo) at the very start; Prepend's, the first character's; a Unicode
 * form's as common/nfc.c aligns it. */
simdbpe_status simdbpe__normalize_aligned(const simdbpe__normalizer *nz, simdbpe__nz_work *w,
                                          const uint8_t **text, size_t *len, const size_t **al,
                                          size_t lo);

/* The lowercase of code point cp (HF's Lowercase step): writes 1 or 2
 * code points to out and returns how many (lowercase.c's tables). */
size_t simdbpe__lowercase(uint32_t cp, uint32_t out[2]);

/* Whether cp is White_Space (Rust's char::is_whitespace). */
int simdbpe__is_white_space(uint32_t cp);

extern const uint32_t simdbpe__lower_one[][2];
extern const size_t simdbpe__lower_one_count;
extern const uint32_t simdbpe__lower_several[][4];
extern const size_t simdbpe__lower_several_count;

#endif
