/*
 * simdbpe.c - the command-line tool, a thin layer over the public API.
 *
 *   simdbpe encode [-m MODEL] [--input-format text|lines]
 *                  [--output-format text|u16|u32] [--special text|allow|error]
 *                  [--errors strict|replace] [-o FILE] [-q] [FILE...]
 *   simdbpe decode [-m MODEL] [--input-format text|u16|u32] [-o FILE] [FILE...]
 *   simdbpe count  [-m MODEL] [--input-format text|lines] [...] [FILE...]
 *
 * The CLI owns arguments, files and messages; the library owns the rest.
 * Exit codes: 0 success, 1 bad input or failure, 2 bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simdbpe.h"

#include "cli_io.h"
#include "cmd_compile.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: simdbpe COMMAND [OPTIONS] [FILE...]\n"
    "\n"
    "Commands:\n"
    "  encode   text -> GPT-2 token ids\n"
    "  decode   token ids -> text\n"
    "  count    tokens per document and in total\n"
    "  compile  write a model as a compiled .sbpe file (simdbpe compile -h)\n"
    "\n"
    "Each FILE (standard input when none, or \"-\") is one document.\n"
    "\n"
    "Options:\n"
    "  -m, --model MODEL        \"gpt2\" (embedded, default), FILE.sbpe, or a directory with\n"
    "                           vocab.json, merges.txt and optionally special_tokens\n"
    "  --input-format F         encode/count: text (default) | lines (each line,\n"
    "                           without its newline, is a document)\n"
    "                           decode: text (default; ids per line) | u16 | u32\n"
    "  --output-format F        encode: text (default; one line of ids per\n"
    "                           document) | u16 | u32 (little-endian binary)\n"
    "  --special P              text (default: specials are ordinary text) |\n"
    "                           allow (special tokens -> their ids) |\n"
    "                           error (fail on a special token)\n"
    "  --errors E               strict (default: invalid UTF-8 is an error) |\n"
    "                           replace (invalid bytes -> U+FFFD)\n"
    "  -o, --output FILE        write here (atomically) instead of standard output\n"
    "  -q, --quiet              no summary line on standard error\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n";

typedef enum { CMD_ENCODE, CMD_DECODE, CMD_COUNT } command;
typedef enum { IN_TEXT, IN_LINES, IN_U16, IN_U32 } in_format;
typedef enum { OUT_TEXT, OUT_U16, OUT_U32 } out_format;

typedef struct options {
    command cmd;
    const char *model;
    in_format in;
    out_format out;
    simdbpe_encode_options enc;
    const char *output;
    int quiet;
    char **files;
    int n_files;
} options;

typedef struct totals {
    uint64_t docs, bytes, tokens;
} totals;

/* The temporary output file, removed if the run is interrupted. */
static cli_out *volatile current_out;

static void on_signal(int sig)
{
    cli_out *o = current_out;
    if (o && o->tmp_path)
        unlink(o->tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "simdbpe: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'simdbpe --help'.\n");
    return EXIT_USAGE;
}

static int pick(const char *value, const char *const *names, int *out)
{
    for (int i = 0; names[i]; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    static const char *const commands[] = {"encode", "decode", "count", NULL};
    static const char *const in_enc[] = {"text", "lines", NULL};
    static const char *const in_dec[] = {"text", "u16", "u32", NULL};
    static const char *const outs[] = {"text", "u16", "u32", NULL};
    static const char *const specials[] = {"text", "allow", "error", NULL};
    static const char *const errors[] = {"strict", "replace", NULL};
    memset(o, 0, sizeof *o);
    o->model = "gpt2";
    if (argc < 2)
        return usage_error("%s", "missing command");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage_text, stdout);
        exit(0);
    }
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("simdbpe %s\n", simdbpe_version());
        exit(0);
    }
    int v;
    if (pick(argv[1], commands, &v))
        return usage_error("unknown command '%s'", argv[1]);
    o->cmd = (command)v;
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (!o->files)
        return usage_error("%s", "out of memory");
    int only_files = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            o->files[o->n_files++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_files = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        /* Options with a value: "--opt value" or "--opt=value". */
        const char *eq = strchr(a, '=');
        size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
        char name[64];
        if (name_len >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, name_len);
        name[name_len] = '\0';
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val)
            return usage_error("option '%s' needs a value", a);
        int bad = 0;
        if (strcmp(name, "-m") == 0 || strcmp(name, "--model") == 0)
            o->model = val;
        else if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0)
            o->output = val;
        else if (strcmp(name, "--input-format") == 0) {
            if (o->cmd == CMD_DECODE) {
                bad = pick(val, in_dec, &v);
                o->in = v == 0 ? IN_TEXT : v == 1 ? IN_U16 : IN_U32;
            } else {
                bad = pick(val, in_enc, &v);
                o->in = (in_format)v;
            }
        } else if (strcmp(name, "--output-format") == 0 && o->cmd == CMD_ENCODE) {
            bad = pick(val, outs, &v);
            o->out = (out_format)v;
        } else if (strcmp(name, "--special") == 0 && o->cmd != CMD_DECODE) {
            bad = pick(val, specials, &v);
            o->enc.special = (simdbpe_special_policy)v;
        } else if (strcmp(name, "--errors") == 0 && o->cmd != CMD_DECODE) {
            bad = pick(val, errors, &v);
            o->enc.errors = (simdbpe_utf8_policy)v;
        } else
            return usage_error("unknown option '%s' for this command", name);
        if (bad)
            return usage_error("bad value '%s'", val);
    }
    if (o->n_files == 0)
        o->files[o->n_files++] = "-";
    return 0;
}

static const char *display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Writes ids as decimal text, or as little-endian u16/u32. */
static void write_ids(cli_out *out, out_format fmt, const uint32_t *ids, size_t n)
{
    char buf[1 << 14];
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        if (b + 16 > sizeof buf) {
            cli_out_write(out, buf, b);
            b = 0;
        }
        uint32_t id = ids[i];
        if (fmt == OUT_U16) {
            buf[b++] = (char)(id & 0xFF);
            buf[b++] = (char)(id >> 8);
        } else if (fmt == OUT_U32) {
            for (int k = 0; k < 4; k++)
                buf[b++] = (char)(id >> (8 * k));
        } else {
            char digits[10];
            int d = 0;
            do
                digits[d++] = (char)('0' + id % 10);
            while ((id /= 10) != 0);
            if (i)
                buf[b++] = ' ';
            while (d)
                buf[b++] = digits[--d];
        }
    }
    if (fmt == OUT_TEXT)
        buf[b++] = '\n';
    cli_out_write(out, buf, b);
}

/* Counts the newlines before `offset`, for a 1-based line number. */
static uint64_t line_of(const char *data, size_t offset)
{
    uint64_t line = 1;
    for (size_t i = 0; i < offset; i++)
        line += data[i] == '\n';
    return line;
}

static int encode_doc(const options *o, simdbpe_encoder *enc, const char *path, const char *data,
                      size_t doc_off, size_t len, cli_out *out, totals *t)
{
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(enc, data + doc_off, len, &o->enc, &ids, &n, &err);
    if (st != SIMDBPE_OK) {
        if (err.byte_offset != SIMDBPE_NO_POSITION) {
            uint64_t at = doc_off + err.byte_offset;
            fprintf(stderr, "simdbpe: %s: line %llu, byte offset %llu: %s\n", display_name(path),
                    (unsigned long long)line_of(data, at), (unsigned long long)at,
                    simdbpe_strerror(st));
            if (err.message[0])
                fprintf(stderr, "simdbpe: %s: %s (offset within the document)\n",
                        display_name(path), err.message);
        } else {
            fprintf(stderr, "simdbpe: %s: %s\n", display_name(path),
                    err.message[0] ? err.message : simdbpe_strerror(st));
        }
        return 1;
    }
    t->docs++;
    t->bytes += len;
    t->tokens += n;
    if (o->cmd == CMD_ENCODE)
        write_ids(out, o->out, ids, n);
    else {
        char line[64];
        int k = snprintf(line, sizeof line, "%zu\t", n);
        cli_out_write(out, line, (size_t)k);
        const char *name = display_name(path);
        cli_out_write(out, name, strlen(name));
        if (o->in == IN_LINES) {
            k = snprintf(line, sizeof line, ":%llu", (unsigned long long)line_of(data, doc_off));
            cli_out_write(out, line, (size_t)k);
        }
        cli_out_write(out, "\n", 1);
    }
    return 0;
}

static int encode_file(const options *o, simdbpe_encoder *enc, const char *path, cli_out *out,
                       totals *t)
{
    char *data;
    size_t len;
    int e = cli_read_all(path, &data, &len);
    if (e) {
        fprintf(stderr, "simdbpe: %s: %s\n", display_name(path), strerror(e));
        return 1;
    }
    int rc = 0;
    if (o->in == IN_TEXT) {
        rc = encode_doc(o, enc, path, data, 0, len, out, t);
    } else {
        for (size_t i = 0; i < len && rc == 0;) {
            const char *nl = memchr(data + i, '\n', len - i);
            size_t end = nl ? (size_t)(nl - data) : len;
            rc = encode_doc(o, enc, path, data, i, end - i, out, t);
            i = end + 1;
        }
    }
    free(data);
    return rc;
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
        if (i == start || v > UINT32_MAX || (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')) {
            fprintf(stderr, "simdbpe: %s: line %llu, column %zu: expected a token id (a decimal number)\n",
                    display_name(path), (unsigned long long)line, start + 1);
            return 1;
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            uint32_t *p = realloc(*ids, nc * sizeof *p);
            if (!p) {
                fprintf(stderr, "simdbpe: out of memory\n");
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
                      size_t n, uint8_t **buf, size_t *cap, cli_out *out, totals *t)
{
    size_t len;
    simdbpe_error err;
    simdbpe_status st = simdbpe_decode(m, ids, n, *buf, *cap, &len, &err);
    if (st == SIMDBPE_ERR_BUFFER_TOO_SMALL) {
        uint8_t *p = realloc(*buf, len);
        if (!p) {
            fprintf(stderr, "simdbpe: out of memory\n");
            return 1;
        }
        *buf = p;
        *cap = len;
        st = simdbpe_decode(m, ids, n, *buf, *cap, &len, &err);
    }
    if (st != SIMDBPE_OK) {
        if (line)
            fprintf(stderr, "simdbpe: %s: line %llu: %s\n", display_name(path),
                    (unsigned long long)line, err.message);
        else
            fprintf(stderr, "simdbpe: %s: %s\n", display_name(path), err.message);
        return 1;
    }
    cli_out_write(out, *buf, len);
    t->docs++;
    t->tokens += n;
    t->bytes += len;
    return 0;
}

static int decode_file(const options *o, const simdbpe_model *m, const char *path, cli_out *out,
                       totals *t)
{
    char *data;
    size_t len;
    int e = cli_read_all(path, &data, &len);
    if (e) {
        fprintf(stderr, "simdbpe: %s: %s\n", display_name(path), strerror(e));
        return 1;
    }
    uint32_t *ids = NULL;
    size_t cap = 0, n = 0, bcap = 0;
    uint8_t *buf = NULL;
    int rc = 0;
    if (o->in == IN_TEXT) {
        /* One document per line; documents are separated by a newline. */
        uint64_t line = 0;
        for (size_t i = 0; i < len && rc == 0;) {
            const char *nl = memchr(data + i, '\n', len - i);
            size_t end = nl ? (size_t)(nl - data) : len;
            line++;
            rc = parse_id_line(path, line, data + i, end - i, &ids, &cap, &n);
            if (rc == 0 && line > 1)
                cli_out_write(out, "\n", 1);
            if (rc == 0)
                rc = decode_ids(m, path, line, ids, n, &buf, &bcap, out, t);
            i = end + 1;
        }
    } else {
        size_t w = o->in == IN_U16 ? 2 : 4;
        if (len % w) {
            fprintf(stderr, "simdbpe: %s: %zu bytes is not a whole number of %zu-byte ids\n",
                    display_name(path), len, w);
            rc = 1;
        } else {
            n = len / w;
            ids = malloc((n ? n : 1) * sizeof *ids);
            if (!ids) {
                fprintf(stderr, "simdbpe: out of memory\n");
                rc = 1;
            }
            const uint8_t *p = (const uint8_t *)data;
            for (size_t i = 0; rc == 0 && i < n; i++)
                ids[i] = w == 2 ? (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8
                                : (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                                      (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
            if (rc == 0)
                rc = decode_ids(m, path, 0, ids, n, &buf, &bcap, out, t);
        }
    }
    free(ids);
    free(buf);
    free(data);
    return rc;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "compile") == 0)
        return simdbpe_cmd_compile(argc - 1, argv + 1);
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    simdbpe_model *model;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_open(o.model, &model, &err);
    if (st != SIMDBPE_OK) {
        fprintf(stderr, "simdbpe: cannot load model: %s\n", err.message);
        return 1;
    }
    if (o.cmd == CMD_ENCODE && o.out == OUT_U16 && simdbpe_model_vocab_size(model) > 65536) {
        fprintf(stderr, "simdbpe: --output-format u16: the model has %u ids, more than fit in "
                        "16 bits; use u32\n",
                simdbpe_model_vocab_size(model));
        simdbpe_model_free(model);
        return EXIT_USAGE;
    }
    simdbpe_encoder *enc = NULL;
    if (o.cmd != CMD_DECODE && (st = simdbpe_encoder_new(model, &enc)) != SIMDBPE_OK) {
        fprintf(stderr, "simdbpe: cannot create an encoder: %s%s\n", simdbpe_strerror(st),
                st == SIMDBPE_ERR_UNSUPPORTED ? " (check SIMDBPE_KERNEL)" : "");
        simdbpe_model_free(model);
        return 1;
    }
    cli_out out;
    int e = cli_out_open(&out, o.output);
    if (e) {
        fprintf(stderr, "simdbpe: %s: %s\n", o.output, strerror(e));
        simdbpe_encoder_free(enc);
        simdbpe_model_free(model);
        return 1;
    }
    current_out = &out;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    static char stdout_buf[1 << 16];
    if (out.f == stdout)
        setvbuf(stdout, stdout_buf, _IOFBF, sizeof stdout_buf);

    totals t = {0, 0, 0};
    double t0 = now_seconds();
    for (int i = 0; i < o.n_files && rc == 0; i++)
        rc = o.cmd == CMD_DECODE ? decode_file(&o, model, o.files[i], &out, &t)
                                 : encode_file(&o, enc, o.files[i], &out, &t);
    if (rc == 0 && o.cmd == CMD_COUNT) {
        char line[64];
        int k = snprintf(line, sizeof line, "%llu\ttotal\n", (unsigned long long)t.tokens);
        cli_out_write(&out, line, (size_t)k);
    }
    double secs = now_seconds() - t0;
    if (rc == 0) {
        e = cli_out_commit(&out);
        if (e) {
            fprintf(stderr, "simdbpe: %s: %s\n", o.output ? o.output : "<stdout>", strerror(e));
            rc = 1;
        }
    } else {
        cli_out_abort(&out);
    }
    current_out = NULL;
    if (rc == 0 && !o.quiet)
        fprintf(stderr,
                "simdbpe: %s %llu document%s, %llu bytes, %llu tokens in %.3f s (%.1f MB/s)%s%s\n",
                o.cmd == CMD_DECODE ? "decoded" : o.cmd == CMD_COUNT ? "counted" : "encoded",
                (unsigned long long)t.docs, t.docs == 1 ? "" : "s", (unsigned long long)t.bytes,
                (unsigned long long)t.tokens, secs, secs > 0 ? (double)t.bytes / secs / 1e6 : 0.0,
                enc ? ", kernel " : "", enc ? simdbpe_encoder_kernel_name(enc) : "");
    simdbpe_encoder_free(enc);
    simdbpe_model_free(model);
    free(o.files);
    return rc;
}
