/*
 * test_id_limit.c - the tokenizer.json loader's id limit (MAX_VOCAB_ID,
 * 2^24 in the library). Reaching it for real takes a vocabulary of 16 M
 * entries, so this executable builds its own copy of src/model/load_hf.c
 * with the limit at 300 (tests/core.cmake; the static library's copy is
 * then not linked) and checks both ways past it that are the added
 * tokens': an id a token states, and one HF's numbering would give it
 * (from the number of vocabulary entries on).
 *
 * The model is tests/data/hf/added_ids_by_content.json without its
 * `zzz_big` entry: 277 vocabulary entries (ids up to 524: the vocabulary's
 * ids are load.c's to check), so added tokens are numbered from 277.
 */
#include <criterion/criterion.h>

#include "test_util.h"

#if !defined(MAX_VOCAB_ID) || MAX_VOCAB_ID != 300
#error "build with MAX_VOCAB_ID=300 (tests/core.cmake)"
#endif

static json_t *model_with_added(size_t n_added, json_int_t stated_id)
{
    json_error_t jerr;
    json_t *j = json_load_file(SIMDBPE_SOURCE_DIR "/tests/data/hf/added_ids_by_content.json", 0,
                               &jerr);
    cr_assert(j, "%s", jerr.text);
    json_t *vocab = json_object_get(json_object_get(j, "model"), "vocab");
    cr_assert_eq(json_object_del(vocab, "zzz_big"), 0);
    cr_assert_eq(json_object_size(vocab), 277);
    json_t *added = json_array();
    for (size_t i = 0; i < n_added; i++) {
        char name[32];
        snprintf(name, sizeof name, "<added%zu>", i);
        json_array_append_new(added, json_pack("{s:I, s:s, s:b, s:b, s:b, s:b, s:b}", "id",
                                               stated_id, "content", name, "single_word", 0,
                                               "lstrip", 0, "rstrip", 0, "normalized", 0,
                                               "special", 1));
    }
    json_object_set_new(j, "added_tokens", added);
    return j;
}

static simdbpe_status load(json_t *j, simdbpe_model **m, simdbpe_error *err)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    cr_assert(text);
    simdbpe_status st = simdbpe_model_load_hf_json(text, strlen(text), m, err);
    free(text);
    return st;
}

Test(id_limit, added_tokens_numbered_up_to_the_limit)
{
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(load(model_with_added(23, 0), &m, &err), SIMDBPE_OK, "%s", err.message);
    for (uint32_t k = 0; k < 23; k++) {
        char name[32];
        uint32_t id;
        snprintf(name, sizeof name, "<added%u>", k);
        cr_assert_eq(simdbpe_model_special_id(m, name, strlen(name), &id), SIMDBPE_OK, "%s", name);
        cr_assert_eq(id, 277 + k, "%s: %u", name, id);
    }
    simdbpe_model_free(m);
}

Test(id_limit, an_added_token_numbered_past_it_is_refused)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(load(model_with_added(24, 0), &m, &err), SIMDBPE_ERR_SPECIALS);
    cr_assert_null(m);
    cr_assert(strstr(err.message, "added_tokens[23] would get the id 300"), "%s", err.message);
    cr_assert(strstr(err.message, "below 300"), "%s", err.message);
}

Test(id_limit, a_stated_id_past_it_is_refused)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(load(model_with_added(1, 300), &m, &err), SIMDBPE_ERR_SPECIALS);
    cr_assert(strstr(err.message, "added_tokens[0] needs an id in [0, 300)"), "%s", err.message);
}
