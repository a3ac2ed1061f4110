/*
 * load_hf.c - a model from an HF tokenizers `tokenizer.json` (byte-level
 * BPE only).
 *
 * What is read, and what it means (HF tokenizers 0.23 semantics):
 *   model            type "BPE"; vocab (string -> id); merges as "a b"
 *                    strings or ["a", "b"] pairs, rank = index;
 *                    ignore_merges; byte_fallback, dropout, a
 *                    continuing_subword_prefix or end_of_word_suffix
 *                    other than "" are refused (not byte-level BPE as
 *                    this library encodes it).
 *   pre_tokenizer    a ByteLevel with use_regex (GPT-2's family), or a
 *                    Sequence of up to three Split(Regex) pieces, then
 *                    ByteLevel without its regex: the family of pretok.h
 *                    whose patterns are exactly these (Isolated), else the
 *                    generic family, which runs them with Oniguruma
 *                    (regex.h).
 *   normalizer       null, an empty Sequence, or NFC.
 *   added_tokens     all of them cut the text (special or not); their
 *                    content is their text; lstrip, rstrip and single_word
 *                    are refused (not implemented).
 *   post_processor   the ids a TemplateProcessing's single template (or
 *                    RobertaProcessing) puts around a sequence, added only
 *                    when the caller asks (add_special_tokens).
 */
#include <stdio.h>
#include <stdlib.h>

#include "loader.h"

#define WHAT "tokenizer.json"

#define FAIL(status, ...) simdbpe__fail(err, status, SIMDBPE_NO_POSITION, 0, __VA_ARGS__)
#define UNSUPPORTED(...) FAIL(SIMDBPE_ERR_UNSUPPORTED, WHAT ": " __VA_ARGS__)

static const char *type_of(const json_t *o)
{
    const char *t = json_string_value(json_object_get(o, "type"));
    return t ? t : "";
}

static int is_false(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return !v || json_is_false(v);
}

/* Whether a (possibly absent) string setting is unset or "". */
static int is_empty(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
}

/* The Split's pattern if it is a regex Split that keeps matches and gaps
 * alike (Isolated); `covering` families match every character, so for
 * them Removed with invert (keep only the matches) is the same. */
static const char *split_regex(const json_t *p, int *isolated, int *removed_inverted)
{
    if (strcmp(type_of(p), "Split") != 0)
        return NULL;
    const char *re = json_string_value(json_object_get(json_object_get(p, "pattern"), "Regex"));
    const char *beh = json_string_value(json_object_get(p, "behavior"));
    int invert = json_is_true(json_object_get(p, "invert"));
    *isolated = beh && strcmp(beh, "Isolated") == 0 && !invert;
    *removed_inverted = beh && strcmp(beh, "Removed") == 0 && invert;
    return re;
}

static simdbpe_status bytelevel_ok(const json_t *p, int want_regex, simdbpe_error *err)
{
    if (!is_false(p, "add_prefix_space"))
        return UNSUPPORTED("ByteLevel pre-tokenizer with add_prefix_space is not supported");
    int regex = !json_is_false(json_object_get(p, "use_regex")); /* HF's default: true */
    if (regex != want_regex)
        return UNSUPPORTED("a ByteLevel pre-tokenizer %s its GPT-2 regex after a Split is not "
                           "one of the supported pre-tokenizers",
                           regex ? "with" : "without");
    return SIMDBPE_OK;
}

/*
 * Splits no family's scanner implements: the generic family, which runs
 * them with Oniguruma (src/pretok/regex.h), into spec->splits (malloc'd,
 * the caller frees it). A Removed Split is accepted: a text where it would
 * drop something is an encoding error (regex.h).
 */
static simdbpe_status generic_splits(const json_t *seq, size_t n, simdbpe__build_spec *spec,
                                     simdbpe_error *err)
{
    static const char *const BEHAVIORS[] = {"Isolated", "Contiguous", "MergedWithPrevious",
                                            "MergedWithNext", "Removed"};
    const char *re[SIMDBPE__REGEX_MAX_SPLITS];
    uint8_t flags[SIMDBPE__REGEX_MAX_SPLITS];
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(seq, i);
        const json_t *pat = json_object_get(json_object_get(p, "pattern"), "Regex");
        const char *beh = json_string_value(json_object_get(p, "behavior"));
        re[i] = json_string_value(pat);
        if (strlen(re[i]) != json_string_length(pat))
            return UNSUPPORTED("pre_tokenizer step %zu: a Split pattern with a NUL character "
                               "is not supported", i);
        flags[i] = SIMDBPE__SPLIT_BEHAVIORS;
        for (uint8_t b = 0; b < SIMDBPE__SPLIT_BEHAVIORS; b++)
            if (beh && strcmp(beh, BEHAVIORS[b]) == 0)
                flags[i] = b;
        if (flags[i] == SIMDBPE__SPLIT_BEHAVIORS)
            return UNSUPPORTED("pre_tokenizer step %zu: Split behavior \"%s\" is not known "
                               "(Isolated, Contiguous, MergedWithPrevious, MergedWithNext, "
                               "Removed)",
                               i, beh ? beh : "");
        if (json_is_true(json_object_get(p, "invert")))
            flags[i] |= SIMDBPE__SPLIT_INVERT;
    }
    /* Compiled once here, so that a pattern the engine refuses is this
     * file's error (the model's image compiles it again when opened). */
    simdbpe__regex *rx;
    simdbpe_status st = simdbpe__regex_new(re, flags, n, WHAT, &rx, err);
    if (st != SIMDBPE_OK)
        return st;
    simdbpe__regex_free(rx);
    size_t len = simdbpe__regex_image_size(re, n);
    uint8_t *image = malloc(len);
    if (!image)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    simdbpe__regex_image_put(re, flags, n, image);
    spec->pretok = SIMDBPE__PRETOK_REGEX;
    spec->splits = image;
    spec->splits_len = len;
    return SIMDBPE_OK;
}

static simdbpe_status read_pretok(const json_t *p, simdbpe__build_spec *spec,
                                  simdbpe_error *err)
{
    uint8_t *kind = &spec->pretok;
    if (!p || json_is_null(p))
        return UNSUPPORTED("no pre_tokenizer (not a byte-level BPE model this library knows)");
    const simdbpe__pretok_family *f;
    if (strcmp(type_of(p), "ByteLevel") == 0) {
        for (unsigned k = 0; (f = simdbpe__pretok_family_of(k)); k++)
            if (f->bytelevel_regex) {
                *kind = (uint8_t)k;
                return bytelevel_ok(p, 1, err);
            }
    }
    const json_t *seq = json_object_get(p, "pretokenizers");
    if (strcmp(type_of(p), "Sequence") != 0 || !json_is_array(seq) || json_array_size(seq) < 2)
        return UNSUPPORTED("pre_tokenizer of type \"%s\" is not supported", type_of(p));
    size_t n = json_array_size(seq);
    const json_t *last = json_array_get(seq, n - 1);
    if (strcmp(type_of(last), "ByteLevel") != 0)
        return UNSUPPORTED("the pre_tokenizer Sequence does not end with ByteLevel");
    simdbpe_status st = bytelevel_ok(last, 0, err);
    if (st != SIMDBPE_OK)
        return st;
    const char *re[SIMDBPE__REGEX_MAX_SPLITS];
    int iso[SIMDBPE__REGEX_MAX_SPLITS], rem[SIMDBPE__REGEX_MAX_SPLITS];
    if (n - 1 > SIMDBPE__REGEX_MAX_SPLITS)
        return UNSUPPORTED("a pre_tokenizer Sequence of %zu Splits is not supported", n - 1);
    for (size_t i = 0; i + 1 < n; i++) {
        re[i] = split_regex(json_array_get(seq, i), &iso[i], &rem[i]);
        if (!re[i])
            return UNSUPPORTED("pre_tokenizer step %zu (\"%s\") is not a Split with a Regex", i,
                               type_of(json_array_get(seq, i)));
    }
    /* The family whose Splits are exactly these. Every pattern of a
     * one-Split family matches at every position, so for those dropping
     * the gaps (Removed + invert) drops nothing. */
    for (unsigned k = 0; (f = simdbpe__pretok_family_of(k)); k++) {
        size_t np = f->n_patterns, same = 0;
        if (f->bytelevel_regex || np != n - 1)
            continue;
        while (same < np && strcmp(re[same], f->patterns[same]) == 0)
            same++;
        if (same < np)
            continue;
        int fits = 1;
        for (size_t i = 0; i < np; i++)
            fits &= iso[i] || (np == 1 && rem[i]);
        if (!fits)
            break; /* other behaviors: the generic path's */
        spec->pretok = (uint8_t)k;
        return SIMDBPE_OK;
    }
    return generic_splits(seq, n - 1, spec, err);
}

static simdbpe_status read_normalizer(const json_t *nz, uint8_t *norm, simdbpe_error *err)
{
    *norm = SIMDBPE__NORM_NONE;
    if (!nz || json_is_null(nz))
        return SIMDBPE_OK;
    const char *t = type_of(nz);
    if (strcmp(t, "NFC") == 0) {
        *norm = SIMDBPE__NORM_NFC;
        return SIMDBPE_OK;
    }
    if (strcmp(t, "Sequence") == 0) {
        const json_t *list = json_object_get(nz, "normalizers");
        if (json_is_array(list) && json_array_size(list) == 0)
            return SIMDBPE_OK;
        if (json_is_array(list) && json_array_size(list) == 1)
            return read_normalizer(json_array_get(list, 0), norm, err);
    }
    return UNSUPPORTED("normalizer \"%s\" is not supported (only NFC or none)", t);
}

/* The ids of a TemplateProcessing's single template before and after the
 * sequence "A". */
static simdbpe_status read_template(const json_t *tp, simdbpe__build_spec *spec,
                                    simdbpe_error *err)
{
    const json_t *single = json_object_get(tp, "single");
    const json_t *specials = json_object_get(tp, "special_tokens");
    int after = 0;
    size_t i;
    const json_t *item;
    json_array_foreach(single, i, item)
    {
        if (json_object_get(item, "Sequence")) {
            after = 1;
            continue;
        }
        const char *name =
            json_string_value(json_object_get(json_object_get(item, "SpecialToken"), "id"));
        const json_t *ids = json_object_get(json_object_get(specials, name ? name : ""), "ids");
        if (!name || !json_is_array(ids))
            return UNSUPPORTED("post_processor template item %zu is not understood", i);
        size_t k;
        const json_t *id;
        json_array_foreach(ids, k, id)
        {
            uint8_t *count = after ? &spec->n_suffix : &spec->n_prefix;
            if (!json_is_integer(id) || json_integer_value(id) < 0 ||
                json_integer_value(id) >= (json_int_t)MAX_VOCAB_ID)
                return FAIL(SIMDBPE_ERR_VOCAB, WHAT ": post_processor id of %s is not a valid id",
                            name);
            if (*count == SIMDBPE__MAX_AFFIX)
                return UNSUPPORTED("post_processor adds more than %d ids on one side",
                                   SIMDBPE__MAX_AFFIX);
            (after ? spec->suffix : spec->prefix)[(*count)++] = (uint32_t)json_integer_value(id);
        }
    }
    return SIMDBPE_OK;
}

static simdbpe_status read_post(const json_t *pp, simdbpe__build_spec *spec, simdbpe_error *err)
{
    if (!pp || json_is_null(pp))
        return SIMDBPE_OK;
    const char *t = type_of(pp);
    if (strcmp(t, "ByteLevel") == 0)
        return SIMDBPE_OK; /* offsets only */
    if (strcmp(t, "TemplateProcessing") == 0)
        return read_template(pp, spec, err);
    if (strcmp(t, "RobertaProcessing") == 0) {
        const json_t *cls = json_array_get(json_object_get(pp, "cls"), 1);
        const json_t *sep = json_array_get(json_object_get(pp, "sep"), 1);
        if (!json_is_integer(cls) || !json_is_integer(sep) || json_integer_value(cls) < 0 ||
            json_integer_value(sep) < 0)
            return FAIL(SIMDBPE_ERR_VOCAB, WHAT ": RobertaProcessing without cls/sep ids");
        spec->prefix[spec->n_prefix++] = (uint32_t)json_integer_value(cls);
        spec->suffix[spec->n_suffix++] = (uint32_t)json_integer_value(sep);
        return SIMDBPE_OK;
    }
    if (strcmp(t, "Sequence") == 0) {
        size_t i;
        const json_t *p;
        json_array_foreach(json_object_get(pp, "processors"), i, p)
        {
            simdbpe_status st = read_post(p, spec, err);
            if (st != SIMDBPE_OK)
                return st;
        }
        return SIMDBPE_OK;
    }
    return UNSUPPORTED("post_processor \"%s\" is not supported", t);
}

/* A table of 2^bits slots (index + 1 into a vocab_list, 0 empty) over
 * its keys, open addressing: hash_slot finds a key's slot, empty if absent. */
static size_t hash_slot(const vocab_list *v, const uint32_t *slots, unsigned bits, const char *s,
                        size_t len)
{
    size_t mask = ((size_t)1 << bits) - 1;
    size_t h = (size_t)simdbpe__hash_bytes((const uint8_t *)s, len) & mask;
    for (; slots[h]; h = (h + 1) & mask) {
        size_t i = slots[h] - 1, a = v->key_off[i];
        if (v->key_off[i + 1] - a == len && memcmp(v->keys + a, s, len) == 0)
            break;
    }
    return h;
}

/* The table over v's keys, with room for `more` keys to come. */
static uint32_t *index_keys(const vocab_list *v, size_t more, unsigned *bits)
{
    *bits = 4;
    while (((size_t)1 << *bits) < 2 * (v->count + more) + 2)
        (*bits)++;
    uint32_t *slots = calloc((size_t)1 << *bits, sizeof *slots);
    for (size_t i = 0; slots && i < v->count; i++) {
        size_t a = v->key_off[i];
        slots[hash_slot(v, slots, *bits, v->keys + a, v->key_off[i + 1] - a)] = (uint32_t)i + 1;
    }
    return slots;
}

/*
 * added_tokens, with the ids HF tokenizers gives them (AddedVocabulary):
 * by content, not by the ids the file states (which HF only checks and
 * warns about): a content model.vocab has keeps its vocabulary id; a new
 * one gets the next id after the new ones so far, counting from the size
 * of model.vocab (its number of entries, whatever its largest id); a
 * content listed twice is one token. For the files models ship these are
 * the ids they state. (Checked with HF tokenizers 0.23.2: test_model_files.)
 */
static simdbpe_status read_added(const json_t *list, simdbpe__build_spec *spec,
                                 simdbpe_error *err)
{
    if (!list || json_is_null(list))
        return SIMDBPE_OK;
    if (!json_is_array(list))
        return FAIL(SIMDBPE_ERR_SPECIALS, WHAT ": added_tokens is not an array");
    size_t n = json_array_size(list);
    spec->added = calloc(n ? n : 1, sizeof *spec->added);
    if (!spec->added)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    size_t vocab_count = spec->vocab.count; /* model.vocab alone: HF's get_vocab_size */
    unsigned bits;
    uint32_t *slots = index_keys(&spec->vocab, n, &bits);
    if (!slots)
        return FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    uint32_t next = (uint32_t)vocab_count;
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; i < n && st == SIMDBPE_OK; i++) {
        const json_t *a = json_array_get(list, i);
        const json_t *id = json_object_get(a, "id"), *content = json_object_get(a, "content");
        if (!json_is_integer(id) || json_integer_value(id) < 0 ||
            json_integer_value(id) >= (json_int_t)MAX_VOCAB_ID || !json_is_string(content) ||
            json_string_length(content) == 0) {
            st = FAIL(SIMDBPE_ERR_SPECIALS,
                      WHAT ": added_tokens[%zu] needs an id in [0, %u) and non-empty content", i,
                      MAX_VOCAB_ID);
            break;
        }
        const char *text = json_string_value(content);
        size_t len = json_string_length(content);
        if (!is_false(a, "lstrip") || !is_false(a, "rstrip") || !is_false(a, "single_word")) {
            char q[96];
            simdbpe__quote(q, sizeof q, (const uint8_t *)text, len);
            st = UNSUPPORTED("added token %s uses lstrip, rstrip or single_word, which are not "
                             "supported",
                             q);
            break;
        }
        uint32_t flags = (json_is_true(json_object_get(a, "special")) ? SIMDBPE__ADDED_SPECIAL
                                                                       : 0) |
                         (json_is_true(json_object_get(a, "normalized"))
                              ? SIMDBPE__ADDED_NORMALIZED
                              : 0);
        size_t slot = hash_slot(&spec->vocab, slots, bits, text, len);
        size_t k = slots[slot] ? slots[slot] - 1 : SIZE_MAX;
        uint32_t v;
        if (k != SIZE_MAX && k < vocab_count) {
            v = spec->vocab.ids[k];
            flags |= ADDED_IN_VOCAB;
        } else if (k != SIZE_MAX) {
            continue; /* listed before: the same token */
        } else {
            v = next++;
            if (v >= MAX_VOCAB_ID) {
                st = FAIL(SIMDBPE_ERR_SPECIALS,
                          WHAT ": added_tokens[%zu] would get the id %u (numbered from the %zu "
                               "vocabulary entries on); ids must be below %u",
                          i, v, vocab_count, MAX_VOCAB_ID);
                break;
            }
            /* Not in model.vocab: the token is its text (and findable as such). */
            if (simdbpe__vocab_append(&spec->vocab, text, len, v) != SIMDBPE_OK) {
                st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
                break;
            }
            slots[slot] = (uint32_t)spec->vocab.count; /* its index + 1 */
        }
        spec->added[spec->n_added++] = (special_text){(const uint8_t *)text, len, v, flags};
    }
    free(slots);
    return st;
}

typedef struct merges_json {
    const json_t *list;
} merges_json;

static simdbpe_status merges_from_json(loader *ld, void *ctx, simdbpe_error *err)
{
    const json_t *list = ((const merges_json *)ctx)->list;
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        const char *a, *b;
        size_t alen, blen;
        if (json_is_string(item)) {
            a = json_string_value(item);
            const char *sp = strchr(a, ' ');
            size_t len = json_string_length(item);
            if (!sp || sp == a || strchr(sp + 1, ' ') || sp + 1 == a + len)
                return FAIL(SIMDBPE_ERR_MERGES,
                            WHAT ": model.merges[%zu]: expected two tokens separated by one "
                                 "space",
                            i);
            alen = (size_t)(sp - a);
            b = sp + 1;
            blen = len - alen - 1;
        } else if (json_is_array(item) && json_array_size(item) == 2 &&
                   json_is_string(json_array_get(item, 0)) &&
                   json_is_string(json_array_get(item, 1))) {
            a = json_string_value(json_array_get(item, 0));
            alen = json_string_length(json_array_get(item, 0));
            b = json_string_value(json_array_get(item, 1));
            blen = json_string_length(json_array_get(item, 1));
        } else {
            return FAIL(SIMDBPE_ERR_MERGES,
                        WHAT ": model.merges[%zu]: expected \"a b\" or [\"a\", \"b\"]", i);
        }
        simdbpe_status st = simdbpe__loader_merge_strings(
            ld, (const uint8_t *)a, alen, (const uint8_t *)b, blen, WHAT ": model.merges[", i,
            err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

static simdbpe_status read_model(const json_t *model, simdbpe__build_spec *spec, size_t len,
                                 simdbpe_error *err)
{
    if (!json_is_object(model))
        return FAIL(SIMDBPE_ERR_VOCAB, WHAT ": no \"model\" object");
    const char *t = type_of(model);
    if (*t && strcmp(t, "BPE") != 0)
        return UNSUPPORTED("model type \"%s\" is not supported (byte-level BPE only)", t);
    if (json_is_true(json_object_get(model, "byte_fallback")))
        return UNSUPPORTED("a BPE model with byte_fallback (SentencePiece-style) is not "
                           "supported, only byte-level BPE");
    const json_t *dropout = json_object_get(model, "dropout");
    if (dropout && !json_is_null(dropout) && json_number_value(dropout) != 0)
        return UNSUPPORTED("BPE dropout is not supported");
    if (!is_empty(model, "continuing_subword_prefix") || !is_empty(model, "end_of_word_suffix"))
        return UNSUPPORTED("continuing_subword_prefix / end_of_word_suffix are not supported");
    if (!json_is_array(json_object_get(model, "merges")))
        return FAIL(SIMDBPE_ERR_MERGES, WHAT ": model.merges is not an array");
    spec->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    return simdbpe__vocab_from_json(json_object_get(model, "vocab"), len, WHAT ": model.vocab",
                                    &spec->vocab, err);
}

simdbpe_status simdbpe_model_load_hf_json(const char *json, size_t len, simdbpe_model **out,
                                          simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!out || (!json && len))
        return FAIL(SIMDBPE_ERR_INVALID_ARG, "model_load_hf_json: NULL argument");
    *out = NULL;
    /* A UTF-8 BOM may start a JSON file. */
    if (len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) {
        json += 3;
        len -= 3;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return simdbpe__fail(err, SIMDBPE_ERR_VOCAB, (uint64_t)jerr.position, (uint64_t)jerr.line,
                             WHAT " line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    simdbpe__build_spec spec = {0};
    spec.vocab_name = WHAT;
    spec.added_required = 1;
    const json_t *model = json_object_get(root, "model");
    simdbpe_status st = json_is_object(root) ? SIMDBPE_OK
                                             : FAIL(SIMDBPE_ERR_VOCAB, WHAT ": not an object");
    if (st == SIMDBPE_OK)
        st = read_pretok(json_object_get(root, "pre_tokenizer"), &spec, err);
    if (st == SIMDBPE_OK)
        st = read_normalizer(json_object_get(root, "normalizer"), &spec.normalizer, err);
    if (st == SIMDBPE_OK)
        st = read_model(model, &spec, len, err);
    if (st == SIMDBPE_OK)
        st = read_added(json_object_get(root, "added_tokens"), &spec, err);
    if (st == SIMDBPE_OK)
        st = read_post(json_object_get(root, "post_processor"), &spec, err);
    merges_json mj = {json_object_get(model, "merges")};
    spec.merges = merges_from_json;
    spec.merges_ctx = &mj;
    if (st == SIMDBPE_OK)
        st = simdbpe__build(&spec, out, err);
    else
        simdbpe__vocab_list_free(&spec.vocab);
    free(spec.added);
    free((void *)spec.splits);
    json_decref(root);
    return st;
}
