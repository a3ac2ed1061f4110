/*
 * dataset.c - a dataset run's options, checks and inputs (see dataset.h
 * and simdbpe_dataset.h).
 *
 * Per-format defaults: EOT is none for text/u16/u32, prepend for llmc,
 * append for megatron and datatrove; the id width is 2 bytes unless the
 * vocabulary needs more (Megatron's own rule: u16 only when vocab < 65500).
 * The messages are those `simdbpe encode` prints, which is why they name
 * its options.
 */
#include "dataset.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "marker.h"

/* 128 KB: each batch in flight holds its text and its ids (~2.5x the
 * text), freshly faulted in the first time round; with 1 MB batches the six
 * in flight for two threads cost ~2,500 more page faults than one thread
 * (10-25 us each on these VMs). mixed.jsonl.zst, 2 threads / 1: 1 MB 1.71x,
 * 512 KB 1.82x, 256 KB 1.81x, 128 KB 1.84x (medians of 3). */
#define DEFAULT_BATCH_BYTES (128u << 10)
#define DEFAULT_SHARD_TOKENS 100000000u
/* Every batch in flight is allocated at the batch size (a 1 TiB batch
 * ended in a bare "out of memory"). */
#define MAX_BATCH_BYTES ((size_t)1 << 30)
#define MAX_THREADS 1024

const char *const simdbpe__ds_format_names[] = {"text",     "u16",       "u32",   "llmc",
                                                "megatron", "datatrove", "count", NULL};
const char *const simdbpe__ds_eot_names[] = {"none", "append", "prepend", NULL};

const char *simdbpe__ds_dtype_name(const writer_config *cfg)
{
    if (cfg->format == FMT_TEXT || cfg->format == FMT_COUNT)
        return "text";
    return cfg->width == 2 ? "u16" : "u32";
}

simdbpe_status simdbpe__ds_fail(simdbpe_dataset *ds, simdbpe_error *err, simdbpe_status st,
                                uint64_t index, uint64_t line, uint64_t byte_offset,
                                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    if (err) {
        err->status = st;
        err->index = index;
        err->line = line;
        err->byte_offset = byte_offset;
        snprintf(err->message, sizeof err->message, "%s", msg ? msg : "out of memory");
    }
    if (ds) {
        free(ds->message);
        ds->message = msg;
    } else {
        free(msg);
    }
    return st;
}

/* A failure of the options: no input or position is at fault. */
#define OPT_FAIL(ds, err, st, ...)                                                                 \
    simdbpe__ds_fail(ds, err, st, SIMDBPE_NO_POSITION, 0, SIMDBPE_NO_POSITION, __VA_ARGS__)

void simdbpe_dataset_options_init(simdbpe_dataset_options *o)
{
    static const simdbpe_encode_options encode = SIMDBPE_ENCODE_OPTIONS_INIT;
    memset(o, 0, sizeof *o);
    o->encode = encode;
}

int simdbpe__ds_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

/* The writer configuration, checked against the model. */
static simdbpe_status configure_output(simdbpe_dataset *ds, simdbpe_error *err)
{
    const simdbpe_dataset_options *o = &ds->opts;
    writer_config *cfg = &ds->cfg;
    uint32_t vocab = simdbpe_model_vocab_size(ds->model);
    out_format f = (out_format)o->output_format;
    cfg->format = f;
    cfg->output = ds->output;
    cfg->model_name = ds->model_name;
    cfg->shard_tokens = o->shard_tokens ? o->shard_tokens : DEFAULT_SHARD_TOKENS;
    int binary_set = f == FMT_LLMC || f == FMT_MEGATRON || f == FMT_DATATROVE;
    if ((unsigned)f > FMT_COUNT || (o->dtype_bytes && o->dtype_bytes != 2 && o->dtype_bytes != 4) ||
        (unsigned)o->eot > SIMDBPE_EOT_PREPEND || o->shard_tokens > INT32_MAX)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "bad output format, dtype, eot or "
                                                          "shard size");
    if (o->dtype_bytes && !binary_set)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "--dtype is for llmc, megatron and datatrove; for raw ids use "
                        "--output-format u16 or u32");
    if (o->shard_tokens && f != FMT_LLMC)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "--shard-tokens is for --output-format llmc");
    if (binary_set && (!o->output || !strcmp(o->output, "-")))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "--output-format %s writes several files: give -o PREFIX",
                        simdbpe__ds_format_names[f]);
    unsigned width = o->dtype_bytes;
    if (f == FMT_U16)
        width = 2;
    else if (f == FMT_U32)
        width = 4;
    else if (!width)
        width = (f == FMT_MEGATRON ? vocab < 65500 : vocab <= 65536) ? 2 : 4;
    if (width == 2 && vocab > 65536)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_UNSUPPORTED,
                        "u16 ids: the model has %u ids, more than fit in 16 bits; use u32", vocab);
    cfg->width = width;
    static const eot_mode defaults[] = {EOT_NONE, EOT_NONE, EOT_NONE, EOT_PREPEND,
                                        EOT_APPEND, EOT_APPEND, EOT_NONE};
    cfg->eot = o->eot != SIMDBPE_EOT_DEFAULT ? (eot_mode)(o->eot - 1) : defaults[f];
    if (cfg->eot != EOT_NONE &&
        simdbpe_model_special_id(ds->model, "<|endoftext|>", 13, &cfg->eot_id) != SIMDBPE_OK)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_UNSUPPORTED,
                        "--eot %s: the model has no <|endoftext|> token; use --eot none",
                        simdbpe__ds_eot_names[cfg->eot]);
    cfg->count_lines = o->input_format != SIMDBPE_INPUT_TEXT || o->doc_separator != NULL;
    return SIMDBPE_OK;
}

/* The pipeline's job, but for the files (prepare) and the pool (run). */
static simdbpe_status build_job(simdbpe_dataset *ds, simdbpe_error *err)
{
    const simdbpe_dataset_options *o = &ds->opts;
    job *j = &ds->j;
    j->model = ds->model;
    j->enc = o->encode;
    j->mode = (input_mode)o->input_format;
    j->skip_errors = o->skip_errors;
    /* A run that stops leaves no partial document on standard output. */
    j->hold_docs = o->skip_errors || !o->output || !strcmp(o->output, "-");
    j->on_message = o->on_message;
    j->on_progress = o->on_progress;
    j->user = o->user;
    j->batch_bytes = o->batch_bytes ? o->batch_bytes : DEFAULT_BATCH_BYTES;
    j->threads = o->threads ? (int)o->threads
                 : o->pool  ? (int)simdbpe_pool_threads(o->pool)
                            : simdbpe__ds_cpus();
    /* Each encoder's piece cache: the library's default (24 MB) for one
     * thread; 12 MB each for more, whose caches compete for the CPU's
     * shared one (one pass over the 100 MB English corpus on 2 threads:
     * 378.8 MB/s with 12 MB each, 353.1 with 24; 1 thread 220.7 and
     * 229.6, medians of 5). */
    j->cache_mb = o->cache_mb ? o->cache_mb : j->threads > 1 ? 12 : 0;
    if ((unsigned)o->input_format > SIMDBPE_INPUT_JSONL || o->threads > MAX_THREADS ||
        (o->batch_bytes && (o->batch_bytes < 16 || o->batch_bytes > MAX_BATCH_BYTES)) ||
        (o->cache_mb && (o->cache_mb < 3 || o->cache_mb > 96)))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "bad input format, thread count, batch size or cache size");
    if (o->json_key && j->mode != IN_JSONL)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "--json-key is for --input-format jsonl");
    if (o->doc_separator && j->mode != IN_TEXT)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "--doc-separator is for --input-format text");
    if (o->doc_separator && !o->doc_separator_len)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "an empty --doc-separator");
    j->sep = (const unsigned char *)o->doc_separator;
    j->sep_len = o->doc_separator_len;
    if (j->mode == IN_JSONL && jsonl_key_parse(&j->key, ds->json_key ? ds->json_key : "text"))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "bad --json-key '%s'", ds->json_key);
    return SIMDBPE_OK;
}

/* Copies of the caller's strings, which need not outlive the call. */
static int copy_strings(simdbpe_dataset *ds, const simdbpe_dataset_options *o)
{
    ds->output = o->output ? strdup(o->output) : NULL;
    ds->model_name = strdup(o->model_name ? o->model_name : "gpt2");
    ds->json_key = o->json_key ? strdup(o->json_key) : NULL;
    char *sep = o->doc_separator ? malloc(o->doc_separator_len + 1) : NULL;
    if (sep)
        memcpy(sep, o->doc_separator, o->doc_separator_len);
    ds->opts.doc_separator = sep;
    ds->opts.output = ds->output;
    ds->opts.json_key = ds->json_key;
    ds->opts.model_name = ds->model_name;
    return (o->output && !ds->output) || !ds->model_name || (o->json_key && !ds->json_key) ||
                   (o->doc_separator && !sep)
               ? -1
               : 0;
}

simdbpe_status simdbpe_dataset_new(const simdbpe_model *model, const simdbpe_dataset_options *opts,
                                   simdbpe_dataset **out, simdbpe_error *err)
{
    *out = NULL;
    simdbpe_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return OPT_FAIL(NULL, err, SIMDBPE_ERR_NOMEM, "out of memory");
    ds->lock = (outlock)OUTLOCK_INIT;
    ds->model = model;
    simdbpe_dataset_options o0;
    simdbpe_dataset_options_init(&o0);
    ds->opts = opts ? *opts : o0;
    const simdbpe_dataset_options *o = &ds->opts;
    simdbpe_status st = SIMDBPE_OK;
    if (!model)
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "no model");
    else if (copy_strings(ds, opts ? opts : &o0))
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    if (!st)
        st = configure_output(ds, err);
    if (!st)
        st = build_job(ds, err);
    if (!st && (o->world_size < 0 || o->rank < 0 || (o->world_size && o->rank >= o->world_size) ||
                (!o->world_size && o->rank)))
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                      "rank %ld of world size %ld: need 0 <= rank < world size", o->rank,
                      o->world_size);
    if (!st && o->world_size && (!o->output || !strcmp(o->output, "-")))
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                      "rank %ld of %ld: give an output, each rank writes its own files", o->rank,
                      o->world_size);
    if (st) {
        simdbpe_dataset_free(ds);
        return st;
    }
    *out = ds;
    return SIMDBPE_OK;
}

/* A failure naming an output that is input `i`: `what` is how the
 * caller's option names it. */
static simdbpe_status is_an_input(simdbpe_dataset *ds, const char *path, const char *what,
                                  simdbpe_error *err)
{
    long i = path ? files_find_same(&ds->all, path) : -1;
    if (i < 0)
        return SIMDBPE_OK;
    return simdbpe__ds_fail(ds, err, SIMDBPE_ERR_INVALID_ARG, (uint64_t)i, 0,
                            SIMDBPE_NO_POSITION,
                            "%s %s is the input %s: writing it would destroy the input; choose "
                            "another",
                            what, path, ds->all.paths[i]);
}

const char *simdbpe_dataset_same_input(const simdbpe_dataset *ds, const char *path)
{
    long i = path ? files_find_same(&ds->all, path) : -1;
    return i < 0 ? NULL : ds->all.paths[i];
}

int simdbpe_dataset_is_output(const simdbpe_dataset *ds, const char *path)
{
    if (!path || !strcmp(path, "-") || !ds->prepared)
        return 0;
    char *want = outfile_canonical(path);
    char **names;
    size_t n;
    if (!want || writer_final_names(&ds->cfg, &names, &n)) {
        free(want);
        return 0;
    }
    int hit = 0;
    for (size_t i = 0; i <= n && !hit; i++) {
        const char *name = i < n ? names[i] : ds->marker_path;
        char *c = name ? outfile_canonical(name) : NULL;
        hit = c && !strcmp(c, want);
        free(c);
    }
    /* llm.c shards past the first: any PREFIX_{val,train}_NNNNNN.bin. */
    char *prefix = ds->cfg.format == FMT_LLMC ? outfile_canonical(ds->cfg.output) : NULL;
    hit |= prefix && writer_llmc_is_shard(prefix, want);
    free(prefix);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(want);
    return hit;
}

/* Refuses, before any work, an output that is one of the inputs (by device
 * and inode): `encode -o a.txt a.txt`, Megatron `-o e` reading e.bin, a
 * marker over an input. The output names are the writers'. */
static simdbpe_status outputs_not_inputs(simdbpe_dataset *ds, simdbpe_error *err)
{
    static const char *const suffixes[][3] = {
        [FMT_TEXT] = {""}, [FMT_U16] = {""}, [FMT_U32] = {""}, [FMT_COUNT] = {""},
        [FMT_MEGATRON] = {".bin", ".idx"}, [FMT_DATATROVE] = {".ds", ".ds.index", ".ds.metadata"}};
    simdbpe_status st = is_an_input(ds, ds->marker_path, "the rank's marker", err);
    const char *base = ds->cfg.output;
    if (st || !base || !strcmp(base, "-"))
        return st;
    size_t n = strlen(base);
    char *path = malloc(n + 32);
    if (!path)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    if (ds->cfg.format == FMT_LLMC) {
        /* Shards that exist now: _val_000000, then _train_000001, ... */
        for (size_t k = 0; !st; k++) {
            snprintf(path, n + 32, "%s_%s_%06zu.bin", base, k ? "train" : "val", k);
            if (access(path, F_OK) != 0)
                break;
            st = is_an_input(ds, path, "-o", err);
        }
    } else {
        int dsx = ds->cfg.format == FMT_DATATROVE && n > 3 && !strcmp(base + n - 3, ".ds");
        for (int k = 0; !st && k < 3 && suffixes[ds->cfg.format][k]; k++) {
            snprintf(path, n + 32, "%s%s", base, suffixes[ds->cfg.format][k] + (dsx ? 3 : 0));
            st = is_an_input(ds, path, "-o", err);
        }
    }
    free(path);
    return st;
}

/* A finished rank: its marker exists and describes this very run. Returns
 * SIMDBPE_OK and sets ds->done, or a failure. */
static simdbpe_status read_marker(simdbpe_dataset *ds, simdbpe_error *err)
{
    marker m;
    char msg[600];
    const char *path = ds->marker_path;
    int rc = marker_read(path, &m, msg, sizeof msg);
    if (rc == 1)
        return SIMDBPE_OK;
    if (rc < 0)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_IO, "%s; remove it to run this rank again", msg);
    char list[17];
    marker_input_list(ds->all.paths, ds->all.n, list);
    int same = !strcmp(m.format, simdbpe__ds_format_names[ds->cfg.format]) &&
               !strcmp(m.dtype, simdbpe__ds_dtype_name(&ds->cfg)) &&
               !strcmp(m.eot, simdbpe__ds_eot_names[ds->cfg.eot]) && m.rank == ds->opts.rank &&
               m.world == ds->opts.world_size && m.total_files == ds->all.n &&
               (!m.input_list || !strcmp(m.input_list, list));
    marker_free(&m);
    if (!same)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_IO,
                        "%s was written by a different run (format, dtype, eot, rank, world size "
                        "or input list differ); remove it to run this rank again",
                        path);
    ds->done = 1;
    return SIMDBPE_OK;
}

/* Output names of the run. */
static simdbpe_status name_outputs(simdbpe_dataset *ds, simdbpe_error *err)
{
    const simdbpe_dataset_options *o = &ds->opts;
    if (ds->cfg.output && strcmp(ds->cfg.output, "-")) {
        ds->base = marker_base(o->rank, o->world_size, ds->cfg.output);
        if (!ds->base)
            return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
        ds->cfg.output = ds->base;
    }
    if (o->world_size) {
        ds->marker_path = malloc(strlen(ds->base) + 8);
        if (!ds->marker_path)
            return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
        sprintf(ds->marker_path, "%s.done", ds->base);
    }
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_dataset_prepare(simdbpe_dataset *ds, const char *const *paths,
                                       size_t n_paths, simdbpe_error *err)
{
    if (ds->prepared || (n_paths && !paths))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        ds->prepared ? "the inputs are given once" : "no paths");
    if (files_init(&ds->all, paths, n_paths))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; ds->opts.world_size > 1 && i < n_paths; i++)
        if (!strcmp(paths[i], "-"))
            return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                            "standard input cannot be shared by %ld ranks; name files",
                            ds->opts.world_size);
    char msg[4200];
    uint64_t bad;
    simdbpe_status st = files_check(&ds->all, msg, sizeof msg, &bad);
    if (st)
        return simdbpe__ds_fail(ds, err, st, bad, 0, SIMDBPE_NO_POSITION, "%s", msg);
    st = name_outputs(ds, err);
    if (!st)
        st = outputs_not_inputs(ds, err);
    if (!st && files_select_rank(&ds->all, ds->opts.rank, ds->opts.world_size, &ds->mine,
                                 &ds->index))
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    if (!st && ds->opts.world_size)
        st = read_marker(ds, err);
    if (st)
        return st;
    ds->res.input_size = files_total_size(&ds->mine);
    ds->prepared = 1;
    return SIMDBPE_OK;
}

int simdbpe_dataset_already_done(const simdbpe_dataset *ds)
{
    return ds->done;
}

const char *simdbpe_dataset_marker_path(const simdbpe_dataset *ds)
{
    return ds->marker_path;
}

const simdbpe_dataset_result *simdbpe_dataset_result_of(const simdbpe_dataset *ds)
{
    return &ds->res;
}

const char *simdbpe_dataset_message(const simdbpe_dataset *ds)
{
    return ds->message ? ds->message : "";
}

void simdbpe_dataset_free(simdbpe_dataset *ds)
{
    if (!ds)
        return;
    writer_free(ds->w);
    run_totals_free(&ds->t);
    free(ds->base);
    free(ds->marker_path);
    free(ds->index);
    files_free_view(&ds->mine);
    files_free(&ds->all);
    jsonl_key_free(&ds->j.key);
    free((void *)ds->opts.doc_separator);
    free(ds->output);
    free(ds->model_name);
    free(ds->json_key);
    free(ds->message);
    free((void *)ds->res.skipped_documents);
    outlock_release(&ds->lock); /* last: after every output is committed or removed */
    free(ds);
}

void simdbpe_dataset_cleanup_on_signals(void)
{
    outfile_signals_install();
}
