/*
 * body.inc.h - the SIMD kernels, written once over the vector layer.
 *
 * Included by each ISA file (sse42.c, avx2.c) after its vec_<isa>.h, which
 * defines `vec`, VBYTES and the v_* helpers. Everything here is static, so
 * each ISA file gets its own copy compiled with its own flags.
 *
 * Input is processed in 64-byte blocks (64 / VBYTES vectors each). The last
 * partial block is copied into a zero-filled local block, so no kernel
 * reads past `len` (zero bytes are ASCII and in no class).
 */
#include <stdbool.h>
#include <string.h>

#include "kernels.h"

#define BLOCK 64
#define VPB (BLOCK / VBYTES) /* vectors per block */

/* ---------------------------------------------------------------- UTF-8 */

/*
 * UTF-8 validation by the "lookup" algorithm (Keiser and Lemire, "Validating
 * UTF-8 in less than one instruction per byte", 2021). Every error shows in
 * the pair (previous byte, current byte) and is found with three 16-entry
 * tables indexed by the previous byte's high nibble, its low nibble and the
 * current byte's high nibble; each table entry is a set of error kinds, and
 * the AND of the three is the set of errors the pair commits:
 *
 *   prev byte      cur byte    error kind
 *   00..7F         80..BF      TOO_LONG      continuation without a lead
 *   C0..FF         00..7F,C0+  TOO_SHORT     lead without its continuation
 *   C0..C1         80..BF      OVERLONG_2
 *   E0             80..9F      OVERLONG_3
 *   ED             A0..BF      SURROGATE
 *   F0             80..8F      OVERLONG_4
 *   F4             90..BF      TOO_LARGE
 *   F5..FF         80..BF      TOO_LARGE_1000 (shares a bit with OVERLONG_4)
 *   80..BF         80..BF      TWO_CONTS     fine only inside a 3/4-byte char
 *
 * The third and fourth bytes of 3- and 4-byte characters are checked apart:
 * a byte two after an E0..EF lead or three after an F0..FF lead must be a
 * continuation, which is exactly when it is flagged TWO_CONTS; XOR-ing the
 * "must be a continuation" bit (0x80) with the flags cancels the expected
 * TWO_CONTS and leaves every real error non-zero.
 */
enum {
    TOO_SHORT = 1 << 0,
    TOO_LONG = 1 << 1,
    OVERLONG_3 = 1 << 2,
    TOO_LARGE = 1 << 3,
    SURROGATE = 1 << 4,
    OVERLONG_2 = 1 << 5,
    TOO_LARGE_1000 = 1 << 6,
    OVERLONG_4 = 1 << 6,
    TWO_CONTS = 1 << 7,
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS
};

static const uint8_t prev_high_tbl[16] = {
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, /* 0..7 */
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,                                     /* 8..B */
    TOO_SHORT | OVERLONG_2,                                                         /* C */
    TOO_SHORT,                                                                      /* D */
    TOO_SHORT | OVERLONG_3 | SURROGATE,                                             /* E */
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,                            /* F */
};

static const uint8_t prev_low_tbl[16] = {
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,           /* 0 */
    CARRY | OVERLONG_2,                                     /* 1 */
    CARRY,                                                  /* 2 */
    CARRY,                                                  /* 3 */
    CARRY | TOO_LARGE,                                      /* 4 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* 5 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* 6 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* 7 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* 8 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* 9 */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* A */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* B */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* C */
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,         /* D */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* E */
    CARRY | TOO_LARGE | TOO_LARGE_1000,                     /* F */
};

static const uint8_t cur_high_tbl[16] = {
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4, /* 8 */
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,                   /* 9 */
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                    /* A */
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                    /* B */
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,                                   /* C..F */
};

typedef struct utf8_state {
    vec prev;       /* the previous vector */
    vec incomplete; /* non-zero if `prev` ends inside a character */
    vec error;
    vec t_prev_high, t_prev_low, t_cur_high;
} utf8_state;

/* Errors in the pairs and triples that end in `cur`. */
static inline vec utf8_errors(const utf8_state *st, vec cur)
{
    vec prev1 = v_prev(cur, st->prev, 1);
    vec flags = v_and(v_and(v_lookup(st->t_prev_high, v_shr4(prev1)),
                            v_lookup(st->t_prev_low, v_and(prev1, v_splat(0x0F)))),
                      v_lookup(st->t_cur_high, v_shr4(cur)));
    /* 0x80 where the byte two after an E0+ lead or three after an F0+ lead. */
    vec prev2 = v_prev(cur, st->prev, 2);
    vec prev3 = v_prev(cur, st->prev, 3);
    vec third = v_subs_u8(prev2, v_splat(0xE0 - 0x80));
    vec fourth = v_subs_u8(prev3, v_splat(0xF0 - 0x80));
    vec must_cont = v_and(v_or(third, fourth), v_splat(0x80));
    return v_xor(must_cont, flags);
}

/* Non-zero where the vector ends inside a character: its last byte is a
 * lead of 2+ bytes, the one before of 3+, the one before that of 4. */
static inline vec utf8_incomplete(vec cur)
{
    static const uint8_t max_ok[32] = {
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0xF0 - 1, 0xE0 - 1,
        0xC0 - 1};
    return v_subs_u8(cur, v_load(max_ok + 32 - VBYTES));
}

/* Checks one 64-byte block; returns non-zero if it (or a character from
 * the block before) is invalid. */
static inline int utf8_block(utf8_state *st, const uint8_t *p)
{
    vec v[VPB];
    vec any_high = v_splat(0);
    for (int k = 0; k < VPB; k++) {
        v[k] = v_load(p + k * VBYTES);
        any_high = v_or(any_high, v[k]);
    }
    if (!(v_movemask(any_high))) {
        /* All ASCII: only a character left open before it is an error. */
        st->error = v_or(st->error, st->incomplete);
        st->prev = v[VPB - 1];
        st->incomplete = v_splat(0);
        return v_any(st->error);
    }
    for (int k = 0; k < VPB; k++) {
        st->error = v_or(st->error, utf8_errors(st, v[k]));
        st->prev = v[k];
    }
    st->incomplete = utf8_incomplete(st->prev);
    return v_any(st->error);
}

/* The scalar validator from the last character start before `b`; the
 * bytes before it are known to be valid. */
static size_t utf8_fallback(const uint8_t *s, size_t len, size_t b)
{
    size_t from = b;
    for (size_t k = 1; k <= 3 && k <= b; k++) {
        if ((s[b - k] & 0xC0) != 0x80) {
            from = b - k;
            break;
        }
    }
    return simdbpe__utf8_validate_from(s, len, from);
}

static size_t validate_utf8_simd(const uint8_t *s, size_t len)
{
    utf8_state st;
    st.prev = v_splat(0);
    st.incomplete = v_splat(0);
    st.error = v_splat(0);
    st.t_prev_high = v_table(prev_high_tbl);
    st.t_prev_low = v_table(prev_low_tbl);
    st.t_cur_high = v_table(cur_high_tbl);
    size_t b = 0;
    for (; b + BLOCK <= len; b += BLOCK)
        if (utf8_block(&st, s + b))
            return utf8_fallback(s, len, b);
    if (b < len) {
        uint8_t tail[BLOCK] = {0};
        memcpy(tail, s + b, len - b);
        if (utf8_block(&st, tail))
            return utf8_fallback(s, len, b);
    } else if (v_any(st.incomplete)) {
        return utf8_fallback(s, len, b);
    }
    return len;
}

/* ------------------------------------------------------- classification */

/*
 * Byte classes by two nibble lookups: cls = lo_tbl[c & 15] & hi_tbl[c >> 4]
 * is a set of the bits below. A class must be a product (high nibbles x
 * low nibbles), so letters take two bits:
 *
 *   LA  4x,6x with x in 1..F   (A-O, a-o)     DIG 3x with x in 0..9
 *   LB  5x,7x with x in 0..A   (P-Z, p-z)     WSC 0x with x in 9..D
 *   SP  20                                     AP  27
 *   BR  0A 0D                                  SL  2F
 *
 * Bytes 80..FF have no bits (hi_tbl is 0 there). The bits are placed so
 * that each mask takes two instructions: the letters are the two top bits,
 * and a saturating add of 0x40 carries either into bit 7 (every other bit
 * is below 0x40); any other class's bit is shifted up to bit 7 (the 16-bit
 * shift moves no bit across a byte's bit 7). Testing each class with an
 * AND and a compare to zero took 25 vector and 10 scalar instructions per
 * vector instead of 20 and 1.
 */
enum { BR = 0x01, SL = 0x02, AP = 0x04, WSC = 0x08, SP = 0x10, DIG = 0x20, LA = 0x40, LB = 0x80 };

static const uint8_t cls_lo_tbl[16] = {
    LB | DIG | SP,      /* 0 */
    LA | LB | DIG,      /* 1 */
    LA | LB | DIG,      /* 2 */
    LA | LB | DIG,      /* 3 */
    LA | LB | DIG,      /* 4 */
    LA | LB | DIG,      /* 5 */
    LA | LB | DIG,      /* 6 */
    LA | LB | DIG | AP, /* 7 */
    LA | LB | DIG,      /* 8 */
    LA | LB | DIG | WSC, /* 9 */
    LA | LB | WSC | BR, /* A */
    LA | WSC,           /* B */
    LA | WSC,           /* C */
    LA | WSC | BR,      /* D */
    LA,                 /* E */
    LA | SL,            /* F */
};

static const uint8_t cls_hi_tbl[16] = {
    WSC | BR, 0, SP | AP | SL, DIG, LA, LB, LA, LB, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Bit i set where byte i of cls has the class bit `bit` (a power of two
 * below LA): that bit shifted up to bit 7. */
#define HAS_BIT(cls, bit) ((uint64_t)v_movemask(v_shl16((cls), 7 - __builtin_ctz(bit))))

static inline void classify_block(const uint8_t *p, vec t_lo, vec t_hi,
                                  simdbpe__block_masks *m, bool ext)
{
    simdbpe__block_masks r = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < VPB; k++) {
        vec c = v_load(p + k * VBYTES);
        vec cls = v_and(v_lookup(t_lo, v_and(c, v_splat(0x0F))), v_lookup(t_hi, v_shr4(c)));
        int at = k * VBYTES;
        uint64_t space = HAS_BIT(cls, SP);
        r.letter |= (uint64_t)v_movemask(v_adds_u8(cls, v_splat(LA))) << at;
        r.digit |= HAS_BIT(cls, DIG) << at;
        r.ws |= (HAS_BIT(cls, WSC) | space) << at;
        r.space |= space << at;
        r.apos |= HAS_BIT(cls, AP) << at;
        r.high |= (uint64_t)v_movemask(c) << at;
        /* 80..BF are the signed bytes below (int8_t)0xC0 = -64. */
        r.cont |= (uint64_t)v_movemask(v_gt_s8(v_splat(0xC0), c)) << at;
        if (ext) {
            r.br |= HAS_BIT(cls, BR) << at;
            r.slash |= HAS_BIT(cls, SL) << at;
            r.lower |= (uint64_t)v_movemask(v_shl16(c, 2)) << at; /* bit 5 up to bit 7 */
        }
    }
    *m = r;
}

static inline void classify_any(const uint8_t *s, size_t len, simdbpe__block_masks *out,
                                bool ext)
{
    vec t_lo = v_table(cls_lo_tbl), t_hi = v_table(cls_hi_tbl);
    size_t b = 0;
    for (; b + BLOCK <= len; b += BLOCK)
        classify_block(s + b, t_lo, t_hi, out++, ext);
    if (b < len) {
        uint8_t tail[BLOCK] = {0};
        memcpy(tail, s + b, len - b);
        classify_block(tail, t_lo, t_hi, out, ext);
    }
}

static void classify_simd(const uint8_t *s, size_t len, simdbpe__block_masks *out)
{
    classify_any(s, len, out, false);
}

static void classify_ext_simd(const uint8_t *s, size_t len, simdbpe__block_masks *out)
{
    classify_any(s, len, out, true);
}
