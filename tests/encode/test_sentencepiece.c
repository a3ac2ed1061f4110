/*
 * test_sentencepiece.c - a SentencePiece-style model against HF tokenizers
 * on a small file: tests/data/hf/sp_small.tokenizer.json and the ids and
 * decodings npm tokenizers 0.23.2 gave for it (sp_small.expected.json,
 * written by tests/gen/sp_small.mjs; see tests/data/hf/PROVENANCE.md).
 *
 *   - every text: HF's ids (added tokens recognised, special ones too, as
 *     HF's encode does) and HF's decoding of them; the normalized added
 *     tokens "zz" and "x y" are matched by their normal form ("\u2581zz"),
 *     not by their content;
 *   - the same from the model compiled and opened as an untrusted image;
 *   - simdbpe_model_add_tokens as HF's addTokens (normalized) and
 *     addSpecialTokens: the count, the vocabulary size, and each text's
 *     ids and decoding after them ("cat", a vocabulary token, is matched
 *     by "\u2581cat" and decoded as it);
 *   - ignore_merges: variants of the model with two tokens BPE cannot
 *     build, whose pre-tokens equal to a token become it (the whole
 *     normalized text, or a Metaspace split's word), from the file and its
 *     compiled image.
 */
#include "test_util.h"

#define DATA SIMDBPE_TEST_DATA_DIR "/hf/"

static simdbpe_model *sp_small(void)
{
    size_t len;
    char *json = tu_read(DATA "sp_small.tokenizer.json", &len);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_hf_json(json, len, &m, &err), SIMDBPE_OK, "%s", err.message);
    free(json);
    return m;
}

static json_t *expected(void)
{
    json_error_t jerr;
    json_t *j = json_load_file(DATA "sp_small.expected.json", 0, &jerr);
    cr_assert(j, "sp_small.expected.json: %s", jerr.text);
    return j;
}

/* Each row's text gives its ids, and they decode to its decoding. */
static void check_rows(const simdbpe_model *m, const json_t *rows, const char *what)
{
    cr_assert(json_array_size(rows) > 10, "%s: no rows", what);
    simdbpe_encoder *e = tu_encoder(m);
    simdbpe_encode_options opts = SIMDBPE_ENCODE_OPTIONS_INIT;
    opts.special = SIMDBPE_SPECIAL_ALLOW;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        size_t len, n_want, dlen;
        const char *text = tu_json_text(row, "text", &len);
        uint32_t *want = tu_json_ids(json_object_get(row, "ids"), &n_want);
        char where[160];
        snprintf(where, sizeof where, "%s row %zu", what, i);
        tu_expect_ids(e, text, len, &opts, want, n_want, where);
        const char *decoded = tu_json_text(row, "decode", &dlen);
        uint8_t out[512];
        size_t got;
        cr_assert_eq(simdbpe_decode(m, want, n_want, out, sizeof out, &got, NULL), SIMDBPE_OK);
        cr_assert(got == dlen && memcmp(out, decoded, dlen) == 0,
                  "%s: decodes to \"%.*s\", HF gives \"%s\"", where, (int)got, (char *)out,
                  decoded);
        free(want);
    }
    simdbpe_encoder_free(e);
}

Test(sentencepiece, small_model_gives_hf_ids_and_decodings)
{
    simdbpe_model *m = sp_small();
    json_t *j = expected();
    check_rows(m, json_object_get(j, "plain"), "sp_small");
    json_decref(j);
    simdbpe_model_free(m);
}

Test(sentencepiece, its_compiled_image_gives_the_same)
{
    simdbpe_model *m = sp_small(), *back = NULL;
    size_t len = simdbpe_model_compiled_size(m), got;
    void *img = malloc(len);
    cr_assert_eq(simdbpe_model_compile(m, img, len, &got, NULL), SIMDBPE_OK);
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, &err), SIMDBPE_OK, "%s",
                 err.message);
    json_t *j = expected();
    check_rows(back, json_object_get(j, "plain"), "sp_small compiled");
    json_decref(j);
    simdbpe_model_free(back);
    simdbpe_model_free(m);
    free(img);
}

Test(sentencepiece, added_tokens_as_hf_adds_them)
{
    simdbpe_model *m = sp_small();
    json_t *j = expected();
    const json_t *want = json_object_get(j, "added");
    const json_t *plain = json_object_get(want, "tokens"),
                 *special = json_object_get(want, "special_tokens");
    simdbpe_added_token add[8];
    size_t n = 0, k;
    const json_t *t;
    /* addTokens: not special, normalized; addSpecialTokens: special, not */
    json_array_foreach(plain, k, t) add[n++] = (simdbpe_added_token){
        json_string_value(t), json_string_length(t), SIMDBPE_ADDED_NORMALIZED};
    simdbpe_model *more = NULL, *most = NULL;
    size_t count = 0, count_special = 0;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_add_tokens(m, add, n, &more, &count, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert_eq(count, (size_t)json_integer_value(json_object_get(want, "count")));
    n = 0;
    json_array_foreach(special, k, t) add[n++] = (simdbpe_added_token){
        json_string_value(t), json_string_length(t), SIMDBPE_ADDED_SPECIAL};
    cr_assert_eq(simdbpe_model_add_tokens(more, add, n, &most, &count_special, &err), SIMDBPE_OK,
                 "%s", err.message);
    cr_assert_eq(count_special, n);
    cr_assert_eq(simdbpe_model_vocab_size(most),
                 (uint32_t)json_integer_value(json_object_get(want, "vocab_size")));
    check_rows(most, json_object_get(want, "rows"), "sp_small with added tokens");
    json_decref(j);
    simdbpe_model_free(most);
    simdbpe_model_free(more);
    simdbpe_model_free(m);
}

Test(sentencepiece, ignore_merges_gives_a_token_its_pre_token_equals)
{
    json_t *j = expected();
    const json_t *variants = json_object_get(j, "ignore_merges"), *v;
    size_t k;
    cr_assert(json_array_size(variants) == 3);
    json_array_foreach(variants, k, v)
    {
        const char *label = json_string_value(json_object_get(v, "label"));
        const char *text = json_string_value(json_object_get(v, "tokenizer"));
        simdbpe_model *m = NULL, *back = NULL;
        simdbpe_error err;
        cr_assert_eq(simdbpe_model_load_hf_json(text, strlen(text), &m, &err), SIMDBPE_OK,
                     "%s: %s", label, err.message);
        check_rows(m, json_object_get(v, "rows"), label);
        size_t len = simdbpe_model_compiled_size(m), got;
        void *img = malloc(len);
        cr_assert_eq(simdbpe_model_compile(m, img, len, &got, NULL), SIMDBPE_OK);
        cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, &err), SIMDBPE_OK, "%s: %s",
                     label, err.message);
        check_rows(back, json_object_get(v, "rows"), label);
        simdbpe_model_free(back);
        simdbpe_model_free(m);
        free(img);
    }
    json_decref(j);
}
