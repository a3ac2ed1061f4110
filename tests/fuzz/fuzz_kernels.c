/*
 * fuzz_kernels.c - property: every kernel set computes what the scalar
 * reference computes.
 *
 * For every set simdbpe__kernels_available() lists (whatever ISAs this
 * build and CPU have), each kernel in the table is run on slices of the
 * input that start at every offset 0..63 (so SIMD blocks are crossed at
 * every alignment) and end at the input's end and 1..3 bytes before it.
 * Each slice is copied into a buffer of exactly its size, so a kernel that
 * reads past its end is caught by AddressSanitizer. The scalar set itself
 * is also checked against the independent validator in fuzz.h.
 *
 * When a field is added to simdbpe__kernels, add one compare_* function
 * here and call it from compare_sets().
 */
#include "fuzz.h"

#include "kernels.h"

static void compare_validate(const simdbpe__kernels *k, const uint8_t *s, size_t len,
                             size_t off)
{
    size_t want = simdbpe__kernels_scalar.validate_utf8(s, len);
    size_t got = k->validate_utf8(s, len);
    FUZZ_CHECK(got == want, "%s validate_utf8 on slice [%zu, +%zu) gave %zu, scalar %zu",
               k->name, off, len, got, want);
}

static void compare_sets(const simdbpe__kernels *k, const uint8_t *s, size_t len, size_t off)
{
    compare_validate(k, s, len, off);
}

/* Runs every kernel set on data[off .. off+len) in an exact-size copy. */
static void check_slice(const uint8_t *data, size_t off, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + off, len);
    size_t want = fuzz_utf8_first_invalid(copy, len);
    size_t scalar = simdbpe__kernels_scalar.validate_utf8(copy, len);
    FUZZ_CHECK(scalar == want, "scalar validate_utf8 on slice [%zu, +%zu) gave %zu, expected %zu",
               off, len, scalar, want);
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++)
        compare_sets(*k, copy, len, off);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t off = 0; off < 64 && off <= size; off++)
        for (size_t cut = 0; cut < 4 && cut <= size - off; cut++)
            check_slice(data, off, size - off - cut);
    return 0;
}
