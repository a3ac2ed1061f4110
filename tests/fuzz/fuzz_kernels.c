/*
 * fuzz_kernels.c - property: every kernel set computes what the scalar
 * reference computes.
 *
 * For every set simdbpe__kernels_available() lists (whatever ISAs this
 * build and CPU have), each kernel in the table is run on slices of the
 * input that start at offsets around the 16/32/64-byte block sizes (so
 * blocks are crossed at many alignments) and end at the input's end or
 * 1 or 3 bytes before it.
 * Each slice is copied into a buffer of exactly its size, so a kernel that
 * reads past its end is caught by AddressSanitizer. The scalar set itself
 * is checked against definitions written here (the validator in fuzz.h,
 * the byte classes of kernels.h bit by bit, the map's table, the two-level
 * tables), and its results, computed once per slice, are what every other
 * set is compared with.
 *
 * When a field is added to simdbpe__kernels, add one compare_* function
 * here and call it from compare_sets().
 */
#include "fuzz.h"

#include "kernels.h"
#include "pretok/ucd.h"

FUZZ_NO_COVERAGE
static int masks_equal(const simdbpe__block_masks *a, const simdbpe__block_masks *b)
{
    return a->letter == b->letter && a->digit == b->digit && a->ws == b->ws &&
           a->space == b->space && a->apos == b->apos && a->high == b->high &&
           a->cont == b->cont;
}

/* The masks of kernels.h computed one byte at a time from their
 * definitions; bytes past the end are in no mask. */
FUZZ_NO_COVERAGE
static void masks_by_definition(const uint8_t *s, size_t len, simdbpe__block_masks *out)
{
    size_t blocks = (len + 63) / 64;
    memset(out, 0, blocks * sizeof *out);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        uint64_t bit = (uint64_t)1 << (i % 64);
        simdbpe__block_masks *m = &out[i / 64];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            m->letter |= bit;
        if (c >= '0' && c <= '9')
            m->digit |= bit;
        if (c == ' ' || (c >= '\t' && c <= '\r'))
            m->ws |= bit;
        if (c == ' ')
            m->space |= bit;
        if (c == '\'')
            m->apos |= bit;
        if (c >= 0x80)
            m->high |= bit;
        if (c >= 0x80 && c <= 0xBF)
            m->cont |= bit;
    }
}

FUZZ_NO_COVERAGE
static void compare_classify(const simdbpe__kernels *k, const uint8_t *s, size_t len, size_t off,
                             const simdbpe__block_masks *want)
{
    size_t blocks = (len + 63) / 64;
    simdbpe__block_masks *got = malloc((blocks ? blocks : 1) * sizeof *got);
    FUZZ_CHECK(got != NULL, "out of memory");
    k->classify(s, len, got);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&want[b], &got[b]),
                   "%s classify on slice [%zu, +%zu): block %zu differs from scalar", k->name,
                   off, len, b);
    free(got);
}

/* Every id distinct, high bits used. */
static void map_table(uint32_t table[256])
{
    for (uint32_t b = 0; b < 256; b++)
        table[b] = b * 2654435761u ^ (b << 24);
}

FUZZ_NO_COVERAGE
static void compare_map_bytes(const simdbpe__kernels *k, const uint8_t *s, size_t len,
                              size_t off, const uint32_t *want)
{
    uint32_t table[256];
    map_table(table);
    uint32_t *got = malloc((len ? len : 1) * sizeof *got);
    FUZZ_CHECK(got != NULL, "out of memory");
    k->map_bytes(s, len, table, got);
    for (size_t i = 0; i < len; i++)
        FUZZ_CHECK(got[i] == want[i], "%s map_bytes on slice [%zu, +%zu): byte %zu differs",
                   k->name, off, len, i);
    free(got);
}

/* lead_classes on each 64-byte block of the slice's valid prefix that has
 * 8 more bytes after it, with the leads of the characters that start in
 * it: the same result as the scalar set's, which is checked against the
 * two-level tables. */
FUZZ_NO_COVERAGE
static void compare_lead_classes(const simdbpe__kernels *k, const uint8_t *s, size_t len,
                                 size_t off, size_t valid)
{
    for (size_t b = 0; b + 72 <= valid; b += 64) {
        uint64_t leads = 0;
        for (unsigned i = 0; i < 64; i++)
            leads |= (uint64_t)(s[b + i] >= 0xC0) << i;
        simdbpe__lead_classes want, got;
        int want_ok = simdbpe__kernels_scalar.lead_classes(s + b, leads, simdbpe__ucd_bmp2, &want);
        int got_ok = k->lead_classes(s + b, leads, simdbpe__ucd_bmp2, &got);
        FUZZ_CHECK(got_ok == want_ok,
                   "%s lead_classes on slice [%zu, +%zu) block %zu: %d, scalar %d", k->name, off,
                   len, b / 64, got_ok, want_ok);
        if (!want_ok)
            continue;
        FUZZ_CHECK(got.letter == want.letter && got.digit == want.digit && got.ws == want.ws &&
                       got.three == want.three,
                   "%s lead_classes on slice [%zu, +%zu): block %zu differs from scalar", k->name,
                   off, len, b / 64);
        if (k != &simdbpe__kernels_scalar)
            continue;
        for (unsigned i = 0; i < 64; i++) {
            const uint8_t *c = s + b + i;
            if (!(leads >> i & 1))
                continue;
            uint32_t cp = c[0] >= 0xE0 ? (uint32_t)(c[0] & 0x0F) << 12 |
                                             (uint32_t)(c[1] & 0x3F) << 6 | (c[2] & 0x3F)
                                       : (uint32_t)(c[0] & 0x1F) << 6 | (c[1] & 0x3F);
            unsigned cls = simdbpe__ucd_class(cp);
            unsigned got_cls = (unsigned)(want.letter >> i & 1) * SIMDBPE__CP_LETTER +
                               (unsigned)(want.digit >> i & 1) * SIMDBPE__CP_NUMBER +
                               (unsigned)(want.ws >> i & 1) * SIMDBPE__CP_SPACE;
            FUZZ_CHECK(got_cls == cls && (want.three >> i & 1) == (c[0] >= 0xE0),
                       "scalar lead_classes at %zu: class %u, tables %u", off + b + i, got_cls,
                       cls);
        }
    }
}

/* What the scalar set gives on a slice, computed once and compared with
 * every other set. */
typedef struct scalar_result {
    size_t valid;
    simdbpe__block_masks *masks;
    uint32_t *map;
} scalar_result;

static void compare_sets(const simdbpe__kernels *k, const uint8_t *s, size_t len, size_t off,
                         const scalar_result *want)
{
    size_t got = k->validate_utf8(s, len);
    FUZZ_CHECK(got == want->valid, "%s validate_utf8 on slice [%zu, +%zu) gave %zu, scalar %zu",
               k->name, off, len, got, want->valid);
    compare_classify(k, s, len, off, want->masks);
    compare_map_bytes(k, s, len, off, want->map);
    compare_lead_classes(k, s, len, off, want->valid);
}

/* The scalar set on a slice, checked against the definitions: the
 * validator of fuzz.h, the byte classes of kernels.h, the map's table and
 * (in compare_lead_classes) the two-level tables. */
FUZZ_NO_COVERAGE
static void check_scalar(const uint8_t *s, size_t len, size_t off, scalar_result *r)
{
    const simdbpe__kernels *sc = &simdbpe__kernels_scalar;
    size_t want = fuzz_utf8_first_invalid(s, len);
    r->valid = sc->validate_utf8(s, len);
    FUZZ_CHECK(r->valid == want, "scalar validate_utf8 on slice [%zu, +%zu) gave %zu, expected %zu",
               off, len, r->valid, want);
    size_t blocks = (len + 63) / 64;
    simdbpe__block_masks *def = malloc((blocks ? blocks : 1) * sizeof *def);
    r->masks = malloc((blocks ? blocks : 1) * sizeof *r->masks);
    r->map = malloc((len ? len : 1) * sizeof *r->map);
    FUZZ_CHECK(def && r->masks && r->map, "out of memory");
    masks_by_definition(s, len, def);
    sc->classify(s, len, r->masks);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&def[b], &r->masks[b]),
                   "scalar classify on slice [%zu, +%zu): block %zu differs from kernels.h", off,
                   len, b);
    free(def);
    uint32_t table[256];
    map_table(table);
    sc->map_bytes(s, len, table, r->map);
    for (size_t i = 0; i < len; i++)
        FUZZ_CHECK(r->map[i] == table[s[i]], "scalar map_bytes wrong at %zu", off + i);
    compare_lead_classes(sc, s, len, off, r->valid);
}

/* Runs every kernel set on data[off .. off+len) in an exact-size copy. */
static void check_slice(const uint8_t *data, size_t off, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + off, len);
    scalar_result want;
    check_scalar(copy, len, off, &want);
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++)
        if (*k != &simdbpe__kernels_scalar)
            compare_sets(*k, copy, len, off, &want);
    free(want.masks);
    free(want.map);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t offsets[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63};
    static const size_t cuts[] = {0, 1, 3};
    for (size_t i = 0; i < sizeof offsets / sizeof *offsets && offsets[i] <= size; i++)
        for (size_t j = 0; j < sizeof cuts / sizeof *cuts && cuts[j] <= size - offsets[i]; j++)
            check_slice(data, offsets[i], size - offsets[i] - cuts[j]);
    return 0;
}
