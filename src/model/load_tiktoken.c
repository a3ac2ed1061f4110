/*
 * load_tiktoken.c - a model from a tiktoken rank file (`NAME.tiktoken`).
 *
 * The file is one line per token, "base64(bytes) rank", and the rank is
 * both the id and the merge priority. tiktoken encodes a piece that is a
 * token as that token, else merges adjacent parts whose concatenation has
 * the lowest rank first. The same ids come from BPE with one merge per
 * token of two or more bytes, in rank order: the two parts tiktoken's own
 * merge loop leaves when only lower ranks may merge (a token for which it
 * leaves more than two parts gets no merge and is reached only whole),
 * with HF's ignore_merges. (HF tokenizers with merges derived this way
 * gives tiktoken's ids on every golden document; for r50k_base they are
 * GPT-2's merges.txt exactly.)
 *
 * A rank file holds no pre-tokenizer and no special tokens: they come
 * from the encoding's name (the four OpenAI files are recognised by their
 * contents' hash when no name is given), or from the caller as tiktoken's
 * Encoding takes them: a pat_str, which must be one of the families'
 * patterns in one of the spellings below, and the special tokens.
 */
#include <stdlib.h>

#include <xxhash.h>

#include "../common/utf8_valid.h"
#include "../pretok/ucd.h"
#include "loader.h"

typedef struct encoding {
    const char *name;
    uint64_t xxh3; /* XXH3-64 of OpenAI's rank file */
    uint8_t pretok;
    const char *const *specials; /* text, NULL-terminated; ids below */
    const uint32_t *special_ids;
} encoding;

static const char *const R50K_SPECIALS[] = {"<|endoftext|>", NULL};
static const uint32_t R50K_IDS[] = {50256};
static const char *const CL100K_SPECIALS[] = {"<|endoftext|>", "<|fim_prefix|>",
                                              "<|fim_middle|>", "<|fim_suffix|>",
                                              "<|endofprompt|>", NULL};
static const uint32_t CL100K_IDS[] = {100257, 100258, 100259, 100260, 100276};
static const char *const O200K_SPECIALS[] = {"<|endoftext|>", "<|endofprompt|>", NULL};
static const uint32_t O200K_IDS[] = {199999, 200018};

static const encoding ENCODINGS[] = {
    {"r50k_base", 0x3cb2fbe95939bd2dULL, SIMDBPE__PRETOK_GPT2, R50K_SPECIALS, R50K_IDS},
    {"p50k_base", 0xf2d3fa62565e6e17ULL, SIMDBPE__PRETOK_GPT2, R50K_SPECIALS, R50K_IDS},
    {"cl100k_base", 0xaa5d7bf38900641aULL, SIMDBPE__PRETOK_CL100K, CL100K_SPECIALS, CL100K_IDS},
    {"o200k_base", 0x72a095e82ca109d6ULL, SIMDBPE__PRETOK_O200K, O200K_SPECIALS, O200K_IDS},
};

#define FAIL(status, ...) simdbpe__fail(err, status, SIMDBPE_NO_POSITION, 0, __VA_ARGS__)

/* The family whose pieces pat_str gives: one of its records' spellings
 * (*spelled), or its HF Split pattern (*spelled NULL); -1 if none. */
static int family_of_pattern(const char *pat_str, const simdbpe__pretok_spelling **spelled)
{
    const simdbpe__pretok_family *f;
    *spelled = NULL;
    for (unsigned k = 0; (f = simdbpe__pretok_family_of(k)); k++)
        for (size_t i = 0; i < f->n_spellings; i++)
            if (strcmp(pat_str, f->spellings[i].pattern) == 0) {
                *spelled = &f->spellings[i];
                return (int)k;
            }
    for (unsigned k = 0; (f = simdbpe__pretok_family_of(k)); k++)
        if (f->n_patterns == 1 && strcmp(pat_str, f->patterns[0]) == 0)
            return (int)k;
    return -1;
}

/* Whether token bytes b[0..n) could span the cut the cl100k family makes
 * in whitespace that ends a text (after its last line break): all
 * whitespace, with a line break, and not ending with one. */
static int spans_trailing_cut(const uint8_t *b, size_t n)
{
    int linebreak = 0;
    for (size_t i = 0; i < n;) {
        size_t l = simdbpe__utf8_sequence_len(b + i, n - i);
        if (!l)
            return 0;
        uint32_t cp = simdbpe__utf8_decode(b, i, &l);
        if (!(simdbpe__ucd_props(cp) & SIMDBPE__UCD_WS))
            return 0;
        linebreak |= cp == '\r' || cp == '\n';
        i += l;
    }
    return linebreak && n && b[n - 1] != '\r' && b[n - 1] != '\n';
}

static int b64_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes standard base64 (with '=' padding) s[0..n) into out; returns
 * the number of bytes, or -1. */
static long b64_decode(const uint8_t *s, size_t n, uint8_t *out, size_t cap)
{
    if (n == 0 || n % 4)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            v[j] = b64_value(s[i + j]);
            if (s[i + j] == '=' && i + 4 == n && j >= 2) {
                v[j] = 0;
                pad++;
            } else if (v[j] < 0 || pad) {
                return -1;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
        if (k + 3 - pad > cap)
            return -1;
        memcpy(out + k, b, 3 - (size_t)pad);
        k += 3 - (size_t)pad;
    }
    return (long)k;
}

/* Merges derived from the ranks: see the top of the file. */
static simdbpe_status derive_merges(loader *ld, void *ctx, simdbpe_error *err)
{
    (void)ctx;
    const simdbpe_model *m = ld->m;
    uint32_t *cut = malloc(1026 * sizeof *cut);
    if (!cut)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    simdbpe_status st = SIMDBPE_OK;
    for (uint32_t id = 0; st == SIMDBPE_OK && id < m->vocab_size; id++) {
        uint32_t off = m->tok_off[id], len = m->tok_off[id + 1] - off;
        if (!m->tok_has[id] || len < 2 || len > 1024)
            continue;
        const uint8_t *t = m->blob + off;
        if (simdbpe__loader_find(ld, t, len) != id)
            continue; /* an added token, or bytes an earlier rank has */
        /* Parts are t[cut[i]..cut[i+1]); merge the lowest-ranked adjacent
         * pair (leftmost on ties) while its rank is below id's. */
        uint32_t parts = len;
        for (uint32_t i = 0; i <= len; i++)
            cut[i] = i;
        while (parts > 2) {
            uint32_t best = UINT32_MAX, at = 0;
            for (uint32_t i = 0; i + 1 < parts; i++) {
                uint32_t r = simdbpe__loader_find(ld, t + cut[i], cut[i + 2] - cut[i]);
                if (r < best) {
                    best = r;
                    at = i;
                }
            }
            if (best >= id)
                break;
            memmove(cut + at + 1, cut + at + 2, (parts - at - 1) * sizeof *cut);
            parts--;
        }
        if (parts != 2)
            continue;
        uint32_t left = simdbpe__loader_find(ld, t, cut[1]);
        uint32_t right = simdbpe__loader_find(ld, t + cut[1], len - cut[1]);
        if (left == SIMDBPE__NO_ID || right == SIMDBPE__NO_ID)
            continue;
        st = simdbpe__loader_merge(ld, left, right, id, err);
    }
    free(cut);
    return st;
}

/* A rank file gives each token one rank. Two ranks of the same bytes
 * would both claim the bytes in the whole-token map (the model keeps
 * ignore_merges), whose perfect hash cannot place two equal keys: its
 * build then tried every seed, seconds, before failing with a message
 * about the hash. */
static simdbpe_status check_tokens_once(const vocab_list *v, simdbpe_error *err)
{
    size_t cap = 16;
    while (cap < 2 * v->count)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof *slot); /* an entry + 1; 0 = empty */
    if (!slot)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; i < v->count && st == SIMDBPE_OK; i++) {
        const char *k = v->keys + v->key_off[i];
        size_t len = v->key_off[i + 1] - v->key_off[i], at = simdbpe__hash_bytes(k, len);
        for (at &= cap - 1; slot[at]; at = (at + 1) & (cap - 1)) {
            size_t j = slot[at] - 1;
            if (v->key_off[j + 1] - v->key_off[j] == len &&
                memcmp(v->keys + v->key_off[j], k, len) == 0)
                break;
        }
        if (!slot[at]) {
            slot[at] = i + 1;
            continue;
        }
        char q[96];
        simdbpe__quote(q, sizeof q, (const uint8_t *)k, len);
        st = FAIL(SIMDBPE_ERR_VOCAB,
                  ".tiktoken: ranks %u and %u are the same token (%s in byte-level spelling); "
                  "a rank file gives each token one rank",
                  v->ids[slot[at] - 1], v->ids[i], q);
    }
    free(slot);
    return st;
}

static const encoding *encoding_named(const char *name)
{
    for (size_t i = 0; i < sizeof ENCODINGS / sizeof *ENCODINGS; i++)
        if (strcmp(ENCODINGS[i].name, name) == 0)
            return &ENCODINGS[i];
    return NULL;
}

const char *simdbpe__tiktoken_name_of(const char *data, size_t len)
{
    uint64_t h = XXH3_64bits(data, len);
    for (size_t i = 0; i < sizeof ENCODINGS / sizeof *ENCODINGS; i++)
        if (ENCODINGS[i].xxh3 == h)
            return ENCODINGS[i].name;
    return NULL;
}

simdbpe_status simdbpe_model_load_tiktoken(const char *data, size_t len, const char *name,
                                           simdbpe_model **out, simdbpe_error *err)
{
    simdbpe_tiktoken_options o = SIMDBPE_TIKTOKEN_OPTIONS_INIT;
    o.encoding = name;
    return simdbpe_model_load_tiktoken_with(data, len, &o, out, err);
}

/* The pre-tokenizer and the special tokens (*sp, n) the options give. */
static simdbpe_status what_to_build(const char *data, size_t len,
                                    const simdbpe_tiktoken_options *o, uint8_t *pretok,
                                    int *check_linebreaks, special_text **sp, size_t *n,
                                    simdbpe_error *err)
{
    *check_linebreaks = 0;
    const encoding *enc = NULL;
    const char *name = o->encoding;
    if (!o->pat_str) {
        if (!name && !(name = simdbpe__tiktoken_name_of(data, len)))
            return FAIL(SIMDBPE_ERR_UNSUPPORTED,
                        ".tiktoken: not one of OpenAI's rank files (r50k_base, p50k_base, "
                        "cl100k_base, o200k_base); a rank file names no pre-tokenizer, so give "
                        "the encoding it belongs to, or its pat_str");
    }
    if (name && !(enc = encoding_named(name)) && !o->pat_str)
        return FAIL(SIMDBPE_ERR_UNSUPPORTED,
                    ".tiktoken: unknown encoding \"%s\" (r50k_base, p50k_base, cl100k_base, "
                    "o200k_base)",
                    name);
    if (o->pat_str) {
        const simdbpe__pretok_spelling *spelled;
        int k = family_of_pattern(o->pat_str, &spelled);
        if (k < 0) {
            char q[160], names[128];
            simdbpe__quote(q, sizeof q, (const uint8_t *)o->pat_str, strlen(o->pat_str));
            simdbpe__pretok_names(names, sizeof names, ", ");
            return FAIL(SIMDBPE_ERR_UNSUPPORTED,
                        "pat_str %s is not the pattern of a pre-tokenizer this library "
                        "implements (%s: their tiktoken or HF Split patterns)",
                        q, names);
        }
        *pretok = (uint8_t)k;
        *check_linebreaks = spelled && spelled->trailing_ws_whole;
    } else {
        *pretok = enc->pretok;
    }
    *n = 0;
    if (o->special_texts || o->n_specials) {
        if (!o->special_texts || !o->special_ids)
            return FAIL(SIMDBPE_ERR_INVALID_ARG,
                        "tiktoken options: special_texts and special_ids go together");
        *sp = calloc(o->n_specials ? o->n_specials : 1, sizeof **sp);
        if (!*sp)
            return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < o->n_specials; k++) {
            const char *t = o->special_texts[k];
            if (!t || !*t)
                return FAIL(SIMDBPE_ERR_SPECIALS, "special token %zu is empty", k);
            (*sp)[k] = (special_text){(const uint8_t *)t, strlen(t), o->special_ids[k],
                                      SIMDBPE__ADDED_SPECIAL};
        }
        *n = o->n_specials;
        return SIMDBPE_OK;
    }
    if (!enc)
        return SIMDBPE_OK; /* a pat_str and no special tokens */
    size_t count = 0;
    while (enc->specials[count])
        count++;
    *sp = calloc(count, sizeof **sp);
    if (!*sp)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < count; k++)
        (*sp)[k] = (special_text){(const uint8_t *)enc->specials[k], strlen(enc->specials[k]),
                                  enc->special_ids[k], SIMDBPE__ADDED_SPECIAL};
    *n = count;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_model_load_tiktoken_with(const char *data, size_t len,
                                                const simdbpe_tiktoken_options *opts,
                                                simdbpe_model **out, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || (!data && len))
        return FAIL(SIMDBPE_ERR_INVALID_ARG, "model_load_tiktoken: NULL argument");
    *out = NULL;
    simdbpe_tiktoken_options none = SIMDBPE_TIKTOKEN_OPTIONS_INIT;
    simdbpe__build_spec spec = {0};
    special_text *sp = NULL;
    size_t n_sp = 0;
    int check_linebreaks;
    simdbpe_status st = what_to_build(data, len, opts ? opts : &none, &spec.pretok,
                                      &check_linebreaks, &sp, &n_sp, err);
    if (st != SIMDBPE_OK) {
        free(sp);
        return st;
    }
    spec.vocab_name = ".tiktoken";
    spec.normalizer = simdbpe__pretok_family_of(spec.pretok)->normalizer;
    spec.ignore_merges = 1;
    spec.added_required = 1;
    spec.merges = derive_merges;
    uint8_t bytes[1024];
    char key[2048];
    uint64_t line = 0;
    for (size_t i = 0; i < len && st == SIMDBPE_OK;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - data) : len, next = e + 1;
        line++;
        if (e > i && data[e - 1] == '\r')
            e--;
        if (e == i) {
            i = next;
            continue;
        }
        const char *space = memchr(data + i, ' ', e - i);
        long nb = space ? b64_decode((const uint8_t *)data + i, (size_t)(space - data) - i,
                                     bytes, sizeof bytes)
                        : -1;
        uint64_t rank = 0;
        const char *p = space ? space + 1 : NULL;
        while (p && p < data + e && *p >= '0' && *p <= '9' && rank < MAX_VOCAB_ID)
            rank = rank * 10 + (uint64_t)(*p++ - '0');
        if (nb <= 0 || !p || p == space + 1 || p != data + e || rank >= MAX_VOCAB_ID) {
            st = simdbpe__fail(err, SIMDBPE_ERR_VOCAB, i, line,
                               ".tiktoken line %llu: expected \"BASE64 RANK\" (a rank below %u)",
                               (unsigned long long)line, MAX_VOCAB_ID);
            break;
        }
        if (check_linebreaks && spans_trailing_cut(bytes, (size_t)nb)) {
            char q[96];
            simdbpe__quote(q, sizeof q, bytes, (size_t)nb);
            st = simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, i, line,
                               "rank %llu, the token %s (whitespace with a line break, ending in "
                               "other whitespace), can make tiktoken's cl100k_base pat_str "
                               "(`\\s++$`) and the cl100k family give different ids; use the "
                               "pattern's older spelling",
                               (unsigned long long)rank, q);
            break;
        }
        size_t klen = simdbpe__bytelevel_string(bytes, (size_t)nb, key);
        if (simdbpe__vocab_append(&spec.vocab, key, klen, (uint32_t)rank) != SIMDBPE_OK)
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
        i = next;
    }
    if (st == SIMDBPE_OK)
        st = check_tokens_once(&spec.vocab, err);
    for (size_t k = 0; k < n_sp && st == SIMDBPE_OK; k++)
        if (simdbpe__vocab_append(&spec.vocab, (const char *)sp[k].s, sp[k].len, sp[k].id) !=
            SIMDBPE_OK)
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    spec.added = sp;
    spec.n_added = n_sp;
    if (st == SIMDBPE_OK)
        st = simdbpe__build(&spec, out, err);
    else
        simdbpe__vocab_list_free(&spec.vocab);
    free(sp);
    return st;
}
