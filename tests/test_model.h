/*
 * test_model.h - building small byte-level models as vocab.json /
 * merges.txt text, for tests.
 *
 * The byte-level alphabet here is written from its definition in
 * shared/REFERENCE.md (bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF stand for
 * themselves; the other 68 bytes, ascending, for U+0100, U+0101, ...), not
 * taken from the library, so tests that use it check the library's own
 * table too.
 */
#ifndef SIMDBPE_TEST_MODEL_H
#define SIMDBPE_TEST_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int tm_prints_as_itself(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

/* The code point that spells byte b in vocab.json and merges.txt. */
static inline uint32_t tm_byte_cp(unsigned b)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        uint32_t next = 0x100;
        for (unsigned c = 0; c < 256; c++)
            table[c] = tm_prints_as_itself(c) ? c : next++;
        ready = 1;
    }
    return table[b & 0xFF];
}

/* Appends the UTF-8 of code point cp (< 0x800 here) to out at *o. */
static inline void tm_put_cp(char *out, size_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else {
        out[(*o)++] = (char)(0xC0 | cp >> 6);
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* Spells bytes s[0..len) in the byte-level alphabet, NUL-terminated, JSON
 * escaped when `json` (only '"' and '\\' need it: the alphabet has no
 * controls). `out` needs room for 4 * len + 1 bytes. */
static inline void tm_spell(char *out, const uint8_t *s, size_t len, int json)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t cp = tm_byte_cp(s[i]);
        if (json && (cp == '"' || cp == '\\'))
            out[o++] = '\\';
        tm_put_cp(out, &o, cp);
    }
    out[o] = '\0';
}

/* A growable string. */
typedef struct tm_buf {
    char *s;
    size_t len, cap;
} tm_buf;

static inline void tm_add(tm_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p)
            abort();
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static inline void tm_addf_entry(tm_buf *b, const char *key_json, uint32_t id)
{
    char num[32];
    if (b->len > 1)
        tm_add(b, ",", 1);
    tm_add(b, "\"", 1);
    tm_add(b, key_json, strlen(key_json));
    int n = snprintf(num, sizeof num, "\":%u", id);
    tm_add(b, num, (size_t)n);
}

/* Starts a vocab.json object holding the 256 byte tokens, byte b with id
 * byte_ids[b] (or b when byte_ids is NULL); `skip_byte` (0..255) leaves one
 * byte out, -1 none. Close it with tm_vocab_end. */
static inline void tm_vocab_begin(tm_buf *b, const uint32_t *byte_ids, int skip_byte)
{
    tm_add(b, "{", 1);
    for (unsigned c = 0; c < 256; c++) {
        if ((int)c == skip_byte)
            continue;
        char key[8];
        uint8_t byte = (uint8_t)c;
        tm_spell(key, &byte, 1, 1);
        tm_addf_entry(b, key, byte_ids ? byte_ids[c] : c);
    }
}

/* Adds a token given as raw bytes (a C string). */
static inline void tm_vocab_token(tm_buf *b, const char *bytes, uint32_t id)
{
    char key[256];
    tm_spell(key, (const uint8_t *)bytes, strlen(bytes), 1);
    tm_addf_entry(b, key, id);
}

static inline void tm_vocab_end(tm_buf *b)
{
    tm_add(b, "}", 1);
}

/* Adds the merges.txt line "left right" (raw bytes, spelled here). */
static inline void tm_merge(tm_buf *b, const char *left, const char *right)
{
    char l[256], r[256];
    tm_spell(l, (const uint8_t *)left, strlen(left), 0);
    tm_spell(r, (const uint8_t *)right, strlen(right), 0);
    tm_add(b, l, strlen(l));
    tm_add(b, " ", 1);
    tm_add(b, r, strlen(r));
    tm_add(b, "\n", 1);
}

#endif
