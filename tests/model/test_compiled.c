/*
 * test_compiled.c - compiled models (.sbpe): round trips and damage.
 *
 *   - the embedded GPT-2 model, the same model loaded from vocab.json +
 *     merges.txt, and a copy saved and mapped back give byte-identical
 *     images and identical ids on text that exercises every path;
 *   - a small model (built here from a hand-written vocabulary, so its
 *     image is small) truncated at every length and with every byte
 *     flipped is refused with SIMDBPE_ERR_MODEL_FILE, never a crash;
 *   - with the checksum recomputed (a deliberately forged file), damaged
 *     tables are refused or, if every entry is still in range, give ids
 *     inside the vocabulary - never an out-of-bounds read (run this under
 *     the sanitizer build to see it).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "model/model.h"
#include "simdbpe.h"

static void *image_of(const simdbpe_model *m, size_t *len)
{
    *len = simdbpe_model_compiled_size(m);
    void *buf = malloc(*len);
    size_t got;
    cr_assert_eq(simdbpe_model_compile(m, buf, *len, &got, NULL), SIMDBPE_OK);
    cr_assert_eq(got, *len);
    return buf;
}

/* Writes the XXH3-64 checksum of img[32..len) at offset 24, so that a
 * change reaches the checks behind the checksum. */
static void forge_checksum(uint8_t *img, size_t len)
{
    uint64_t sum = XXH3_64bits(img + 32, len - 32);
    for (int i = 0; i < 8; i++)
        img[24 + i] = (uint8_t)(sum >> (8 * i));
}

/* Opening img must fail with SIMDBPE_ERR_MODEL_FILE and this message. */
static void expect_refused(const uint8_t *img, size_t len, const char *message)
{
    simdbpe_model *back = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, &err), SIMDBPE_ERR_MODEL_FILE);
    cr_assert_null(back);
    cr_assert_str_eq(err.message, message);
}

static const char sample[] =
    "Hello world, it's 2024! Don't they'RE   spaces\n\n\tand tabs \xC2\xA0nbsp "
    "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80\xF0\x9F\x98\x80 1234567890 "
    "<|endoftext|> supercalifragilisticexpialidocious_and_more_letters_than_a_cache_key";

static void same_ids(simdbpe_model *a, simdbpe_model *b)
{
    simdbpe_encoder *ea, *eb;
    cr_assert_eq(simdbpe_encoder_new(a, &ea, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_encoder_new(b, &eb, NULL), SIMDBPE_OK);
    const uint32_t *ia, *ib;
    size_t na, nb;
    cr_assert_eq(simdbpe_encode(ea, sample, sizeof sample - 1, NULL, &ia, &na, NULL), SIMDBPE_OK);
    cr_assert_eq(simdbpe_encode(eb, sample, sizeof sample - 1, NULL, &ib, &nb, NULL), SIMDBPE_OK);
    cr_assert_eq(na, nb);
    cr_assert(memcmp(ia, ib, na * sizeof *ia) == 0);
    simdbpe_encoder_free(ea);
    simdbpe_encoder_free(eb);
}

Test(compiled, embedded_equals_text_files_and_survives_a_file)
{
    simdbpe_model *emb, *txt, *file;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_gpt2(&emb, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_open(SIMDBPE_SOURCE_DIR "/src/model/gpt2", &txt, &err),
                 SIMDBPE_OK, "%s", err.message);
    size_t le, lt;
    void *ie = image_of(emb, &le), *it = image_of(txt, &lt);
    cr_assert_eq(le, lt);
    cr_assert(memcmp(ie, it, le) == 0, "the embedded image is what the loader builds");
    cr_assert_eq(simdbpe_model_whole_token_exact(emb), 1);
    cr_assert_eq(simdbpe_model_vocab_size(emb), 50257);

    char path[] = "/tmp/simdbpe_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char sbpe[64];
    snprintf(sbpe, sizeof sbpe, "%s.sbpe", path);
    cr_assert_eq(simdbpe_model_save(txt, sbpe, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_open(sbpe, &file, &err), SIMDBPE_OK, "%s", err.message);
    same_ids(emb, file);
    same_ids(txt, file);
    for (uint32_t id = 0; id < 50257; id++) {
        const uint8_t *a, *b;
        size_t na, nb;
        cr_assert_eq(simdbpe_model_token_bytes(emb, id, &a, &na), SIMDBPE_OK);
        cr_assert_eq(simdbpe_model_token_bytes(file, id, &b, &nb), SIMDBPE_OK);
        cr_assert(na == nb && memcmp(a, b, na) == 0, "token %u", id);
    }
    uint32_t eot;
    cr_assert_eq(simdbpe_model_special_id(file, "<|endoftext|>", 13, &eot), SIMDBPE_OK);
    cr_assert_eq(eot, 50256);
    /* A file that starts with the magic is recognised without the suffix. */
    cr_assert_eq(rename(sbpe, path), 0);
    simdbpe_model *again;
    cr_assert_eq(simdbpe_model_open(path, &again, &err), SIMDBPE_OK, "%s", err.message);
    same_ids(emb, again);
    unlink(path);
    simdbpe_model_free(again);
    simdbpe_model_free(file);
    simdbpe_model_free(txt);
    simdbpe_model_free(emb);
    free(ie);
    free(it);
}

/* The embedded image is opened trusted (no checksum, no per-entry checks)
 * and with the joins written beside it (no pass over the rules): its bytes,
 * checksum included, must be what the loader writes for the text files,
 * must pass every check when opened as an untrusted image, and its joins
 * must be the ones that opening builds from the rules. */
Test(compiled, embedded_image_and_joins_pass_the_untrusted_checks)
{
    simdbpe_model *txt, *back;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(SIMDBPE_SOURCE_DIR "/src/model/gpt2", &txt, &err),
                 SIMDBPE_OK, "%s", err.message);
    size_t lt;
    void *it = image_of(txt, &lt);
    cr_assert_eq(simdbpe__gpt2_image_len, lt);
    cr_assert(memcmp(simdbpe__gpt2_image, it, lt) == 0,
              "the embedded bytes are what the loader writes");
    cr_assert_eq(simdbpe_model_load_compiled(simdbpe__gpt2_image, simdbpe__gpt2_image_len,
                                             &back, &err),
                 SIMDBPE_OK, "%s", err.message);
    same_ids(txt, back);
    simdbpe_model *emb;
    cr_assert_eq(simdbpe_model_load_gpt2(&emb, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(emb->joins, simdbpe__gpt2_joins);
    cr_assert(memcmp(simdbpe__gpt2_joins, back->joins, sizeof simdbpe__gpt2_joins) == 0,
              "the embedded joins are those of the rules");
    cr_assert(memcmp(txt->joins, back->joins, sizeof simdbpe__gpt2_joins) == 0,
              "the loader's model kept the joins it built");
    simdbpe_model_free(emb);
    simdbpe_model_free(back);
    simdbpe_model_free(txt);
    free(it);
}

Test(compiled, buffer_too_small_reports_the_size)
{
    simdbpe_model *m;
    cr_assert_eq(simdbpe_model_load_gpt2(&m, NULL), SIMDBPE_OK);
    char small[16];
    size_t need = 0;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_compile(m, small, sizeof small, &need, &err),
                 SIMDBPE_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(need, simdbpe_model_compiled_size(m));
    simdbpe_model_free(m);
}

Test(compiled, missing_or_non_model_files_are_errors)
{
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_file("/nonexistent/x.sbpe", &m, &err), SIMDBPE_ERR_IO);
    cr_assert(strstr(err.message, "/nonexistent/x.sbpe"), "names the file: %s", err.message);
    cr_assert_eq(simdbpe_model_load_file(SIMDBPE_SOURCE_DIR "/src/model/gpt2/merges.txt", &m,
                                         &err),
                 SIMDBPE_ERR_MODEL_FILE);
    cr_assert(strstr(err.message, "magic"), "%s", err.message);
}

/* ---- a small model, to damage at every byte ---- */

/* vocab.json with the 256 byte symbols, a few merges and <|endoftext|>. */
static simdbpe_model *small_model(void)
{
    static const char *const merges[] = {"h e", "l l", "he ll", "Ġ w", "o r", "Ġw or", "l d",
                                         "Ġwor ld", "Ġ t", "Ġt he"};
    char vocab[16384], mtxt[1024];
    size_t v = 0, mt = 0;
    v += (size_t)snprintf(vocab + v, sizeof vocab - v, "{");
    for (int b = 0; b < 256; b++) {
        uint32_t cp = simdbpe__bytelevel_cp((uint8_t)b);
        char u[8];
        if (cp == '"' || cp == '\\')
            snprintf(u, sizeof u, "\\%c", (char)cp);
        else if (cp < 0x80)
            snprintf(u, sizeof u, "%c", (char)cp);
        else
            snprintf(u, sizeof u, "%c%c", (char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 0x3F)));
        v += (size_t)snprintf(vocab + v, sizeof vocab - v, "\"%s\": %d, ", u, b);
    }
    static const char *const made[] = {"he", "ll", "hell", "Ġw", "or", "Ġwor", "ld", "Ġworld",
                                       "Ġt", "Ġthe"};
    for (int i = 0; i < 10; i++)
        v += (size_t)snprintf(vocab + v, sizeof vocab - v, "\"%s\": %d, ", made[i], 256 + i);
    v += (size_t)snprintf(vocab + v, sizeof vocab - v, "\"<|endoftext|>\": 266}");
    mt += (size_t)snprintf(mtxt + mt, sizeof mtxt - mt, "#version: 0.2\n");
    for (int i = 0; i < 10; i++)
        mt += (size_t)snprintf(mtxt + mt, sizeof mtxt - mt, "%s\n", merges[i]);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_memory(vocab, v, mtxt, mt, NULL, 0, &m, &err), SIMDBPE_OK,
                 "%s", err.message);
    return m;
}

/* Opening must fail cleanly, or succeed with a model that encodes inside
 * its vocabulary, and decodes what it encodes. */
static void open_damaged(const uint8_t *img, size_t len, int must_fail, const char *what,
                         size_t at)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_compiled(img, len, &m, &err);
    if (must_fail || st != SIMDBPE_OK) {
        cr_assert_eq(st, SIMDBPE_ERR_MODEL_FILE, "%s at %zu: status %s", what, at,
                     simdbpe_status_name(st));
        cr_assert_null(m);
        cr_assert(err.message[0]);
        return;
    }
    simdbpe_encoder *e;
    cr_assert_eq(simdbpe_encoder_new(m, &e, NULL), SIMDBPE_OK);
    const uint32_t *ids;
    size_t n;
    static const char text[] = "hello world, the hell\xC3\xA9 world  the";
    if (simdbpe_encode(e, text, sizeof text - 1, NULL, &ids, &n, NULL) == SIMDBPE_OK) {
        for (size_t i = 0; i < n; i++)
            cr_assert_lt(ids[i], simdbpe_model_vocab_size(m), "%s at %zu", what, at);
        size_t need = 0;
        uint8_t out[4096];
        simdbpe_status d = simdbpe_decode(m, ids, n, out, sizeof out, &need, NULL);
        cr_assert(d == SIMDBPE_OK || d == SIMDBPE_ERR_BUFFER_TOO_SMALL, "%s at %zu: %s", what,
                  at, simdbpe_status_name(d));
    }
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}

Test(compiled, small_model_round_trip)
{
    simdbpe_model *m = small_model(), *back;
    size_t len;
    void *img = image_of(m, &len);
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, NULL), SIMDBPE_OK);
    same_ids(m, back);
    simdbpe_encoder *e;
    cr_assert_eq(simdbpe_encoder_new(back, &e, NULL), SIMDBPE_OK);
    const uint32_t *ids;
    size_t n;
    cr_assert_eq(simdbpe_encode(e, "hello world the", 15, NULL, &ids, &n, NULL), SIMDBPE_OK);
    /* "hell" "o" " world" " the" by the merges above */
    uint32_t want[] = {258, 'o', 263, 265};
    cr_assert_eq(n, 4);
    cr_assert(memcmp(ids, want, sizeof want) == 0);
    simdbpe_encoder_free(e);
    simdbpe_model_free(back);
    simdbpe_model_free(m);
    free(img);
}

Test(compiled, every_truncation_is_an_error)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    for (size_t cut = 0; cut < len; cut++)
        open_damaged(img, cut, 1, "truncated", cut);
    simdbpe_model_free(m);
    free(img);
}

Test(compiled, a_file_longer_or_shorter_than_its_header_says_is_named_so)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    uint8_t *longer = calloc(len + 16, 1);
    cr_assert(longer);
    memcpy(longer, img, len);
    char want[200];
    snprintf(want, sizeof want,
             "compiled model: header says %zu bytes, file has %zu (16 bytes of something else "
             "after the model)",
             len, len + 16);
    expect_refused(longer, len + 16, want);
    snprintf(want, sizeof want, "compiled model: header says %zu bytes, file has %zu (truncated)",
             len, len - 8);
    expect_refused(img, len - 8, want);
    free(longer);
    simdbpe_model_free(m);
    free(img);
}

Test(compiled, every_flipped_byte_is_an_error)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    for (size_t at = 0; at < len; at++) {
        img[at] ^= 0x41;
        open_damaged(img, len, 1, "flipped byte", at);
        img[at] ^= 0x41;
    }
    simdbpe_model_free(m);
    free(img);
}

/* A merge rule one of whose tokens has no bytes is refused by name: the
 * encoder's joins (model.h) read the last byte of a rule's left token and
 * the first of its right. Token 256 ("he", the left of rule 2 "he ll") is
 * emptied by moving the start of token 257 onto it (tok_off, the first
 * section, at byte 128), and the checksum is forged so the check is
 * reached. */
Test(compiled, rule_with_an_empty_token_is_refused)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    uint8_t *off256 = img + 128 + 4 * 256, *off257 = off256 + 4;
    cr_assert(memcmp(off256, "\x00\x01\x00\x00", 4) == 0, "tok_off[256] is 256");
    cr_assert(memcmp(off257, "\x02\x01\x00\x00", 4) == 0, "tok_off[257] is 258");
    memcpy(off257, off256, 4);
    forge_checksum(img, len);
    expect_refused(img, len, "compiled model: merge rule 2 joins a token without bytes");
    simdbpe_model_free(m);
    free(img);
}

/* A file of another format version (version 1 had no pair filter) is
 * refused with a message that says what to do. */
Test(compiled, another_format_version_is_refused)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    cr_assert(memcmp(img + 8, "\x04\x00\x00\x00", 4) == 0, "this format is version 4");
    img[8] = 2;
    expect_refused(img, len,
                   "compiled model: format version 2, this library reads versions 3 to 4 "
                   "(compile the model again with this version's `simdbpe compile`)");
    simdbpe_model_free(m);
    free(img);
}

/* The pair filter is kept in the image (version 2), so an untrusted image
 * is checked to let every merge rule through: a filter that stopped one
 * would change ids. The small model's filter (two words; its place is
 * where the opened model points into its image) is zeroed and the
 * checksum forged. A filter with extra bits set still opens (it only
 * costs lookups). */
Test(compiled, a_filter_that_stops_a_merge_is_refused)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    size_t at = (size_t)((const uint8_t *)m->pair_filter - m->image);
    size_t words = (size_t)1 << (64 - m->pair_filter_shift);
    cr_assert_eq(words, 2);
    cr_assert(at + 8 * words <= len);
    for (int fill = 0; fill < 2; fill++) {
        memset(img + at, fill ? 0xFF : 0x00, 8 * words);
        forge_checksum(img, len);
        if (!fill) {
            expect_refused(img, len, "compiled model: the pair filter stops merge rule 0");
            continue;
        }
        simdbpe_model *back = NULL;
        simdbpe_error err;
        cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, &err), SIMDBPE_OK, "%s",
                     err.message);
        same_ids(m, back);
        simdbpe_model_free(back);
    }
    simdbpe_model_free(m);
    free(img);
}

/* Every byte of m's image past the checksum set to a few values, the
 * checksum forged: each opens cleanly or is refused (open_damaged). */
static void forge_every_byte(simdbpe_model *m)
{
    size_t len;
    uint8_t *img = image_of(m, &len);
    uint8_t *bad = malloc(len);
    cr_assert(bad);
    static const uint8_t values[] = {0x00, 0x01, 0x7F, 0x80, 0xFF};
    for (size_t at = 32; at < len; at++) {
        for (size_t v = 0; v < sizeof values; v++) {
            memcpy(bad, img, len);
            if (bad[at] == values[v])
                continue;
            bad[at] = values[v];
            forge_checksum(bad, len);
            open_damaged(bad, len, 0, "forged byte", at);
        }
    }
    free(bad);
    simdbpe_model_free(m);
    free(img);
}

Test(compiled, forged_checksums_never_crash)
{
    forge_every_byte(small_model());
}

/* ---- bytes 120..128: the generic family's Splits length, or a
 * SentencePiece-style model's settings and unknown token ---- */

/* tests/data/hf/sp_small.tokenizer.json: a SentencePiece-style model
 * (byte_fallback, fuse_unk, unk_token <unk> = id 0, Strip 1), whose image
 * is small. test_sentencepiece checks its ids against HF's. */
static simdbpe_model *small_sp_model(void)
{
    FILE *f = fopen(SIMDBPE_TEST_DATA_DIR "/hf/sp_small.tokenizer.json", "rb");
    cr_assert(f);
    static char json[1 << 16];
    size_t len = fread(json, 1, sizeof json, f);
    fclose(f);
    cr_assert(len > 0 && len < sizeof json);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_hf_json(json, len, &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    return m;
}

static uint32_t read32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void write32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A byte-level model of a scanner family has 0 in bytes 120..128, as format
 * 4 files have had from the start, so those files open as they did. */
Test(compiled, a_byte_level_model_leaves_bytes_120_to_128_zero)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    static const uint8_t zero[8] = {0};
    cr_assert(memcmp(img + 120, zero, 8) == 0);
    simdbpe_model_free(m);
    free(img);
}

/* The SentencePiece-style settings round-trip: flags, the Strip count in
 * the top byte, the unknown token; and every inconsistent value there, or
 * a byte-level setting beside them, is refused by name (the checksum
 * forged so that the header checks are reached). */
Test(compiled, inconsistent_sentencepiece_settings_are_refused)
{
    simdbpe_model *m = small_sp_model(), *back = NULL;
    size_t len;
    uint8_t *img = image_of(m, &len);
    uint32_t sp = read32(img + 120);
    cr_assert_eq(sp, SIMDBPE__SP_MODEL | SIMDBPE__SP_BYTE_FALLBACK | SIMDBPE__SP_FUSE_UNK |
                         SIMDBPE__SP_PREPEND | SIMDBPE__SP_REPLACE | SIMDBPE__SP_DEC_REPLACE |
                         SIMDBPE__SP_DEC_BYTES | 1u << 24,
                 "settings 0x%08X", sp);
    cr_assert_eq(read32(img + 124), 0, "<unk> is id 0");
    cr_assert_eq(img[68], SIMDBPE__PRETOK_GPT2);
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, NULL), SIMDBPE_OK);
    cr_assert_eq(back->sp, m->sp);
    cr_assert_eq(back->sp_strip, 1);
    cr_assert_eq(back->unk_id, 0);
    simdbpe_model_free(back);
    uint8_t *bad = malloc(len);
    cr_assert(bad);
    char want[200];
    struct {
        size_t at;      /* where the value goes: 120, 124, or a byte (68, 32) */
        uint32_t value; /* for a single byte its low byte */
        const char *message;
    } cases[] = {
        /* a flag this version does not know, or settings without their model bit
         * (a Strip count alone among them) */
        {120, sp | 1u << 23, "compiled model: unknown SentencePiece-style settings 0x0180"
                             "007F (made by a newer simdbpe?)"},
        {120, sp & ~SIMDBPE__SP_MODEL, "compiled model: unknown SentencePiece-style "
                                       "settings 0x0100007E (made by a newer simdbpe?)"},
        {120, 1u << 24, "compiled model: unknown SentencePiece-style settings 0x01000000 "
                        "(made by a newer simdbpe?)"},
        /* byte-level settings beside them: another family, a flag */
        {68, SIMDBPE__PRETOK_CL100K, "compiled model: a SentencePiece-style model with "
                                     "byte-level settings (family 1, flags 0x0, 0 whole "
                                     "tokens)"},
        {32, 1, "compiled model: a SentencePiece-style model with byte-level settings "
                "(family 0, flags 0x1, 0 whole tokens)"},
        /* the generic family reads byte 120 as a Splits length */
        {68, SIMDBPE__PRETOK_REGEX, "compiled model: the Split pre-tokenizers do not match "
                                    "the family"},
        /* the unknown token out of range; none, without byte fallback */
        {124, 0, NULL},
        /* a byte-level model with an unknown token */
        {120, 0, NULL},
        /* without byte fallback the bytes must map to the unknown token */
        {120, sp & ~SIMDBPE__SP_BYTE_FALLBACK, "compiled model: byte 0x00 maps to a wrong "
                                                "token"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        memcpy(bad, img, len);
        if (cases[c].at == 120 || cases[c].at == 124)
            write32(bad + cases[c].at, cases[c].value);
        else
            bad[cases[c].at] = (uint8_t)cases[c].value;
        const char *message = cases[c].message;
        if (c == 6) { /* the unknown token: past the vocabulary */
            write32(bad + 124, simdbpe_model_vocab_size(m));
            snprintf(want, sizeof want,
                     "compiled model: a SentencePiece-style model's unknown token id %u is out "
                     "of range, or missing without byte fallback",
                     simdbpe_model_vocab_size(m));
            message = want;
        } else if (c == 7) { /* settings 0 (byte-level) with an unknown token */
            write32(bad + 124, 7);
            message = "compiled model: an unknown token id (7) in a byte-level BPE model";
        }
        forge_checksum(bad, len);
        expect_refused(bad, len, message);
    }
    /* No unknown token and no byte fallback. */
    memcpy(bad, img, len);
    write32(bad + 120, sp & ~SIMDBPE__SP_BYTE_FALLBACK);
    write32(bad + 124, UINT32_MAX);
    forge_checksum(bad, len);
    expect_refused(bad, len,
                   "compiled model: a SentencePiece-style model's unknown token id 4294967295 "
                   "is out of range, or missing without byte fallback");
    /* With byte fallback, no unknown token is consistent (a file without
     * unk_token): it opens. */
    write32(bad + 120, sp);
    forge_checksum(bad, len);
    cr_assert_eq(simdbpe_model_load_compiled(bad, len, &back, NULL), SIMDBPE_OK);
    cr_assert_eq(back->unk_id, SIMDBPE__NO_ID);
    simdbpe_model_free(back);
    free(bad);
    simdbpe_model_free(m);
    free(img);
}

/* A byte-level model's image with SentencePiece-style settings put in is
 * refused: its flags and whole-token map are byte-level ones. */
Test(compiled, sentencepiece_settings_in_a_byte_level_image_are_refused)
{
    simdbpe_model *m = small_model();
    size_t len;
    uint8_t *img = image_of(m, &len);
    write32(img + 120, SIMDBPE__SP_MODEL | SIMDBPE__SP_BYTE_FALLBACK);
    forge_checksum(img, len);
    simdbpe_model *back = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &back, &err), SIMDBPE_ERR_MODEL_FILE);
    cr_assert(strstr(err.message, "a SentencePiece-style model with byte-level settings"), "%s",
              err.message);
    simdbpe_model_free(m);
    free(img);
}

/* Every byte of a SentencePiece-style image changed, checksum forged:
 * refused, or a model that encodes inside its vocabulary and decodes. */
Test(compiled, forged_sentencepiece_images_never_crash)
{
    forge_every_byte(small_sp_model());
}
