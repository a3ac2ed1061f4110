/*
 * cmd_decode.c - `simdbpe decode [-m MODEL] [--input-format text|u16|u32]
 * [-o FILE] [-q] [FILE...]`: token ids back to bytes.
 *
 * text input: one document per line, ids as decimal numbers separated by
 * spaces or tabs; documents come out separated by a newline. u16/u32:
 * the whole file is the ids of one stream. A bad id names its file and
 * line (text) or position. Output goes through outfile.h, so -o FILE is
 * never left half-written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe.h"

#include "cli.h"
#include "cli_io.h"
#include "options.h"
#include "outfile.h"

typedef enum { DEC_TEXT, DEC_U16, DEC_U32 } dec_format;

typedef struct decode_opts {
    const char *model;
    dec_format in;
    const char *output;
    int quiet;
    const char **files;
    int n_files;
} decode_opts;

typedef struct totals {
    uint64_t docs, bytes, tokens;
} totals;

static const opt_spec decode_options[] = {
    {"--model", 'm', 1}, {"--output", 'o', 1}, {"--input-format", 0, 1}, {"--quiet", 'q', 0},
    {NULL, 0, 0}};

/* One option or file (opt_fn of options.h). */
static int set_option(void *ctx, const char *name, const char *val)
{
    static const char *const formats[] = {"text", "u16", "u32", NULL};
    decode_opts *o = ctx;
    if (!name) {
        o->files[o->n_files++] = val;
    } else if (!strcmp(name, "--model")) {
        o->model = val;
    } else if (!strcmp(name, "--output")) {
        o->output = val;
    } else if (!strcmp(name, "--quiet")) {
        o->quiet = 1;
    } else { /* --input-format */
        int v = cli_pick(val, formats);
        if (v < 0)
            return cli_usage_error("bad value '%s' for %s", val, name);
        o->in = v == 1 ? DEC_U16 : v == 2 ? DEC_U32 : DEC_TEXT;
    }
    return 0;
}

/* Returns 0, OPT_HELP (the help was printed) or an exit code. */
static int parse_args(decode_opts *o, int argc, char **argv)
{
    static const opt_command cmd = {"decode", decode_options, cli_usage_text, "simdbpe",
                                    CLI_USAGE_HINT};
    memset(o, 0, sizeof *o);
    o->model = "gpt2";
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->files)
        return cli_usage_error("out of memory");
    int rc = opt_parse(&cmd, argc, argv, set_option, o);
    if (rc)
        return rc;
    if (o->n_files == 0)
        o->files[o->n_files++] = "-";
    return 0;
}

/* Parses decimal ids separated by spaces or tabs on one line. */
static int parse_id_line(const char *path, uint64_t line, const char *s, size_t len,
                         uint32_t **ids, size_t *cap, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
            i++;
            continue;
        }
        uint64_t v = 0;
        size_t start = i;
        while (i < len && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(s[i++] - '0');
        if (i == start || v > UINT32_MAX ||
            (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')) {
            cli_error("%s: line %llu, column %zu: expected a token id (a decimal number)",
                      cli_display_name(path), (unsigned long long)line, start + 1);
            return 1;
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            uint32_t *p = realloc(*ids, nc * sizeof *p);
            if (!p) {
                cli_error("out of memory");
                return 1;
            }
            *ids = p;
            *cap = nc;
        }
        (*ids)[(*n)++] = (uint32_t)v;
    }
    return 0;
}

static int decode_ids(const simdbpe_model *m, const char *path, uint64_t line, const uint32_t *ids,
                      size_t n, uint8_t **buf, size_t *cap, outfile *out, totals *t)
{
    size_t len;
    simdbpe_error err;
    simdbpe_status st = simdbpe_decode(m, ids, n, *buf, *cap, &len, &err);
    if (st == SIMDBPE_ERR_BUFFER_TOO_SMALL) {
        uint8_t *p = realloc(*buf, len);
        if (!p) {
            cli_error("out of memory");
            return 1;
        }
        *buf = p;
        *cap = len;
        st = simdbpe_decode(m, ids, n, *buf, *cap, &len, &err);
    }
    if (st != SIMDBPE_OK) {
        if (line)
            cli_error("%s: line %llu: %s", cli_display_name(path), (unsigned long long)line,
                      err.message);
        else
            cli_error("%s: %s", cli_display_name(path), err.message);
        return 1;
    }
    outfile_write(out, *buf, len);
    t->docs++;
    t->tokens += n;
    t->bytes += len;
    return 0;
}

static int decode_text(const simdbpe_model *m, const char *path, const char *data, size_t len,
                       outfile *out, totals *t)
{
    uint32_t *ids = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0, bcap = 0;
    uint64_t line = 0;
    int rc = 0;
    for (size_t i = 0; i < len && rc == 0;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        line++;
        rc = parse_id_line(path, line, data + i, end - i, &ids, &cap, &n);
        if (rc == 0 && line > 1)
            outfile_write(out, "\n", 1);
        if (rc == 0)
            rc = decode_ids(m, path, line, ids, n, &buf, &bcap, out, t);
        i = end + 1;
    }
    free(ids);
    free(buf);
    return rc;
}

static int decode_binary(const simdbpe_model *m, const char *path, const char *data, size_t len,
                         size_t w, outfile *out, totals *t)
{
    if (len % w) {
        cli_error("%s: %zu bytes is not a whole number of %zu-byte ids", cli_display_name(path),
                  len, w);
        return 1;
    }
    size_t n = len / w;
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) {
        cli_error("out of memory");
        return 1;
    }
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < n; i++)
        ids[i] = w == 2 ? (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8
                        : (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                              (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
    uint8_t *buf = NULL;
    size_t bcap = 0;
    int rc = decode_ids(m, path, 0, ids, n, &buf, &bcap, out, t);
    free(buf);
    free(ids);
    return rc;
}

static int decode_file(const decode_opts *o, const simdbpe_model *m, const char *path,
                       outfile *out, totals *t)
{
    char *data;
    size_t len;
    int e = cli_read_all(path, &data, &len);
    if (e) {
        cli_error("%s: %s", cli_display_name(path), strerror(e));
        return 1;
    }
    int rc = o->in == DEC_TEXT ? decode_text(m, path, data, len, out, t)
                               : decode_binary(m, path, data, len, o->in == DEC_U16 ? 2 : 4, out, t);
    free(data);
    return rc;
}

int cmd_decode(int argc, char **argv)
{
    decode_opts o;
    int rc = parse_args(&o, argc, argv);
    if (rc) {
        free(o.files);
        return rc == OPT_HELP ? 0 : rc;
    }
    simdbpe_model *model;
    simdbpe_error err;
    if (simdbpe_model_open(o.model, &model, &err) != SIMDBPE_OK) {
        cli_error("cannot load model: %s", err.message);
        free(o.files);
        return EXIT_FAIL;
    }
    outfile_signals_install();
    outfile out;
    int e = outfile_open(&out, o.output);
    if (e) {
        cli_error("%s: %s", o.output, strerror(e));
        simdbpe_model_free(model);
        free(o.files);
        return EXIT_FAIL;
    }
    totals t = {0, 0, 0};
    double t0 = cli_now();
    for (int i = 0; i < o.n_files && rc == 0; i++)
        rc = decode_file(&o, model, o.files[i], &out, &t);
    double secs = cli_now() - t0;
    if (rc == 0) {
        e = outfile_close(&out);
        if (!e)
            e = outfile_commit(&out);
        if (e) {
            cli_error("%s: %s", o.output ? o.output : "<stdout>", strerror(e));
            rc = EXIT_FAIL;
        }
    }
    if (rc)
        outfile_discard(&out);
    else
        outfile_free(&out);
    if (rc == 0 && !o.quiet)
        cli_error("decoded %llu document%s, %llu bytes, %llu tokens in %.3f s (%.1f MB/s)",
                  (unsigned long long)t.docs, t.docs == 1 ? "" : "s", (unsigned long long)t.bytes,
                  (unsigned long long)t.tokens, secs,
                  secs > 0 ? (double)t.bytes / secs / 1e6 : 0.0);
    simdbpe_model_free(model);
    free(o.files);
    return rc ? EXIT_FAIL : 0;
}
