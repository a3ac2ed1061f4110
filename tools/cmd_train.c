/*
 * cmd_train.c - `simdbpe train`: train a GPT-2-style byte-level BPE
 * vocabulary from text files and write DIR/vocab.json + DIR/merges.txt.
 *
 *   simdbpe train --vocab-size N [--min-frequency F] [--special TOKEN]...
 *                 [--mode lines|documents] [--doc-separator S] [--threads N]
 *                 [--errors strict|replace] [-q] -o DIR FILE...
 *
 * A thin layer over simdbpe_train.h: this file owns arguments, reading the
 * files (in chunks, never whole), progress on a terminal and messages; the
 * library does the counting, the merging and the atomic writing.
 */
#include "cmd_train.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "simdbpe.h"
#include "simdbpe_dataset.h"
#include "simdbpe_train.h"

#include "cli.h"
#include "options.h"

#define EXIT_FAILED 1
#define EXIT_BAD_USAGE 2
#define READ_CHUNK ((size_t)1 << 20)

/* %s: the pre-tokenizer families (pretokenizer_names). */
static const char train_usage[] =
    "usage: simdbpe train --vocab-size N [OPTIONS] -o DIR FILE...\n"
    "\n"
    "Trains a byte-level BPE vocabulary, as HF tokenizers' BpeTrainer does, and\n"
    "writes DIR/vocab.json and DIR/merges.txt (GPT-2 layout: ids 0-255 the bytes,\n"
    "then merged tokens, then specials) and DIR/tokenizer.json (HF tokenizers\n"
    "loads it; `simdbpe encode -m DIR` reads it, with its pre-tokenizer).\n"
    "FILE \"-\" is standard input.\n"
    "\n"
    "Options:\n"
    "  --vocab-size N       tokens in all: 256 bytes + merged tokens + specials\n"
    "  --min-frequency F    stop when the best pair occurs fewer than F times\n"
    "  --special TOKEN      a special token (repeatable), given the last ids\n"
    "  --pre-tokenizer P    the family that splits text into words (default:\n"
    "                       the first): %s\n"
    "  --mode M             lines (default: each line with its newline is a\n"
    "                       sequence, as HF's train-from-files) | documents\n"
    "                       (each file, or each part between separators)\n"
    "  --doc-separator S    documents mode: text between documents; \\n \\t \\r\n"
    "                       \\\\ and \\xHH are understood (e.g. '\\n\\n')\n"
    "  --threads N          counting threads (default: one per CPU)\n"
    "  --errors E           strict (default: invalid UTF-8 is an error) |\n"
    "                       replace (invalid bytes -> U+FFFD)\n"
    "  -o, --output DIR     where to write (created if missing)\n"
    "  -q, --quiet          no progress and no summary\n"
    "  -h, --help           this text\n";

typedef struct train_args {
    simdbpe_train_options opts;
    const char **specials;
    size_t n_specials;
    char *separator;
    const char *output;
    int quiet;
    int have_vocab;
    char **files;
    int n_files;
} train_args;

/* The library's pre-tokenizer families, `sep` between them, `last`
 * before the last. */
static const char *pretokenizer_names(const char *sep, const char *last)
{
    static char out[256];
    size_t len = 0;
    const char *name;
    out[0] = '\0';
    for (size_t k = 0; (name = simdbpe_pretokenizer_name_at(k)) && len < sizeof out; k++) {
        const char *before = k == 0 ? "" : simdbpe_pretokenizer_name_at(k + 1) ? sep : last;
        int w = snprintf(out + len, sizeof out - len, "%s%s", before, name);
        len += w > 0 ? (size_t)w : 0;
    }
    return out;
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "simdbpe train: %s%s%s%s\nTry 'simdbpe train --help'.\n", what,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return EXIT_BAD_USAGE;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static const opt_spec train_options[] = {
    {"--vocab-size", 0, 1}, {"--min-frequency", 0, 1}, {"--special", 0, 1},
    {"--mode", 0, 1},       {"--doc-separator", 0, 1}, {"--threads", 0, 1},
    {"--errors", 0, 1},     {"--output", 'o', 1},      {"--quiet", 'q', 0},
    {"--pre-tokenizer", 0, 1}, {NULL, 0, 0}};

/* Applies one option or file (opt_fn of options.h); returns 0 or an exit
 * code. */
static int apply_option(void *ctx, const char *name, const char *val)
{
    train_args *a = ctx;
    uint64_t v;
    if (!name) {
        a->files[a->n_files++] = (char *)val; /* an element of argv */
    } else if (strcmp(name, "--vocab-size") == 0) {
        if (parse_u64(val, UINT32_MAX, &v))
            return usage_error("--vocab-size needs a whole number, not", val);
        a->opts.vocab_size = (uint32_t)v;
        a->have_vocab = 1;
    } else if (strcmp(name, "--min-frequency") == 0) {
        if (parse_u64(val, UINT64_MAX, &v))
            return usage_error("--min-frequency needs a whole number, not", val);
        a->opts.min_frequency = v;
    } else if (strcmp(name, "--special") == 0) {
        a->specials[a->n_specials++] = val;
    } else if (strcmp(name, "--pre-tokenizer") == 0) {
        const char *family;
        for (size_t k = 0; (family = simdbpe_pretokenizer_name_at(k)); k++)
            if (strcmp(val, family) == 0)
                break;
        if (!family) {
            char what[256];
            snprintf(what, sizeof what, "--pre-tokenizer is %s, not",
                     pretokenizer_names(", ", " or "));
            return usage_error(what, val);
        }
        a->opts.pre_tokenizer = family;
    } else if (strcmp(name, "--mode") == 0) {
        if (strcmp(val, "lines") == 0)
            a->opts.mode = SIMDBPE_TRAIN_LINES;
        else if (strcmp(val, "documents") == 0)
            a->opts.mode = SIMDBPE_TRAIN_DOCUMENTS;
        else
            return usage_error("--mode is lines or documents, not", val);
    } else if (strcmp(name, "--doc-separator") == 0) {
        free(a->separator);
        a->separator = malloc(strlen(val) + 1);
        long n = a->separator ? cli_unescape(val, a->separator) : -1;
        if (n <= 0)
            return usage_error("--doc-separator: empty or a bad escape in", val);
        a->opts.doc_separator = a->separator;
        a->opts.doc_separator_len = (size_t)n;
    } else if (strcmp(name, "--threads") == 0) {
        if (parse_u64(val, 1024, &v) || v == 0)
            return usage_error("--threads needs a number from 1 to 1024, not", val);
        a->opts.threads = (unsigned)v;
    } else if (strcmp(name, "--errors") == 0) {
        if (strcmp(val, "strict") == 0)
            a->opts.errors = SIMDBPE_UTF8_STRICT;
        else if (strcmp(val, "replace") == 0)
            a->opts.errors = SIMDBPE_UTF8_REPLACE;
        else
            return usage_error("--errors is strict or replace, not", val);
    } else if (strcmp(name, "--output") == 0) {
        a->output = val;
    } else { /* --quiet */
        a->quiet = 1;
    }
    return 0;
}

/* Returns 0, OPT_HELP (the help was printed) or an exit code. */
static int parse_args(int argc, char **argv, train_args *a)
{
    char help[sizeof train_usage + 256];
    snprintf(help, sizeof help, train_usage, pretokenizer_names(" | ", " | "));
    const opt_command cmd = {NULL, train_options, help, "simdbpe train",
                             "Try 'simdbpe train --help'.\n"};
    simdbpe_train_options_init(&a->opts);
    a->specials = calloc((size_t)argc + 1, sizeof *a->specials);
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (!a->specials || !a->files)
        return usage_error("out of memory", NULL);
    int rc = opt_parse(&cmd, argc - 1, argv + 1, apply_option, a);
    if (rc)
        return rc;
    if (!a->have_vocab)
        return usage_error("--vocab-size N is required", NULL);
    if (!a->output)
        return usage_error("-o DIR is required", NULL);
    if (a->n_files == 0)
        return usage_error("no input files (use - for standard input)", NULL);
    if (a->opts.doc_separator && a->opts.mode != SIMDBPE_TRAIN_DOCUMENTS)
        return usage_error("--doc-separator needs --mode documents", NULL);
    a->opts.specials = a->specials;
    a->opts.n_specials = a->n_specials;
    return 0;
}

/* The model's files must not be one of the inputs (by device and inode):
 * `train -o DIR DIR/merges.txt` would replace its own corpus. Returns 0 or
 * an exit code after the message. */
static int output_not_input(const train_args *a)
{
    static const char *const names[] = {"vocab.json", "merges.txt", "special_tokens"};
    for (int k = 0; k < 3; k++) {
        char path[4096];
        struct stat out, in;
        snprintf(path, sizeof path, "%s/%s", a->output, names[k]);
        if (stat(path, &out) != 0)
            continue;
        for (int i = 0; i < a->n_files; i++)
            if (strcmp(a->files[i], "-") && stat(a->files[i], &in) == 0 &&
                in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
                fprintf(stderr, "simdbpe train: %s is the input %s: writing the model would "
                                "destroy the input; choose another -o\n",
                        path, a->files[i]);
                return EXIT_BAD_USAGE;
            }
    }
    return 0;
}

/* ------------------------------------------------------------- progress */

typedef struct progress_state {
    double start;
    int shown; /* a progress line is on the terminal */
} progress_state;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Rewrites one status line on the terminal (stderr). */
static void on_progress(const simdbpe_train_progress *p, void *user)
{
    progress_state *ps = user;
    double secs = now_seconds() - ps->start;
    if (p->stage == SIMDBPE_TRAIN_COUNTING)
        fprintf(stderr, "\r\033[Kcounting: %.1f MB, %.1f MB/s", (double)p->bytes / 1e6,
                secs > 0 ? (double)p->bytes / 1e6 / secs : 0.0);
    else
        fprintf(stderr, "\r\033[Kmerging: %llu / %llu merges, count %llu (%llu unique words)",
                (unsigned long long)p->merges_done, (unsigned long long)p->merges_target,
                (unsigned long long)p->last_count, (unsigned long long)p->unique_words);
    fflush(stderr);
    ps->shown = 1;
}

static void clear_progress(progress_state *ps)
{
    if (ps->shown)
        fputs("\r\033[K", stderr);
    ps->shown = 0;
}

/* ---------------------------------------------------------------- input */

static const char *display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static void report_error(const char *path, const simdbpe_error *err, simdbpe_status st)
{
    const char *msg = err->message[0] ? err->message : simdbpe_strerror(st);
    if (path)
        fprintf(stderr, "simdbpe train: %s: %s\n", display_name(path), msg);
    else
        fprintf(stderr, "simdbpe train: %s\n", msg);
}

/* Streams one file into the trainer in chunks. */
/* Feeds one input, decompressed like encode's (.gz and .zst detected by
 * content: simdbpe_dataset_input). */
static int feed_file(simdbpe_trainer *t, const char *path, char *buf, progress_state *ps,
                     uint64_t *bytes)
{
    simdbpe_dataset_input *src;
    simdbpe_error err;
    if (simdbpe_dataset_input_open(path, &src, &err) != SIMDBPE_OK) {
        clear_progress(ps);
        fprintf(stderr, "simdbpe train: %s: %s\n", display_name(path), err.message);
        return EXIT_FAILED;
    }
    simdbpe_status st = SIMDBPE_OK;
    int rc = 0;
    for (;;) {
        long got = simdbpe_dataset_input_read(src, buf, READ_CHUNK, &err);
        if (got < 0) {
            clear_progress(ps);
            fprintf(stderr, "simdbpe train: %s: %s\n", display_name(path), err.message);
            rc = EXIT_FAILED;
            break;
        }
        if (got == 0) {
            st = simdbpe_trainer_end_stream(t, &err);
            break;
        }
        *bytes += (uint64_t)got;
        st = simdbpe_trainer_feed(t, buf, (size_t)got, &err);
        if (st != SIMDBPE_OK)
            break;
    }
    simdbpe_dataset_input_close(src);
    if (rc == 0 && st != SIMDBPE_OK) {
        clear_progress(ps);
        report_error(path, &err, st);
        rc = EXIT_FAILED;
    }
    return rc;
}

/* ----------------------------------------------------------------- main */

static int run(train_args *a)
{
    progress_state ps = {now_seconds(), 0};
    if (!a->quiet && isatty(STDERR_FILENO)) {
        a->opts.progress = on_progress;
        a->opts.progress_user = &ps;
    }
    simdbpe_error err;
    simdbpe_trainer *t;
    simdbpe_status st = simdbpe_trainer_new(&a->opts, &t, &err);
    if (st != SIMDBPE_OK) {
        report_error(NULL, &err, st);
        return st == SIMDBPE_ERR_INVALID_ARG ? EXIT_BAD_USAGE : EXIT_FAILED;
    }
    char *buf = malloc(READ_CHUNK);
    int rc = buf ? 0 : EXIT_FAILED;
    if (!buf)
        fprintf(stderr, "simdbpe train: out of memory\n");
    uint64_t bytes = 0;
    for (int i = 0; i < a->n_files && rc == 0; i++)
        rc = feed_file(t, a->files[i], buf, &ps, &bytes);
    free(buf);
    double t_count = now_seconds();
    if (rc == 0) {
        st = simdbpe_trainer_train(t, &err);
        if (st == SIMDBPE_OK)
            st = simdbpe_trainer_save(t, a->output, &err);
        clear_progress(&ps);
        if (st != SIMDBPE_OK) {
            report_error(NULL, &err, st);
            rc = EXIT_FAILED;
        }
    }
    double t_end = now_seconds();
    if (rc == 0 && !a->quiet && isatty(STDERR_FILENO)) /* else nothing on success */
        fprintf(stderr,
                "simdbpe train: %zu merges, %u tokens, %llu unique words from %.1f MB in "
                "%.2f s (counting %.2f s, merging %.2f s) -> %s\n",
                simdbpe_trainer_merge_count(t), simdbpe_trainer_vocab_size(t),
                (unsigned long long)simdbpe_trainer_unique_words(t),
                (double)bytes / 1e6, t_end - ps.start, t_count - ps.start, t_end - t_count, a->output);
    simdbpe_trainer_free(t);
    return rc;
}

int simdbpe_cmd_train(int argc, char **argv)
{
    train_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc == 0)
        rc = output_not_input(&a);
    if (rc == 0)
        rc = run(&a);
    else if (rc == OPT_HELP)
        rc = 0;
    free(a.specials);
    free(a.files);
    free(a.separator);
    return rc;
}
