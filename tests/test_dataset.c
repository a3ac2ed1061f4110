/*
 * test_dataset.c - the dataset engine through its public API
 * (simdbpe_dataset.h), without the CLI.
 *
 * The ids written are the references' (tests/data/golden/stress.jsonl:
 * tiktoken 1.0.22 = HF tokenizers 0.23.2); skipped documents and progress
 * reach the callbacks and the result; a bad document's error names its
 * input, line and byte offset; an output over an input is refused; two
 * ranks merged give the bytes of one run.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <unistd.h>

#include "simdbpe_dataset.h"
#include "test_util.h"

#define STRESS TU_GOLDEN_DIR "/stress.jsonl"

typedef struct seen {
    char skipped[8][512];
    size_t n_skipped, n_notices;
    uint64_t progress_calls, last_docs;
    uint64_t stop_after; /* progress calls; 0: never stop */
} seen;

static void on_message(void *user, simdbpe_dataset_event ev, const char *text)
{
    seen *s = user;
    if (ev == SIMDBPE_DATASET_SKIPPED && s->n_skipped < 8)
        snprintf(s->skipped[s->n_skipped++], sizeof s->skipped[0], "%s", text);
    else if (ev == SIMDBPE_DATASET_NOTICE)
        s->n_notices++;
}

static int on_progress(void *user, uint64_t raw, uint64_t bytes, uint64_t docs)
{
    (void)raw;
    (void)bytes;
    seen *s = user;
    s->progress_calls++;
    s->last_docs = docs;
    return s->stop_after && s->progress_calls >= s->stop_after;
}

static char *temp_dir(void)
{
    char *d = strdup("/tmp/simdbpe-dataset-XXXXXX");
    cr_assert(d && mkdtemp(d));
    return d;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    cr_assert(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* The golden ids of stress.jsonl, concatenated. */
static uint32_t *stress_ids(size_t *n, size_t *docs)
{
    json_error_t je;
    uint32_t *all = NULL;
    *n = *docs = 0;
    FILE *f = fopen(STRESS, "r");
    cr_assert(f);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *rec = json_loads(line, JSON_ALLOW_NUL, &je);
        cr_assert(rec, "%s", je.text);
        size_t k;
        uint32_t *ids = tu_json_ids(json_object_get(rec, "ids"), &k);
        all = realloc(all, (*n + k + 1) * sizeof *all);
        cr_assert(all);
        memcpy(all + *n, ids, k * sizeof *ids);
        *n += k;
        (*docs)++;
        free(ids);
        json_decref(rec);
    }
    free(line);
    fclose(f);
    return all;
}

Test(dataset, jsonl_to_u32_with_a_skipped_record)
{
    simdbpe_model *m = tu_gpt2();
    char *dir = temp_dir(), *bad = path_in(dir, "bad.jsonl"), *out = path_in(dir, "ids.u32");
    tu_write(bad, "{\"text\": 7}\n", 12);
    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    seen s = {0};
    o.input_format = SIMDBPE_INPUT_JSONL;
    o.output_format = SIMDBPE_OUTPUT_U32;
    o.output = out;
    o.skip_errors = 1;
    o.threads = 2;
    o.batch_bytes = 4096; /* several batches */
    o.on_message = on_message;
    o.on_progress = on_progress;
    o.user = &s;
    const char *paths[] = {STRESS, bad};
    simdbpe_dataset *ds;
    simdbpe_error err;
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_dataset_prepare(ds, paths, 2, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_dataset_run(ds, &err), SIMDBPE_OK, "%s", simdbpe_dataset_message(ds));
    size_t n_want, docs, len;
    uint32_t *want = stress_ids(&n_want, &docs);
    uint32_t *got = (uint32_t *)tu_read(out, &len);
    char why[200];
    cr_assert(!tu_ids_differ(got, len / 4, want, n_want, why, sizeof why), "%s", why);
    const simdbpe_dataset_result *r = simdbpe_dataset_result_of(ds);
    cr_assert_eq(r->documents, docs);
    cr_assert_eq(r->tokens, n_want);
    cr_assert_eq(r->skipped, 1);
    cr_assert_eq(r->n_files, 2);
    cr_assert_eq(r->files[0].documents, docs);
    cr_assert_eq(r->files[1].skipped, 1);
    char want_msg[600];
    snprintf(want_msg, sizeof want_msg, "%s: line 1: the \"text\" value is not a string", bad);
    cr_assert_eq(s.n_skipped, 1);
    cr_assert_str_eq(s.skipped[0], want_msg);
    cr_assert_eq(r->n_skipped_documents, 1);
    cr_assert_str_eq(r->skipped_documents[0], want_msg);
    cr_assert_gt(s.progress_calls, 1);
    cr_assert_eq(s.last_docs, docs);
    simdbpe_dataset_free(ds);
    free(got);
    free(want);
    unlink(out);
    unlink(bad);
    rmdir(dir);
    free(out);
    free(bad);
    free(dir);
    simdbpe_model_free(m);
}

Test(dataset, a_bad_document_names_input_line_and_byte)
{
    simdbpe_model *m = tu_gpt2();
    char *dir = temp_dir(), *good = path_in(dir, "good.txt"), *bad = path_in(dir, "bad.txt");
    char *out = path_in(dir, "out.txt");
    tu_write(good, "fine\n", 5);
    tu_write(bad, "one\ntwo \xff three\n", 16); /* 0xFF: byte 8, line 2 */
    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    o.input_format = SIMDBPE_INPUT_LINES;
    o.output = out;
    o.threads = 2;
    const char *paths[] = {good, bad};
    simdbpe_dataset *ds;
    simdbpe_error err;
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_dataset_prepare(ds, paths, 2, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_dataset_run(ds, &err), SIMDBPE_ERR_INVALID_UTF8);
    cr_assert_eq(err.status, SIMDBPE_ERR_INVALID_UTF8);
    cr_assert_eq(err.index, 1);
    cr_assert_eq(err.line, 2);
    cr_assert_eq(err.byte_offset, 8);
    char want[600];
    snprintf(want, sizeof want, "%s: line 2, byte offset 8: invalid UTF-8 in input text: ", bad);
    cr_assert(!strncmp(simdbpe_dataset_message(ds), want, strlen(want)), "%s",
              simdbpe_dataset_message(ds));
    cr_assert(!strncmp(err.message, want, strlen(want)));
    cr_assert_neq(access(out, F_OK), 0, "a failed run leaves no output");
    simdbpe_dataset_free(ds);
    /* As rank 1 of 2 (bad.txt is its only file), `index` is still bad.txt's
     * place in the full list. */
    o.world_size = 2;
    o.rank = 1;
    cr_assert_eq(simdbpe_dataset_encode_files(m, &o, paths, 2, NULL, &err),
                 SIMDBPE_ERR_INVALID_UTF8);
    cr_assert_eq(err.index, 1);
    cr_assert_eq(err.line, 2);
    unlink(good);
    unlink(bad);
    rmdir(dir);
    free(good);
    free(bad);
    free(out);
    free(dir);
    simdbpe_model_free(m);
}

Test(dataset, options_and_outputs_are_checked)
{
    simdbpe_model *m = tu_gpt2();
    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    simdbpe_dataset *ds = NULL;
    simdbpe_error err;
    o.output_format = SIMDBPE_OUTPUT_MEGATRON; /* several files: needs a prefix */
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_null(ds);
    cr_assert_str_eq(err.message, "--output-format megatron writes several files: give -o PREFIX");
    simdbpe_dataset_options_init(&o);
    o.json_key = "content"; /* text input */
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_ERR_INVALID_ARG);
    /* An output that is the input (another spelling of it) is refused. */
    char *dir = temp_dir(), *in = path_in(dir, "a.txt");
    tu_write(in, "hello\n", 6);
    char *same = path_in(dir, "./a.txt");
    simdbpe_dataset_options_init(&o);
    o.output = same;
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_OK);
    const char *paths[] = {in};
    cr_assert_eq(simdbpe_dataset_prepare(ds, paths, 1, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(err.index, 0);
    cr_assert(strstr(simdbpe_dataset_message(ds), "is the input"));
    simdbpe_dataset_free(ds);
    size_t len;
    char *kept = tu_read(in, &len);
    cr_assert(len == 6 && !memcmp(kept, "hello\n", 6));
    free(kept);
    unlink(in);
    rmdir(dir);
    free(in);
    free(same);
    free(dir);
    simdbpe_model_free(m);
}

/* The bytes of `dir`/`name`, or NULL. */
static char *file_bytes(const char *dir, const char *name, size_t *len)
{
    char *p = path_in(dir, name), *data = tu_try_read(p, len);
    free(p);
    return data;
}

Test(dataset, two_ranks_merged_equal_one_run)
{
    simdbpe_model *m = tu_gpt2();
    char *dir = temp_dir(), *a = path_in(dir, "a.txt"), *b = path_in(dir, "b.txt");
    char *c = path_in(dir, "c.txt");
    tu_write(a, "first file\n\nsecond document of a\n", 33);
    tu_write(b, "b's only document", 17);
    tu_write(c, "third\n\nfile, \xe4\xb8\xad\n\n\n", 19);
    const char *paths[] = {a, b, c};
    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    o.doc_separator = "\n\n";
    o.doc_separator_len = 2;
    o.output_format = SIMDBPE_OUTPUT_MEGATRON;
    char *one = path_in(dir, "one"), *sharded = path_in(dir, "sh"), *merged = path_in(dir, "mg");
    simdbpe_error err;
    o.output = one;
    simdbpe_dataset_result single;
    cr_assert_eq(simdbpe_dataset_encode_files(m, &o, paths, 3, &single, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert_eq(single.documents, 6); /* 2 + 1 + 3: a last "\n" after "\n\n" is one */
    o.output = sharded;
    o.world_size = 2;
    for (o.rank = 0; o.rank < 2; o.rank++)
        cr_assert_eq(simdbpe_dataset_encode_files(m, &o, paths, 3, NULL, &err), SIMDBPE_OK,
                     "%s", err.message);
    char *parts[2] = {path_in(dir, "sh.00001-of-00002"), path_in(dir, "sh.00000-of-00002")};
    simdbpe_merge_options mo = {SIMDBPE_OUTPUT_MEGATRON, merged, NULL, NULL};
    simdbpe_merge_result res;
    cr_assert_eq(simdbpe_dataset_merge(&mo, (const char *const *)parts, 2, &res, &err),
                 SIMDBPE_OK, "%s", err.message);
    cr_assert(res.in_file_order);
    cr_assert_eq(res.parts, 2);
    cr_assert_eq(res.documents, single.documents);
    cr_assert_eq(res.tokens, single.tokens);
    for (int k = 0; k < 2; k++) {
        size_t n1 = 0, n2 = 0;
        char *x = file_bytes(dir, k ? "one.idx" : "one.bin", &n1);
        char *y = file_bytes(dir, k ? "mg.idx" : "mg.bin", &n2);
        cr_assert(x && y && n1 == n2 && !memcmp(x, y, n1), "%s differs", k ? ".idx" : ".bin");
        free(x);
        free(y);
    }
    /* A merge onto a part's own file is refused, with the whole message. */
    simdbpe_merge_options onto = {SIMDBPE_OUTPUT_MEGATRON, parts[0], NULL, NULL};
    cr_assert_eq(simdbpe_dataset_merge(&onto, (const char *const *)parts, 2, &res, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert(res.message && strstr(res.message, "writing it would destroy the part"));
    simdbpe_free(res.message);
    const char *names[] = {"a.txt", "b.txt", "c.txt", "one.bin", "one.idx", "mg.bin", "mg.idx",
                           "sh.00000-of-00002.bin", "sh.00000-of-00002.idx",
                           "sh.00000-of-00002.done", "sh.00001-of-00002.bin",
                           "sh.00001-of-00002.idx", "sh.00001-of-00002.done"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = path_in(dir, names[i]);
        cr_assert_eq(unlink(p), 0, "%s was not written", names[i]);
        free(p);
    }
    cr_assert_eq(rmdir(dir), 0, "no other file is left");
    free(parts[0]);
    free(parts[1]);
    free(one);
    free(sharded);
    free(merged);
    free(a);
    free(b);
    free(c);
    free(dir);
    simdbpe_model_free(m);
}

/* A progress callback that returns nonzero stops the run: SIMDBPE_ERR_CANCELLED,
 * no more calls, and nothing under the output's name (Megatron: neither file). */
Test(dataset, progress_callback_cancels_the_run)
{
    simdbpe_model *m = tu_gpt2();
    char *dir = temp_dir(), *out = path_in(dir, "ds");
    for (unsigned threads = 1; threads <= 2; threads++) {
        simdbpe_dataset_options o;
        simdbpe_dataset_options_init(&o);
        seen s = {.stop_after = 3};
        o.input_format = SIMDBPE_INPUT_JSONL;
        o.output_format = SIMDBPE_OUTPUT_MEGATRON;
        o.output = out;
        o.threads = threads;
        o.batch_bytes = 4096; /* many batches */
        o.on_progress = on_progress;
        o.user = &s;
        const char *paths[] = {STRESS};
        simdbpe_dataset *ds;
        simdbpe_error err;
        cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_OK, "%s", err.message);
        cr_assert_eq(simdbpe_dataset_prepare(ds, paths, 1, &err), SIMDBPE_OK, "%s", err.message);
        cr_assert_eq(simdbpe_dataset_run(ds, &err), SIMDBPE_ERR_CANCELLED);
        cr_assert_eq(s.progress_calls, 3, "%u threads: %llu calls", threads,
                     (unsigned long long)s.progress_calls);
        cr_assert_str_eq(simdbpe_dataset_message(ds), "cancelled");
        simdbpe_dataset_free(ds);
        DIR *d = opendir(dir);
        cr_assert(d);
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            cr_assert(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
                          strcmp(e->d_name, "ds.bin.lock") == 0 ||
                          strcmp(e->d_name, "ds.idx.lock") == 0,
                      "%s left in the output folder", e->d_name);
        closedir(d);
    }
    for (int k = 0; k < 2; k++) {
        char *lock = path_in(dir, k ? "ds.idx.lock" : "ds.bin.lock");
        unlink(lock);
        free(lock);
    }
    cr_assert_eq(rmdir(dir), 0);
    free(out);
    free(dir);
    simdbpe_model_free(m);
}
