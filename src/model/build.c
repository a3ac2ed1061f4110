/*
 * build.c - building a model from what a loader read (loader.h): the
 * tokens and their bytes, the merges resolved to ids, the merge table, the
 * whole-token map and its check, then the compiled image every model is
 * opened from. The loaders (load.c, load_hf.c, load_tiktoken.c) read their
 * formats into a build spec; nothing is half-built: on any error
 * everything is freed and the error names the source, key or line.
 */
#include <stdio.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "../common/nfc.h"
#include "loader.h"

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

/* ---- tokens ---- */

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
        long n;
        if (m->sp) {
            memcpy(tmp + pos, key, klen); /* SentencePiece-style: the string itself */
            n = (long)klen;
        } else {
            n = simdbpe__bytelevel_decode((const uint8_t *)key, klen, tmp + pos, &bad);
        }
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

/* ---- merges ---- */

simdbpe_status simdbpe__loader_add_merge(loader *ld, const uint8_t *a, size_t alen, const uint8_t *b,
                                        size_t blen, const char *what, uint64_t line,
                                        const char *close, uint64_t at, const char *vocab_name,
                                        simdbpe_error *err)
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
    long na, nb;
    if (m->sp) { /* SentencePiece-style: the strings themselves */
        memcpy(buf, a, alen);
        memcpy(buf + alen, b, blen);
        na = (long)alen;
        nb = (long)blen;
    } else {
        na = simdbpe__bytelevel_decode(a, alen, buf, &bad);
        nb = na < 0 ? -1 : simdbpe__bytelevel_decode(b, blen, buf + na, &bad);
    }
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

simdbpe_status simdbpe__loader_merge_strings(loader *ld, const uint8_t *a, size_t alen,
                                             const uint8_t *b, size_t blen, const char *what,
                                             uint64_t index, simdbpe_error *err)
{
    return simdbpe__loader_add_merge(ld, a, alen, b, blen, what, index, "]", SIMDBPE_NO_POSITION,
                     "the vocabulary", err);
}

uint32_t simdbpe__loader_find(const loader *ld, const uint8_t *s, size_t len)
{
    return bytes_table_find(ld->m, ld->all, ld->all_mask, s, len);
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
    uint64_t size = simdbpe__table_size_for(n);
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
 * every token that is not an added one. A SentencePiece-style model has a
 * map only with ignore_merges: every token of its vocabulary, which a
 * pre-token equal to it becomes (HF looks the pre-token up in the
 * vocabulary before any merge); its other pieces go to sentencepiece.c. */
static simdbpe_status build_whole_map(simdbpe_model *m, simdbpe_error *err)
{
    if (m->sp && !m->ignore_merges)
        return SIMDBPE_OK;
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
    if (st == SIMDBPE_OK && !m->sp)
        st = simdbpe__reach(m, reach);
    for (size_t i = 0; st == SIMDBPE_OK && i < m->n_specials; i++)
        added[m->specials[i].id] = 1;
    uint32_t unreachable = 0, n = 0;
    for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++) {
        size_t len;
        const uint8_t *s = token_ptr(m, id, &len);
        if (!m->tok_has[id] || len == 0 || (added[id] && !m->sp))
            continue;
        if (m->sp) {
            ids[n] = id;
            keys[n++] = simdbpe__piece_hash(s, len);
            continue;
        }
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
    m->whole_exact = !m->sp && (unreachable == 0 || m->ignore_merges);
    m->no_cuts = !m->sp && m->ignore_merges && unreachable > 0;
    if (m->no_cuts)
        memset((void *)m->joins, 0xFF, SIMDBPE__JOINS_WORDS * sizeof *m->joins);
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__model_finish(simdbpe_model *m, simdbpe_error *err)
{
    return build_whole_map(m, err);
}

/* A SentencePiece-style model's unknown token and byte tokens: byte_id[b]
 * is the token "<0xNN>" with byte_fallback, else the unknown token. A
 * byte without its token (Gemma has no <0x09>: a tab is a token) maps to
 * the unknown token: HF falls back to bytes only for a character all of
 * whose bytes have tokens, and makes any other character unknown. */
static simdbpe_status sp_ids(simdbpe_model *m, const loader *ld, const simdbpe__build_spec *spec,
                             simdbpe_error *err)
{
    if (spec->unk) {
        m->unk_id = bytes_table_find(m, ld->all, ld->all_mask, (const uint8_t *)spec->unk,
                                     strlen(spec->unk));
        if (m->unk_id == SIMDBPE__NO_ID) {
            char q[96];
            simdbpe__quote(q, sizeof q, (const uint8_t *)spec->unk, strlen(spec->unk));
            return simdbpe__fail(err, SIMDBPE_ERR_VOCAB, SIMDBPE_NO_POSITION, 0,
                                 "%s: unk_token %s is not in the vocabulary", spec->vocab_name, q);
        }
    }
    if (!(m->sp & SIMDBPE__SP_BYTE_FALLBACK) && m->unk_id == SIMDBPE__NO_ID)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "%s: a BPE model with neither byte_fallback nor an unk_token "
                             "cannot encode every text (not supported)",
                             spec->vocab_name);
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        m->byte_id[b] = m->sp & SIMDBPE__SP_BYTE_FALLBACK
                            ? bytes_table_find(m, ld->all, ld->all_mask, (const uint8_t *)name, 6)
                            : m->unk_id;
        if (m->byte_id[b] == SIMDBPE__NO_ID && m->unk_id != SIMDBPE__NO_ID)
            m->byte_id[b] = m->unk_id;
        if (m->byte_id[b] == SIMDBPE__NO_ID)
            return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                                 "%s: byte_fallback without the token %s and without an "
                                 "unk_token is not supported (HF drops a character that has "
                                 "neither a token nor all its byte tokens)",
                                 spec->vocab_name, name);
    }
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__added_normal_form(uint8_t normalizer, const simdbpe__normalizer *nz,
                                          uint32_t sp, uint8_t **out, const uint8_t **text,
                                          size_t *len)
{
    *out = NULL;
    if (nz) {
        simdbpe__nz_work w = {0};
        const uint8_t *t = *text;
        size_t n = *len;
        simdbpe_status st = simdbpe__normalize(nz, &w, &t, &n);
        if (st == SIMDBPE_OK && t != *text) {
            *out = malloc(n ? n : 1);
            if (*out) {
                memcpy(*out, t, n);
                *text = *out;
            } else {
                st = SIMDBPE_ERR_NOMEM;
            }
        }
        *len = st == SIMDBPE_OK ? n : *len;
        simdbpe__nz_work_free(&w);
        return st;
    }
    uint8_t *form = NULL, *marked = NULL;
    size_t form_cap = 0, marked_cap = 0;
    *out = NULL;
    if ((normalizer != SIMDBPE__NORM_NONE && normalizer != SIMDBPE__NORM_CHAIN &&
         simdbpe__nfc_into(normalizer, &form, &form_cap, text, len) != SIMDBPE_OK) ||
        simdbpe__sp_normalize_into(sp, &marked, &marked_cap, text, len) != SIMDBPE_OK) {
        free(form);
        free(marked);
        return SIMDBPE_ERR_NOMEM;
    }
    if (marked) { /* *text is in marked now */
        free(form);
        *out = marked;
    } else {
        *out = form;
    }
    return SIMDBPE_OK;
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
     * milliseconds of page faults on virtual machines (bench/README.md). */
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
    m->splits = spec->splits;
    m->splits_len = spec->splits_len;
    m->nz_image = spec->nz_image;
    m->nz_len = spec->nz_len;
    m->ignore_merges = spec->ignore_merges;
    m->sp = spec->sp;
    m->sp_strip = spec->sp_strip;
    m->unk_id = SIMDBPE__NO_ID;
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
            uint32_t flags = sp[i].flags & (SIMDBPE__ADDED_SPECIAL | SIMDBPE__ADDED_NORMALIZED);
            if ((sp[i].flags & ADDED_IN_VOCAB) || spec->added_in_vocab)
                flags |= SIMDBPE__ADDED_IN_VOCAB;
            m->specials[m->n_specials++] = (simdbpe__special){sp[i].id, (uint32_t)len, text, flags};
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
        ld.all_mask = simdbpe__table_size_for(m->n_tokens) - 1;
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
    if (st == SIMDBPE_OK && m->sp)
        st = sp_ids(m, &ld, spec, err);
    for (int b = 0; st == SIMDBPE_OK && !m->sp && b < 256; b++) {
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
