/*
 * pretok.h - the pre-tokenizers (internal): what a pre-tokenizer family is
 * (one record each: its patterns, scanners, cut rules), and GPT-2's
 * scanners.
 *
 * A pre-tokenizer splits text into the pieces its family's regex matches,
 * with hand-written scanners instead of a regex engine. GPT-2's regex
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * takes the first alternative that matches at a position (not the
 * longest), which its scanner reproduces by testing them in order:
 *
 *   - `'` followed by s, t, m, d, re, ve or ll (lower case only);
 *   - a run of letters, of numbers, or of "other" code points (neither
 *     letter, number nor whitespace; `'` is other), optionally preceded by
 *     one ' ' (U+0020 only);
 *   - a whitespace run: up to the end of the text it is one piece; before a
 *     non-whitespace code point its last code point is left for the next
 *     piece (`\s+(?!\S)` backtracks one), unless the run is one code point.
 *
 * The other families' rules are in families.c. The input must be valid
 * UTF-8 (the encoder validates it first).
 */
#ifndef SIMDBPE_PRETOK_H
#define SIMDBPE_PRETOK_H

#include <stddef.h>
#include <stdint.h>

#include "../../kernels/kernels.h"
#include "../common/nfc.h"
#include "regex.h"

/* The end (exclusive) of GPT-2's piece that starts at s[i], i < n. One
 * code point at a time: the reference the bitmask scanner below is tested
 * against. */
size_t simdbpe__pretok_piece_end(const uint8_t *s, size_t n, size_t i);

/*
 * The pre-tokenizer families: one per regex (or sequence of Split
 * regexes) in use. A family is one record (simdbpe__pretok_family, below),
 * defined in the file of its scanners (GPT-2's in pretok.c, the others in
 * families.c) and listed in family.c's table, whose order gives each its
 * value: a model records its family's value (the .sbpe format stores it),
 * and everything that splits text (the encoder, the trainer, the safe cut
 * points, the tokenizer.json reader and writer) asks that record. Adding a
 * family is adding its record and listing it there.
 *
 * The constants below name the families other code refers to by name;
 * values are stored in model files: never renumber them.
 */
typedef enum simdbpe__pretok_kind {
    SIMDBPE__PRETOK_GPT2 = 0,        /* GPT-2, r50k_base, p50k_base */
    SIMDBPE__PRETOK_CL100K = 1,      /* cl100k_base, Llama-3, OLMo-2 */
    SIMDBPE__PRETOK_QWEN2 = 2,       /* Qwen2, Qwen2.5, Qwen3 */
    SIMDBPE__PRETOK_O200K = 3,       /* o200k_base, GPT-4o, gpt-oss */
    SIMDBPE__PRETOK_DEEPSEEK_V3 = 4, /* DeepSeek-V3 (three Splits in sequence) */
    SIMDBPE__PRETOK_REGEX = 5,       /* any other Splits, run by Oniguruma (regex.h) */
    SIMDBPE__PRETOK_TEKKEN = 6,      /* Mistral's Tekken, NVIDIA's Nemotron 3 */
    SIMDBPE__PRETOK_KIMI = 7         /* Kimi K2 */
} simdbpe__pretok_kind;

/* The normalizers a model may have: SIMDBPE__NORM_* (common/nfc.h). */

/* Where a family's texts may be cut so that the parts pre-tokenize as the
 * whole does (cuts.c argues each rule). */
typedef enum simdbpe__pretok_cuts {
    SIMDBPE__CUTS_NONE = 0,  /* nowhere: texts are encoded whole */
    SIMDBPE__CUTS_SHAPES = 1, /* cuts.c's three shapes (space, digit, punct) */
    SIMDBPE__CUTS_SHAPES_AT_BREAKS = 2 /* the same, and the space may be \r or \n */
} simdbpe__pretok_cuts;

struct simdbpe__pretok_state;

/* A family's block scanner over the next chunk s[lo..hi) of the text of
 * state `st`: sets the bits of its piece starts (bit k of starts[w] is
 * byte lo + 64 w + k; starts[] zeroed by the caller), keeping what the
 * next chunk needs in st->fam. */
typedef void (*simdbpe__pretok_scan_fn)(struct simdbpe__pretok_state *st, size_t lo, size_t hi,
                                        uint64_t *starts);

/*
 * Another spelling of a family's regex: tiktoken's pat_str of an encoding
 * (openai_public.py of tiktoken 0.14.0) or the original GPT-2 release's,
 * accepted as the family (load_tiktoken.c). Possessive quantifiers change
 * nothing where nothing after them could take back what they matched.
 * `\s++$` takes a run of whitespace that ends the text as one piece:
 * GPT-2's `\s+(?!\S)` does the same, but cl100k's `\s*[\r\n]+` before it
 * cuts such a run after its last line break (trailing_ws_whole). Such a
 * spelling gives the family's ids if no token could span that cut
 * (whitespace with a line break that ends in other whitespace): then no
 * merge crosses it; the loader checks the ranks.
 */
typedef struct simdbpe__pretok_spelling {
    const char *pattern;
    uint8_t trailing_ws_whole;
} simdbpe__pretok_spelling;

typedef struct simdbpe__pretok_family {
    /* "gpt2", "cl100k", ...: simdbpe_model_pretokenizer(), the trainer's
     * pre_tokenizer option, `simdbpe train --pre-tokenizer`, messages. */
    const char *name;
    /* The regexes of the family's HF Split pre-tokenizers, applied one
     * after the other, each Isolated, exactly as tokenizer.json files
     * spell them: how a tokenizer.json is recognised as this family, what
     * the trainer writes, what the scanners reproduce (and are tested
     * against, tests/pretok_ref.h). */
    const char *const *patterns;
    size_t n_patterns;
    /* HF writes the family as a ByteLevel pre-tokenizer that runs its own
     * regex (use_regex true: GPT-2's) rather than as Splits. */
    uint8_t bytelevel_regex;
    /* Other spellings of the regex that give the same pieces (above). */
    const simdbpe__pretok_spelling *spellings;
    size_t n_spellings;
    /* The end (exclusive) of the piece that starts at s[i] (i < n, a
     * piece start), one code point at a time: the reference. */
    size_t (*piece_end)(const uint8_t *s, size_t n, size_t i);
    /* The block scanner the encoder runs (simdbpe__pretok_next); NULL:
     * pretok.c's bitmask scanner, which keeps its state across chunks
     * (GPT-2's). */
    simdbpe__pretok_scan_fn scan;
    /* The encoder's cut points in long texts (simdbpe_cut_find). */
    simdbpe__pretok_cuts cuts;
    /* How the family's regex splits a run of \p{N}, which gives the
     * encoder cut points inside one (cuts.c): 0 not at all (GPT-2's
     * \p{N}+), 1 into single characters (Qwen2's), 3 into groups of three
     * from its start (\p{N}{1,3}). */
    uint8_t digit_run;
    /* The trainer's cut points between the parts its threads count: 1
     * where the pieces of s[0..n) certainly end at p (0 < p < n) whatever
     * follows, and the part from p pre-tokenizes alone as in the whole;
     * NULL: none (a document is counted whole). */
    int (*train_cut)(const uint8_t *s, size_t n, size_t p);
    /* The trainer's lines mode may pre-tokenize many lines at once with
     * the block scanner and fix the pieces at each '\n' (train/feed.c:
     * true of GPT-2's regex); else each line is pre-tokenized alone. */
    uint8_t train_lines_joined;
    /* The generic family (regex.h): no patterns, scanners or cut rules of
     * its own; a model of it carries its Splits, compiled. Not a choice of
     * the trainer, and not among the names simdbpe__pretok_names lists. */
    uint8_t generic;
    /* The normalizer (SIMDBPE__NORM_*) of a model of this family that no
     * tokenizer.json describes: one trained (and its tokenizer.json), or
     * read from vocab.json + merges.txt or a .tiktoken file. */
    uint8_t normalizer;
} simdbpe__pretok_family;

/* The family whose value is `kind`, or NULL for a value that is no
 * family (family.c). */
const simdbpe__pretok_family *simdbpe__pretok_family_of(unsigned kind);
/* The family's short name, or NULL for a value that is no family. */
const char *simdbpe__pretok_kind_name(unsigned kind);
/* The family named `name`, or -1. */
int simdbpe__pretok_kind_of(const char *name);
/* The families' names, separated by `sep` ("gpt2, cl100k, ..."), into
 * out[0..cap) (truncated, always terminated): for messages. */
void simdbpe__pretok_names(char *out, size_t cap, const char *sep);

/* The end (exclusive) of the piece of family `kind` that starts at s[i]
 * (i < n, a piece start); valid UTF-8. */
size_t simdbpe__pretok_family_piece_end(simdbpe__pretok_kind kind, const uint8_t *s, size_t n,
                                        size_t i);

/* Whether family `kind`'s pieces certainly end at p (0 < p < n) whatever
 * follows s[0..n), and the part from p is pre-tokenized alone as in the
 * whole text (the family's cut rule, cuts.c). And the largest such p in
 * [lo, hi], or SIZE_MAX; that one also inside runs of digits that the
 * family splits in groups of three, for which s must begin where a piece
 * does (the text, or the part after a cut). */
int simdbpe__pretok_cut_ok(unsigned kind, const uint8_t *s, size_t n, size_t p);
size_t simdbpe__pretok_cut_last(unsigned kind, const uint8_t *s, size_t n, size_t lo, size_t hi);
/* SIMDBPE__CUTS_SHAPES at p: the trainer's cut points of the families
 * that use that rule. */
int simdbpe__pretok_cut_shapes(const uint8_t *s, size_t n, size_t p);

/*
 * The bitmask scanner (GPT-2's): the same pieces, found 64 bytes at a time as a bitmask
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
    simdbpe__pretok_scan_fn scan; /* the family's, or NULL: the bitmask scanner */
    /* the generic family's walk (rx.rx set), in place of a scanner, and
     * where its next piece starts */
    simdbpe__regex_iter rx;
    size_t next_start;
    /* with scan: what it hands from one chunk to the next (its own layout,
     * families_scan.c), zero at the text's start */
    uint64_t fam[32];
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
/* The same for any family: the bitmask scanner or the family's scanner
 * (its `scan`), giving the same chunks of masks. */
void simdbpe__pretok_begin_kind(simdbpe__pretok_state *st, simdbpe__pretok_kind kind,
                                const simdbpe__kernels *k, const uint8_t *s, size_t n);

/* The same for a model's pre-tokenizer: its family, and its compiled
 * Splits for the generic family (rx, else NULL). After the last chunk,
 * st->rx.failed says Oniguruma stopped on the text (SIMDBPE_ERR_TOO_LARGE). */
void simdbpe__pretok_begin_rx(simdbpe__pretok_state *st, simdbpe__pretok_kind kind,
                              const simdbpe__regex *rx, const simdbpe__kernels *k,
                              const uint8_t *s, size_t n);

/* The piece-start masks of the next chunk: fills starts[0..count) and
 * returns count (0 when the text is done); *base is the offset of the
 * chunk's first byte. */
size_t simdbpe__pretok_next(simdbpe__pretok_state *st, uint64_t starts[SIMDBPE__PRETOK_CHUNK],
                            size_t *base);

/* The GPT-2 class (SIMDBPE__CP_*) of the well-formed code point that ends
 * exactly at s[p] (p > 0), or -1 if the bytes before p do not end with
 * one. */
int simdbpe__pretok_class_before(const uint8_t *s, size_t p);

/* Class of each ASCII byte: SIMDBPE__CP_* from ucd.h. */
extern const uint8_t simdbpe__ascii_class[128];

#endif
