/*
 * test_train.c - the trainer against its references and its own promises.
 *
 *   golden     vocab.json and merges.txt byte for byte equal to HF tokenizers'
 *              BpeTrainer (tests/data/train/golden, made by gen_golden.mjs),
 *              whatever the thread count and however the input is chunked
 *   prefix     the first k merges of a long run are a run with a smaller
 *              vocabulary; min_frequency stops at the first rarer pair
 *   documents  separators cut documents exactly like separate streams; the
 *              result does not depend on threads or chunking
 *   errors     invalid UTF-8 (offset and line, also across batches), replace
 *              mode, empty corpus, vocabulary too small, bad specials
 *   roundtrip  a trained model saved, loaded with simdbpe_model_open() and
 *              used to encode: equal to HF's ids (golden/encode.tsv) and to a
 *              textbook encoder run on the trainer's own merge list
 *   specials   ids, the special_tokens file, a special that is also a token
 *   progress   the callback sees counting, then merging up to the end
 */
#include "test_train.h"

#include <jansson.h>

#include "pretok/pretok.h"

/* ------------------------------------------------------------- golden */

static void check_golden(const char *name, unsigned threads, size_t chunk)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, TT_DIR "/corpus/%s.txt", name);
    char *text = tt_read(path, &len);
    simdbpe_train_options o = tt_hf_options(1000000, threads);
    simdbpe_trainer *t = tt_train(&o, text, len, chunk);
    const char *files[2] = {"vocab.json", "merges.txt"};
    tt_render_fn fns[2] = {simdbpe_trainer_vocab_json, simdbpe_trainer_merges_txt};
    for (int i = 0; i < 2; i++) {
        size_t got_len, want_len;
        char *got = tt_render(t, fns[i], &got_len);
        snprintf(path, sizeof path, TT_DIR "/golden/%s/%s", name, files[i]);
        char *want = tt_read(path, &want_len);
        char what[128];
        snprintf(what, sizeof what, "%s %s (threads %u, chunks of %zu)", name, files[i], threads,
                 chunk);
        tt_assert_same(what, got, got_len, want, want_len);
        free(got);
        free(want);
    }
    simdbpe_trainer_free(t);
    free(text);
}

Test(golden, tinyshakespeare)
{
    check_golden("tinyshakespeare", 2, 1 << 20);
}

Test(golden, taylorswift_any_threads_any_chunks)
{
    static const unsigned threads[] = {1, 2, 3};
    static const size_t chunks[] = {1, 4099, 1 << 20};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            check_golden("taylorswift", threads[i], chunks[j]);
}

/* What tiktoken's GPT-2 file loader (data_gym_to_mergeable_bpe_ranks)
 * asserts: byte tokens ranked as [b for b in range(256) if
 * chr(b).isprintable() and chr(b) != " "] followed by the other bytes in
 * order, then merge i making rank 256 + i; vocab.json must say the same. In
 * Latin-1, Python's isprintable() is false for the C0/C1 controls, U+00A0
 * and U+00AD (and true for ' ', which the loader excludes). */
static int python_printable(unsigned b)
{
    return !(b < 0x20 || (b >= 0x7F && b <= 0xA0) || b == 0xAD);
}

Test(golden, tiktoken_gpt2_loader_layout)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("taylorswift"), &len);
    simdbpe_train_options o = tt_hf_options(3000, 2);
    simdbpe_trainer *t = tt_train(&o, text, len, 1 << 20);
    unsigned rank_to_byte[256], n = 0;
    for (unsigned b = 0; b < 256; b++)
        if (python_printable(b) && b != ' ')
            rank_to_byte[n++] = b;
    for (unsigned b = 0; b < 256; b++)
        if (!(python_printable(b) && b != ' '))
            rank_to_byte[n++] = b;
    for (uint32_t id = 0; id < 256; id++) {
        const uint8_t *b;
        size_t bl;
        cr_assert_eq(simdbpe_trainer_token_bytes(t, id, &b, &bl), SIMDBPE_OK);
        cr_assert(bl == 1 && b[0] == rank_to_byte[id], "byte token %u", id);
    }
    size_t merges = simdbpe_trainer_merge_count(t);
    cr_assert_eq(merges, 3000 - 256 - 1);
    for (size_t i = 0; i < merges; i++) {
        uint32_t l, r, id;
        simdbpe_trainer_merge_at(t, i, &l, &r, &id, NULL);
        cr_assert_eq(id, 256 + i, "merge %zu makes id %u", i, id);
        const uint8_t *lb, *rb, *xb;
        size_t ll, rl, xl;
        simdbpe_trainer_token_bytes(t, l, &lb, &ll);
        simdbpe_trainer_token_bytes(t, r, &rb, &rl);
        simdbpe_trainer_token_bytes(t, id, &xb, &xl);
        cr_assert(xl == ll + rl && !memcmp(xb, lb, ll) && !memcmp(xb + ll, rb, rl));
    }
    simdbpe_trainer_free(t);
    free(text);
}

/* --------------------------------------------------------------- prefix */

Test(prefix, first_merges_equal_a_smaller_run)
{
    size_t len, glen;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    char *golden = tt_read(TT_GOLDEN("tinyshakespeare", "merges.txt"), &glen);
    simdbpe_train_options o = tt_hf_options(2000, 2);
    simdbpe_trainer *t = tt_train(&o, text, len, 1 << 20);
    /* 2000 = 256 bytes + 1743 merged tokens + 1 special */
    cr_assert_eq(simdbpe_trainer_vocab_size(t), 2000);
    cr_assert_eq(simdbpe_trainer_merge_count(t), 1743);
    size_t mlen;
    char *merges = tt_render(t, simdbpe_trainer_merges_txt, &mlen);
    cr_assert(mlen < glen);
    tt_assert_same("the first 1743 merges", merges, mlen, golden, mlen);
    cr_assert_eq(golden[mlen - 1], '\n');
    /* vocab.json: every token has the id it has in the full run. */
    size_t vlen;
    char *vocab = tt_render(t, simdbpe_trainer_vocab_json, &vlen);
    json_error_t je;
    json_t *small = json_loadb(vocab, vlen, 0, &je);
    json_t *full = json_load_file(TT_GOLDEN("tinyshakespeare", "vocab.json"), 0, &je);
    cr_assert(small && full);
    cr_assert_eq(json_object_size(small), 2000);
    const char *key;
    json_t *val;
    json_object_foreach(small, key, val)
    {
        if (strcmp(key, "<|endoftext|>") == 0) {
            cr_assert_eq(json_integer_value(val), 1999);
            continue;
        }
        json_t *f = json_object_get(full, key);
        cr_assert(f != NULL, "token %s is not in the full vocabulary", key);
        cr_assert_eq(json_integer_value(val), json_integer_value(f), "id of %s", key);
    }
    json_decref(small);
    json_decref(full);
    free(vocab);
    free(merges);
    simdbpe_trainer_free(t);
    free(golden);
    free(text);
}

Test(prefix, min_frequency_stops_at_the_first_rarer_pair)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("taylorswift"), &len);
    simdbpe_train_options o = tt_hf_options(1000000, 2);
    simdbpe_trainer *all = tt_train(&o, text, len, 1 << 20);
    o.min_frequency = 7;
    simdbpe_trainer *some = tt_train(&o, text, len, 1 << 20);
    size_t n = simdbpe_trainer_merge_count(some);
    cr_assert(n > 100 && n < simdbpe_trainer_merge_count(all));
    for (size_t i = 0; i <= n; i++) {
        uint32_t l1, r1, id1, l2 = 0, r2 = 0, id2 = 0;
        uint64_t c1, c2 = 0;
        cr_assert_eq(simdbpe_trainer_merge_at(all, i, &l1, &r1, &id1, &c1), SIMDBPE_OK);
        if (i == n) {
            cr_assert_lt(c1, 7, "the run stopped before a pair seen %llu times",
                         (unsigned long long)c1);
            break;
        }
        cr_assert_eq(simdbpe_trainer_merge_at(some, i, &l2, &r2, &id2, &c2), SIMDBPE_OK);
        cr_assert(l1 == l2 && r1 == r2 && id1 == id2 && c1 == c2, "merge %zu differs", i);
        cr_assert_geq(c2, 7);
        /* counts never rise from one merge to the next */
        if (i > 0) {
            uint64_t prev;
            simdbpe_trainer_merge_at(some, i - 1, NULL, NULL, NULL, &prev);
            cr_assert_geq(prev, c2);
        }
    }
    simdbpe_trainer_free(all);
    simdbpe_trainer_free(some);
    free(text);
}

/* ------------------------------------------------------------ documents */

static simdbpe_train_options doc_options(uint32_t vocab, unsigned threads, const char *sep)
{
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = vocab;
    o.threads = threads;
    o.mode = SIMDBPE_TRAIN_DOCUMENTS;
    o.doc_separator = sep;
    o.doc_separator_len = sep ? strlen(sep) : 0;
    return o;
}

static char *merges_of(simdbpe_trainer *t, size_t *len)
{
    char *m = tt_render(t, simdbpe_trainer_merges_txt, len);
    simdbpe_trainer_free(t);
    return m;
}

Test(documents, separator_equals_separate_streams)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    /* One stream cut by "\n\n"... */
    simdbpe_train_options o = doc_options(1500, 3, "\n\n");
    size_t a_len;
    char *a = merges_of(tt_train(&o, text, len, 4099), &a_len);
    /* ...and the same documents fed as streams of their own. */
    o = doc_options(1500, 2, NULL);
    simdbpe_trainer *t;
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    size_t docs = 0;
    for (size_t i = 0; i <= len;) {
        const char *hit = memmem(text + i, len - i, "\n\n", 2);
        size_t end = hit ? (size_t)(hit - text) : len;
        cr_assert_eq(simdbpe_trainer_feed(t, text + i, end - i, &err), SIMDBPE_OK);
        cr_assert_eq(simdbpe_trainer_end_stream(t, &err), SIMDBPE_OK);
        docs++;
        i = end + 2;
    }
    cr_assert_gt(docs, 1000);
    cr_assert_eq(simdbpe_trainer_train(t, &err), SIMDBPE_OK);
    size_t b_len;
    char *b = merges_of(t, &b_len);
    tt_assert_same("separator vs streams", a, a_len, b, b_len);
    free(a);
    free(b);
    free(text);
}

Test(documents, same_for_any_threads_and_chunks)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    simdbpe_train_options o = doc_options(1200, 1, NULL);
    size_t ref_len;
    char *ref = merges_of(tt_train(&o, text, len, len), &ref_len);
    static const unsigned threads[] = {2, 4, 7};
    static const size_t chunks[] = {1000, 65537, 1 << 20};
    for (size_t i = 0; i < 3; i++) {
        o = doc_options(1200, threads[i], NULL);
        size_t m_len;
        char *m = merges_of(tt_train(&o, text, len, chunks[i]), &m_len);
        tt_assert_same("documents mode, more threads", m, m_len, ref, ref_len);
        free(m);
    }
    free(ref);
    free(text);
}

/* Every family's parts (its cut points, pretok/cuts.c) give the merges of
 * one thread reading the text whole. */
Test(documents, every_family_same_for_any_threads_and_chunks)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    static const char *const families[] = {"gpt2",        "cl100k", "qwen2", "o200k",
                                           "deepseek_v3", "tekken", "kimi"};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        simdbpe_train_options o = doc_options(900, 1, NULL);
        o.pre_tokenizer = families[f];
        size_t ref_len, m_len;
        char *ref = merges_of(tt_train(&o, text, len, len), &ref_len);
        o.threads = 3;
        char *m = merges_of(tt_train(&o, text, len, 65537), &m_len);
        tt_assert_same(families[f], m, m_len, ref, ref_len);
        free(m);
        free(ref);
    }
    free(text);
}

/* One pool for the program: a trainer counts on the pool a batch encoder
 * runs on, with the same merges as on threads of its own. */
Test(documents, one_pool_for_the_trainer_and_the_encoder)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    simdbpe_error err;
    simdbpe_pool *pool;
    cr_assert_eq(simdbpe_pool_new(3, &pool, &err), SIMDBPE_OK);
    simdbpe_model *m = NULL;
    cr_assert_eq(simdbpe_model_open("gpt2", &m, &err), SIMDBPE_OK);
    simdbpe_batch_options bo = {.pool = pool};
    simdbpe_batch *batch;
    cr_assert_eq(simdbpe_batch_new(m, &bo, &batch, &err), SIMDBPE_OK);
    const char *docs[] = {text, text + len / 2};
    size_t lens[] = {len / 2, len - len / 2};
    uint32_t *ids;
    size_t n_before, n_after, *offsets;
    cr_assert_eq(simdbpe_batch_encode(batch, docs, lens, 2, NULL, 0, &ids, &n_before, &offsets,
                                      &err),
                 SIMDBPE_OK);
    simdbpe_free(offsets);

    simdbpe_train_options o = doc_options(1200, 1, NULL);
    size_t ref_len;
    char *ref = merges_of(tt_train(&o, text, len, len), &ref_len);
    o.pool = pool;
    o.threads = 99; /* ignored: the pool decides */
    size_t got_len;
    char *got = merges_of(tt_train(&o, text, len, 65537), &got_len);
    tt_assert_same("trainer on a borrowed pool", got, got_len, ref, ref_len);

    uint32_t *again;
    cr_assert_eq(simdbpe_batch_encode(batch, docs, lens, 2, NULL, 0, &again, &n_after, &offsets,
                                      &err),
                 SIMDBPE_OK);
    cr_assert(n_after == n_before && memcmp(again, ids, n_before * sizeof *ids) == 0,
              "the pool encodes the same after training on it");
    simdbpe_free(ids);
    simdbpe_free(again);
    simdbpe_free(offsets);
    simdbpe_batch_free(batch);
    simdbpe_model_free(m);
    simdbpe_pool_free(pool);
    free(ref);
    free(got);
    free(text);
}

Test(documents, lines_mode_cuts_at_every_newline)
{
    /* In documents mode "a \nb" has the pieces "a", " ", "\n", "b"; in lines
     * mode the line "a \n" ends with the piece " \n". */
    const char *text = "a \nb";
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 1000;
    simdbpe_trainer *t = tt_train(&o, text, strlen(text), 100);
    cr_assert_eq(simdbpe_trainer_merge_count(t), 1);
    uint32_t l, r;
    simdbpe_trainer_merge_at(t, 0, &l, &r, NULL, NULL);
    const uint8_t *lb, *rb;
    size_t ll, rl;
    simdbpe_trainer_token_bytes(t, l, &lb, &ll);
    simdbpe_trainer_token_bytes(t, r, &rb, &rl);
    cr_assert(ll == 1 && rl == 1 && lb[0] == ' ' && rb[0] == '\n');
    simdbpe_trainer_free(t);
    o.mode = SIMDBPE_TRAIN_DOCUMENTS;
    t = tt_train(&o, text, strlen(text), 100);
    cr_assert_eq(simdbpe_trainer_merge_count(t), 0);
    simdbpe_trainer_free(t);
}

/* --------------------------------------------------------------- errors */

static simdbpe_status feed_all(simdbpe_trainer *t, const char *s, size_t len, size_t chunk,
                               simdbpe_error *err)
{
    for (size_t i = 0; i < len; i += chunk) {
        simdbpe_status st = simdbpe_trainer_feed(t, s + i, len - i < chunk ? len - i : chunk, err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return simdbpe_trainer_end_stream(t, err);
}

Test(errors, invalid_utf8_names_line_and_offset)
{
    const char text[] = "first line\nsecond \xe2\x82 line\nthird\n";
    static const size_t chunks[] = {1, 5, 1000};
    for (int mode = 0; mode < 2; mode++)
        for (size_t c = 0; c < 3; c++) {
            simdbpe_train_options o;
            simdbpe_train_options_init(&o);
            o.mode = mode ? SIMDBPE_TRAIN_DOCUMENTS : SIMDBPE_TRAIN_LINES;
            o.threads = 2;
            simdbpe_trainer *t;
            simdbpe_error err;
            cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
            simdbpe_status st = feed_all(t, text, sizeof text - 1, chunks[c], &err);
            cr_assert_eq(st, SIMDBPE_ERR_INVALID_UTF8);
            cr_assert_eq(err.byte_offset, 18, "offset %llu", (unsigned long long)err.byte_offset);
            cr_assert_eq(err.line, 2);
            cr_assert(strstr(err.message, "line 2, byte offset 18") != NULL, "%s", err.message);
            /* the trainer accepts nothing more */
            cr_assert_neq(simdbpe_trainer_feed(t, "x", 1, &err), SIMDBPE_OK);
            cr_assert_neq(simdbpe_trainer_train(t, &err), SIMDBPE_OK);
            simdbpe_trainer_free(t);
        }
}

Test(errors, invalid_utf8_far_into_a_stream)
{
    /* 20 MB of lines, then a bad byte: it is found in a later batch, and the
     * offset and line still count from the start of the stream. */
    const char line[] = "All the world's a stage, and all the men and women merely players\n";
    size_t ll = sizeof line - 1, lines = (20u << 20) / ll;
    size_t len = lines * ll + 8;
    char *text = malloc(len);
    cr_assert(text != NULL);
    for (size_t i = 0; i < lines; i++)
        memcpy(text + i * ll, line, ll);
    memcpy(text + lines * ll, "ok \xc0\xaf x\n", 8);
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.threads = 2;
    simdbpe_trainer *t;
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    cr_assert_eq(feed_all(t, text, len, 1 << 20, &err), SIMDBPE_ERR_INVALID_UTF8);
    cr_assert_eq(err.byte_offset, lines * ll + 3);
    cr_assert_eq(err.line, lines + 1);
    simdbpe_trainer_free(t);
    free(text);
}

Test(errors, replace_mode_equals_text_with_u_fffd)
{
    /* Maximal subparts: "\xe2\x82" (a cut 3-byte character) is one U+FFFD,
     * "\xc0\xaf" (overlong) two, "\xff" one. */
    const char bad[] = "cafe \xe2\x82 bar\nfoo \xc0\xaf baz \xff qux\ncafe bar foo\n";
    const char good[] = "cafe \xef\xbf\xbd bar\nfoo \xef\xbf\xbd\xef\xbf\xbd baz \xef\xbf\xbd qux\n"
                        "cafe bar foo\n";
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 400;
    o.errors = SIMDBPE_UTF8_REPLACE;
    size_t a_len, b_len;
    char *a = merges_of(tt_train(&o, bad, sizeof bad - 1, 3), &a_len);
    o.errors = SIMDBPE_UTF8_STRICT;
    char *b = merges_of(tt_train(&o, good, sizeof good - 1, 1000), &b_len);
    tt_assert_same("replace mode", a, a_len, b, b_len);
    cr_assert(strstr(b, "\xc3\xaf\xc2\xbf") != NULL, "U+FFFD's bytes merged");
    free(a);
    free(b);
}

Test(errors, empty_corpus)
{
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    simdbpe_trainer *t;
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_feed(t, "", 0, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_end_stream(t, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_train(t, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert(strstr(err.message, "empty corpus") != NULL, "%s", err.message);
    simdbpe_trainer_free(t);
}

Test(errors, unknown_pre_tokenizer_is_refused_by_name)
{
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.pre_tokenizer = "llama9";
    simdbpe_trainer *t = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_UNSUPPORTED);
    cr_assert(t == NULL);
    cr_assert_str_eq(err.message,
                     "unknown pre-tokenizer \"llama9\" (gpt2, cl100k, qwen2, o200k, deepseek_v3, tekken, kimi)");
}

Test(errors, vocab_size_below_bytes_and_specials)
{
    static const char *const two[] = {"<|endoftext|>", "<|pad|>"};
    static const char *const byte_special[] = {"a"};
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    simdbpe_trainer *t = NULL;
    simdbpe_error err;
    o.vocab_size = 255;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert(t == NULL);
    cr_assert(strstr(err.message, "vocab size 255 is below 256") != NULL, "%s", err.message);
    o.vocab_size = 257;
    o.specials = two;
    o.n_specials = 2;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert(strstr(err.message, "below 258") != NULL, "%s", err.message);
    o.vocab_size = 258;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    simdbpe_trainer_free(t);
    /* "a" spells the byte token "a": it needs no id of its own */
    o.vocab_size = 256;
    o.specials = byte_special;
    o.n_specials = 1;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    simdbpe_trainer_free(t);
}

Test(errors, bad_options)
{
    static const char *const empty[] = {""};
    static const char *const newline[] = {"a\nb"};
    static const char *const bad_utf8[] = {"\xff"};
    const char *const *bad[] = {empty, newline, bad_utf8};
    simdbpe_train_options o;
    simdbpe_trainer *t;
    simdbpe_error err;
    for (int i = 0; i < 3; i++) {
        simdbpe_train_options_init(&o);
        o.specials = bad[i];
        o.n_specials = 1;
        cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_INVALID_ARG);
    }
    simdbpe_train_options_init(&o);
    o.doc_separator = "\n\n"; /* lines mode */
    o.doc_separator_len = 2;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_INVALID_ARG);
    o.mode = SIMDBPE_TRAIN_DOCUMENTS;
    o.doc_separator_len = 0;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_trainer_new(NULL, &t, &err), SIMDBPE_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------ roundtrip */

/* Saves, reloads with simdbpe_model_open() and checks the files on disk are
 * the rendered ones. */
static simdbpe_model *save_and_open(const simdbpe_trainer *t, char *dir, size_t cap)
{
    tt_tmpdir(dir, cap);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/model", dir); /* save creates it */
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_save(t, sub, &err), SIMDBPE_OK, "save: %s", err.message);
    const char *files[2] = {"vocab.json", "merges.txt"};
    tt_render_fn fns[2] = {simdbpe_trainer_vocab_json, simdbpe_trainer_merges_txt};
    for (int i = 0; i < 2; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", sub, files[i]);
        size_t a_len, b_len;
        char *a = tt_read(path, &a_len);
        char *b = tt_render(t, fns[i], &b_len);
        tt_assert_same(files[i], a, a_len, b, b_len);
        free(a);
        free(b);
    }
    simdbpe_model *m;
    cr_assert_eq(simdbpe_model_open(sub, &m, &err), SIMDBPE_OK, "model_open: %s", err.message);
    return m;
}

/* The row of golden/encode.tsv for (model, text). */
static void encode_golden(const char *model, const char *text, size_t *count, char sha[65])
{
    size_t len;
    char *tsv = tt_read(TT_DIR "/golden/encode.tsv", &len);
    char *save = NULL;
    for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char m[64], t[64], h[65];
        size_t n;
        if (sscanf(line, "%63s %63s %zu %64s", m, t, &n, h) == 4 && !strcmp(m, model) &&
            !strcmp(t, text)) {
            *count = n;
            memcpy(sha, h, 65);
            free(tsv);
            return;
        }
    }
    cr_assert_fail("no row for %s / %s in encode.tsv", model, text);
}

static void check_hf_roundtrip(const char *name)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, TT_DIR "/corpus/%s.txt", name);
    char *text = tt_read(path, &len);
    simdbpe_train_options o = tt_hf_options(1000000, 2);
    simdbpe_trainer *t = tt_train(&o, text, len, 1 << 20);
    char dir[256];
    simdbpe_model *m = save_and_open(t, dir, sizeof dir);
    simdbpe_encoder *enc;
    cr_assert_eq(simdbpe_encoder_new(m, &enc, NULL), SIMDBPE_OK);
    static const char *const texts[] = {"tinyshakespeare", "taylorswift"};
    for (int i = 0; i < 2; i++) {
        size_t tl;
        snprintf(path, sizeof path, TT_DIR "/corpus/%s.txt", texts[i]);
        char *s = tt_read(path, &tl);
        const uint32_t *ids;
        size_t n;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(enc, s, tl, NULL, &ids, &n, &err), SIMDBPE_OK);
        size_t want_n;
        char want[65], got[65];
        encode_golden(name, texts[i], &want_n, want);
        tt_sha256_ids(ids, n, got);
        cr_assert_eq(n, want_n, "%s encoded with %s: %zu ids, HF %zu", texts[i], name, n, want_n);
        cr_assert_str_eq(got, want, "%s encoded with %s: ids differ from HF's", texts[i], name);
        free(s);
    }
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
    tt_rmdir(dir);
    simdbpe_trainer_free(t);
    free(text);
}

Test(roundtrip, taylorswift_model_encodes_as_hf)
{
    check_hf_roundtrip("taylorswift");
}

Test(roundtrip, tinyshakespeare_model_encodes_as_hf)
{
    check_hf_roundtrip("tinyshakespeare");
}

/* The textbook encoder: start from bytes, repeatedly merge the adjacent
 * pair of lowest rank (leftmost on ties) until none has a rank. Ranks come
 * from a plain V x V table filled from the trainer's merge list. */
typedef struct ref_model {
    uint32_t byte_id[256];
    uint32_t v;
    uint32_t *rank1; /* rank + 1 of pair (l, r) at l * v + r, 0 = none */
    uint32_t *id;    /* the id each rank makes */
} ref_model;

static void ref_encode_piece(const ref_model *rm, const uint8_t *p, size_t len, uint32_t *out,
                             size_t *n)
{
    uint32_t w[512];
    cr_assert(len <= 512);
    for (size_t i = 0; i < len; i++)
        w[i] = rm->byte_id[p[i]];
    size_t wl = len;
    for (;;) {
        uint32_t best = 0;
        size_t at = 0;
        for (size_t i = 0; i + 1 < wl; i++) {
            uint32_t r = rm->rank1[(size_t)w[i] * rm->v + w[i + 1]];
            if (r && (!best || r < best)) {
                best = r;
                at = i;
            }
        }
        if (!best)
            break;
        w[at] = rm->id[best - 1];
        memmove(w + at + 1, w + at + 2, (wl - at - 2) * sizeof *w);
        wl--;
    }
    memcpy(out + *n, w, wl * sizeof *w);
    *n += wl;
}

Test(roundtrip, small_model_encodes_as_the_textbook_encoder)
{
    size_t len, tl;
    char *text = tt_read(TT_CORPUS("taylorswift"), &len);
    /* a model that has not memorized the text it will encode */
    simdbpe_train_options o = tt_hf_options(700, 2);
    simdbpe_trainer *t = tt_train(&o, text, len, 1 << 20);
    ref_model rm;
    for (uint32_t id = 0; id < 256; id++) {
        const uint8_t *tb;
        size_t tlen;
        cr_assert_eq(simdbpe_trainer_token_bytes(t, id, &tb, &tlen), SIMDBPE_OK);
        cr_assert_eq(tlen, 1);
        rm.byte_id[tb[0]] = id;
    }
    rm.v = simdbpe_trainer_vocab_size(t);
    size_t n_rules = simdbpe_trainer_merge_count(t);
    rm.rank1 = calloc((size_t)rm.v * rm.v, sizeof *rm.rank1);
    rm.id = malloc(n_rules * sizeof *rm.id);
    cr_assert(rm.rank1 && rm.id);
    for (size_t i = 0; i < n_rules; i++) {
        uint32_t l, r;
        simdbpe_trainer_merge_at(t, i, &l, &r, &rm.id[i], NULL);
        if (!rm.rank1[(size_t)l * rm.v + r])
            rm.rank1[(size_t)l * rm.v + r] = (uint32_t)i + 1;
    }
    char dir[256];
    simdbpe_model *m = save_and_open(t, dir, sizeof dir);
    simdbpe_encoder *enc;
    cr_assert_eq(simdbpe_encoder_new(m, &enc, NULL), SIMDBPE_OK);
    /* Shakespeare through a model of Wikipedia text, first 200 kB. */
    char *s = tt_read(TT_CORPUS("tinyshakespeare"), &tl);
    tl = 200000;
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    cr_assert_eq(simdbpe_encode(enc, s, tl, NULL, &ids, &n, &err), SIMDBPE_OK);
    uint32_t *want = malloc(tl * sizeof *want);
    size_t wn = 0;
    for (size_t i = 0; i < tl;) {
        size_t j = simdbpe__pretok_piece_end((const uint8_t *)s, tl, i);
        ref_encode_piece(&rm, (const uint8_t *)s + i, j - i, want, &wn);
        i = j;
    }
    cr_assert_eq(n, wn, "%zu ids, textbook %zu", n, wn);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ids[i], want[i], "id %zu: %u, textbook %u", i, ids[i], want[i]);
    free(want);
    free(s);
    simdbpe_encoder_free(enc);
    simdbpe_model_free(m);
    tt_rmdir(dir);
    free(rm.rank1);
    free(rm.id);
    simdbpe_trainer_free(t);
    free(text);
}

/* ------------------------------------------------------------- specials */

Test(specials, ids_follow_the_tokens_and_load_back)
{
    static const char *const sp[] = {"<|endoftext|>", "<|pad|>", "<|endoftext|>"};
    size_t len;
    char *text = tt_read(TT_CORPUS("taylorswift"), &len);
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 600;
    o.specials = sp;
    o.n_specials = 3; /* the repeat counts once */
    simdbpe_trainer *t = tt_train(&o, text, len, 1 << 20);
    cr_assert_eq(simdbpe_trainer_vocab_size(t), 600);
    cr_assert_eq(simdbpe_trainer_merge_count(t), 600 - 256 - 2);
    const uint8_t *b;
    size_t bl;
    cr_assert_eq(simdbpe_trainer_token_bytes(t, 598, &b, &bl), SIMDBPE_OK);
    cr_assert(bl == 13 && !memcmp(b, "<|endoftext|>", 13));
    cr_assert_eq(simdbpe_trainer_token_bytes(t, 599, &b, &bl), SIMDBPE_OK);
    cr_assert(bl == 7 && !memcmp(b, "<|pad|>", 7));
    cr_assert_eq(simdbpe_trainer_token_bytes(t, 600, &b, &bl), SIMDBPE_ERR_TOKEN_ID);
    char dir[256];
    simdbpe_model *m = save_and_open(t, dir, sizeof dir);
    uint32_t id;
    cr_assert_eq(simdbpe_model_special_id(m, "<|pad|>", 7, &id), SIMDBPE_OK);
    cr_assert_eq(id, 599);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endoftext|>", 13, &id), SIMDBPE_OK);
    cr_assert_eq(id, 598);
    simdbpe_model_free(m);
    tt_rmdir(dir);
    simdbpe_trainer_free(t);
    free(text);
}

Test(specials, a_special_that_is_also_a_token_keeps_one_id)
{
    /* "hello" spells itself in the byte-level alphabet. Once merges make the
     * token "hello", the special is that token (as in HF, where the merge
     * reuses the special's id), so it takes no id of its own and vocab.json
     * has no duplicate key. */
    static const char *const sp[] = {"hello"};
    const char text[] = "hello hello hello\nhello\nhello world\n";
    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 1000;
    o.specials = sp;
    o.n_specials = 1;
    simdbpe_trainer *t = tt_train(&o, text, sizeof text - 1, 1000);
    uint32_t n = simdbpe_trainer_vocab_size(t), top = 0;
    for (size_t i = 0; i < simdbpe_trainer_merge_count(t); i++) {
        uint32_t id;
        simdbpe_trainer_merge_at(t, i, NULL, NULL, &id, NULL);
        top = id > top ? id : top;
    }
    cr_assert_eq(n, top + 1, "the special took an id of its own");
    size_t vlen;
    char *vocab = tt_render(t, simdbpe_trainer_vocab_json, &vlen);
    json_error_t je;
    json_t *v = json_loadb(vocab, vlen, 0, &je);
    cr_assert(v != NULL);
    cr_assert_eq(json_object_size(v), n);
    json_t *h = json_object_get(v, "hello");
    cr_assert(h != NULL);
    const uint8_t *b;
    size_t bl;
    cr_assert_eq(simdbpe_trainer_token_bytes(t, (uint32_t)json_integer_value(h), &b, &bl),
                 SIMDBPE_OK);
    cr_assert(bl == 5 && !memcmp(b, "hello", 5));
    json_decref(v);
    free(vocab);
    simdbpe_trainer_free(t);
}

/* ------------------------------------------------------------- progress */

typedef struct seen {
    int counting, merging;
    uint64_t last_merges, last_bytes;
    int backwards;
} seen;

static void on_progress(const simdbpe_train_progress *p, void *user)
{
    seen *s = user;
    if (p->stage == SIMDBPE_TRAIN_COUNTING) {
        s->counting++;
        s->backwards |= s->merging > 0 || p->bytes < s->last_bytes;
        s->last_bytes = p->bytes;
    } else {
        s->merging++;
        s->backwards |= p->merges_done < s->last_merges;
        s->last_merges = p->merges_done;
    }
}

Test(progress, counting_then_merging_to_the_end)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("taylorswift"), &len);
    seen s = {0, 0, 0, 0, 0};
    simdbpe_train_options o = tt_hf_options(3000, 2);
    o.progress = on_progress;
    o.progress_user = &s;
    simdbpe_trainer *t = tt_train(&o, text, len, 4096);
    cr_assert_gt(s.counting, 0);
    cr_assert_gt(s.merging, 0);
    cr_assert(!s.backwards);
    cr_assert_eq(s.last_bytes, len);
    cr_assert_eq(s.last_merges, simdbpe_trainer_merge_count(t));
    simdbpe_trainer_free(t);
    free(text);
}
