/*
 * dataset.c - a dataset run's options, checks and inputs (see dataset.h
 * and simdbpe_dataset.h).
 *
 * Per-format defaults: EOT is none for text/u16/u32, prepend for llmc,
 * append for megatron and datatrove; the id width is 2 bytes unless the
 * vocabulary needs more (Megatron's own rule: u16 only when vocab < 65500).
 * Messages name options by their fields, in backquotes (simdbpe_dataset.h).
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
 * text), freshly faulted in the first time round, so larger batches cost
 * more page faults than they save in hand-overs between threads
 * (bench/README.md has the sizes measured). */
#define DEFAULT_BATCH_BYTES (128u << 10)
#define DEFAULT_SHARD_TOKENS 100000000u
/* Every batch in flight is allocated at the batch size (a 1 TiB batch
 * ended in a bare "out of memory"). */
#define MAX_BATCH_BYTES ((size_t)1 << 30)
#define MAX_THREADS 1024

/* ------------------------------------------------------------- names */

/* Indexed by value (simdbpe_dataset.h): the one list of each. */
static const char *const INPUT_FORMATS[] = {[SIMDBPE_INPUT_TEXT] = "text",
                                            [SIMDBPE_INPUT_LINES] = "lines",
                                            [SIMDBPE_INPUT_JSONL] = "jsonl"};
static const char *const OUTPUT_FORMATS[] = {
    [SIMDBPE_OUTPUT_TEXT] = "text",           [SIMDBPE_OUTPUT_U16] = "u16",
    [SIMDBPE_OUTPUT_U32] = "u32",             [SIMDBPE_OUTPUT_LLMC] = "llmc",
    [SIMDBPE_OUTPUT_MEGATRON] = "megatron",   [SIMDBPE_OUTPUT_DATATROVE] = "datatrove",
    [SIMDBPE_OUTPUT_COUNT] = "count"};
static const char *const EOTS[] = {[SIMDBPE_EOT_DEFAULT] = "default", [SIMDBPE_EOT_NONE] = "none",
                                   [SIMDBPE_EOT_APPEND] = "append",
                                   [SIMDBPE_EOT_PREPEND] = "prepend"};
#define COUNT_OF(a) (sizeof a / sizeof a[0])

static const char *name_at(const char *const *names, size_t n, unsigned value)
{
    return value < n ? names[value] : NULL;
}

static simdbpe_status value_of(const char *const *names, size_t n, const char *name,
                               unsigned *out)
{
    for (unsigned v = 0; name && v < n; v++)
        if (strcmp(names[v], name) == 0) {
            *out = v;
            return SIMDBPE_OK;
        }
    return SIMDBPE_ERR_INVALID_ARG;
}

#define NAMES(fn, type, table)                                                                     \
    const char *simdbpe_##fn##_name(type value)                                                    \
    {                                                                                              \
        return name_at(table, COUNT_OF(table), (unsigned)value);                                   \
    }                                                                                              \
    simdbpe_status simdbpe_##fn##_of(const char *name, type *out)                                  \
    {                                                                                              \
        unsigned v;                                                                                \
        simdbpe_status st = value_of(table, COUNT_OF(table), name, &v);                            \
        if (st == SIMDBPE_OK && out)                                                               \
            *out = (type)v;                                                                        \
        return out ? st : SIMDBPE_ERR_INVALID_ARG;                                                 \
    }
NAMES(input_format, simdbpe_input_format, INPUT_FORMATS)
NAMES(output_format, simdbpe_output_format, OUTPUT_FORMATS)
NAMES(eot, simdbpe_eot, EOTS)

/* ------------------------------------------------------------ options */

const char *simdbpe__ds_dtype_name(const writer_config *cfg)
{
    if (cfg->format == SIMDBPE_OUTPUT_TEXT || cfg->format == SIMDBPE_OUTPUT_COUNT)
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

static simdbpe_status eot_id(simdbpe_dataset *ds, const simdbpe_dataset_options *o,
                             writer_config *cfg, simdbpe_error *err);

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
    simdbpe_output_format f = o->output_format;
    cfg->format = f;
    cfg->output = ds->output;
    cfg->model_name = ds->model_name;
    cfg->shard_tokens = o->shard_tokens ? o->shard_tokens : DEFAULT_SHARD_TOKENS;
    int binary_set = f == SIMDBPE_OUTPUT_LLMC || f == SIMDBPE_OUTPUT_MEGATRON ||
                     f == SIMDBPE_OUTPUT_DATATROVE;
    if (!simdbpe_output_format_name(f))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "`output_format` %d is not one",
                        (int)f);
    if (o->dtype_bytes && o->dtype_bytes != 2 && o->dtype_bytes != 4)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`dtype` of %u bytes: ids are 2 (u16) or 4 (u32) bytes", o->dtype_bytes);
    if (!simdbpe_eot_name(o->eot))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "`eot` %d is not one", (int)o->eot);
    if (o->shard_tokens > INT32_MAX)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`shard_tokens` %llu is above the limit of %d",
                        (unsigned long long)o->shard_tokens, INT32_MAX);
    if (o->dtype_bytes && !binary_set)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`dtype` is for the output formats llmc, megatron and datatrove; for "
                        "raw ids use `output_format` u16 or u32");
    if (o->shard_tokens && f != SIMDBPE_OUTPUT_LLMC)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`shard_tokens` is for `output_format` llmc");
    if (binary_set && (!o->output || !strcmp(o->output, "-")))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`output_format` %s writes several files: give `output` a prefix",
                        simdbpe_output_format_name(f));
    unsigned width = o->dtype_bytes;
    if (f == SIMDBPE_OUTPUT_U16)
        width = 2;
    else if (f == SIMDBPE_OUTPUT_U32)
        width = 4;
    else if (!width)
        width = (f == SIMDBPE_OUTPUT_MEGATRON ? vocab < 65500 : vocab <= 65536) ? 2 : 4;
    if (width == 2 && vocab > 65536)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_UNSUPPORTED,
                        "u16 ids: the model has %u ids, more than fit in 16 bits; use u32", vocab);
    cfg->width = width;
    static const simdbpe_eot defaults[] = {[SIMDBPE_OUTPUT_TEXT] = SIMDBPE_EOT_NONE,
                                           [SIMDBPE_OUTPUT_U16] = SIMDBPE_EOT_NONE,
                                           [SIMDBPE_OUTPUT_U32] = SIMDBPE_EOT_NONE,
                                           [SIMDBPE_OUTPUT_LLMC] = SIMDBPE_EOT_PREPEND,
                                           [SIMDBPE_OUTPUT_MEGATRON] = SIMDBPE_EOT_APPEND,
                                           [SIMDBPE_OUTPUT_DATATROVE] = SIMDBPE_EOT_APPEND,
                                           [SIMDBPE_OUTPUT_COUNT] = SIMDBPE_EOT_NONE};
    cfg->eot = o->eot != SIMDBPE_EOT_DEFAULT ? o->eot : defaults[f];
    if (cfg->eot != SIMDBPE_EOT_NONE)
        return eot_id(ds, o, cfg, err);
    cfg->count_lines = o->input_format != SIMDBPE_INPUT_TEXT || o->doc_separator != NULL;
    return SIMDBPE_OK;
}

/* The id put between documents: eot_token's (an added token's text, or an
 * id), else the model's own end of text. */
static simdbpe_status eot_id(simdbpe_dataset *ds, const simdbpe_dataset_options *o,
                             writer_config *cfg, simdbpe_error *err)
{
    const char *given = ds->eot_token;
    const char *mode = simdbpe_eot_name(cfg->eot);
    if (!given) {
        if (simdbpe_model_eot(ds->model, &cfg->eot_id) == SIMDBPE_OK)
            return SIMDBPE_OK;
        return OPT_FAIL(ds, err, SIMDBPE_ERR_UNSUPPORTED,
                        "`eot` %s: the model has no end-of-text token (<|endoftext|>, an EOS "
                        "of its post-processor, <|end_of_text|>, </s>, ...); name one with "
                        "`eot_token`, or use `eot` none",
                        mode);
    }
    if (simdbpe_model_special_id(ds->model, given, strlen(given), &cfg->eot_id) == SIMDBPE_OK)
        return SIMDBPE_OK;
    char *end;
    unsigned long long id = strtoull(given, &end, 10);
    const uint8_t *b;
    size_t len;
    if (*given >= '0' && *given <= '9' && !*end && id <= UINT32_MAX &&
        simdbpe_model_token_bytes(ds->model, (uint32_t)id, &b, &len) == SIMDBPE_OK) {
        cfg->eot_id = (uint32_t)id;
        return SIMDBPE_OK;
    }
    (void)o;
    return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                    "`eot_token` '%s' is neither an added token of the model nor a token id",
                    given);
}

/* The pipeline's job, but for the files (prepare) and the pool (run). */
static simdbpe_status build_job(simdbpe_dataset *ds, simdbpe_error *err)
{
    const simdbpe_dataset_options *o = &ds->opts;
    job *j = &ds->j;
    j->model = ds->model;
    j->enc = o->encode;
    j->mode = o->input_format;
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
    /* Each encoder's budget for its tables (0: the library's default). */
    j->cache_mb = o->cache_mb;
    if ((unsigned)o->input_format > SIMDBPE_INPUT_JSONL)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "`input_format` %d is not one",
                        (int)o->input_format);
    if (o->threads > MAX_THREADS)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`threads` %u is above the limit of %d (0: the CPUs this process may "
                        "use)",
                        o->threads, MAX_THREADS);
    if (o->batch_bytes && (o->batch_bytes < 16 || o->batch_bytes > MAX_BATCH_BYTES))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`batch_bytes` %zu is not from 16 to %zu", o->batch_bytes,
                        (size_t)MAX_BATCH_BYTES);
    if (o->cache_mb > 65536)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`cache_mb` %u is above 65536 (0: the encoder's default)", o->cache_mb);
    if (o->json_key && j->mode != SIMDBPE_INPUT_JSONL)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`json_key` is for `input_format` jsonl");
    if (o->doc_separator && j->mode != SIMDBPE_INPUT_TEXT)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                        "`doc_separator` is for `input_format` text");
    if (o->doc_separator && !o->doc_separator_len)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "an empty `doc_separator`");
    j->sep = (const unsigned char *)o->doc_separator;
    j->sep_len = o->doc_separator_len;
    if (j->mode == SIMDBPE_INPUT_JSONL &&
        simdbpe__jsonl_key_parse(&j->key, ds->json_key ? ds->json_key : "text"))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG, "bad `json_key` '%s'", ds->json_key);
    return SIMDBPE_OK;
}

/* Copies of the caller's strings, which need not outlive the call. */
static int copy_strings(simdbpe_dataset *ds, const simdbpe_dataset_options *o)
{
    ds->output = o->output ? strdup(o->output) : NULL;
    ds->model_name = strdup(o->model_name ? o->model_name : "gpt2");
    ds->json_key = o->json_key ? strdup(o->json_key) : NULL;
    ds->eot_token = o->eot_token ? strdup(o->eot_token) : NULL;
    char *sep = o->doc_separator ? malloc(o->doc_separator_len + 1) : NULL;
    if (sep)
        memcpy(sep, o->doc_separator, o->doc_separator_len);
    ds->opts.doc_separator = sep;
    ds->opts.output = ds->output;
    ds->opts.json_key = ds->json_key;
    ds->opts.eot_token = ds->eot_token;
    ds->opts.model_name = ds->model_name;
    return (o->output && !ds->output) || !ds->model_name || (o->json_key && !ds->json_key) ||
                   (o->eot_token && !ds->eot_token) ||
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
    long i = path ? simdbpe__files_find_same(&ds->all, path) : -1;
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
    long i = path ? simdbpe__files_find_same(&ds->all, path) : -1;
    return i < 0 ? NULL : ds->all.paths[i];
}

int simdbpe_dataset_is_output(const simdbpe_dataset *ds, const char *path)
{
    if (!path || !strcmp(path, "-") || !ds->prepared)
        return 0;
    char *want = simdbpe__outfile_canonical(path);
    char **names;
    size_t n;
    if (!want || simdbpe__writer_final_names(&ds->cfg, &names, &n)) {
        free(want);
        return 0;
    }
    int hit = 0;
    for (size_t i = 0; i <= n && !hit; i++) {
        const char *name = i < n ? names[i] : ds->marker_path;
        char *c = name ? simdbpe__outfile_canonical(name) : NULL;
        hit = c && !strcmp(c, want);
        free(c);
    }
    /* llm.c shards past the first: any PREFIX_{val,train}_NNNNNN.bin. */
    char *prefix = ds->cfg.format == SIMDBPE_OUTPUT_LLMC ? simdbpe__outfile_canonical(ds->cfg.output) : NULL;
    hit |= prefix && simdbpe__writer_llmc_is_shard(prefix, want);
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
        [SIMDBPE_OUTPUT_TEXT] = {""},
        [SIMDBPE_OUTPUT_U16] = {""},
        [SIMDBPE_OUTPUT_U32] = {""},
        [SIMDBPE_OUTPUT_COUNT] = {""},
        [SIMDBPE_OUTPUT_MEGATRON] = {".bin", ".idx"},
        [SIMDBPE_OUTPUT_DATATROVE] = {".ds", ".ds.index", ".ds.metadata"}};
    simdbpe_status st = is_an_input(ds, ds->marker_path, "the rank's marker", err);
    const char *base = ds->cfg.output;
    if (st || !base || !strcmp(base, "-"))
        return st;
    size_t n = strlen(base);
    char *path = malloc(n + 32);
    if (!path)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    if (ds->cfg.format == SIMDBPE_OUTPUT_LLMC) {
        /* Shards that exist now: _val_000000, then _train_000001, ... */
        for (size_t k = 0; !st; k++) {
            snprintf(path, n + 32, "%s_%s_%06zu.bin", base, k ? "train" : "val", k);
            if (access(path, F_OK) != 0)
                break;
            st = is_an_input(ds, path, "`output`", err);
        }
    } else {
        int dsx =
            ds->cfg.format == SIMDBPE_OUTPUT_DATATROVE && n > 3 && !strcmp(base + n - 3, ".ds");
        for (int k = 0; !st && k < 3 && suffixes[ds->cfg.format][k]; k++) {
            snprintf(path, n + 32, "%s%s", base, suffixes[ds->cfg.format][k] + (dsx ? 3 : 0));
            st = is_an_input(ds, path, "`output`", err);
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
    int rc = simdbpe__marker_read(path, &m, msg, sizeof msg);
    if (rc == 1)
        return SIMDBPE_OK;
    if (rc < 0)
        return OPT_FAIL(ds, err, SIMDBPE_ERR_IO, "%s; remove it to run this rank again", msg);
    char list[17];
    simdbpe__marker_input_list(ds->all.paths, ds->all.n, list);
    int same = !strcmp(m.format, simdbpe_output_format_name(ds->cfg.format)) &&
               !strcmp(m.dtype, simdbpe__ds_dtype_name(&ds->cfg)) &&
               !strcmp(m.eot, simdbpe_eot_name(ds->cfg.eot)) && m.rank == ds->opts.rank &&
               m.world == ds->opts.world_size && m.total_files == ds->all.n &&
               (!m.input_list || !strcmp(m.input_list, list));
    simdbpe__marker_free(&m);
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
        ds->base = simdbpe__marker_base(o->rank, o->world_size, ds->cfg.output);
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
    if (simdbpe__files_init(&ds->all, paths, n_paths))
        return OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    for (size_t i = 0; ds->opts.world_size > 1 && i < n_paths; i++)
        if (!strcmp(paths[i], "-"))
            return OPT_FAIL(ds, err, SIMDBPE_ERR_INVALID_ARG,
                            "standard input cannot be shared by %ld ranks; name files",
                            ds->opts.world_size);
    char msg[4200];
    uint64_t bad;
    simdbpe_status st = simdbpe__files_check(&ds->all, msg, sizeof msg, &bad);
    if (st)
        return simdbpe__ds_fail(ds, err, st, bad, 0, SIMDBPE_NO_POSITION, "%s", msg);
    st = name_outputs(ds, err);
    if (!st)
        st = outputs_not_inputs(ds, err);
    if (!st && simdbpe__files_select_rank(&ds->all, ds->opts.rank, ds->opts.world_size, &ds->mine,
                                          &ds->index))
        st = OPT_FAIL(ds, err, SIMDBPE_ERR_NOMEM, "out of memory");
    if (!st && ds->opts.world_size)
        st = read_marker(ds, err);
    if (st)
        return st;
    ds->res.input_size = simdbpe__files_total_size(&ds->mine);
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
    simdbpe__writer_free(ds->w);
    simdbpe__run_totals_free(&ds->t);
    free(ds->base);
    free(ds->marker_path);
    free(ds->index);
    simdbpe__files_free_view(&ds->mine);
    simdbpe__files_free(&ds->all);
    simdbpe__jsonl_key_free(&ds->j.key);
    free((void *)ds->opts.doc_separator);
    free(ds->output);
    free(ds->model_name);
    free(ds->json_key);
    free(ds->eot_token);
    free(ds->message);
    free((void *)ds->res.skipped_documents);
    simdbpe__outlock_release(&ds->lock); /* last: after every output is committed or removed */
    free(ds);
}

void simdbpe_dataset_remove_temporaries(void)
{
    simdbpe__outfile_remove_all();
}
