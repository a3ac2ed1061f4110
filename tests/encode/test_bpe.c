/*
 * test_bpe.c - the library's BPE against a slow, obviously-correct
 * reference (ref_bpe.h: the textbook "merge the lowest-rank pair, leftmost
 * on ties" loop over merges.txt parsed by the test).
 *
 * Two paths are compared with the reference:
 *   - simdbpe__bpe_word (the heap merge) on any bytes, including words the
 *     pre-tokenizer never makes (random bytes, long runs of spaces);
 *   - simdbpe_encode, which adds the whole-token shortcut and the cache, on
 *     words that are exactly one pre-token.
 * Models: GPT-2 (from src/model/gpt2 files) and small random models whose
 * ids are shuffled (not 256 + rank) and whose merges may make the same token
 * in several ways or make tokens their own merges never reach.
 */
#include <criterion/criterion.h>

#include "encode/encoder.h"
#include "model/model.h"
#include "pretok/pretok.h"
#include "ref_bpe.h"
#include "test_util.h"

/* A tiny deterministic PRNG (xorshift64*), so failures reproduce. */
static uint64_t rng_state;
static void rng_seed(uint64_t s)
{
    rng_state = s * 0x9E3779B97F4A7C15ULL + 1;
}
static uint32_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}
static uint32_t rng_below(uint32_t n)
{
    return rng_next() % n;
}

typedef struct fixture {
    simdbpe_model *m;
    simdbpe_encoder *e;
    ref_model ref;
    simdbpe__bpe_scratch scratch;
    uint32_t *got, *want;
    size_t cap;
    size_t compared_encode;
    size_t compared_backtrack; /* words the backtracking search took */
} fixture;

static void fixture_init(fixture *f, const char *vocab, size_t vlen, const char *merges,
                         size_t mlen, simdbpe_model *m)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->e = tu_encoder(m);
    cr_assert_eq(ref_model_load(&f->ref, vocab, vlen, merges, mlen), 0, "reference load");
    f->cap = 1 << 16;
    f->got = malloc(f->cap * sizeof *f->got);
    f->want = malloc(f->cap * sizeof *f->want);
}

static void fixture_free(fixture *f)
{
    simdbpe_encoder_free(f->e);
    simdbpe_model_free(f->m);
    ref_model_free(&f->ref);
    simdbpe__bpe_scratch_free(&f->scratch);
    free(f->got);
    free(f->want);
}

/* Compares bpe.c's two long-word paths, forced whatever the word's
 * length, with the reference's ids want[0..nw): the per-rank sweeps on
 * every model, the backtracking search where the model allows it (it
 * says so by SIMDBPE_ERR_UNSUPPORTED, writing nothing). */
static void check_long_paths(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                             const uint8_t *w, size_t len, const uint32_t *want, size_t nw,
                             uint32_t *got, size_t *compared_backtrack, const char *what)
{
    if (len < 2)
        return;
    char msg[160], shown[120];
    size_t ng = 0;
    cr_assert_eq(simdbpe__bpe_word_queued(m, scratch, w, len, got, &ng), SIMDBPE_OK);
    if (tu_ids_differ(got, ng, want, nw, msg, sizeof msg)) {
        tu_show(shown, sizeof shown, (const char *)w, len);
        cr_assert_fail("sweeps, %s word \"%s\" (%zu bytes): %s", what, shown, len, msg);
    }
    ng = 0;
    simdbpe_status st = simdbpe__bpe_word_backtrack(m, scratch, w, len, got, &ng);
    if (st == SIMDBPE_ERR_UNSUPPORTED) {
        cr_assert_eq(ng, 0);
        return;
    }
    cr_assert_eq(st, SIMDBPE_OK);
    if (tu_ids_differ(got, ng, want, nw, msg, sizeof msg)) {
        tu_show(shown, sizeof shown, (const char *)w, len);
        cr_assert_fail("backtracking, %s word \"%s\" (%zu bytes): %s", what, shown, len, msg);
    }
    ++*compared_backtrack;
}

/* Compares the library with the reference on one word. */
static void check_word(fixture *f, const uint8_t *w, size_t len, const char *what)
{
    cr_assert(len >= 1 && len < f->cap);
    long nw = ref_encode(&f->ref, w, len, f->want);
    cr_assert_geq(nw, 1, "reference failed on a %s word", what);
    size_t ng = 0;
    cr_assert_eq(simdbpe__bpe_word(f->m, &f->scratch, w, len, f->got, &ng), SIMDBPE_OK);
    char msg[160], shown[120];
    if (tu_ids_differ(f->got, ng, f->want, (size_t)nw, msg, sizeof msg)) {
        tu_show(shown, sizeof shown, (const char *)w, len);
        cr_assert_fail("bpe_word, %s word \"%s\" (%zu bytes): %s", what, shown, len, msg);
    }
    check_long_paths(f->m, &f->scratch, w, len, f->want, (size_t)nw, f->got,
                     &f->compared_backtrack, what);
    /* Through the public API too when the word is one valid pre-token. */
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(f->e, (const char *)w, len, NULL, &ids, &n, &err);
    if (st == SIMDBPE_ERR_INVALID_UTF8)
        return; /* bpe_word above covered it */
    cr_assert_eq(st, SIMDBPE_OK, "encode: %s", err.message);
    if (simdbpe__pretok_piece_end(w, len, 0) != len)
        return;
    f->compared_encode++;
    if (tu_ids_differ(ids, n, f->want, (size_t)nw, msg, sizeof msg)) {
        tu_show(shown, sizeof shown, (const char *)w, len);
        cr_assert_fail("simdbpe_encode, %s word \"%s\" (%zu bytes): %s", what, shown, len, msg);
    }
}

/* ---------------------------------------------------------------- GPT-2 */

static fixture gpt2;

static void gpt2_setup(void)
{
    size_t vlen, mlen;
    char *v = tu_read(TU_GPT2_DIR "/vocab.json", &vlen);
    char *m = tu_read(TU_GPT2_DIR "/merges.txt", &mlen);
    fixture_init(&gpt2, v, vlen, m, mlen, tu_gpt2());
    free(v);
    free(m);
}

static void gpt2_teardown(void)
{
    fixture_free(&gpt2);
}

TestSuite(bpe_gpt2, .init = gpt2_setup, .fini = gpt2_teardown);

/* The byte-pair table (model.h) gives, for every two bytes, the merge of
 * their single-byte tokens exactly as the perfect hash has it: rank + 1
 * and the new id, or 0 where there is none. */
static void check_byte_pairs(const simdbpe_model *m)
{
    simdbpe__byte_pair *table = calloc(65536, sizeof *table);
    cr_assert_not_null(table);
    simdbpe__byte_pairs_fill(m, table);
    size_t merges = 0;
    for (uint32_t a = 0; a < 256; a++) {
        for (uint32_t b = 0; b < 256; b++) {
            const simdbpe__byte_pair *bp = &table[a << 8 | b];
            const simdbpe__merge_slot *slot = simdbpe__merge_find(m, m->byte_id[a], m->byte_id[b]);
            if (!slot) {
                cr_assert_eq(bp->rank1, 0, "bytes %02X %02X: no merge, rank1 %u", a, b, bp->rank1);
                continue;
            }
            merges++;
            cr_assert_eq(bp->rank1, slot->rank + 1, "bytes %02X %02X", a, b);
            cr_assert_eq(bp->id, slot->id, "bytes %02X %02X", a, b);
        }
    }
    cr_assert_gt(merges, 0);
    free(table);
}

Test(bpe_gpt2, byte_pairs_match_the_perfect_hash)
{
    check_byte_pairs(gpt2.m);
}

/* The pair filter (model.h) may let a pair that is no merge through, but
 * never stops one that is: every rule passes. And it is worth its load:
 * of random pairs of tokens that are no merge, few pass (a filter that
 * let everything through would pass this test's first half). */
Test(bpe_gpt2, pair_filter_passes_every_merge_and_few_others)
{
    const simdbpe_model *m = gpt2.m;
    cr_assert_eq(m->n_merges, 50000);
    for (uint32_t r = 0; r < m->n_merges; r++) {
        uint64_t key = (uint64_t)m->rules[r].left << 32 | m->rules[r].right;
        cr_assert(simdbpe__pair_may_merge(m, key), "merge of rank %u is filtered out", r);
    }
    rng_seed(11);
    size_t others = 0, passed = 0;
    while (others < 200000) {
        uint32_t l = rng_below(m->vocab_size), r = rng_below(m->vocab_size);
        if (simdbpe__merge_find(m, l, r))
            continue;
        others++;
        passed += simdbpe__pair_may_merge(m, (uint64_t)l << 32 | r) != 0;
    }
    cr_assert_lt(passed, others / 10, "%zu of %zu pairs that are no merge pass the filter",
                 passed, others);
}

/* The joins (model.h): every merge sets the bit of the two bytes it puts
 * side by side; and where a word has two bytes side by side whose bit is
 * clear, the reference's encoding of the word is that of the part before
 * followed by that of the part after, which is what the encoder relies on
 * when it cuts words into parts. Random words of random bytes have many
 * such places. */
Test(bpe_gpt2, joins_hold_every_merge_and_cut_places_split_words)
{
    const simdbpe_model *m = gpt2.m;
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        uint8_t a = m->blob[m->tok_off[u->left + 1] - 1], b = m->blob[m->tok_off[u->right]];
        cr_assert(simdbpe__may_join(m, a, b), "merge of rank %u is not in the joins", r);
    }
    rng_seed(12);
    uint8_t w[40];
    uint32_t whole[40], parts[80];
    size_t cuts = 0;
    for (int t = 0; t < 5000; t++) {
        size_t len = 2 + rng_below(30);
        for (size_t i = 0; i < len; i++)
            w[i] = (uint8_t)rng_below(256);
        long nw = ref_encode(&gpt2.ref, w, len, whole);
        cr_assert_geq(nw, 1);
        for (size_t i = 1; i < len; i++) {
            if (simdbpe__may_join(m, w[i - 1], w[i]))
                continue;
            cuts++;
            long nl = ref_encode(&gpt2.ref, w, i, parts);
            long nr = ref_encode(&gpt2.ref, w + i, len - i, parts + nl);
            cr_assert(nl + nr == nw && memcmp(parts, whole, (size_t)nw * sizeof *whole) == 0,
                      "word %d: cut at byte %zu of %zu changes its encoding", t, i, len);
        }
    }
    cr_assert_gt(cuts, 10000);
}

/* REFERENCE.md: every non-special GPT-2 token is reachable, so each
 * token's own bytes encode to that one token - by both encoders. */
Test(bpe_gpt2, every_token_of_the_vocab)
{
    for (uint32_t id = 0; id < 50256; id++) {
        const uint8_t *b;
        size_t len;
        cr_assert_eq(simdbpe_model_token_bytes(gpt2.m, id, &b, &len), SIMDBPE_OK);
        cr_assert_eq(ref_encode(&gpt2.ref, b, len, gpt2.want), 1, "token %u", id);
        cr_assert_eq(gpt2.want[0], id, "the reference splits token %u", id);
        check_word(&gpt2, b, len, "vocab token");
    }
    cr_assert_gt(gpt2.compared_encode, 40000);
}

/* Two to four tokens glued together: merges across token boundaries. */
Test(bpe_gpt2, concatenated_tokens)
{
    rng_seed(1);
    uint8_t w[4096];
    for (int t = 0; t < 20000; t++) {
        size_t len = 0;
        int k = 2 + (int)rng_below(3);
        for (int i = 0; i < k; i++) {
            const uint8_t *b;
            size_t bl;
            simdbpe_model_token_bytes(gpt2.m, rng_below(50256), &b, &bl);
            memcpy(w + len, b, bl);
            len += bl;
        }
        check_word(&gpt2, w, len, "concatenated-token");
    }
}

/* Random English-like words (letters, syllables), with and without a
 * leading space: one pre-token each. */
Test(bpe_gpt2, random_letter_words)
{
    static const char *const syl[] = {"th", "e", "in", "er", "an", "re", "on", "at", "en",
                                      "nd", "ti", "es", "or", "te", "of", "ed", "is", "it",
                                      "al", "ar", "st", "to", "nt", "ng", "se", "ha", "as",
                                      "ou", "io", "le", "ve", "co", "me", "de", "hi", "ri",
                                      "ro", "ic", "ne", "ea", "ra", "ce", "q", "x", "z",
                                      "Th", "E", "IN", "Qu", "j", "y", "k"};
    rng_seed(2);
    uint8_t w[512];
    for (int t = 0; t < 30000; t++) {
        size_t len = 0;
        if (rng_below(2))
            w[len++] = ' ';
        int k = 1 + (int)rng_below(12);
        for (int i = 0; i < k; i++) {
            const char *s = syl[rng_below(sizeof syl / sizeof syl[0])];
            memcpy(w + len, s, strlen(s));
            len += strlen(s);
        }
        check_word(&gpt2, w, len, "letter");
    }
    cr_assert_gt(gpt2.compared_encode, 29000);
}

/* Letters of other scripts (2-byte and 3-byte UTF-8) and digit runs. */
Test(bpe_gpt2, random_non_ascii_and_digit_words)
{
    rng_seed(3);
    uint8_t w[512];
    for (int t = 0; t < 20000; t++) {
        size_t len = 0;
        if (rng_below(2))
            w[len++] = ' ';
        int kind = (int)rng_below(4), k = 1 + (int)rng_below(10);
        for (int i = 0; i < k; i++) {
            if (kind == 0) { /* Cyrillic а-я: D0 B0..D1 8F */
                uint32_t cp = 0x430 + rng_below(32);
                w[len++] = (uint8_t)(0xC0 | cp >> 6);
                w[len++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (kind == 1) { /* CJK U+4E00.. */
                uint32_t cp = 0x4E00 + rng_below(0x200);
                w[len++] = (uint8_t)(0xE0 | cp >> 12);
                w[len++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                w[len++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (kind == 2) { /* digits */
                w[len++] = (uint8_t)('0' + rng_below(10));
            } else { /* Latin-1 letters à..ÿ (C3 A0..C3 BF) */
                w[len++] = 0xC3;
                w[len++] = (uint8_t)(0xA0 + rng_below(32));
            }
        }
        check_word(&gpt2, w, len, "non-ASCII/digit");
    }
}

/* Adversarial shapes: long runs of one byte, alternating patterns, runs of
 * spaces and newlines, and the same at every length up to a bound. */
Test(bpe_gpt2, adversarial_runs_and_patterns)
{
    static const char *const units[] = {"a", "e", "z", "0", "9", " ", "\n", "!", "-", "=",
                                        "ab", "ba", "aab", "abc", "the", " a", "a ", "xy",
                                        "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "'s",
                                        "1 ", "..", "//", "**"};
    uint8_t w[2100];
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t ul = strlen(units[u]);
        for (size_t reps = 1; reps * ul <= 2048; reps = reps < 64 ? reps + 1 : reps * 2) {
            for (size_t i = 0; i < reps; i++)
                memcpy(w + i * ul, units[u], ul);
            check_word(&gpt2, w, reps * ul, "run");
        }
    }
    /* A leading space before a run: " aaaa...". */
    for (size_t n = 1; n <= 300; n++) {
        w[0] = ' ';
        memset(w + 1, 'a', n);
        check_word(&gpt2, w, n + 1, "spaced run");
    }
}

/* Random bytes as words: invalid UTF-8 included (bpe_word only). */
Test(bpe_gpt2, random_bytes)
{
    rng_seed(4);
    uint8_t w[256];
    for (int t = 0; t < 20000; t++) {
        size_t len = 1 + rng_below(40);
        int narrow = rng_below(2); /* half the words from a 4-byte alphabet */
        for (size_t i = 0; i < len; i++)
            w[i] = narrow ? (uint8_t)"\xE0\x80 a"[rng_below(4)] : (uint8_t)rng_below(256);
        check_word(&gpt2, w, len, "random-byte");
    }
}

/* A long word of one of LONG_KINDS kinds, len bytes, into w. */
#define LONG_KINDS 7
static const char *const long_kind_name[LONG_KINDS] = {
    "one letter", "random letters", "digits", "spaces", "one emoji", "random bytes", "mixed"};

static void long_word(uint8_t *w, size_t len, unsigned kind)
{
    static const uint8_t emoji[4] = {0xF0, 0x9F, 0x98, 0x80}; /* U+1F600 */
    uint8_t letter = (uint8_t)"aezq"[rng_below(4)];
    for (size_t i = 0; i < len;) {
        /* mixed: runs of 1..40 bytes of the other kinds */
        unsigned k = kind == 6 ? rng_below(6) : kind;
        size_t run = kind == 6 ? 1 + rng_below(40) : len;
        for (size_t j = 0; j < run && i < len; j++, i++) {
            switch (k) {
            case 0: w[i] = letter; break;
            case 1: w[i] = (uint8_t)('a' + rng_below(26)); break;
            case 2: w[i] = (uint8_t)('0' + rng_below(10)); break;
            case 3: w[i] = ' '; break;
            case 4: w[i] = emoji[i % 4]; break;
            default: w[i] = (uint8_t)rng_below(256); break;
            }
        }
    }
}

/* Long words of every kind, 256..1500 bytes (the reference is
 * quadratic), through the dispatch and both long-word paths. GPT-2's
 * tokens are all BPE of their own bytes, so the backtracking search must
 * take every one of them. */
Test(bpe_gpt2, long_words_through_both_paths)
{
    uint8_t *w = malloc(1500);
    cr_assert_not_null(w);
    rng_seed(11);
    size_t before = gpt2.compared_backtrack;
    for (unsigned t = 0; t < 16 * LONG_KINDS; t++) {
        size_t len = 256 + rng_below(1500 - 256);
        long_word(w, len, t % LONG_KINDS);
        check_word(&gpt2, w, len, long_kind_name[t % LONG_KINDS]);
    }
    cr_assert_eq(gpt2.compared_backtrack - before, 16 * LONG_KINDS);
    free(w);
}

/* Words of megabytes, too long for the reference: the backtracking
 * search against the per-rank sweeps, which the reference checks above. */
static void long_paths_agree(const simdbpe_model *m, size_t len, uint64_t seed)
{
    uint8_t *w = malloc(len);
    uint32_t *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
    cr_assert(w && a && b);
    simdbpe__bpe_scratch scratch = {0};
    rng_seed(seed);
    for (unsigned kind = 0; kind < LONG_KINDS; kind++) {
        long_word(w, len, kind);
        size_t na = 0, nb = 0;
        cr_assert_eq(simdbpe__bpe_word_queued(m, &scratch, w, len, a, &na), SIMDBPE_OK);
        cr_assert_eq(simdbpe__bpe_word_backtrack(m, &scratch, w, len, b, &nb), SIMDBPE_OK,
                     "the backtracking search did not take a %s word", long_kind_name[kind]);
        char msg[160];
        if (tu_ids_differ(b, nb, a, na, msg, sizeof msg))
            cr_assert_fail("%s word of %zu bytes: %s", long_kind_name[kind], len, msg);
        /* And through the dispatch, which takes the search at this length. */
        nb = 0;
        cr_assert_eq(simdbpe__bpe_word(m, &scratch, w, len, b, &nb), SIMDBPE_OK);
        cr_assert(!tu_ids_differ(b, nb, a, na, msg, sizeof msg), "%s", msg);
    }
    simdbpe__bpe_scratch_free(&scratch);
    free(w);
    free(a);
    free(b);
}

Test(bpe_gpt2, megabyte_words_both_paths_agree)
{
    long_paths_agree(gpt2.m, 1u << 20, 12);
}

/*
 * Words encoded again and again: the encoder keeps a word's ids in its
 * piece table (up to 16 bytes: up to four ids inline, more in its id
 * arena, or none where they are its bytes'), in the model's table while
 * it has added few (they go to its overflow), in a copy of its own after
 * that, which grows; and longer words in its long map. n_words words of
 * up to 24 bytes, each a few characters of one script, are encoded in 4
 * rounds in a different order each time, through one encoder. kinds[]
 * counts the words of each kind: up to 4 ids; 5-11 ids and up to 16
 * bytes; 12-16 ids and up to 16 bytes; over 16 bytes.
 */
static void encode_words_again(size_t n_words, unsigned seed, size_t kinds[4])
{
    enum { ROUNDS = 4, MAX_WORD = 32 };
    uint8_t(*words)[MAX_WORD] = malloc(n_words * sizeof *words);
    size_t *lens = malloc(n_words * sizeof *lens);
    cr_assert(words && lens);
    rng_seed(seed);
    for (size_t t = 0; t < n_words; t++) {
        uint8_t *w = words[t];
        size_t len = 0;
        if (rng_below(2))
            w[len++] = ' ';
        int kind = (int)rng_below(4);
        size_t k = 1 + rng_below(8);
        for (size_t i = 0; i < k; i++) {
            if (kind == 0) { /* Cyrillic */
                uint32_t cp = 0x430 + rng_below(32);
                w[len++] = (uint8_t)(0xC0 | cp >> 6);
                w[len++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (kind == 1) { /* Greek */
                uint32_t cp = 0x3B1 + rng_below(25);
                w[len++] = (uint8_t)(0xC0 | cp >> 6);
                w[len++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else if (kind == 2) { /* Devanagari */
                uint32_t cp = 0x915 + rng_below(37);
                w[len++] = (uint8_t)(0xE0 | cp >> 12);
                w[len++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                w[len++] = (uint8_t)(0x80 | (cp & 0x3F));
            } else { /* Latin letters */
                w[len++] = (uint8_t)('a' + rng_below(26));
            }
        }
        lens[t] = len;
        long n = ref_encode(&gpt2.ref, w, len, gpt2.want);
        cr_assert_geq(n, 1);
        kinds[len > 16 ? 3 : n >= 12 ? 2 : n >= 5 ? 1 : 0]++;
    }
    static const size_t step[ROUNDS] = {1, 7, 11, 13}; /* prime to n_words: a permutation */
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t t = 0; t < n_words; t++) {
            size_t i = (t * step[round]) % n_words;
            check_word(&gpt2, words[i], lens[i], "repeated");
        }
    }
    free(words);
    free(lens);
}

/* A hash of the bytes of the model's piece table, to see that encoders
 * never write to it. */
static uint64_t model_table_hash(const simdbpe_model *m)
{
    const simdbpe__ptab *t = simdbpe__model_ptab(m);
    cr_assert_not_null(t);
    return simdbpe__hash_bytes(t->b, sizeof *t->b << t->bits);
}

/* 600 words: fewer than the overflow takes, so the encoder still reads
 * the table it started with (made before the model's was built: an empty
 * one, the whole tokens coming from the model's whole-token map), and
 * finds them again in its overflow. */
Test(bpe_gpt2, words_encoded_again_from_the_overflow)
{
    uint64_t before = model_table_hash(gpt2.m);
    size_t kinds[4] = {0};
    encode_words_again(600, 5, kinds);
    cr_log_info("words by kind: %zu %zu %zu %zu", kinds[0], kinds[1], kinds[2], kinds[3]);
    cr_assert(kinds[0] > 50 && kinds[1] > 50 && kinds[2] > 10 && kinds[3] > 10,
              "words by kind: %zu %zu %zu %zu", kinds[0], kinds[1], kinds[2], kinds[3]);
    cr_assert_null(gpt2.e->tab_map, "the encoder copied the model's table");
    cr_assert(!gpt2.e->prefilled && gpt2.e->tab.n == 0);
    cr_assert_gt(gpt2.e->ovf.n, 500, "%zu pieces in the overflow", gpt2.e->ovf.n);
    cr_assert_gt(gpt2.e->long_n, 10);
    cr_assert_eq(model_table_hash(gpt2.m), before, "an encoder wrote to the model's table");
}

/* An encoder made once the model's table is built starts from it, and
 * finds the whole tokens there (pass 2, no slow path); an empty table
 * before. */
Test(bpe_gpt2, encoders_start_from_the_models_table_once_built)
{
    simdbpe_encoder *e = NULL;
    cr_assert_eq(simdbpe_encoder_new(gpt2.m, &e, NULL), SIMDBPE_OK);
    cr_assert(!e->prefilled && e->tab.n == 0);
    simdbpe_encoder_free(e);
    const simdbpe__ptab *t = simdbpe__model_ptab(gpt2.m);
    cr_assert_not_null(t);
    cr_assert_gt(t->n, 50000); /* GPT-2's tokens of up to 16 bytes */
    cr_assert_eq(simdbpe_encoder_new(gpt2.m, &e, NULL), SIMDBPE_OK);
    cr_assert(e->prefilled && e->tab.b == t->b && e->tab_map == NULL);
    const uint32_t *ids;
    size_t n;
    cr_assert_eq(simdbpe_encode(e, " hello world", 12, NULL, &ids, &n, NULL), SIMDBPE_OK);
    cr_assert(n == 2 && ids[0] == 23748 && ids[1] == 995); /* tiktoken gpt2's */
    cr_assert_eq(e->ovf.n, 0, "whole tokens went to the overflow");
    simdbpe_encoder_free(e);
}

/* 150,001 words (prime to the steps 7, 11 and 13): far more than the
 * overflow takes, so the encoder moves to a table of its own during the
 * first round (with the overflow's words in it), which grows twice (the
 * model's has 2^16 buckets); every word is found again, and the model's
 * table is as it was. */
Test(bpe_gpt2, words_found_again_after_the_table_grows)
{
    uint64_t before = model_table_hash(gpt2.m);
    unsigned model_bits = simdbpe__model_ptab(gpt2.m)->bits;
    size_t n_model = simdbpe__model_ptab(gpt2.m)->n;
    size_t kinds[4] = {0};
    encode_words_again(150001, 6, kinds);
    cr_log_info("words by kind: %zu %zu %zu %zu", kinds[0], kinds[1], kinds[2], kinds[3]);
    cr_assert(kinds[0] > 60000 && kinds[1] > 35000, "words by kind: %zu %zu %zu %zu", kinds[0],
              kinds[1], kinds[2], kinds[3]);
    cr_assert_not_null(gpt2.e->tab_map);
    cr_assert(gpt2.e->prefilled);
    cr_assert_geq(gpt2.e->tab.bits, model_bits + 2, "the table has 2^%u buckets",
                  gpt2.e->tab.bits);
    /* every short word a piece of its own, besides the model's tokens
     * (a few words are tokens) */
    cr_assert_gt(gpt2.e->tab.n, n_model + 100000, "the table has %zu entries", gpt2.e->tab.n);
    cr_assert_eq(model_table_hash(gpt2.m), before, "an encoder wrote to the model's table");
}

/* The same through an encoder whose budget (simdbpe_encoder_options.
 * cache_mb 1) does not let its table grow past the model's: it fills on
 * to three slots in four (pieces past their home pair found by a walk),
 * and the words it could not keep are encoded from scratch each time. */
Test(bpe_gpt2, words_found_again_with_the_smallest_budget)
{
    simdbpe_encoder_free(gpt2.e);
    gpt2.e = NULL;
    simdbpe_encoder_options o = SIMDBPE_ENCODER_OPTIONS_INIT;
    o.cache_mb = 1;
    cr_assert_eq(simdbpe_encoder_new_with(gpt2.m, &o, &gpt2.e, NULL), SIMDBPE_OK);
    size_t kinds[4] = {0};
    encode_words_again(150001, 7, kinds);
    cr_assert(kinds[0] > 60000 && kinds[1] > 35000, "words by kind: %zu %zu %zu %zu", kinds[0],
              kinds[1], kinds[2], kinds[3]);
    cr_assert_eq(gpt2.e->tab.bits, simdbpe__model_ptab(gpt2.m)->bits);
    cr_assert_eq(gpt2.e->tab_room, 0);
    cr_assert_eq(gpt2.e->tab.n, (size_t)3 << gpt2.e->tab.bits >> 1, "three slots in four");
    cr_assert_leq(gpt2.e->side_used, gpt2.e->side_budget);
}

/* Pieces that are the same bytes but for trailing NUL bytes ("!", "!\0",
 * "!\0\0", ...; runs of NULs; such runs after a space) are told apart by
 * the piece table's keys, which hold no length: encoded in rounds
 * through one encoder, each must still get its own ids. */
Test(bpe_gpt2, pieces_ending_in_nul_bytes_found_again)
{
    static const char lead[] = {'\0', '!', '.', '\x7F'};
    uint8_t w[24];
    for (int round = 0; round < 3; round++) {
        for (size_t l = 0; l < sizeof lead; l++) {
            for (size_t space = 0; space < 2; space++) {
                for (size_t k = 0; k <= 20; k++) {
                    size_t len = 0, nuls = round == 1 ? 20 - k : k; /* another order */
                    if (space)
                        w[len++] = ' ';
                    w[len++] = (uint8_t)lead[l];
                    memset(w + len, 0, nuls);
                    len += nuls;
                    check_word(&gpt2, w, len, "NUL-ending");
                }
            }
        }
    }
    cr_assert_gt(gpt2.compared_encode, 100);
}

/*
 * Long pieces encoded again, in rounds through one encoder, against the
 * reference worked out once per word: 6,000 words of 17-48 letters and
 * 4,000 runs of symbols of 49-1,100 bytes and a few of up to 4,600 (over
 * LONG_KEY: never kept), so the long map grows several times (from 2^10
 * slots) and its arenas with it, and every kept piece is found again.
 */
Test(bpe_gpt2, long_pieces_found_again_in_the_long_map)
{
    enum { N_WORDS = 6000, N_RUNS = 4000, N = N_WORDS + N_RUNS, ROUNDS = 3, MAX = 4600 };
    static const char symbols[] = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~";
    /* a budget that keeps them all */
    simdbpe_encoder_free(gpt2.e);
    simdbpe_encoder_options o = SIMDBPE_ENCODER_OPTIONS_INIT;
    o.cache_mb = 256;
    cr_assert_eq(simdbpe_encoder_new_with(gpt2.m, &o, &gpt2.e, NULL), SIMDBPE_OK);
    uint8_t *text = malloc((size_t)N * MAX);
    size_t *lens = malloc(N * sizeof *lens), *n_want = malloc(N * sizeof *n_want);
    uint32_t **want = malloc(N * sizeof *want);
    cr_assert(text && lens && n_want && want);
    rng_seed(11);
    size_t over_big = 0;
    for (size_t i = 0; i < N; i++) {
        uint8_t *w = text + i * MAX;
        size_t len = 0;
        if (rng_below(2))
            w[len++] = ' ';
        if (i < N_WORDS) {
            for (size_t k = 17 + rng_below(32) - len; k > 0; k--)
                w[len++] = (uint8_t)('a' + rng_below(26));
        } else {
            /* one in a hundred over LONG_KEY (the reference is quadratic) */
            size_t k = i % 100 == 0 ? LONG_KEY + 1 + rng_below(MAX - LONG_KEY - 1)
                                    : 49 + rng_below(1100 - 49);
            for (k -= len; k > 0; k--)
                w[len++] = (uint8_t)symbols[rng_below(sizeof symbols - 1)];
            over_big += len > LONG_KEY;
        }
        cr_assert_eq(simdbpe__pretok_piece_end(w, len, 0), len, "word %zu is not one piece", i);
        lens[i] = len;
        long n = ref_encode(&gpt2.ref, w, len, gpt2.want);
        cr_assert_geq(n, 1);
        n_want[i] = (size_t)n;
        want[i] = malloc((size_t)n * sizeof **want);
        memcpy(want[i], gpt2.want, (size_t)n * sizeof **want);
    }
    cr_assert_eq(over_big, N_RUNS / 100);
    static const size_t step[ROUNDS] = {1, 7, 13}; /* prime to N: a permutation */
    for (int round = 0; round < ROUNDS; round++) {
        /* The first round takes each word twice: found in its long slot,
         * it moves to the big cache when pushed out. */
        for (size_t t = 0; t < (round ? N : 2 * N); t++) {
            size_t i = round ? (t * step[round]) % N : t / 2;
            const uint32_t *ids;
            size_t n;
            simdbpe_error err;
            cr_assert_eq(simdbpe_encode(gpt2.e, (const char *)text + i * MAX, lens[i], NULL, &ids,
                                        &n, &err),
                         SIMDBPE_OK, "%s", err.message);
            char msg[160];
            if (tu_ids_differ(ids, n, want[i], n_want[i], msg, sizeof msg))
                cr_assert_fail("round %d, word %zu (%zu bytes): %s", round, i, lens[i], msg);
        }
    }
    /* every piece but those over LONG_KEY, and parts of over 16 bytes of
     * the runs of symbols (cut where no merge spans, encoded as pieces) */
    cr_assert_geq(gpt2.e->long_n, N - over_big, "the long map has %zu pieces", gpt2.e->long_n);
    cr_assert_geq(gpt2.e->long_bits, 14);
    for (size_t i = 0; i < N; i++)
        free(want[i]);
    free(want);
    free(n_want);
    free(lens);
    free(text);
}

/* -------------------------------------------------------- random models */

typedef struct tok {
    uint8_t b[16];
    size_t len;
} tok;

/* What the textbook loop makes of w[0..len) with the first n_rules of
 * the rules (left and right byte strings, by rank): the number of
 * symbols, their lengths in sym[]. */
static size_t textbook_lengths(const uint8_t *w, size_t len, uint8_t (*rules)[2][16],
                               const size_t (*rlens)[2], size_t n_rules, size_t *sym)
{
    size_t n = len;
    for (size_t i = 0; i < len; i++)
        sym[i] = 1;
    for (;;) {
        size_t at = n, pos = 0;
        for (size_t r = 0; r < n_rules && at == n; r++) {
            pos = 0;
            for (size_t i = 0; i + 1 < n; pos += sym[i], i++)
                if (sym[i] == rlens[r][0] && sym[i + 1] == rlens[r][1] &&
                    memcmp(w + pos, rules[r][0], sym[i]) == 0 &&
                    memcmp(w + pos + sym[i], rules[r][1], sym[i + 1]) == 0) {
                    at = i;
                    break;
                }
        }
        if (at == n)
            return n;
        sym[at] += sym[at + 1];
        memmove(sym + at + 1, sym + at + 2, (n - at - 2) * sizeof *sym);
        n--;
    }
}

/*
 * Builds a random byte-level model: the 256 bytes plus up to `n_merges`
 * merges of random pairs of existing tokens over a small alphabet (so that
 * merges fire often), total length <= 12. A pair whose concatenation already
 * is a token still becomes a rule (several rules can make one token). Ids
 * are a random permutation offset by id_base (3: ids 0..2 unused, as if
 * specials were there), so ids are neither dense from 0 nor 256 + rank.
 * With `reachable`, a pair becomes a rule only if its concatenation is no
 * token yet and the rules before it make exactly the pair of its bytes:
 * every token is then BPE of its own bytes (what the backtracking search
 * needs; a later rule never changes that, its rank being above all).
 */
static void random_model(uint64_t seed, size_t n_merges, const char *alphabet, uint32_t id_base,
                         int reachable, tm_buf *vocab, tm_buf *merges)
{
    rng_seed(seed);
    size_t cap = 256 + n_merges;
    tok *toks = calloc(cap, sizeof *toks);
    size_t n = 0;
    for (unsigned b = 0; b < 256; b++) {
        toks[n].b[0] = (uint8_t)b;
        toks[n++].len = 1;
    }
    /* Candidate parts: the alphabet's bytes first, then made tokens. */
    size_t alen = strlen(alphabet);
    size_t *pool = calloc(cap, sizeof *pool), npool = 0;
    for (size_t i = 0; i < alen; i++)
        pool[npool++] = (uint8_t)alphabet[i];
    tm_add(merges, "#version: 0.2\n", 14);
    uint8_t (*pairs)[2][16] = calloc(n_merges, sizeof *pairs);
    size_t (*plens)[2] = calloc(n_merges, sizeof *plens), made = 0;
    for (size_t tries = 0; made < n_merges && tries < n_merges * 50; tries++) {
        const tok *l = &toks[pool[rng_below((uint32_t)npool)]];
        const tok *r = &toks[pool[rng_below((uint32_t)npool)]];
        if (l->len + r->len > 12)
            continue;
        int dup = 0;
        for (size_t k = 0; k < made && !dup; k++)
            dup = plens[k][0] == l->len && plens[k][1] == r->len &&
                  memcmp(pairs[k][0], l->b, l->len) == 0 && memcmp(pairs[k][1], r->b, r->len) == 0;
        if (dup)
            continue;
        if (reachable) {
            uint8_t w[24];
            size_t sym[24], k = 0;
            memcpy(w, l->b, l->len);
            memcpy(w + l->len, r->b, r->len);
            while (k < n && !(toks[k].len == l->len + r->len &&
                              memcmp(toks[k].b, w, l->len + r->len) == 0))
                k++;
            if (k < n || textbook_lengths(w, l->len + r->len, pairs, plens, made, sym) != 2 ||
                sym[0] != l->len)
                continue;
        }
        memcpy(pairs[made][0], l->b, l->len);
        memcpy(pairs[made][1], r->b, r->len);
        plens[made][0] = l->len;
        plens[made][1] = r->len;
        made++;
        tok t;
        memcpy(t.b, l->b, l->len);
        memcpy(t.b + l->len, r->b, r->len);
        t.len = l->len + r->len;
        size_t k = 0;
        while (k < n && !(toks[k].len == t.len && memcmp(toks[k].b, t.b, t.len) == 0))
            k++;
        if (k == n) {
            toks[n] = t;
            pool[npool++] = n++;
        }
        /* The merges.txt line, spelled in the byte-level alphabet. */
        char ls[64], rs[64];
        tm_spell(ls, l->b, l->len, 0);
        tm_spell(rs, r->b, r->len, 0);
        tm_add(merges, ls, strlen(ls));
        tm_add(merges, " ", 1);
        tm_add(merges, rs, strlen(rs));
        tm_add(merges, "\n", 1);
    }
    /* Shuffled ids. */
    uint32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = (uint32_t)i + id_base;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng_below((uint32_t)(i + 1));
        uint32_t x = ids[i];
        ids[i] = ids[j];
        ids[j] = x;
    }
    tm_add(vocab, "{", 1);
    for (size_t i = 0; i < n; i++) {
        char key[64];
        tm_spell(key, toks[i].b, toks[i].len, 1);
        tm_addf_entry(vocab, key, ids[i]);
    }
    tm_vocab_end(vocab);
    free(ids);
    free(pairs);
    free(plens);
    free(pool);
    free(toks);
}

/* random_model's files (ids from 3), loaded. */
static simdbpe_model *random_model_load(uint64_t seed, size_t n_merges, const char *alphabet,
                                        int reachable, tm_buf *vocab, tm_buf *merges)
{
    random_model(seed, n_merges, alphabet, 3, reachable, vocab, merges);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(tu_load(vocab->s, merges->s, NULL, &m, &err), SIMDBPE_OK, "seed %llu: %s",
                 (unsigned long long)seed, err.message);
    return m;
}

static void random_model_round(uint64_t seed, size_t n_merges, const char *alphabet,
                               int words)
{
    tm_buf vocab = {0}, merges = {0};
    simdbpe_model *m = random_model_load(seed, n_merges, alphabet, 0, &vocab, &merges);
    check_byte_pairs(m);
    fixture f;
    fixture_init(&f, vocab.s, vocab.len, merges.s, merges.len, m);
    size_t alen = strlen(alphabet);
    uint8_t w[700];
    rng_seed(seed * 31 + 7);
    for (int t = 0; t < words; t++) {
        size_t len = 1 + rng_below(t % 10 == 0 ? 600 : 40);
        for (size_t i = 0; i < len; i++)
            w[i] = (uint8_t)alphabet[rng_below((uint32_t)alen)];
        if (rng_below(3) == 0)
            w[0] = ' ';
        check_word(&f, w, len, "random-model");
    }
    /* Every token on its own bytes, whether or not it is reachable. */
    for (uint32_t id = 0; id < simdbpe_model_vocab_size(m); id++) {
        const uint8_t *b;
        size_t len;
        if (simdbpe_model_token_bytes(m, id, &b, &len) == SIMDBPE_OK)
            check_word(&f, b, len, "random-model token");
    }
    cr_assert_gt(f.compared_encode, (size_t)words / 2);
    fixture_free(&f);
    free(vocab.s);
    free(merges.s);
}

Test(bpe_random_model, small_alphabet_many_merges)
{
    for (uint64_t seed = 1; seed <= 6; seed++)
        random_model_round(seed, 300, "abcd", 3000);
}

Test(bpe_random_model, two_letters)
{
    for (uint64_t seed = 10; seed <= 14; seed++)
        random_model_round(seed, 120, "ab", 3000);
}

Test(bpe_random_model, wider_alphabet)
{
    for (uint64_t seed = 20; seed <= 23; seed++)
        random_model_round(seed, 800, "abcdefgh", 3000);
}

/* Random models whose every token is BPE of its own bytes: the
 * backtracking search must take every word, and agree with the reference
 * and the sweeps on words of the alphabet up to 700 bytes. */
static void reachable_model_round(uint64_t seed, size_t n_merges, const char *alphabet)
{
    tm_buf vocab = {0}, merges = {0};
    simdbpe_model *m = random_model_load(seed, n_merges, alphabet, 1, &vocab, &merges);
    cr_assert(simdbpe_model_whole_token_exact(m), "seed %llu: a token is not reachable",
              (unsigned long long)seed);
    cr_assert_gt(simdbpe_model_vocab_size(m), 256 + 3 + n_merges / 3, "too few merges made");
    fixture f;
    fixture_init(&f, vocab.s, vocab.len, merges.s, merges.len, m);
    size_t alen = strlen(alphabet), words = 0;
    uint8_t w[700];
    rng_seed(seed * 131 + 5);
    for (int t = 0; t < 400; t++, words++) {
        size_t len = 2 + rng_below(t % 4 == 0 ? 698 : 60);
        int run = rng_below(4) == 0; /* a run of one byte */
        for (size_t i = 0; i < len; i++)
            w[i] = (uint8_t)alphabet[run ? (size_t)t % alen : rng_below((uint32_t)alen)];
        check_word(&f, w, len, "reachable-model");
    }
    cr_assert_eq(f.compared_backtrack, words, "seed %llu", (unsigned long long)seed);
    fixture_free(&f);
    free(vocab.s);
    free(merges.s);
}

Test(bpe_random_model, reachable_models_through_the_backtracking_search)
{
    for (uint64_t seed = 40; seed <= 45; seed++)
        reachable_model_round(seed, 300, "abcd");
    for (uint64_t seed = 46; seed <= 48; seed++)
        reachable_model_round(seed, 150, "ab");
    for (uint64_t seed = 49; seed <= 50; seed++)
        reachable_model_round(seed, 600, "abcdefgh");
}

/* Compares simdbpe_encode on a text of many pieces, twice through one
 * encoder, with the reference BPE of each pre-token; returns how many of
 * the text's ids are at least `big`. */
static size_t check_text(fixture *f, const uint8_t *s, size_t len, uint32_t big)
{
    size_t nw = 0, n_big = 0;
    for (size_t a = 0; a < len;) {
        size_t b = simdbpe__pretok_piece_end(s, len, a);
        cr_assert(b > a && b - a + nw < f->cap);
        long k = ref_encode(&f->ref, s + a, b - a, f->want + nw);
        cr_assert_geq(k, 1, "reference failed at byte %zu", a);
        nw += (size_t)k;
        a = b;
    }
    for (size_t i = 0; i < nw; i++)
        n_big += f->want[i] >= big;
    for (int round = 0; round < 2; round++) {
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(f->e, (const char *)s, len, NULL, &ids, &n, &err), SIMDBPE_OK,
                     "%s", err.message);
        char msg[160];
        if (tu_ids_differ(ids, n, f->want, nw, msg, sizeof msg))
            cr_assert_fail("round %d, text of %zu bytes: %s", round, len, msg);
    }
    return n_big;
}

/* Ids of 2^16 and more do not fit the hot tables' packed values (nor the
 * warm tables'): pieces with such ids are written from where the general
 * path put them, between pieces that were found in the hot tables. The
 * ids of these models straddle 2^16 (as those of vocabularies larger
 * than GPT-2's do). */
Test(bpe_random_model, ids_too_large_for_a_hot_value)
{
    enum { TEXT = 20000 };
    const uint32_t big = 1u << 16;
    uint8_t *text = malloc(TEXT);
    cr_assert_not_null(text);
    for (uint64_t seed = 30; seed <= 33; seed++) {
        tm_buf vocab = {0}, merges = {0};
        random_model(seed, 300, "abcd", big - 250, 0, &vocab, &merges);
        simdbpe_model *m = NULL;
        simdbpe_error err;
        cr_assert_eq(tu_load(vocab.s, merges.s, NULL, &m, &err), SIMDBPE_OK, "%s", err.message);
        fixture f;
        fixture_init(&f, vocab.s, vocab.len, merges.s, merges.len, m);
        /* Words of 1..40 letters (some over 16 bytes, some of many ids),
         * runs of spaces and of punctuation. */
        rng_seed(seed);
        size_t len = 0;
        while (len < TEXT - 64) {
            size_t k = 1 + rng_below(rng_below(4) == 0 ? 40 : 8);
            unsigned kind = rng_below(8);
            text[len++] = ' ';
            for (size_t i = 0; i < k; i++)
                text[len++] = kind == 0 ? (uint8_t)".,;!"[rng_below(4)]
                              : kind == 1 ? ' '
                                          : (uint8_t)"abcd"[rng_below(4)];
        }
        size_t n_big = check_text(&f, text, len, big);
        cr_assert_gt(n_big, 500, "seed %llu: only %zu ids >= 2^16", (unsigned long long)seed,
                     n_big);
        fixture_free(&f);
        free(vocab.s);
        free(merges.s);
    }
    free(text);
}

/* Pieces of more than six ids that are their bytes' ids (no merge applies
 * anywhere in them) are remembered by a value that says so (HOT_BYTES),
 * found again whole and as parts of cut words. In this model "c a",
 * "ca b", "c b" and "cb a" make a and b joinable both ways (so "abab..."
 * is never cut) while no merge applies to it; nothing joins ' ', x or y,
 * so " abab...x" is cut into " ", "abab..." and "x", and the part is
 * looked up again in the next word. */
Test(bpe_hand_model, pieces_of_byte_ids_whole_and_as_parts)
{
    tm_buf vocab = {0}, merges = {0};
    tm_vocab_begin(&vocab, NULL, -1);
    tm_vocab_token(&vocab, "ca", 256);
    tm_vocab_token(&vocab, "cab", 257);
    tm_vocab_token(&vocab, "cb", 258);
    tm_vocab_token(&vocab, "cba", 259);
    tm_vocab_end(&vocab);
    const char *rules = "#version: 0.2\nc a\nca b\nc b\ncb a\n";
    tm_add(&merges, rules, strlen(rules));
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(tu_load(vocab.s, merges.s, NULL, &m, &err), SIMDBPE_OK, "%s", err.message);
    fixture f;
    fixture_init(&f, vocab.s, vocab.len, merges.s, merges.len, m);
    /* Words of 7..16 letters alone (after '.'), and with ' ' and x, y, or
     * "cab" after them (parts of byte ids next to merged ones). */
    static const char *const tails[] = {"x", "y", "cab", ""};
    char text[8192];
    size_t len = 0;
    for (int round = 0; round < 3; round++)
        for (size_t w = 7; w <= 16; w++)
            for (size_t t = 0; t < 4; t++) {
                text[len++] = t == 3 ? '.' : ' ';
                for (size_t i = 0; i < w; i++)
                    text[len++] = "ab"[i % 2];
                memcpy(text + len, tails[t], strlen(tails[t]));
                len += strlen(tails[t]);
            }
    cr_assert_lt(len, sizeof text);
    check_text(&f, (const uint8_t *)text, len, UINT32_MAX);
    fixture_free(&f);
    free(vocab.s);
    free(merges.s);
}

/* A model where some token is unreachable must say so and must not emit
 * it from the whole-token shortcut; at least one random model here has
 * such a token (checked), and the comparisons above cover the encoding. */
Test(bpe_random_model, unreachable_tokens_are_detected)
{
    size_t inexact = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        tm_buf vocab = {0}, merges = {0};
        random_model(seed, 300, "abcd", 3, 0, &vocab, &merges);
        simdbpe_model *m = NULL;
        simdbpe_error err;
        cr_assert_eq(tu_load(vocab.s, merges.s, NULL, &m, &err), SIMDBPE_OK, "%s", err.message);
        ref_model ref;
        cr_assert_eq(ref_model_load(&ref, vocab.s, vocab.len, merges.s, merges.len), 0);
        int all_reachable = 1;
        for (uint32_t id = 0; id < simdbpe_model_vocab_size(m); id++) {
            const uint8_t *b;
            size_t len;
            uint32_t out[16];
            if (simdbpe_model_token_bytes(m, id, &b, &len) != SIMDBPE_OK)
                continue;
            long n = ref_encode(&ref, b, len, out);
            all_reachable &= n == 1 && out[0] == id;
        }
        cr_assert_eq(simdbpe_model_whole_token_exact(m), all_reachable, "seed %llu",
                     (unsigned long long)seed);
        inexact += !all_reachable;
        ref_model_free(&ref);
        simdbpe_model_free(m);
        free(vocab.s);
        free(merges.s);
    }
    cr_assert_gt(inexact, 0, "no random model had an unreachable token; the test lost its point");
}

/* What the rules tell of each token (reach.c) is what the reference BPE
 * makes of its bytes, and the whole-token map holds exactly the tokens the
 * reference yields from their own bytes. Adds how many tokens were told
 * YES, NO and left to BPE (ASK) to counts[]. */
static void check_reach(const simdbpe_model *m, const ref_model *ref, size_t counts[3],
                        const char *what)
{
    uint32_t n_ids = simdbpe_model_vocab_size(m);
    uint8_t *reach = malloc(n_ids);
    uint32_t *out = malloc(4096 * sizeof *out);
    cr_assert(reach && out);
    cr_assert_eq(simdbpe__reach(m, reach), SIMDBPE_OK);
    for (uint32_t id = 0; id < n_ids; id++) {
        const uint8_t *b;
        size_t len;
        if (simdbpe_model_token_bytes(m, id, &b, &len) != SIMDBPE_OK || len == 0)
            continue;
        cr_assert_lt(len, 4096);
        long n = ref_encode(ref, b, len, out);
        int yes = n == 1 && out[0] == id;
        cr_assert_leq(reach[id], SIMDBPE__REACH_ASK);
        if (reach[id] != SIMDBPE__REACH_ASK)
            cr_assert_eq(reach[id] == SIMDBPE__REACH_YES, yes, "%s: token %u (%zu bytes)", what,
                         id, len);
        counts[reach[id]]++;
        uint64_t lo, hi;
        simdbpe__short_words(b, len < 16 ? len : 16, &lo, &hi);
        uint32_t found = simdbpe__whole_find(m, b, len, simdbpe__piece_hash(b, len), lo, hi);
        cr_assert_eq(found == id, yes, "%s: token %u %s the whole-token map", what, id,
                     yes ? "missing from" : "wrongly in");
    }
    free(reach);
    free(out);
}

Test(bpe_gpt2, rules_tell_what_bpe_makes_of_every_token)
{
    size_t counts[3] = {0};
    check_reach(gpt2.m, &gpt2.ref, counts, "GPT-2");
    cr_log_info("GPT-2: %zu yes, %zu no, %zu ask", counts[1], counts[0], counts[2]);
    /* GPT-2's rules are in creation order: they tell nearly every token. */
    cr_assert_gt(counts[SIMDBPE__REACH_YES], 50000);
    cr_assert_lt(counts[SIMDBPE__REACH_ASK], 500, "%zu tokens left to BPE",
                 counts[SIMDBPE__REACH_ASK]);
}

/* Reorders the rule lines of a merges.txt (after its "#version" line) at
 * random, so that rules may use tokens that only later rules make. */
static void shuffle_rules(tm_buf *merges, uint64_t seed)
{
    char *body = strchr(merges->s, '\n') + 1;
    size_t n = 0, cap = 16;
    char **lines = malloc(cap * sizeof *lines);
    for (char *p = strtok(body, "\n"); p; p = strtok(NULL, "\n")) {
        if (n == cap)
            lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = strdup(p);
    }
    rng_seed(seed);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng_below((uint32_t)(i + 1));
        char *x = lines[i];
        lines[i] = lines[j];
        lines[j] = x;
    }
    merges->len = (size_t)(body - merges->s);
    for (size_t i = 0; i < n; i++) {
        tm_add(merges, lines[i], strlen(lines[i]));
        tm_add(merges, "\n", 1);
        free(lines[i]);
    }
    free(lines);
}

/* Random models: in creation order, where the rules tell most tokens
 * (yes and no; some tokens are made by several rules and left to BPE), and
 * shuffled out of it, where every made token is left to BPE. Each kind is
 * checked to have happened. */
Test(bpe_random_model, rules_tell_what_bpe_makes_of_every_token)
{
    size_t ordered[3] = {0}, shuffled[3] = {0};
    static const char *const alphabets[] = {"abcd", "ab", "abcdefgh", "a"};
    for (uint64_t seed = 1; seed <= 24; seed++) {
        for (int shuffle = 0; shuffle < 2; shuffle++) {
            tm_buf vocab = {0}, merges = {0};
            random_model(seed, 100 + 40 * (seed % 8), alphabets[seed % 4], 3, 0, &vocab,
                         &merges);
            if (shuffle)
                shuffle_rules(&merges, seed);
            simdbpe_model *m = NULL;
            simdbpe_error err;
            cr_assert_eq(tu_load(vocab.s, merges.s, NULL, &m, &err), SIMDBPE_OK, "%s",
                         err.message);
            ref_model ref;
            cr_assert_eq(ref_model_load(&ref, vocab.s, vocab.len, merges.s, merges.len), 0);
            char what[64];
            snprintf(what, sizeof what, "seed %llu%s", (unsigned long long)seed,
                     shuffle ? ", shuffled" : "");
            check_reach(m, &ref, shuffle ? shuffled : ordered, what);
            ref_model_free(&ref);
            simdbpe_model_free(m);
            free(vocab.s);
            free(merges.s);
        }
    }
    cr_log_info("ordered: %zu yes, %zu no, %zu ask; shuffled: %zu yes, %zu no, %zu ask",
                ordered[1], ordered[0], ordered[2], shuffled[1], shuffled[0], shuffled[2]);
    /* Past the 24 * 256 single bytes. */
    cr_assert_gt(ordered[SIMDBPE__REACH_YES], 24 * 256 + 400);
    cr_assert_gt(ordered[SIMDBPE__REACH_NO], 100);
    cr_assert_gt(ordered[SIMDBPE__REACH_ASK], 10);
    cr_assert_gt(shuffled[SIMDBPE__REACH_ASK], 3000);
}

/* A duplicated rule keeps its last rank (HF collects merges into a map). */
Test(bpe_rules, duplicate_rule_keeps_the_last_rank)
{
    tm_buf vocab = {0}, merges = {0};
    tm_vocab_begin(&vocab, NULL, -1);
    tm_vocab_token(&vocab, "ab", 256);
    tm_vocab_token(&vocab, "bc", 257);
    tm_vocab_end(&vocab);
    /* ranks: a b = 0, b c = 1, a b = 2 (the last one wins: b c goes first) */
    tm_merge(&merges, "a", "b");
    tm_merge(&merges, "b", "c");
    tm_merge(&merges, "a", "b");
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(tu_load(vocab.s, merges.s, NULL, &m, &err), SIMDBPE_OK, "%s", err.message);
    check_byte_pairs(m);
    fixture f;
    fixture_init(&f, vocab.s, vocab.len, merges.s, merges.len, m);
    uint32_t want[] = {'a', 257};
    tu_expect_ids(f.e, "abc", 3, NULL, want, 2, "duplicate rule");
    check_word(&f, (const uint8_t *)"abc", 3, "duplicate rule");
    fixture_free(&f);
    free(vocab.s);
    free(merges.s);
}

/* A 1 MB pre-token must encode (O(n log n), bounded memory) and decode back
 * to itself; the reference is too slow for this size, so the ids are
 * checked against a 4 KB prefix pattern: a run of one letter encodes
 * periodically. */
Test(bpe_gpt2, one_megabyte_piece)
{
    size_t len = 1 << 20;
    char *text = malloc(len);
    memset(text, 'a', len);
    size_t n;
    const uint32_t *ids = tu_encode(gpt2.e, text, len, NULL, &n);
    uint8_t *back = malloc(len + 64);
    size_t blen;
    simdbpe_error err;
    cr_assert_eq(simdbpe_decode(gpt2.m, ids, n, back, len + 64, &blen, &err), SIMDBPE_OK);
    cr_assert(blen == len && memcmp(back, text, len) == 0, "1 MB of 'a' does not round-trip");
    /* The reference on a prefix whose length is a multiple of the period
     * gives the same ids as the start of the long run. */
    long nw = ref_encode(&gpt2.ref, (const uint8_t *)text, 4096, gpt2.want);
    cr_assert_gt(nw, 0);
    size_t covered = 0, k = 0;
    while (k < (size_t)nw && covered < 2048) {
        cr_assert_eq(ids[k], gpt2.want[k], "1 MB run differs at id %zu", k);
        const uint8_t *b;
        size_t bl;
        simdbpe_model_token_bytes(gpt2.m, ids[k], &b, &bl);
        covered += bl;
        k++;
    }
    free(back);
    free(text);
}

/* ------------------------------------------------------------- o200k_base */

/*
 * o200k_base (ids of 18 bits) against tiktoken's own definition, written
 * here from its .tiktoken file (base64 token, rank; the rank is the id):
 * the word's bytes as parts; repeatedly join the two adjacent parts whose
 * concatenation has the lowest rank (the leftmost among equal ones) until
 * no concatenation is a token. Quadratic, like ref_bpe.h.
 */
static long b64_decode(const char *s, size_t n, uint8_t *out)
{
    long len = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        const char *alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *at = strchr(alpha, s[i]);
        if (!at || !s[i])
            return -1;
        acc = acc << 6 | (uint32_t)(at - alpha);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (uint8_t)(acc >> bits);
        }
    }
    return len;
}

static ref_table o200k_ranks;
static simdbpe_model *o200k;

static void o200k_setup(void)
{
    size_t len;
    char *data = tu_read(SIMDBPE_SOURCE_DIR "/src/model/tiktoken/o200k_base.tiktoken", &len);
    ref_table_init(&o200k_ranks, 200000);
    size_t lines = 0;
    for (char *line = data; line < data + len;) {
        char *nl = memchr(line, '\n', (size_t)(data + len - line));
        char *end = nl ? nl : data + len, *sp = memchr(line, ' ', (size_t)(end - line));
        cr_assert_not_null(sp);
        uint8_t bytes[512];
        long n = b64_decode(line, (size_t)(sp - line), bytes);
        cr_assert_gt(n, 0);
        ref_put(&o200k_ranks, bytes, (size_t)n, (uint32_t)strtoul(sp + 1, NULL, 10));
        lines++;
        line = end + 1;
    }
    cr_assert_gt(lines, 199000);
    free(data);
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open("o200k_base", &o200k, &err), SIMDBPE_OK, "%s", err.message);
}

static void o200k_teardown(void)
{
    ref_table_free(&o200k_ranks);
    simdbpe_model_free(o200k);
}

static long tiktoken_encode(const uint8_t *w, size_t n, uint32_t *out)
{
    size_t *at = malloc((n + 1) * sizeof *at), k = n; /* parts: [at[i], at[i+1]) */
    for (size_t i = 0; i <= n; i++)
        at[i] = i;
    for (;;) {
        uint32_t best = UINT32_MAX, r;
        size_t where = 0;
        for (size_t i = 0; i + 1 < k; i++)
            if (ref_get(&o200k_ranks, w + at[i], at[i + 2] - at[i], &r) && r < best) {
                best = r;
                where = i;
            }
        if (best == UINT32_MAX)
            break;
        memmove(at + where + 1, at + where + 2, (k - where - 1) * sizeof *at);
        k--;
    }
    long ok = (long)k;
    for (size_t i = 0; i < k && ok > 0; i++)
        if (!ref_get(&o200k_ranks, w + at[i], at[i + 1] - at[i], &out[i]))
            ok = -1;
    free(at);
    return ok;
}

TestSuite(bpe_o200k, .init = o200k_setup, .fini = o200k_teardown);

/* Words of every kind, short and long, through the dispatch and both
 * long-word paths; the backtracking search must take every one. */
Test(bpe_o200k, words_match_tiktoken_through_both_paths)
{
    enum { MAX = 1200 };
    uint8_t *w = malloc(MAX);
    uint32_t *want = malloc(MAX * sizeof *want), *got = malloc(MAX * sizeof *got);
    cr_assert(w && want && got);
    simdbpe__bpe_scratch scratch = {0};
    size_t compared = 0, words = 0;
    rng_seed(21);
    for (unsigned t = 0; t < 24 * LONG_KINDS; t++) {
        size_t len = t % 3 ? 2 + rng_below(200) : 256 + rng_below(MAX - 256);
        long_word(w, len, t % LONG_KINDS);
        long nw = tiktoken_encode(w, len, want);
        cr_assert_gt(nw, 0);
        size_t ng = 0;
        char msg[160], shown[120];
        cr_assert_eq(simdbpe__bpe_word(o200k, &scratch, w, len, got, &ng), SIMDBPE_OK);
        if (tu_ids_differ(got, ng, want, (size_t)nw, msg, sizeof msg)) {
            tu_show(shown, sizeof shown, (const char *)w, len);
            cr_assert_fail("bpe_word, %s word \"%s\" (%zu bytes): %s",
                           long_kind_name[t % LONG_KINDS], shown, len, msg);
        }
        check_long_paths(o200k, &scratch, w, len, want, (size_t)nw, got, &compared,
                         long_kind_name[t % LONG_KINDS]);
        words++;
    }
    cr_assert_eq(compared, words);
    simdbpe__bpe_scratch_free(&scratch);
    free(w);
    free(want);
    free(got);
}

/* Every token of the vocabulary, and two random tokens side by side: the
 * backtracking search's compatibility test on pairs it meets rarely. */
Test(bpe_o200k, token_pairs_match_tiktoken)
{
    uint32_t want[512], got[512];
    uint8_t w[512];
    simdbpe__bpe_scratch scratch = {0};
    size_t compared = 0, pairs = 0;
    rng_seed(22);
    for (int t = 0; t < 30000; t++) {
        size_t len = 0;
        for (int part = 0; part < 2; part++) {
            const uint8_t *b;
            size_t l;
            uint32_t id = rng_below(199998);
            if (simdbpe_model_token_bytes(o200k, id, &b, &l) != SIMDBPE_OK || l > 200)
                continue;
            memcpy(w + len, b, l);
            len += l;
        }
        if (len < 2)
            continue;
        long nw = tiktoken_encode(w, len, want);
        cr_assert_gt(nw, 0);
        check_long_paths(o200k, &scratch, w, len, want, (size_t)nw, got, &compared, "pair");
        pairs++;
    }
    cr_assert_eq(compared, pairs);
    simdbpe__bpe_scratch_free(&scratch);
}

/* Runs of a short pattern (where the search once tried 15 tokens a byte
 * under p50k) at a few lengths, for every embedded model: the search
 * against the sweeps. */
Test(bpe_o200k, periodic_words_both_paths_agree_in_every_embedded_model)
{
    static const char *const models[] = {"gpt2", "p50k_base", "cl100k_base", "o200k_base"};
    static const char *const patterns[] = {" ", "ab", "abc", "-=", " a", "0 ", "==",
                                           "aab", "1234567", "ab ab", "....", "\xF0\x9F\x98\x80 ",
                                           "\xE4\xB8\xAD", "\n", "00 ", "'s"};
    enum { LEN = 70000 };
    uint8_t *w = malloc(LEN);
    uint32_t *a = malloc(LEN * sizeof *a), *b = malloc(LEN * sizeof *b);
    cr_assert(w && a && b);
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        simdbpe_model *m;
        simdbpe_error err;
        cr_assert_eq(simdbpe_model_open(models[mi], &m, &err), SIMDBPE_OK, "%s", err.message);
        simdbpe__bpe_scratch scratch = {0};
        for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; pi++) {
            size_t pl = strlen(patterns[pi]);
            for (size_t len = LEN - 5; len <= LEN; len++) {
                for (size_t i = 0; i < len; i++)
                    w[i] = (uint8_t)patterns[pi][i % pl];
                size_t na = 0, nb = 0;
                cr_assert_eq(simdbpe__bpe_word_queued(m, &scratch, w, len, a, &na), SIMDBPE_OK);
                cr_assert_eq(simdbpe__bpe_word_backtrack(m, &scratch, w, len, b, &nb), SIMDBPE_OK,
                             "%s: the search did not take the run of '%s'", models[mi],
                             patterns[pi]);
                char msg[160];
                if (tu_ids_differ(b, nb, a, na, msg, sizeof msg))
                    cr_assert_fail("%s, run of '%s', %zu bytes: %s", models[mi], patterns[pi], len,
                                   msg);
            }
        }
        simdbpe__bpe_scratch_free(&scratch);
        simdbpe_model_free(m);
    }
    free(w);
    free(a);
    free(b);
}

Test(bpe_o200k, megabyte_words_both_paths_agree)
{
    long_paths_agree(o200k, 1u << 20, 23);
}
