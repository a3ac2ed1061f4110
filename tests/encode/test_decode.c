/*
 * test_decode.c - ids back to bytes: round trips on golden documents, range
 * errors (which id, at which position), buffer sizing, specials, and output
 * that ends inside a multi-byte character.
 *
 * Expected bytes are the golden texts themselves (the references' ids of a
 * text must decode to that text).
 */
#include <criterion/criterion.h>

#include "test_util.h"

static simdbpe_model *model;

static void setup(void)
{
    model = tu_gpt2();
}

static void teardown(void)
{
    simdbpe_model_free(model);
}

TestSuite(decode, .init = setup, .fini = teardown);

static size_t decoded_docs;

static void check_round_trip(json_t *rec, size_t line, void *ctx)
{
    const char *file = ctx;
    size_t len, n;
    const char *text = tu_json_text(rec, "text", &len);
    uint32_t *ids = tu_json_ids(json_object_get(rec, "ids"), &n);
    uint8_t *out = malloc(len + 1);
    size_t out_len = 0;
    simdbpe_error err;
    simdbpe_status st = simdbpe_decode(model, ids, n, out, len + 1, &out_len, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%s line %zu: %s", file, line, err.message);
    cr_assert(out_len == len && memcmp(out, text, len) == 0, "%s line %zu: decoded text differs",
              file, line);
    free(out);
    free(ids);
    decoded_docs++;
}

Test(decode, golden_ids_decode_to_their_texts)
{
    static const char *const files[] = {"edge.jsonl", "stress.jsonl", "random.jsonl"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TU_GOLDEN_DIR, files[i]);
        tu_each_jsonl(path, check_round_trip, (void *)files[i]);
    }
    cr_assert_gt(decoded_docs, 9000);
}

Test(decode, out_of_range_ids_are_named)
{
    static const uint32_t bad_ids[] = {50257, 60000, UINT32_MAX};
    for (size_t k = 0; k < 3; k++) {
        uint32_t ids[] = {15496, 995, bad_ids[k], 0};
        uint8_t out[64];
        size_t out_len;
        simdbpe_error err;
        cr_assert_eq(simdbpe_decode(model, ids, 4, out, sizeof out, &out_len, &err),
                     SIMDBPE_ERR_TOKEN_ID);
        cr_assert_eq(err.status, SIMDBPE_ERR_TOKEN_ID);
        cr_assert_eq(err.index, 2);
        char want[32];
        snprintf(want, sizeof want, "%u", bad_ids[k]);
        cr_assert(strstr(err.message, want), "message \"%s\" lacks the id %s", err.message, want);
        cr_assert(strstr(err.message, "position 2"), "message \"%s\"", err.message);
    }
    /* err may be NULL. */
    uint32_t one = 50257;
    uint8_t out[8];
    size_t out_len;
    cr_assert_eq(simdbpe_decode(model, &one, 1, out, sizeof out, &out_len, NULL),
                 SIMDBPE_ERR_TOKEN_ID);
}

Test(decode, unused_id_in_a_model_with_gaps)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(TU_GOLDEN_DIR "/small_model", &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    uint32_t gap = UINT32_MAX;
    for (uint32_t id = 0; id < simdbpe_model_vocab_size(m) && gap == UINT32_MAX; id++) {
        const uint8_t *b;
        size_t len;
        if (simdbpe_model_token_bytes(m, id, &b, &len) != SIMDBPE_OK)
            gap = id;
    }
    cr_assert_neq(gap, UINT32_MAX, "the small model has a gap in its ids");
    uint8_t out[16];
    size_t out_len;
    cr_assert_eq(simdbpe_decode(m, &gap, 1, out, sizeof out, &out_len, &err),
                 SIMDBPE_ERR_TOKEN_ID);
    cr_assert_eq(err.index, 0);
    simdbpe_model_free(m);
}

Test(decode, buffer_sizing)
{
    uint32_t ids[] = {15496, 995}; /* "Hello world" */
    uint8_t out[32];
    size_t need = 0;
    simdbpe_error err;
    /* A NULL buffer of capacity 0 reports the size needed. */
    cr_assert_eq(simdbpe_decode(model, ids, 2, NULL, 0, &need, &err),
                 SIMDBPE_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(need, 11);
    cr_assert_eq(simdbpe_decode(model, ids, 2, out, 10, &need, &err),
                 SIMDBPE_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(need, 11);
    cr_assert_eq(simdbpe_decode(model, ids, 2, out, 11, &need, &err), SIMDBPE_OK);
    cr_assert(need == 11 && memcmp(out, "Hello world", 11) == 0);
    /* No ids: nothing to write. */
    cr_assert_eq(simdbpe_decode(model, NULL, 0, NULL, 0, &need, &err), SIMDBPE_OK);
    cr_assert_eq(need, 0);
}

Test(decode, null_arguments)
{
    uint32_t id = 0;
    uint8_t out[4];
    size_t n;
    simdbpe_error err;
    cr_assert_eq(simdbpe_decode(NULL, &id, 1, out, 4, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_decode(model, NULL, 1, out, 4, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_decode(model, &id, 1, NULL, 4, &n, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_decode(model, &id, 1, out, 4, NULL, &err), SIMDBPE_ERR_INVALID_ARG);
}

Test(decode, specials_decode_to_their_text)
{
    uint32_t ids[] = {64, 50256, 65}; /* specials.jsonl: "a<|endoftext|>b" with allow */
    uint8_t out[32];
    size_t n;
    cr_assert_eq(simdbpe_decode(model, ids, 3, out, sizeof out, &n, NULL), SIMDBPE_OK);
    cr_assert(n == 15 && memcmp(out, "a<|endoftext|>b", 15) == 0);
}

/* edge.jsonl doc 9: "x 😀" -> [87, 30325, 222]; ids below 256 are single
 * bytes, so [87, 30325] is the text without its last byte: the output ends
 * inside the 4-byte emoji and decoding must still give exactly those bytes. */
Test(decode, output_ending_inside_a_character)
{
    uint32_t ids[] = {87, 30325, 222};
    const char *text = "x \xF0\x9F\x98\x80";
    uint8_t out[16];
    size_t n;
    cr_assert_eq(simdbpe_decode(model, ids, 3, out, sizeof out, &n, NULL), SIMDBPE_OK);
    cr_assert(n == 6 && memcmp(out, text, 6) == 0);
    cr_assert_eq(simdbpe_decode(model, ids, 2, out, sizeof out, &n, NULL), SIMDBPE_OK);
    cr_assert(n == 5 && memcmp(out, text, 5) == 0, "got %zu bytes", n);
    /* A lone continuation byte token on its own. */
    cr_assert_eq(simdbpe_decode(model, ids + 2, 1, out, sizeof out, &n, NULL), SIMDBPE_OK);
    cr_assert(n == 1 && out[0] == 0x80);
}

/* Every single id decodes to its token bytes. */
Test(decode, every_id)
{
    uint8_t out[256];
    for (uint32_t id = 0; id < simdbpe_model_vocab_size(model); id++) {
        const uint8_t *b;
        size_t len, n;
        cr_assert_eq(simdbpe_model_token_bytes(model, id, &b, &len), SIMDBPE_OK);
        cr_assert_eq(simdbpe_decode(model, &id, 1, out, sizeof out, &n, NULL), SIMDBPE_OK);
        cr_assert(n == len && memcmp(out, b, len) == 0, "id %u", id);
    }
}
