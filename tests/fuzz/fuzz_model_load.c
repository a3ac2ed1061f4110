/*
 * fuzz_model_load.c - property: loading a model from any bytes returns a
 * status and never crashes, and a model that loads works.
 *
 * Input layout (so the fuzzer can reach every file):
 *
 *   [ "+" ] vocab.json bytes  NUL  merges.txt bytes  [ NUL  specials bytes ]
 *
 * Without the second NUL the specials list is NULL (the default). A leading
 * "+" builds vocab.json as "{" + the 256 GPT-2 byte symbols (ids 0-255) +
 * "," + the rest of the vocab part + "}", so that mutations spend their time
 * on merges, extra tokens and specials instead of on rediscovering the
 * byte alphabet. A failed load must say why (a status other than OK and a
 * message); a model that loads must have been given a well-formed
 * merges.txt (valid UTF-8, as HF requires: a file it cannot read as text
 * is an error, never silently reinterpreted) and must encode and decode a
 * fixed text back to itself, with specials as text and allowed; its
 * whole-token map must hold exactly the tokens BPE yields from their own
 * bytes.
 */
#include "fuzz.h"
#include "model/model.h"

/* Finding 1 (corpus/model_load/finding1_merges_not_utf8_loads): load.c
 * decoded merges.txt as if it were valid UTF-8, so "\xC3A b" loaded as
 * the merge "\xC3\x81 b". Fixed in 9a1aa3f; the check stays on. */
#ifndef FUZZ_CHECK_MERGES_UTF8
#define FUZZ_CHECK_MERGES_UTF8 1
#endif

static const char sample[] =
    "Hello, world! It's 2024 <|endoftext|> héllo   wörld\t\n\n 中文 😀 \xC2\xA0x "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 12345678901234567890";

/* GPT-2's byte-level symbol for byte b: printable bytes stand for
 * themselves, the other 68 map in order to U+0100 onwards. */
static uint32_t symbol_of(unsigned b)
{
    unsigned n = 0;
    for (unsigned c = 0; c < 256; c++) {
        int self = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
        if (c == b)
            return self ? c : 0x100 + n;
        n += !self;
    }
    return 0;
}

/* The JSON members "<symbol>": id for the 256 bytes in id order (the
 * symbols sorted by code point, as GPT-2 numbers them), each followed by
 * a comma; built once for the process. */
static const char *base_vocab(size_t *len)
{
    static char out[256 * 12];
    static size_t o;
    if (o) {
        *len = o;
        return out;
    }
    uint32_t cps[256];
    for (unsigned b = 0; b < 256; b++)
        cps[b] = symbol_of(b);
    for (int i = 1; i < 256; i++) /* insertion sort */
        for (int j = i; j > 0 && cps[j - 1] > cps[j]; j--) {
            uint32_t t = cps[j];
            cps[j] = cps[j - 1];
            cps[j - 1] = t;
        }
    for (int id = 0; id < 256; id++) {
        uint32_t cp = cps[id];
        out[o++] = '"';
        if (cp == '"' || cp == '\\')
            out[o++] = '\\';
        if (cp < 0x80) {
            out[o++] = (char)cp;
        } else {
            out[o++] = (char)(0xC0 | cp >> 6);
            out[o++] = (char)(0x80 | (cp & 0x3F));
        }
        o += (size_t)sprintf(out + o, "\":%d,", id);
    }
    *len = o;
    return out;
}

/* The whole-token map holds exactly the tokens that BPE yields from their
 * own bytes: the rules decide most (model/reach.c), this asks BPE for
 * every token. */
static void check_whole_map(const simdbpe_model *m)
{
    /* The scratch's cache of merge lookups (256 KB) is lent from one
     * buffer for the process, as an encoder lends its own; lending resets
     * it for this model. A cache of its own per input was a fresh
     * allocation that ASan's quarantine made page-fault in every time. */
    static void *pair_cache;
    if (!pair_cache)
        FUZZ_CHECK((pair_cache = malloc(simdbpe__bpe_pairs_bytes())) != NULL, "out of memory");
    simdbpe__bpe_scratch scratch = {0};
    simdbpe__bpe_lend_pairs(&scratch, pair_cache);
    for (uint32_t id = 0; id < simdbpe_model_vocab_size(m); id++) {
        const uint8_t *b;
        size_t len, n = 0;
        if (simdbpe_model_token_bytes(m, id, &b, &len) != SIMDBPE_OK || len == 0)
            continue;
        uint32_t *out = malloc(len * sizeof *out);
        FUZZ_CHECK(out != NULL, "out of memory");
        FUZZ_CHECK(simdbpe__bpe_word(m, &scratch, b, len, out, &n) == SIMDBPE_OK, "bpe_word");
        int yes = n == 1 && out[0] == id;
        free(out);
        uint64_t lo, hi;
        simdbpe__short_words(b, len < 16 ? len : 16, &lo, &hi);
        uint32_t found = simdbpe__whole_find(m, b, len, simdbpe__piece_hash(b, len), lo, hi);
        FUZZ_CHECK((found == id) == yes, "token %u (%zu bytes) %s the whole-token map", id, len,
                   yes ? "missing from" : "wrongly in");
    }
    simdbpe__bpe_scratch_free(&scratch);
}

static void check_model(const simdbpe_model *m)
{
    check_whole_map(m);
    simdbpe_encoder_options eo = {.cache_mb = 1}; /* the smallest: one per input */
    simdbpe_encoder *enc;
    FUZZ_CHECK(simdbpe_encoder_new_with(m, &eo, &enc, NULL) == SIMDBPE_OK, "encoder_new");
    FUZZ_CHECK(simdbpe_model_vocab_size(m) >= 256, "vocab size %u", simdbpe_model_vocab_size(m));
    for (int policy = SIMDBPE_SPECIAL_AS_TEXT; policy <= SIMDBPE_SPECIAL_ALLOW; policy++) {
        simdbpe_encode_options opts = {.special = (simdbpe_special_policy)policy, .errors = SIMDBPE_UTF8_STRICT};
        const uint32_t *ids;
        size_t n, len;
        simdbpe_error err;
        simdbpe_status st =
            simdbpe_encode(enc, sample, sizeof sample - 1, &opts, &ids, &n, &err);
        FUZZ_CHECK(st == SIMDBPE_OK, "encode with a loaded model: %s", err.message);
        uint8_t *out = fuzz_decode(m, ids, n, &len);
        FUZZ_CHECK(len == sizeof sample - 1 && memcmp(out, sample, len) == 0,
                   "policy %d: round trip with a loaded model gave %zu bytes", policy, len);
        free(out);
    }
    for (size_t i = 0; i < simdbpe_model_special_count(m); i++) {
        uint32_t id, again;
        const char *text;
        size_t len;
        FUZZ_CHECK(simdbpe_model_special_at(m, i, &id, &text, &len) == SIMDBPE_OK, "special_at");
        FUZZ_CHECK(simdbpe_model_special_id(m, text, len, &again) == SIMDBPE_OK,
                   "special_id of special %zu", i);
    }
    simdbpe_encoder_free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t empty[1];
    if (size == 0)
        data = empty; /* memchr needs a valid pointer even for 0 bytes */
    int plus = size > 0 && data[0] == '+';
    const uint8_t *p = data + plus, *end = data + size;
    const uint8_t *nul1 = memchr(p, 0, (size_t)(end - p));
    const uint8_t *vocab_end = nul1 ? nul1 : end;
    /* Ids in [10^6, 2^24) cost seconds to load (fuzz.h). */
    if (fuzz_has_huge_number(p, (size_t)(vocab_end - p)))
        return 0;
    const uint8_t *merges = nul1 ? nul1 + 1 : end;
    const uint8_t *nul2 = memchr(merges, 0, (size_t)(end - merges));
    const uint8_t *merges_end = nul2 ? nul2 : end;
    /* Each part in its own exact-size buffer, so over-reads are caught. */
    size_t vlen = (size_t)(vocab_end - p);
    char *vocab = malloc(vlen + 2 + 256 * 12);
    FUZZ_CHECK(vocab != NULL, "out of memory");
    size_t vn = 0;
    if (plus) {
        vocab[vn++] = '{';
        size_t blen;
        const char *base = base_vocab(&blen);
        memcpy(vocab + vn, base, blen);
        vn += blen;
        if (vlen == 0)
            vn--; /* drop the trailing comma */
    }
    memcpy(vocab + vn, p, vlen);
    vn += vlen;
    if (plus)
        vocab[vn++] = '}';
    char *vocab_exact = malloc(vn ? vn : 1);
    char *merges_copy = malloc(merges_end > merges ? (size_t)(merges_end - merges) : 1);
    FUZZ_CHECK(vocab_exact && merges_copy, "out of memory");
    memcpy(vocab_exact, vocab, vn);
    free(vocab);
    memcpy(merges_copy, merges, (size_t)(merges_end - merges));
    char *specials = NULL;
    size_t slen = 0;
    if (nul2) {
        slen = (size_t)(end - nul2 - 1);
        specials = malloc(slen ? slen : 1);
        FUZZ_CHECK(specials != NULL, "out of memory");
        memcpy(specials, nul2 + 1, slen);
    }
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_memory(vocab_exact, vn, merges_copy,
                                                  (size_t)(merges_end - merges), specials, slen,
                                                  &m, &err);
    if (st == SIMDBPE_OK) {
        size_t mlen = (size_t)(merges_end - merges);
        FUZZ_CHECK(m != NULL, "OK without a model");
        FUZZ_CHECK(!FUZZ_CHECK_MERGES_UTF8 || fuzz_utf8_first_invalid(merges, mlen) == mlen,
                   "loaded a merges.txt that is not UTF-8 (byte %zu)",
                   fuzz_utf8_first_invalid(merges, mlen));
        check_model(m);
        simdbpe_model_free(m);
    } else {
        fuzz_check_load_failed(st, m, &err);
    }
    free(vocab_exact);
    free(merges_copy);
    free(specials);
    return 0;
}
