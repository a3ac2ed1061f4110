/*
 * load_hf.c - a model from an HF tokenizers `tokenizer.json`: byte-level
 * BPE, or SentencePiece-style BPE (byte_fallback; sentencepiece.c).
 *
 * What is read, and what it means (HF tokenizers 0.23 semantics):
 *   model            type "BPE"; vocab (string -> id); merges as "a b"
 *                    strings or ["a", "b"] pairs, rank = index;
 *                    ignore_merges; dropout, a continuing_subword_prefix
 *                    or end_of_word_suffix other than "" are refused.
 *                    SentencePiece-style files (byte_fallback, or the
 *                    word marker U+2581 in the normalizer): their tokens
 *                    are literal strings; byte_fallback, unk_token,
 *                    fuse_unk and ignore_merges; the pre-tokenizer and
 *                    decoder shapes read_sentencepiece accepts.
 *   pre_tokenizer    a ByteLevel with use_regex (GPT-2's family), or a
 *                    Sequence of up to three Split(Regex) pieces, then
 *                    ByteLevel without its regex: the family of pretok.h
 *                    whose patterns are exactly these (Isolated), else the
 *                    generic family, which runs them with Oniguruma
 *                    (regex.h).
 *   normalizer       null, NFC, NFKC, NFD, NFKD, Lowercase, Strip,
 *                    Replace (String or Regex pattern), Prepend, and
 *                    Sequences of them (nested ones flattened): one
 *                    Unicode form as the model's form, a
 *                    SentencePiece-style Prepend("\u2581") / Replace(" ",
 *                    "\u2581") as its flags, anything else as a chain
 *                    (normalizer.h); other steps are refused by name.
 *   added_tokens     all of them cut the text (special or not); their
 *                    content is their text, normalized first for a
 *                    "normalized" one when the model has a normalizer, as
 *                    HF matches those in the normalized text; lstrip,
 *                    rstrip and single_word are refused (not implemented).
 *   post_processor   the ids a TemplateProcessing's single template (or
 *                    RobertaProcessing, BertProcessing) puts around a
 *                    sequence, added only when the caller asks
 *                    (add_special_tokens); see read_post for what is
 *                    refused.
 *   truncation,      settings of HF's encode calls, not of the model: not
 *   padding          applied, and said (simdbpe_model_notice).
 * Every byte-level character must be a token of model.vocab, or the file
 * is refused naming the byte (HF refuses it too, once a merge needs it).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/utf8_valid.h"
#include "../common/nfc.h"
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

/* A ByteLevel pre-tokenizer: alone (`after` NULL) with its GPT-2 regex,
 * or after the steps of a Sequence, the first of type `after`, without. */
static simdbpe_status bytelevel_ok(const json_t *p, const char *after, simdbpe_error *err)
{
    if (!is_false(p, "add_prefix_space"))
        return UNSUPPORTED("ByteLevel pre-tokenizer with add_prefix_space is not supported");
    int regex = !json_is_false(json_object_get(p, "use_regex")); /* HF's default: true */
    if (!regex && !after)
        return UNSUPPORTED("a ByteLevel pre-tokenizer without its GPT-2 regex (use_regex "
                           "false) and no Split before it is not supported");
    if (regex && after)
        return UNSUPPORTED("a ByteLevel pre-tokenizer with its GPT-2 regex (use_regex) after "
                           "a \"%s\" in a pre_tokenizer Sequence is not supported (only "
                           "Splits, then a ByteLevel with use_regex false)",
                           after);
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
                return bytelevel_ok(p, NULL, err);
            }
    }
    const json_t *seq = json_object_get(p, "pretokenizers");
    if (strcmp(type_of(p), "Sequence") != 0 || !json_is_array(seq) || json_array_size(seq) < 2)
        return UNSUPPORTED("pre_tokenizer of type \"%s\" is not supported", type_of(p));
    size_t n = json_array_size(seq);
    const json_t *last = json_array_get(seq, n - 1);
    if (strcmp(type_of(last), "ByteLevel") != 0)
        return UNSUPPORTED("the pre_tokenizer Sequence does not end with ByteLevel");
    simdbpe_status st = bytelevel_ok(last, type_of(json_array_get(seq, 0)), err);
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

/* ---- normalizers (normalizer.h) ---- */

#define META "\xE2\x96\x81" /* U+2581, the word marker */

/* The steps of the normalizer nz, nested Sequences flattened (HF applies
 * them in order either way), into im; SIMDBPE_OK or the step refused. */
static simdbpe_status normalizer_steps(const json_t *nz, simdbpe__nz_image *im, size_t *k,
                                       simdbpe_error *err)
{
    static const struct {
        const char *name;
        uint8_t form;
    } forms[] = {{"NFC", SIMDBPE__NORM_NFC},
                 {"NFKC", SIMDBPE__NORM_NFKC},
                 {"NFD", SIMDBPE__NORM_NFD},
                 {"NFKD", SIMDBPE__NORM_NFKD}};
    const char *t = type_of(nz);
    if (strcmp(t, "Sequence") == 0) {
        const json_t *list = json_object_get(nz, "normalizers");
        if (!json_is_array(list))
            return UNSUPPORTED("a normalizer Sequence without a \"normalizers\" list");
        size_t i;
        const json_t *step;
        json_array_foreach(list, i, step)
        {
            simdbpe_status st = normalizer_steps(step, im, k, err);
            if (st != SIMDBPE_OK)
                return st;
        }
        return SIMDBPE_OK;
    }
    size_t at = (*k)++;
    if (im->n >= SIMDBPE__NZ_MAX_STEPS)
        return UNSUPPORTED("a normalizer of more than %d steps", SIMDBPE__NZ_MAX_STEPS);
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (strcmp(t, forms[i].name) == 0) {
            simdbpe__nz_image_step(im, SIMDBPE__NZ_FORM, forms[i].form, NULL, 0, NULL, 0);
            return SIMDBPE_OK;
        }
    if (strcmp(t, "Lowercase") == 0) {
        simdbpe__nz_image_step(im, SIMDBPE__NZ_LOWERCASE, 0, NULL, 0, NULL, 0);
        return SIMDBPE_OK;
    }
    if (strcmp(t, "Strip") == 0) {
        const json_t *l = json_object_get(nz, "strip_left"), *r = json_object_get(nz, "strip_right");
        if (!json_is_boolean(l) || !json_is_boolean(r))
            return UNSUPPORTED("normalizer step %zu: Strip needs strip_left and strip_right "
                               "(true or false)",
                               at);
        uint8_t bits = (json_is_true(l) ? SIMDBPE__NZ_STRIP_LEFT : 0) |
                       (json_is_true(r) ? SIMDBPE__NZ_STRIP_RIGHT : 0);
        if (bits) /* neither side: nothing to do */
            simdbpe__nz_image_step(im, SIMDBPE__NZ_STRIP, bits, NULL, 0, NULL, 0);
        return SIMDBPE_OK;
    }
    if (strcmp(t, "Prepend") == 0) {
        const json_t *pre = json_object_get(nz, "prepend");
        if (!json_is_string(pre) || strlen(json_string_value(pre)) != json_string_length(pre))
            return UNSUPPORTED("normalizer step %zu: Prepend needs a \"prepend\" string "
                               "(without NUL)",
                               at);
        if (json_string_length(pre)) /* "" prepends nothing */
            simdbpe__nz_image_step(im, SIMDBPE__NZ_PREPEND, 0,
                                   (const uint8_t *)json_string_value(pre),
                                   json_string_length(pre), NULL, 0);
        return SIMDBPE_OK;
    }
    if (strcmp(t, "Replace") == 0) {
        const json_t *pat = json_object_get(nz, "pattern");
        const json_t *str = json_object_get(pat, "String"), *re = json_object_get(pat, "Regex");
        const json_t *content = json_object_get(nz, "content");
        const json_t *p = str ? str : re;
        if (!json_is_string(p) || !json_is_string(content) || (str && re) ||
            strlen(json_string_value(p)) != json_string_length(p) ||
            strlen(json_string_value(content)) != json_string_length(content))
            return UNSUPPORTED("normalizer step %zu: Replace needs a pattern {\"String\": ...} "
                               "or {\"Regex\": ...} and a content string (without NUL)",
                               at);
        /* HF escapes a String into a regex: the empty one matches between
         * every two characters, as the empty regex does. */
        uint8_t kind = re || json_string_length(p) == 0 ? SIMDBPE__NZ_REPLACE_REGEX
                                                         : SIMDBPE__NZ_REPLACE;
        simdbpe__nz_image_step(im, kind, 0, (const uint8_t *)json_string_value(p),
                               json_string_length(p), (const uint8_t *)json_string_value(content),
                               json_string_length(content));
        return SIMDBPE_OK;
    }
    return UNSUPPORTED("normalizer step %zu (\"%s\") is not supported (NFC, NFKC, NFD, NFKD, "
                       "Lowercase, Strip, Replace, Prepend, and Sequences of them)",
                       at, t[0] ? t : "no type");
}

/* The step at image offset *at: kind, arg, a, b; *at moves past it. */
static void image_step(const uint8_t *p, size_t *at, uint8_t *kind, uint8_t *arg,
                       const uint8_t **a, size_t *a_len, const uint8_t **b, size_t *b_len)
{
    *kind = p[*at];
    *arg = p[*at + 1];
    *a_len = (size_t)p[*at + 4] | (size_t)p[*at + 5] << 8 | (size_t)p[*at + 6] << 16 |
             (size_t)p[*at + 7] << 24;
    *a = p + *at + 8;
    size_t b_at = *at + 8 + *a_len;
    *b_len = (size_t)p[b_at] | (size_t)p[b_at + 1] << 8 | (size_t)p[b_at + 2] << 16 |
             (size_t)p[b_at + 3] << 24;
    *b = p + b_at + 4;
    *at = b_at + 4 + *b_len;
}

/*
 * The file's normalizer: none, one Unicode form (spec->normalizer), for a
 * SentencePiece-style model a form then Prepend("\u2581") and/or
 * Replace(" ", "\u2581") as the SIMDBPE__SP_* flags (unless `chain`: a
 * Metaspace pre-tokenizer follows, whose markers must come after the
 * normalizer's), or else the chain (SIMDBPE__NORM_CHAIN, its image in
 * spec->nz_image, malloc'd: the caller frees it).
 */
static simdbpe_status read_normalizer(const json_t *nz, simdbpe__build_spec *spec, int chain,
                                      simdbpe_error *err)
{
    spec->normalizer = SIMDBPE__NORM_NONE;
    if (!nz || json_is_null(nz))
        return SIMDBPE_OK;
    simdbpe__nz_image im = {0};
    size_t k = 0;
    simdbpe_status st = normalizer_steps(nz, &im, &k, err);
    if (st == SIMDBPE_OK && im.nomem)
        st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    if (st != SIMDBPE_OK || im.n == 0) {
        free(im.p);
        return st;
    }
    /* The shapes the older representation has. */
    uint8_t form = SIMDBPE__NORM_NONE;
    uint32_t sp = 0;
    int simple = 1;
    for (size_t i = 0, at = 4; i < im.n && simple; i++) {
        uint8_t kind, arg;
        const uint8_t *a, *b;
        size_t a_len, b_len;
        image_step(im.p, &at, &kind, &arg, &a, &a_len, &b, &b_len);
        if (kind == SIMDBPE__NZ_FORM && i == 0)
            form = arg;
        else if (spec->sp && !chain && kind == SIMDBPE__NZ_PREPEND && a_len == 3 &&
                 memcmp(a, META, 3) == 0 && !sp)
            sp |= SIMDBPE__SP_PREPEND;
        else if (spec->sp && !chain && kind == SIMDBPE__NZ_REPLACE && a_len == 1 && a[0] == ' ' &&
                 b_len == 3 && memcmp(b, META, 3) == 0 && !(sp & SIMDBPE__SP_REPLACE))
            sp |= SIMDBPE__SP_REPLACE;
        else
            simple = 0;
    }
    if (simple) {
        free(im.p);
        spec->normalizer = form;
        spec->sp |= sp;
        return SIMDBPE_OK;
    }
    /* Compiled once here, so that a pattern the engine refuses is this
     * file's error (the model's image compiles it again when opened). */
    simdbpe__normalizer *compiled;
    st = simdbpe__normalizer_new(im.p, im.len, WHAT " normalizer", &compiled, err);
    if (st != SIMDBPE_OK) {
        free(im.p);
        return st;
    }
    simdbpe__normalizer_free(compiled);
    spec->normalizer = SIMDBPE__NORM_CHAIN;
    spec->nz_image = im.p;
    spec->nz_len = im.len;
    return SIMDBPE_OK;
}

/* ---- SentencePiece-style BPE ---- */

/* Whether the file is a SentencePiece-style BPE: byte_fallback, or the
 * word marker put in by the normalizer or a Metaspace pre-tokenizer (HF's
 * conversions of SentencePiece models write one or the other). Byte-level
 * files have none, or a marker in their normalizer before a ByteLevel
 * pre-tokenizer. */
static int is_sentencepiece(const json_t *root)
{
    const json_t *model = json_object_get(root, "model");
    const json_t *pre = json_object_get(root, "pre_tokenizer");
    if (json_is_true(json_object_get(model, "byte_fallback")) ||
        strcmp(type_of(pre), "Metaspace") == 0)
        return 1;
    const json_t *steps = json_object_get(pre, "pretokenizers");
    const json_t *last = json_is_array(steps) && json_array_size(steps)
                             ? json_array_get(steps, json_array_size(steps) - 1)
                             : pre;
    if (strcmp(type_of(last), "ByteLevel") == 0)
        return 0;
    const char *nz = json_dumps(json_object_get(root, "normalizer"), JSON_COMPACT);
    int meta = nz && strstr(nz, META) != NULL;
    free((void *)nz);
    return meta;
}

static int is_string_pattern(const json_t *o, const char *key, const char *want)
{
    const char *p = json_string_value(json_object_get(json_object_get(o, key), "String"));
    return p && strcmp(p, want) == 0;
}

/* A Metaspace pre-tokenizer's or decoder's settings: replacement "\u2581",
 * prepend_scheme "always", "first" or "never" (files older than the
 * scheme: add_prefix_space true or false, read by HF as "always" or
 * "never"), split (default true). *prepend: 0 never, 1 always, 2 first. */
static simdbpe_status read_metaspace(const json_t *o, const char *where, int *prepend,
                                     int *split, simdbpe_error *err)
{
    const char *rep = json_string_value(json_object_get(o, "replacement"));
    if (!rep || strcmp(rep, META) != 0)
        return UNSUPPORTED("a Metaspace %s with a replacement other than \"\u2581\" is not "
                           "supported",
                           where);
    const json_t *scheme = json_object_get(o, "prepend_scheme");
    const json_t *aps = json_object_get(o, "add_prefix_space");
    const char *sc = json_string_value(scheme);
    if (sc && strcmp(sc, "always") == 0)
        *prepend = 1;
    else if (sc && strcmp(sc, "first") == 0)
        *prepend = 2;
    else if (sc && strcmp(sc, "never") == 0)
        *prepend = 0;
    else if (!scheme && json_is_boolean(aps))
        *prepend = json_is_true(aps);
    else if (!scheme && !aps)
        *prepend = 1;
    else
        return UNSUPPORTED("a Metaspace %s's prepend_scheme must be \"always\", \"first\" or "
                           "\"never\"",
                           where);
    const json_t *sp = json_object_get(o, "split");
    if (sp && !json_is_boolean(sp))
        return UNSUPPORTED("a Metaspace %s's split must be true or false", where);
    *split = !sp || json_is_true(sp);
    return SIMDBPE_OK;
}

/* The decoder chain: Replace("\u2581", " "), ByteFallback, Fuse, Strip(" ",
 * n, 0), each at most once and in this order (the chain HF's conversion
 * writes; Strip after Fuse works on the whole text). */
static simdbpe_status sp_decoder(const json_t *d, simdbpe__build_spec *spec, simdbpe_error *err)
{
    const json_t *list = json_object_get(d, "decoders");
    if (strcmp(type_of(d), "Metaspace") == 0) {
        int prepend, split;
        simdbpe_status st = read_metaspace(d, "decoder", &prepend, &split, err);
        if (st == SIMDBPE_OK)
            spec->sp |= SIMDBPE__SP_DEC_META | (prepend ? SIMDBPE__SP_DEC_META_FIRST : 0);
        return st;
    }
    if (strcmp(type_of(d), "Sequence") != 0 || !json_is_array(list))
        return UNSUPPORTED("decoder \"%s\" of a SentencePiece-style (byte_fallback) model is not "
                           "supported (Metaspace, or a Sequence of Replace, ByteFallback, Fuse, "
                           "Strip)",
                           type_of(d));
    int stage = 0, fused = 0;
    size_t i;
    const json_t *step;
    json_array_foreach(list, i, step)
    {
        const char *t = type_of(step);
        const char *content = json_string_value(json_object_get(step, "content"));
        if (stage < 1 && strcmp(t, "Replace") == 0 && is_string_pattern(step, "pattern", META) &&
            content && strcmp(content, " ") == 0) {
            spec->sp |= SIMDBPE__SP_DEC_REPLACE;
            stage = 1;
        } else if (stage < 2 && strcmp(t, "ByteFallback") == 0) {
            spec->sp |= SIMDBPE__SP_DEC_BYTES;
            stage = 2;
        } else if (stage < 3 && strcmp(t, "Fuse") == 0) {
            fused = 1;
            stage = 3;
        } else if (stage < 4 && fused && strcmp(t, "Strip") == 0 && content &&
                   strcmp(content, " ") == 0 &&
                   json_integer_value(json_object_get(step, "stop")) == 0 &&
                   json_integer_value(json_object_get(step, "start")) >= 0 &&
                   json_integer_value(json_object_get(step, "start")) <= 255) {
            spec->sp_strip = (uint8_t)json_integer_value(json_object_get(step, "start"));
            stage = 4;
        } else {
            return UNSUPPORTED("decoder step %zu (\"%s\") of a SentencePiece-style "
                               "(byte_fallback) model is not supported (Replace(\"\u2581\", \" \"), ByteFallback, Fuse, "
                               "Strip(\" \", n, 0), in this order)",
                               i, t);
        }
    }
    return SIMDBPE_OK;
}

/*
 * A SentencePiece-style file: the normalizer (read_normalizer: usually
 * Prepend("\u2581") and Replace(" ", "\u2581") after an optional Unicode
 * normal form; any chain), the pre-tokenizer (none: the whole normalized
 * text is one pre-token; Metaspace("\u2581"), which does per pre-token what
 * Prepend and Replace do; or a Split on " " after a normalizer that is
 * exactly those two, which then splits nothing) and the decoder (the
 * chain, or Metaspace).
 */
static simdbpe_status read_sentencepiece(const json_t *root, simdbpe__build_spec *spec,
                                         simdbpe_error *err)
{
    spec->sp = SIMDBPE__SP_MODEL;
    spec->pretok = SIMDBPE__PRETOK_GPT2; /* not used: pieces go to sentencepiece.c */
    const json_t *p = json_object_get(root, "pre_tokenizer");
    int meta = p && strcmp(type_of(p), "Metaspace") == 0;
    simdbpe_status st = read_normalizer(json_object_get(root, "normalizer"), spec, meta, err);
    if (st != SIMDBPE_OK)
        return st;
    if (meta) {
        /* Its replacing and prepending are done per pre-token, after the
         * normalizer and after the normalized added tokens are cut out,
         * as in HF. Its "first" scheme asks whether a pre-token starts at
         * the text's start (HF: its original offset is 0): told by the
         * encoder only while the normalizer keeps the first character
         * where it was. */
        int prepend, split;
        st = read_metaspace(p, "pre-tokenizer", &prepend, &split, err);
        if (st != SIMDBPE_OK)
            return st;
        if (prepend == 2 && spec->normalizer == SIMDBPE__NORM_CHAIN) {
            simdbpe__normalizer *nz;
            st = simdbpe__normalizer_new(spec->nz_image, spec->nz_len, WHAT, &nz, err);
            int keeps = st == SIMDBPE_OK && simdbpe__normalizer_keeps_start(nz);
            simdbpe__normalizer_free(nz);
            if (st == SIMDBPE_OK && !keeps)
                return UNSUPPORTED("a Metaspace pre-tokenizer with prepend_scheme \"first\" "
                                   "after a normalizer with Strip, Replace or Prepend steps "
                                   "is not supported");
            if (st != SIMDBPE_OK)
                return st;
        }
        spec->sp |= SIMDBPE__SP_META | (prepend ? SIMDBPE__SP_META_PREPEND : 0) |
                    (prepend == 2 ? SIMDBPE__SP_META_FIRST : 0) |
                    (split ? SIMDBPE__SP_META_SPLIT : 0);
    } else if (p && !json_is_null(p)) {
        /* With no space left, a Split on " " that keeps the gaps (any
         * behavior without invert) leaves the text whole. */
        int split_space = strcmp(type_of(p), "Split") == 0 &&
                          is_string_pattern(p, "pattern", " ") &&
                          !json_is_true(json_object_get(p, "invert"));
        if (!split_space || !(spec->sp & SIMDBPE__SP_REPLACE))
            return UNSUPPORTED("pre_tokenizer \"%s\" of a SentencePiece-style (byte_fallback) "
                               "model is not supported (none, Metaspace, or a Split on \" \" after "
                               "Replace(\" \", \"\u2581\"))",
                               type_of(p));
    }
    const json_t *d = json_object_get(root, "decoder");
    if (!d || json_is_null(d))
        return UNSUPPORTED("a SentencePiece-style (byte_fallback) model without a decoder is "
                           "not supported");
    return sp_decoder(d, spec, err);
}

/* A post-processor's token id: an integer below MAX_VOCAB_ID (HF reads
 * u32 and refuses the file otherwise; larger ids are no token of ours). */
static int token_id(const json_t *v, uint32_t *id)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) >= (json_int_t)MAX_VOCAB_ID)
        return 0;
    *id = (uint32_t)json_integer_value(v);
    return 1;
}

static simdbpe_status add_affix(simdbpe__build_spec *spec, int after, uint32_t id,
                                simdbpe_error *err)
{
    uint8_t *count = after ? &spec->n_suffix : &spec->n_prefix;
    if (*count == SIMDBPE__MAX_AFFIX)
        return UNSUPPORTED("post_processor adds more than %d ids on one side",
                           SIMDBPE__MAX_AFFIX);
    (after ? spec->suffix : spec->prefix)[(*count)++] = id;
    return SIMDBPE_OK;
}

/* The ids of a TemplateProcessing's single template before and after the
 * sequence: its items are special tokens and exactly one {"Sequence":
 * {"id": "A"}} (HF repeats the text for a second one, drops it when there
 * is none, and panics on "B" in a single template). */
static simdbpe_status read_template(const json_t *tp, simdbpe__build_spec *spec,
                                    simdbpe_error *err)
{
    const json_t *single = json_object_get(tp, "single");
    const json_t *specials = json_object_get(tp, "special_tokens");
    if (!json_is_array(single) || !json_is_object(specials))
        return UNSUPPORTED("post_processor TemplateProcessing without a \"single\" template "
                           "and \"special_tokens\"");
    /* Every special token's ids, used or not: HF refuses a file with one
     * that is no u32. */
    const char *key;
    const json_t *entry;
    json_object_foreach((json_t *)specials, key, entry)
    {
        size_t k;
        const json_t *v;
        uint32_t id;
        json_array_foreach(json_object_get(entry, "ids"), k, v)
        {
            if (!token_id(v, &id))
                return FAIL(SIMDBPE_ERR_VOCAB,
                            WHAT ": post_processor: id %zu of special token %s is not a token "
                                 "id (an integer below %u)",
                            k, key, MAX_VOCAB_ID);
        }
    }
    int after = 0;
    size_t i;
    const json_t *item;
    json_array_foreach(single, i, item)
    {
        const json_t *seq = json_object_get(item, "Sequence");
        if (seq) {
            const char *which = json_string_value(json_object_get(seq, "id"));
            if (!which || strcmp(which, "A") != 0 || after)
                return UNSUPPORTED("post_processor template: the single template must hold the "
                                   "sequence A exactly once (item %zu)",
                                   i);
            after = 1;
            continue;
        }
        const char *name =
            json_string_value(json_object_get(json_object_get(item, "SpecialToken"), "id"));
        const json_t *ids = json_object_get(json_object_get(specials, name ? name : ""), "ids");
        if (!name || !json_is_array(ids))
            return UNSUPPORTED("post_processor template item %zu is not understood", i);
        size_t k;
        const json_t *v;
        json_array_foreach(ids, k, v)
        {
            /* A token id: checked above. */
            simdbpe_status st = add_affix(spec, after, (uint32_t)json_integer_value(v), err);
            if (st != SIMDBPE_OK)
                return st;
        }
    }
    if (!after)
        return UNSUPPORTED("post_processor template: the single template must hold the "
                           "sequence A exactly once (it has none)");
    return SIMDBPE_OK;
}

/* RobertaProcessing and BertProcessing: cls before the sequence, sep after
 * it, each ["token", id]. */
static simdbpe_status read_cls_sep(const json_t *pp, const char *type, simdbpe__build_spec *spec,
                                   simdbpe_error *err)
{
    static const char *const keys[2] = {"cls", "sep"};
    for (int k = 0; k < 2; k++) {
        const json_t *pair = json_object_get(pp, keys[k]);
        uint32_t id;
        if (!json_is_array(pair) || json_array_size(pair) != 2 ||
            !json_is_string(json_array_get(pair, 0)) || !token_id(json_array_get(pair, 1), &id)) {
            const json_t *v = json_array_get(pair, 1);
            if (json_is_integer(v))
                return FAIL(SIMDBPE_ERR_VOCAB,
                            WHAT ": post_processor %s: %s id %lld is not a token id (an "
                                 "integer below %u)",
                            type, keys[k], (long long)json_integer_value(v), MAX_VOCAB_ID);
            return FAIL(SIMDBPE_ERR_VOCAB,
                        WHAT ": post_processor %s: \"%s\" is not [\"token\", id]", type, keys[k]);
        }
        simdbpe_status st = add_affix(spec, k, id, err);
        if (st != SIMDBPE_OK)
            return st;
    }
    return SIMDBPE_OK;
}

/*
 * The post-processor, or the processors of a Sequence (nested ones too),
 * of which at most one may add ids: HF applies them one after the other,
 * each to what the one before returned, and a TemplateProcessing returns
 * each part of its template as an encoding of its own, so a second
 * processor that adds ids adds them around every part (RobertaProcessing
 * after a template puts its separators between them). ByteLevel ones
 * change offsets only. `adders` counts those that add ids.
 */
static simdbpe_status read_post(const json_t *pp, simdbpe__build_spec *spec, int *adders,
                                simdbpe_error *err)
{
    if (!pp || json_is_null(pp))
        return SIMDBPE_OK;
    const char *t = type_of(pp);
    if (strcmp(t, "ByteLevel") == 0)
        return SIMDBPE_OK; /* offsets only */
    if (strcmp(t, "Sequence") == 0) {
        const json_t *list = json_object_get(pp, "processors");
        if (!json_is_array(list))
            return UNSUPPORTED("post_processor Sequence without a \"processors\" list");
        size_t i;
        const json_t *p;
        json_array_foreach(list, i, p)
        {
            if (!json_is_object(p)) /* HF refuses a null one too */
                return UNSUPPORTED("post_processor Sequence: processor %zu is not a "
                                   "post-processor object (HF refuses the file)",
                                   i);
            simdbpe_status st = read_post(p, spec, adders, err);
            if (st != SIMDBPE_OK)
                return st;
        }
        return SIMDBPE_OK;
    }
    int template = strcmp(t, "TemplateProcessing") == 0;
    if (!template && strcmp(t, "RobertaProcessing") != 0 && strcmp(t, "BertProcessing") != 0)
        return UNSUPPORTED("post_processor \"%s\" is not supported", t);
    if (++*adders > 1)
        return UNSUPPORTED("a post_processor Sequence of more than one processor that adds ids "
                           "(here %s after another) is not supported: HF adds the later one's "
                           "around each part of the earlier one's output",
                           t);
    return template ? read_template(pp, spec, err) : read_cls_sep(pp, t, spec, err);
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
 *
 * A "normalized" token of a model with a normalizer is matched by its
 * normalized content (HF builds its trie of those from them), so the
 * Angstrom sign "\u212bX" by "\u00c5X" under NFC, and "zz" by "\u2581zz"
 * under a SentencePiece-style Prepend("\u2581"); a new one's token is
 * that text too (HF decodes it so); its id is still found by its content.
 * Two normalized ones with one normalized text are refused: HF matches
 * either, as its hash map's order falls in the process (npm tokenizers
 * 0.23.2 gave one id or the other from run to run). The normalized texts
 * are malloc'd in norm[i] (NULL where the content is kept).
 */
static simdbpe_status read_added(const json_t *list, simdbpe__build_spec *spec,
                                 const simdbpe__normalizer *nz, uint8_t **norm,
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
    unsigned bits, seen_bits;
    uint32_t *slots = index_keys(&spec->vocab, 0, &bits);
    vocab_list seen = {0};   /* the contents so far, with their ids */
    vocab_list normed = {0}; /* the normalized ones' normalized texts */
    uint32_t *seen_slots = index_keys(&seen, n, &seen_bits);
    unsigned normed_bits;
    uint32_t *normed_slots = index_keys(&normed, n, &normed_bits);
    simdbpe_status st = slots && seen_slots && normed_slots
                            ? SIMDBPE_OK
                            : FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    uint32_t next = (uint32_t)vocab_count;
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
        size_t at = hash_slot(&seen, seen_slots, seen_bits, text, len);
        if (seen_slots[at])
            continue; /* listed before: the same token */
        const uint8_t *match = (const uint8_t *)text;
        size_t match_len = len;
        if ((flags & SIMDBPE__ADDED_NORMALIZED) &&
            (spec->normalizer != SIMDBPE__NORM_NONE || spec->sp)) {
            simdbpe_status ns = simdbpe__added_normal_form(spec->normalizer, nz, spec->sp,
                                                           &norm[i], &match, &match_len);
            if (ns != SIMDBPE_OK) {
                char q[96];
                simdbpe__quote(q, sizeof q, (const uint8_t *)text, len);
                st = FAIL(ns, WHAT ": added token %s: the normalizer failed on it (%s)", q,
                          simdbpe_strerror(ns));
                break;
            }
            if (match_len == 0) {
                char q[96];
                simdbpe__quote(q, sizeof q, (const uint8_t *)text, len);
                st = UNSUPPORTED("added token %s is \"normalized\" and the normalizer leaves "
                                 "nothing of it",
                                 q);
                break;
            }
            size_t twin = hash_slot(&normed, normed_slots, normed_bits, (const char *)match,
                                    match_len);
            if (normed_slots[twin]) {
                char q[64], q2[64], qm[64];
                size_t k = normed.ids[normed_slots[twin] - 1]; /* its index in `list` */
                const json_t *other = json_object_get(json_array_get(list, k), "content");
                simdbpe__quote(q, sizeof q, (const uint8_t *)json_string_value(other),
                               json_string_length(other));
                simdbpe__quote(q2, sizeof q2, (const uint8_t *)text, len);
                simdbpe__quote(qm, sizeof qm, match, match_len);
                st = UNSUPPORTED("added tokens %s and %s are both matched by %s after the "
                                 "normalizer: HF tokenizers matches either, at random",
                                 q, q2, qm);
                break;
            }
            if (simdbpe__vocab_append(&normed, (const char *)match, match_len, (uint32_t)i) !=
                SIMDBPE_OK) {
                st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
                break;
            }
            normed_slots[twin] = (uint32_t)normed.count;
        }
        size_t slot = hash_slot(&spec->vocab, slots, bits, text, len);
        uint32_t v;
        if (slots[slot]) {
            v = spec->vocab.ids[slots[slot] - 1];
            flags |= ADDED_IN_VOCAB;
        } else {
            v = next++;
            if (v >= MAX_VOCAB_ID) {
                st = FAIL(SIMDBPE_ERR_SPECIALS,
                          WHAT ": added_tokens[%zu] would get the id %u (numbered from the %zu "
                               "vocabulary entries on); ids must be below %u",
                          i, v, vocab_count, MAX_VOCAB_ID);
                break;
            }
            /* Not in model.vocab: the token is its (matched) text. */
            if (simdbpe__vocab_append(&spec->vocab, (const char *)match, match_len, v) !=
                SIMDBPE_OK) {
                st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
                break;
            }
        }
        if (simdbpe__vocab_append(&seen, text, len, v) != SIMDBPE_OK) {
            st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
            break;
        }
        seen_slots[at] = (uint32_t)seen.count; /* its index + 1 */
        spec->added[spec->n_added++] = (special_text){match, match_len, v, flags};
    }
    free(slots);
    free(seen_slots);
    free(normed_slots);
    simdbpe__vocab_list_free(&seen);
    simdbpe__vocab_list_free(&normed);
    return st;
}

/* The settings of HF's encode calls the file holds, which are not applied
 * (they change no id of a whole text's encoding): said in the model's
 * notice. NULL when there are none (or out of memory). */
static char *unapplied(const json_t *root)
{
    static const char *const keys[] = {"truncation", "padding"};
    const char *set[2];
    int n = 0;
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(root, keys[k]);
        if (v && !json_is_null(v))
            set[n++] = keys[k];
    }
    if (!n)
        return NULL;
    char *msg = NULL;
    if (asprintf(&msg,
                 WHAT ": its %s%s%s %s not applied: %s of HF's encode calls, and the ids "
                      "given are those of the whole text%s",
                 set[0], n > 1 ? " and " : "", n > 1 ? set[1] : "", n > 1 ? "are" : "is",
                 n > 1 ? "they are settings" : "it is a setting",
                 strcmp(set[n - 1], "padding") == 0 ? ", unpadded" : "") < 0)
        return NULL;
    return msg;
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
    const json_t *dropout = json_object_get(model, "dropout");
    if (dropout && !json_is_null(dropout) && json_number_value(dropout) != 0)
        return UNSUPPORTED("BPE dropout is not supported");
    if (!is_empty(model, "continuing_subword_prefix") || !is_empty(model, "end_of_word_suffix"))
        return UNSUPPORTED("continuing_subword_prefix / end_of_word_suffix are not supported");
    if (!json_is_array(json_object_get(model, "merges")))
        return FAIL(SIMDBPE_ERR_MERGES, WHAT ": model.merges is not an array");
    spec->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    if (spec->sp) {
        spec->sp |= json_is_true(json_object_get(model, "byte_fallback"))
                        ? SIMDBPE__SP_BYTE_FALLBACK
                        : 0;
        spec->sp |= json_is_true(json_object_get(model, "fuse_unk")) ? SIMDBPE__SP_FUSE_UNK : 0;
        spec->unk = json_string_value(json_object_get(model, "unk_token"));
    }
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
    if (st == SIMDBPE_OK && is_sentencepiece(root))
        st = read_sentencepiece(root, &spec, err);
    else if (st == SIMDBPE_OK)
        st = read_pretok(json_object_get(root, "pre_tokenizer"), &spec, err);
    if (st == SIMDBPE_OK && !spec.sp)
        st = read_normalizer(json_object_get(root, "normalizer"), &spec, 0, err);
    if (st == SIMDBPE_OK)
        st = read_model(model, &spec, len, err);
    /* Before the added tokens take ids after model.vocab's: the missing
     * byte, not an id it makes collide, is the fault. (A SentencePiece-style
     * vocabulary is not byte-level: its bytes are <0xNN> tokens.) */
    int missing = st == SIMDBPE_OK && !spec.sp ? simdbpe__vocab_missing_byte(&spec.vocab) : -1;
    if (missing >= 0) {
        char q[16];
        uint8_t ch[4];
        size_t n = simdbpe__utf8_encode(simdbpe__bytelevel_cp((uint8_t)missing), ch);
        simdbpe__quote(q, sizeof q, ch, n);
        st = FAIL(SIMDBPE_ERR_VOCAB,
                  WHAT ": model.vocab has no token for byte 0x%02X (its byte-level character "
                       "is %s, U+%04X); a byte-level vocabulary needs all 256",
                  missing, q, simdbpe__bytelevel_cp((uint8_t)missing));
    }
    const json_t *added = json_object_get(root, "added_tokens");
    uint8_t **norm = calloc(json_array_size(added) + 1, sizeof *norm);
    if (st == SIMDBPE_OK && !norm)
        st = FAIL(SIMDBPE_ERR_NOMEM, "out of memory");
    simdbpe__normalizer *nz = NULL;
    if (st == SIMDBPE_OK && spec.nz_image)
        st = simdbpe__normalizer_new(spec.nz_image, spec.nz_len, WHAT, &nz, err);
    if (st == SIMDBPE_OK)
        st = read_added(added, &spec, nz, norm, err);
    simdbpe__normalizer_free(nz);
    int adders = 0;
    if (st == SIMDBPE_OK)
        st = read_post(json_object_get(root, "post_processor"), &spec, &adders, err);
    merges_json mj = {json_object_get(model, "merges")};
    spec.merges = merges_from_json;
    spec.merges_ctx = &mj;
    if (st == SIMDBPE_OK)
        spec.notice = unapplied(root);
    if (st == SIMDBPE_OK)
        st = simdbpe__build(&spec, out, err);
    else
        simdbpe__vocab_list_free(&spec.vocab);
    for (size_t i = 0; norm && i < json_array_size(added); i++)
        free(norm[i]);
    free(norm);
    free(spec.added);
    free((void *)spec.splits);
    free((void *)spec.nz_image);
    json_decref(root);
    return st;
}
