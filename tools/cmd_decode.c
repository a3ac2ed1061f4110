/*
 * cmd_decode.c - `simdbpe decode [-m MODEL] [--input-format text|u16|u32]
 * [-o FILE] [-q] [FILE...]`: token ids back to bytes.
 *
 * text input: one document per line, ids as decimal numbers separated by
 * spaces or tabs; documents come out separated by a newline. u16/u32:
 * the whole file is the ids of one stream. A bad id names its file and
 * line (text) or position. Input is streamed (bounded memory for any
 * file or line size). Output goes through simdbpe_dataset_file_out, so -o FILE is
 * never left half-written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbpe.h"
#include "simdbpe_dataset.h"

#include "cli.h"
#include "model_open.h"
#include "options.h"

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

/*
 * Decoding streams: input is read in chunks of READ_CHUNK bytes and ids are
 * decoded in groups of at most ID_CHUNK, so memory stays bounded whatever
 * the size of a file or of one line (the whole file was read before: a
 * 170 MB u16 file took 706 MB). Decoding a group at a time gives the same
 * bytes as decoding the whole, since each id decodes on its own.
 */
#define READ_CHUNK (256u << 10)
#define ID_CHUNK (64u << 10)

typedef struct stream {
    const simdbpe_model *m;
    const char *path;
    simdbpe_dataset_file_out *out;
    totals *t;
    uint32_t ids[ID_CHUNK];
    size_t n;         /* ids waiting */
    uint64_t pos;     /* position (in its line, or file) of ids[0] */
    uint8_t *buf;     /* decoded bytes */
    size_t cap;
    uint64_t line;    /* text: current line, 1-based; 0 for binary input */
} stream;

/* Decodes and writes the waiting ids. Returns 0 or 1 (reported). */
static int flush_ids(stream *s)
{
    if (!s->n)
        return 0;
    size_t len;
    simdbpe_error err;
    simdbpe_status st = simdbpe_decode(s->m, s->ids, s->n, s->buf, s->cap, &len, &err);
    if (st == SIMDBPE_ERR_BUFFER_TOO_SMALL) {
        uint8_t *p = realloc(s->buf, len);
        if (!p) {
            cli_error("out of memory");
            return 1;
        }
        s->buf = p;
        s->cap = len;
        st = simdbpe_decode(s->m, s->ids, s->n, s->buf, s->cap, &len, &err);
    }
    if (st == SIMDBPE_ERR_TOKEN_ID) {
        /* Its position in the line (or file), not in this group. */
        size_t k = 0;
        uint8_t one[256];
        size_t l1;
        simdbpe_error e1;
        while (k + 1 < s->n && simdbpe_decode(s->m, &s->ids[k], 1, one, sizeof one, &l1, &e1) !=
                                   SIMDBPE_ERR_TOKEN_ID)
            k++;
        snprintf(err.message, sizeof err.message,
                 "token id %u at position %llu is not in the vocabulary (size %u)", s->ids[k],
                 (unsigned long long)(s->pos + k), simdbpe_model_vocab_size(s->m));
    }
    if (st != SIMDBPE_OK) {
        if (s->line)
            cli_error("%s: line %llu: %s", cli_display_name(s->path), (unsigned long long)s->line,
                      err.message);
        else
            cli_error("%s: %s", cli_display_name(s->path), err.message);
        return 1;
    }
    simdbpe_dataset_file_write(s->out, s->buf, len);
    s->t->tokens += s->n;
    s->t->bytes += len;
    s->pos += s->n;
    s->n = 0;
    return 0;
}

static int push_id(stream *s, uint32_t id)
{
    s->ids[s->n++] = id;
    return s->n == ID_CHUNK ? flush_ids(s) : 0;
}

/* Text: one document per line, decimal ids separated by spaces, tabs or
 * CRs. A number is parsed as its bytes arrive, across chunk boundaries. */
typedef struct text_state {
    uint64_t v;
    int in_num, bad_num;
    uint64_t col, num_col; /* 1-based byte column in the line */
    int line_open;         /* a line has started (some byte of it was read) */
} text_state;

static int text_bad(const stream *s, const text_state *x)
{
    cli_error("%s: line %llu, column %llu: expected a token id (a decimal number)",
              cli_display_name(s->path), (unsigned long long)s->line,
              (unsigned long long)x->num_col);
    return 1;
}

/* Ends the number being read, if any. */
static int text_end_num(stream *s, text_state *x)
{
    if (!x->in_num)
        return 0;
    x->in_num = 0;
    if (x->bad_num || x->v > UINT32_MAX)
        return text_bad(s, x);
    return push_id(s, (uint32_t)x->v);
}

static int text_bytes(stream *s, text_state *x, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (!x->line_open) {
            x->line_open = 1;
            s->line++;
            s->pos = 0;
            x->col = 0;
            if (s->line > 1)
                simdbpe_dataset_file_write(s->out, "\n", 1);
        }
        x->col++;
        if (c == '\n') {
            if (text_end_num(s, x) || flush_ids(s))
                return 1;
            s->t->docs++;
            x->line_open = 0;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            if (text_end_num(s, x))
                return 1;
        } else if (c >= '0' && c <= '9' && !(x->in_num && x->bad_num)) {
            if (!x->in_num) {
                x->in_num = 1;
                x->bad_num = 0;
                x->v = 0;
                x->num_col = x->col;
            }
            if (x->v <= UINT32_MAX)
                x->v = x->v * 10 + (uint64_t)(c - '0');
        } else {
            if (!x->in_num)
                x->num_col = x->col;
            x->in_num = 1;
            x->bad_num = 1;
            return text_end_num(s, x);
        }
    }
    return 0;
}

/* An input's descriptor: standard input for "-". -1 with errno set. */
static int open_input(const char *path)
{
    return strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
}

static void close_input(int fd)
{
    if (fd != STDIN_FILENO)
        close(fd);
}

static int decode_file(const decode_opts *o, const simdbpe_model *m, const char *path,
                       simdbpe_dataset_file_out *out, totals *t)
{
    int fd = open_input(path);
    if (fd < 0) {
        cli_error("%s: %s", cli_display_name(path), strerror(errno));
        return 1;
    }
    stream *s = calloc(1, sizeof *s);
    unsigned char *chunk = malloc(READ_CHUNK + 4);
    if (!s || !chunk) {
        cli_error("out of memory");
        free(s);
        free(chunk);
        close_input(fd);
        return 1;
    }
    s->m = m;
    s->path = path;
    s->out = out;
    s->t = t;
    size_t w = o->in == DEC_U16 ? 2 : 4, carry = 0;
    uint64_t total = 0;
    text_state x;
    memset(&x, 0, sizeof x);
    int rc = 0;
    for (;;) {
        ssize_t got = read(fd, chunk + carry, READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            cli_error("%s: %s", cli_display_name(path), strerror(errno));
            rc = 1;
            break;
        }
        if (got == 0)
            break;
        total += (uint64_t)got;
        if (o->in == DEC_TEXT) {
            rc = text_bytes(s, &x, chunk, (size_t)got);
        } else {
            size_t have = carry + (size_t)got, k = 0;
            for (; rc == 0 && k + w <= have; k += w) {
                const uint8_t *p = chunk + k;
                uint32_t id = w == 2 ? (uint32_t)p[0] | (uint32_t)p[1] << 8
                                     : (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                           (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
                rc = push_id(s, id);
            }
            carry = have - k;
            memmove(chunk, chunk + k, carry);
        }
        if (rc)
            break;
    }
    if (rc == 0 && o->in == DEC_TEXT && x.line_open) {
        rc = text_end_num(s, &x) || flush_ids(s);
        t->docs += rc == 0;
    } else if (rc == 0 && o->in != DEC_TEXT) {
        if (carry) {
            cli_error("%s: %llu bytes is not a whole number of %zu-byte ids",
                      cli_display_name(path), (unsigned long long)total, w);
            rc = 1;
        } else {
            rc = flush_ids(s);
            t->docs += rc == 0;
        }
    }
    close_input(fd);
    free(s->buf);
    free(s);
    free(chunk);
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
    if (cli_model_open(o.model, &model)) {
        free(o.files);
        return EXIT_FAIL;
    }
    cli_cleanup_on_signals();
    simdbpe_dataset_file_out *out;
    if (simdbpe_dataset_file_open(o.output, &out, &err) != SIMDBPE_OK) {
        cli_error("%s: %s", o.output, err.message);
        simdbpe_model_free(model);
        free(o.files);
        return EXIT_FAIL;
    }
    totals t = {0, 0, 0};
    double t0 = cli_now();
    for (int i = 0; i < o.n_files && rc == 0; i++)
        rc = decode_file(&o, model, o.files[i], out, &t);
    double secs = cli_now() - t0;
    if (rc == 0 && simdbpe_dataset_file_commit(out, &err) != SIMDBPE_OK) {
        cli_error("%s: %s", o.output ? o.output : "<stdout>", err.message);
        rc = EXIT_FAIL;
    }
    simdbpe_dataset_file_discard(out); /* only frees a committed file */
    if (rc == 0 && !o.quiet && isatty(STDERR_FILENO)) /* else nothing on success */
        cli_error("decoded %llu document%s, %llu bytes, %llu tokens in %.3f s (%.1f MB/s)",
                  (unsigned long long)t.docs, t.docs == 1 ? "" : "s", (unsigned long long)t.bytes,
                  (unsigned long long)t.tokens, secs,
                  secs > 0 ? (double)t.bytes / secs / 1e6 : 0.0);
    simdbpe_model_free(model);
    free(o.files);
    return rc ? EXIT_FAIL : 0;
}
