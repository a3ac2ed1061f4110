/*
 * pretok.c - the GPT-2 pre-tokenizer: a scanner one code point at a time
 * (the reference), a bitmask scanner 64 bytes at a time (the fast path),
 * the trainer's cut points, and the family's record; see pretok.h for the
 * rules. The scanners need valid UTF-8.
 */
#include <stdbool.h>
#include <string.h>

#include "pretok.h"

#include "common.h"
#include "ucd.h"
#include "utf8_valid.h"

#define L SIMDBPE__CP_LETTER
#define N SIMDBPE__CP_NUMBER
#define S SIMDBPE__CP_SPACE
#define O SIMDBPE__CP_OTHER

/* \t \n \v \f \r and ' ' are whitespace; A-Z a-z letters; 0-9 numbers. */
const uint8_t simdbpe__ascii_class[128] = {
    O, O, O, O, O, O, O, O, O, S, S, S, S, S, O, O, /* 0x00 */
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, /* 0x10 */
    S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, /* 0x20 */
    N, N, N, N, N, N, N, N, N, N, O, O, O, O, O, O, /* 0x30 */
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* 0x40 */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, /* 0x50 */
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* 0x60 */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O, /* 0x70 */
};

/* Decodes the (valid) code point at s[i]; returns its class and sets
 * *len to its length in bytes. */
static inline unsigned class_at(const uint8_t *s, size_t i, size_t *len)
{
    if (s[i] < 0x80) {
        *len = 1;
        return simdbpe__ascii_class[s[i]];
    }
    return simdbpe__ucd_class(simdbpe__utf8_decode(s, i, len));
}

/* The end of the run of code points of class `cls` starting at s[i]. For
 * `O` the run is of code points that are neither L, N nor S, which is
 * exactly class O. */
static inline size_t run_end(const uint8_t *s, size_t n, size_t i, unsigned cls)
{
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            if (simdbpe__ascii_class[c] != cls)
                break;
            i++;
            continue;
        }
        size_t len;
        if (class_at(s, i, &len) != cls)
            break;
        i += len;
    }
    return i;
}

/* The length of a contraction ('s 't 'm 'd 're 've 'll) at s[i] == '\'',
 * or 0. */
static inline size_t contraction_len(const uint8_t *s, size_t n, size_t i)
{
    if (i + 1 >= n)
        return 0;
    uint8_t a = s[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (i + 2 >= n)
        return 0;
    uint8_t b = s[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 3;
    return 0;
}

/* The start of the last code point before s[j] (j > 0). */
static inline size_t last_cp_start(const uint8_t *s, size_t j)
{
    do
        j--;
    while ((s[j] & 0xC0) == 0x80);
    return j;
}

size_t simdbpe__pretok_piece_end(const uint8_t *s, size_t n, size_t i)
{
    size_t len;
    if (s[i] == '\'') {
        size_t c = contraction_len(s, n, i);
        if (c)
            return i + c;
    }
    unsigned cls = class_at(s, i, &len);
    if (s[i] == ' ' && i + 1 < n) {
        size_t len2;
        unsigned next = class_at(s, i + 1, &len2);
        if (next != S)
            return run_end(s, n, i + 1 + len2, next);
    }
    if (cls != S)
        return run_end(s, n, i + len, cls);
    size_t j = run_end(s, n, i + len, S);
    if (j == n)
        return n;
    size_t last = last_cp_start(s, j);
    return last > i ? last : j;
}

/* ------------------------------------------------------- block scanner */

static inline uint64_t bits_below(size_t k)
{
    return k >= 64 ? ~0ULL : (1ULL << k) - 1;
}

/* The bytes of block `b` that are inside the text. */
static inline uint64_t block_valid(const simdbpe__pretok_state *st, size_t b)
{
    return bits_below(st->n - b * 64);
}

/* The bits of the characters of 2 and 3 bytes that start at the bits of
 * x2 and x3, within the block, and the bits of the next block they run on
 * into (a 2-byte character at bit 63, a 3-byte one at 62 or 63). */
static inline uint64_t spans(uint64_t x2, uint64_t x3)
{
    return x2 | x2 << 1 | x3 | x3 << 1 | x3 << 2;
}

static inline uint64_t spans_on(uint64_t x2, uint64_t x3)
{
    return x2 >> 63 | x3 >> 63 | x3 >> 62;
}

/* fix_block through the kernel set's lead_classes; false if it cannot
 * (fewer than 8 bytes after the block, or a 4-byte character). */
static bool fix_block_kernel(simdbpe__pretok_state *st, size_t b, simdbpe__block_masks *m,
                             uint64_t *w2, uint64_t *w3)
{
    simdbpe__lead_classes c;
    if (b * 64 + 72 > st->n ||
        !st->k->lead_classes(st->s + b * 64, m->high & ~m->cont, simdbpe__ucd_bmp2, &c))
        return false;
    uint64_t two = ~c.three;
    m->letter |= st->carry_letter | spans(c.letter & two, c.letter & c.three);
    m->digit |= st->carry_digit | spans(c.digit & two, c.digit & c.three);
    m->ws |= st->carry_ws | spans(c.ws & two, c.ws & c.three);
    st->carry_letter = spans_on(c.letter & two, c.letter & c.three);
    st->carry_digit = spans_on(c.digit & two, c.digit & c.three);
    st->carry_ws = spans_on(c.ws & two, c.ws & c.three);
    *w2 = c.ws & two;
    *w3 = c.ws & c.three;
    return true;
}

/*
 * Gives the multi-byte characters of block `b` their class: every byte of
 * a letter, number or whitespace character gets that class's bit (other
 * characters get none, which is class "other"), and the leads of 2- and
 * 3-byte whitespace are noted for the "last whitespace" rule. Bytes of a
 * character that runs into the next block are carried over to it. The
 * kernel set looks the classes up (the AVX2 one eight at a time) in
 * blocks of more than KERNEL_LEADS characters; a block of fewer, with a
 * 4-byte character, or too near the text's end for the kernel's reads,
 * takes the loop below, one character at a time.
 *
 * The kernel costs about the same for one character as for a block of
 * them, and English has a few (quotes, dashes) in many of its blocks:
 * sending the blocks of up to 8 to the loop made pre-tokenizing English
 * and multilingual text faster, code the same (bench/README.md).
 */
#define KERNEL_LEADS 8

/* Whether x has more than KERNEL_LEADS bits set. Not __builtin_popcountll:
 * this file is built for the baseline CPU, where gcc makes that a call to
 * libgcc's table-driven __popcountdi2 (measurable in a profile). */
static inline bool over_kernel_leads(uint64_t x)
{
    for (int i = 0; i < KERNEL_LEADS; i++)
        x &= x - 1;
    return x != 0;
}

static void fix_block(simdbpe__pretok_state *st, size_t b, simdbpe__block_masks *m,
                      uint64_t *w2, uint64_t *w3)
{
    if (over_kernel_leads(m->high & ~m->cont) &&
        fix_block_kernel(st, b, m, w2, w3))
        return;
    /* In locals, not through m and st: the compiler cannot tell that they
     * do not overlap, and an OR into memory per character made a chain of
     * store-to-load forwards. */
    uint64_t letter = m->letter | st->carry_letter;
    uint64_t digit = m->digit | st->carry_digit;
    uint64_t ws = m->ws | st->carry_ws;
    uint64_t carry_letter = 0, carry_digit = 0, carry_ws = 0, lead2 = 0, lead3 = 0;
    uint64_t leads = m->high & ~m->cont;
    const uint8_t *base = st->s + b * 64;
    while (leads) {
        unsigned i = (unsigned)__builtin_ctzll(leads);
        leads &= leads - 1;
        size_t len;
        unsigned cls = class_at(base, i, &len);
        if (cls == O)
            continue;
        /* Bits i .. i+len-1, some of them possibly in the next block. */
        uint64_t here = bits_below(len) << i;
        uint64_t next = i + len > 64 ? bits_below(i + len - 64) : 0;
        if (cls == L) {
            letter |= here;
            carry_letter |= next;
        } else if (cls == N) {
            digit |= here;
            carry_digit |= next;
        } else {
            ws |= here;
            carry_ws |= next;
            if (len == 2)
                lead2 |= 1ULL << i;
            else
                lead3 |= 1ULL << i;
        }
    }
    m->letter = letter;
    m->digit = digit;
    m->ws = ws;
    st->carry_letter = carry_letter;
    st->carry_digit = carry_digit;
    st->carry_ws = carry_ws;
    *w2 = lead2;
    *w3 = lead3;
}

static void load_block(simdbpe__pretok_state *st, size_t b, simdbpe__block_masks *m,
                       uint64_t *w2, uint64_t *w3)
{
    if (m->high)
        fix_block(st, b, m, w2, w3);
    else {
        m->letter |= st->carry_letter;
        m->digit |= st->carry_digit;
        m->ws |= st->carry_ws;
        st->carry_letter = st->carry_digit = st->carry_ws = 0;
        *w2 = *w3 = 0;
    }
}

void simdbpe__pretok_begin_rx(simdbpe__pretok_state *st, simdbpe__pretok_kind kind,
                              const simdbpe__regex *rx, const simdbpe__kernels *k,
                              const uint8_t *s, size_t n)
{
    if (!rx) {
        simdbpe__pretok_begin_kind(st, kind, k, s, n);
        return;
    }
    memset(st, 0, sizeof *st);
    st->k = k;
    st->s = s;
    st->n = n;
    st->nblocks = (n + 63) / 64;
    simdbpe__regex_begin(&st->rx, rx, s, n);
    size_t a, b;
    st->next_start = simdbpe__regex_next(&st->rx, &a, &b) ? a : SIZE_MAX;
}

void simdbpe__pretok_begin_kind(simdbpe__pretok_state *st, simdbpe__pretok_kind kind,
                                const simdbpe__kernels *k, const uint8_t *s, size_t n)
{
    simdbpe__pretok_scan_fn scan = simdbpe__pretok_family_of(kind)->scan;
    if (!scan) {
        simdbpe__pretok_begin(st, k, s, n);
        return;
    }
    memset(st, 0, sizeof *st);
    st->scan = scan;
    st->k = k;
    st->s = s;
    st->n = n;
    st->nblocks = (n + 63) / 64;
}

/* A chunk of piece starts from the generic family's walk: next_start is
 * the start of the first piece not yet marked. */
static size_t regex_next(simdbpe__pretok_state *st, uint64_t starts[SIMDBPE__PRETOK_CHUNK],
                         size_t *base, size_t count)
{
    size_t lo = st->next_block * 64, hi = lo + 64 * count < st->n ? lo + 64 * count : st->n;
    memset(starts, 0, count * sizeof *starts);
    while (st->next_start < hi) {
        size_t at = st->next_start - lo, a, b;
        starts[at / 64] |= 1ULL << (at % 64);
        st->next_start = simdbpe__regex_next(&st->rx, &a, &b) ? a : SIZE_MAX;
    }
    st->next_block += count;
    *base = lo;
    return count;
}

/* The blocks of the next chunk (0 when the text is done). */
static size_t chunk_blocks(const simdbpe__pretok_state *st)
{
    size_t left = st->nblocks - st->next_block;
    return left < SIMDBPE__PRETOK_CHUNK ? left : SIMDBPE__PRETOK_CHUNK;
}

/* A chunk of piece starts by the family's scanner (a piece may run on
 * past the chunk; its end is the next start). */
static size_t family_next(simdbpe__pretok_state *st, uint64_t starts[SIMDBPE__PRETOK_CHUNK],
                          size_t *base)
{
    size_t first = st->next_block, count = chunk_blocks(st);
    if (count == 0)
        return 0;
    size_t lo = first * 64, hi = lo + 64 * count < st->n ? lo + 64 * count : st->n;
    memset(starts, 0, count * sizeof *starts);
    st->scan(st, lo, hi, starts);
    st->next_block = first + count;
    *base = lo;
    return count;
}

void simdbpe__pretok_begin(simdbpe__pretok_state *st, const simdbpe__kernels *k,
                           const uint8_t *s, size_t n)
{
    memset(st, 0, sizeof *st);
    st->k = k;
    st->s = s;
    st->n = n;
    st->nblocks = (n + 63) / 64;
    if (n) {
        k->classify(s, n < 64 ? n : 64, &st->ahead);
        load_block(st, 0, &st->ahead, &st->ahead_w2, &st->ahead_w3);
    }
}

/* Moves the starts that the contraction at byte `at` (a piece start)
 * implies: no start inside it, one right after it. */
static inline uint64_t apply_contractions(simdbpe__pretok_state *st, size_t base, uint64_t cand,
                                          uint64_t starts)
{
    while (cand) {
        unsigned i = (unsigned)__builtin_ctzll(cand);
        cand &= cand - 1;
        size_t c = contraction_len(st->s, st->n, base + i);
        if (!c)
            continue;
        /* inside: bits i+1 .. i+c-1; after: bit i+c (0 past the text) */
        for (size_t j = i + 1; j <= i + c; j++) {
            int set = j == i + c && base + j < st->n;
            if (j < 64)
                starts = set ? starts | 1ULL << j : starts & ~(1ULL << j);
            else if (set)
                st->set_next |= 1ULL << (j - 64);
            else
                st->clear_next |= 1ULL << (j - 64);
        }
    }
    return starts;
}

/* The piece starts of block `b` (masks m), given the block after it. */
static uint64_t block_starts(simdbpe__pretok_state *st, size_t b, const simdbpe__block_masks *m,
                             uint64_t w2, uint64_t w3, const simdbpe__block_masks *next)
{
    uint64_t valid = block_valid(st, b);
    uint64_t letter = m->letter, digit = m->digit, ws = m->ws;
    uint64_t p_letter = letter << 1 | st->prev_letter;
    uint64_t p_digit = digit << 1 | st->prev_digit;
    uint64_t p_ws = ws << 1 | st->prev_ws;
    uint64_t p_space = m->space << 1 | st->prev_space;
    uint64_t change = (letter ^ p_letter) | (digit ^ p_digit) | (ws ^ p_ws);
    uint64_t nonws = valid & ~ws;
    uint64_t next_nonws = next ? ~next->ws & block_valid(st, b + 1) : 0;
    /* bit i: byte i+1 is non-whitespace inside the text */
    uint64_t nonws_after = nonws >> 1 | next_nonws << 63;
    uint64_t starts = (nonws & ~p_space & change) | (ws & ~p_ws) | (ws & ~m->high & nonws_after);
    if (SIMDBPE_UNLIKELY(w2 | w3))
        starts |= (w2 & (nonws >> 2 | next_nonws << 62)) | (w3 & (nonws >> 3 | next_nonws << 61));
    if (b == 0)
        starts |= 1;
    starts = (starts & ~st->clear_next) | st->set_next;
    st->clear_next = st->set_next = 0;
    starts &= valid;
    if (SIMDBPE_UNLIKELY(m->apos & starts))
        starts = apply_contractions(st, b * 64, m->apos & starts, starts);
    st->prev_letter = letter >> 63;
    st->prev_digit = digit >> 63;
    st->prev_ws = ws >> 63;
    st->prev_space = m->space >> 63;
    return starts;
}

size_t simdbpe__pretok_next(simdbpe__pretok_state *st, uint64_t starts[SIMDBPE__PRETOK_CHUNK],
                            size_t *base)
{
    if (st->scan)
        return family_next(st, starts, base);
    size_t first = st->next_block, count = chunk_blocks(st);
    if (count == 0)
        return 0;
    if (st->rx.rx)
        return regex_next(st, starts, base, count);
    /* masks[0] is the block looked at ahead last time; classify the rest
     * of the chunk and the block after it. */
    simdbpe__block_masks masks[SIMDBPE__PRETOK_CHUNK + 1];
    uint64_t w2[SIMDBPE__PRETOK_CHUNK + 1], w3[SIMDBPE__PRETOK_CHUNK + 1];
    masks[0] = st->ahead;
    w2[0] = st->ahead_w2;
    w3[0] = st->ahead_w3;
    size_t have = first + count < st->nblocks ? count + 1 : count;
    if (have > 1) {
        size_t from = (first + 1) * 64;
        size_t to = (first + have) * 64 < st->n ? (first + have) * 64 : st->n;
        st->k->classify(st->s + from, to - from, masks + 1);
        for (size_t j = 1; j < have; j++)
            load_block(st, first + j, &masks[j], &w2[j], &w3[j]);
    }
    for (size_t j = 0; j < count; j++)
        starts[j] = block_starts(st, first + j, &masks[j], w2[j], w3[j],
                                 j + 1 < have ? &masks[j + 1] : NULL);
    if (have > count) {
        st->ahead = masks[count];
        st->ahead_w2 = w2[count];
        st->ahead_w3 = w3[count];
    }
    st->next_block = first + count;
    *base = first * 64;
    return count;
}

/* ------------------------------------------------------ the trainer's cuts */

int simdbpe__pretok_class_before(const uint8_t *s, size_t p)
{
    size_t q = p - 1;
    if (s[q] < 0x80)
        return (int)simdbpe__ascii_class[s[q]];
    while (q > 0 && p - q < 4 && (s[q] & 0xC0) == 0x80)
        q--;
    size_t len;
    if (simdbpe__utf8_sequence_len(s + q, p - q) != p - q)
        return -1;
    return (int)simdbpe__ucd_class(simdbpe__utf8_decode(s, q, &len));
}

/* The class of the valid code point that starts at s[p] and ends within
 * s[0..n), or -1. */
static int class_from(const uint8_t *s, size_t n, size_t p)
{
    if (s[p] < 0x80)
        return (int)simdbpe__ascii_class[s[p]];
    size_t len;
    if (simdbpe__utf8_sequence_len(s + p, n - p) == 0)
        return -1;
    return (int)simdbpe__ucd_class(simdbpe__utf8_decode(s, p, &len));
}

/*
 * Whether every GPT-2 piece boundary is kept when s[0..n) is cut at p
 * (0 < p < n) and each side is pre-tokenized alone, whatever follows.
 *
 * The piece holding the code point before p is a run of letters, numbers or
 * "other" (with an optional leading space) or a contraction, if that code
 * point is not whitespace. Such a run ends exactly where the class changes,
 * whatever follows, and the next piece starts afresh. Two exceptions are
 * excluded: whitespace before p (`\s+(?!\S)` looks ahead and may give its
 * last space to the next word) and "'" before a letter (a contraction may
 * start at the "'"). Both code points must be valid UTF-8 so that `replace`
 * mode repairs both sides the same way.
 */
static int gpt2_train_cut(const uint8_t *s, size_t n, size_t p)
{
    int a = simdbpe__pretok_class_before(s, p);
    if (a < 0 || a == S)
        return 0;
    int b = class_from(s, n, p);
    return b >= 0 && a != b && !(s[p - 1] == '\'' && b == L);
}

/* ---------------------------------------------------------- the family */

/* The pattern HF's ByteLevel pre-tokenizer runs with use_regex. */
static const char *const GPT2_PATTERNS[] = {
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"};

/* tiktoken's r50k_base pat_str, and the original GPT-2 release's. */
static const simdbpe__pretok_spelling GPT2_SPELLINGS[] = {
    {"'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s", 0},
    {"'s|'t|'re|'ve|'m|'ll|'d| ?[\\p{L}]+| ?[\\p{N}]+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", 0},
};

const simdbpe__pretok_family simdbpe__pretok_gpt2 = {
    .name = "gpt2",
    .patterns = GPT2_PATTERNS,
    .n_patterns = 1,
    .bytelevel_regex = 1,
    .spellings = GPT2_SPELLINGS,
    .n_spellings = 2,
    .piece_end = simdbpe__pretok_piece_end,
    .scan = NULL, /* the bitmask scanner above */
    .cuts = SIMDBPE__CUTS_SHAPES_AT_BREAKS,
    .digit_run = 0, /* " ?\p{N}+" */
    .train_cut = gpt2_train_cut,
    .train_lines_joined = 1,
    .normalizer = SIMDBPE__NORM_NONE,
};
