/*
 * cmd_encode.c - `simdbpe encode` and `simdbpe count`: arguments,
 * messages, the progress line and the summary JSON around one run of the
 * library's dataset engine (simdbpe_dataset.h).
 *
 * The issue-2 contract is the default: each FILE (stdin when none) is one
 * document, text output is one line of decimal ids per document, u16/u32
 * are bare little-endian ids, errors name the file, line and byte offset
 * and exit 1. Everything about datasets (JSON Lines, compressed input, shards,
 * Megatron/llm.c/datatrove outputs, threads, ranks) is opt-in.
 * Per-format defaults (--eot, --dtype) are the library's.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simdbpe.h"
#include "simdbpe_dataset.h"

#include "cli.h"
#include "inputs.h"
#include "model_open.h"
#include "options.h"
#include "progress.h"
#include "ranks.h"

typedef struct encode_opts {
    int count; /* `simdbpe count` */
    const char *model;
    simdbpe_input_format in_mode;
    const char *json_key; /* NULL: not given */
    const char *sep_arg;
    simdbpe_output_format format; /* SIMDBPE_OUTPUT_TEXT unless given */
    const char *output;
    simdbpe_eot eot; /* SIMDBPE_EOT_DEFAULT unless given */
    const char *eot_token; /* --eot-token, or NULL */
    int width; /* --dtype: 2, 4, or 0 = the format's default */
    uint64_t shard_tokens;
    int shard_tokens_set;
    simdbpe_encode_options enc;
    int skip_errors;
    long threads;
    unsigned cache_mb; /* --cache-mb, or 0 */
    long rank, world;
    const char *summary;
    int quiet;
    uint64_t batch_bytes;
    char **args;
    int n_args;
} encode_opts;

/* ------------------------------------------------------------- options */

/* The ranges of the count options, for their checks and messages.
 * --batch-bytes stops at 1 GiB: every batch in flight is allocated at that
 * size (a 1 TiB batch ended in a bare "out of memory"). */
#define MAX_THREADS 1024
#define MAX_BATCH_BYTES ((uint64_t)1 << 30)
static const struct {
    const char *name;
    uint64_t lo, hi;
} ranges[] = {{"--threads", 1, MAX_THREADS},        {"--cache-mb", 1, 65536},
              {"--rank", 0, 1000000},               {"--world-size", 1, 1000000},
              {"--batch-bytes", 16, MAX_BATCH_BYTES}, {"--shard-tokens", 1, INT32_MAX},
              {NULL, 0, 0}};

/* A count option within [lo, hi]. Returns 0, or -1 if it is not one. */
static int count_in(const char *val, uint64_t lo, uint64_t hi, uint64_t *out)
{
    return cli_parse_count(val, out) || *out < lo || *out > hi ? -1 : 0;
}

/* A name from `names`; its index, or -1 (the caller reports it). */
static int choice(const char *val, const char *const *names, int *out)
{
    *out = cli_pick(val, names);
    return *out < 0 ? -1 : 0;
}

static const char *const special_names[] = {"text", "allow", "error", NULL};
static const char *const error_names[] = {"strict", "replace", NULL};
static const char *const on_error_names[] = {"stop", "skip", NULL};
static const char *const dtype_names[] = {"u16", "u32", NULL};

/* Options of encode and count; those from --output-format on are for
 * encode only. -h and --help are answered by the parser. */
static const opt_spec encode_options[] = {
    {"--model", 'm', 1},       {"--output", 'o', 1},       {"--quiet", 'q', 0},
    {"--json-key", 0, 1},      {"--doc-separator", 0, 1},  {"--summary", 0, 1},
    {"--input-format", 0, 1},  {"--special", 0, 1},        {"--errors", 0, 1},
    {"--on-error", 0, 1},      {"--threads", 0, 1},        {"--rank", 0, 1},
    {"--world-size", 0, 1},    {"--batch-bytes", 0, 1},    {"--output-format", 0, 1},
    {"--eot", 0, 1},           {"--eot-token", 0, 1},      {"--dtype", 0, 1},
    {"--shard-tokens", 0, 1},
    {"--cache-mb", 0, 1},      {"--add-special-tokens", 0, 0}, {NULL, 0, 0}};

/* Options of encode and count. Returns 0 (set), -1 (bad value) or 1 (not
 * one of these options). */
static int set_common(encode_opts *o, const char *name, const char *val)
{
    uint64_t n = 0;
    int v = 0, bad = 0;
    if (!strcmp(name, "--model"))
        o->model = val;
    else if (!strcmp(name, "--output"))
        o->output = val;
    else if (!strcmp(name, "--quiet"))
        o->quiet = 1;
    else if (!strcmp(name, "--json-key"))
        o->json_key = val;
    else if (!strcmp(name, "--doc-separator"))
        o->sep_arg = val;
    else if (!strcmp(name, "--summary"))
        o->summary = val;
    else if (!strcmp(name, "--input-format"))
        bad = simdbpe_input_format_of(val, &o->in_mode) ? -1 : 0;
    else if (!strcmp(name, "--special") && !(bad = choice(val, special_names, &v)))
        o->enc.special = (simdbpe_special_policy)v;
    else if (!strcmp(name, "--errors") && !(bad = choice(val, error_names, &v)))
        o->enc.errors = (simdbpe_utf8_policy)v;
    else if (!strcmp(name, "--add-special-tokens"))
        o->enc.add_special_tokens = 1;
    else if (!strcmp(name, "--on-error"))
        bad = choice(val, on_error_names, &o->skip_errors);
    else if (!strcmp(name, "--threads") && !(bad = count_in(val, 1, MAX_THREADS, &n)))
        o->threads = (long)n;
    else if (!strcmp(name, "--cache-mb") && !(bad = count_in(val, 1, 65536, &n)))
        o->cache_mb = (unsigned)n;
    else if (!strcmp(name, "--rank") && !(bad = count_in(val, 0, 1000000, &n)))
        o->rank = (long)n;
    else if (!strcmp(name, "--world-size") && !(bad = count_in(val, 1, 1000000, &n)))
        o->world = (long)n;
    else if (!strcmp(name, "--batch-bytes"))
        bad = count_in(val, 16, MAX_BATCH_BYTES, &o->batch_bytes);
    else if (!bad)
        return 1;
    return bad;
}

/* Options of encode only; returns 0 (set) or -1 (bad value). */
static int set_encode_only(encode_opts *o, const char *name, const char *val)
{
    int v = 0, bad = 0;
    if (!strcmp(name, "--output-format"))
        bad = simdbpe_output_format_of(val, &o->format) ? -1 : 0;
    else if (!strcmp(name, "--eot"))
        bad = simdbpe_eot_of(val, &o->eot) ? -1 : 0;
    else if (!strcmp(name, "--eot-token"))
        o->eot_token = val;
    else if (!strcmp(name, "--dtype") && !(bad = choice(val, dtype_names, &v)))
        o->width = v == 0 ? 2 : 4;
    else if (!strcmp(name, "--shard-tokens")) {
        bad = count_in(val, 1, INT32_MAX, &o->shard_tokens);
        o->shard_tokens_set = 1;
    }
    return bad;
}

/* One option or input (opt_fn of options.h). */
static int set_option(void *ctx, const char *name, const char *val)
{
    encode_opts *o = ctx;
    if (!name) {
        o->args[o->n_args++] = (char *)val; /* an element of argv */
        return 0;
    }
    int r = set_common(o, name, val);
    if (r == 1) {
        r = set_encode_only(o, name, val);
        if (o->count)
            return cli_usage_error("option '%s' is for encode, not count", name);
    }
    for (int i = 0; r < 0 && ranges[i].name; i++)
        if (!strcmp(name, ranges[i].name))
            return cli_usage_error("bad value '%s' for %s: give a whole number from %llu to %llu",
                                   val, name, (unsigned long long)ranges[i].lo,
                                   (unsigned long long)ranges[i].hi);
    if (r < 0)
        return cli_usage_error("bad value '%s' for %s", val, name);
    return 0;
}

/* Returns 0, OPT_HELP (the help was printed) or an exit code. */
static int parse_args(encode_opts *o, int is_count, int argc, char **argv)
{
    opt_command cmd = {is_count ? "count" : "encode", encode_options,
                       is_count ? cli_count_help : cli_encode_help, "simdbpe", CLI_USAGE_HINT};
    static const simdbpe_encode_options enc = SIMDBPE_ENCODE_OPTIONS_INIT;
    memset(o, 0, sizeof *o);
    o->enc = enc;
    o->count = is_count;
    o->model = "gpt2";
    o->format = SIMDBPE_OUTPUT_TEXT;
    o->eot = SIMDBPE_EOT_DEFAULT;
    o->rank = o->world = -1;
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args)
        return cli_usage_error("out of memory");
    return opt_parse(&cmd, argc, argv, set_option, o);
}

/* ------------------------------------------------------------- checks */

/* The library's options from the command line's. Returns 0 or an exit
 * code. */
static int dataset_options(const encode_opts *o, const rank_info *rank, simdbpe_dataset_options *d,
                           char **sep)
{
    simdbpe_dataset_options_init(d);
    d->input_format = o->in_mode;
    d->json_key = o->json_key;
    d->encode = o->enc;
    d->skip_errors = o->skip_errors;
    d->output_format = o->count ? SIMDBPE_OUTPUT_COUNT : o->format;
    d->output = o->output;
    d->eot = o->eot;
    d->eot_token = o->eot_token;
    d->dtype_bytes = (unsigned)o->width;
    d->shard_tokens = o->shard_tokens_set ? o->shard_tokens : 0;
    d->model_name = o->model;
    d->threads = (unsigned)o->threads;
    d->cache_mb = o->cache_mb;
    d->batch_bytes = (size_t)o->batch_bytes;
    d->rank = rank->active ? rank->rank : 0;
    d->world_size = rank->active ? rank->world : 0;
    d->doc_separator = o->sep_arg; /* the library says it is for text input */
    d->doc_separator_len = o->sep_arg ? strlen(o->sep_arg) : 0;
    if (o->sep_arg && o->in_mode == SIMDBPE_INPUT_TEXT) {
        *sep = malloc(strlen(o->sep_arg) + 1);
        long n = *sep ? cli_unescape(o->sep_arg, *sep) : -1;
        if (n <= 0)
            return cli_usage_error("bad --doc-separator '%s' (empty, or a bad \\ escape)",
                                   o->sep_arg);
        d->doc_separator = *sep;
        d->doc_separator_len = (size_t)n;
    }
    return 0;
}

/* ------------------------------------------------------------- results */

/* A message as a JSON string: file names are bytes, and a byte that is not
 * part of well-formed UTF-8 is written as \xNN (a JSON string cannot hold
 * it), so that no skipped document drops out of the list. */
static json_t *message_json(const char *msg)
{
    json_t *j = json_string(msg);
    if (j)
        return j;
    const unsigned char *s = (const unsigned char *)msg;
    size_t n = strlen(msg), k = 0;
    char *out = malloc(4 * n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        /* jansson takes a string only when it is well-formed UTF-8, so the
         * one length (1-4) it takes at i is that of the sequence there. */
        size_t len = 0;
        for (size_t m = 1; !len && m <= 4 && m <= n - i; m++) {
            json_t *one = json_stringn((const char *)s + i, m);
            if (one)
                len = m;
            json_decref(one);
        }
        if (len) {
            memcpy(out + k, s + i, len);
            k += len;
            i += len;
        } else {
            k += (size_t)sprintf(out + k, "\\x%02X", s[i++]);
        }
    }
    out[k] = '\0';
    j = json_string(out);
    free(out);
    return j;
}

/* The one line a terminal gets at the end. */
static void print_summary_line(const encode_opts *o, const simdbpe_dataset_result *t)
{
    double mbs = t->seconds > 0 ? (double)t->bytes / t->seconds / 1e6 : 0;
    cli_error("%s %llu document%s, %llu tokens, %.1f MB in %.2f s (%.1f MB/s, %u thread%s)%s",
              o->count ? "counted" : "encoded", (unsigned long long)t->documents,
              t->documents == 1 ? "" : "s", (unsigned long long)t->tokens,
              (double)t->bytes / 1e6, t->seconds, mbs, t->threads, t->threads == 1 ? "" : "s",
              t->skipped ? "; some skipped (--summary FILE lists them)" : "");
}

static int print_summary(const encode_opts *o, const simdbpe_dataset_result *t,
                         const rank_info *r, simdbpe_dataset_file_out *out, json_t *notices)
{
    if (!o->summary) {
        if (!o->quiet && isatty(STDERR_FILENO))
            print_summary_line(o, t);
        return 0;
    }
    json_t *skips = json_array();
    for (size_t i = 0; skips && i < t->n_skipped_documents; i++)
        json_array_append_new(skips, message_json(t->skipped_documents[i]));
    double mbs = t->seconds > 0 ? (double)t->bytes / t->seconds / 1e6 : 0;
    const char *format = simdbpe_output_format_name(t->output_format);
    json_t *s = json_pack("{sssIsIsIsIsfsfsIsosbsisssssi}", "command", o->count ? "count" : "encode",
                          "documents", (json_int_t)t->documents, "tokens", (json_int_t)t->tokens,
                          "bytes", (json_int_t)t->bytes, "text_bytes",
                          (json_int_t)t->text_bytes, "seconds", t->seconds, "mb_per_s", mbs,
                          "skipped", (json_int_t)t->skipped, "skipped_documents", skips,
                          "skipped_list_complete", t->skipped <= t->n_skipped_documents, "files",
                          (int)t->n_files, "format", format, "kernel", t->kernel ? t->kernel : "",
                          "threads", (int)t->threads);
    if (s)
        json_object_set_new(s, "cache_mb", json_integer((json_int_t)t->cache_mb));
    long rss = cli_peak_rss_kb();
    if (s)
        json_object_set_new(s, "cuts", json_integer((json_int_t)t->cuts));
    if (s && t->eot != SIMDBPE_EOT_NONE && t->output_format != SIMDBPE_OUTPUT_COUNT)
        json_object_set_new(s, "eot_token", json_integer((json_int_t)t->eot_id));
    if (s)
        json_object_set(s, "notices", notices);
    if (s && rss >= 0)
        json_object_set_new(s, "peak_rss_kb", json_integer(rss));
    if (s && r->active) {
        json_object_set_new(s, "rank", json_integer(r->rank));
        json_object_set_new(s, "world_size", json_integer(r->world));
    }
    char *text = s ? json_dumps(s, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(s);
    if (!text) {
        cli_error("out of memory");
        return EXIT_FAIL;
    }
    int rc = 0;
    if (!strcmp(o->summary, "-")) {
        fprintf(stderr, "%s\n", text);
    } else {
        /* `out` was opened before the encode, so that a summary path that
         * cannot be written fails before any work. */
        simdbpe_error err;
        simdbpe_dataset_file_write(out, text, strlen(text));
        simdbpe_dataset_file_write(out, "\n", 1);
        if (simdbpe_dataset_file_commit(out, &err) != SIMDBPE_OK) {
            cli_error("%s: %s", o->summary, err.message);
            rc = EXIT_FAIL;
        }
    }
    free(text);
    return rc;
}

/* Whether paths a and b name one existing file (device and inode). */
static int outputs_same(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* ----------------------------------------------------------------- run */

typedef struct run {
    encode_opts o;
    simdbpe_model *model;
    rank_info rank;
    file_list files;
    char *sep;
    simdbpe_dataset *ds;
    simdbpe_dataset_file_out *summary; /* --summary FILE, opened before the encode */
    progress *prog;
    int on_tty; /* standard error is a terminal (and not --quiet) */
    json_t *notices; /* what the run said on the way (in the summary) */
} run;

static void run_free(run *r)
{
    simdbpe_dataset_file_discard(r->summary); /* removes it unless it was committed */
    simdbpe_dataset_free(r->ds);
    inputs_free(&r->files);
    free(r->sep);
    simdbpe_model_free(r->model);
    json_decref(r->notices);
    free(r->o.args);
}

/* A notice: in the summary, and on a terminal. */
static void notice(run *r, const char *text)
{
    char *m = cli_flags(text);
    json_array_append_new(r->notices, json_string(m ? m : text));
    if (r->on_tty)
        cli_error("%s", m ? m : text);
    free(m);
}

/* Skipped documents (listed in the summary) and notices: on a terminal. */
static void on_message(void *user, simdbpe_dataset_event event, const char *text)
{
    run *r = user;
    if (event == SIMDBPE_DATASET_SKIPPED) {
        if (r->on_tty)
            cli_error("skipping %s", text);
    } else {
        notice(r, text);
    }
}

static int on_progress(void *user, uint64_t raw, uint64_t bytes, uint64_t docs)
{
    const run *r = user;
    progress_update(r->prog, raw, bytes, docs);
    return 0;
}

/* The exit code for a failure of the library (after printing it). */
static int failed(const run *r, simdbpe_status st, const simdbpe_error *err)
{
    cli_library_error(r->ds ? simdbpe_dataset_message(r->ds) : err->message);
    return st == SIMDBPE_ERR_INVALID_ARG || st == SIMDBPE_ERR_UNSUPPORTED ? EXIT_USAGE : EXIT_FAIL;
}

/* Options into a dataset object. Returns 0 or an exit code. */
static int configure(run *r)
{
    simdbpe_dataset_options d;
    int rc = rank_detect(r->o.rank, r->o.world, &r->rank);
    if (!rc)
        rc = dataset_options(&r->o, &r->rank, &d, &r->sep);
    if (rc)
        return rc;
    d.on_message = on_message;
    d.on_progress = on_progress;
    d.user = r;
    simdbpe_error err;
    simdbpe_status st = simdbpe_dataset_new(r->model, &d, &r->ds, &err);
    if (st == SIMDBPE_ERR_INVALID_ARG)
        return cli_library_usage_error(err.message);
    return st ? failed(r, st, &err) : 0;
}

/* Inputs, rank selection and output names. Returns 0, -1 (nothing to do),
 * or an exit code. */
static int prepare(run *r)
{
    int rc = inputs_expand(r->o.args, r->o.n_args, &r->files);
    if (rc)
        return rc;
    if (r->rank.active && (!r->o.output || !strcmp(r->o.output, "-")))
        return cli_usage_error("rank %ld of %ld (from %s): give -o, each rank writes its own files",
                               r->rank.rank, r->rank.world, r->rank.source);
    for (size_t i = 0; r->rank.world > 1 && i < r->files.n; i++)
        if (!strcmp(r->files.paths[i], "-"))
            return cli_usage_error("standard input cannot be shared by %ld ranks; name files",
                                   r->rank.world);
    simdbpe_error err;
    simdbpe_status st =
        simdbpe_dataset_prepare(r->ds, (const char *const *)r->files.paths, r->files.n, &err);
    if (st)
        return failed(r, st, &err);
    const char *victim = simdbpe_dataset_same_input(r->ds, r->o.summary);
    if (victim) {
        cli_error("--summary %s is the input %s: writing it would destroy the input; choose "
                  "another",
                  r->o.summary, victim);
        return EXIT_USAGE;
    }
    /* Files of the command's own that the run must not write over: the
     * summary, and the lists of @LIST arguments. */
    if (simdbpe_dataset_is_output(r->ds, r->o.summary)) {
        cli_error("--summary %s is one of the run's outputs (-o %s): choose another",
                  r->o.summary, r->o.output);
        return EXIT_USAGE;
    }
    for (int i = 0; i < r->o.n_args; i++) {
        const char *a = r->o.args[i];
        if (a[0] != '@' || !a[1])
            continue;
        int by_o = simdbpe_dataset_is_output(r->ds, a + 1);
        if (by_o || (r->o.summary && outputs_same(r->o.summary, a + 1))) {
            cli_error("the input list %s would be written over by %s %s: choose another", a,
                      by_o ? "-o" : "--summary", by_o ? r->o.output : r->o.summary);
            return EXIT_USAGE;
        }
    }
    if (!simdbpe_dataset_already_done(r->ds))
        return 0;
    if (r->on_tty) /* success: said on a terminal only */
        cli_error("rank %ld of %ld is already done (%s): nothing to do", r->rank.rank,
                  r->rank.world, simdbpe_dataset_marker_path(r->ds));
    return -1;
}

static int execute(run *r)
{
    cli_cleanup_on_signals();
    simdbpe_error err;
    if (r->o.summary && strcmp(r->o.summary, "-") &&
        simdbpe_dataset_file_open(r->o.summary, &r->summary, &err) != SIMDBPE_OK) {
        cli_error("%s: %s", r->o.summary, err.message);
        return EXIT_FAIL;
    }
    const simdbpe_dataset_result *t = simdbpe_dataset_result_of(r->ds);
    /* No progress line over ids printed to the same terminal. */
    int ids_on_tty = (!r->o.output || !strcmp(r->o.output, "-")) && isatty(STDOUT_FILENO);
    r->prog = progress_new(!r->o.quiet && !ids_on_tty, t->input_size);
    simdbpe_status st = simdbpe_dataset_run(r->ds, &err);
    progress_end(r->prog);
    r->prog = NULL;
    if (st) {
        cli_library_error(simdbpe_dataset_message(r->ds));
        return EXIT_FAIL;
    }
    return print_summary(&r->o, t, &r->rank, r->summary, r->notices);
}

int cmd_encode(const char *name, int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = parse_args(&r.o, !strcmp(name, "count"), argc, argv);
    if (rc == OPT_HELP) {
        run_free(&r);
        return 0;
    }
    r.on_tty = !r.o.quiet && isatty(STDERR_FILENO);
    r.notices = json_array();
    if (!rc && !r.notices)
        rc = cli_usage_error("out of memory");
    if (!rc)
        rc = cli_model_open(r.o.model, &r.model);
    /* What the model file asks for and is not applied (a tokenizer.json's
     * truncation and padding), said once. */
    if (!rc && *simdbpe_model_notice(r.model))
        notice(&r, simdbpe_model_notice(r.model));
    if (!rc)
        rc = configure(&r);
    if (!rc)
        rc = prepare(&r);
    if (rc == -1)
        rc = 0; /* this rank is already done */
    else if (!rc)
        rc = execute(&r);
    run_free(&r);
    return rc;
}
