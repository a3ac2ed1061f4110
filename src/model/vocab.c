/*
 * vocab.c - vocabularies as lists of (key, id): vocab.json (a fast path
 * for the usual flat object, jansson for anything else and for exact
 * error positions) and tokenizer.json's model.vocab (load_hf.c).
 */
#include <stdlib.h>

#include <jansson.h>

#include "../common/json_escape.h"
#include "../common/utf8_valid.h"
#include "loader.h"

void simdbpe__vocab_list_free(vocab_list *v)
{
    free(v->keys);
    free(v->key_off);
    free(v->ids);
    memset(v, 0, sizeof *v);
}

simdbpe_status simdbpe__vocab_append(vocab_list *v, const char *key, size_t klen, uint32_t id)
{
    size_t used = v->count ? v->key_off[v->count] : 0;
    if (!v->cap_ids)
        v->cap_ids = v->count;
    if (!v->cap_keys)
        v->cap_keys = used;
    if (v->count + 1 > v->cap_ids) {
        size_t ncap = v->cap_ids ? 2 * v->cap_ids : 256;
        size_t *off = realloc(v->key_off, (ncap + 1) * sizeof *off);
        if (off)
            v->key_off = off;
        uint32_t *ids = off ? realloc(v->ids, ncap * sizeof *ids) : NULL;
        if (ids)
            v->ids = ids;
        if (!off || !ids)
            return SIMDBPE_ERR_NOMEM;
        if (v->count == 0)
            v->key_off[0] = 0;
        v->cap_ids = ncap;
    }
    if (used + klen > v->cap_keys) {
        size_t ncap = 2 * (used + klen) + 4096;
        char *keys = realloc(v->keys, ncap);
        if (!keys)
            return SIMDBPE_ERR_NOMEM;
        v->keys = keys;
        v->cap_keys = ncap;
    }
    memcpy(v->keys + used, key, klen);
    v->ids[v->count] = id;
    v->key_off[v->count + 1] = used + klen;
    v->count++;
    return SIMDBPE_OK;
}

int simdbpe__vocab_missing_byte(const vocab_list *v)
{
    uint8_t seen[256] = {0};
    for (size_t i = 0; i < v->count; i++) {
        const uint8_t *k = (const uint8_t *)v->keys + v->key_off[i];
        size_t n = v->key_off[i + 1] - v->key_off[i], l = 0;
        int b = n ? simdbpe__bytelevel_byte(simdbpe__utf8_decode(k, 0, &l)) : -1;
        if (b >= 0 && l == n)
            seen[b] = 1;
    }
    for (int b = 0; b < 256; b++)
        if (!seen[b])
            return b;
    return -1;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Parses one JSON string at p (after its opening quote) into out; returns
 * the byte after the closing quote, or NULL for anything unusual. */
static const char *fast_string(const char *p, const char *end, char *out, size_t *n)
{
    size_t k = 0;
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20)
            return NULL;
        if (c != '\\') {
            out[k++] = (char)c;
            p++;
            continue;
        }
        uint32_t cp;
        size_t e = simdbpe__json_escape(p + 1, (size_t)(end - p - 1), &cp);
        if (!e || simdbpe__is_surrogate(cp))
            return NULL;
        p += 1 + e;
        k += simdbpe__utf8_encode(cp, (uint8_t *)out + k);
    }
    if (p >= end)
        return NULL;
    *n = k;
    return p + 1;
}

/*
 * The fast path for the usual vocab.json: one flat object of strings to
 * small non-negative integers. It allocates three arrays instead of one
 * node per token (jansson's), which matters where each fresh page is a
 * costly fault (bench/README.md). Returns 0 with the list filled, or -1
 * for anything else (other JSON, duplicate keys, invalid UTF-8, ...), and
 * the caller then parses with jansson, which also gives the error.
 */
static int fast_vocab(const char *json, size_t len, vocab_list *v)
{
    const char *p = json, *end = json + len;
    memset(v, 0, sizeof *v);
    size_t cap = 1024;
    v->keys = simdbpe__model_alloc(len + 1); /* decoded keys are never longer than the text */
    v->key_off = malloc((cap + 1) * sizeof *v->key_off);
    v->ids = malloc(cap * sizeof *v->ids);
    if (!v->keys || !v->key_off || !v->ids)
        goto fail;
    v->key_off[0] = 0;
    p = skip_ws(p, end);
    if (p == end || *p++ != '{')
        goto fail;
    p = skip_ws(p, end);
    if (p < end && *p == '}')
        p++;
    else {
        for (;;) {
            size_t klen;
            if (p == end || *p++ != '"' ||
                !(p = fast_string(p, end, v->keys + v->key_off[v->count], &klen)))
                goto fail;
            p = skip_ws(p, end);
            if (p == end || *p++ != ':')
                goto fail;
            p = skip_ws(p, end);
            uint64_t id = 0;
            const char *digits = p;
            while (p < end && *p >= '0' && *p <= '9' && id < MAX_VOCAB_ID)
                id = id * 10 + (uint64_t)(*p++ - '0');
            if (p == digits || id >= MAX_VOCAB_ID || (*digits == '0' && p - digits > 1) ||
                (p < end && (*p == '.' || *p == 'e' || *p == 'E' || (*p >= '0' && *p <= '9'))))
                goto fail;
            if (v->count == cap) {
                cap *= 2;
                size_t *ko = realloc(v->key_off, (cap + 1) * sizeof *ko);
                if (ko)
                    v->key_off = ko;
                uint32_t *ids = realloc(v->ids, cap * sizeof *ids);
                if (ids)
                    v->ids = ids;
                if (!ko || !ids)
                    goto fail;
            }
            v->ids[v->count] = (uint32_t)id;
            v->key_off[v->count + 1] = v->key_off[v->count] + klen;
            v->count++;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            goto fail;
        }
    }
    if (skip_ws(p, end) != end)
        goto fail;
    /* Keys must be valid UTF-8 and distinct (jansson reports either). */
    if (simdbpe__utf8_validate_from((const uint8_t *)v->keys, v->key_off[v->count], 0) !=
        v->key_off[v->count])
        goto fail;
    uint64_t size = simdbpe__table_size_for(v->count);
    uint32_t *set = simdbpe__model_alloc(size * sizeof *set);
    if (!set)
        goto fail;
    memset(set, 0xFF, size * sizeof *set);
    int dup = 0;
    for (size_t i = 0; i < v->count && !dup; i++) {
        const char *k = v->keys + v->key_off[i];
        size_t kl = v->key_off[i + 1] - v->key_off[i];
        uint64_t j = simdbpe__piece_hash((const uint8_t *)k, kl) & (size - 1);
        for (; set[j] != UINT32_MAX; j = (j + 1) & (size - 1)) {
            size_t o = set[j];
            if (v->key_off[o + 1] - v->key_off[o] == kl && memcmp(v->keys + v->key_off[o], k, kl) == 0)
                dup = 1;
        }
        set[j] = (uint32_t)i;
    }
    free(set);
    if (!dup)
        return 0;
fail:
    simdbpe__vocab_list_free(v);
    return -1;
}

/* The vocabulary object `root` (vocab.json, or tokenizer.json's
 * model.vocab, named `what` in errors) as a list; `len` bounds the keys'
 * total size. */
simdbpe_status simdbpe__vocab_from_json(const json_t *root, size_t len, const char *what,
                                        vocab_list *v, simdbpe_error *err)
{
    memset(v, 0, sizeof *v);
    simdbpe_status st = SIMDBPE_OK;
    char q[96];
    if (!json_is_object(root))
        return simdbpe__fail(err, SIMDBPE_ERR_VOCAB, 0, 1,
                             "%s: expected an object mapping tokens to ids", what);
    size_t count = json_object_size(root), total = 0;
    v->keys = simdbpe__model_alloc(len + 1);
    v->key_off = simdbpe__model_alloc((count + 1) * sizeof *v->key_off);
    v->ids = malloc((count ? count : 1) * sizeof *v->ids);
    if (!v->keys || !v->key_off || !v->ids) {
        st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        goto done;
    }
    v->key_off[0] = 0;
    v->cap_ids = count ? count : 1;
    v->cap_keys = len + 1;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)root, key, val)
    {
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(key));
        simdbpe__quote(q, sizeof q, (const uint8_t *)key, klen);
        if (!json_is_integer(val) || json_integer_value(val) < 0 ||
            json_integer_value(val) >= (json_int_t)MAX_VOCAB_ID) {
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: the id of token %s is not an integer in [0, %u)", what, q,
                               MAX_VOCAB_ID);
            goto done;
        }
        if (total + klen > len) {
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: keys longer than the file", what);
            goto done;
        }
        memcpy(v->keys + total, key, klen);
        total += klen;
        v->ids[v->count] = (uint32_t)json_integer_value(val);
        v->key_off[++v->count] = total;
    }
done:
    if (st != SIMDBPE_OK)
        simdbpe__vocab_list_free(v);
    return st;
}

/* vocab.json through jansson: any JSON, exact error positions. */
static simdbpe_status jansson_vocab(const char *json, size_t len, vocab_list *v,
                                    simdbpe_error *err)
{
    memset(v, 0, sizeof *v);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return simdbpe__fail(err, SIMDBPE_ERR_VOCAB, (uint64_t)jerr.position, (uint64_t)jerr.line,
                             "vocab.json line %d column %d: %s", jerr.line, jerr.column,
                             jerr.text);
    simdbpe_status st = simdbpe__vocab_from_json(root, len, "vocab.json", v, err);
    json_decref(root);
    return st;
}

simdbpe_status simdbpe__vocab_parse(const char *json, size_t len, vocab_list *v,
                                    simdbpe_error *err)
{
    /* A UTF-8 byte order mark may begin a JSON text (RFC 8259 lets a
     * parser ignore it); jansson would call it an unexpected character. */
    if (len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) {
        json += 3;
        len -= 3;
    }
    if (fast_vocab(json, len, v) == 0)
        return SIMDBPE_OK;
    return jansson_vocab(json, len, v, err);
}
