/*
 * fuzz_train.c - property: on any tiny corpus the trainer makes exactly
 * the merges (pair, id, count) of a textbook trainer.
 *
 * The reference (train_ref.c, obviously correct, slow) is the textbook
 * trainer on the text with Python-style U+FFFD replacement of invalid
 * UTF-8 (fuzz.h): every step recounts every pair of every word.
 *
 * Input: byte 0 = merges wanted (0..63), byte 1 = options (bit 0
 * documents mode, bit 1 two threads), byte 2 = where to cut the stream in
 * two feed() calls (anywhere, even inside a character), rest = corpus.
 */
#include "fuzz.h"

#include "simdbpe_train.h"
#include "train_ref.h"

/* The pools of 1 and 2 workers the trainers count on, made once for the
 * process: a trainer that starts its own pool starts and joins a thread
 * per input, which under ASan cost more than a tiny corpus (and its
 * thread's allocations, freed after the input ended, made libFuzzer run
 * a full leak scan for it). A trainer's own pool is covered by
 * tests/train/test_train.c. */
static simdbpe_pool *shared_pool(unsigned threads)
{
    static simdbpe_pool *pools[2];
    simdbpe_error err;
    if (!pools[threads - 1])
        FUZZ_CHECK(simdbpe_pool_new(threads, &pools[threads - 1], &err) == SIMDBPE_OK,
                   "pool_new: %s", err.message);
    return pools[threads - 1];
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
    o.pool = shared_pool(threads);
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

    size_t text_len;
    uint8_t *text = fuzz_utf8_replace(corpus, len, &text_len);
    train_ref_merge *want;
    size_t n = train_ref(text, text_len, documents, o.vocab_size, &want);
    free(text);
    for (size_t i = 0; i < n; i++) {
        uint32_t gl, gr, gid;
        uint64_t gc;
        const train_ref_merge *w = &want[i];
        FUZZ_CHECK(simdbpe_trainer_merge_at(t, i, &gl, &gr, &gid, &gc) == SIMDBPE_OK,
                   "the trainer has %zu merges, the reference more", i);
        FUZZ_CHECK(gl == w->left && gr == w->right && gid == w->id && gc == w->count,
                   "merge %zu: trainer (%u, %u) -> %u count %llu, reference (%u, %u) -> %u count "
                   "%llu",
                   i, gl, gr, gid, (unsigned long long)gc, w->left, w->right, w->id,
                   (unsigned long long)w->count);
    }
    FUZZ_CHECK(simdbpe_trainer_merge_count(t) == n, "the trainer has %zu merges, the reference %zu",
               simdbpe_trainer_merge_count(t), n);
    free(want);
    simdbpe_trainer_free(t);
    return 0;
}
