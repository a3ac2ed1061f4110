/*
 * reader_jsonl.c - the text field of a JSON Lines record: a validating
 * fast path, with jansson as the arbiter (see reader_jsonl.h).
 *
 * The fast path is a recursive-descent parser over the whole record. Each
 * value knows its `level`: how many parts of the key path lead to it (-1
 * when it is off the path). The root is at level 0; in an object at level
 * L, the member named parts[L] is at level L+1. Because a later duplicate
 * key replaces an earlier one (as in jansson), every on-path member resets
 * the result before its value is parsed, so the last occurrence decides.
 *
 * Results it cannot give itself set `unusual`, and jansson decides.
 */
#include "reader_jsonl.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/kernels.h"
#include "../common/common.h"
#include "../common/json_escape.h"
#include "../common/utf8_valid.h"

#define MAX_DEPTH 64

enum { RES_MISSING, RES_STRING, RES_NOT_STRING, RES_NOT_OBJECT };

typedef struct parser {
    const unsigned char *s;
    size_t n, i;
    int depth;
    int replace;
    int syntax;    /* the record is not valid JSON */
    int unusual;   /* hand over to jansson */
    int surrogate; /* a lone surrogate in the value (strict mode) */
    int any_surrogate; /* ... in either mode: the value is no valid JSON elsewhere */
    const jsonl_key *key;
    jsonl_buf *out;  /* the unescaped value when it has escapes (NULL: in place) */
    jsonl_buf keys;  /* an unescaped key */
    int res;         /* RES_* */
    size_t res_level;/* RES_MISSING/RES_NOT_OBJECT: the path part concerned */
    const char *text;
    size_t text_len;
    int escaped;     /* the last string read had escapes */
    int text_escaped; /* ... and the value's */
} parser;

int simdbpe__jsonl_key_parse(jsonl_key *k, const char *spec)
{
    memset(k, 0, sizeof *k);
    k->spec = spec;
    size_t n = 1;
    for (const char *c = spec; *c; c++)
        n += *c == '.';
    k->parts = calloc(n, sizeof *k->parts);
    k->lens = calloc(n, sizeof *k->lens);
    if (!k->parts || !k->lens) {
        simdbpe__jsonl_key_free(k);
        return -1;
    }
    const char *start = spec;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(start, '.');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        k->parts[i] = strndup(start, len);
        k->lens[i] = len;
        k->n = i + 1;
        if (!k->parts[i] || len == 0) {
            simdbpe__jsonl_key_free(k);
            return -1;
        }
        start = end ? end + 1 : start + len;
    }
    return 0;
}

void simdbpe__jsonl_key_free(jsonl_key *k)
{
    for (size_t i = 0; k->parts && i < k->n; i++)
        free(k->parts[i]);
    free(k->parts);
    free(k->lens);
    memset(k, 0, sizeof *k);
}

void simdbpe__jsonl_buf_free(jsonl_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(jsonl_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    if (b->fixed)
        return -1; /* unescaping in place never needs more than the escaped text */
    return simdbpe__grow((void **)&b->p, &b->cap, b->len + extra, 1);
}

/* ------------------------------------------------------------ lexing */

static void skip_ws(parser *p)
{
    while (p->i < p->n) {
        unsigned char c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        p->i++;
    }
}

/* How a string is read: validated and dropped, unescaped as the value
 * (raw bytes kept as they are), or unescaped as a key (UTF-8 checked). */
enum { STR_SKIP, STR_VALUE, STR_KEY };

/*
 * Reads one escape after the backslash at s[i-1]. Appends its UTF-8 to
 * `dst` (NULL: drop). Returns 0, or -1 on a syntax error (including a lone
 * surrogate outside the value: jansson rejects those).
 */
static int read_escape(parser *p, int mode, jsonl_buf *dst)
{
    uint32_t cp;
    size_t k = simdbpe__json_escape((const char *)p->s + p->i, p->n - p->i, &cp);
    if (!k)
        return -1;
    p->i += k;
    if (simdbpe__is_surrogate(cp)) {
        if (mode != STR_VALUE)
            return -1;
        p->any_surrogate = 1;
        if (!p->replace)
            p->surrogate = 1;
        cp = 0xFFFD;
    }
    /* A NUL in a key (\u0000) is valid JSON too; jansson refuses it, the
     * fast path reads it. */
    if (dst) {
        /* Reserve only what it takes: unescaping in place has no room to
         * spare at the end. */
        uint8_t u[4];
        size_t len = simdbpe__utf8_encode(cp, u);
        if (buf_reserve(dst, len))
            return -2;
        memcpy(dst->p + dst->len, u, len);
        dst->len += len;
    }
    return 0;
}

/*
 * The first byte at or after s[i] (before n) that ends a plain run of a
 * string: '"', '\\', a control byte (< 0x20) and, unless `high_ok`, a byte
 * >= 0x80 (which then needs a UTF-8 check). Eight bytes at a time:
 *
 *   haszero(v)   = (v - 0x01..01) & ~v & 0x80..80   some byte of v is 0
 *   hasless(v,k) = (v - k*0x01..01) & ~v & 0x80..80 some byte < k (k <= 128)
 *
 * so a word needs a closer look when (w ^ '"'s), (w ^ '\\'s) has a zero
 * byte, when w has a byte < 0x20, or (ASCII runs) a byte with its top bit.
 */
static size_t plain_run_end(const unsigned char *s, size_t i, size_t n, int high_ok)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        uint64_t stop = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w);
        stop &= highs;
        if (!high_ok)
            stop |= w & highs;
        if (stop)
            break;
        i += 8;
    }
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\' || c < 0x20 || (c >= 0x80 && !high_ok))
            return i;
    }
    return n;
}

/*
 * Reads the string whose opening quote is at s[i]. On success *str, *len
 * is its content: a pointer into the record when it has no escapes, else
 * `dst`'s buffer (dst is reset first; NULL for STR_SKIP). Returns 0, -1 on
 * a syntax error, -2 when out of memory.
 */
static int read_string(parser *p, int mode, jsonl_buf *dst, const char **str, size_t *len)
{
    const unsigned char *s = p->s;
    size_t i = ++p->i, run = i, start = i;
    int escaped = 0;
    if (dst)
        dst->len = 0;
    for (;;) {
        /* The common case: a plain run. The value's bytes >= 0x80 are part
         * of it (the encoder checks the value's UTF-8); elsewhere they stop
         * the run for a UTF-8 check. */
        i = plain_run_end(s, i, p->n, mode == STR_VALUE);
        if (i >= p->n)
            return -1;
        unsigned char c = s[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return -1; /* control characters must be escaped */
        if (c >= 0x80) {
            size_t l = simdbpe__utf8_sequence_len(s + i, p->n - i);
            if (!l)
                return -1;
            i += l;
            continue;
        }
        /* A backslash: flush the run before it, then the escape. */
        if (dst && i > run) {
            if (buf_reserve(dst, i - run))
                return -2;
            memmove(dst->p + dst->len, s + run, i - run); /* (in place: behind the reading) */
            dst->len += i - run;
        }
        escaped = 1;
        p->i = i + 1;
        int r = read_escape(p, mode, dst);
        if (r)
            return r;
        i = run = p->i;
    }
    if (escaped && dst) {
        if (buf_reserve(dst, i - run)) /* an escape has allocated dst->p */
            return -2;
        memmove(dst->p + dst->len, s + run, i - run);
        dst->len += i - run;
        *str = dst->p;
        *len = dst->len;
    } else {
        *str = (const char *)s + start; /* (escaped only without dst: the raw text) */
        *len = i - start;
    }
    p->escaped = escaped;
    p->i = i + 1;
    return 0;
}

/*
 * A number per RFC 8259, which sets no limit on range or precision: an
 * integer beyond 64 bits or a real beyond a double is valid JSON, and a
 * record holding one (an "id" of 18446744073709551615) is read, although
 * jansson, which stores numbers as int64/double, would refuse it.
 */
static int read_number(parser *p)
{
    const unsigned char *s = p->s;
    size_t i = p->i;
    if (i < p->n && s[i] == '-')
        i++;
    if (i < p->n && s[i] == '0')
        i++;
    else if (i < p->n && s[i] >= '1' && s[i] <= '9')
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return -1;
    if (i < p->n && s[i] == '.') {
        size_t d0 = ++i;
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d0)
            return -1;
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d0 = i;
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d0)
            return -1;
    }
    p->i = i;
    return 0;
}

static int read_literal(parser *p, const char *word, size_t len)
{
    if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0)
        return -1;
    p->i += len;
    return 0;
}

/* --------------------------------------------------------- structure */

static int read_value(parser *p, long level);

static int valid_utf8(const unsigned char *s, size_t n)
{
    return simdbpe__utf8_validate_from(s, n, 0) == n;
}

static int key_is(const parser *p, long level, const char *k, size_t klen)
{
    return level >= 0 && (size_t)level < p->key->n && p->key->lens[level] == klen &&
           memcmp(p->key->parts[level], k, klen) == 0;
}

/* Takes byte c if it comes next. */
static inline int take(parser *p, char c)
{
    if (p->i < p->n && p->s[p->i] == c) {
        p->i++;
        return 1;
    }
    return 0;
}

/* After a member or element: 1 when a ',' leads to another, 0 at `close`
 * (taken), -1 otherwise. */
static int after_item(parser *p, char close)
{
    skip_ws(p);
    if (take(p, ',')) {
        skip_ws(p);
        return 1;
    }
    return take(p, close) ? 0 : -1;
}

static int read_object(parser *p, long level)
{
    p->i++; /* '{' */
    skip_ws(p);
    if (take(p, '}'))
        return 0;
    for (;;) {
        if (p->i >= p->n || p->s[p->i] != '"')
            return -1;
        const char *k;
        size_t klen;
        int r = read_string(p, STR_KEY, &p->keys, &k, &klen);
        if (r)
            return r;
        skip_ws(p);
        if (!take(p, ':'))
            return -1;
        skip_ws(p);
        long child = key_is(p, level, k, klen) ? level + 1 : -1;
        if (child > 0) {
            /* A later duplicate replaces an earlier member: start over. The
             * text taken from the earlier one was left unchecked for the
             * encoder; overridden, it is any other value and must be
             * UTF-8, as jansson requires of the whole record. */
            if (p->res == RES_STRING &&
                (p->any_surrogate || !valid_utf8((const unsigned char *)p->text, p->text_len)))
                return -1; /* (a lone surrogate escape too: jansson refuses it) */
            p->res = RES_MISSING;
            p->res_level = (size_t)child;
        }
        r = read_value(p, child);
        if (r)
            return r;
        if ((r = after_item(p, '}')) <= 0)
            return r;
    }
}

static int read_array(parser *p)
{
    p->i++; /* '[' */
    skip_ws(p);
    if (take(p, ']'))
        return 0;
    for (;;) {
        int r = read_value(p, -1);
        if (r)
            return r;
        if ((r = after_item(p, ']')) <= 0)
            return r;
    }
}

/* A value at `level` (see the top of the file); -1 = off the path. */
static int read_value(parser *p, long level)
{
    if (p->i >= p->n)
        return -1;
    int target = level >= 0 && (size_t)level == p->key->n;
    unsigned char c = p->s[p->i];
    if (target && c != '"')
        p->res = RES_NOT_STRING;
    else if (level > 0 && !target && c != '{') {
        p->res = RES_NOT_OBJECT;
        p->res_level = (size_t)level - 1;
    }
    if (c == '{' || c == '[') {
        if (++p->depth > MAX_DEPTH) {
            p->unusual = 1;
            return -1;
        }
        int r = c == '{' ? read_object(p, target ? -1 : level) : read_array(p);
        p->depth--;
        return r;
    }
    if (c == '"') {
        const char *str;
        size_t len;
        int r = read_string(p, target ? STR_VALUE : STR_SKIP, target ? p->out : NULL, &str, &len);
        if (r == 0 && target) {
            p->res = RES_STRING;
            p->text = str; /* in place: the escaped text, until unescape_in_place */
            p->text_len = len;
            p->text_escaped = p->escaped;
        }
        return r;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return read_number(p);
    if (c == 't')
        return read_literal(p, "true", 4);
    if (c == 'f')
        return read_literal(p, "false", 5);
    if (c == 'n')
        return read_literal(p, "null", 4);
    return -1;
}

/* "a.b" for the first `upto`+1 parts of the path. */
static void path_prefix(const jsonl_key *k, size_t upto, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i <= upto && i < k->n; i++)
        o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%s%s", i ? "." : "", k->parts[i]);
}

/* Unescapes the value p->text (escaped, inside the record) where it is,
 * which only ever shrinks it; the parse has checked it already. */
static void unescape_in_place(parser *p, char *line)
{
    jsonl_buf dst = {line + (p->text - (const char *)p->s), 0, p->text_len, 1};
    parser q = *p;
    q.i = (size_t)(p->text - (const char *)p->s) - 1; /* the opening quote */
    const char *str;
    size_t len;
    if (read_string(&q, STR_VALUE, &dst, &str, &len) == 0) {
        p->text = str;
        p->text_len = len;
    }
}

/* The fast path; `scratch` NULL: the value is unescaped inside `line`. */
static int fast_parse(const char *line, char *writable, size_t len, const jsonl_key *key,
                      int replace, jsonl_buf *scratch, const char **text, size_t *text_len,
                      char *msg, size_t msg_cap)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)line;
    p.n = len;
    p.replace = replace;
    p.key = key;
    p.out = scratch;
    p.res = RES_MISSING;
    skip_ws(&p);
    if (p.i >= p.n || p.s[p.i] != '{')
        return -1; /* not an object, or not JSON: jansson says which */
    int r = read_value(&p, 0);
    skip_ws(&p);
    if (r == 0 && p.i != p.n)
        r = -1; /* something after the object */
    simdbpe__jsonl_buf_free(&p.keys);
    if (r == -2) {
        snprintf(msg, msg_cap, "out of memory");
        return JSONL_NOMEM;
    }
    if (r || p.unusual)
        return -1;
    char where[256];
    switch (p.res) {
    case RES_STRING:
        if (p.surrogate) {
            snprintf(msg, msg_cap,
                     "the \"%s\" value has an escaped lone surrogate (\\uD800-\\uDFFF without its "
                     "pair); `errors` replace turns it into U+FFFD",
                     key->spec);
            return JSONL_SURROGATE;
        }
        if (!scratch && p.text_escaped)
            unescape_in_place(&p, writable);
        *text = p.text;
        *text_len = p.text_len;
        return JSONL_OK;
    case RES_NOT_STRING:
        snprintf(msg, msg_cap, "the \"%s\" value is not a string", key->spec);
        return JSONL_NOT_STRING;
    case RES_NOT_OBJECT:
        path_prefix(key, p.res_level, where, sizeof where);
        snprintf(msg, msg_cap, "\"%s\" is not an object, so it has no \"%s\"", where, key->spec);
        return JSONL_NOT_OBJECT;
    default:
        path_prefix(key, p.res_level, where, sizeof where);
        snprintf(msg, msg_cap, "no key \"%s\" in the record", where);
        return JSONL_NO_KEY;
    }
}

int simdbpe__jsonl_fast(const char *line, size_t len, const jsonl_key *key, int replace,
                        jsonl_buf *scratch, const char **text, size_t *text_len, char *msg,
                        size_t msg_cap)
{
    return fast_parse(line, NULL, len, key, replace, scratch, text, text_len, msg, msg_cap);
}

jsonl_status simdbpe__jsonl_jansson(const char *line, size_t len, const jsonl_key *key,
                                    jsonl_buf *scratch, const char **text, size_t *text_len,
                                    char *msg, size_t msg_cap)
{
    json_error_t je;
    json_t *root = json_loadb(line, len, JSON_ALLOW_NUL, &je);
    if (!root) {
        snprintf(msg, msg_cap, "malformed JSON: %s (byte %d)", je.text, je.position);
        return JSONL_MALFORMED;
    }
    jsonl_status st = JSONL_OK;
    char where[256];
    json_t *v = root;
    if (!json_is_object(v)) {
        snprintf(msg, msg_cap, "the record is not a JSON object");
        st = JSONL_NOT_OBJECT;
    }
    for (size_t i = 0; st == JSONL_OK && i < key->n; i++) {
        if (!json_is_object(v)) {
            path_prefix(key, i - 1, where, sizeof where);
            snprintf(msg, msg_cap, "\"%s\" is not an object, so it has no \"%s\"", where, key->spec);
            st = JSONL_NOT_OBJECT;
            break;
        }
        v = json_object_getn(v, key->parts[i], key->lens[i]);
        if (!v) {
            path_prefix(key, i, where, sizeof where);
            snprintf(msg, msg_cap, "no key \"%s\" in the record", where);
            st = JSONL_NO_KEY;
        }
    }
    if (st == JSONL_OK && !json_is_string(v)) {
        snprintf(msg, msg_cap, "the \"%s\" value is not a string", key->spec);
        st = JSONL_NOT_STRING;
    }
    if (st == JSONL_OK) {
        size_t n = json_string_length(v);
        scratch->len = 0;
        if (buf_reserve(scratch, n + 1)) {
            st = JSONL_NOMEM;
            snprintf(msg, msg_cap, "out of memory");
        } else {
            memcpy(scratch->p, json_string_value(v), n);
            scratch->len = n;
            *text = scratch->p;
            *text_len = n;
        }
    }
    json_decref(root);
    return st;
}

jsonl_status simdbpe__jsonl_extract(const char *line, size_t len, const jsonl_key *key, int replace,
                                    jsonl_buf *scratch, const char **text, size_t *text_len,
                                    char *msg, size_t msg_cap, int *used_jansson)
{
    int r = simdbpe__jsonl_fast(line, len, key, replace, scratch, text, text_len, msg, msg_cap);
    if (used_jansson)
        *used_jansson = r < 0;
    if (r >= 0)
        return (jsonl_status)r;
    return simdbpe__jsonl_jansson(line, len, key, scratch, text, text_len, msg, msg_cap);
}

jsonl_status simdbpe__jsonl_extract_in_place(char *line, size_t len, const jsonl_key *key,
                                             int replace, jsonl_buf *scratch, const char **text,
                                             size_t *text_len, char *msg, size_t msg_cap)
{
    int r = fast_parse(line, line, len, key, replace, NULL, text, text_len, msg, msg_cap);
    if (r >= 0)
        return (jsonl_status)r;
    return simdbpe__jsonl_jansson(line, len, key, scratch, text, text_len, msg, msg_cap);
}
