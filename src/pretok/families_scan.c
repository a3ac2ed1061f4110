/*
 * families_scan.c - the cl100k, Qwen2, o200k, DeepSeek-V3, Tekken and
 * Kimi K2 pre-tokenizers 64 bytes at a time: each block's bytes get the
 * classes of their characters as bitmasks, the families' rules (families.c
 * gives their regexes) become mask arithmetic, and a block the rules do
 * not cover goes one piece at a time (simdbpe__fam_piece_end).
 *
 * Classes. The kernel set classifies ASCII bytes; every multi-byte
 * character gets its class code (ucd.h: one of OTHER WS N PS M UO WO B,
 * and whether DeepSeek-V3's second Split isolates it) through the kernel
 * set's lead_codes, and all its bytes carry it, so that a byte and the one
 * before it have the classes of a character and the one before it (at a
 * character's first byte), and a continuation byte never starts a piece
 * (it has its character's class, like the byte before it).
 *
 * Rules, for cl100k (L letter, N number, W whitespace, BR \r or \n, SP ' ',
 * X any other character; each follows from the regex's alternatives tried
 * in order at a piece start):
 *
 *   L  starts unless after L, or after a prefix the letters take: a W that
 *      is no BR, or a single X (not after X or SP) -- [^\r\n\pL\pN]?\pL+;
 *   X  starts unless after X (X+ is greedy) or SP ( ?X+ takes the space);
 *      a ' that starts a piece and begins a contraction is a piece of its
 *      own, and the byte after it starts one;
 *   N  starts at the start of its run and every third digit after
 *      (\pN{1,3}; qwen2's \pN: every number);
 *   BR right after an X-run belongs to that piece ([\r\n]*), so do the
 *      BRs after it (the X-run's tail); the rest of the whitespace, W',
 *      splits as \s*[\r\n]+ | \s+(?!\S) | \s: a W' run starts a piece; so
 *      does the character after its last BR, if the run goes on; and its
 *      last character, if no BR and followed by non-whitespace (at the
 *      text's end the run keeps it).
 *
 * o200k: letters are U*W+ or U+W* (U = Lu Lt Lm Lo M, W = Ll Lm Lo M; UO
 * only U, WO only W, B both: Lm Lo and marks), then a contraction:
 *   - U*W+ takes the U run and the W run after it; an UO after the W part
 *     of a piece (after a WO, through B) starts one; an UO run that ends
 *     the letters right after a B starts one too (U* gives back to the
 *     last W in its run, and U+ takes the rest);
 *   - a contraction after letters belongs to their piece; the character
 *     after it starts one (and its U-part starts afresh);
 *   - a mark is a letter (U and W), but an X too: it joins an X-run piece
 *     ( ?X+ greedy) that has begun before it, from an X after an X or
 *     after SP (a single X before a mark is the prefix of its letters);
 *   - the tail of an X-run is [\r\n/]*: a / in it is no X to the rules.
 * Tekken: o200k's rules without contractions (an apostrophe is an X) and
 * with every number a piece. Kimi K2: o200k's rules without / in the
 * tails, for blocks without Han characters; a block with one goes one
 * piece at a time, and Han characters are in no class but N (H), so that
 * the blocks around it see one as what it is to them: no letter,
 * whitespace or X, the end of a piece ([\p{Han}]+ stops at none of those,
 * and none of them runs on into Han but an X-run into a Han symbol, which
 * is that block's to scan); a Han number keeps a run of \p{N}{1,3} going
 * into the next block, counted from where its pieces reached.
 * DeepSeek-V3: X is \p{P}\p{S}; letters are [\p{L}\p{M}]+, and an ASCII
 * punctuation character is their prefix only before ASCII letters
 * ([!-/:-@[-`{-~][A-Za-z]+: a non-ASCII letter after those starts a
 * piece); CJK runs and numbers are pieces of the earlier Splits, where a
 * piece of the third ends (whitespace before them is kept whole).
 *
 * \pN{1,3} counts characters: a run of numbers with a character of
 * several bytes has its starts counted one character at a time.
 *
 * Not covered, one piece at a time: a block with a
 * DeepSeek-V3 gap (a character no alternative takes: controls, format,
 * unassigned), a whitespace run over the whole next block, o200k's UO run
 * over the whole next block. What the rules need to know of the text
 * before a block (the `before` bits) comes from the masks of the block
 * before, whether its starts were taken from the rules or from pieces;
 * only the starts a piece from there implies (the next start, inside a
 * contraction, a run of digits) come from the pieces.
 */
#include <stdbool.h>
#include <string.h>

#include "families.h"
#include "pretok.h"

#include "common.h"
#include "ucd.h"
#include "utf8_valid.h"

enum {
    F_CL100K = SIMDBPE__FAM_CL100K,
    F_QWEN2 = SIMDBPE__FAM_QWEN2,
    F_O200K = SIMDBPE__FAM_O200K,
    F_DEEPSEEK = SIMDBPE__FAM_DEEPSEEK,
    F_TEKKEN = SIMDBPE__FAM_TEKKEN,
    F_KIMI = SIMDBPE__FAM_KIMI
};

/* The families with o200k's letter classes (U, W, marks). */
static inline int o200k_like(int fam)
{
    return fam == F_O200K || fam == F_TEKKEN || fam == F_KIMI;
}

static inline uint64_t bits_below(size_t k)
{
    return k >= 64 ? ~0ULL : (1ULL << k) - 1;
}

/* The bits of m that have a bit of x at or after them in the same run of
 * m: x spread down through the runs, 1 + 2 + 4 + ... bits. */
static inline uint64_t spread_down(uint64_t x, uint64_t m)
{
    for (int d = 1; d < 64; d <<= 1) {
        x |= (x >> d) & m;
        m &= m >> d;
    }
    return x;
}

/* The same upwards, for x within m: the bits of m at or after a bit of x
 * in its run. Adding x carries from a run's first bit of x to its end,
 * clearing the bits on the way and leaving 1 at each later bit of x
 * (1 + 1 + carry), which x restores:
 *
 *   m        0111 0111        m + x    1001 1100
 *   x        0010 0101        result   0110 0111   (x | m & ~(m + x))
 */
static inline uint64_t fill_up(uint64_t x, uint64_t m)
{
    return x | (m & ~(m + x));
}

#define EVERY_THIRD 0x9249249249249249ULL /* bits 0, 3, 6, ... 63 */

/* Bit 8k (k = 0..7) of x -> bit 56 + k of x * GATHER: the product's other
 * bits stay below 56 or carry nothing. */
#define GATHER 0x0102040810204080ULL

/* The bytes of a block below 0x20 or 0x7F (meaningless for bytes >=
 * 0x80): in each byte of 8, (x | 0x80) - 0x20 keeps bit 7 iff x >= 0x20
 * (no borrow leaves the byte), x + 1 sets it only for 0x7F. */
static inline uint64_t controls_of(const uint8_t *s, size_t len)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x80 * ones;
    uint8_t tail[64];
    if (len < 64) { /* the text's last block: no read past its end */
        memset(tail, ' ', sizeof tail);
        memcpy(tail, s, len);
        s = tail;
    }
    uint64_t r = 0;
    for (int w = 0; w < 8; w++) {
        uint64_t v;
        memcpy(&v, s + 8 * w, 8);
        uint64_t hit = (~((v | high) - 0x20 * ones) | (v + ones)) & high;
        r |= ((hit >> 7) * GATHER >> 56) << 8 * w;
    }
    return r;
}

/* ------------------------------------------------------------ classes */

/* The classes of one block (bit i: byte i), each byte carrying its
 * character's. What L and X hold differs by family. */
typedef struct fmasks {
    uint64_t valid;  /* inside the text */
    uint64_t L;      /* letters: \p{L}; DeepSeek-V3 [\p{L}\p{M}] */
    uint64_t M;      /* o200k: marks */
    uint64_t X;      /* cl100k [^\s\p{L}\p{N}]; o200k without marks; DeepSeek-V3 [\p{P}\p{S}] */
    uint64_t N, W, SP, BR, apos, slash;
    uint64_t UO, WO; /* o200k: Lu Lt; Ll */
    uint64_t CJK;    /* DeepSeek-V3: its second Split's ranges */
    uint64_t H;      /* Kimi K2: Han characters (in no other class here) */
    uint64_t AL;     /* DeepSeek-V3: ASCII letters */
    uint64_t cont;   /* continuation bytes */
    uint64_t high;   /* bytes of multi-byte characters */
    uint64_t w2, w3; /* first bytes of whitespace of 2 and 3 bytes */
    uint64_t bad;    /* characters the rules do not cover */
} fmasks;

/* The block scanner looks the codes of a block's multi-byte characters
 * up through the kernel set (the AVX2 one gathers eight at a time) when
 * it has more than KERNEL_LEADS of them, one at a time otherwise: as in
 * GPT-2's scanner (pretok.c), English has a few in many blocks. */
#define KERNEL_LEADS 8

/* Whether x has more than KERNEL_LEADS bits set (not
 * __builtin_popcountll, a libgcc call on the baseline CPU). */
static inline int over_kernel_leads(uint64_t x)
{
    for (int i = 0; i < KERNEL_LEADS; i++)
        x &= x - 1;
    return x != 0;
}

/* The classes of the block at s[b0..) from its ASCII masks m; carry[k]
 * holds bit k of the codes of the bytes of a character from the block
 * before that run on into it (carry[4]: it is Han, for Kimi K2), and gets
 * this block's. */
static SIMDBPE_ALWAYS_INLINE void block_classes(const simdbpe__kernels *k, const uint8_t *s,
                                                size_t n, size_t b0,
                                                const simdbpe__block_masks *m, int fam,
                                                uint64_t carry[5], fmasks *f)
{
    const uint64_t valid = bits_below(n - b0), hb = m->high;
    f->valid = valid;
    f->cont = m->cont;
    f->high = hb;
    f->SP = m->space;
    f->apos = m->apos;
    f->BR = m->br;
    if (!hb) {
        /* All ASCII (and no character runs on into it). */
        f->N = m->digit;
        f->W = m->ws;
        f->w2 = f->w3 = 0;
        f->bad = 0;
        f->L = m->letter;
        if (fam == F_DEEPSEEK) {
            uint64_t ctl = controls_of(s + b0, n - b0 < 64 ? n - b0 : 64) & ~m->ws & valid;
            f->AL = m->letter;
            f->X = valid & ~(m->letter | m->digit | m->ws) & ~ctl;
            f->CJK = 0;
            f->bad = ctl;
        } else {
            f->X = valid & ~(m->letter | m->digit | m->ws);
            if (o200k_like(fam)) {
                f->M = 0;
                f->UO = m->letter & ~m->lower;
                f->WO = m->letter & m->lower;
                f->slash = fam == F_KIMI ? 0 : m->slash;
                f->H = 0;
            }
        }
        return;
    }
    uint64_t p0 = carry[0], p1 = carry[1], p2 = carry[2], p3 = carry[3], H = carry[4];
    uint64_t w2 = 0, w3 = 0;
    carry[0] = carry[1] = carry[2] = carry[3] = carry[4] = 0;
    if (hb & ~m->cont) {
        uint64_t leads = hb & ~m->cont;
        simdbpe__lead_codes c;
        if (b0 + 72 <= n && over_kernel_leads(leads))
            k->lead_codes(s + b0, leads, simdbpe__ucd_codes, &c);
        else
            simdbpe__lead_codes_scalar(s + b0, leads, simdbpe__ucd_codes, &c);
        for (uint64_t four = c.four; four; four &= four - 1) {
            unsigned i = (unsigned)__builtin_ctzll(four);
            size_t len;
            uint64_t code = simdbpe__ucd_code_of(simdbpe__utf8_decode(s, b0 + i, &len));
            for (int j = 0; j < 4; j++)
                c.bit[j] |= (code >> j & 1) << i;
        }
        /* Each character's code over its bytes: a lead at i covers i+1 if
         * it has 2 bytes or more, i+2 with 3 or more, i+3 with 4. */
        const uint64_t l34 = c.three | c.four, l4 = c.four;
        uint64_t *const pl[4] = {&p0, &p1, &p2, &p3};
        for (int j = 0; j < 4; j++) {
            uint64_t x = c.bit[j];
            *pl[j] |= x | x << 1 | (x & l34) << 2 | (x & l4) << 3;
            carry[j] = x >> 63 | (x & l34) >> 62 | (x & l4) >> 61;
        }
        uint64_t ws = c.bit[0] & ~c.bit[1] & ~c.bit[2]; /* code 001 */
        w2 = ws & ~l34;
        w3 = ws & c.three;
        if (fam == F_KIMI) {
            /* Han has characters of 3 and 4 bytes only. */
            uint64_t han = 0;
            for (uint64_t x = l34; x; x &= x - 1) {
                unsigned i = (unsigned)__builtin_ctzll(x);
                size_t len;
                if (simdbpe__fam_is_han(simdbpe__utf8_decode(s, b0 + i, &len)))
                    han |= 1ULL << i;
            }
            H |= han | han << 1 | han << 2 | (han & l4) << 3;
            carry[4] = han >> 63 | han >> 62 | (han & l4) >> 61;
        }
    }
    /* The codes' classes (ucd.h): L 1x1 or 11x, M 100, N 010, WS 001, PS
     * 011, OTHER 000 (bytes of multi-byte characters only). */
    const uint64_t mL = p2 & (p1 | p0), mM = p2 & ~(p1 | p0);
    const uint64_t mN = ~p2 & p1 & ~p0, mW = ~p2 & ~p1 & p0;
    f->N = m->digit | mN;
    f->W = m->ws | mW;
    f->w2 = w2;
    f->w3 = w3;
    f->bad = 0;
    if (fam == F_DEEPSEEK) {
        uint64_t ctl = controls_of(s + b0, n - b0 < 64 ? n - b0 : 64) & ~m->ws & ~hb & valid;
        f->L = m->letter | mL | mM;
        f->AL = m->letter;
        f->X = (valid & ~hb & ~(m->letter | m->digit | m->ws) & ~ctl) | (~p2 & p1 & p0);
        f->CJK = p3;
        f->bad |= ctl | (hb & ~(p0 | p1 | p2));
    } else {
        f->L = m->letter | mL;
        f->X = valid & ~(f->L | f->N | f->W);
        if (o200k_like(fam)) {
            f->M = mM;
            f->X &= ~mM;
            f->UO = (m->letter & ~m->lower) | (p2 & ~p1 & p0);
            f->WO = (m->letter & m->lower) | (p2 & p1 & ~p0);
            f->slash = m->slash;
            f->H = H;
            if (fam == F_KIMI) {
                f->slash = 0;
                f->L &= ~H; /* Han numbers stay N: a run of digits they end */
                f->X &= ~H;
                f->M &= ~H;
                f->UO &= ~H;
                f->WO &= ~H;
                f->bad |= H;
            }
        }
    }
}

/* -------------------------------------------------------------- rules */

/* What the rules need to know of the text before a block, each 0 or 1:
 * the classes of the character of the byte before it (as the rules see
 * them: x an X that is not in a tail, o200k's marks in X-runs too; l o200k's
 * marks in letters too), and what runs through it. */
typedef struct before {
    uint64_t l, n, w, br, sp, x;
    uint64_t tail; /* in an X-run's tail */
    uint64_t wp;   /* whitespace outside a tail */
    uint64_t t;    /* the character before that one is X or SP */
    uint64_t flag; /* o200k: in the W part of a piece's letters */
    uint64_t bo;   /* o200k: a B */
    uint64_t xmode; /* o200k: in an X-run that takes marks */
    uint64_t cjk;  /* DeepSeek-V3: in a CJK run */
    uint64_t xa;   /* DeepSeek-V3: an ASCII X */
    uint64_t asc;  /* DeepSeek-V3: in the ASCII letters after an ASCII X prefix */
} before;

/* What a block hands over to the next: the text before it, and what the
 * piece reaching over it implies: the next start of a run of digits
 * (next_digit) and the starts a contraction moves (clear, set). */
typedef struct handover {
    before c;
    size_t next_digit;
    uint64_t clear, set;
} handover;

/* The tail of the X-runs (X: the X-runs' characters): the runs of T (BR,
 * or o200k's BR and /) from a BR right after an X, or going on from the
 * block before; none from a BR in `cut`. */
static inline uint64_t tail_of(uint64_t X, uint64_t BR, uint64_t T, uint64_t cut, const before *c)
{
    uint64_t first = BR & (X << 1 | c->x | c->tail) & ~cut;
    if (!(first | c->tail))
        return 0;
    first |= T & c->tail;
    return fill_up(first, T);
}

/* The contractions at the apostrophes `cand` of the block at b0 (o200k:
 * after letters, none right after a contraction: bits of `after`): the
 * starts inside them to clear and the ones after them to set, in the block
 * and in the next. */
static inline void contractions(const uint8_t *s, size_t n, size_t b0, uint64_t cand,
                                uint64_t after, int o200k, uint64_t *clear, uint64_t *set,
                                uint64_t *next_clear, uint64_t *next_set)
{
    for (; cand; cand &= cand - 1) {
        size_t k = (size_t)__builtin_ctzll(cand);
        size_t len = o200k && (after >> k & 1) ? 0 : simdbpe__fam_contraction(s, n, b0 + k);
        if (!len)
            continue;
        size_t e = k + len; /* no start inside (o200k: nor at the '), one after */
        *clear |= bits_below(e) & ~bits_below(o200k ? k : k + 1);
        if (e < 64) {
            *set |= (uint64_t)(b0 + e < n) << e;
            after = 1ULL << e;
        } else {
            *next_clear = bits_below(e - 64);
            *next_set = (uint64_t)(b0 + e < n) << (e - 64);
        }
    }
}

/* The first, fourth, seventh... bits of x: the starts of \p{N}{1,3} in
 * a run of numbers of several bytes, x its characters from a start on. */
static inline uint64_t every_third_char(uint64_t x)
{
    uint64_t at = 0;
    for (unsigned k = 0; x; x &= x - 1, k++)
        if (k % 3 == 0)
            at |= x & (0 - x);
    return at;
}

/* Where the third character after the one at s[p] begins (or a place at
 * or past n). */
static inline size_t third_char_after(const uint8_t *s, size_t n, size_t p)
{
    for (int k = 0; k < 3 && p < n; k++)
        p += s[p] < 0x80 ? 1 : s[p] < 0xE0 ? 2 : s[p] < 0xF0 ? 3 : 4;
    return p;
}

/* The starts of the block at s[b0..b0+64) (classes f; nf the next
 * block's, NULL if none), given what the text before hands over (h,
 * updated for the next block, whatever the result); false if the block
 * must be scanned one piece at a time. */
static SIMDBPE_ALWAYS_INLINE bool family_block(const uint8_t *s, size_t n, size_t b0,
                                               const fmasks *f, const fmasks *nf, int fam,
                                               int ascii, handover *h, uint64_t *out)
{
    const int o200k = o200k_like(fam), ds = fam == F_DEEPSEEK;
    const int digits3 = fam != F_QWEN2 && fam != F_TEKKEN, cx = fam == F_O200K || fam == F_KIMI;
    /* ascii: the block has no byte >= 0x80, so that the compiler drops
     * what only multi-byte characters need. */
    const uint64_t cont = ascii ? 0 : f->cont, high = ascii ? 0 : f->high;
    const uint64_t CJK = ds && !ascii ? f->CJK : 0, M = o200k && !ascii ? f->M : 0;
    const uint64_t w2 = ascii ? 0 : f->w2, w3 = ascii ? 0 : f->w3;
    const uint64_t valid = f->valid, lead = valid & ~cont;
    const uint64_t N = f->N, W = f->W, SP = f->SP, BR = f->BR, X0 = f->X;
    const uint64_t nvalid = nf ? nf->valid : 0;
    const before c = h->c;
    bool ok = (f->bad & valid) == 0;

    /* DeepSeek-V3: where a CJK run begins or ends, the regex's text does:
     * a start, and nothing before it is a prefix or an X-run's. */
    uint64_t seg = 0;
    if (ds)
        seg = (CJK ^ (CJK << 1 | c.cjk)) & lead;

    /* The letters and X-runs as the rules see them, and the tails. */
    uint64_t L = f->L, Xr, tail, xmode = 0;
    if (o200k) {
        /* A mark joins an X-run (xmode: runs of X and marks from an X
         * after an X or SP) and is a letter elsewhere. An X after a / of a
         * tail begins no such run, but the tails depend on which marks
         * are X: repeated until they agree (once, but for a tail with /
         * followed by X). */
        const uint64_t XM = X0 | M, T = BR | f->slash;
        uint64_t MX = 0;
        if (M | (nf ? nf->M : 0)) {
            const uint64_t seed = c.xmode & XM & 1;
            const uint64_t trig0 = X0 & lead & (X0 << 1 | c.x | SP << 1 | c.sp);
            uint64_t trig = trig0;
            for (;;) {
                xmode = fill_up(trig | seed, XM);
                MX = M & xmode;
                tail = tail_of(X0 | MX, BR, T, 0, &c);
                uint64_t again = trig0 & ~((f->slash & tail) << 1);
                if (again == trig)
                    break;
                trig = again;
            }
        } else {
            tail = tail_of(X0, BR, T, 0, &c);
        }
        L |= M & ~MX;
        Xr = (X0 & ~tail) | MX;
    } else {
        tail = tail_of(X0, BR, BR, seg, &c);
        Xr = X0 & ~tail;
    }
    const uint64_t pL = L << 1 | c.l;

    /* o200k's contractions come first: the case rule starts afresh after
     * them. */
    uint64_t c_clear = 0, c_set = 0, next_clear = 0, next_set = 0;
    if (cx)
        contractions(s, n, b0, f->apos & ~h->clear & pL, h->set, 1, &c_clear, &c_set,
                     &next_clear, &next_set);

    /* The character two back is X or SP (the single X before letters):
     * at each first byte whether the one before is, carried over each
     * character's bytes, read one byte on. */
    const uint64_t XS = Xr | SP;
    uint64_t t = ((XS << 1 | c.x | c.sp) & lead & ~seg) | (c.t & cont & 1);
    if (!ascii) {
        t |= (t << 1) & cont;
        t |= (t << 1) & cont;
        t |= (t << 1) & cont;
    }
    const uint64_t ppXS = t << 1 | c.t;

    const uint64_t pW = W << 1 | c.w, pBR = BR << 1 | c.br, pX = Xr << 1 | c.x;
    const uint64_t pSP = SP << 1 | c.sp;
    uint64_t starts, asc = 0, xa = 0;
    if (ds) {
        /* An ASCII X before ASCII letters takes them, no more. */
        xa = Xr & ~high;
        uint64_t absorb = f->AL & (xa << 1 | c.xa) & ~ppXS;
        starts = L & ~pL & ~((pW & ~pBR) | absorb);
        asc = fill_up(absorb | (c.asc & f->AL & 1), f->AL);
        starts |= L & ~f->AL & (asc << 1 | c.asc);
    } else {
        starts = L & ~pL & ~((pW & ~pBR) | (pX & ~ppXS));
    }

    /* o200k: where the case ends a piece of letters. */
    uint64_t flagged = 0, Bo = 0;
    if (o200k) {
        const uint64_t UO = f->UO, WO = f->WO;
        Bo = ascii ? 0 : L & ~UO & ~WO;
        /* A B where a piece is forced to start breaks the W part. */
        const uint64_t Wm = WO | (Bo & ~(c_set | h->set));
        flagged = fill_up(WO | (c.flag & Wm & 1), Wm);
        const uint64_t pflag = flagged << 1 | c.flag;
        starts |= UO & pflag;
        uint64_t sfx = UO & (Bo << 1 | c.bo) & ~pflag;
        if (sfx) {
            /* The UO runs that end the letters. */
            const uint64_t nUO = nf ? nf->UO & nvalid : 0;
            const uint64_t nL = nf ? (nf->L | nf->M) & nvalid : 0;
            uint64_t end = UO & ~(UO >> 1 | nUO << 63) & ~(L >> 1 | nL << 63);
            if ((UO >> 63) && (nUO & 1)) {
                size_t r = ~nUO ? (size_t)__builtin_ctzll(~nUO) : 64;
                if (r == 64)
                    ok = false;
                else if (!(nL >> r & 1))
                    end |= 1ULL << 63;
            }
            starts |= sfx & spread_down(end, UO);
        }
    }

    starts |= Xr & ~pX & ~pSP;
    const uint64_t Wp = W & ~tail;
    const uint64_t pWp = Wp << 1 | c.wp;
    starts |= Wp & ~pWp;

    /* Where the whitespace run at the block's end goes on: whether a BR
     * follows in it (later_br). */
    uint64_t later_br = 0;
    const size_t e0 = b0 + 64;
    if ((Wp >> 63) && e0 < n && nf && (nf->W & 1)) {
        uint64_t ws = nf->W & nvalid;
        size_t run = ~ws ? (size_t)__builtin_ctzll(~ws) : 64;
        if (run == 64 && e0 + 64 < n)
            ok = false; /* it runs on past the next block */
        later_br = (nf->BR & bits_below(run)) != 0;
    }
    /* The last whitespace character before non-whitespace (DeepSeek-V3:
     * not before a number or CJK, where its Split piece ends). */
    uint64_t nonws = valid & ~W, next_nonws = nf ? nvalid & ~nf->W : 0;
    if (ds) {
        nonws &= ~(N | CJK);
        next_nonws &= ~(nf ? nf->N | nf->CJK : 0);
    }
    const uint64_t last = (Wp & ~high & (nonws >> 1 | next_nonws << 63)) |
                          (w2 & (nonws >> 2 | next_nonws << 62)) |
                          (w3 & (nonws >> 3 | next_nonws << 61));
    starts |= last & ~BR;
    const uint64_t after_br = Wp & ~BR & (pBR & (Wp << 1 | c.wp));
    if (after_br) {
        uint64_t later = spread_down((BR & Wp) | (later_br << 63 & Wp), Wp);
        starts |= after_br & ~later;
    }

    size_t next_digit = 0;
    if (N && !(f->bad & N)) {
        if (!digits3) {
            starts |= N & lead;
        } else {
            for (uint64_t rest = N; rest;) {
                uint64_t low = rest & (0 - rest), run = rest & ~(rest + low);
                size_t r = (size_t)__builtin_ctzll(low);
                if (r == 0 && c.n)
                    r = h->next_digit - b0; /* a run from the block before */
                /* ASCII digits: a character a byte */
                uint64_t at = !(run & high) ? r < 64 ? (EVERY_THIRD << r) & run : 0
                                            : every_third_char(run & lead & ~bits_below(r));
                if (run >> 63) /* on into the next block, in characters of any length */
                    next_digit = at ? third_char_after(s, n, b0 + 63 - (size_t)__builtin_clzll(at))
                                    : h->next_digit;
                starts |= at;
                rest &= ~run;
            }
        }
    }
    starts |= seg;
    starts = ((starts & ~h->clear) | h->set) & lead;
    /* cl100k's contractions: at a piece start. */
    if (!o200k && !ds)
        contractions(s, n, b0, f->apos & ~h->clear & starts, 0, 0, &c_clear, &c_set,
                     &next_clear, &next_set);
    *out = (starts & ~c_clear) | c_set;

    h->c = (before){.l = L >> 63,
                    .n = N >> 63,
                    .w = W >> 63,
                    .br = BR >> 63,
                    .sp = SP >> 63,
                    .x = Xr >> 63,
                    .tail = tail >> 63,
                    .wp = Wp >> 63,
                    .t = t >> 63,
                    .flag = flagged >> 63,
                    .bo = Bo >> 63,
                    .xmode = xmode >> 63,
                    .cjk = CJK >> 63,
                    .xa = xa >> 63,
                    .asc = asc >> 63};
    h->next_digit = next_digit;
    h->clear = next_clear;
    h->set = next_set;
    return ok;
}

/* -------------------------------------------------------- the scanner */

/* What st->fam holds between chunks. */
typedef struct scan_state {
    uint64_t carry[5]; /* block_classes' carry into the next chunk's first block */
    handover h;        /* from the last block scanned */
    size_t last;       /* the last piece start set */
    size_t pend;       /* the piece start where the pieces scanned one at a time reached */
} scan_state;
_Static_assert(sizeof(scan_state) <= sizeof(((simdbpe__pretok_state *)0)->fam),
               "the family scanner's state does not fit in simdbpe__pretok_state");

/* The blocks of a chunk by the rules where they can, one piece at a time
 * elsewhere. */
static SIMDBPE_ALWAYS_INLINE void scan_chunk(simdbpe__pretok_state *st, size_t lo, size_t hi,
                                             uint64_t *starts, int fam)
{
    scan_state *ss = (scan_state *)(void *)st->fam;
    const uint8_t *s = st->s;
    const size_t n = st->n;
    simdbpe__block_masks m[SIMDBPE__PRETOK_CHUNK + 1];
    fmasks f[SIMDBPE__PRETOK_CHUNK + 1];
    const size_t nb = (hi - lo + 63) / 64;
    const size_t to = lo + 64 * (nb + 1) < n ? lo + 64 * (nb + 1) : n;
    /* The masks with \r\n, / and the case for every family: finding the
     * line breaks among the whitespace byte by byte measured slower, even
     * on English. */
    st->k->classify_ext(s + lo, to - lo, m);
    const size_t have = (to - lo + 63) / 64;
    uint64_t carry[5];
    memcpy(carry, ss->carry, sizeof carry);
    for (size_t b = 0; b < have; b++) {
        block_classes(st->k, s, n, lo + 64 * b, &m[b], fam, carry, &f[b]);
        if (b + 1 == nb)
            memcpy(ss->carry, carry, sizeof carry);
    }
    handover h = ss->h;
    for (size_t b = 0; b < nb; b++) {
        const size_t b0 = lo + 64 * b, end = b0 + 64 < n ? b0 + 64 : n;
        if (ss->pend >= b0) {
            /* Pieces scanned one at a time reached ss->pend: a start, and
             * none before it. */
            h.clear = bits_below(ss->pend - b0);
            h.set = ss->pend - b0 < 64 ? 1ULL << (ss->pend - b0) : 0;
            h.next_digit = ss->pend;
        }
        uint64_t got;
        const fmasks *nf = b + 1 < have ? &f[b + 1] : NULL;
        if (f[b].high ? family_block(s, n, b0, &f[b], nf, fam, 0, &h, &got)
                      : family_block(s, n, b0, &f[b], nf, fam, 1, &h, &got)) {
            starts[b] |= got;
            if (got)
                ss->last = b0 + 63 - (size_t)__builtin_clzll(got);
            continue;
        }
        /* One piece at a time, from the last start (whose piece ends in or
         * past this block) or where they reached. */
        size_t i = ss->pend >= b0 ? ss->pend : ss->last;
        while (i < end) {
            if (i >= lo)
                starts[(i - lo) >> 6] |= 1ULL << ((i - lo) & 63);
            ss->last = i;
            i = simdbpe__fam_piece_end(fam, s, n, i);
        }
        ss->pend = i;
    }
    ss->h = h;
}

void simdbpe__fam_scan(int fam, simdbpe__pretok_state *st, size_t lo, size_t hi,
                       uint64_t *starts)
{
    /* One scanner compiled for each family: `fam` a constant in each. */
#define SCAN_AS(f)                                                                                 \
    case f:                                                                                        \
        scan_chunk(st, lo, hi, starts, f);                                                         \
        break;
    switch (fam) {
        SCAN_AS(F_CL100K)
        SCAN_AS(F_QWEN2)
        SCAN_AS(F_O200K)
        SCAN_AS(F_TEKKEN)
        SCAN_AS(F_KIMI)
    default:
        scan_chunk(st, lo, hi, starts, F_DEEPSEEK);
        break;
    }
#undef SCAN_AS
}
