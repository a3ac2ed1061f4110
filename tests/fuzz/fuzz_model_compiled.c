/*
 * fuzz_model_compiled.c - property: opening a compiled model (.sbpe) from
 * any bytes returns a status and never crashes, and a model that opens
 * can encode and decode.
 *
 * Input: byte 0 is a mode, the rest the image (in an exact-size buffer).
 *   mode bit 0 clear: the image as is. A random mutation almost never
 *     survives the checksum, so a model that opens is a real image, and it
 *     must encode a fixed text and decode it back to the same bytes.
 *   mode bit 0 set: before opening, the harness writes the image's real
 *     size at offset 16 and its XXH3-64 checksum at offset 24 (the layout
 *     of src/model/compiled.c), so mutations reach the checks of every
 *     table entry behind the checksum. Such an image may be consistent
 *     and still hostile (e.g. byte 'a' mapped to the token "b"), which no
 *     check short of rebuilding the model can catch, so here a model that
 *     opens must only encode and decode without a crash or an error other
 *     than a bad id.
 */
#include <xxhash.h>

#include "fuzz.h"

static const char sample[] =
    "Hello, world! It's 2024 <|endoftext|> héllo   wörld\t\n\n 中文 😀 \xC2\xA0x "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 12345678901234567890";

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void check_model(const simdbpe_model *m, int must_round_trip)
{
    simdbpe_encoder *enc;
    FUZZ_CHECK(simdbpe_encoder_new(m, &enc, NULL) == SIMDBPE_OK, "encoder_new");
    for (int policy = SIMDBPE_SPECIAL_AS_TEXT; policy <= SIMDBPE_SPECIAL_ALLOW; policy++) {
        simdbpe_encode_options opts = {.special = (simdbpe_special_policy)policy, .errors = SIMDBPE_UTF8_STRICT};
        const uint32_t *ids;
        size_t n, len;
        simdbpe_error err;
        simdbpe_status st = simdbpe_encode(enc, sample, sizeof sample - 1, &opts, &ids, &n, &err);
        FUZZ_CHECK(st == SIMDBPE_OK || !must_round_trip, "encode: %s", err.message);
        if (st != SIMDBPE_OK)
            continue;
        if (must_round_trip) {
            uint8_t *out = fuzz_decode(m, ids, n, &len);
            FUZZ_CHECK(len == sizeof sample - 1 && memcmp(out, sample, len) == 0,
                       "policy %d: round trip gave %zu bytes", policy, len);
            free(out);
        } else {
            uint8_t buf[4096];
            st = simdbpe_decode(m, ids, n, buf, sizeof buf, &len, &err);
            FUZZ_CHECK(st == SIMDBPE_OK || st == SIMDBPE_ERR_TOKEN_ID ||
                           st == SIMDBPE_ERR_BUFFER_TOO_SMALL,
                       "decode: %s", err.message);
        }
    }
    simdbpe_encoder_free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int fixup = data[0] & 1;
    size_t len = size - 1;
    uint8_t *img = malloc(len ? len : 1);
    FUZZ_CHECK(img != NULL, "out of memory");
    memcpy(img, data + 1, len);
    if (fixup && len >= 32) {
        put64(img + 16, len);
        put64(img + 24, XXH3_64bits(img + 32, len - 32));
    }
    simdbpe_model *m = NULL;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_compiled(img, len, &m, &err);
    if (st == SIMDBPE_OK) {
        FUZZ_CHECK(m != NULL, "OK without a model");
        /* The model holds its own copy: scribbling on ours must not matter. */
        memset(img, 0xA5, len);
        check_model(m, !fixup);
        simdbpe_model_free(m);
    } else {
        FUZZ_CHECK(m == NULL, "a failed load returned a model");
        FUZZ_CHECK(err.status == st && err.message[0] != '\0',
                   "failed load (%s) without a message", simdbpe_status_name(st));
    }
    free(img);
    return 0;
}
