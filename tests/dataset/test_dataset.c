/*
 * test_dataset.c - the dataset engine through its public API
 * (simdbpe_dataset.h), without the CLI.
 *
 * The ids written are the references' (tests/data/golden/stress.jsonl:
 * tiktoken 1.0.22 = HF tokenizers 0.23.2); skipped documents and progress
 * reach the callbacks and the result; a bad document's error names its
 * input, line and byte offset; an output over an input is refused; two
 * ranks merged give the bytes of one run; the files written get the mode
 * the umask gives.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "simdbpe_dataset.h"
#include "simdbpe_train.h"
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
    /* options named in the library's words (the fields), for each caller to spell */
    cr_assert_str_eq(err.message,
                     "`output_format` megatron writes several files: give `output` a prefix");
    simdbpe_dataset_options_init(&o);
    o.json_key = "content"; /* text input */
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_str_eq(err.message, "`json_key` is for `input_format` jsonl");
    simdbpe_dataset_options_init(&o);
    o.threads = 10000;
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert(strstr(err.message, "`threads` 10000 is above the limit of 1024"), "%s",
              err.message);
    /* an end of text the model does not have */
    simdbpe_dataset_options_init(&o);
    o.output_format = SIMDBPE_OUTPUT_U16;
    o.eot = SIMDBPE_EOT_APPEND;
    o.eot_token = "<|nope|>";
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_ERR_INVALID_ARG);
    o.eot_token = "50256";
    cr_assert_eq(simdbpe_dataset_new(m, &o, &ds, &err), SIMDBPE_OK, "%s", err.message);
    simdbpe_dataset_free(ds);
    ds = NULL;
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

/* Each value's name both ways, and no name past the last value. */
#define CHECK_NAMES(type, kind, last, ...)                                                         \
    do {                                                                                           \
        static const char *const names[] = {__VA_ARGS__};                                          \
        size_t n = sizeof names / sizeof names[0];                                                 \
        cr_assert_eq(n, (size_t)last + 1, #kind ": %zu names", n);                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            type v = (type)(last + 1);                                                             \
            cr_assert_str_eq(simdbpe_##kind##_name((type)i), names[i]);                            \
            cr_assert_eq(simdbpe_##kind##_of(names[i], &v), SIMDBPE_OK, "%s", names[i]);           \
            cr_assert_eq((size_t)v, i, "%s", names[i]);                                            \
        }                                                                                          \
        cr_assert_null(simdbpe_##kind##_name((type)(last + 1)));                                   \
    } while (0)

/* The names the CLI, Python and markers use, both ways, for every value
 * of the enums in simdbpe_dataset.h (listed here in the values' order). */
Test(dataset, names_of_formats_and_eot_modes_both_ways)
{
    CHECK_NAMES(simdbpe_output_format, output_format, SIMDBPE_OUTPUT_COUNT, "text", "u16", "u32",
                "llmc", "megatron", "datatrove", "count");
    CHECK_NAMES(simdbpe_input_format, input_format, SIMDBPE_INPUT_JSONL, "text", "lines", "jsonl");
    CHECK_NAMES(simdbpe_eot, eot, SIMDBPE_EOT_PREPEND, "default", "none", "append", "prepend");
    cr_assert_eq(SIMDBPE_OUTPUT_U16, 1);
    cr_assert_eq(SIMDBPE_EOT_APPEND, 2);

    simdbpe_output_format f = SIMDBPE_OUTPUT_U32;
    cr_assert_eq(simdbpe_output_format_of("U16", &f), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_output_format_of(NULL, &f), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_output_format_of("u16", NULL), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(f, SIMDBPE_OUTPUT_U32, "a failed lookup leaves *out alone");
    simdbpe_eot e = SIMDBPE_EOT_NONE;
    cr_assert_eq(simdbpe_eot_of("", &e), SIMDBPE_ERR_INVALID_ARG);
}

/* --------------------------------------------------------------- files */

static mode_t mode_of(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
    return st.st_mode & 07777;
}

/* Every file the library writes gets the mode a new file gets under the
 * umask, as a shell's '>' gives it: a compiled model, a dataset output, a
 * trained model's files. */
Test(files, outputs_get_the_umask_mode)
{
    char *dir = temp_dir();
    mode_t old = umask(027);
    simdbpe_model *m;
    cr_assert_eq(simdbpe_model_open("gpt2", &m, NULL), SIMDBPE_OK);
    char *sbpe = path_in(dir, "m.sbpe");
    cr_assert_eq(simdbpe_model_save(m, sbpe, NULL), SIMDBPE_OK);
    cr_expect_eq(mode_of(sbpe), 0640, "model_save: %o", mode_of(sbpe));

    char *out = path_in(dir, "summary.json");
    simdbpe_dataset_file_out *f;
    cr_assert_eq(simdbpe_dataset_file_open(out, &f, NULL), SIMDBPE_OK);
    simdbpe_dataset_file_write(f, "{}\n", 3);
    cr_assert_eq(simdbpe_dataset_file_commit(f, NULL), SIMDBPE_OK);
    simdbpe_dataset_file_discard(f);
    cr_expect_eq(mode_of(out), 0640, "dataset file: %o", mode_of(out));

    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = 260;
    o.threads = 1;
    simdbpe_trainer *t;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_feed(t, "hello hello world\n", 18, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_end_stream(t, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_trainer_train(t, NULL), SIMDBPE_OK);
    char *model_dir = path_in(dir, "trained");
    cr_assert_eq(simdbpe_trainer_save(t, model_dir, NULL), SIMDBPE_OK);
    static const char *const names[] = {"vocab.json", "merges.txt", "tokenizer.json"};
    for (int i = 0; i < 3; i++) {
        char *p = path_in(model_dir, names[i]);
        cr_expect_eq(mode_of(p), 0640, "trainer's %s: %o", names[i], mode_of(p));
        unlink(p);
        free(p);
    }
    simdbpe_trainer_free(t);
    simdbpe_model_free(m);
    umask(old);
    rmdir(model_dir);
    unlink(sbpe);
    unlink(out);
    rmdir(dir);
    free(model_dir);
    free(sbpe);
    free(out);
    free(dir);
}

typedef struct creator {
    const char *dir;
    volatile int stop;
    int bad; /* files created with more than the umask allows */
} creator;

static void *create_files(void *arg)
{
    creator *c = arg;
    char *p = path_in(c->dir, "other");
    while (!c->stop) {
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0666);
        cr_assert(fd >= 0);
        struct stat st;
        fstat(fd, &st);
        c->bad += (st.st_mode & 0022) != 0;
        close(fd);
        unlink(p);
    }
    free(p);
    return NULL;
}

/* Opening outputs changes nothing another thread of the program sees: the
 * files it creates meanwhile keep the umask's mode (reading the umask with
 * umask(0); umask(mask) would leave some of them world-writable). */
Test(files, opening_outputs_leaves_other_threads_files_alone, .timeout = 60)
{
    char *dir = temp_dir();
    mode_t old = umask(022);
    creator c = {dir, 0, 0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, create_files, &c), 0);
    char *out = path_in(dir, "out.bin");
    /* 20,000 opens or 2 s, whichever comes first (a sanitizer build is
     * slower): reading the umask the old way showed within the first
     * thousand. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 20000 && !c.bad; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= 2)
            break;
        simdbpe_dataset_file_out *f;
        cr_assert_eq(simdbpe_dataset_file_open(out, &f, NULL), SIMDBPE_OK);
        simdbpe_dataset_file_discard(f);
    }
    c.stop = 1;
    pthread_join(th, NULL);
    umask(old);
    cr_expect_eq(c.bad, 0, "%d files of the other thread were group- or world-writable", c.bad);
    rmdir(dir);
    free(out);
    free(dir);
}
