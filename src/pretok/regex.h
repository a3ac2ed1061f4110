/*
 * regex.h - the generic pre-tokenizer: a tokenizer.json's Split regexes run
 * by Oniguruma, the engine HF tokenizers runs them with, for patterns no
 * hand-written scanner implements (the "regex" family, regex.c).
 *
 * A model of that family owns a simdbpe__regex: its Splits (pattern text,
 * behavior, invert), compiled. The pieces are HF's (tokenizers 0.23,
 * normalizer.rs `split`, onig.rs `find_matches`):
 *
 *   - each Split cuts every piece of the step before it, the regex seeing
 *     that piece alone (anchors and look-behind stop at its ends);
 *   - the matches are those of onig's find_iter: leftmost, searched from
 *     the end of the last match, an empty match right at the end of the
 *     last one skipped (the search moves on one character);
 *   - matches and the gaps between them become pieces by the behavior
 *     (Isolated: each; Contiguous: runs of matches and of gaps merged;
 *     MergedWithPrevious: a match joins the gap before it; MergedWithNext:
 *     a match joins the gap after it), matches and gaps swapped first
 *     when invert is set; empty pieces are dropped. Removed drops the
 *     matches (with invert: the gaps), which the encoder's pieces, which
 *     cover the text, cannot: a text where it would drop something is an
 *     error (SIMDBPE_ERR_UNSUPPORTED), never encoded otherwise. (Files
 *     write Removed with invert for patterns that match everywhere,
 *     where nothing is dropped.)
 *
 * Oniguruma is Debian's, whose Unicode tables (6.9.8: Unicode 14) are
 * older than HF's (Unicode 16): every \p{...} of a pattern is written out
 * as Unicode 16.0.0 ranges (ucd_ranges.c) before it is compiled, and
 * constructs whose meaning comes from other Unicode data (\w, \d, \b,
 * POSIX brackets, case-insensitive matching beyond ASCII text) are
 * refused. \s is White_Space, the same in both versions.
 */
#ifndef SIMDBPE_PRETOK_REGEX_H
#define SIMDBPE_PRETOK_REGEX_H

#include <stddef.h>
#include <stdint.h>

#include "simdbpe.h"

/* A Split's behavior (stored in model files: never renumber). */
enum {
    SIMDBPE__SPLIT_ISOLATED = 0,
    SIMDBPE__SPLIT_CONTIGUOUS = 1,
    SIMDBPE__SPLIT_MERGED_WITH_PREVIOUS = 2,
    SIMDBPE__SPLIT_MERGED_WITH_NEXT = 3,
    SIMDBPE__SPLIT_REMOVED = 4,
    SIMDBPE__SPLIT_BEHAVIORS = 5,
    SIMDBPE__SPLIT_INVERT = 0x80 /* or'ed in: matches and gaps swapped */
};

#define SIMDBPE__REGEX_MAX_SPLITS 3

typedef struct simdbpe__regex simdbpe__regex;

/* Compiles n Splits (1 <= n <= SIMDBPE__REGEX_MAX_SPLITS): patterns[i]
 * (NUL-terminated) with flags[i] (a behavior, | SIMDBPE__SPLIT_INVERT).
 * `what` names the source in errors. */
simdbpe_status simdbpe__regex_new(const char *const *patterns, const uint8_t *flags, size_t n,
                                  const char *what, simdbpe__regex **out, simdbpe_error *err);
void simdbpe__regex_free(simdbpe__regex *rx);

size_t simdbpe__regex_splits(const simdbpe__regex *rx);
const char *simdbpe__regex_pattern(const simdbpe__regex *rx, size_t i);
uint8_t simdbpe__regex_flags(const simdbpe__regex *rx, size_t i);

/*
 * The Splits as a compiled model stores them: u32 count, then for each
 * Split u32 flags, u32 length and the pattern's bytes (little-endian, no
 * padding). _image_size gives the bytes, _image_put writes them;
 * _from_image checks and compiles them (a bad section is
 * SIMDBPE_ERR_MODEL_FILE).
 */
size_t simdbpe__regex_image_size(const char *const *patterns, size_t n);
void simdbpe__regex_image_put(const char *const *patterns, const uint8_t *flags, size_t n,
                              uint8_t *out);
simdbpe_status simdbpe__regex_from_image(const uint8_t *p, size_t len, simdbpe__regex **out,
                                         simdbpe_error *err);

/* One Split's walk over the pieces of the step before it. */
typedef struct simdbpe__regex_level {
    size_t ps, pe;          /* the piece being cut */
    size_t last_end;        /* where the next search starts */
    size_t last_match_end;  /* SIZE_MAX: no match yet */
    size_t prev;            /* the end of the matches and gaps given */
    size_t ms, me;          /* a match found, after the gap before it */
    size_t bs, be;          /* the piece held back by the behavior */
    uint8_t have_match, done, active, held, held_match, prev_match;
} simdbpe__regex_level;

/* The pieces of s[0..n), one after the other. */
typedef struct simdbpe__regex_iter {
    const simdbpe__regex *rx;
    const uint8_t *s;
    size_t n;
    uint8_t top_given;
    /* Oniguruma stopped (its retry limit): the rest is one piece, and
     * the caller reports SIMDBPE_ERR_TOO_LARGE. */
    uint8_t failed;
    /* A Removed Split would drop text here (the caller reports
     * SIMDBPE_ERR_UNSUPPORTED); the text is kept as a piece. */
    uint8_t dropped;
    simdbpe__regex_level level[SIMDBPE__REGEX_MAX_SPLITS];
} simdbpe__regex_iter;

void simdbpe__regex_begin(simdbpe__regex_iter *it, const simdbpe__regex *rx, const uint8_t *s,
                          size_t n);
/* The next piece [*start, *end) (never empty); 0 when the text is done.
 * The pieces cover the text in order. */
int simdbpe__regex_next(simdbpe__regex_iter *it, size_t *start, size_t *end);

/* The matches of the first Split's regex alone over s[0..n), as onig's
 * find_iter gives them (above; HF's Replace normalizer replaces these):
 * fn(ctx, start, end) for each, in order. Returns 0, fn's value if it is
 * not 0 (which stops the walk), or -1 when Oniguruma gave up (its retry
 * limit). */
typedef int (*simdbpe__regex_match_fn)(void *ctx, size_t start, size_t end);
int simdbpe__regex_matches(const simdbpe__regex *rx, const uint8_t *s, size_t n,
                           simdbpe__regex_match_fn fn, void *ctx);

#endif
