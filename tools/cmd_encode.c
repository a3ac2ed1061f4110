/*
 * cmd_encode.c - `simdbpe encode` and `simdbpe count`: options, checks,
 * then one pipeline run (pipeline.h) into one writer (writer.h).
 *
 * The issue-2 contract is the default: each FILE (stdin when none) is one
 * document, text output is one line of decimal ids per document, u16/u32
 * are bare little-endian ids, errors name the file, line and byte offset
 * and exit 1. Everything bulk (JSON Lines, compressed input, shards,
 * Megatron/llm.c/datatrove outputs, threads, ranks) is opt-in.
 *
 * Per-format defaults: --eot is none for text/u16/u32, prepend for llmc,
 * append for megatron and datatrove; the id width is 2 bytes unless the
 * vocabulary needs more (Megatron's own rule: u16 only when vocab < 65500).
 */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbpe.h"

#include "cli.h"
#include "inputs.h"
#include "options.h"
#include "outfile.h"
#include "pipeline.h"
#include "progress.h"
#include "ranks.h"
#include "utf8.h"
#include "writer.h"

/* 128 KB: each batch in flight holds its text and its ids (~2.5x the
 * text), freshly faulted in the first time round; with 1 MB batches the six
 * in flight for two threads cost ~2,500 more page faults than one thread
 * (10-25 us each on these VMs). mixed.jsonl.zst, 2 threads / 1: 1 MB 1.71x,
 * 512 KB 1.82x, 256 KB 1.81x, 128 KB 1.84x (medians of 3). */
#define DEFAULT_BATCH_BYTES (128u << 10)
#define DEFAULT_SHARD_TOKENS 100000000u

typedef struct encode_opts {
    int count; /* `simdbpe count` */
    const char *model;
    int in_mode;
    const char *json_key; /* NULL: not given */
    const char *sep_arg;
    int format; /* out_format, or -1 = default */
    const char *output;
    int eot;   /* eot_mode, or -1 = the format's default */
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

static const char *const format_names[] = {"text",     "u16",       "u32", "llmc",
                                           "megatron", "datatrove", NULL};
static const char *const eot_names[] = {"none", "append", "prepend", NULL};

/* ------------------------------------------------------------- options */

/* The ranges of the count options, for their checks and messages.
 * --batch-bytes stops at 1 GiB: every batch in flight is allocated at that
 * size (a 1 TiB batch ended in a bare "out of memory"). */
#define MAX_THREADS 1024
#define MAX_BATCH_BYTES ((uint64_t)1 << 30)
static const struct {
    const char *name;
    uint64_t lo, hi;
} ranges[] = {{"--threads", 1, MAX_THREADS},        {"--cache-mb", 3, 96},
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

static const char *const in_names[] = {"text", "lines", "jsonl", NULL};
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
    {"--eot", 0, 1},           {"--dtype", 0, 1},          {"--shard-tokens", 0, 1},
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
        bad = choice(val, in_names, &o->in_mode);
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
    else if (!strcmp(name, "--cache-mb") && !(bad = count_in(val, 3, 96, &n)))
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
        bad = choice(val, format_names, &o->format);
    else if (!strcmp(name, "--eot") && !(bad = choice(val, eot_names, &v)))
        o->eot = v == 0 ? EOT_NONE : v == 1 ? EOT_APPEND : EOT_PREPEND;
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
    opt_command cmd = {is_count ? "count" : "encode", encode_options, cli_usage_text, "simdbpe",
                       CLI_USAGE_HINT};
    memset(o, 0, sizeof *o);
    o->count = is_count;
    o->model = "gpt2";
    o->format = o->eot = -1;
    o->rank = o->world = -1;
    o->batch_bytes = DEFAULT_BATCH_BYTES;
    o->shard_tokens = DEFAULT_SHARD_TOKENS;
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args)
        return cli_usage_error("out of memory");
    return opt_parse(&cmd, argc, argv, set_option, o);
}

/* ------------------------------------------------------------- checks */

static int default_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

/* Fills the writer configuration and checks the format's constraints. */
static int configure_output(const encode_opts *o, const simdbpe_model *m, writer_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    uint32_t vocab = simdbpe_model_vocab_size(m);
    out_format f = o->count ? FMT_COUNT : o->format < 0 ? FMT_TEXT : (out_format)o->format;
    cfg->format = f;
    cfg->output = o->output;
    cfg->model_name = o->model;
    cfg->shard_tokens = o->shard_tokens;
    int binary_set = f == FMT_LLMC || f == FMT_MEGATRON || f == FMT_DATATROVE;
    if (o->width && !binary_set)
        return cli_usage_error("--dtype is for llmc, megatron and datatrove; for raw ids use "
                               "--output-format u16 or u32");
    if (o->shard_tokens_set && f != FMT_LLMC)
        return cli_usage_error("--shard-tokens is for --output-format llmc");
    if (binary_set && (!o->output || !strcmp(o->output, "-")))
        return cli_usage_error("--output-format %s writes several files: give -o PREFIX",
                               format_names[f]);
    unsigned width = o->width;
    if (f == FMT_U16)
        width = 2;
    else if (f == FMT_U32)
        width = 4;
    else if (!width)
        width = (f == FMT_MEGATRON ? vocab < 65500 : vocab <= 65536) ? 2 : 4;
    if (width == 2 && vocab > 65536) {
        cli_error("u16 ids: the model has %u ids, more than fit in 16 bits; use u32", vocab);
        return EXIT_USAGE;
    }
    cfg->width = width;
    static const eot_mode defaults[] = {EOT_NONE, EOT_NONE, EOT_NONE, EOT_PREPEND,
                                        EOT_APPEND, EOT_APPEND, EOT_NONE};
    cfg->eot = o->eot >= 0 ? (eot_mode)o->eot : defaults[f];
    if (cfg->eot != EOT_NONE &&
        simdbpe_model_special_id(m, "<|endoftext|>", 13, &cfg->eot_id) != SIMDBPE_OK) {
        cli_error("--eot %s: the model has no <|endoftext|> token; use --eot none",
                  eot_names[cfg->eot]);
        return EXIT_USAGE;
    }
    return 0;
}

static int build_job(const encode_opts *o, const simdbpe_model *m, job *j)
{
    memset(j, 0, sizeof *j);
    j->model = m;
    j->enc = o->enc;
    j->mode = (input_mode)o->in_mode;
    j->skip_errors = o->skip_errors;
    /* A run that stops leaves no partial document on standard output. */
    j->hold_docs = o->skip_errors || !o->output || !strcmp(o->output, "-");
    j->quiet = o->quiet;
    j->batch_bytes = (size_t)o->batch_bytes;
    j->threads = o->threads ? (int)o->threads : default_threads();
    /* Each encoder's piece cache: the library's default (24 MB) for one
     * thread; 12 MB each for more, whose caches compete for the CPU's
     * shared one (one pass over the 100 MB English corpus on 2 threads:
     * 378.8 MB/s with 12 MB each, 353.1 with 24; 1 thread 220.7 and
     * 229.6, medians of 5). */
    j->cache_mb = o->cache_mb ? o->cache_mb : j->threads > 1 ? 12 : 0;
    if (o->json_key && j->mode != IN_JSONL)
        return cli_usage_error("--json-key is for --input-format jsonl");
    if (o->sep_arg && j->mode != IN_TEXT)
        return cli_usage_error("--doc-separator is for --input-format text");
    if (o->sep_arg) {
        char *sep = malloc(strlen(o->sep_arg) + 1);
        long n = sep ? cli_unescape(o->sep_arg, sep) : -1;
        if (n <= 0) {
            free(sep);
            return cli_usage_error("bad --doc-separator '%s' (empty, or a bad \\ escape)",
                                   o->sep_arg);
        }
        j->sep = (unsigned char *)sep;
        j->sep_len = (size_t)n;
    }
    if (j->mode == IN_JSONL && jsonl_key_parse(&j->key, o->json_key ? o->json_key : "text"))
        return cli_usage_error("bad --json-key '%s'", o->json_key);
    return 0;
}

/* ------------------------------------------------------------- results */

static const char *dtype_name(const writer_config *cfg)
{
    if (cfg->format == FMT_TEXT || cfg->format == FMT_COUNT)
        return "text";
    return cfg->width == 2 ? "u16" : "u32";
}

static int write_marker(const char *path, const rank_info *r, const writer_config *cfg,
                        const file_list *files, const uint64_t *index, uint64_t total_files,
                        const run_totals *t)
{
    marker m;
    memset(&m, 0, sizeof m);
    m.format = (char *)(cfg->format == FMT_COUNT ? "count" : format_names[cfg->format]);
    m.dtype = (char *)dtype_name(cfg);
    m.eot = (char *)eot_names[cfg->eot];
    m.rank = r->rank;
    m.world = r->world;
    m.total_files = total_files;
    m.docs = t->docs;
    m.tokens = t->tokens;
    m.skipped = t->skipped;
    m.n_files = files->n;
    m.files = calloc(files->n ? files->n : 1, sizeof *m.files);
    if (!m.files)
        return ENOMEM;
    for (size_t i = 0; i < files->n; i++) {
        m.files[i].index = index[i];
        m.files[i].path = files->paths[i];
        m.files[i].docs = t->files[i].docs;
        m.files[i].tokens = t->files[i].tokens;
        m.files[i].skipped = t->files[i].skipped;
    }
    int e = marker_write(path, &m);
    free(m.files);
    return e;
}

/* A finished rank: its marker exists and describes this very run. */
static int already_done(const char *path, const rank_info *r, const writer_config *cfg,
                        uint64_t total_files)
{
    marker m;
    char msg[600];
    int rc = marker_read(path, &m, msg, sizeof msg);
    if (rc == 1)
        return 0;
    if (rc < 0) {
        cli_error("%s; remove it to run this rank again", msg);
        return -1;
    }
    int same = !strcmp(m.format, cfg->format == FMT_COUNT ? "count" : format_names[cfg->format]) &&
               !strcmp(m.dtype, dtype_name(cfg)) && !strcmp(m.eot, eot_names[cfg->eot]) &&
               m.rank == r->rank && m.world == r->world && m.total_files == total_files;
    marker_free(&m);
    if (!same) {
        cli_error("%s was written by a different run (format, dtype, eot, rank, world size or "
                  "file count differ); remove it to run this rank again",
                  path);
        return -1;
    }
    return 1;
}

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
        unsigned cp;
        size_t len = utf8_decode(s, n, i, &cp);
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

static int print_summary(const encode_opts *o, const job *j, const writer_config *cfg,
                         const run_totals *t, const rank_info *r, outfile *out)
{
    json_t *skips = json_array();
    for (size_t i = 0; skips && i < t->n_skips; i++)
        json_array_append_new(skips, message_json(t->skips[i].what));
    double mbs = t->seconds > 0 ? (double)t->in_bytes / t->seconds / 1e6 : 0;
    json_t *s = json_pack("{sssIsIsIsIsfsfsIsosbsisssssi}", "command", o->count ? "count" : "encode",
                          "documents", (json_int_t)t->docs, "tokens", (json_int_t)t->tokens,
                          "bytes", (json_int_t)t->in_bytes, "text_bytes",
                          (json_int_t)t->text_bytes, "seconds", t->seconds, "mb_per_s", mbs,
                          "skipped", (json_int_t)t->skipped, "skipped_documents", skips,
                          "skipped_list_complete", t->skipped <= t->n_skips, "files",
                          (int)j->n_files, "format",
                          cfg->format == FMT_COUNT ? "count" : format_names[cfg->format],
                          "kernel", t->kernel ? t->kernel : "", "threads", j->threads);
    long rss = cli_peak_rss_kb();
    if (s)
        json_object_set_new(s, "cuts", json_integer((json_int_t)t->cuts));
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
    if (o->summary) {
        /* `out` was opened before the encode, so that a summary path that
         * cannot be written fails before any work. */
        outfile_write(out, text, strlen(text));
        outfile_write(out, "\n", 1);
        int e = outfile_close(out);
        if (!e)
            e = outfile_commit(out);
        if (e) {
            cli_error("%s: %s", o->summary, strerror(e));
            rc = EXIT_FAIL;
        }
    } else if (!o->quiet) {
        fprintf(stderr, "%s\n", text);
    }
    free(text);
    if (t->skipped)
        cli_error("%llu document%s skipped (listed in the summary)",
                  (unsigned long long)t->skipped, t->skipped == 1 ? "" : "s");
    return rc;
}

/* ----------------------------------------------------------------- run */

typedef struct run {
    encode_opts o;
    simdbpe_model *model;
    job j;
    writer_config cfg;
    rank_info rank;
    file_list files;
    uint64_t *index;
    uint64_t total_files;
    char *base, *marker_path;
    writer *w;
    outfile summary; /* --summary FILE, opened before the encode */
    outlock lock;    /* on the output name, held from open to commit */
    run_totals t;
} run;

static void run_free(run *r)
{
    outfile_discard(&r->summary); /* removes it unless it was committed */
    writer_free(r->w);
    run_totals_free(&r->t);
    free(r->base);
    free(r->marker_path);
    free(r->index);
    inputs_free(&r->files);
    jsonl_key_free(&r->j.key);
    free((void *)r->j.sep);
    simdbpe_model_free(r->model);
    free(r->o.args);
    outlock_release(&r->lock); /* last: after every output is committed or removed */
}

/* 1 (after the message) when `path` is one of the inputs, of any rank. */
static int is_an_input(const run *r, const char *path, const char *what)
{
    long i = path ? inputs_find_same(&r->files, path) : -1;
    if (i < 0)
        return 0;
    cli_error("%s %s is the input %s: writing it would destroy the input; choose another",
              what, path, r->files.paths[i]);
    return 1;
}

/* Refuses, before any work, an output that is one of the inputs (by device
 * and inode): `encode -o a.txt a.txt`, Megatron `-o e` reading e.bin, a
 * summary or marker over an input. The output names are the writers'. */
static int outputs_not_inputs(const run *r)
{
    static const char *const suffixes[][3] = {
        [FMT_TEXT] = {""}, [FMT_U16] = {""}, [FMT_U32] = {""}, [FMT_COUNT] = {""},
        [FMT_MEGATRON] = {".bin", ".idx"}, [FMT_DATATROVE] = {".ds", ".ds.index", ".ds.metadata"}};
    int bad = is_an_input(r, r->o.summary, "--summary") ||
              is_an_input(r, r->marker_path, "the rank's marker");
    const char *base = r->cfg.output;
    if (!base || !strcmp(base, "-"))
        return bad ? EXIT_USAGE : 0;
    size_t n = strlen(base);
    char *path = malloc(n + 32);
    if (!path)
        return cli_error("out of memory"), EXIT_FAIL;
    if (r->cfg.format == FMT_LLMC) {
        /* Shards that exist now: _val_000000, then _train_000001, ... */
        for (size_t k = 0; !bad; k++) {
            snprintf(path, n + 32, "%s_%s_%06zu.bin", base, k ? "train" : "val", k);
            if (access(path, F_OK) != 0)
                break;
            bad = is_an_input(r, path, "-o");
        }
    } else {
        int ds = r->cfg.format == FMT_DATATROVE && n > 3 && !strcmp(base + n - 3, ".ds");
        for (int k = 0; !bad && k < 3 && suffixes[r->cfg.format][k]; k++) {
            snprintf(path, n + 32, "%s%s", base, suffixes[r->cfg.format][k] + (ds ? 3 : 0));
            bad = is_an_input(r, path, "-o");
        }
    }
    free(path);
    return bad ? EXIT_USAGE : 0;
}

/* Inputs, rank selection and output names. Returns 0, -1 (nothing to do),
 * or an exit code. */
static int prepare(run *r)
{
    int rc = rank_detect(r->o.rank, r->o.world, &r->rank);
    if (!rc)
        rc = inputs_expand(r->o.args, r->o.n_args, &r->files);
    if (!rc)
        rc = inputs_check(&r->files);
    if (rc)
        return rc;
    r->total_files = r->files.n;
    if (r->rank.active && (!r->cfg.output || !strcmp(r->cfg.output, "-")))
        return cli_usage_error("rank %ld of %ld (from %s): give -o, each rank writes its own files",
                               r->rank.rank, r->rank.world, r->rank.source);
    for (size_t i = 0; r->rank.world > 1 && i < r->files.n; i++)
        if (!strcmp(r->files.paths[i], "-"))
            return cli_usage_error("standard input cannot be shared by %ld ranks; name files",
                                   r->rank.world);
    if (r->cfg.output && strcmp(r->cfg.output, "-")) {
        r->base = rank_base(&r->rank, r->cfg.output);
        if (!r->base)
            return cli_error("out of memory"), EXIT_FAIL;
        r->cfg.output = r->base;
    }
    if (r->rank.active) {
        r->marker_path = malloc(strlen(r->base) + 8);
        if (!r->marker_path)
            return cli_error("out of memory"), EXIT_FAIL;
        sprintf(r->marker_path, "%s.done", r->base);
    }
    rc = outputs_not_inputs(r);
    if (rc)
        return rc;
    if (inputs_select_rank(&r->files, (int)r->rank.rank, (int)r->rank.world, &r->index))
        return cli_error("out of memory"), EXIT_FAIL;
    if (!r->rank.active)
        return 0;
    int done = already_done(r->marker_path, &r->rank, &r->cfg, r->total_files);
    if (done < 0)
        return EXIT_FAIL;
    if (done) {
        if (!r->o.quiet)
            cli_error("rank %ld of %ld is already done (%s): nothing to do", r->rank.rank,
                      r->rank.world, r->marker_path);
        return -1;
    }
    return 0;
}

/* Finishes the outputs, renames them into place, then the marker. */
static int complete(run *r)
{
    int e = writer_finish(r->w);
    if (!e)
        e = writer_commit(r->w);
    if (e) {
        cli_error("cannot write %s: %s", r->w->err_path, strerror(e));
        writer_discard(r->w);
        return EXIT_FAIL;
    }
    if (r->marker_path) {
        e = write_marker(r->marker_path, &r->rank, &r->cfg, &r->files, r->index, r->total_files,
                         &r->t);
        if (e) {
            cli_error("%s: %s", r->marker_path, strerror(e));
            return EXIT_FAIL;
        }
    }
    return 0;
}

/* No more threads than the input has batches for: each costs an encoder
 * and two batches in flight (--threads 1000 took 4.2 GB for 36 bytes).
 * The bound allows for the small first batches (64 KB) and for inputs that
 * decompress to 16 times their size; unknown sizes (stdin) bound nothing. */
static void limit_threads(run *r)
{
    uint64_t total = inputs_total_size(&r->files);
    uint64_t unit = r->j.batch_bytes < (64u << 10) ? r->j.batch_bytes : 64u << 10;
    if (!total || total > UINT64_MAX / 16)
        return;
    uint64_t batches = total * 16 / unit + 1;
    if ((uint64_t)r->j.threads > batches)
        r->j.threads = (int)batches;
}

static int execute(run *r)
{
    outfile_signals_install();
    r->j.files = r->files.paths;
    r->j.n_files = r->files.n;
    limit_threads(r);
    r->cfg.files = r->files.paths;
    char err_path[512];
    int e = outlock_take(&r->lock, r->cfg.output, r->o.quiet);
    if (e == EBUSY) {
        cli_error("another run is writing %s (it holds %s.lock): wait for it to end, or choose "
                  "another -o",
                  r->cfg.output, r->cfg.output);
        return EXIT_FAIL;
    }
    /* Another failure (a missing directory) is reported by the writer,
     * which names its own file; the lock's is said only if it alone fails. */
    int lock_err = e;
    e = writer_open(&r->w, &r->cfg, err_path, sizeof err_path);
    if (e) {
        cli_error("%s: %s", err_path, strerror(e));
        return EXIT_FAIL;
    }
    if (lock_err) {
        cli_error("%s.lock: %s", r->cfg.output, strerror(lock_err));
        writer_discard(r->w);
        return EXIT_FAIL;
    }
    if (r->o.summary && (e = outfile_open(&r->summary, r->o.summary)) != 0) {
        cli_error("%s: %s", r->o.summary, strerror(e));
        writer_discard(r->w);
        return EXIT_FAIL;
    }
    /* No progress line over ids printed to the same terminal. */
    int ids_on_tty = (!r->cfg.output || !strcmp(r->cfg.output, "-")) && isatty(STDOUT_FILENO);
    progress *prog = progress_new(!r->o.quiet && !ids_on_tty, inputs_total_size(&r->files));
    int rc = pipeline_run(&r->j, r->w, prog, &r->t);
    progress_end(prog);
    if (rc) {
        writer_discard(r->w);
        return EXIT_FAIL;
    }
    rc = complete(r);
    if (!rc)
        rc = print_summary(&r->o, &r->j, &r->cfg, &r->t, &r->rank, &r->summary);
    return rc;
}

int cmd_encode(const char *name, int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    r.summary.fd = r.summary.slot = -1;
    r.lock = (outlock)OUTLOCK_INIT;
    int rc = parse_args(&r.o, !strcmp(name, "count"), argc, argv);
    if (rc == OPT_HELP) {
        run_free(&r);
        return 0;
    }
    simdbpe_error err;
    if (!rc && simdbpe_model_open(r.o.model, &r.model, &err) != SIMDBPE_OK) {
        cli_error("cannot load model: %s", err.message);
        rc = EXIT_FAIL;
    }
    if (!rc)
        rc = configure_output(&r.o, r.model, &r.cfg);
    if (!rc)
        rc = build_job(&r.o, r.model, &r.j);
    r.cfg.count_lines = r.j.mode != IN_TEXT || r.j.sep != NULL;
    if (!rc)
        rc = prepare(&r);
    if (rc == -1)
        rc = 0; /* this rank is already done */
    else if (!rc)
        rc = execute(&r);
    run_free(&r);
    return rc;
}
