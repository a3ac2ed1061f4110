/*
 * load.c - a model from vocab.json + merges.txt (+ a special-token list):
 * reading merges.txt and the list; vocab.json is vocab.c's, the building
 * build.c's.
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

#include "../../kernels/kernels.h"
#include "loader.h"

/* ---- special-token list ---- */

/* The added tokens a list names (one literal text a line), or with text
 * NULL the default "<|endoftext|>". */
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

/* ---- merges.txt ---- */

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
        simdbpe_status st = simdbpe__loader_add_merge(ld, a, alen, b, blen, "merges.txt line ", line,
                                                       "", start, "vocab.json", err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
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
    spec.added_in_vocab = 1; /* found by their text in vocab.json */
    simdbpe_status st = parse_specials(specials, specials_len, &spec.added, &spec.n_added, err);
    if (st != SIMDBPE_OK)
        return st;
    spec.added_required = specials != NULL;
    if ((st = simdbpe__vocab_parse(vocab_json, vocab_len, &spec.vocab, err)) != SIMDBPE_OK) {
        free(spec.added);
        return st;
    }
    merges_text t = {merges_txt, merges_len};
    spec.merges = merges_from_text;
    spec.merges_ctx = &t;
    spec.pretok = SIMDBPE__PRETOK_GPT2;
    spec.normalizer = simdbpe__pretok_family_of(spec.pretok)->normalizer;
    st = simdbpe__build(&spec, out, err);
    free(spec.added);
    return st;
}
