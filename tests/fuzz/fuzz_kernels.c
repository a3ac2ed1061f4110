/*
 * fuzz_kernels.c - property: every kernel set computes what the scalar
 * reference computes.
 *
 * For every set simdbpe__kernels_available() lists (whatever ISAs this
 * build and CPU have), each kernel in the table is run on slices of the
 * input that start at offsets around the 16/32/64-byte block sizes (so
 * blocks are crossed at many alignments) and end at the input's end or
 * 1 or 3 bytes before it.
 * Each slice, and each kernel's output, lies in a buffer of exactly its
 * size, so a kernel that reads or writes past its end is caught by
 * AddressSanitizer (see exact_place: one reused buffer each, of which only
 * those bytes are addressable, as in a malloc of their size). The scalar
 * set itself is checked against definitions written here (the validator
 * in fuzz.h, the byte classes of kernels.h bit by bit, the map's table,
 * the two-level tables), and its results, computed once per slice, are
 * what every other set is compared with.
 *
 * When a field is added to simdbpe__kernels, add one compare_* function
 * here and call it from compare_sets().
 */
#include "fuzz.h"

#include "kernels.h"
#include "pretok/ucd.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FUZZ_ASAN)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/*
 * A buffer reused for every slice instead of a malloc and free per slice
 * and kernel (360 of them per input took most of its time under ASan).
 * exact_place(b, len, align) makes only [p, p + len) of it addressable,
 * with p at `align` (a multiple of 16) past a 64-byte boundary, at least
 * 64 poisoned bytes before p and every byte from p + len to the buffer's
 * end (at least 128, past any vector load begun inside) poisoned. ASan
 * poisons in granules of 8 bytes with an exact end, so its shadow then
 * reads as for a malloc of len bytes, whose results are 16-byte aligned:
 * an access past either end is reported as one into a malloc'ed block's
 * redzone would be. The bytes are filled with 0xbe, as ASan fills a fresh
 * malloc, so that an output the kernel leaves unwritten does not keep the
 * previous kernel's result. Without ASan only the fill remains.
 */
typedef struct exact_buf {
    uint8_t *base;
    size_t cap;
} exact_buf;

enum { EXACT_BEFORE = 128, EXACT_AFTER = 128 };

FUZZ_NO_COVERAGE
static void *exact_place(exact_buf *b, size_t len, size_t align)
{
    if (EXACT_BEFORE + len + EXACT_AFTER > b->cap) {
        if (b->base)
            UNPOISON(b->base, b->cap);
        free(b->base);
        b->cap = EXACT_BEFORE + (len | 4095) + 1 + EXACT_AFTER;
        b->base = aligned_alloc(64, b->cap);
        FUZZ_CHECK(b->base != NULL, "out of memory");
    }
    uint8_t *p = b->base + EXACT_BEFORE - 64 + align % 64;
    POISON(b->base, b->cap);
    UNPOISON(p, len);
    memset(p, 0xbe, len);
    return p;
}

/* The buffers of a slice's bytes, the scalar set's results and the
 * results of the set compared with them. */
static exact_buf slice_buf, want_masks_buf, want_ext_buf, want_map_buf, got_masks_buf,
    got_map_buf, def_buf;

FUZZ_NO_COVERAGE
static int masks_equal(const simdbpe__block_masks *a, const simdbpe__block_masks *b)
{
    return a->letter == b->letter && a->digit == b->digit && a->ws == b->ws &&
           a->space == b->space && a->apos == b->apos && a->high == b->high &&
           a->cont == b->cont && a->br == b->br && a->slash == b->slash && a->lower == b->lower;
}

/* The masks of kernels.h computed one byte at a time from their
 * definitions; bytes past the end are in no mask. br, slash and lower
 * only with `ext` (classify_ext; classify leaves them 0). */
FUZZ_NO_COVERAGE
static void masks_by_definition(const uint8_t *s, size_t len, simdbpe__block_masks *out, int ext)
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
        if (ext && (c == '\r' || c == '\n'))
            m->br |= bit;
        if (ext && c == '/')
            m->slash |= bit;
        if (ext && (c & 0x20))
            m->lower |= bit;
    }
}

FUZZ_NO_COVERAGE
static void compare_classify(const simdbpe__kernels *k, const uint8_t *s, size_t len, size_t off,
                             const simdbpe__block_masks *want, const simdbpe__block_masks *want_ext,
                             size_t align)
{
    size_t blocks = (len + 63) / 64;
    simdbpe__block_masks *got = exact_place(&got_masks_buf, blocks * sizeof *got, align);
    k->classify(s, len, got);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&want[b], &got[b]),
                   "%s classify on slice [%zu, +%zu): block %zu differs from scalar", k->name,
                   off, len, b);
    got = exact_place(&got_masks_buf, blocks * sizeof *got, align);
    k->classify_ext(s, len, got);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&want_ext[b], &got[b]),
                   "%s classify_ext on slice [%zu, +%zu): block %zu differs from scalar", k->name,
                   off, len, b);
}

/* Every id distinct, high bits used. */
static uint32_t map_table[256];

FUZZ_NO_COVERAGE
static void make_map_table(void)
{
    for (uint32_t b = 0; b < 256; b++)
        map_table[b] = b * 2654435761u ^ (b << 24);
}

FUZZ_NO_COVERAGE
static void compare_map_bytes(const simdbpe__kernels *k, const uint8_t *s, size_t len,
                              size_t off, const uint32_t *want, size_t align)
{
    uint32_t *got = exact_place(&got_map_buf, len * sizeof *got, align);
    k->map_bytes(s, len, map_table, got);
    for (size_t i = 0; i < len; i++)
        FUZZ_CHECK(got[i] == want[i], "%s map_bytes on slice [%zu, +%zu): byte %zu differs",
                   k->name, off, len, i);
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

/* lead_codes likewise (any lead byte, 4-byte characters only marked): the
 * scalar set's result, which is checked against simdbpe__ucd_code_of. */
FUZZ_NO_COVERAGE
static void compare_lead_codes(const simdbpe__kernels *k, const uint8_t *s, size_t len,
                               size_t off, size_t valid)
{
    for (size_t b = 0; b + 72 <= valid; b += 64) {
        uint64_t leads = 0;
        for (unsigned i = 0; i < 64; i++)
            leads |= (uint64_t)(s[b + i] >= 0xC0) << i;
        simdbpe__lead_codes want, got;
        simdbpe__kernels_scalar.lead_codes(s + b, leads, simdbpe__ucd_codes, &want);
        k->lead_codes(s + b, leads, simdbpe__ucd_codes, &got);
        FUZZ_CHECK(memcmp(&got, &want, sizeof got) == 0,
                   "%s lead_codes on slice [%zu, +%zu): block %zu differs from scalar", k->name,
                   off, len, b / 64);
        if (k != &simdbpe__kernels_scalar)
            continue;
        for (unsigned i = 0; i < 64; i++) {
            const uint8_t *c = s + b + i;
            if (!(leads >> i & 1))
                continue;
            FUZZ_CHECK((want.four >> i & 1) == (c[0] >= 0xF0) &&
                           (want.three >> i & 1) == (c[0] >= 0xE0 && c[0] < 0xF0),
                       "scalar lead_codes at %zu: wrong length", off + b + i);
            if (c[0] >= 0xF0)
                continue;
            uint32_t cp = c[0] >= 0xE0 ? (uint32_t)(c[0] & 0x0F) << 12 |
                                             (uint32_t)(c[1] & 0x3F) << 6 | (c[2] & 0x3F)
                                       : (uint32_t)(c[0] & 0x1F) << 6 | (c[1] & 0x3F);
            unsigned got_code = 0;
            for (int j = 0; j < 4; j++)
                got_code |= (unsigned)(want.bit[j] >> i & 1) << j;
            FUZZ_CHECK(got_code == simdbpe__ucd_code_of(cp),
                       "scalar lead_codes at %zu: code %u, tables %u", off + b + i, got_code,
                       simdbpe__ucd_code_of(cp));
        }
    }
}

/* What the scalar set gives on a slice, computed once and compared with
 * every other set. */
typedef struct scalar_result {
    size_t valid;
    simdbpe__block_masks *masks, *masks_ext;
    uint32_t *map;
} scalar_result;

FUZZ_NO_COVERAGE
static void compare_sets(const simdbpe__kernels *k, const uint8_t *s, size_t len, size_t off,
                         const scalar_result *want, size_t align)
{
    size_t got = k->validate_utf8(s, len);
    FUZZ_CHECK(got == want->valid, "%s validate_utf8 on slice [%zu, +%zu) gave %zu, scalar %zu",
               k->name, off, len, got, want->valid);
    compare_classify(k, s, len, off, want->masks, want->masks_ext, align);
    compare_map_bytes(k, s, len, off, want->map, align);
    compare_lead_classes(k, s, len, off, want->valid);
    compare_lead_codes(k, s, len, off, want->valid);
}

/* The scalar set on a slice, checked against the definitions: the
 * validator of fuzz.h, the byte classes of kernels.h, the map's table and
 * (in compare_lead_classes) the two-level tables. */
FUZZ_NO_COVERAGE
static void check_scalar(const uint8_t *s, size_t len, size_t off, scalar_result *r,
                         size_t align)
{
    const simdbpe__kernels *sc = &simdbpe__kernels_scalar;
    size_t want = fuzz_utf8_first_invalid(s, len);
    r->valid = sc->validate_utf8(s, len);
    FUZZ_CHECK(r->valid == want, "scalar validate_utf8 on slice [%zu, +%zu) gave %zu, expected %zu",
               off, len, r->valid, want);
    size_t blocks = (len + 63) / 64;
    simdbpe__block_masks *def = exact_place(&def_buf, blocks * sizeof *def, 0);
    r->masks = exact_place(&want_masks_buf, blocks * sizeof *r->masks, align);
    r->masks_ext = exact_place(&want_ext_buf, blocks * sizeof *r->masks_ext, align);
    r->map = exact_place(&want_map_buf, len * sizeof *r->map, align);
    masks_by_definition(s, len, def, 0);
    sc->classify(s, len, r->masks);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&def[b], &r->masks[b]),
                   "scalar classify on slice [%zu, +%zu): block %zu differs from kernels.h", off,
                   len, b);
    masks_by_definition(s, len, def, 1);
    sc->classify_ext(s, len, r->masks_ext);
    for (size_t b = 0; b < blocks; b++)
        FUZZ_CHECK(masks_equal(&def[b], &r->masks_ext[b]),
                   "scalar classify_ext on slice [%zu, +%zu): block %zu differs from kernels.h",
                   off, len, b);
    sc->map_bytes(s, len, map_table, r->map);
    for (size_t i = 0; i < len; i++)
        FUZZ_CHECK(r->map[i] == map_table[s[i]], "scalar map_bytes wrong at %zu", off + i);
    compare_lead_classes(sc, s, len, off, r->valid);
    compare_lead_codes(sc, s, len, off, r->valid);
}

/* Runs every kernel set on data[off .. off+len) in an exact-size copy
 * whose start, like its outputs', lies `align` bytes past a 64-byte
 * boundary. */
FUZZ_NO_COVERAGE
static void check_slice(const uint8_t *data, size_t off, size_t len, size_t align)
{
    uint8_t *copy = exact_place(&slice_buf, len, align);
    memcpy(copy, data + off, len);
    scalar_result want;
    check_scalar(copy, len, off, &want, align);
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++)
        if (*k != &simdbpe__kernels_scalar)
            compare_sets(*k, copy, len, off, &want, align);
}

/* Slices start at 16, 0, 48 or 32 bytes past a 64-byte boundary in turn
 * (ASan's malloc gives small blocks 16 or 48, blocks of 192 bytes or more
 * 0). */
FUZZ_NO_COVERAGE
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t offsets[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63};
    static const size_t cuts[] = {0, 1, 3};
    if (!map_table[1])
        make_map_table();
    size_t n = 0;
    for (size_t i = 0; i < sizeof offsets / sizeof *offsets && offsets[i] <= size; i++)
        for (size_t j = 0; j < sizeof cuts / sizeof *cuts && cuts[j] <= size - offsets[i]; j++)
            check_slice(data, offsets[i], size - offsets[i] - cuts[j], 16 * ((3 * n++ + 1) % 4));
    return 0;
}
