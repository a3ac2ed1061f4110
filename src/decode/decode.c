/*
 * decode.c - token ids back to bytes.
 */
#include "../model/model.h"

simdbpe_status simdbpe_decode(const simdbpe_model *m, const uint32_t *ids, size_t n_ids,
                              uint8_t *out, size_t cap, size_t *out_len, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!m || (!ids && n_ids) || (!out && cap) || !out_len)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "decode: NULL argument");
    size_t need = 0;
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
        size_t len = m->tok_off[id + 1] - m->tok_off[id];
        if (need + len <= cap)
            memcpy(out + need, m->blob + m->tok_off[id], len);
        need += len;
    }
    *out_len = need;
    if (need > cap)
        return simdbpe__fail(err, SIMDBPE_ERR_BUFFER_TOO_SMALL, SIMDBPE_NO_POSITION, 0,
                             "decode: output needs %zu bytes, buffer has %zu", need, cap);
    return SIMDBPE_OK;
}
