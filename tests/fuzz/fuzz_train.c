/*
 * fuzz_train.c - property: on any tiny corpus the trainer makes exactly
 * the merges of the textbook trainer written here.
 *
 * The reference (obviously correct, slow): the text (with Python-style
 * U+FFFD replacement of invalid UTF-8, from fuzz.h) is cut into sequences
 * (lines with their '\n', or the whole stream as one document), each
 * pre-tokenized by the library's GPT-2 scanner (tested against HF and
 * tiktoken elsewhere); unique words are counted; then at every step every
 * adjacent pair of every word is counted (overlapping pairs count), the
 * pair with the highest count wins (ties: smallest (left id, right id)),
 * its token is named (reusing the id of an existing token with the same
 * bytes), and every word is rewritten left to right. Ids: 0-255 the bytes
 * in GPT-2 order, then new tokens in order. It stops at vocab_size or
 * when no pair is left.
 *
 * Input: byte 0 = merges wanted (0..63), byte 1 = options (bit 0
 * documents mode, bit 1 two threads), byte 2 = where to cut the stream in
 * two feed() calls (anywhere, even inside a character), rest = corpus.
 */
#include "fuzz.h"

#include "pretok/pretok.h"
#include "simdbpe_train.h"

#define MAX_TOK 4096

typedef struct ref {
    uint8_t *tok[MAX_TOK]; /* bytes of each id */
    size_t tok_len[MAX_TOK];
    uint32_t n_tok;
    uint32_t **word;  /* unique words as ids */
    size_t *word_len;
    uint64_t *count;
    size_t n_words, cap;
    size_t *slot; /* word index + 1 by a hash of its bytes; 0 = empty */
    size_t mask;
} ref;

/* GPT-2's id of byte b: the rank of the code point that spells it. */
static uint32_t byte_id(uint8_t b)
{
    static uint32_t id[256];
    static int ready;
    if (!ready) {
        uint32_t next = 0;
        for (uint32_t cp = 0; cp < 0x144; cp++) {
            int self = (cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) ||
                       (cp >= 0xAE && cp <= 0xFF);
            if (cp < 0x100 && !self)
                continue;
            uint32_t byte = cp;
            if (cp >= 0x100) { /* the (cp - 0x100)-th byte that does not print as itself */
                uint32_t n = cp - 0x100;
                for (byte = 0; byte < 256; byte++) {
                    int s = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                            byte >= 0xAE;
                    if (!s && n-- == 0)
                        break;
                }
            }
            id[byte] = next++;
        }
        ready = 1;
    }
    return id[b];
}

static void add_word(ref *r, const uint8_t *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    size_t at = h & r->mask;
    for (; r->slot[at]; at = (at + 1) & r->mask) {
        size_t w = r->slot[at] - 1;
        if (r->word_len[w] != len)
            continue;
        size_t i = 0;
        while (i < len && r->word[w][i] == byte_id(s[i]))
            i++;
        if (i == len) {
            r->count[w]++;
            return;
        }
    }
    r->slot[at] = r->n_words + 1;
    size_t n = r->n_words++;
    if (n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->word = realloc(r->word, r->cap * sizeof *r->word);
        r->word_len = realloc(r->word_len, r->cap * sizeof *r->word_len);
        r->count = realloc(r->count, r->cap * sizeof *r->count);
        FUZZ_CHECK(r->word && r->word_len && r->count, "out of memory");
    }
    r->word[n] = malloc(len * sizeof **r->word);
    FUZZ_CHECK(r->word[n] != NULL, "out of memory");
    for (size_t i = 0; i < len; i++)
        r->word[n][i] = byte_id(s[i]);
    r->word_len[n] = len;
    r->count[n] = 1;
}

static void add_sequence(ref *r, const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = simdbpe__pretok_piece_end(s, len, i);
        add_word(r, s + i, j - i);
        i = j;
    }
}

typedef struct pair_count {
    uint32_t a, b;
    uint64_t count;
} pair_count;

static int by_pair(const void *x, const void *y)
{
    const pair_count *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* The best pair now, or 0 if none: every adjacent pair of every word is
 * listed with the word's count, the list sorted by (left, right), and
 * each run of equal pairs summed; the first largest sum in that order is
 * the one with the smallest (left, right) among ties. */
static int best_pair(const ref *r, pair_count *list, uint32_t *left, uint32_t *right,
                     uint64_t *best)
{
    size_t n = 0;
    for (size_t w = 0; w < r->n_words; w++)
        for (size_t i = 0; i + 1 < r->word_len[w]; i++)
            list[n++] = (pair_count){r->word[w][i], r->word[w][i + 1], r->count[w]};
    qsort(list, n, sizeof *list, by_pair);
    *best = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint64_t c = 0;
        while (j < n && list[j].a == list[i].a && list[j].b == list[i].b)
            c += list[j++].count;
        if (c > *best) {
            *best = c;
            *left = list[i].a;
            *right = list[i].b;
        }
        i = j;
    }
    return *best > 0;
}

static uint32_t name_token(ref *r, uint32_t a, uint32_t b)
{
    size_t len = r->tok_len[a] + r->tok_len[b];
    uint8_t *t = malloc(len);
    FUZZ_CHECK(t != NULL, "out of memory");
    memcpy(t, r->tok[a], r->tok_len[a]);
    memcpy(t + r->tok_len[a], r->tok[b], r->tok_len[b]);
    for (uint32_t id = 0; id < r->n_tok; id++)
        if (r->tok_len[id] == len && memcmp(r->tok[id], t, len) == 0) {
            free(t);
            return id;
        }
    FUZZ_CHECK(r->n_tok < MAX_TOK, "too many tokens");
    r->tok[r->n_tok] = t;
    r->tok_len[r->n_tok] = len;
    return r->n_tok++;
}

static void apply(ref *r, uint32_t a, uint32_t b, uint32_t id)
{
    for (size_t w = 0; w < r->n_words; w++) {
        size_t o = 0;
        for (size_t i = 0; i < r->word_len[w]; i++) {
            if (i + 1 < r->word_len[w] && r->word[w][i] == a && r->word[w][i + 1] == b) {
                r->word[w][o++] = id;
                i++;
            } else {
                r->word[w][o++] = r->word[w][i];
            }
        }
        r->word_len[w] = o;
    }
}

static void ref_free(ref *r)
{
    for (uint32_t i = 0; i < r->n_tok; i++)
        free(r->tok[i]);
    for (size_t w = 0; w < r->n_words; w++)
        free(r->word[w]);
    free(r->word);
    free(r->word_len);
    free(r->count);
    free(r->slot);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 4096)
        return 0;
    uint32_t merges = data[0] % 64;
    int documents = data[1] & 1;
    unsigned threads = (data[1] & 2) ? 2 : 1;
    const uint8_t *corpus = data + 3;
    size_t len = size - 3, cut = len ? data[2] % (len + 1) : 0;

    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 256 + merges;
    o.mode = documents ? SIMDBPE_TRAIN_DOCUMENTS : SIMDBPE_TRAIN_LINES;
    o.threads = threads;
    o.errors = SIMDBPE_UTF8_REPLACE;
    simdbpe_trainer *t;
    simdbpe_error err;
    FUZZ_CHECK(simdbpe_trainer_new(&o, &t, &err) == SIMDBPE_OK, "trainer_new: %s", err.message);
    /* Each feed gets its own exact-size copy, so over-reads are caught. */
    uint8_t *a = malloc(cut ? cut : 1), *b = malloc(len - cut ? len - cut : 1);
    FUZZ_CHECK(a && b, "out of memory");
    memcpy(a, corpus, cut);
    memcpy(b, corpus + cut, len - cut);
    FUZZ_CHECK(simdbpe_trainer_feed(t, a, cut, &err) == SIMDBPE_OK, "feed: %s", err.message);
    FUZZ_CHECK(simdbpe_trainer_feed(t, b, len - cut, &err) == SIMDBPE_OK, "feed: %s", err.message);
    free(a);
    free(b);
    simdbpe_status st = simdbpe_trainer_train(t, &err);
    if (len == 0) {
        FUZZ_CHECK(st == SIMDBPE_ERR_INVALID_ARG, "empty corpus gave %s", simdbpe_status_name(st));
        simdbpe_trainer_free(t);
        return 0;
    }
    FUZZ_CHECK(st == SIMDBPE_OK, "train: %s", err.message);

    ref r = {0};
    for (uint32_t id = 0; id < 256; id++) {
        r.tok[id] = malloc(1);
        r.tok_len[id] = 1;
    }
    for (unsigned by = 0; by < 256; by++)
        r.tok[byte_id((uint8_t)by)][0] = (uint8_t)by;
    r.n_tok = 256;
    size_t text_len;
    uint8_t *text = fuzz_utf8_replace(corpus, len, &text_len);
    /* At most one word per byte: a table at most half full. */
    for (r.mask = 15; r.mask < 2 * text_len; r.mask = 2 * r.mask + 1)
        ;
    r.slot = calloc(r.mask + 1, sizeof *r.slot);
    FUZZ_CHECK(r.slot != NULL, "out of memory");
    for (size_t i = 0; i < text_len;) {
        size_t j = i;
        if (documents)
            j = text_len;
        else {
            while (j < text_len && text[j] != '\n')
                j++;
            j = j < text_len ? j + 1 : j;
        }
        add_sequence(&r, text + i, j - i);
        i = j;
    }
    free(text);
    size_t n = 0, n_pairs = 0;
    for (size_t w = 0; w < r.n_words; w++)
        n_pairs += r.word_len[w];
    pair_count *list = malloc((n_pairs ? n_pairs : 1) * sizeof *list);
    FUZZ_CHECK(list != NULL, "out of memory");
    uint32_t left = 0, right = 0;
    uint64_t best;
    while (r.n_tok < o.vocab_size && best_pair(&r, list, &left, &right, &best)) {
        uint32_t id = name_token(&r, left, right);
        apply(&r, left, right, id);
        uint32_t gl, gr, gid;
        uint64_t gc;
        FUZZ_CHECK(simdbpe_trainer_merge_at(t, n, &gl, &gr, &gid, &gc) == SIMDBPE_OK,
                   "the trainer has %zu merges, the reference more", n);
        FUZZ_CHECK(gl == left && gr == right && gid == id && gc == best,
                   "merge %zu: trainer (%u, %u) -> %u count %llu, reference (%u, %u) -> %u count "
                   "%llu",
                   n, gl, gr, gid, (unsigned long long)gc, left, right, id,
                   (unsigned long long)best);
        n++;
    }
    FUZZ_CHECK(simdbpe_trainer_merge_count(t) == n, "the trainer has %zu merges, the reference %zu",
               simdbpe_trainer_merge_count(t), n);
    free(list);
    ref_free(&r);
    simdbpe_trainer_free(t);
    return 0;
}
