/*
 * load.c - building a model from vocab.json + merges.txt (+ specials).
 *
 * Semantics follow HF tokenizers' BPE::from_files for GPT-2 style files:
 *   - vocab.json maps byte-level strings to ids; ids need not be dense.
 *   - merges.txt: an optional "#version" first line, then "left right"
 *     per line; rank = index among merge lines; the merged token is
 *     vocab[left + right]. A pair listed twice keeps its last rank (HF
 *     collects the list into a hash map, so the later entry wins).
 *   - special tokens are literal text and must be in vocab.json.
 * Nothing is half-loaded: on any error everything is freed and the error
 * names the file, line or key.
 */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <jansson.h>

#include "../../kernels/kernels.h"
#include "../common/utf8_valid.h"
#include "loader.h"



/* every token's bytes -> id while loading (resolving merges.txt) */


static uint64_t table_size_for(uint64_t n)
{
    uint64_t size = 16;
    while (size < n * 2)
        size *= 2;
    return size;
}

static const uint8_t *token_ptr(const simdbpe_model *m, uint32_t id, size_t *len)
{
    *len = m->tok_off[id + 1] - m->tok_off[id];
    return m->blob + m->tok_off[id];
}

/* The table of every token's bytes -> id used while loading (to resolve
 * merges.txt): open addressing, slots hold an id and 32 hash bits. */
/* Inserts id under its bytes; returns the id already there with the same
 * bytes, or SIMDBPE__NO_ID. */
static uint32_t bytes_table_insert(const simdbpe_model *m, bytes_slot *t, uint64_t mask,
                                   uint32_t id)
{
    size_t len;
    const uint8_t *s = token_ptr(m, id, &len);
    uint64_t h = simdbpe__piece_hash(s, len);
    uint64_t i = h & mask;
    while (t[i].id != SIMDBPE__NO_ID) {
        size_t olen;
        const uint8_t *o = token_ptr(m, t[i].id, &olen);
        if (t[i].hash32 == (uint32_t)(h >> 32) && olen == len && memcmp(o, s, len) == 0)
            return t[i].id;
        i = (i + 1) & mask;
    }
    t[i].id = id;
    t[i].hash32 = (uint32_t)(h >> 32);
    return SIMDBPE__NO_ID;
}

static uint32_t bytes_table_find(const simdbpe_model *m, const bytes_slot *t, uint64_t mask,
                                 const uint8_t *s, size_t len)
{
    uint64_t h = simdbpe__piece_hash(s, len);
    for (uint64_t i = h & mask; t[i].id != SIMDBPE__NO_ID; i = (i + 1) & mask) {
        size_t olen;
        const uint8_t *o = token_ptr(m, t[i].id, &olen);
        if (t[i].hash32 == (uint32_t)(h >> 32) && olen == len && memcmp(o, s, len) == 0)
            return t[i].id;
    }
    return SIMDBPE__NO_ID;
}

/* Decodes a UTF-8 byte-level string into bytes; returns the number of
 * bytes, or -1 (with *bad_cp set) if a code point is not in the alphabet.
 * `s` is valid UTF-8 (jansson and our own checks guarantee it). */
static long decode_bytelevel(const loader *ld, const uint8_t *s, size_t len, uint8_t *out,
                             uint32_t *bad_cp)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        uint8_t c = s[i];
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < len) {
            cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            i += 2;
        } else {
            /* 3- and 4-byte sequences are all outside the alphabet. */
            *bad_cp = c;
            if ((c & 0xF0) == 0xE0 && i + 2 < len)
                *bad_cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
                          (s[i + 2] & 0x3F);
            else if ((c & 0xF8) == 0xF0 && i + 3 < len)
                *bad_cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
                          (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
            return -1;
        }
        if (cp >= 0x144 || ld->cp_byte[cp] < 0) {
            *bad_cp = cp;
            return -1;
        }
        out[n++] = (uint8_t)ld->cp_byte[cp];
    }
    return (long)n;
}

/* ---- specials list ---- */


static simdbpe_status parse_specials(const char *text, size_t len, special_text **out,
                                     size_t *n_out, simdbpe_error *err)
{
    static const char default_special[] = "<|endoftext|>";
    size_t cap = 0, n = 0;
    special_text *list = NULL;
    if (!text) {
        list = malloc(sizeof *list);
        if (!list)
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        list[0] = (special_text){(const uint8_t *)default_special, sizeof default_special - 1,
                                 SIMDBPE__NO_ID, SIMDBPE__ADDED_SPECIAL};
        *out = list;
        *n_out = 1;
        return SIMDBPE_OK;
    }
    uint64_t line = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        line++;
        size_t e = j;
        if (e > i && text[e - 1] == '\r')
            e--;
        if (e > i) {
            if (memchr(text + i, '\0', e - i)) {
                free(list);
                return simdbpe__fail(err, SIMDBPE_ERR_SPECIALS, i, line,
                                     "special_tokens line %llu: contains a NUL byte",
                                     (unsigned long long)line);
            }
            if (simdbpe__grow((void **)&list, &cap, n + 1, sizeof *list)) {
                free(list);
                return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                     "out of memory");
            }
            list[n++] = (special_text){(const uint8_t *)text + i, e - i, SIMDBPE__NO_ID,
                                       SIMDBPE__ADDED_SPECIAL};
        }
        i = j + 1;
    }
    *out = list;
    *n_out = n;
    return SIMDBPE_OK;
}

/* ---- vocab.json ---- */


void simdbpe__vocab_list_free(vocab_list *v)
{
    free(v->keys);
    free(v->key_off);
    free(v->ids);
    memset(v, 0, sizeof *v);
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

static int hex4(const char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
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
        if (end - p < 2)
            return NULL;
        char e = p[1];
        p += 2;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *f = e ? strchr(from, e) : NULL;
        if (f) {
            out[k++] = to[f - from];
            continue;
        }
        uint32_t cp;
        if (e != 'u' || end - p < 4 || hex4(p, &cp))
            return NULL;
        p += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) || lo < 0xDC00 ||
                lo > 0xDFFF)
                return NULL;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            return NULL;
        }
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
 * node per token (jansson's), which matters: on these machines each fresh
 * page costs tens of microseconds. Returns 0 with the list filled, or -1
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
    uint64_t size = table_size_for(v->count);
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
        size_t n = v->key_off[i + 1] - v->key_off[i];
        uint32_t cp = n == 1 ? k[0] : n == 2 && (k[0] & 0xE0) == 0xC0 ? (uint32_t)(k[0] & 0x1F) << 6 | (k[1] & 0x3F) : 0x144;
        int b = cp < 0x144 ? simdbpe__bytelevel_byte(cp) : -1;
        if (b >= 0)
            seen[b] = 1;
    }
    for (int b = 0; b < 256; b++)
        if (!seen[b])
            return b;
    return -1;
}

/* The tokens of list v: ids, bytes (byte-level keys decoded; an added
 * token, matched by id when it is given, else by text, is its key decoded
 * too when every character of it is in the byte-level alphabet, else its
 * literal text: what HF's ByteLevel decoder gives for it). The blob has
 * room after the tokens for the added tokens' texts (simdbpe__build).
 * `what` names the source in errors. */
static simdbpe_status take_vocab(loader *ld, vocab_list *v_in, const char *what,
                                 special_text *sp, size_t n_sp, simdbpe_error *err)
{
    simdbpe_model *m = ld->m;
    vocab_list v = *v_in;
    memset(v_in, 0, sizeof *v_in);
    simdbpe_status st = SIMDBPE_OK;
    char q[96];
    /* First pass: ids, sizes. */
    uint32_t max_id = 0;
    size_t total = v.key_off[v.count], count = v.count;
    for (size_t i = 0; i < count; i++) {
        if (v.key_off[i + 1] == v.key_off[i]) {
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: empty token string", what);
            goto done;
        }
        if (v.ids[i] > max_id)
            max_id = v.ids[i];
    }
    if (count == 0) {
        st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, 0, 1, "%s: no tokens", what);
        goto done;
    }
    m->vocab_size = max_id + 1;
    m->n_tokens = (uint32_t)count;
    size_t texts = 0;
    for (size_t s = 0; s < n_sp; s++)
        texts += sp[s].len;
    uint32_t *tok_off = simdbpe__model_calloc((size_t)m->vocab_size + 1, sizeof *tok_off);
    uint8_t *tok_has = calloc(m->vocab_size, 1);
    uint8_t *blob = simdbpe__model_alloc(total + texts ? total + texts : 1);
    m->tok_off = tok_off;
    m->tok_has = tok_has;
    m->blob = blob;
    uint8_t *tmp = simdbpe__model_alloc(total); /* decoded bytes, in object order */
    uint32_t *tmp_len = malloc(count * sizeof *tmp_len);
    uint32_t *tmp_id = malloc(count * sizeof *tmp_id);
    m->blob_len = total;
    if (!m->tok_off || !m->tok_has || !tmp || !tmp_len || !tmp_id || !m->blob) {
        free(tmp);
        free(tmp_len);
        free(tmp_id);
        st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        goto done;
    }
    /* Second pass: decode each key, check ids are unique. */
    size_t k = 0, pos = 0;
    for (size_t i = 0; i < count; i++) {
        const char *key = v.keys + v.key_off[i];
        size_t klen = v.key_off[i + 1] - v.key_off[i];
        uint32_t id = v.ids[i];
        if (m->tok_has[id]) {
            simdbpe__quote(q, sizeof q, (const uint8_t *)key, klen);
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: id %u is given to more than one token (one is %s)", what,
                               id, q);
            break;
        }
        tok_has[id] = 1;
        int special = 0;
        for (size_t s = 0; s < n_sp; s++) {
            if (sp[s].id != SIMDBPE__NO_ID ? sp[s].id == id
                                           : sp[s].len == klen && memcmp(sp[s].s, key, klen) == 0) {
                sp[s].id = id;
                special = 1;
            }
        }
        uint32_t bad = 0;
        long n = decode_bytelevel(ld, (const uint8_t *)key, klen, tmp + pos, &bad);
        if (n < 0 && special) {
            memcpy(tmp + pos, key, klen);
            n = (long)klen;
        }
        if (n < 0) {
            simdbpe__quote(q, sizeof q, (const uint8_t *)key, klen);
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: token %s has code point U+%04X, which is not "
                               "in the byte-level alphabet (is it a special token?)",
                               what, q, bad);
            break;
        }
        tmp_len[k] = (uint32_t)n;
        tmp_id[k] = id;
        pos += (size_t)n;
        k++;
    }
    if (st == SIMDBPE_OK) {
        /* Lay the bytes out in id order. */
        uint32_t *len_by_id = simdbpe__model_calloc(m->vocab_size, sizeof *len_by_id);
        uint32_t *src_by_id = simdbpe__model_calloc(m->vocab_size, sizeof *src_by_id);
        if (!len_by_id || !src_by_id) {
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        } else {
            size_t off = 0;
            for (size_t i = 0; i < count; i++) {
                len_by_id[tmp_id[i]] = tmp_len[i];
                src_by_id[tmp_id[i]] = (uint32_t)off;
                off += tmp_len[i];
            }
            off = 0;
            for (uint32_t id = 0; id < m->vocab_size; id++) {
                tok_off[id] = (uint32_t)off;
                memcpy(blob + off, tmp + src_by_id[id], len_by_id[id]);
                off += len_by_id[id];
            }
            tok_off[m->vocab_size] = (uint32_t)off;
            m->blob_len = off;
        }
        free(len_by_id);
        free(src_by_id);
    }
    free(tmp);
    free(tmp_len);
    free(tmp_id);
done:
    simdbpe__vocab_list_free(&v);
    return st;
}

/* ---- merges.txt ---- */

/*
 * Adds the merge of the byte-level strings a and b (the next rank). `what`,
 * `line` and `close` say where it was read ("merges.txt line " 3 "",
 * "tokenizer.json: model.merges[" 2 "]"), `at` its byte offset or
 * SIMDBPE_NO_POSITION.
 */
static simdbpe_status add_merge(loader *ld, const uint8_t *a, size_t alen, const uint8_t *b,
                                size_t blen, const char *what, uint64_t line, const char *close,
                                uint64_t at, const char *vocab_name, simdbpe_error *err)
{
    simdbpe_model *m = ld->m;
    uint8_t buf[2 * SIMDBPE__MAX_TOKEN_BYTES]; /* byte-level text: <= 2 bytes a byte */
    char q[96];
    uint64_t err_line = at == SIMDBPE_NO_POSITION ? 0 : line;
    if (alen + blen > sizeof buf)
        return simdbpe__fail(err, SIMDBPE_ERR_MERGES, at, err_line, "%s%llu%s: tokens too long",
                             what, (unsigned long long)line, close);
    /* buf = bytes of a, then bytes of b: the merged token is all of it. */
    uint32_t bad = 0;
    long na = decode_bytelevel(ld, a, alen, buf, &bad);
    long nb = na < 0 ? -1 : decode_bytelevel(ld, b, blen, buf + na, &bad);
    if (na >= 0 && nb >= 0 && (size_t)(na + nb) > SIMDBPE__MAX_TOKEN_BYTES)
        return simdbpe__fail(err, SIMDBPE_ERR_MERGES, at, err_line,
                             "%s%llu%s: the merged token has %ld bytes, more than the limit of %d",
                             what, (unsigned long long)line, close, na + nb,
                             SIMDBPE__MAX_TOKEN_BYTES);
    if (na < 0 || nb < 0) {
        simdbpe__quote(q, sizeof q, na < 0 ? a : b, na < 0 ? alen : blen);
        return simdbpe__fail(err, SIMDBPE_ERR_MERGES, at, err_line,
                             "%s%llu%s: token %s is not a byte-level string (code point U+%04X)",
                             what, (unsigned long long)line, close, q, bad);
    }
    const uint8_t *dec[3] = {buf, buf + na, buf};
    size_t dlen[3] = {(size_t)na, (size_t)nb, (size_t)(na + nb)};
    uint32_t ids[3];
    for (int p = 0; p < 3; p++) {
        ids[p] = bytes_table_find(m, ld->all, ld->all_mask, dec[p], dlen[p]);
        if (ids[p] == SIMDBPE__NO_ID) {
            if (p == 2) {
                char qa[48], qb[48];
                simdbpe__quote(qa, sizeof qa, a, alen);
                simdbpe__quote(qb, sizeof qb, b, blen);
                return simdbpe__fail(err, SIMDBPE_ERR_MERGES, at, err_line,
                                     "%s%llu%s: the merge of %s and %s is not in %s", what,
                                     (unsigned long long)line, close, qa, qb, vocab_name);
            }
            simdbpe__quote(q, sizeof q, p ? b : a, p ? blen : alen);
            return simdbpe__fail(err, SIMDBPE_ERR_MERGES, at, err_line,
                                 "%s%llu%s: token %s is not in %s", what,
                                 (unsigned long long)line, close, q, vocab_name);
        }
    }
    return simdbpe__loader_merge(ld, ids[0], ids[1], ids[2], err);
}

simdbpe_status simdbpe__loader_merge(loader *ld, uint32_t left, uint32_t right, uint32_t id,
                                     simdbpe_error *err)
{
    if (simdbpe__grow((void **)&ld->merges, &ld->cap_merges, ld->n_merges + 1,
                      sizeof *ld->merges))
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    ld->merges[ld->n_merges++] = (pending_merge){left, right, id};
    return SIMDBPE_OK;
}

static simdbpe_status parse_merges(loader *ld, const char *txt, size_t len, simdbpe_error *err)
{
    /* HF reads merges.txt as one UTF-8 string and refuses it otherwise; so
     * do we, rather than read a stray lead byte together with the next
     * character (the "#version" line included). */
    size_t valid = simdbpe__kernels_scalar.validate_utf8((const uint8_t *)txt, len);
    if (valid != len) {
        uint64_t bad_line = 1;
        for (size_t k = 0; k < valid; k++)
            bad_line += txt[k] == '\n';
        return simdbpe__fail(err, SIMDBPE_ERR_MERGES, valid, bad_line,
                             "merges.txt line %llu: invalid UTF-8 at byte offset %zu",
                             (unsigned long long)bad_line, valid);
    }
    uint64_t line = 0;
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        size_t j = i;
        while (j < len && txt[j] != '\n')
            j++;
        line++;
        size_t e = j;
        if (e > i && txt[e - 1] == '\r')
            e--;
        i = j + 1;
        if (line == 1 && e - start >= 8 && memcmp(txt + start, "#version", 8) == 0)
            continue;
        const char *sp = memchr(txt + start, ' ', e - start);
        if (e == start || !sp || memchr(sp + 1, ' ', (size_t)(txt + e - sp - 1)) ||
            sp == txt + start || sp + 1 == txt + e)
            return simdbpe__fail(err, SIMDBPE_ERR_MERGES, start, line,
                                 "merges.txt line %llu: expected two tokens separated by one "
                                 "space",
                                 (unsigned long long)line);
        const uint8_t *a = (const uint8_t *)txt + start, *b = (const uint8_t *)sp + 1;
        size_t alen = (size_t)((const uint8_t *)sp - a), blen = (size_t)((const uint8_t *)txt + e - b);
        simdbpe_status st = add_merge(ld, a, alen, b, blen, "merges.txt line ", line, "", start,
                                      "vocab.json", err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

/* ---- finishing ---- */

/* The merge table: rules by rank and a minimal perfect hash of the pairs.
 * A pair listed twice keeps its last rank; the earlier rank stays in
 * `rules` but no slot points to it. */
static simdbpe_status build_merge_table(simdbpe_model *m, const pending_merge *list, size_t n,
                                        simdbpe_error *err)
{
    simdbpe__merge_rule *rules = simdbpe__model_alloc((n ? n : 1) * sizeof *rules);
    uint64_t *keys = simdbpe__model_alloc((n ? n : 1) * sizeof *keys);
    uint32_t *rank_of = NULL;
    simdbpe__merge_slot *slots = NULL;
    uint32_t *pilots = NULL;
    uint32_t n_keys = 0;
    simdbpe_status st = SIMDBPE_OK;
    if (!rules || !keys) {
        st = SIMDBPE_ERR_NOMEM;
        goto done;
    }
    m->rules = rules;
    m->n_merges = (uint32_t)n;
    /* Distinct keys, each with its last rank: an open-addressing pass. */
    uint64_t size = table_size_for(n);
    rank_of = simdbpe__model_alloc(size * sizeof *rank_of);
    uint64_t *seen = simdbpe__model_alloc(size * sizeof *seen);
    if (!rank_of || !seen) {
        free(seen);
        st = SIMDBPE_ERR_NOMEM;
        goto done;
    }
    for (uint64_t i = 0; i < size; i++)
        rank_of[i] = SIMDBPE__NO_ID;
    for (size_t r = 0; r < n; r++) {
        rules[r] = (simdbpe__merge_rule){list[r].left, list[r].right, list[r].id};
        uint64_t key = (uint64_t)list[r].left << 32 | list[r].right;
        uint64_t i = simdbpe__hash_u64(key) & (size - 1);
        while (rank_of[i] != SIMDBPE__NO_ID && seen[i] != key)
            i = (i + 1) & (size - 1);
        if (rank_of[i] == SIMDBPE__NO_ID)
            keys[n_keys++] = key;
        seen[i] = key;
        rank_of[i] = (uint32_t)r;
    }
    if (simdbpe__merge_filters_build(m) != SIMDBPE_OK ||
        simdbpe__mph_build(&m->merge_mph, &pilots, keys, n_keys)) {
        free(seen);
        st = SIMDBPE_ERR_NOMEM;
        goto done;
    }
    slots = simdbpe__model_alloc((n_keys ? n_keys : 1) * sizeof *slots);
    if (!slots) {
        free(seen);
        st = SIMDBPE_ERR_NOMEM;
        goto done;
    }
    for (uint32_t k = 0; k < n_keys; k++) {
        uint64_t i = simdbpe__hash_u64(keys[k]) & (size - 1);
        while (seen[i] != keys[k])
            i = (i + 1) & (size - 1);
        uint32_t r = rank_of[i];
        slots[simdbpe__mph_slot(&m->merge_mph, keys[k])] =
            (simdbpe__merge_slot){keys[k], r, rules[r].id};
    }
    free(seen);
    m->merges = slots;
    slots = NULL;
    pilots = NULL;
    /* Lookups see only distinct pairs. */
    m->merge_mph.n_keys = n_keys;
done:
    free(keys);
    free(rank_of);
    free(slots);
    if (st != SIMDBPE_OK) {
        free(pilots);
        m->merge_mph.pilots = NULL;
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    return SIMDBPE_OK;
}

/* Puts into the whole-token map every token that BPE yields from its own
 * bytes (with ignore_merges: every token), and records whether that is
 * every token that is not an added one. */
static simdbpe_status build_whole_map(simdbpe_model *m, simdbpe_error *err)
{
    size_t max_len = 0;
    for (uint32_t id = 0; id < m->vocab_size; id++)
        if (m->tok_off[id + 1] - m->tok_off[id] > max_len)
            max_len = m->tok_off[id + 1] - m->tok_off[id];
    uint32_t *out = malloc((max_len + 1) * sizeof *out);
    uint32_t *ids = simdbpe__model_alloc((m->n_tokens ? m->n_tokens : 1) * sizeof *ids);
    uint64_t *keys = simdbpe__model_alloc((m->n_tokens ? m->n_tokens : 1) * sizeof *keys);
    uint8_t *reach = malloc(m->vocab_size ? m->vocab_size : 1);
    uint8_t *added = calloc(m->vocab_size ? m->vocab_size : 1, 1);
    simdbpe__bpe_scratch scratch = {0};
    simdbpe_status st = out && ids && keys && reach && added ? SIMDBPE_OK : SIMDBPE_ERR_NOMEM;
    if (st == SIMDBPE_OK)
        st = simdbpe__reach(m, reach);
    for (size_t i = 0; st == SIMDBPE_OK && i < m->n_specials; i++)
        added[m->specials[i].id] = 1;
    uint32_t unreachable = 0, n = 0;
    for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++) {
        size_t len;
        const uint8_t *s = token_ptr(m, id, &len);
        if (!m->tok_has[id] || len == 0 || added[id])
            continue;
        /* The rules tell most tokens; BPE tells the others. */
        int yes = reach[id] == SIMDBPE__REACH_YES;
        if (reach[id] == SIMDBPE__REACH_ASK) {
            size_t k = 0;
            st = simdbpe__bpe_word(m, &scratch, s, len, out, &k);
            yes = st == SIMDBPE_OK && k == 1 && out[0] == id;
        }
        unreachable += !yes;
        if (yes || m->ignore_merges) {
            ids[n] = id;
            keys[n++] = simdbpe__piece_hash(s, len);
        }
    }
    free(out);
    free(reach);
    free(added);
    simdbpe__bpe_scratch_free(&scratch);
    uint32_t *pilots = NULL;
    simdbpe__whole_slot *slots = NULL;
    if (st == SIMDBPE_OK && simdbpe__mph_build(&m->whole_mph, &pilots, keys, n) != 0)
        st = SIMDBPE_ERR_UNSUPPORTED; /* two tokens with equal 64-bit hashes */
    if (st == SIMDBPE_OK && !(slots = simdbpe__model_alloc((n ? n : 1) * sizeof *slots)))
        st = SIMDBPE_ERR_NOMEM;
    for (uint32_t i = 0; st == SIMDBPE_OK && i < n; i++) {
        size_t len;
        const uint8_t *s = token_ptr(m, ids[i], &len);
        simdbpe__whole_slot *w = &slots[simdbpe__mph_slot(&m->whole_mph, keys[i])];
        simdbpe__short_words(s, len < 16 ? len : 16, &w->lo, &w->hi);
        w->id = ids[i];
        w->len = (uint32_t)len;
    }
    free(ids);
    free(keys);
    if (st != SIMDBPE_OK) {
        free(pilots);
        free(slots);
        m->whole_mph.pilots = NULL;
        return simdbpe__fail(err, st, SIMDBPE_NO_POSITION, 0, "%s",
                             st == SIMDBPE_ERR_NOMEM ? "out of memory"
                                                     : "cannot build the whole-token hash");
    }
    m->whole = slots;
    m->n_whole = n;
    m->whole_exact = unreachable == 0 || m->ignore_merges;
    m->no_cuts = m->ignore_merges && unreachable > 0;
    if (m->no_cuts)
        memset((void *)m->joins, 0xFF, SIMDBPE__JOINS_WORDS * sizeof *m->joins);
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__model_finish(simdbpe_model *m, simdbpe_error *err)
{
    return build_whole_map(m, err);
}

/* Frees a model's arrays while it is being built (image == NULL). */
static void free_arrays(simdbpe_model *m)
{
    free((void *)m->tok_off);
    free((void *)m->tok_has);
    free((void *)m->blob);
    free((void *)m->merges);
    free((void *)m->merge_mph.pilots);
    free((void *)m->rules);
    free((void *)m->pair_filter);
    free((void *)m->joins);
    free((void *)m->whole);
    free((void *)m->whole_mph.pilots);
    free(m->specials);
    free(m);
}

/* Turns a built model into its compiled image and opens that, so every
 * model has the one representation the encoder and .sbpe files share. */
static simdbpe_status to_image(simdbpe_model *built, simdbpe_model **out, simdbpe_error *err)
{
    size_t len = simdbpe__image_size(built);
    /* Huge pages when the image is big: a few MB of fresh 4 KB pages cost
     * ~10 ms of page faults on virtual machines. */
    size_t align = len >= (1u << 20) ? (2u << 20) : 64;
    size_t bytes = (len + align - 1) / align * align;
    uint8_t *image = aligned_alloc(align, bytes);
    if (!image)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
#if defined(MADV_HUGEPAGE)
    if (align > 64)
        madvise(image, bytes, MADV_HUGEPAGE);
#endif
    simdbpe__image_write(built, image);
    /* The joins built with the pair filter go to the opened model. */
    simdbpe_status st =
        simdbpe__image_open(image, len, SIMDBPE__IMAGE_MALLOC, 1, built->joins, out, err);
    if (st != SIMDBPE_OK)
        free(image);
    else
        built->joins = NULL;
    return st;
}

simdbpe_status simdbpe__build(simdbpe__build_spec *spec, simdbpe_model **out,
                              simdbpe_error *err)
{
    *out = NULL;
    loader ld = {0};
    for (uint32_t cp = 0; cp < 0x144; cp++)
        ld.cp_byte[cp] = (int16_t)simdbpe__bytelevel_byte(cp);
    special_text *sp = spec->added;
    size_t n_sp = spec->n_added;
    simdbpe_model *m = calloc(1, sizeof *m);
    if (!m) {
        simdbpe__vocab_list_free(&spec->vocab);
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    ld.m = m;
    m->pretok = spec->pretok;
    m->normalizer = spec->normalizer;
    m->ignore_merges = spec->ignore_merges;
    simdbpe_status st = take_vocab(&ld, &spec->vocab, spec->vocab_name, sp, n_sp, err);
    if (st == SIMDBPE_OK) {
        /* Added tokens: each must have an id (a special named in a
         * special_tokens list is optional only when it is the default). */
        m->specials = calloc(n_sp ? n_sp : 1, sizeof *m->specials);
        if (!m->specials)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        for (size_t i = 0; st == SIMDBPE_OK && i < n_sp; i++) {
            if (sp[i].id == SIMDBPE__NO_ID || sp[i].id >= m->vocab_size || !m->tok_has[sp[i].id]) {
                if (!spec->added_required)
                    continue;
                char q[96];
                simdbpe__quote(q, sizeof q, sp[i].s, sp[i].len);
                st = simdbpe__fail(err, SIMDBPE_ERR_SPECIALS, SIMDBPE_NO_POSITION, 0,
                                   "special token %s is not in %s", q, spec->vocab_name);
                break;
            }
            /* Matched by its text (sp[i].s): the token's bytes when they are
             * the same, else a copy after the tokens' bytes (take_vocab left
             * room for it). */
            size_t len;
            const uint8_t *text = token_ptr(m, sp[i].id, &len);
            if (len != sp[i].len || memcmp(text, sp[i].s, len) != 0) {
                uint8_t *at = (uint8_t *)m->blob + m->blob_len;
                memcpy(at, sp[i].s, sp[i].len);
                m->blob_len += sp[i].len;
                text = at;
                len = sp[i].len;
            }
            m->specials[m->n_specials++] =
                (simdbpe__special){sp[i].id, (uint32_t)len, text, sp[i].flags & ~ADDED_IN_VOCAB};
        }
    }
    for (int i = 0; st == SIMDBPE_OK && i < spec->n_prefix + spec->n_suffix; i++) {
        uint32_t id = i < spec->n_prefix ? spec->prefix[i] : spec->suffix[i - spec->n_prefix];
        if (id >= m->vocab_size || !m->tok_has[id])
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: post-processor token id %u is not in the vocabulary",
                               spec->vocab_name, id);
    }
    if (st == SIMDBPE_OK) {
        m->n_prefix = spec->n_prefix;
        m->n_suffix = spec->n_suffix;
        memcpy(m->prefix, spec->prefix, sizeof m->prefix);
        memcpy(m->suffix, spec->suffix, sizeof m->suffix);
        ld.all_mask = table_size_for(m->n_tokens) - 1;
        ld.all = simdbpe__model_alloc((ld.all_mask + 1) * sizeof *ld.all);
        if (!ld.all)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        for (uint64_t i = 0; st == SIMDBPE_OK && i <= ld.all_mask; i++)
            ld.all[i].id = SIMDBPE__NO_ID;
        /* Lower ids first, so that bytes shared by two ids resolve to the
         * lower; added tokens (literal text) are not BPE's to find, unless
         * they are in the BPE vocabulary too (a merge may make them). */
        uint8_t *added = st == SIMDBPE_OK ? calloc(m->vocab_size, 1) : NULL;
        if (st == SIMDBPE_OK && !added)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        for (size_t i = 0; st == SIMDBPE_OK && i < n_sp; i++)
            if (sp[i].id < m->vocab_size && !(sp[i].flags & ADDED_IN_VOCAB))
                added[sp[i].id] = 1;
        for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++)
            if (m->tok_has[id] && !added[id])
                bytes_table_insert(m, ld.all, ld.all_mask, id);
        free(added);
    }
    for (int b = 0; st == SIMDBPE_OK && b < 256; b++) {
        uint8_t byte = (uint8_t)b;
        m->byte_id[b] = bytes_table_find(m, ld.all, ld.all_mask, &byte, 1);
        if (m->byte_id[b] == SIMDBPE__NO_ID)
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                               "%s: no token for byte 0x%02X (code point U+%04X); a "
                               "byte-level vocabulary needs all 256",
                               spec->vocab_name, b, simdbpe__bytelevel_cp(byte));
    }
    if (st == SIMDBPE_OK)
        st = spec->merges(&ld, spec->merges_ctx, err);
    if (st == SIMDBPE_OK)
        st = build_merge_table(m, ld.merges, ld.n_merges, err);
    if (st == SIMDBPE_OK)
        st = simdbpe__model_finish(m, err);
    free(ld.all);
    free(ld.merges);
    if (st == SIMDBPE_OK)
        st = to_image(m, out, err);
    if (st == SIMDBPE_OK) {
        (*out)->notice = spec->notice;
        spec->notice = NULL;
    }
    free(spec->notice);
    spec->notice = NULL;
    free_arrays(m);
    return st;
}

/* The loader's view of merges.txt, for simdbpe__build. */
typedef struct merges_text {
    const char *txt;
    size_t len;
} merges_text;

static simdbpe_status merges_from_text(loader *ld, void *ctx, simdbpe_error *err)
{
    const merges_text *t = ctx;
    return parse_merges(ld, t->txt, t->len, err);
}

simdbpe_status simdbpe__loader_merge_strings(loader *ld, const uint8_t *a, size_t alen,
                                             const uint8_t *b, size_t blen, const char *what,
                                             uint64_t index, simdbpe_error *err)
{
    return add_merge(ld, a, alen, b, blen, what, index, "]", SIMDBPE_NO_POSITION,
                     "the vocabulary", err);
}

uint32_t simdbpe__loader_find(const loader *ld, const uint8_t *s, size_t len)
{
    return bytes_table_find(ld->m, ld->all, ld->all_mask, s, len);
}

simdbpe_status simdbpe_model_load_memory(const char *vocab_json, size_t vocab_len,
                                         const char *merges_txt, size_t merges_len,
                                         const char *specials, size_t specials_len,
                                         simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || !vocab_json || !merges_txt)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_load_memory: NULL argument");
    *out = NULL;
    simdbpe__build_spec spec = {0};
    spec.vocab_name = "vocab.json";
    simdbpe_status st = parse_specials(specials, specials_len, &spec.added, &spec.n_added, err);
    if (st != SIMDBPE_OK)
        return st;
    spec.added_required = specials != NULL;
    /* A UTF-8 byte order mark may begin a JSON text (RFC 8259 lets a
     * parser ignore it); jansson would call it an unexpected character. */
    if (vocab_len >= 3 && memcmp(vocab_json, "\xEF\xBB\xBF", 3) == 0) {
        vocab_json += 3;
        vocab_len -= 3;
    }
    if (fast_vocab(vocab_json, vocab_len, &spec.vocab) != 0 &&
        (st = jansson_vocab(vocab_json, vocab_len, &spec.vocab, err)) != SIMDBPE_OK) {
        free(spec.added);
        return st;
    }
    merges_text t = {merges_txt, merges_len};
    spec.merges = merges_from_text;
    spec.merges_ctx = &t;
    spec.pretok = SIMDBPE__PRETOK_GPT2;
    st = simdbpe__build(&spec, out, err);
    free(spec.added);
    return st;
}
