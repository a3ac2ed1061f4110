/*
 * kernels.h - the table of whole-buffer kernels the encoder calls.
 *
 * Every kernel set fills the same table; the library reaches kernels only
 * through it. A set is chosen when an encoder is created (best supported
 * first) and kept in the encoder; SIMDBPE_KERNEL=scalar|sse42|avx2 forces
 * one. The scalar set is the reference every other set is tested against.
 */
#ifndef SIMDBPE_KERNELS_H
#define SIMDBPE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct simdbpe__kernels {
    const char *name;
    /* Returns len if s[0..len) is valid UTF-8 (Unicode 16: no surrogates,
     * no overlong forms, nothing above U+10FFFF), else the offset of the
     * first byte of the first invalid sequence. */
    size_t (*validate_utf8)(const uint8_t *s, size_t len);
} simdbpe__kernels;

extern const simdbpe__kernels simdbpe__kernels_scalar;

/*
 * The best kernel set this CPU supports, or the one named by `force` (e.g.
 * getenv("SIMDBPE_KERNEL")) if it is supported. Returns NULL if `force`
 * names an unknown or unsupported set.
 */
const simdbpe__kernels *simdbpe__kernels_select(const char *force);

/* Every set this build and CPU support, best first; NULL-terminated. */
const simdbpe__kernels *const *simdbpe__kernels_available(void);

/* Length of the maximal subpart of an ill-formed sequence starting at s[0]
 * (Unicode's "maximal subpart" rule, as Python's errors="replace"):
 * how many bytes one U+FFFD replaces. Requires len >= 1 and that s does not
 * start with a valid sequence. */
size_t simdbpe__utf8_maximal_subpart(const uint8_t *s, size_t len);

/* Length of the valid sequence at s[0], or 0 if none starts there. */
size_t simdbpe__utf8_sequence_len(const uint8_t *s, size_t len);

#endif
