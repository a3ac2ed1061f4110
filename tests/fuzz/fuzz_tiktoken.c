/*
 * fuzz_tiktoken.c - property: loading a tiktoken rank file from any bytes
 * returns a status and never crashes, and a model that loads works.
 *
 * Input layout: byte 0 picks the encoding (its value mod 5: r50k_base,
 * p50k_base, cl100k_base, o200k_base, or NULL = recognise OpenAI's files
 * by their contents, which a fuzzed file never is); the rest is the rank
 * file. A failed load must say why (a status other than OK, repeated in
 * the error, and a message). A model that loads must encode a fixed text
 * (specials as text and allowed) and decode it back to itself (fuzz.h,
 * fuzz_check_roundtrip: the loader requires a token for each of the 256
 * bytes), and find its specials by their text. Leaks on every path are
 * caught by libFuzzer's leak check (run.sh sets detect_leaks=1).
 */
#include "fuzz.h"

static const char sample[] =
    "Hello, world! It's 2024, I'M here <|endoftext|> <|fim_prefix|> h\xC3\xA9llo   "
    "w\xC3\xB6rld\t\r\n\n \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80 \xC2\xA0x "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 12345678901234567890 x/y";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"r50k_base", "p50k_base", "cl100k_base", "o200k_base",
                                        NULL};
    if (size == 0 || fuzz_has_huge_number(data + 1, size - 1))
        return 0;
    const char *name = names[data[0] % 5];
    /* The file in its own exact-size buffer, so over-reads are caught. */
    size_t len = size - 1;
    char *file = malloc(len ? len : 1);
    FUZZ_CHECK(file != NULL, "out of memory");
    memcpy(file, data + 1, len);
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_tiktoken(file, len, name, &m, &err);
    free(file);
    if (st != SIMDBPE_OK) {
        fuzz_check_load_failed(st, m, &err);
        return 0;
    }
    FUZZ_CHECK(m != NULL, "OK without a model");
    FUZZ_CHECK(name != NULL, "a fuzzed file recognised as one of OpenAI's");
    fuzz_check_loaded(m, sample, sizeof sample - 1);
    simdbpe_model_free(m);
    return 0;
}
