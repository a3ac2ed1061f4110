/*
 * kernels.h - the table of whole-buffer kernels the encoder calls.
 *
 * Every kernel set fills the same table; the library reaches kernels only
 * through it. A set is chosen when an encoder is created (best supported
 * first) and kept in the encoder; SIMDBPE_KERNEL=scalar|sse42|avx2 forces
 * one. The scalar set is the reference every other set is tested against,
 * and every set gives bit-for-bit the same results.
 *
 * Invariants shared by all kernels: they read exactly the bytes they are
 * given (never past `len`, so a tail is copied into a local block), keep no
 * state between calls and never fail.
 */
#ifndef SIMDBPE_KERNELS_H
#define SIMDBPE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The ASCII classes of one 64-byte block, one bit per byte (bit i = byte
 * i of the block). Bytes past the end of the input are zero bytes, which
 * are in no mask.
 *
 *   letter  A-Z a-z          digit  0-9
 *   ws      \t \n \v \f \r ' '       space  ' ' only
 *   apos    '\''             high   0x80-0xFF (part of a multi-byte char)
 *   cont    0x80-0xBF (a continuation byte, never the start of a char)
 *   br      \r \n             slash  '/'
 *   lower   bytes with bit 0x20 set (with `letter`: a-z)
 * (the last three only from classify_ext; classify leaves them 0)
 *
 * The pre-tokenizer adds the classes of multi-byte code points itself.
 */
typedef struct simdbpe__block_masks {
    uint64_t letter, digit, ws, space, apos, high, cont, br, slash, lower;
} simdbpe__block_masks;

/* The classes of the multi-byte characters of a block (see lead_classes):
 * bit i is the character that starts at byte i. */
typedef struct simdbpe__lead_classes {
    uint64_t letter, digit, ws; /* its class: \p{L}, \p{N}, \s */
    uint64_t three;             /* it is 3 bytes long (else 2) */
} simdbpe__lead_classes;

/* The class codes of the multi-byte characters of a block (see
 * lead_codes): bit i is the character that starts at byte i. */
typedef struct simdbpe__lead_codes {
    uint64_t bit[4]; /* bit k of its code */
    uint64_t three;  /* it is 3 bytes long */
    uint64_t four;   /* it is 4 bytes long: no code bits (the caller looks it up) */
} simdbpe__lead_codes;

typedef struct simdbpe__kernels {
    const char *name;
    /* Returns len if s[0..len) is valid UTF-8 (Unicode 16: no surrogates,
     * no overlong forms, nothing above U+10FFFF), else the offset of the
     * first byte of the first invalid sequence. */
    size_t (*validate_utf8)(const uint8_t *s, size_t len);
    /* Fills out[0 .. (len + 63) / 64) with the masks of each 64-byte block
     * of s[0..len). */
    void (*classify)(const uint8_t *s, size_t len, simdbpe__block_masks *out);
    /* The same with br, slash and lower too (the other families' scanners). */
    void (*classify_ext)(const uint8_t *s, size_t len, simdbpe__block_masks *out);
    /* out[i] = table[s[i]] for i < len: the initial token ids of a word. */
    void (*map_bytes)(const uint8_t *s, size_t len, const uint32_t table[256], uint32_t *out);
    /* The classes of the characters that start at the bits of `leads` in
     * the 64-byte block s[0..64), each of them the lead byte of a valid 2-,
     * 3- or 4-byte character; s[64..72) must be readable too (a character
     * begun near the end runs on). The class of a code point X below
     * U+10000 is bmp2[X >> 4] >> 2 * (X & 15) & 3 (1 letter, 2 number,
     * 3 space, 0 other; ucd.h). Returns 0, with *out unset, if a lead
     * begins a 4-byte character: the caller looks those up itself. */
    int (*lead_classes)(const uint8_t *s, uint64_t leads, const uint32_t *bmp2,
                        simdbpe__lead_classes *out);
    /* The same for four-bit codes (the family scanners' classes): the code
     * of a code point X below U+10000 is codes[X >> 3] >> 4 * (X & 7) & 15
     * (ucd.h); characters of 4 bytes are only marked in `four`. The same
     * reads as lead_classes. */
    void (*lead_codes)(const uint8_t *s, uint64_t leads, const uint32_t *codes,
                       simdbpe__lead_codes *out);
} simdbpe__kernels;

extern const simdbpe__kernels simdbpe__kernels_scalar;
#if defined(SIMDBPE_HAVE_X86_KERNELS)
extern const simdbpe__kernels simdbpe__kernels_sse42;
extern const simdbpe__kernels simdbpe__kernels_avx2;
#endif

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

/* The scalar lead_classes, which the SSE4.2 set uses too (it has no gather). */
int simdbpe__lead_classes_scalar(const uint8_t *s, uint64_t leads, const uint32_t *bmp2,
                                 simdbpe__lead_classes *out);

/* The scalar lead_codes (the SSE4.2 set's too). */
void simdbpe__lead_codes_scalar(const uint8_t *s, uint64_t leads, const uint32_t *codes,
                                simdbpe__lead_codes *out);

/* Length of the valid sequence at s[0], or 0 if none starts there. */
size_t simdbpe__utf8_sequence_len(const uint8_t *s, size_t len);

/* The scalar validator from offset `from`, which must be the start of a
 * code point: what the SIMD kernels fall back to once a block fails, to
 * find the exact offset. */
size_t simdbpe__utf8_validate_from(const uint8_t *s, size_t len, size_t from);

#endif
