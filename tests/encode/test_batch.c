/*
 * test_batch.c - the thread pool and batch encoding (simdbpe_batch.h).
 *
 * Batch output is checked against the references' ids in tests/data/golden
 * (every record of edge, stress, random, specials and utf8), for 1, 2 and 4
 * threads, on an own pool and a shared one; errors must name the first
 * failing document in input order and its byte offset (Python's
 * UnicodeDecodeError.start for invalid UTF-8) whatever the thread count.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>

#include "simdbpe_batch.h"
#include "test_util.h"

/* Documents with the ids the references give them. */
typedef struct corpus {
    char **texts;
    size_t *lens;
    uint32_t **want;
    size_t *n_want;
    size_t n, cap;
    const char *text_key, *ids_key; /* "hex" texts are decoded */
} corpus;

static void add_record(json_t *rec, size_t line, void *ctx)
{
    (void)line;
    corpus *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->texts = realloc(c->texts, c->cap * sizeof *c->texts);
        c->lens = realloc(c->lens, c->cap * sizeof *c->lens);
        c->want = realloc(c->want, c->cap * sizeof *c->want);
        c->n_want = realloc(c->n_want, c->cap * sizeof *c->n_want);
        cr_assert(c->texts && c->lens && c->want && c->n_want);
    }
    size_t len;
    if (strcmp(c->text_key, "hex") == 0) {
        const char *hex = json_string_value(json_object_get(rec, "hex"));
        cr_assert(hex);
        c->texts[c->n] = (char *)tu_hex(hex, &len);
    } else {
        const char *t = tu_json_text(rec, c->text_key, &len);
        c->texts[c->n] = malloc(len + 1);
        cr_assert(c->texts[c->n]);
        memcpy(c->texts[c->n], t, len + 1);
    }
    c->lens[c->n] = len;
    c->want[c->n] = tu_json_ids(json_object_get(rec, c->ids_key), &c->n_want[c->n]);
    c->n++;
}

static void corpus_add(corpus *c, const char *file, const char *text_key, const char *ids_key)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TU_GOLDEN_DIR, file);
    c->text_key = text_key;
    c->ids_key = ids_key;
    cr_assert_gt(tu_each_jsonl(path, add_record, c), 0, "%s has no records", file);
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->texts[i]);
        free(c->want[i]);
    }
    free(c->texts);
    free(c->lens);
    free(c->want);
    free(c->n_want);
}

static simdbpe_batch *new_batch(const simdbpe_model *m, unsigned threads, simdbpe_pool *pool)
{
    simdbpe_batch_options o = {threads, pool, 0};
    simdbpe_batch *b = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_batch_new(m, &o, &b, &err);
    cr_assert_eq(st, SIMDBPE_OK, "simdbpe_batch_new: %s", err.message);
    return b;
}

/* Batch-encodes the corpus and asserts every document's ids. */
static void expect_corpus(simdbpe_batch *b, const corpus *c, const simdbpe_encode_options *o,
                          unsigned threads)
{
    uint32_t *ids;
    size_t n_ids, *off;
    simdbpe_error err;
    simdbpe_status st = simdbpe_batch_encode(b, (const char *const *)c->texts, c->lens, c->n, o,
                                             threads, &ids, &n_ids, &off, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%u threads: %s", threads, err.message);
    cr_assert_eq(off[0], 0);
    cr_assert_eq(off[c->n], n_ids);
    for (size_t d = 0; d < c->n; d++) {
        char msg[160];
        cr_assert_leq(off[d], off[d + 1]);
        if (tu_ids_differ(ids + off[d], off[d + 1] - off[d], c->want[d], c->n_want[d], msg,
                          sizeof msg))
            cr_assert_fail("%u threads, document %zu: %s", threads, d, msg);
    }
    simdbpe_free(ids);
    simdbpe_free(off);
}

static const unsigned thread_counts[] = {1, 2, 4};

Test(batch, golden_documents_for_1_2_4_threads)
{
    corpus c = {0};
    corpus_add(&c, "edge.jsonl", "text", "ids");
    corpus_add(&c, "stress.jsonl", "text", "ids");
    corpus_add(&c, "random.jsonl", "text", "ids");
    cr_assert_eq(c.n, 7229 + 96 + 2600);
    simdbpe_model *m = tu_gpt2();
    for (size_t i = 0; i < 3; i++) {
        simdbpe_batch *b = new_batch(m, thread_counts[i], NULL);
        cr_assert_eq(simdbpe_batch_threads(b), thread_counts[i]);
        expect_corpus(b, &c, NULL, 0);
        expect_corpus(b, &c, NULL, 0); /* again, on warm encoders */
        simdbpe_batch_free(b);
    }
    /* One pool of 4, calls limited to 1, 2 and 4 of its workers. */
    simdbpe_batch *b = new_batch(m, 4, NULL);
    for (size_t i = 0; i < 3; i++)
        expect_corpus(b, &c, NULL, thread_counts[i]);
    simdbpe_batch_free(b);
    simdbpe_model_free(m);
    corpus_free(&c);
}

Test(batch, batch_equals_one_by_one)
{
    corpus c = {0};
    corpus_add(&c, "random.jsonl", "text", "ids");
    simdbpe_model *m = tu_gpt2();
    simdbpe_encoder *e = tu_encoder(m);
    simdbpe_batch *b = new_batch(m, 2, NULL);
    uint32_t *ids;
    size_t n_ids, *off;
    cr_assert_eq(simdbpe_batch_encode(b, (const char *const *)c.texts, c.lens, c.n, NULL, 2,
                                      &ids, &n_ids, &off, NULL),
                 SIMDBPE_OK);
    for (size_t d = 0; d < c.n; d++) {
        size_t n;
        const uint32_t *one = tu_encode(e, c.texts[d], c.lens[d], NULL, &n);
        char msg[160];
        if (tu_ids_differ(ids + off[d], off[d + 1] - off[d], one, n, msg, sizeof msg))
            cr_assert_fail("document %zu: %s", d, msg);
    }
    simdbpe_free(ids);
    simdbpe_free(off);
    simdbpe_batch_free(b);
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    corpus_free(&c);
}

Test(batch, options_reach_every_document)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_pool *pool;
    cr_assert_eq(simdbpe_pool_new(4, &pool, NULL), SIMDBPE_OK);
    simdbpe_batch *b = new_batch(m, 0, pool); /* a borrowed pool */
    cr_assert_eq(simdbpe_batch_threads(b), 4);
    corpus allow = {0}, text = {0}, utf8 = {0};
    corpus_add(&allow, "specials.jsonl", "text", "ids_allow");
    corpus_add(&text, "specials.jsonl", "text", "ids_text");
    corpus_add(&utf8, "utf8.jsonl", "hex", "ids");
    simdbpe_encode_options o_allow = {.special = SIMDBPE_SPECIAL_ALLOW, .errors = SIMDBPE_UTF8_STRICT};
    simdbpe_encode_options o_replace = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_REPLACE};
    for (size_t i = 0; i < 3; i++) {
        expect_corpus(b, &allow, &o_allow, thread_counts[i]);
        expect_corpus(b, &text, NULL, thread_counts[i]);
        expect_corpus(b, &utf8, &o_replace, thread_counts[i]);
    }
    corpus_free(&allow);
    corpus_free(&text);
    corpus_free(&utf8);
    simdbpe_batch_free(b);
    simdbpe_pool_free(pool);
    simdbpe_model_free(m);
}

/* 3000 copies of a valid document with bad ones at `bad1` and `bad2`. */
static void expect_first_failure(simdbpe_batch *b, const char *bad, size_t bad_len,
                                 const simdbpe_encode_options *o, simdbpe_status want_st,
                                 uint64_t want_offset)
{
    enum { N = 3000 };
    static const char *texts[N];
    static size_t lens[N];
    const size_t bad1 = 1777, bad2 = 2900;
    for (size_t d = 0; d < N; d++) {
        texts[d] = "Hello there, a valid document of some length. ";
        lens[d] = strlen(texts[d]);
    }
    texts[bad1] = texts[bad2] = bad;
    lens[bad1] = lens[bad2] = bad_len;
    for (size_t i = 0; i < 3; i++) {
        uint32_t *ids = (uint32_t *)1;
        size_t n_ids = 7, *off = (size_t *)1;
        simdbpe_error err;
        simdbpe_status st =
            simdbpe_batch_encode(b, texts, lens, N, o, thread_counts[i], &ids, &n_ids, &off, &err);
        cr_assert_eq(st, want_st, "%u threads: %s", thread_counts[i], simdbpe_status_name(st));
        cr_assert_eq(err.status, want_st);
        cr_assert_eq(err.index, bad1, "%u threads: index %llu", thread_counts[i],
                     (unsigned long long)err.index);
        cr_assert_eq(err.byte_offset, want_offset);
        cr_assert(strncmp(err.message, "document 1777: ", 15) == 0, "message: %s", err.message);
        cr_assert_null(ids);
        cr_assert_null(off);
        cr_assert_eq(n_ids, 0);
    }
}

Test(batch, errors_name_the_first_failing_document)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_batch *b = new_batch(m, 4, NULL);
    /* 0xFF can start no UTF-8 sequence: the error is at its offset, 3. */
    const char bad_utf8[] = "ok \xff here";
    expect_first_failure(b, bad_utf8, sizeof bad_utf8 - 1, NULL, SIMDBPE_ERR_INVALID_UTF8, 3);
    const char special[] = "text then <|endoftext|> more";
    simdbpe_encode_options o_err = {.special = SIMDBPE_SPECIAL_ERROR, .errors = SIMDBPE_UTF8_STRICT};
    expect_first_failure(b, special, sizeof special - 1, &o_err, SIMDBPE_ERR_SPECIAL_TOKEN, 10);
    simdbpe_batch_free(b);
    simdbpe_model_free(m);
}

Test(batch, invalid_utf8_offsets_are_pythons)
{
    corpus c = {0};
    corpus_add(&c, "utf8.jsonl", "hex", "ids");
    /* The same records with strict_offset, read again for the offsets. */
    size_t len;
    char path[512];
    snprintf(path, sizeof path, "%s/utf8.jsonl", TU_GOLDEN_DIR);
    char *data = tu_read(path, &len);
    simdbpe_model *m = tu_gpt2();
    simdbpe_batch *b = new_batch(m, 2, NULL);
    size_t d = 0, checked = 0;
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        cr_assert(rec);
        if (json_object_get(rec, "header")) {
            json_decref(rec);
            continue;
        }
        json_t *so = json_object_get(rec, "strict_offset");
        if (json_is_integer(so)) {
            /* A batch of [valid, this]: the error is document 1's. */
            const char *texts[2] = {"fine", c.texts[d]};
            size_t lens[2] = {4, c.lens[d]};
            uint32_t *ids;
            size_t n_ids, *off;
            simdbpe_error err;
            cr_assert_eq(simdbpe_batch_encode(b, texts, lens, 2, NULL, 2, &ids, &n_ids, &off,
                                              &err),
                         SIMDBPE_ERR_INVALID_UTF8, "record %zu", d);
            cr_assert_eq(err.index, 1);
            cr_assert_eq(err.byte_offset, (uint64_t)json_integer_value(so), "record %zu", d);
            checked++;
        }
        json_decref(rec);
        d++;
    }
    cr_assert_eq(d, c.n);
    cr_assert_gt(checked, 100);
    free(data);
    simdbpe_batch_free(b);
    simdbpe_model_free(m);
    corpus_free(&c);
}

Test(batch, empty_documents_and_no_documents)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_batch *b = new_batch(m, 2, NULL);
    const char *texts[5] = {"", "a", NULL, "", " b"};
    size_t lens[5] = {0, 1, 0, 0, 2};
    uint32_t *ids;
    size_t n_ids, *off;
    cr_assert_eq(simdbpe_batch_encode(b, texts, lens, 5, NULL, 0, &ids, &n_ids, &off, NULL),
                 SIMDBPE_OK);
    size_t want_off[6] = {0, 0, 1, 1, 1, 2};
    cr_assert_arr_eq(off, want_off, sizeof want_off);
    cr_assert_eq(n_ids, 2);
    cr_assert_eq(ids[0], 64);  /* "a" */
    cr_assert_eq(ids[1], 275); /* " b" */
    simdbpe_free(ids);
    simdbpe_free(off);
    cr_assert_eq(simdbpe_batch_encode(b, NULL, NULL, 0, NULL, 0, &ids, &n_ids, &off, NULL),
                 SIMDBPE_OK);
    cr_assert_eq(n_ids, 0);
    cr_assert_eq(off[0], 0);
    simdbpe_free(ids);
    simdbpe_free(off);
    /* A NULL text with a length is refused, naming the document. */
    texts[3] = NULL;
    lens[3] = 5;
    simdbpe_error err;
    cr_assert_eq(simdbpe_batch_encode(b, texts, lens, 5, NULL, 0, &ids, &n_ids, &off, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(err.index, 3);
    simdbpe_batch_free(b);
    simdbpe_model_free(m);
}

/* ----------------------------------------------------------------- pool */

typedef struct tally {
    atomic_uint runs[5000];
    atomic_uint bad_worker;
    unsigned workers;
} tally;

static void count_task(void *user, size_t t, unsigned w)
{
    tally *ty = user;
    atomic_fetch_add(&ty->runs[t], 1);
    if (w >= ty->workers)
        atomic_fetch_add(&ty->bad_worker, 1);
}

Test(pool, every_task_runs_once_on_the_workers_asked_for)
{
    simdbpe_pool *p;
    cr_assert_eq(simdbpe_pool_new(3, &p, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_pool_threads(p), 3);
    static tally ty;
    for (unsigned workers = 1; workers <= 3; workers++) {
        for (size_t n = 0; n < 5000; n += 1249) {
            memset(&ty, 0, sizeof ty);
            ty.workers = workers;
            simdbpe_pool_run(p, n, workers, count_task, &ty);
            for (size_t t = 0; t < 5000; t++)
                cr_assert_eq(ty.runs[t], t < n ? 1u : 0u, "task %zu of %zu", t, n);
            cr_assert_eq(ty.bad_worker, 0);
        }
    }
    simdbpe_pool_free(p);
    simdbpe_pool_free(NULL);
    simdbpe_batch_free(NULL);
    simdbpe_free(NULL);
}

Test(pool, zero_threads_means_every_cpu)
{
    simdbpe_pool *p;
    cr_assert_eq(simdbpe_pool_new(0, &p, NULL), SIMDBPE_OK);
    cr_assert_geq(simdbpe_pool_threads(p), 1);
    simdbpe_pool_free(p);
    simdbpe_error err;
    cr_assert_eq(simdbpe_pool_new(100000, &p, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_null(p);
}

/* Two threads calling one batch at once take turns and both get it right. */
typedef struct caller {
    simdbpe_batch *b;
    const corpus *c;
} caller;

static void *call_batch(void *arg)
{
    caller *cl = arg;
    for (int i = 0; i < 3; i++)
        expect_corpus(cl->b, cl->c, NULL, 2);
    return NULL;
}

Test(batch, one_batch_called_from_two_threads)
{
    corpus c = {0};
    corpus_add(&c, "random.jsonl", "text", "ids");
    simdbpe_model *m = tu_gpt2();
    simdbpe_batch *b = new_batch(m, 2, NULL);
    caller cl = {b, &c};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, call_batch, &cl), 0);
    call_batch(&cl);
    pthread_join(t, NULL);
    simdbpe_batch_free(b);
    simdbpe_model_free(m);
    corpus_free(&c);
}
