/*
 * test_util.h - small helpers shared by simdbpe's Criterion tests.
 *
 * Header-only (static inline) so every test executable can include it
 * without extra build rules. Helpers that can fail abort the current test
 * with a Criterion assertion naming what failed; none of them prints
 * otherwise.
 *
 * Build definitions the tests rely on (set in tests/core.cmake and friends):
 *   SIMDBPE_TEST_DATA_DIR  "<source>/tests/data"
 *   SIMDBPE_SOURCE_DIR     "<source>" (the project root)
 */
#ifndef SIMDBPE_TEST_UTIL_H
#define SIMDBPE_TEST_UTIL_H

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "simdbpe.h"

#ifndef SIMDBPE_TEST_DATA_DIR
#error "define SIMDBPE_TEST_DATA_DIR as the tests/data folder, a string"
#endif
#ifndef SIMDBPE_SOURCE_DIR
#error "define SIMDBPE_SOURCE_DIR as the project root, a string"
#endif

#define TU_GOLDEN_DIR SIMDBPE_TEST_DATA_DIR "/golden"
#define TU_GPT2_DIR SIMDBPE_SOURCE_DIR "/src/model/gpt2"

/* Reads a whole file into a NUL-terminated buffer; NULL if it cannot. */
static inline char *tu_try_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            break;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        char *p = realloc(buf, cap + 1);
        if (!p) {
            free(buf);
            buf = NULL;
        }
        buf = p;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Reads a whole file; fails the test if it cannot. */
static inline char *tu_read(const char *path, size_t *len)
{
    char *data = tu_try_read(path, len);
    cr_assert(data, "cannot read %s", path);
    return data;
}

static inline void tu_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len, "cannot write %s", path);
    cr_assert_eq(fclose(f), 0, "cannot close %s", path);
}

/* Decodes lower- or upper-case hex into a new buffer of *len bytes. */
static inline uint8_t *tu_hex(const char *hex, size_t *len)
{
    size_t n = strlen(hex) / 2;
    uint8_t *out = malloc(n ? n : 1);
    cr_assert(out);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        cr_assert_eq(sscanf(hex + 2 * i, "%2x", &v), 1, "bad hex \"%s\"", hex);
        out[i] = (uint8_t)v;
    }
    *len = n;
    return out;
}

/* The next record of JSON Lines text data[*at..len) (`what` names it in
 * failures), parsed; NULL at the end. *line counts the lines read. */
static inline json_t *tu_jsonl_next(const char *data, size_t len, size_t *at, size_t *line,
                                    const char *what)
{
    if (*at >= len)
        return NULL;
    const char *nl = memchr(data + *at, '\n', len - *at);
    size_t end = nl ? (size_t)(nl - data) : len;
    (*line)++;
    json_error_t jerr;
    json_t *rec = json_loadb(data + *at, end - *at, JSON_ALLOW_NUL, &jerr);
    cr_assert(rec, "%s line %zu: bad JSON: %s", what, *line, jerr.text);
    *at = end + 1;
    return rec;
}

/* A JSON array of non-negative integers as a new uint32 array. */
static inline uint32_t *tu_json_ids(const json_t *arr, size_t *n)
{
    cr_assert(json_is_array(arr), "expected a JSON array of ids");
    *n = json_array_size(arr);
    uint32_t *ids = malloc((*n ? *n : 1) * sizeof *ids);
    cr_assert(ids);
    for (size_t i = 0; i < *n; i++) {
        const json_t *v = json_array_get(arr, i);
        cr_assert(json_is_integer(v) && json_integer_value(v) >= 0, "id %zu is not an id", i);
        ids[i] = (uint32_t)json_integer_value(v);
    }
    return ids;
}

/* A JSON string (which may hold NUL characters) and its byte length. */
static inline const char *tu_json_text(const json_t *obj, const char *key, size_t *len)
{
    const json_t *s = json_object_get(obj, key);
    cr_assert(json_is_string(s), "record has no string \"%s\"", key);
    *len = json_string_length(s);
    return json_string_value(s);
}

/*
 * Formats where two id sequences first differ, for assertion messages:
 * "at 3: got 220, want 257 (got 5 ids, want 4)". Returns 1 if they differ.
 */
static inline int tu_ids_differ(const uint32_t *got, size_t n_got, const uint32_t *want,
                                size_t n_want, char *msg, size_t cap)
{
    size_t i = 0;
    while (i < n_got && i < n_want && got[i] == want[i])
        i++;
    if (i == n_got && i == n_want)
        return 0;
    snprintf(msg, cap, "first difference at %zu: got %ld, want %ld (got %zu ids, want %zu)", i,
             i < n_got ? (long)got[i] : -1L, i < n_want ? (long)want[i] : -1L, n_got, n_want);
    return 1;
}

/* A short printable form of some text for messages (truncated, escaped). */
static inline void tu_show(char *out, size_t cap, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02X", c);
    }
    if (len && o + 8 >= cap && o + 4 < cap)
        o += (size_t)snprintf(out + o, cap - o, "...");
    out[o] = '\0';
}

/*
 * Calls fn(record, line_number, ctx) for every line of a JSON Lines file,
 * skipping a first line that is a {"header": ...} object. Strings may hold
 * NUL (JSON_ALLOW_NUL). Returns the number of records.
 */
typedef void (*tu_record_fn)(json_t *record, size_t line, void *ctx);

static inline size_t tu_each_jsonl(const char *path, tu_record_fn fn, void *ctx)
{
    size_t len;
    char *data = tu_read(path, &len);
    size_t count = 0, line = 0;
    for (size_t i = 0; i < len;) {
        char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        line++;
        if (end > i) {
            json_error_t jerr;
            json_t *rec = json_loadb(data + i, end - i, JSON_ALLOW_NUL, &jerr);
            cr_assert(rec, "%s line %zu: bad JSON: %s", path, line, jerr.text);
            if (line == 1 && json_object_get(rec, "header")) {
                json_decref(rec);
            } else {
                fn(rec, line, ctx);
                json_decref(rec);
                count++;
            }
        }
        i = end + 1;
    }
    free(data);
    return count;
}

/* The embedded GPT-2 model; fails the test if it does not load. */
static inline simdbpe_model *tu_gpt2(void)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_gpt2(&m, &err);
    cr_assert_eq(st, SIMDBPE_OK, "loading GPT-2: %s", err.message);
    return m;
}

static inline simdbpe_encoder *tu_encoder(const simdbpe_model *m)
{
    simdbpe_encoder *e = NULL;
    cr_assert_eq(simdbpe_encoder_new(m, &e, NULL), SIMDBPE_OK, "simdbpe_encoder_new failed");
    return e;
}

/* Loads a model from in-memory vocab.json / merges.txt (specials may be
 * NULL); returns the status and leaves the model or NULL in *out. */
static inline simdbpe_status tu_load(const char *vocab, const char *merges, const char *specials,
                                     simdbpe_model **out, simdbpe_error *err)
{
    return simdbpe_model_load_memory(vocab, strlen(vocab), merges, strlen(merges), specials,
                                     specials ? strlen(specials) : 0, out, err);
}

/* Encodes and asserts success; returns the encoder's id buffer. */
static inline const uint32_t *tu_encode(simdbpe_encoder *e, const char *text, size_t len,
                                        const simdbpe_encode_options *opts, size_t *n)
{
    const uint32_t *ids = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(e, text, len, opts, &ids, n, &err);
    cr_assert_eq(st, SIMDBPE_OK, "encode failed: %s (%s)", simdbpe_status_name(st), err.message);
    return ids;
}

/* Asserts that `text` encodes to exactly want[0..n_want). */
static inline void tu_expect_ids(simdbpe_encoder *e, const char *text, size_t len,
                                 const simdbpe_encode_options *opts, const uint32_t *want,
                                 size_t n_want, const char *where)
{
    size_t n;
    const uint32_t *ids = tu_encode(e, text, len, opts, &n);
    char msg[160], shown[120];
    if (tu_ids_differ(ids, n, want, n_want, msg, sizeof msg)) {
        tu_show(shown, sizeof shown, text, len);
        cr_assert_fail("%s: \"%s\": %s", where, shown, msg);
    }
}

#endif
