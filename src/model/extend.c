/*
 * extend.c - a model with more added tokens (simdbpe_model_add_tokens):
 * HF tokenizers' Tokenizer.add_tokens / add_special_tokens.
 *
 * A model never changes, so the new one is built again from the old
 * one's parts (every token, the merges in rank order, the pre-tokenizer,
 * normalizer, flags and post-processor ids) plus the new added tokens,
 * through the loaders' one builder (simdbpe__build): it is checked and
 * encodes as a model loaded with those tokens in its file would.
 *
 * Ids as HF's AddedVocabulary gives them: a content that is an added
 * token or a key of the BPE vocabulary keeps that id; a new one gets the
 * largest added id + 1 if that is at least the vocabulary's size (its
 * number of entries), else that size. As in a tokenizer.json, a token is
 * matched by its content, normalized first for a "normalized" one of a
 * model with a normalizer (simdbpe__added_normal_form: a
 * SentencePiece-style model's word markers too); its bytes are its
 * content's through the byte-level alphabet when every character is in
 * it (a SentencePiece-style model: the content itself), else the content
 * (a key of the vocabulary spelled otherwise, "Å" for byte 0xC5, is
 * matched by its content and is that key's token). An added token given again with
 * the same flags is not counted as added; with other flags it takes them
 * (a token once special stays special, as HF's set of special tokens
 * never loses one).
 */
#include <stdlib.h>

#include "../common/utf8_valid.h"
#include "../common/nfc.h"
#include "loader.h"

#define FAIL(status, ...) simdbpe__fail(err, status, SIMDBPE_NO_POSITION, 0, __VA_ARGS__)

/* The non-added tokens' bytes -> id, open addressing (id + 1; 0 empty). */
typedef struct by_bytes {
    uint32_t *slot;
    size_t mask;
} by_bytes;

static size_t by_bytes_slot(const simdbpe_model *m, const by_bytes *t, const uint8_t *s,
                            size_t len)
{
    size_t h = (size_t)simdbpe__hash_bytes(s, len) & t->mask;
    for (; t->slot[h]; h = (h + 1) & t->mask) {
        uint32_t id = t->slot[h] - 1, off = m->tok_off[id];
        if (m->tok_off[id + 1] - off == len && memcmp(m->blob + off, s, len) == 0)
            break;
    }
    return h;
}

/* The index of the added token with this text, or SIZE_MAX. */
static size_t added_index(const special_text *sp, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (sp[i].len == len && memcmp(sp[i].s, s, len) == 0)
            return i;
    return SIZE_MAX;
}

/* The merges of the old model, in rank order. */
static simdbpe_status old_merges(loader *ld, void *ctx, simdbpe_error *err)
{
    const simdbpe_model *m = ctx;
    for (uint32_t r = 0; r < m->n_merges; r++) {
        simdbpe_status st =
            simdbpe__loader_merge(ld, m->rules[r].left, m->rules[r].right, m->rules[r].id, err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

/* The loader's flags of the old model's i-th added token. */
static uint32_t loader_flags(const simdbpe__special *s)
{
    return (s->flags & (SIMDBPE__ADDED_SPECIAL | SIMDBPE__ADDED_NORMALIZED)) |
           (s->flags & SIMDBPE__ADDED_IN_VOCAB ? ADDED_IN_VOCAB : 0);
}

simdbpe_status simdbpe_model_add_tokens(const simdbpe_model *m, const simdbpe_added_token *tokens,
                                        size_t n, simdbpe_model **out, size_t *n_added,
                                        simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!m || !out || (!tokens && n))
        return FAIL(SIMDBPE_ERR_INVALID_ARG, "model_add_tokens: NULL argument");
    *out = NULL;
    size_t counted = 0, n_sp = m->n_specials;
    special_text *sp = calloc(n_sp + n + 1, sizeof *sp);
    uint8_t *added = calloc(m->vocab_size ? m->vocab_size : 1, 1);
    by_bytes t = {NULL, 0};
    size_t cap = 16;
    while (cap < 2 * (size_t)m->n_tokens + 2)
        cap *= 2;
    t.slot = calloc(cap, sizeof *t.slot);
    t.mask = cap - 1;
    simdbpe__build_spec spec = {0};
    simdbpe_status st = sp && added && t.slot ? SIMDBPE_OK : FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    /* The old added tokens, and the vocabulary's size as HF counts it. */
    size_t vocab_count = m->n_tokens;
    uint32_t max_added = 0;
    for (size_t i = 0; st == SIMDBPE_OK && i < n_sp; i++) {
        const simdbpe__special *s = &m->specials[i];
        sp[i] = (special_text){s->text, s->len, s->id, loader_flags(s)};
        if (!(s->flags & SIMDBPE__ADDED_IN_VOCAB)) {
            added[s->id] = 1;
            vocab_count--;
        }
        if (s->id + 1 > max_added)
            max_added = s->id + 1; /* + 1: 0 is "none" */
    }
    for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++)
        if (m->tok_has[id] && !added[id]) {
            const uint8_t *b = m->blob + m->tok_off[id];
            size_t h = by_bytes_slot(m, &t, b, m->tok_off[id + 1] - m->tok_off[id]);
            if (!t.slot[h])
                t.slot[h] = id + 1;
        }
    /* The new ones; norm[k]: token k's NFC'd text (malloc'd) or NULL. */
    uint8_t **norm = calloc(n + 1, sizeof *norm);
    if (st == SIMDBPE_OK && !norm)
        st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    uint32_t next_new = SIMDBPE__NO_ID; /* the id of the next new token */
    for (size_t k = 0; st == SIMDBPE_OK && k < n; k++) {
        const char *s = tokens[k].text;
        size_t len = tokens[k].len;
        uint32_t flags = tokens[k].flags & (SIMDBPE__ADDED_SPECIAL | SIMDBPE__ADDED_NORMALIZED);
        if (len == 0)
            continue;
        if (!s || (tokens[k].flags & ~(SIMDBPE_ADDED_SPECIAL | SIMDBPE_ADDED_NORMALIZED))) {
            st = FAIL(SIMDBPE_ERR_INVALID_ARG,
                      "model_add_tokens: token %zu has no text or unknown flags", k);
            break;
        }
        if (simdbpe__utf8_validate_from((const uint8_t *)s, len, 0) != len) {
            st = FAIL(SIMDBPE_ERR_INVALID_ARG, "model_add_tokens: token %zu is not UTF-8", k);
            break;
        }
        const uint8_t *match = (const uint8_t *)s; /* what the text is matched by */
        size_t match_len = len;
        if ((flags & SIMDBPE__ADDED_NORMALIZED) && (m->normalizer != SIMDBPE__NORM_NONE || m->sp)) {
            simdbpe_status ns =
                simdbpe__added_normal_form(m->normalizer, m->nz, m->sp, &norm[k], &match, &match_len);
            if (ns != SIMDBPE_OK) {
                st = FAIL(ns, "model_add_tokens: token %zu: %s", k, simdbpe_strerror(ns));
                break;
            }
            if (match_len == 0) {
                st = FAIL(SIMDBPE_ERR_UNSUPPORTED,
                          "model_add_tokens: token %zu is nothing after the normalizer", k);
                break;
            }
        }
        size_t at = added_index(sp, n_sp, (const char *)match, match_len);
        if (at != SIZE_MAX) {
            uint32_t keep = sp[at].flags & ADDED_IN_VOCAB;
            if ((sp[at].flags & ~ADDED_IN_VOCAB) == flags)
                continue; /* the same added token */
            sp[at].flags = flags | keep | (sp[at].flags & SIMDBPE__ADDED_SPECIAL);
            counted++;
            continue;
        }
        /* A key of the BPE vocabulary: its byte-level spelling is the text
         * (a SentencePiece-style model's keys are their tokens' bytes). */
        uint8_t *bytes = malloc(len);
        size_t nb = 0;
        int spelled = bytes != NULL;
        if (spelled && m->sp) {
            memcpy(bytes, s, len);
            nb = len;
        }
        for (size_t i = 0; spelled && !m->sp && i < len;) {
            size_t l = simdbpe__utf8_sequence_len((const uint8_t *)s + i, len - i);
            uint32_t cp = l ? simdbpe__utf8_decode((const uint8_t *)s, i, &l) : 0;
            int b = l ? simdbpe__bytelevel_byte(cp) : -1;
            spelled = b >= 0;
            if (spelled)
                bytes[nb++] = (uint8_t)b;
            i += l ? l : 1;
        }
        uint32_t id = SIMDBPE__NO_ID;
        if (spelled) {
            size_t h = by_bytes_slot(m, &t, bytes, nb);
            id = t.slot[h] ? t.slot[h] - 1 : SIMDBPE__NO_ID;
        }
        free(bytes);
        if (!bytes) {
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
            break;
        }
        if (id != SIMDBPE__NO_ID) {
            flags |= ADDED_IN_VOCAB;
        } else {
            if (next_new == SIMDBPE__NO_ID)
                next_new = max_added && max_added - 1 >= vocab_count ? max_added
                                                                     : (uint32_t)vocab_count;
            id = next_new++;
            if (id >= MAX_VOCAB_ID) {
                st = FAIL(SIMDBPE_ERR_SPECIALS, "added token %zu would get the id %u; ids must "
                                                "be below %u",
                          k, id, MAX_VOCAB_ID);
                break;
            }
        }
        sp[n_sp++] = (special_text){match, match_len, id, flags};
        counted++;
    }
    /* Every token, with its key: its byte-level spelling (which the
     * builder decodes to the token's bytes), and a new added token that is
     * not in the vocabulary its text, as a tokenizer.json's. */
    char *key = malloc(2 * 4096 + 16);
    if (st == SIMDBPE_OK && !key)
        st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++) {
        if (!m->tok_has[id])
            continue;
        const uint8_t *b = m->blob + m->tok_off[id];
        size_t len = m->tok_off[id + 1] - m->tok_off[id];
        char *k = len <= 4096 ? key : malloc(2 * len + 1);
        size_t klen = 0;
        if (k && m->sp)
            memcpy(k, b, klen = len);
        else if (k)
            klen = simdbpe__bytelevel_string(b, len, k);
        st = k ? simdbpe__vocab_append(&spec.vocab, k, klen, id) : SIMDBPE_ERR_NOMEM;
        if (k != key)
            free(k);
        if (st != SIMDBPE_OK)
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    }
    for (size_t i = m->n_specials; st == SIMDBPE_OK && i < n_sp; i++)
        if (!(sp[i].flags & ADDED_IN_VOCAB) &&
            simdbpe__vocab_append(&spec.vocab, (const char *)sp[i].s, sp[i].len, sp[i].id) !=
                SIMDBPE_OK)
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    char *unk = NULL; /* the unknown token's text, NUL-terminated */
    if (st == SIMDBPE_OK && m->sp && m->unk_id != SIMDBPE__NO_ID) {
        size_t ulen = m->tok_off[m->unk_id + 1] - m->tok_off[m->unk_id];
        unk = malloc(ulen + 1);
        if (unk) {
            memcpy(unk, m->blob + m->tok_off[m->unk_id], ulen);
            unk[ulen] = 0;
        } else {
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
        }
    }
    free(key);
    free(added);
    free(t.slot);
    if (st != SIMDBPE_OK) {
        simdbpe__vocab_list_free(&spec.vocab);
        free(unk);
        free(sp);
        for (size_t k = 0; norm && k < n; k++)
            free(norm[k]);
        free(norm);
        return st;
    }
    spec.vocab_name = "the model";
    spec.added = sp;
    spec.n_added = n_sp;
    spec.added_required = 1;
    spec.merges = old_merges;
    spec.merges_ctx = (void *)m;
    spec.pretok = m->pretok;
    spec.normalizer = m->normalizer;
    spec.splits = m->splits;
    spec.splits_len = m->splits_len;
    spec.nz_image = m->nz_image;
    spec.nz_len = m->nz_len;
    spec.ignore_merges = m->ignore_merges;
    spec.sp = m->sp;
    spec.sp_strip = m->sp_strip;
    spec.unk = unk;
    spec.n_prefix = m->n_prefix;
    spec.n_suffix = m->n_suffix;
    memcpy(spec.prefix, m->prefix, sizeof spec.prefix);
    memcpy(spec.suffix, m->suffix, sizeof spec.suffix);
    st = simdbpe__build(&spec, out, err);
    free(unk);
    free(sp);
    for (size_t k = 0; k < n; k++)
        free(norm[k]);
    free(norm);
    if (st == SIMDBPE_OK && n_added)
        *n_added = counted;
    return st;
}
