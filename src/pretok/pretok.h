/*
 * pretok.h - the GPT-2 pre-tokenizer (internal).
 *
 * Splits text into the pieces the GPT-2 regex
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * matches, with a hand-written scanner instead of a regex engine. The first
 * alternative that matches at a position wins (not the longest), which the
 * scanner reproduces by testing them in order:
 *
 *   - `'` followed by s, t, m, d, re, ve or ll (lower case only);
 *   - a run of letters, of numbers, or of "other" code points (neither
 *     letter, number nor whitespace; `'` is other), optionally preceded by
 *     one ' ' (U+0020 only);
 *   - a whitespace run: up to the end of the text it is one piece; before a
 *     non-whitespace code point its last code point is left for the next
 *     piece (`\s+(?!\S)` backtracks one), unless the run is one code point.
 *
 * The input must be valid UTF-8 (the encoder validates it first).
 */
#ifndef SIMDBPE_PRETOK_H
#define SIMDBPE_PRETOK_H

#include <stddef.h>
#include <stdint.h>

#include "../../kernels/kernels.h"

/* The end (exclusive) of the piece that starts at s[i], i < n. One code
 * point at a time: the reference the block scanner below is tested
 * against. */
size_t simdbpe__pretok_piece_end(const uint8_t *s, size_t n, size_t i);

/*
 * The pre-tokenizer families: one per regex (or sequence of Split
 * regexes) in use, exact texts in families.c. A model records its family
 * (and the .sbpe format stores it); everything that splits text asks the
 * model's. The values are stored in model files: never renumber them.
 */
typedef enum simdbpe__pretok_kind {
    SIMDBPE__PRETOK_GPT2 = 0,        /* GPT-2, r50k_base, p50k_base */
    SIMDBPE__PRETOK_CL100K = 1,      /* cl100k_base, Llama-3, OLMo-2 */
    SIMDBPE__PRETOK_QWEN2 = 2,       /* Qwen2, Qwen2.5, Qwen3 */
    SIMDBPE__PRETOK_O200K = 3,       /* o200k_base, GPT-4o, gpt-oss */
    SIMDBPE__PRETOK_DEEPSEEK_V3 = 4, /* DeepSeek-V3 (three Splits in sequence) */
    SIMDBPE__PRETOK_KINDS = 5
} simdbpe__pretok_kind;

/* The end (exclusive) of the piece of family `kind` that starts at s[i]
 * (i < n, a piece start); valid UTF-8. families.c. */
size_t simdbpe__pretok_family_piece_end(simdbpe__pretok_kind kind, const uint8_t *s, size_t n,
                                        size_t i);
/* A family's scanner over a stretch: sets the bits of the piece starts
 * in s[i..hi) (i a piece start; bit k of starts[w] is byte lo + 64 w + k)
 * and returns where the next piece starts (>= hi). NULL for GPT-2, whose
 * block scanner is below. */
typedef size_t (*simdbpe__pretok_scan_fn)(const simdbpe__kernels *k, const uint8_t *s, size_t n,
                                          size_t i, size_t hi, size_t lo, uint64_t *starts);
simdbpe__pretok_scan_fn simdbpe__pretok_scanner(simdbpe__pretok_kind kind);

/* The family's short name ("gpt2", "cl100k", "qwen2", "o200k",
 * "deepseek_v3"), or NULL for a value that is no family. */
const char *simdbpe__pretok_kind_name(unsigned kind);
/* The family named `name` (as above), or -1. */
int simdbpe__pretok_kind_of(const char *name);

/* Whether family `kind`'s pieces certainly end at p (0 < p < n) whatever
 * follows s[0..n), and the part from p is pre-tokenized alone as in the
 * whole text (cuts.c: a space, a digit or punctuation after a non-space).
 * And the largest such p in [lo, hi], or SIZE_MAX; that one also inside
 * runs of digits that the family splits in groups of three, for which s
 * must begin where a piece does (the text, or the part after a cut). */
int simdbpe__pretok_cut_ok(unsigned kind, const uint8_t *s, size_t n, size_t p);
size_t simdbpe__pretok_cut_last(unsigned kind, const uint8_t *s, size_t n, size_t lo, size_t hi);

/* The regexes of the family's HF Split pre-tokenizers, applied one after
 * the other, each Isolated (*n of them; 0 and NULL for no family): what
 * tokenizer.json files say and what the scanners reproduce. */
const char *const *simdbpe__pretok_patterns(unsigned kind, size_t *n);

/*
 * The block scanner: the same pieces, found 64 bytes at a time as a bitmask
 * of piece starts (bit i of block b set <=> a piece starts at byte
 * 64*b + i). The kernel set classifies bytes into bitmasks; multi-byte code
 * points get their class from the Unicode tables, through the kernel set's
 * lead_classes for characters of 2 and 3 bytes (all bytes of a character
 * carry its class, continuation bytes never start a piece); then the regex
 * rules become mask arithmetic over the previous and next bytes:
 *
 *   a piece starts at a byte that is
 *     - not whitespace, whose class differs from the previous byte's, and
 *       whose previous byte is not ' ' (a space joins the piece after it);
 *     - whitespace after non-whitespace (a whitespace run starts);
 *     - the last whitespace code point before non-whitespace (\s+(?!\S)
 *       leaves it to the next piece: a ' ' joins it, anything else stands
 *       alone and the non-whitespace after it starts a piece by rule 1);
 *     - the text's first byte;
 *   and a ' at a piece start followed by s t m d re ve ll is a piece of its
 *   own: the bytes inside it are not starts and the byte after it is.
 *
 * Chunks of SIMDBPE__PRETOK_CHUNK blocks are classified at once so the
 * kernel runs over whole buffers, and one block is looked at ahead.
 */
#define SIMDBPE__PRETOK_CHUNK 16

typedef struct simdbpe__pretok_state {
    simdbpe__pretok_kind kind;
    size_t next_start; /* other families: where the next piece starts */
    simdbpe__pretok_scan_fn scan; /* other families' */
    const simdbpe__kernels *k;
    const uint8_t *s;
    size_t n, nblocks;
    size_t next_block; /* the first block of the next chunk */
    /* the fixed-up masks of block next_block, looked at ahead */
    simdbpe__block_masks ahead;
    uint64_t ahead_w2, ahead_w3; /* leads of 2- and 3-byte whitespace */
    /* class bits of the continuation bytes of a character that starts in
     * the last fixed-up block and ends in the next one */
    uint64_t carry_letter, carry_digit, carry_ws;
    /* bit 0: the last byte of the previous block is letter, digit, ws, ' ' */
    uint64_t prev_letter, prev_digit, prev_ws, prev_space;
    /* starts a contraction near a block's end moves into the next block */
    uint64_t clear_next, set_next;
} simdbpe__pretok_state;

void simdbpe__pretok_begin(simdbpe__pretok_state *st, const simdbpe__kernels *k,
                           const uint8_t *s, size_t n);
/* The same for any family: GPT-2 takes the block scanner, the others
 * their scanner one piece at a time, giving the same chunks of masks. */
void simdbpe__pretok_begin_kind(simdbpe__pretok_state *st, simdbpe__pretok_kind kind,
                                const simdbpe__kernels *k, const uint8_t *s, size_t n);

/* The piece-start masks of the next chunk: fills starts[0..count) and
 * returns count (0 when the text is done); *base is the offset of the
 * chunk's first byte. */
size_t simdbpe__pretok_next(simdbpe__pretok_state *st, uint64_t starts[SIMDBPE__PRETOK_CHUNK],
                            size_t *base);

/* Class of each ASCII byte: SIMDBPE__CP_* from ucd.h. */
extern const uint8_t simdbpe__ascii_class[128];

#endif
