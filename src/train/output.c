/*
 * output.c - a trained vocabulary as GPT-2 files: vocab.json, merges.txt and
 * special_tokens, and as an HF tokenizers tokenizer.json (the same tokens
 * and merges, the trainer's pre-tokenizer family, the specials as added
 * tokens), in memory or written atomically into a directory.
 *
 *   vocab.json   {"<key>":<id>,...} compact, no trailing newline. Keys are
 *                token bytes spelled in the byte-level alphabet (a special
 *                token is spelled as its own text). Key order is the one
 *                JavaScript's JSON.stringify gives an object filled in id
 *                order: keys that are array indices ("0", "17", not "07")
 *                first in numeric order, then the rest in id order. That is
 *                how the reference files (node + HF tokenizers) were made,
 *                so trained files compare byte for byte.
 *   merges.txt   "#version: 0.2\n" then "<left> <right>\n" per merge, in
 *                merge order, both spelled in the byte-level alphabet.
 *   special_tokens  one special token per line, when there are any.
 *
 * Each file is written under a temporary name in the directory and renamed
 * over the final name only once complete; a failure leaves no partial file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/replace.h"
#include "../common/utf8_valid.h"
#include "../pretok/pretok.h"
#include "train.h"

/* ------------------------------------------------------------ the writer */

/* Writes what fits and counts everything, so one pass gives both the
 * bytes and the size needed. */
typedef struct sink {
    char *out;
    size_t cap, len;
} sink;

static void put(sink *k, const void *data, size_t n)
{
    if (k->len + n <= k->cap)
        memcpy(k->out + k->len, data, n);
    k->len += n;
}

static void put_spelled(sink *k, const uint8_t *b, size_t n)
{
    uint8_t u[2];
    for (size_t i = 0; i < n; i++)
        put(k, u, simdbpe__bytelevel_utf8(b[i], u));
}

/* Spelled bytes inside a JSON string: of the byte-level alphabet only '"'
 * and '\\' need an escape. */
static void put_spelled_json(sink *k, const uint8_t *b, size_t n)
{
    uint8_t u[2];
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '"' || b[i] == '\\')
            put(k, "\\", 1);
        put(k, u, simdbpe__bytelevel_utf8(b[i], u));
    }
}

/* A JSON string body, escaped as JSON.stringify escapes it. */
static void put_json_text(sink *k, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        char e[8];
        switch (c) {
        case '"': put(k, "\\\"", 2); break;
        case '\\': put(k, "\\\\", 2); break;
        case '\b': put(k, "\\b", 2); break;
        case '\f': put(k, "\\f", 2); break;
        case '\n': put(k, "\\n", 2); break;
        case '\r': put(k, "\\r", 2); break;
        case '\t': put(k, "\\t", 2); break;
        default:
            if (c < 0x20) {
                snprintf(e, sizeof e, "\\u%04x", c);
                put(k, e, 6);
            } else {
                put(k, &c, 1);
            }
        }
    }
}

static void put_u32(sink *k, uint32_t v)
{
    char d[12];
    int n = snprintf(d, sizeof d, "%u", v);
    put(k, d, (size_t)n);
}

static simdbpe_status sink_done(const sink *k, size_t *out_len)
{
    *out_len = k->len;
    return k->len <= k->cap ? SIMDBPE_OK : SIMDBPE_ERR_BUFFER_TOO_SMALL;
}

/* ------------------------------------------------------------ vocab.json */

/* The key of id: spelled bytes for regular tokens, the text of specials.
 * For a regular token, whether the key is an array index (digits only, no
 * leading zero, below 2^32 - 1) and its value. */
static int index_key(const simdbpe__train_result *r, uint32_t id, uint64_t *value)
{
    const uint8_t *b = r->blob + r->tok_off[id];
    size_t n = (size_t)(r->tok_off[id + 1] - r->tok_off[id]);
    /* Digits spell themselves in the byte-level alphabet, so the same test
     * works on regular tokens' bytes and on specials' text. */
    if (n == 0 || n > 10 || (b[0] == '0' && n > 1))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i] < '0' || b[i] > '9')
            return 0;
        v = v * 10 + (uint64_t)(b[i] - '0');
    }
    if (v >= UINT32_MAX)
        return 0;
    *value = v;
    return 1;
}

typedef struct index_entry {
    uint64_t value;
    uint32_t id;
} index_entry;

static int cmp_index(const void *x, const void *y)
{
    const index_entry *a = x, *b = y;
    return a->value < b->value ? -1 : a->value > b->value;
}

static void put_entry(sink *k, const simdbpe__train_result *r, uint32_t id, int *first)
{
    const uint8_t *b = r->blob + r->tok_off[id];
    size_t n = (size_t)(r->tok_off[id + 1] - r->tok_off[id]);
    put(k, *first ? "\"" : ",\"", *first ? 1 : 2);
    *first = 0;
    if (id < r->n_regular)
        put_spelled_json(k, b, n);
    else
        put_json_text(k, b, n);
    put(k, "\":", 2);
    put_u32(k, id);
}

simdbpe_status simdbpe_trainer_vocab_json(const simdbpe_trainer *t, char *out, size_t cap,
                                          size_t *out_len)
{
    if (!t || !out_len || (!out && cap) || !t->trained)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__train_result *r = &t->res;
    index_entry *idx = malloc((r->n_tokens ? r->n_tokens : 1) * sizeof *idx);
    uint8_t *is_index = calloc(r->n_tokens ? r->n_tokens : 1, 1);
    if (!idx || !is_index) {
        free(idx);
        free(is_index);
        return SIMDBPE_ERR_NOMEM;
    }
    size_t n_idx = 0;
    for (uint32_t id = 0; id < r->n_tokens; id++) {
        uint64_t v;
        if (index_key(r, id, &v)) {
            idx[n_idx++] = (index_entry){v, id};
            is_index[id] = 1;
        }
    }
    qsort(idx, n_idx, sizeof *idx, cmp_index);
    sink k = {out, cap, 0};
    int first = 1;
    put(&k, "{", 1);
    for (size_t i = 0; i < n_idx; i++)
        put_entry(&k, r, idx[i].id, &first);
    for (uint32_t id = 0; id < r->n_tokens; id++)
        if (!is_index[id])
            put_entry(&k, r, id, &first);
    put(&k, "}", 1);
    free(idx);
    free(is_index);
    return sink_done(&k, out_len);
}

/* ------------------------------------------------------------ merges.txt */

simdbpe_status simdbpe_trainer_merges_txt(const simdbpe_trainer *t, char *out, size_t cap,
                                          size_t *out_len)
{
    if (!t || !out_len || (!out && cap) || !t->trained)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__train_result *r = &t->res;
    sink k = {out, cap, 0};
    put(&k, "#version: 0.2\n", 14);
    for (size_t i = 0; i < r->n_merges; i++) {
        uint32_t a = r->merges[i].left, b = r->merges[i].right;
        put_spelled(&k, r->blob + r->tok_off[a], (size_t)(r->tok_off[a + 1] - r->tok_off[a]));
        put(&k, " ", 1);
        put_spelled(&k, r->blob + r->tok_off[b], (size_t)(r->tok_off[b + 1] - r->tok_off[b]));
        put(&k, "\n", 1);
    }
    return sink_done(&k, out_len);
}

/* -------------------------------------------------------- tokenizer.json */

#define PUT_LIT(k, lit) put(k, lit, sizeof(lit) - 1)

/* The pre_tokenizer of a family as HF tokenizers writes it. */
static void put_pre_tokenizer(sink *k, const simdbpe__pretok_family *f)
{
    static const char bytelevel[] = "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
                                    "\"trim_offsets\":true,\"use_regex\":";
    if (f->bytelevel_regex) {
        put(k, bytelevel, sizeof bytelevel - 1);
        PUT_LIT(k, "true}");
        return;
    }
    PUT_LIT(k, "{\"type\":\"Sequence\",\"pretokenizers\":[");
    for (size_t i = 0; i < f->n_patterns; i++) {
        PUT_LIT(k, "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"");
        put_json_text(k, (const uint8_t *)f->patterns[i], strlen(f->patterns[i]));
        PUT_LIT(k, "\"},\"behavior\":\"Isolated\",\"invert\":false},");
    }
    put(k, bytelevel, sizeof bytelevel - 1);
    PUT_LIT(k, "false}]}");
}

simdbpe_status simdbpe_trainer_tokenizer_json(const simdbpe_trainer *t, char *out, size_t cap,
                                              size_t *out_len)
{
    if (!t || !out_len || (!out && cap) || !t->trained)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__train_result *r = &t->res;
    sink k = {out, cap, 0};
    static const char head[] = "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,"
                               "\"added_tokens\":[";
    put(&k, head, sizeof head - 1);
    for (uint32_t id = r->n_regular; id < r->n_tokens; id++) {
        if (id > r->n_regular)
            PUT_LIT(&k, ",");
        PUT_LIT(&k, "{\"id\":");
        put_u32(&k, id);
        PUT_LIT(&k, ",\"content\":\"");
        put_json_text(&k, r->blob + r->tok_off[id], (size_t)(r->tok_off[id + 1] - r->tok_off[id]));
        static const char flags[] = "\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
                                    "\"normalized\":false,\"special\":true}";
        put(&k, flags, sizeof flags - 1);
    }
    /* No normalizer: the trainer takes only families without one
     * (trainer.c). */
    PUT_LIT(&k, "],\"normalizer\":null,\"pre_tokenizer\":");
    put_pre_tokenizer(&k, simdbpe__pretok_family_of(t->feed.pretok));
    static const char mid[] =
        ",\"post_processor\":null,\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":"
        "false,\"trim_offsets\":true,\"use_regex\":true},\"model\":{\"type\":\"BPE\","
        "\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":null,"
        "\"end_of_word_suffix\":null,\"fuse_unk\":false,\"byte_fallback\":false,"
        "\"ignore_merges\":false,\"vocab\":";
    put(&k, mid, sizeof mid - 1);
    size_t vlen = 0;
    simdbpe_status st =
        simdbpe_trainer_vocab_json(t, k.len < cap ? out + k.len : NULL, k.len < cap ? cap - k.len : 0,
                                   &vlen);
    if (st != SIMDBPE_OK && st != SIMDBPE_ERR_BUFFER_TOO_SMALL)
        return st;
    k.len += vlen;
    PUT_LIT(&k, ",\"merges\":[");
    for (size_t i = 0; i < r->n_merges; i++) {
        uint32_t a = r->merges[i].left, b = r->merges[i].right;
        if (i)
            PUT_LIT(&k, ",");
        PUT_LIT(&k, "[\"");
        put_spelled_json(&k, r->blob + r->tok_off[a], (size_t)(r->tok_off[a + 1] - r->tok_off[a]));
        PUT_LIT(&k, "\",\"");
        put_spelled_json(&k, r->blob + r->tok_off[b], (size_t)(r->tok_off[b + 1] - r->tok_off[b]));
        PUT_LIT(&k, "\"]");
    }
    PUT_LIT(&k, "]}}\n");
    return sink_done(&k, out_len);
}

static simdbpe_status special_tokens_txt(const simdbpe_trainer *t, char *out, size_t cap,
                                         size_t *out_len)
{
    sink k = {out, cap, 0};
    for (size_t i = 0; i < t->n_specials; i++) {
        put(&k, t->specials[i].text, t->specials[i].len);
        put(&k, "\n", 1);
    }
    return sink_done(&k, out_len);
}

/* ----------------------------------------------------------------- save */

typedef simdbpe_status (*render_fn)(const simdbpe_trainer *, char *, size_t, size_t *);

/* Renders a file into a fresh buffer. */
static simdbpe_status render(const simdbpe_trainer *t, render_fn fn, char **buf, size_t *len)
{
    size_t need = 0;
    simdbpe_status st = fn(t, NULL, 0, &need);
    if (st != SIMDBPE_OK && st != SIMDBPE_ERR_BUFFER_TOO_SMALL)
        return st;
    *buf = malloc(need ? need : 1);
    if (!*buf)
        return SIMDBPE_ERR_NOMEM;
    return fn(t, *buf, need, len);
}

/* DIR/NAME, malloc'ed, or NULL. */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Writes DIR/NAME's content under a temporary name beside it, returned in
 * *tmp (malloc'ed) for a later rename. */
static simdbpe_status write_temp(const char *dir, const char *name, const char *data, size_t len,
                                 char **tmp, simdbpe_error *err)
{
    char *path = join(dir, name);
    if (!path)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    int e = 0, fd = simdbpe__tmp_open(path, tmp);
    if (fd < 0) {
        e = errno;
    } else {
        e = simdbpe__write_all(fd, data, len);
        if (close(fd) != 0 && !e)
            e = errno;
        if (e) {
            unlink(*tmp);
            free(*tmp);
        }
    }
    free(path);
    if (!e)
        return SIMDBPE_OK;
    *tmp = NULL;
    return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s/%s: %s", dir, name,
                         strerror(e));
}


simdbpe_status simdbpe_trainer_save(const simdbpe_trainer *t, const char *dir,
                                    simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!t || !dir || !*dir || !t->trained)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "save: no trained vocabulary or no directory");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "cannot create directory %s: %s", dir, strerror(errno));
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "%s is not a directory", dir);
    /* A model directory is replaced whole or not at all: every file is
     * written under a temporary name first (a full disk fails here, with
     * the old model untouched), the final names are checked, and only then
     * are they renamed; a special_tokens file of an older model is removed
     * when this one has none, so it cannot survive a retrain. */
    static const char *const names[4] = {"vocab.json", "merges.txt", "tokenizer.json",
                                         "special_tokens"};
    const render_fn fns[4] = {simdbpe_trainer_vocab_json, simdbpe_trainer_merges_txt,
                              simdbpe_trainer_tokenizer_json, special_tokens_txt};
    size_t files = t->n_specials ? 4 : 3;
    char *tmp[4] = {NULL, NULL, NULL, NULL}, *final = NULL;
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; i < files && st == SIMDBPE_OK; i++) {
        char *buf = NULL;
        size_t len = 0;
        st = render(t, fns[i], &buf, &len);
        if (st != SIMDBPE_OK)
            st = simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s: %s", names[i],
                               simdbpe_strerror(st));
        else
            st = write_temp(dir, names[i], buf, len, &tmp[i], err);
        free(buf);
    }
    for (size_t i = 0; i < 4 && st == SIMDBPE_OK; i++) {
        free(final);
        final = join(dir, names[i]);
        if (!final)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        else if (lstat(final, &sb) == 0 && S_ISDIR(sb.st_mode))
            st = simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                               "%s is a directory; the model was not written", final);
    }
    for (size_t i = 0; i < 4 && st == SIMDBPE_OK; i++) {
        free(final);
        final = join(dir, names[i]);
        if (!final)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        else if (i < files ? rename(tmp[i], final) != 0 : unlink(final) != 0 && errno != ENOENT)
            st = simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s: %s", final,
                               strerror(errno));
        else if (i < files) {
            free(tmp[i]);
            tmp[i] = NULL;
        }
    }
    for (size_t i = 0; i < 4; i++) {
        if (tmp[i])
            unlink(tmp[i]);
        free(tmp[i]);
    }
    free(final);
    return st;
}
