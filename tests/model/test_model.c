/*
 * test_model.c - the byte-level alphabet and model loading: the embedded
 * GPT-2 model, models from memory and from a directory (RoBERTa-style ids
 * that are not 256 + rank, special-token lists), and the errors malformed
 * vocab.json / merges.txt / special_tokens give (file, line, key).
 *
 * Expected values come from shared/REFERENCE.md (alphabet, GPT-2 layout),
 * from vocab.json/merges.txt parsed here with jansson, or are derived by
 * hand from merge rules written in the test.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "test_model.h"
#include "test_util.h"

/* ------------------------------------------------------------ alphabet */

Test(bytelevel, known_points)
{
    /* REFERENCE.md: space is U+0120, \n is U+010A; the 68 others in order. */
    static const struct {
        unsigned byte;
        uint32_t cp;
    } known[] = {
        {0x00, 0x100}, {0x0A, 0x10A}, {0x20, 0x120}, {0x21, 0x21},  {0x7E, 0x7E},
        {0x7F, 0x121}, {0x80, 0x122}, {0xA0, 0x142}, {0xA1, 0xA1},  {0xAC, 0xAC},
        {0xAD, 0x143}, {0xAE, 0xAE},  {0xFF, 0xFF},  {0x41, 0x41},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        cr_assert_eq(simdbpe__bytelevel_cp((uint8_t)known[i].byte), known[i].cp,
                     "byte 0x%02X", known[i].byte);
        cr_assert_eq(simdbpe__bytelevel_byte(known[i].cp), (int)known[i].byte);
    }
}

Test(bytelevel, is_a_bijection_matching_the_definition)
{
    uint8_t used[0x144] = {0};
    for (unsigned b = 0; b < 256; b++) {
        uint32_t cp = simdbpe__bytelevel_cp((uint8_t)b);
        cr_assert_eq(cp, tm_byte_cp(b), "byte 0x%02X", b);
        cr_assert_lt(cp, 0x144u);
        cr_assert_eq(used[cp], 0, "two bytes map to U+%04X", cp);
        used[cp] = 1;
        cr_assert_eq(simdbpe__bytelevel_byte(cp), (int)b);
    }
}

Test(bytelevel, code_points_outside_the_alphabet)
{
    static const uint32_t outside[] = {0x00, 0x20, 0x7F, 0x80, 0xA0, 0xAD, 0x144, 0x4E2D, 0x10FFFF};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        cr_assert_eq(simdbpe__bytelevel_byte(outside[i]), -1, "U+%04X", outside[i]);
}

/* REFERENCE.md: sorting the 256 byte symbols by code point gives GPT-2's id
 * order 0-255; checked against vocab.json read here. */
Test(bytelevel, gpt2_byte_ids_follow_code_point_order)
{
    size_t len;
    char *text = tu_read(TU_GPT2_DIR "/vocab.json", &len);
    json_error_t jerr;
    json_t *vocab = json_loadb(text, len, 0, &jerr);
    cr_assert(vocab, "vocab.json: %s", jerr.text);
    simdbpe_model *m = tu_gpt2();
    for (unsigned b = 0; b < 256; b++) {
        uint32_t rank = 0;
        for (unsigned c = 0; c < 256; c++)
            rank += tm_byte_cp(c) < tm_byte_cp(b);
        char key[8];
        uint8_t byte = (uint8_t)b;
        tm_spell(key, &byte, 1, 0);
        json_t *id = json_object_get(vocab, key);
        cr_assert(json_is_integer(id), "byte 0x%02X not in vocab.json", b);
        cr_assert_eq(json_integer_value(id), rank, "byte 0x%02X", b);
        const uint8_t *tb;
        size_t tl;
        cr_assert_eq(simdbpe_model_token_bytes(m, rank, &tb, &tl), SIMDBPE_OK);
        cr_assert(tl == 1 && tb[0] == b, "token %u should be byte 0x%02X", rank, b);
    }
    simdbpe_model_free(m);
    json_decref(vocab);
    free(text);
}

/* ------------------------------------------------------------ GPT-2 */

Test(gpt2, shape)
{
    simdbpe_model *m = tu_gpt2();
    cr_assert_eq(simdbpe_model_vocab_size(m), 50257);
    cr_assert_eq(simdbpe_model_whole_token_exact(m), 1);
    cr_assert_eq(simdbpe_model_special_count(m), 1);
    uint32_t id;
    const char *text;
    size_t len;
    cr_assert_eq(simdbpe_model_special_at(m, 0, &id, &text, &len), SIMDBPE_OK);
    cr_assert_eq(id, 50256);
    cr_assert(len == 13 && memcmp(text, "<|endoftext|>", 13) == 0);
    cr_assert_eq(simdbpe_model_special_at(m, 1, &id, &text, &len), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endoftext|>", 13, &id), SIMDBPE_OK);
    cr_assert_eq(id, 50256);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endoftext|", 12, &id), SIMDBPE_ERR_INVALID_ARG);
    const uint8_t *b;
    cr_assert_eq(simdbpe_model_token_bytes(m, 50257, &b, &len), SIMDBPE_ERR_TOKEN_ID);
    cr_assert_eq(simdbpe_model_token_bytes(m, UINT32_MAX, &b, &len), SIMDBPE_ERR_TOKEN_ID);
    cr_assert_eq(simdbpe_model_token_bytes(m, 50256, &b, &len), SIMDBPE_OK);
    cr_assert(len == 13 && memcmp(b, "<|endoftext|>", 13) == 0);
    simdbpe_model_free(m);
}

/* Decodes a byte-level string with the test's own alphabet; -1 if a code
 * point is outside it. */
static long unspell(const char *s, uint8_t *out)
{
    uint8_t inverse[0x144];
    memset(inverse, 0, sizeof inverse);
    int has[0x144] = {0};
    for (unsigned b = 0; b < 256; b++) {
        inverse[tm_byte_cp(b)] = (uint8_t)b;
        has[tm_byte_cp(b)] = 1;
    }
    long n = 0;
    for (const uint8_t *p = (const uint8_t *)s; *p;) {
        uint32_t cp;
        if (*p < 0x80)
            cp = *p++;
        else if ((*p & 0xE0) == 0xC0 && p[1]) {
            cp = (uint32_t)(*p & 0x1F) << 6 | (p[1] & 0x3F);
            p += 2;
        } else
            return -1;
        if (cp >= 0x144 || !has[cp])
            return -1;
        out[n++] = inverse[cp];
    }
    return n;
}

Test(gpt2, every_token_has_its_vocab_json_bytes)
{
    size_t len;
    char *text = tu_read(TU_GPT2_DIR "/vocab.json", &len);
    json_error_t jerr;
    json_t *vocab = json_loadb(text, len, 0, &jerr);
    cr_assert(vocab, "vocab.json: %s", jerr.text);
    cr_assert_eq(json_object_size(vocab), 50257);
    simdbpe_model *m = tu_gpt2();
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val)
    {
        uint32_t id = (uint32_t)json_integer_value(val);
        uint8_t want[256];
        long n = id == 50256 ? -1 : unspell(key, want);
        const uint8_t *got;
        size_t got_len;
        cr_assert_eq(simdbpe_model_token_bytes(m, id, &got, &got_len), SIMDBPE_OK, "id %u", id);
        if (id == 50256)
            continue;
        cr_assert_geq(n, 1, "key %s of id %u is not byte-level", key, id);
        cr_assert(got_len == (size_t)n && memcmp(got, want, got_len) == 0, "token %u (%s)", id,
                  key);
    }
    simdbpe_model_free(m);
    json_decref(vocab);
    free(text);
}

/* REFERENCE.md: merge i (0-based line of merges.txt after the header)
 * makes token 256 + i from (left id, right id). */
Test(gpt2, merge_table_matches_merges_txt)
{
    size_t len, vlen;
    char *merges = tu_read(TU_GPT2_DIR "/merges.txt", &len);
    char *vtext = tu_read(TU_GPT2_DIR "/vocab.json", &vlen);
    json_error_t jerr;
    json_t *vocab = json_loadb(vtext, vlen, 0, &jerr);
    cr_assert(vocab);
    simdbpe_model *m = tu_gpt2();
    cr_assert_eq(m->n_merges, 50000);
    char *save = NULL;
    char *line = strtok_r(merges, "\n", &save);
    cr_assert(strncmp(line, "#version", 8) == 0);
    uint32_t rank = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *sp = strchr(line, ' ');
        cr_assert(sp, "merges.txt line %u", rank + 2);
        *sp = '\0';
        json_t *l = json_object_get(vocab, line), *r = json_object_get(vocab, sp + 1);
        cr_assert(l && r, "merge %u names unknown tokens", rank);
        const simdbpe__merge_slot *s = simdbpe__merge_find(m, (uint32_t)json_integer_value(l),
                                                          (uint32_t)json_integer_value(r));
        cr_assert_not_null(s, "merge %u (%s %s) missing", rank, line, sp + 1);
        cr_assert_eq(s->rank, rank);
        cr_assert_eq(s->id, 256 + rank);
        rank++;
    }
    cr_assert_eq(rank, 50000);
    cr_assert_null(simdbpe__merge_find(m, 50256, 50256));
    simdbpe_model_free(m);
    json_decref(vocab);
    free(vtext);
    free(merges);
}

Test(gpt2, open_by_name_and_by_directory_agree)
{
    simdbpe_model *a = NULL, *b = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open("gpt2", &a, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_open(TU_GPT2_DIR, &b, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(a), simdbpe_model_vocab_size(b));
    for (uint32_t id = 0; id < simdbpe_model_vocab_size(a); id++) {
        const uint8_t *x, *y;
        size_t xl, yl;
        cr_assert_eq(simdbpe_model_token_bytes(a, id, &x, &xl), SIMDBPE_OK);
        cr_assert_eq(simdbpe_model_token_bytes(b, id, &y, &yl), SIMDBPE_OK);
        cr_assert(xl == yl && memcmp(x, y, xl) == 0, "token %u differs", id);
    }
    cr_assert_eq(simdbpe_model_special_count(b), 1);
    cr_assert_eq(simdbpe_model_whole_token_exact(b), 1);
    simdbpe_model_free(a);
    simdbpe_model_free(b);
}

/* A byte order mark before vocab.json's object is read past (RFC 8259
 * lets a parser ignore it): GPT-2's files with one load as without. */
Test(model, a_byte_order_mark_before_vocab_json_is_read_past)
{
    size_t vlen, mlen;
    char *v = tu_read(TU_GPT2_DIR "/vocab.json", &vlen);
    char *mg = tu_read(TU_GPT2_DIR "/merges.txt", &mlen);
    char *bom = malloc(vlen + 3);
    cr_assert(bom);
    memcpy(bom, "\xEF\xBB\xBF", 3);
    memcpy(bom + 3, v, vlen);
    simdbpe_model *a, *b;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_memory(bom, vlen + 3, mg, mlen, NULL, 0, &a, &err),
                 SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_load_memory(v, vlen, mg, mlen, NULL, 0, &b, &err), SIMDBPE_OK);
    cr_assert_eq(simdbpe_model_compiled_size(a), simdbpe_model_compiled_size(b));
    cr_assert_eq(simdbpe_model_vocab_size(a), 50257);
    simdbpe_model_free(a);
    simdbpe_model_free(b);
    free(bom);
    free(v);
    free(mg);
}

Test(model, free_null_is_a_no_op)
{
    simdbpe_model_free(NULL);
    simdbpe_encoder_free(NULL);
}

/* The families are listed in the order of their values in model files
 * (family.c): a model reports its family's name, and a compiled model
 * stores the value, so the order may only grow at the end. */
Test(model, pretokenizer_names_in_the_order_of_their_stored_values)
{
    static const char *const want[] = {"gpt2",        "cl100k", "qwen2", "o200k",
                                       "deepseek_v3", "tekken", "kimi"};
    const size_t n_want = sizeof want / sizeof want[0];
    size_t n = 0;
    for (const char *name; (name = simdbpe_pretokenizer_name_at(n)); n++)
        if (n < n_want)
            cr_assert_str_eq(name, want[n], "family %zu", n);
    cr_assert_geq(n, n_want);
    cr_assert_null(simdbpe_pretokenizer_name_at(n));
    static const struct {
        const char *model, *family;
    } models[] = {{"gpt2", "gpt2"}, {"cl100k_base", "cl100k"}, {"o200k_base", "o200k"}};
    for (size_t i = 0; i < 3; i++) {
        simdbpe_model *m;
        cr_assert_eq(simdbpe_model_open(models[i].model, &m, NULL), SIMDBPE_OK);
        cr_assert_str_eq(simdbpe_model_pretokenizer(m), models[i].family);
        simdbpe_model_free(m);
    }
}

/* -------------------------------------------- hand-made, RoBERTa-style */

/* Byte b gets id 2000 - b (so ids are neither dense from 0 nor 256 +
 * rank); merges (rank order) a+b, ab+c, b+c, x+y, y+z, x+yz. */
static const char *const hand_merges[][2] = {{"a", "b"}, {"ab", "c"}, {"b", "c"},
                                             {"x", "y"}, {"y", "z"}, {"x", "yz"}};
static const char *const hand_tokens[] = {"ab", "abc", "bc", "xy", "yz", "xyz"};
static const uint32_t hand_ids[] = {7, 3, 11, 40, 41, 5}; /* deliberately unordered */

static simdbpe_model *hand_model(const char *specials, int with_eot)
{
    uint32_t byte_ids[256];
    for (unsigned b = 0; b < 256; b++)
        byte_ids[b] = 2000 - b;
    tm_buf vocab = {0}, merges = {0};
    tm_vocab_begin(&vocab, byte_ids, -1);
    for (size_t i = 0; i < 6; i++)
        tm_vocab_token(&vocab, hand_tokens[i], hand_ids[i]);
    if (with_eot)
        tm_vocab_token(&vocab, "<|endoftext|>", 12);
    tm_vocab_token(&vocab, "<s>", 0);
    tm_vocab_end(&vocab);
    tm_add(&merges, "#version: 0.2\n", 14);
    for (size_t i = 0; i < 6; i++)
        tm_merge(&merges, hand_merges[i][0], hand_merges[i][1]);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = tu_load(vocab.s, merges.s, specials, &m, &err);
    cr_assert_eq(st, SIMDBPE_OK, "hand model: %s", err.message);
    free(vocab.s);
    free(merges.s);
    return m;
}

#define B(c) (2000u - (uint8_t)(c))

Test(roberta, hand_model_ids_derived_from_the_rules)
{
    simdbpe_model *m = hand_model("<s>\n", 0);
    cr_assert_eq(simdbpe_model_vocab_size(m), 2001);
    /* "xyz": x y outranks y z, so x+y merges first and "xy z" has no rule:
     * the token xyz is never produced from its own bytes. */
    cr_assert_eq(simdbpe_model_whole_token_exact(m), 0);
    simdbpe_encoder *e = tu_encoder(m);
    static const struct {
        const char *text;
        uint32_t ids[8];
        size_t n;
    } cases[] = {
        {"abc", {3}, 1},             /* a+b (0), then ab+c (1) */
        {"ab", {7}, 1},              /* a+b */
        {"bc", {11}, 1},             /* b+c */
        {"bcab", {11, 7}, 2},        /* a+b (0) first, then b+c (2); "bc ab" has no rule */
        {"cab", {B('c'), 7}, 2},     /* c+a has no rule */
        {"abcabc", {3, 3}, 2},       /* both a+b, then both ab+c */
        {"xyz", {40, B('z')}, 2},    /* not the token xyz (id 5) */
        {"yz", {41}, 1},             /* y+z */
        {"xyzz", {40, B('z'), B('z')}, 3},
        {"q", {B('q')}, 1},
        {" ab", {B(' '), 7}, 2},     /* one pre-token " ab"; no rule joins the space */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        tu_expect_ids(e, cases[i].text, strlen(cases[i].text), NULL, cases[i].ids, cases[i].n,
                      "hand model");
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}

Test(roberta, merge_table_keeps_ids_and_ranks_apart)
{
    simdbpe_model *m = hand_model(NULL, 0);
    for (size_t r = 0; r < 6; r++) {
        uint32_t l = strlen(hand_merges[r][0]) == 1 ? B(hand_merges[r][0][0]) : 0;
        uint32_t rt = strlen(hand_merges[r][1]) == 1 ? B(hand_merges[r][1][0]) : 0;
        if (strcmp(hand_merges[r][0], "ab") == 0)
            l = 7;
        if (strcmp(hand_merges[r][1], "yz") == 0)
            rt = 41;
        const simdbpe__merge_slot *s = simdbpe__merge_find(m, l, rt);
        cr_assert_not_null(s, "merge %zu", r);
        cr_assert_eq(s->rank, r);
        cr_assert_eq(s->id, hand_ids[r]);
    }
    simdbpe_model_free(m);
}

Test(roberta, specials_default_and_listed)
{
    /* No list: "<|endoftext|>" is the special token when vocab.json has it. */
    simdbpe_model *m = hand_model(NULL, 1);
    uint32_t id;
    cr_assert_eq(simdbpe_model_special_count(m), 1);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endoftext|>", 13, &id), SIMDBPE_OK);
    cr_assert_eq(id, 12);
    simdbpe_model_free(m);
    /* No list and no such token: no specials. */
    m = hand_model(NULL, 0);
    cr_assert_eq(simdbpe_model_special_count(m), 0);
    simdbpe_model_free(m);
    /* A list replaces the default; blank lines and CRLF are allowed. */
    m = hand_model("<s>\r\n\n<|endoftext|>\n", 1);
    cr_assert_eq(simdbpe_model_special_count(m), 2);
    cr_assert_eq(simdbpe_model_special_id(m, "<s>", 3, &id), SIMDBPE_OK);
    cr_assert_eq(id, 0);
    cr_assert_eq(simdbpe_model_special_id(m, "<|endoftext|>", 13, &id), SIMDBPE_OK);
    cr_assert_eq(id, 12);
    simdbpe_model_free(m);
}

Test(roberta, golden_small_model_directory)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(TU_GOLDEN_DIR "/small_model", &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    /* Read the expectations from the files themselves. */
    size_t len;
    char *text = tu_read(TU_GOLDEN_DIR "/small_model/vocab.json", &len);
    json_error_t jerr;
    json_t *vocab = json_loadb(text, len, 0, &jerr);
    cr_assert(vocab);
    json_int_t max_id = 0;
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val)
    {
        if (json_integer_value(val) > max_id)
            max_id = json_integer_value(val);
    }
    cr_assert_eq(simdbpe_model_vocab_size(m), (uint32_t)max_id + 1);
    cr_assert_eq(simdbpe_model_special_count(m), 5);
    cr_assert_eq(simdbpe_model_whole_token_exact(m), 0, "xyz is unreachable in this model");
    /* Exactly one id below max is unused (the generator's gap). */
    size_t unused = 0;
    for (uint32_t id = 0; id <= (uint32_t)max_id; id++) {
        const uint8_t *b;
        size_t bl;
        unused += simdbpe_model_token_bytes(m, id, &b, &bl) == SIMDBPE_ERR_TOKEN_ID;
    }
    cr_assert_eq(unused, 1);
    cr_assert_eq(json_object_size(vocab), (size_t)max_id);
    json_decref(vocab);
    free(text);
    simdbpe_model_free(m);
}

/* ------------------------------------------------------------ errors */

/* A full byte alphabet vocab.json (ids = bytes) plus `extra` entries
 * (already JSON, starting with a comma, or ""). */
static char *vocab_with(const char *extra, int skip_byte)
{
    tm_buf b = {0};
    tm_vocab_begin(&b, NULL, skip_byte);
    tm_add(&b, extra, strlen(extra));
    tm_vocab_end(&b);
    return b.s;
}

/* Loads and expects failure with `status`; checks that *out stays NULL and
 * that the message contains every string in `needles` (NULL-terminated). */
static void expect_load_error(const char *vocab, const char *merges, const char *specials,
                              simdbpe_status status, uint64_t line, const char *const *needles)
{
    simdbpe_model *m = (simdbpe_model *)1;
    simdbpe_error err;
    simdbpe_status st = tu_load(vocab, merges, specials, &m, &err);
    cr_assert_eq(st, status, "got %s (%s), want %s", simdbpe_status_name(st), err.message,
                 simdbpe_status_name(status));
    cr_assert_null(m, "nothing may be half-loaded");
    cr_assert_eq(err.status, status);
    if (line)
        cr_assert_eq(err.line, line, "err.line %llu, want %llu (%s)",
                     (unsigned long long)err.line, (unsigned long long)line, err.message);
    for (size_t i = 0; needles[i]; i++)
        cr_assert(strstr(err.message, needles[i]), "message \"%s\" lacks \"%s\"", err.message,
                  needles[i]);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(vocab_errors, bad_json_names_the_line)
{
    expect_load_error("{\"a\": 1,\n\"b\" 2}", "", NULL, SIMDBPE_ERR_VOCAB, 2,
                      NEEDLES("vocab.json", "line 2"));
    expect_load_error("", "", NULL, SIMDBPE_ERR_VOCAB, 0, NEEDLES("vocab.json"));
    expect_load_error("{\"a\": 1, \"a\": 2}", "", NULL, SIMDBPE_ERR_VOCAB, 1,
                      NEEDLES("vocab.json", "line 1"));
}

Test(vocab_errors, not_an_object_or_empty)
{
    expect_load_error("[1, 2]", "", NULL, SIMDBPE_ERR_VOCAB, 0, NEEDLES("vocab.json", "object"));
    expect_load_error("{}", "", NULL, SIMDBPE_ERR_VOCAB, 0, NEEDLES("vocab.json", "no tokens"));
}

Test(vocab_errors, ids_must_be_non_negative_integers)
{
    const char *bad[] = {",\"ab\":\"x\"", ",\"ab\":1.5", ",\"ab\":-1", ",\"ab\":null",
                         ",\"ab\":[1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *v = vocab_with(bad[i], -1);
        expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0,
                          NEEDLES("vocab.json", "\"ab\"", "not an integer"));
        free(v);
    }
}

Test(vocab_errors, duplicate_id)
{
    char *v = vocab_with(",\"ab\":97", -1);
    expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0, NEEDLES("vocab.json", "id 97"));
    free(v);
}

Test(vocab_errors, key_outside_the_byte_level_alphabet)
{
    /* U+4E2D and a raw space (bytes must be spelled, space is U+0120). */
    char *v = vocab_with(",\"a\xE4\xB8\xAD\":300", -1);
    expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0,
                      NEEDLES("vocab.json", "U+4E2D", "byte-level alphabet"));
    free(v);
    v = vocab_with(",\"a b\":300", -1);
    expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0,
                      NEEDLES("vocab.json", "U+0020", "byte-level alphabet"));
    free(v);
}

Test(vocab_errors, missing_byte_token)
{
    char *v = vocab_with("", 'A');
    expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0,
                      NEEDLES("vocab.json", "byte 0x41"));
    free(v);
    v = vocab_with("", ' ');
    expect_load_error(v, "", NULL, SIMDBPE_ERR_VOCAB, 0,
                      NEEDLES("vocab.json", "byte 0x20", "U+0120"));
    free(v);
}

Test(merges_errors, malformed_lines_name_the_line)
{
    char *v = vocab_with(",\"ab\":256,\"abc\":257", -1);
    /* Line numbers count the "#version" header line. */
    const char *bad[] = {
        "#version: 0.2\na b\nab\n",         /* one token on line 3 */
        "#version: 0.2\na b\nab c d\n",     /* three tokens */
        "#version: 0.2\na b\n\nab c\n",     /* an empty line 3 */
        "#version: 0.2\na b\nab  c\n",      /* two spaces */
        "#version: 0.2\na b\n ab\n",        /* leading space: empty left token */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_load_error(v, bad[i], NULL, SIMDBPE_ERR_MERGES, 3,
                          NEEDLES("merges.txt line 3", "two tokens"));
    /* Without a header the first merge is line 1. */
    expect_load_error(v, "ab\n", NULL, SIMDBPE_ERR_MERGES, 1, NEEDLES("merges.txt line 1"));
    free(v);
}

Test(merges_errors, unknown_tokens_name_the_line_and_token)
{
    char *v = vocab_with(",\"ab\":256,\"abc\":257", -1);
    expect_load_error(v, "#version: 0.2\na b\nbc d\n", NULL, SIMDBPE_ERR_MERGES, 3,
                      NEEDLES("merges.txt line 3", "\"bc\"", "not in vocab.json"));
    expect_load_error(v, "a b\nab d\n", NULL, SIMDBPE_ERR_MERGES, 2,
                      NEEDLES("merges.txt line 2", "merge of", "not in vocab.json"));
    expect_load_error(v, "a b\na \xE4\xB8\xAD\n", NULL, SIMDBPE_ERR_MERGES, 2,
                      NEEDLES("merges.txt line 2", "U+4E2D"));
    free(v);
}

Test(merges_errors, invalid_utf8_names_the_line_and_offset)
{
    char *v = vocab_with(",\"ab\":256,\"abc\":257", -1);
    /* A stray lead byte in a merge (it must not swallow the next byte)... */
    expect_load_error(v, "#version: 0.2\na b\nab \xC3" "c\n", NULL, SIMDBPE_ERR_MERGES, 3,
                      NEEDLES("merges.txt line 3", "invalid UTF-8 at byte offset 21"));
    /* ...and in the "#version" line, which is otherwise skipped unread. */
    expect_load_error(v, "#version: 0.2\xFF\na b\n", NULL, SIMDBPE_ERR_MERGES, 1,
                      NEEDLES("merges.txt line 1", "invalid UTF-8 at byte offset 13"));
    free(v);
}

Test(merges_errors, crlf_and_missing_final_newline_are_accepted)
{
    char *v = vocab_with(",\"ab\":256,\"abc\":257", -1);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(tu_load(v, "#version: 0.2\r\na b\r\nab c", NULL, &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    simdbpe_encoder *e = tu_encoder(m);
    uint32_t want[] = {257};
    tu_expect_ids(e, "abc", 3, NULL, want, 1, "crlf merges");
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    free(v);
}

Test(specials_errors, listed_special_must_be_in_vocab)
{
    char *v = vocab_with(",\"<s>\":256", -1);
    expect_load_error(v, "", "<s>\n<mask>\n", SIMDBPE_ERR_SPECIALS, 0,
                      NEEDLES("\"<mask>\"", "not in vocab.json"));
    free(v);
}

Test(specials, listed_specials_may_use_any_text)
{
    /* A special's key need not be in the byte-level alphabet. */
    char *v = vocab_with(",\"<|\xE4\xB8\xAD|>\":256", -1);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(tu_load(v, "", "<|\xE4\xB8\xAD|>\n", &m, &err), SIMDBPE_OK, "%s", err.message);
    uint32_t id;
    cr_assert_eq(simdbpe_model_special_id(m, "<|\xE4\xB8\xAD|>", 7, &id), SIMDBPE_OK);
    cr_assert_eq(id, 256);
    const uint8_t *b;
    size_t len;
    cr_assert_eq(simdbpe_model_token_bytes(m, 256, &b, &len), SIMDBPE_OK);
    cr_assert(len == 7 && memcmp(b, "<|\xE4\xB8\xAD|>", 7) == 0);
    simdbpe_model_free(m);
    free(v);
}

Test(load, null_arguments)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_memory(NULL, 0, "", 0, NULL, 0, &m, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_model_open(NULL, &m, &err), SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_model_open("gpt2", NULL, &err), SIMDBPE_ERR_INVALID_ARG);
    /* err may be NULL. */
    cr_assert_eq(simdbpe_model_load_memory("{}", 2, "", 0, NULL, 0, &m, NULL), SIMDBPE_ERR_VOCAB);
    cr_assert_null(m);
}

/* ------------------------------------------------- model directories */

/* A fresh temporary directory for one test. */
static char *temp_dir(void)
{
    char *dir = strdup("/tmp/simdbpe-test-model-XXXXXX");
    cr_assert(dir && mkdtemp(dir), "mkdtemp failed");
    return dir;
}

static void write_in(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write(path, text, strlen(text));
}

static void remove_dir(const char *dir)
{
    const char *names[] = {"vocab.json", "merges.txt", "special_tokens"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

Test(model_dir, errors_name_the_file_and_line)
{
    char *dir = temp_dir();
    char *v = vocab_with(",\"ab\":256", -1);
    write_in(dir, "vocab.json", v);
    write_in(dir, "merges.txt", "#version: 0.2\na b\nab q r\n");
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_ERR_MERGES);
    char want[600];
    snprintf(want, sizeof want, "%s/merges.txt line 3", dir);
    cr_assert(strstr(err.message, want), "message \"%s\" lacks \"%s\"", err.message, want);
    cr_assert_eq(err.line, 3);

    write_in(dir, "vocab.json", "{\"a\": 0,\n\n \"b\": }");
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_ERR_VOCAB);
    snprintf(want, sizeof want, "%s/vocab.json line 3", dir);
    cr_assert(strstr(err.message, want), "message \"%s\" lacks \"%s\"", err.message, want);

    write_in(dir, "vocab.json", v);
    write_in(dir, "merges.txt", "a b\n");
    write_in(dir, "special_tokens", "<nope>\n");
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_ERR_SPECIALS);
    snprintf(want, sizeof want, "%s/special_tokens", dir);
    cr_assert(strstr(err.message, want), "message \"%s\" lacks \"%s\"", err.message, want);
    cr_assert(strstr(err.message, "<nope>"), "%s", err.message);
    cr_assert_null(m);
    free(v);
    remove_dir(dir);
    free(dir);
}

Test(model_dir, missing_files)
{
    char *dir = temp_dir();
    simdbpe_model *m = NULL;
    simdbpe_error err;
    char want[600];
    /* An empty directory: vocab.json is missing. */
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_ERR_IO);
    snprintf(want, sizeof want, "%s/vocab.json", dir);
    cr_assert(strstr(err.message, want), "message \"%s\" lacks \"%s\"", err.message, want);
    char *v = vocab_with("", -1);
    write_in(dir, "vocab.json", v);
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_ERR_IO);
    snprintf(want, sizeof want, "%s/merges.txt", dir);
    cr_assert(strstr(err.message, want), "message \"%s\" lacks \"%s\"", err.message, want);
    /* special_tokens is optional. */
    write_in(dir, "merges.txt", "#version: 0.2\n");
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(m), 256);
    cr_assert_eq(simdbpe_model_whole_token_exact(m), 1);
    simdbpe_model_free(m);
    /* Not a directory, not "gpt2". */
    cr_assert_eq(simdbpe_model_open("/nonexistent/simdbpe-model", &m, &err), SIMDBPE_ERR_IO);
    cr_assert(strstr(err.message, "/nonexistent/simdbpe-model"), "%s", err.message);
    cr_assert_null(m);
    free(v);
    remove_dir(dir);
    free(dir);
}

/* ------------------------------------------------------- piece words */

/* simdbpe__short_words reads a piece of up to 16 bytes as two zero-padded
 * little-endian words with overlapping loads. Each length is placed flush
 * against the end of its own allocation (and at its start) so that a read
 * outside the piece is caught under ASan; the expected words are built
 * byte by byte. */
Test(piece_words, every_length_without_reading_outside)
{
    uint8_t none = 0xAB;
    uint64_t lo = ~0ULL, hi = ~0ULL;
    simdbpe__short_words(&none, 0, &lo, &hi);
    cr_assert(lo == 0 && hi == 0, "len 0");
    uint32_t seed = 12345;
    for (size_t len = 1; len <= 16; len++) {
        for (int round = 0; round < 50; round++) {
            uint8_t bytes[16];
            for (size_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                bytes[i] = (uint8_t)(seed >> 16);
            }
            uint8_t *buf = malloc(len);
            cr_assert_not_null(buf);
            memcpy(buf, bytes, len);
            uint64_t want_lo = 0, want_hi = 0;
            for (size_t i = 0; i < len; i++) {
                if (i < 8)
                    want_lo |= (uint64_t)buf[i] << (8 * i);
                else
                    want_hi |= (uint64_t)buf[i] << (8 * (i - 8));
            }
            lo = hi = ~0ULL;
            simdbpe__short_words(buf, len, &lo, &hi);
            cr_assert_eq(lo, want_lo, "len %zu: lo %016llx, want %016llx", len,
                         (unsigned long long)lo, (unsigned long long)want_lo);
            cr_assert_eq(hi, want_hi, "len %zu: hi %016llx, want %016llx", len,
                         (unsigned long long)hi, (unsigned long long)want_hi);
            free(buf);
        }
    }
}
