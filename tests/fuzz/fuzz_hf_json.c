/*
 * fuzz_hf_json.c - property: loading an HF `tokenizer.json` from any
 * bytes returns a status and never crashes, and a model that loads works.
 *
 * The input is the whole file. A failed load must say why (a status other
 * than OK, repeated in the error, and a message). A model that loads must
 * encode a fixed text (specials as text and allowed, with and without the
 * post-processor's ids) and decode it back to itself (fuzz.h,
 * fuzz_check_roundtrip): the loader requires a token for each of the 256
 * bytes, and the text is its own NFC form, so this holds for every
 * pre-tokenizer family, normalizer and set of added tokens the loader
 * accepts. Every special token must be found again by its text. Leaks on
 * every path are caught by libFuzzer's leak check (run.sh sets
 * detect_leaks=1).
 */
#include "fuzz.h"

/* Letters, contractions (also in capitals, which cl100k's (?i:...)
 * matches), digit runs longer than 3, CJK and kana (DeepSeek-V3's second
 * Split), CR LF, no-break space, an emoji and a special token's text. */
static const char sample[] =
    "Hello, world! It's 2024, I'M here <|endoftext|> h\xC3\xA9llo   w\xC3\xB6rld\t\r\n\n "
    "\xE4\xB8\xAD\xE6\x96\x87\xE3\x81\x8B\xE3\x83\x8A \xF0\x9F\x98\x80 \xC2\xA0x "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 12345678901234567890 x/y";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_has_huge_number(data, size))
        return 0;
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_hf_json((const char *)data, size, &m, &err);
    if (st != SIMDBPE_OK) {
        fuzz_check_load_failed(st, m, &err);
        return 0;
    }
    FUZZ_CHECK(m != NULL, "OK without a model");
    fuzz_check_loaded(m, sample, sizeof sample - 1);
    simdbpe_model_free(m);
    return 0;
}
