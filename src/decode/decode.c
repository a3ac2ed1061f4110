/*
 * decode.c - token ids back to bytes.
 *
 * Byte-level models: the tokens' bytes, concatenated. SentencePiece-style
 * models (model/sentencepiece.c): the file's decoder chain, as HF applies
 * it to the tokens' strings: Replace("\u2581", " ") in each, ByteFallback
 * (a run of <0xNN> tokens becomes its bytes if they are valid UTF-8, else
 * one U+FFFD per token), Fuse, then Strip(" ", n, 0): up to n leading
 * spaces of the whole text removed.
 */
#include "../../kernels/kernels.h"
#include "../model/model.h"

/* Output written up to its capacity and counted beyond it. */
typedef struct sink {
    uint8_t *out;
    size_t cap, need;
    size_t strip; /* leading spaces still to drop */
} sink;

static void put(sink *k, const uint8_t *s, size_t n)
{
    while (k->strip && n && *s == ' ') {
        k->strip--;
        s++;
        n--;
    }
    if (n == 0)
        return; /* (memcpy to a NULL buffer, even of nothing, is undefined) */
    k->strip = 0;
    if (k->need + n <= k->cap)
        memcpy(k->out + k->need, s, n);
    k->need += n;
}

/* The byte of a token spelled <0xNN> (HF's ByteFallback test: six bytes,
 * two hex digits), else -1. */
static int byte_token(const uint8_t *s, size_t len)
{
    if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        int c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The byte of token `id` if it is a byte token, else -1. */
static int byte_of(const simdbpe_model *m, uint32_t id)
{
    const uint8_t *s;
    size_t len;
    simdbpe__sp_token_string(m, id, &s, &len);
    return byte_token(s, len);
}

/* Whether the bytes of the byte tokens ids[a..b) are valid UTF-8: one
 * character at a time (its length from the lead byte) through the
 * validator. */
static int run_valid(const simdbpe_model *m, const uint32_t *ids, size_t a, size_t b)
{
    uint8_t c[4];
    size_t have = 0, want = 0;
    for (size_t i = a; i < b; i++) {
        uint8_t x = (uint8_t)byte_of(m, ids[i]);
        if (have == 0)
            want = x < 0x80 ? 1 : x < 0xC2 ? 0 : x < 0xE0 ? 2 : x < 0xF0 ? 3 : x < 0xF5 ? 4 : 0;
        if (want == 0)
            return 0;
        c[have++] = x;
        if (have == want) {
            if (simdbpe__kernels_scalar.validate_utf8(c, have) != have)
                return 0;
            have = 0;
        }
    }
    return have == 0;
}

/* A token's text through the decoder's Replace("\u2581", " ") or
 * Metaspace, the first token (`first`) without its markers when the
 * Metaspace decoder's scheme prepends one. */
static void put_token(sink *k, const simdbpe_model *m, const uint8_t *s, size_t len, int first)
{
    if (!(m->sp & (SIMDBPE__SP_DEC_REPLACE | SIMDBPE__SP_DEC_META))) {
        put(k, s, len);
        return;
    }
    int drop = first && (m->sp & SIMDBPE__SP_DEC_META_FIRST);
    for (size_t i = 0; i < len;) {
        const uint8_t *p = memchr(s + i, 0xE2, len - i);
        size_t run = p ? (size_t)(p - (s + i)) : len - i;
        put(k, s + i, run);
        i += run;
        if (!p)
            break;
        if (len - i >= 3 && s[i + 1] == 0x96 && s[i + 2] == 0x81) {
            if (!drop)
                put(k, (const uint8_t *)" ", 1);
            i += 3;
        } else {
            put(k, s + i, 1);
            i++;
        }
    }
}

static void decode_sp(const simdbpe_model *m, const uint32_t *ids, size_t n_ids, sink *k)
{
    k->strip = m->sp_strip;
    const int bytes = (m->sp & SIMDBPE__SP_DEC_BYTES) != 0;
    for (size_t i = 0; i < n_ids;) {
        if (!bytes || byte_of(m, ids[i]) < 0) {
            const uint8_t *s;
            size_t len;
            simdbpe__sp_token_string(m, ids[i], &s, &len);
            put_token(k, m, s, len, i == 0);
            i++;
            continue;
        }
        size_t j = i; /* the run of byte tokens ids[i..j) */
        while (j < n_ids && byte_of(m, ids[j]) >= 0)
            j++;
        int valid = run_valid(m, ids, i, j);
        for (; i < j; i++) {
            uint8_t b = (uint8_t)byte_of(m, ids[i]);
            put(k, valid ? &b : (const uint8_t *)"\xEF\xBF\xBD", valid ? 1 : 3);
        }
    }
}

simdbpe_status simdbpe_decode(const simdbpe_model *m, const uint32_t *ids, size_t n_ids,
                              uint8_t *out, size_t cap, size_t *out_len, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!m || (!ids && n_ids) || (!out && cap) || !out_len)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "decode: NULL argument");
    sink k = {out, cap, 0, 0};
    for (size_t i = 0; i < n_ids; i++) {
        uint32_t id = ids[i];
        if (id >= m->vocab_size || !m->tok_has[id]) {
            simdbpe__fail(err, SIMDBPE_ERR_TOKEN_ID, SIMDBPE_NO_POSITION, 0,
                          "token id %u at position %zu is not in the vocabulary (size %u)", id,
                          i, m->vocab_size);
            if (err)
                err->index = i;
            return SIMDBPE_ERR_TOKEN_ID;
        }
        if (!m->sp)
            put(&k, m->blob + m->tok_off[id], m->tok_off[id + 1] - m->tok_off[id]);
    }
    if (m->sp)
        decode_sp(m, ids, n_ids, &k);
    *out_len = k.need;
    if (k.need > cap)
        return simdbpe__fail(err, SIMDBPE_ERR_BUFFER_TOO_SMALL, SIMDBPE_NO_POSITION, 0,
                             "decode: output needs %zu bytes, buffer has %zu", k.need, cap);
    return SIMDBPE_OK;
}

int simdbpe_model_decodes_per_token(const simdbpe_model *m)
{
    return m && !m->sp;
}
