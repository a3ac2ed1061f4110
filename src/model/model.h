/*
 * model.h - the in-memory model (internal).
 *
 * A model is built once (from vocab.json + merges.txt, a compiled .sbpe
 * file, or the embedded GPT-2 image) and never changes afterwards, so any
 * number of encoders on any number of threads may read it at once.
 *
 *   tokens:   id -> bytes          tok_off[id] .. tok_off[id+1] in `blob`
 *   bytes:    byte -> initial id   byte_id[256]
 *   merges:   (left id, right id) -> (rank, new id), a minimal perfect hash
 *             on the packed 64-bit key  left << 32 | right; each slot keeps
 *             its key, so a pair that is not a merge is told apart
 *   rules:    rank -> (left, right, new id)
 *   whole:    token bytes -> id, a minimal perfect hash holding only the
 *             tokens whose own bytes BPE-encode to exactly that one token,
 *             so "the whole pre-token is in this map => emit it" is exact
 *             by construction; slots keep the id and the key inline (the
 *             first 16 bytes and the length), so a hit is two compares
 *   specials: literal text -> id
 *
 * Every model is, in the end, one compiled image (compiled.c: the .sbpe
 * format): the arrays above point into it. The image is malloc'd (built
 * from text files or copied), mmap'd from a file, or the static embedded
 * GPT-2 image. While a model is being built from text files its arrays are
 * separately malloc'd (image == NULL).
 */
#ifndef SIMDBPE_MODEL_H
#define SIMDBPE_MODEL_H

#include "../common/bytelevel.h"
#include "../common/common.h"
#include "../pretok/pretok.h"

#define SIMDBPE__NO_ID UINT32_MAX

typedef struct simdbpe__merge_slot {
    uint64_t key; /* left << 32 | right */
    uint32_t rank;
    uint32_t id;
} simdbpe__merge_slot;

/* The merge of rank r: left + right -> id. */
typedef struct simdbpe__merge_rule {
    uint32_t left, right, id;
} simdbpe__merge_rule;

/* A whole token, its key inline: the first 16 bytes as two zero-padded
 * little-endian words (simdbpe__short_words) and the length, so a lookup
 * compares two words and reads the token bytes only past 16 bytes. */
typedef struct simdbpe__whole_slot {
    uint64_t lo, hi;
    uint32_t id;
    uint32_t len;
} simdbpe__whole_slot;

/* An added token (HF's added_tokens; tiktoken's special tokens): literal
 * text that is cut out of the input before pre-tokenizing. A special one
 * (SIMDBPE__ADDED_SPECIAL) is matched as the caller's special-token policy
 * says; any other one always. NORMALIZED ones are matched in the text
 * after the normalizer, the others in the raw text (HF's two passes). */
#define SIMDBPE__ADDED_SPECIAL 1u
#define SIMDBPE__ADDED_NORMALIZED 2u
/* Also a token of the BPE vocabulary (tokenizer.json's model.vocab,
 * vocab.json): what HF counts in get_vocab_size(with_added_tokens=False).
 * Reported only (simdbpe_model_special_flags); encoding ignores it. */
#define SIMDBPE__ADDED_IN_VOCAB 4u

/* `text` is what the token is matched by (HF: its content; for a
 * NORMALIZED one of a model with a normalizer, the normalized content).
 * Its token's bytes, which decoding gives, are the content mapped back
 * through the byte-level alphabet when every character of it is in it (as
 * HF's ByteLevel decoder does), else the content: "Å" (a vocabulary's
 * byte-level token of byte 0xC5) is matched by the text "Å" and decodes to
 * the byte 0xC5. A SentencePiece-style model decodes an added token as
 * `text` (simdbpe__sp_token_string), as HF does. */
typedef struct simdbpe__special {
    uint32_t id;
    uint32_t len;
    const uint8_t *text; /* points into the model's blob */
    uint32_t flags;      /* SIMDBPE__ADDED_* */
} simdbpe__special;

/* Post-processor ids added around a document on request (HF
 * TemplateProcessing's single-sequence template), at most this many each. */
#define SIMDBPE__MAX_AFFIX 3

/*
 * A minimal perfect hash (PTHash-style "hash and displace") from n distinct
 * 64-bit key hashes onto 0..n-1: a key is mixed once, x = (key ^ seed) * C;
 * it falls in bucket fastrange(x >> 32, n_buckets), and its bucket's pilot
 * p (found when the table is built) moves it to
 * fastrange(((x ^ p * D) * E) >> 32, n). Lookups cost three multiplies and
 * two reads (the pilots are small and stay in cache); keys that were not
 * in the set land somewhere, so slots must be verified.
 */
typedef struct simdbpe__mph {
    uint32_t n_keys, n_buckets;
    uint64_t seed;
    const uint32_t *pilots; /* n_buckets */
} simdbpe__mph;

static inline uint32_t simdbpe__fastrange32(uint32_t x, uint32_t n)
{
    return (uint32_t)(((uint64_t)x * n) >> 32);
}

static inline uint64_t simdbpe__mph_mix(const simdbpe__mph *h, uint64_t key)
{
    return (key ^ h->seed) * 0x9E3779B97F4A7C15ULL;
}

static inline uint32_t simdbpe__mph_bucket(const simdbpe__mph *h, uint64_t x)
{
    return simdbpe__fastrange32((uint32_t)(x >> 32), h->n_buckets);
}

static inline uint32_t simdbpe__mph_place(const simdbpe__mph *h, uint64_t x, uint32_t pilot)
{
    uint64_t y = (x ^ (uint64_t)pilot * 0xD6E8FEB86659FD93ULL) * 0xC2B2AE3D27D4EB4FULL;
    return simdbpe__fastrange32((uint32_t)(y >> 32), h->n_keys);
}

/* The slot of key hash `key` (h->n_keys > 0). */
static inline uint32_t simdbpe__mph_slot(const simdbpe__mph *h, uint64_t key)
{
    uint64_t x = simdbpe__mph_mix(h, key);
    return simdbpe__mph_place(h, x, h->pilots[simdbpe__mph_bucket(h, x)]);
}

/* How many buckets a perfect hash of n keys has (about 2 keys each). */
static inline uint32_t simdbpe__mph_buckets_for(uint32_t n)
{
    return n ? n / 2 + 1 : 0;
}

/* Builds pilots for keys[0..n) (distinct); returns 0, or -1 if out of
 * memory or no seed worked (keys not distinct). mph.c. */
int simdbpe__mph_build(simdbpe__mph *h, uint32_t **pilots, const uint64_t *keys, uint32_t n);

struct simdbpe_model {
    uint32_t vocab_size; /* max id + 1 */
    uint32_t n_tokens;   /* ids that have bytes */
    uint32_t n_merges;
    const uint32_t *tok_off; /* vocab_size + 1 offsets into blob */
    const uint8_t *tok_has;  /* vocab_size flags: 1 if the id is defined */
    const uint8_t *blob;
    size_t blob_len;
    uint32_t byte_id[256];

    simdbpe__mph merge_mph;
    const simdbpe__merge_slot *merges; /* n_merges, at their mph slot */
    const simdbpe__merge_rule *rules;  /* by rank, n_merges of them */
    const uint64_t *pair_filter;       /* in the image (malloc'd while a model is built): */
    uint32_t pair_filter_shift;        /*   simdbpe__pair_may_merge; 64 - log2(its words) */
    const uint64_t *joins;             /* 65536 bits (simdbpe__may_join): malloc'd, or static */

    simdbpe__mph whole_mph;
    const simdbpe__whole_slot *whole; /* n_whole, at their mph slot */
    uint32_t n_whole;
    int whole_exact; /* every non-special token is in `whole` */
    /* The whole tokens of up to 16 bytes in a piece table, and the byte
     * pairs, each built on first use and shared by the model's encoders
     * (ptab.c). */
    struct simdbpe__lazy *ptab, *byte_pairs;

    simdbpe__special *specials; /* malloc'd */
    size_t n_specials;
    struct simdbpe__added_trie *trie; /* the specials' texts (added.c), malloc'd */
    uint8_t has_plain_added; /* some added token is not special (always matched) */

    uint8_t pretok;        /* simdbpe__pretok_kind */
    uint8_t normalizer;    /* SIMDBPE__NORM_* */
    /* SIMDBPE__NORM_CHAIN: the chain as stored in the image
     * (normalizer.h), and compiled (owned); else NULL and 0. */
    const uint8_t *nz_image;
    size_t nz_len;
    struct simdbpe__normalizer *nz;
    /* The generic family's Splits (SIMDBPE__PRETOK_REGEX, else NULL and
     * 0): as stored in the image (regex.h), and compiled (owned). */
    const uint8_t *splits;
    size_t splits_len;
    struct simdbpe__regex *regex;
    /* HF's ignore_merges (tiktoken always): a pre-token that is a token is
     * that token, even where its merges would not build it; the whole map
     * then holds every token (not only those BPE yields from their bytes). */
    uint8_t ignore_merges;
    /* Some token in the whole map is not what BPE yields from its bytes
     * (ignore_merges with unreachable tokens): the encoder must not cut
     * pieces into parts (a part is BPE'd, a whole piece looked up, and
     * their caches are shared), so the joins are all ones. */
    uint8_t no_cuts;
    uint8_t n_prefix, n_suffix;
    uint32_t prefix[SIMDBPE__MAX_AFFIX], suffix[SIMDBPE__MAX_AFFIX];
    char *notice; /* malloc'd: what its file asked for and was not applied, or NULL */

    /* SentencePiece-style BPE (sentencepiece.c): SIMDBPE__SP_* flags, 0 for
     * byte-level BPE. Its tokens are their vocabulary strings (UTF-8 with
     * the word marker U+2581, "<0x41>" for a byte), byte_id[b] is the
     * <0xNN> token of byte b (or unk_id), and sp_chars maps a character to
     * its token (built when the model is opened). */
    uint32_t sp;
    uint8_t sp_strip;  /* the decoder's Strip(" ", start = sp_strip, stop = 0) */
    uint32_t unk_id;   /* SIMDBPE__NO_ID: none */
    struct simdbpe__sp_chars *sp_chars;

    /* storage: the compiled image the arrays point into, or NULL while the
     * arrays are separately malloc'd (a model being built) */
    const uint8_t *image;
    size_t image_len;
    enum { SIMDBPE__IMAGE_MALLOC, SIMDBPE__IMAGE_MMAP, SIMDBPE__IMAGE_STATIC } image_kind;
};

static inline const simdbpe__merge_slot *simdbpe__merge_find(const simdbpe_model *m,
                                                            uint32_t left, uint32_t right)
{
    if (SIMDBPE_UNLIKELY(m->n_merges == 0))
        return NULL;
    uint64_t key = (uint64_t)left << 32 | right;
    const simdbpe__merge_slot *s = &m->merges[simdbpe__mph_slot(&m->merge_mph, key)];
    return s->key == key ? s : NULL;
}

/*
 * The pair filter: a blocked Bloom filter of the merges' pairs, one 64-bit
 * word per pair with three of its bits set, at least one word per six
 * pairs rounded up to a power of two (128 KB for GPT-2's 50 K merges,
 * about three pairs a word). A pair whose bits are not all set is no
 * merge: BPE learns that from one load of a table that mostly stays in
 * L2, instead of the perfect hash's two dependent loads from a table six
 * times as large. Most pairs BPE had to look up in the perfect hash were
 * no merge (63% on English text, 80% on multilingual); of random pairs of
 * GPT-2 tokens that are no merge, 0.5% pass the filter (tests).
 * Built from the rules by simdbpe__merge_filters_build while a model is
 * built, and kept in its compiled image (checked when an untrusted image
 * is opened: every rule must pass).
 */
static inline uint64_t simdbpe__pair_filter_hash(uint64_t key)
{
    return (key ^ key >> 29) * 0xBF58476D1CE4E5B9ULL;
}

static inline uint64_t simdbpe__pair_filter_bits(uint64_t h)
{
    return 1ULL << (h >> 20 & 63) | 1ULL << (h >> 26 & 63) | 1ULL << (h >> 32 & 63);
}

/* 0 if the pair (left << 32 | right) is certainly no merge. */
static inline int simdbpe__pair_may_merge(const simdbpe_model *m, uint64_t key)
{
    uint64_t h = simdbpe__pair_filter_hash(key), bits = simdbpe__pair_filter_bits(h);
    return (m->pair_filter[h >> m->pair_filter_shift] & bits) == bits;
}

/*
 * The joins: bit a << 8 | b is set if some merge joins a token that ends
 * with byte a to one that begins with byte b. Every pair of adjacent bytes
 * inside a merged token was joined by one such merge, so where a word has
 * bytes a, b side by side and the bit is clear, no merge ever spans that
 * place: BPE of the word is BPE of the part before it followed by BPE of
 * the part after. The encoder cuts words there (a run of CJK characters
 * falls apart into its characters, a run of one emoji into its copies)
 * and encodes the parts as the pieces they are. 8 KB, built from the rules
 * when a model is built or opened.
 */
#define SIMDBPE__JOINS_WORDS (65536 / 64) /* the joins' 64-bit words */

static inline int simdbpe__may_join(const simdbpe_model *m, uint8_t a, uint8_t b)
{
    return (int)(m->joins[a << 2 | b >> 6] >> (b & 63) & 1);
}

/* The whole-token slot a piece with hash `hash` would be in (n_whole > 0);
 * split from the compare so the encoder can prefetch it ahead. */
static inline const simdbpe__whole_slot *simdbpe__whole_slot_of(const simdbpe_model *m,
                                                               uint64_t hash)
{
    return &m->whole[simdbpe__mph_slot(&m->whole_mph, hash)];
}

/* The id in slot w if it holds exactly the piece s[0..len) (lo and hi are
 * its first 16 bytes as simdbpe__short_words gives them), else
 * SIMDBPE__NO_ID. */
static inline uint32_t simdbpe__whole_match(const simdbpe_model *m, const simdbpe__whole_slot *w,
                                            const uint8_t *s, size_t len, uint64_t lo,
                                            uint64_t hi)
{
    if (w->lo != lo || w->hi != hi || w->len != len)
        return SIMDBPE__NO_ID;
    if (SIMDBPE_UNLIKELY(len > 16) &&
        memcmp(m->blob + m->tok_off[w->id] + 16, s + 16, len - 16) != 0)
        return SIMDBPE__NO_ID;
    return w->id;
}

/* The id of the token whose bytes are exactly s[0..len) and which BPE
 * yields on its own bytes, or SIMDBPE__NO_ID. `hash` is
 * simdbpe__piece_hash(s, len); lo, hi its first 16 bytes as
 * simdbpe__short_words gives them. */
static inline uint32_t simdbpe__whole_find(const simdbpe_model *m, const uint8_t *s, size_t len,
                                           uint64_t hash, uint64_t lo, uint64_t hi)
{
    if (SIMDBPE_UNLIKELY(m->n_whole == 0))
        return SIMDBPE__NO_ID;
    return simdbpe__whole_match(m, simdbpe__whole_slot_of(m, hash), s, len, lo, hi);
}

/* ---- hashing pre-tokens ---- */

/*
 * The hash of a piece of text, shared by the encoder's cache and the
 * model's whole-token map so a piece is hashed once. Pieces of up to 16
 * bytes are read as two little-endian words zero-padded past the end (the
 * encoder loads them with two unaligned loads) and mixed with one 64x64 ->
 * 128-bit multiply folded to 64 bits; longer pieces use XXH3.
 */
#define SIMDBPE__SHORT_PIECE 16

static inline uint64_t simdbpe__hash_short(uint64_t lo, uint64_t hi, size_t len)
{
    __uint128_t p = (__uint128_t)(lo ^ 0x9E3779B97F4A7C15ULL) *
                    (hi ^ 0xD6E8FEB86659FD93ULL ^ ((uint64_t)len << 56));
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* The zero-padded words of a piece of up to 16 bytes. */
static inline uint64_t simdbpe__le64(uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

/* s[0..len) (len <= 8) as a zero-padded little-endian word, read without
 * touching a byte outside it: two overlapping loads of 4 bytes, or up to
 * three single bytes. (Copying into a zeroed buffer and reading it back
 * costs a call and a failed store-to-load forward.) */
static inline uint64_t simdbpe__upto8(const uint8_t *s, size_t len)
{
    if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        a = __builtin_bswap32(a);
        b = __builtin_bswap32(b);
#endif
        return a | (uint64_t)b << (8 * (len - 4)); /* the overlap is the same bytes */
    }
    if (len == 0)
        return 0;
    return s[0] | (uint64_t)s[len / 2] << (8 * (len / 2)) | (uint64_t)s[len - 1] << (8 * (len - 1));
}

static inline void simdbpe__short_words(const uint8_t *s, size_t len, uint64_t *lo, uint64_t *hi)
{
    if (len <= 8) {
        *lo = simdbpe__upto8(s, len);
        *hi = 0;
    } else {
        memcpy(lo, s, 8);
        *lo = simdbpe__le64(*lo);
        *hi = simdbpe__upto8(s + 8, len - 8);
    }
}

static inline uint64_t simdbpe__piece_hash(const uint8_t *s, size_t len)
{
    if (len <= SIMDBPE__SHORT_PIECE) {
        uint64_t lo, hi;
        simdbpe__short_words(s, len, &lo, &hi);
        return simdbpe__hash_short(lo, hi, len);
    }
    return simdbpe__hash_bytes(s, len);
}

/* ---- BPE merging (bpe.c) ---- */

/*
 * The byte pairs: entry a << 8 | b of a table of 65536 is the merge of the
 * single-byte tokens of bytes a and b, as rank + 1 (0: none) and the new
 * id. Every pair a word starts with in BPE is such a pair, and the table
 * answers it with one load: no hash, compare or branch (faster than the
 * pair cache). A model builds its table when its first encoder is made
 * (simdbpe__model_byte_pairs, ptab.c), not when it is opened: a model
 * that only decodes does not pay for 512 KB of fresh pages.
 */
typedef struct simdbpe__byte_pair {
    uint32_t rank1, id;
} simdbpe__byte_pair;

/* Writes the model's byte pairs into table[] (65536 entries, zeroed by
 * the caller). */
void simdbpe__byte_pairs_fill(const simdbpe_model *m, simdbpe__byte_pair *table);

/* BPE of a word of 2..SIMDBPE__SMALL_WORD bytes with the byte pairs
 * (bpe_small.inc.h): for the baseline CPU, and for AVX2 (x86 builds),
 * which an encoder with the AVX2 kernel set puts in its scratch. */
#define SIMDBPE__SMALL_WORD 32
struct simdbpe__bpe_scratch;
typedef simdbpe_status (*simdbpe__bpe_small_fn)(const simdbpe_model *m,
                                                struct simdbpe__bpe_scratch *sc,
                                                const uint8_t *s, size_t n, uint32_t *out,
                                                size_t *n_out);
simdbpe_status simdbpe__bpe_small(const simdbpe_model *m, struct simdbpe__bpe_scratch *sc,
                                  const uint8_t *s, size_t n, uint32_t *out, size_t *n_out);
#if defined(SIMDBPE_HAVE_X86_KERNELS)
simdbpe_status simdbpe__bpe_small_avx2(const simdbpe_model *m, struct simdbpe__bpe_scratch *sc,
                                       const uint8_t *s, size_t n, uint32_t *out,
                                       size_t *n_out);
#endif

/* Scratch space for merging long words; owned by an encoder (or a model
 * build), reused across words. Zero-initialise it; free with
 * simdbpe__bpe_scratch_free. */
typedef struct simdbpe__bpe_scratch {
    const struct simdbpe__kernels *k; /* for map_bytes; NULL = scalar */
    uint32_t *syms; /* per byte position of a long word: see bpe.c */
    size_t cap;
    struct simdbpe__bpe_bucket *buckets; /* per rank: queued positions */
    uint64_t *bits;                      /* non-empty ranks */
    uint64_t *summary;                   /* bit w: bits[w] is not 0 */
    uint32_t n_buckets;
    uint32_t *used; /* the ranks whose bucket has an array, to free only those */
    size_t n_used, cap_used;
    struct simdbpe__pair_entry *pairs;   /* recent merge lookups */
    /* pairs is the owner's memory (simdbpe__bpe_lend_pairs), not freed */
    uint8_t pairs_lent;
    /* The byte pairs (simdbpe__byte_pairs_fill), not owned; NULL: the
     * pair cache answers the initial pairs too. */
    const simdbpe__byte_pair *byte_pairs;
    /* BPE of small words, or NULL: simdbpe__bpe_small. */
    simdbpe__bpe_small_fn small;
    /* The backtracking search's tables for one model (bpe.c), built on
     * the first long word of a model that allows it. */
    struct simdbpe__bpe_backtrack *backtrack;
} simdbpe__bpe_scratch;

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s);

/* The bytes of the cache of merge lookups, and a way to give a scratch
 * one in memory of the caller's (an encoder's huge-page tables: malloc'd,
 * its 64 pages of 4 KB were each a page fault on first use, which some
 * virtual machines make cost microseconds). `mem` is aligned to 16 bytes
 * and outlives the scratch's use. */
size_t simdbpe__bpe_pairs_bytes(void);
void simdbpe__bpe_lend_pairs(simdbpe__bpe_scratch *s, void *mem);

/*
 * Applies the model's merges to the bytes s[0..len) (len >= 1): starts from
 * one token per byte, merges the lowest-rank adjacent pair first (leftmost
 * on ties) until no pair has a merge. Appends the resulting ids to
 * out[*n_out ..] (the caller guarantees room for `len` ids).
 * O(len log len), or O(len x the longest token) for the long words bpe.c
 * searches instead of merging (see there). Returns SIMDBPE_OK, SIMDBPE_ERR_NOMEM, or
 * SIMDBPE_ERR_TOO_LARGE for a word of 2^31 bytes or more (a long word's
 * entries hold its symbols' lengths in 31 bits, see bpe.c).
 */
simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out);

/* The two ways bpe.c merges a long word, for tests that compare them:
 * the per-rank sweeps (any model), and the backtracking search, which
 * returns SIMDBPE_ERR_UNSUPPORTED (and appends nothing) for a model whose
 * tokens are not all what BPE makes of their own bytes. Same contract as
 * simdbpe__bpe_word otherwise (len >= 2). */
simdbpe_status simdbpe__bpe_word_queued(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                        const uint8_t *s, size_t len, uint32_t *out,
                                        size_t *n_out);
simdbpe_status simdbpe__bpe_word_backtrack(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                           const uint8_t *s, size_t len, uint32_t *out,
                                           size_t *n_out);

/* ---- SentencePiece-style BPE (sentencepiece.c) ---- */

/*
 * A tokenizer.json BPE model with byte_fallback (Llama-2, Mistral, Gemma):
 * the pre-token's characters are the initial symbols (a character that is
 * no token becomes the <0xNN> tokens of its bytes, or with no byte
 * fallback the unknown token, consecutive ones fused), merged by rank on
 * token ids as byte-level BPE is. Flags of model->sp (stored in .sbpe):
 */
#define SIMDBPE__SP_MODEL 1u          /* a SentencePiece-style model */
#define SIMDBPE__SP_BYTE_FALLBACK 2u  /* characters that are no token: <0xNN> */
#define SIMDBPE__SP_FUSE_UNK 4u       /* consecutive unknown characters: one unk */
#define SIMDBPE__SP_PREPEND 8u        /* normalizer Prepend("\u2581") */
#define SIMDBPE__SP_REPLACE 16u       /* normalizer Replace(" ", "\u2581") */
#define SIMDBPE__SP_DEC_REPLACE 32u   /* decoder Replace("\u2581", " ") */
#define SIMDBPE__SP_DEC_BYTES 64u     /* decoder ByteFallback */
/* pre-tokenizer Metaspace("\u2581"): each pre-token's spaces become
 * markers, with a marker put before it (unless it starts with one) by its
 * prepend_scheme "always", or "first" (only the pre-token at the text's
 * start), not "never"; split: cut before every marker */
#define SIMDBPE__SP_META 128u
#define SIMDBPE__SP_META_PREPEND 256u
#define SIMDBPE__SP_META_FIRST 512u
#define SIMDBPE__SP_META_SPLIT 1024u
/* decoder Metaspace("\u2581"): markers to spaces, and with a prepend_scheme
 * other than "never" the first token's markers dropped */
#define SIMDBPE__SP_DEC_META 2048u
#define SIMDBPE__SP_DEC_META_FIRST 4096u
#define SIMDBPE__SP_KNOWN 8191u

/* Builds m->sp_chars from the tokens (SIMDBPE_OK or SIMDBPE_ERR_NOMEM). */
simdbpe_status simdbpe__sp_chars_build(simdbpe_model *m);
void simdbpe__sp_chars_free(struct simdbpe__sp_chars *t);

/* The string of token `id` the decoder chain works on: its bytes, or for
 * an added token matched by other bytes (a "normalized" one, matched by
 * its normal form, whose content is in the vocabulary) that text, as HF
 * decodes it. */
void simdbpe__sp_token_string(const simdbpe_model *m, uint32_t id, const uint8_t **s,
                              size_t *len);

/* The word markers a SentencePiece-style normalizer puts in
 * *text[0..*len) (flags `sp`: Prepend("\u2581") before a text that is not
 * empty, Replace(" ", "\u2581")): unchanged, or *text and *len set to the
 * copy in *buf (grown as needed, capacity *cap; the caller frees it;
 * *text must not point into *buf). SIMDBPE_OK or SIMDBPE_ERR_NOMEM. */
simdbpe_status simdbpe__sp_normalize_into(uint32_t sp, uint8_t **buf, size_t *cap,
                                         const uint8_t **text, size_t *len);

/* The first place at or after `from` (> 0) in the normalized pre-token
 * s[0..len) before which it may be cut into parts that BPE to the ids of
 * the whole (a word marker, see sentencepiece.c; with a Metaspace split,
 * every marker), or len. */
size_t simdbpe__sp_cut_before(const simdbpe_model *m, const uint8_t *s, size_t len, size_t from);

/* Whether a Metaspace pre-tokenizer (flags `sp`) puts a marker before the
 * pre-token s[0..n) (`first`: it starts the text): its prepend_scheme
 * says so and it starts with neither a space nor a marker. */
int simdbpe__sp_meta_prepends(uint32_t sp, const uint8_t *s, size_t n, int first);

/* Whether the character s[0..l) becomes the unknown token in
 * simdbpe__sp_word: it is no token, and there is no byte fallback or one
 * of its bytes has no <0xNN> token. */
int simdbpe__sp_char_unknown(const simdbpe_model *m, const uint8_t *s, size_t l);

/* Scratch for simdbpe__sp_word, owned by an encoder; zero-initialise,
 * free with simdbpe__sp_work_free. */
typedef struct simdbpe__sp_work {
    uint32_t *id, *prev, *next; /* per symbol */
    uint64_t *heap;             /* rank << 32 | symbol */
    size_t cap, heap_cap;
} simdbpe__sp_work;
void simdbpe__sp_work_free(simdbpe__sp_work *w);

/* The ids of the pre-token s[0..len) (valid UTF-8, len >= 1), HF's BPE
 * model: appended to out[*n ..], which has room for len ids. */
simdbpe_status simdbpe__sp_word(const simdbpe_model *m, simdbpe__sp_work *w, const uint8_t *s,
                                size_t len, uint32_t *out, size_t *n);

/* ---- large temporary arrays (mph.c) ---- */

/* malloc/calloc for arrays of hundreds of KB built while loading a model:
 * on Linux they ask for transparent huge pages, because a model load
 * touches megabytes of fresh memory and each 4 KB page's first touch is a
 * fault (dear on virtual machines). Free with free(). */
void *simdbpe__model_alloc(size_t bytes);
void *simdbpe__model_calloc(size_t n, size_t size);

/* ---- added tokens (added.c) ---- */

/* Builds m->trie from m->specials: SIMDBPE_OK or SIMDBPE_ERR_NOMEM. */
simdbpe_status simdbpe__added_build(simdbpe_model *m);
void simdbpe__added_free(struct simdbpe__added_trie *t);

/* The leftmost-longest occurrence in s[0..n) of an added token whose
 * flags & mask == want; returns its offset (n if none) and sets *which to
 * its index in m->specials. */
size_t simdbpe__added_find(const simdbpe_model *m, const uint8_t *s, size_t n, uint32_t mask,
                           uint32_t want, size_t *which);

/* Whether an occurrence in s of an added token (flags & mask == want)
 * begins before p and ends after it: 1 if one does, 0 if none does, -1
 * if that depends on bytes at or past n (s[0..n) may be a prefix). */
int simdbpe__added_straddles(const simdbpe_model *m, const uint8_t *s, size_t n, size_t p,
                             uint32_t mask, uint32_t want);

/* ---- building (load.c, reach.c) ---- */

/* What BPE makes of a token's own bytes: the token (YES), something else
 * (NO), or what the rules cannot tell (ASK: run BPE). */
enum { SIMDBPE__REACH_NO, SIMDBPE__REACH_YES, SIMDBPE__REACH_ASK };

/* Sets reach[id] for every id below vocab_size of a model being built
 * (tokens, byte ids, merges and pair filter set), from the rules (reach.c):
 * SIMDBPE_OK or SIMDBPE_ERR_NOMEM. */
simdbpe_status simdbpe__reach(const simdbpe_model *m, uint8_t *reach);

/* Builds the whole-token map of a model whose tokens, byte ids, merges
 * and specials are filled in (load.c). */
simdbpe_status simdbpe__model_finish(simdbpe_model *m, simdbpe_error *err);

/* ---- compiled images (compiled.c) ---- */

/* Sets m->pair_filter and m->joins (malloc'd) from m->rules and the
 * tokens' bytes, for a model being built (an opened image has its filter
 * and builds its joins): SIMDBPE_OK or SIMDBPE_ERR_NOMEM. */
simdbpe_status simdbpe__merge_filters_build(simdbpe_model *m);

/* Serialises a model into the .sbpe format; see compiled.c. */
size_t simdbpe__image_size(const simdbpe_model *m);
void simdbpe__image_write(const simdbpe_model *m, uint8_t *out);

/* Makes *out a model over `image` (8-byte aligned), which it then owns as
 * `kind` (freed or unmapped with the model; STATIC is never freed, and on
 * failure the caller keeps ownership). `trusted` skips the checksum and
 * the checks of every table entry: for images this library wrote, the
 * embedded one at build time (whose bytes a test compares with what the
 * loader writes, and opens untrusted) or one the loader just built.
 * Hashing the embedded image's 3.5 MB would make a fresh process touch all
 * of its pages. A trusted image may come with its `joins` (else NULL: they
 * are built in a pass over the rules, which touches the rules' and
 * tokens' pages): the model then owns them as it owns the image
 * (STATIC: never freed), and on failure the caller keeps them. */
simdbpe_status simdbpe__image_open(const uint8_t *image, size_t len, int kind, int trusted,
                                   const uint64_t *joins, simdbpe_model **out,
                                   simdbpe_error *err);

/* The models embedded in the library: X(symbol prefix, name). Each has
 * PREFIX_image, PREFIX_image_len and PREFIX_joins, generated at build time
 * by gen_image. */
#define SIMDBPE__EMBEDDED_MODELS(X)                                                                \
    X(simdbpe__gpt2)                                                                               \
    X(simdbpe__p50k_base)                                                                          \
    X(simdbpe__cl100k_base)                                                                        \
    X(simdbpe__o200k_base)
#define SIMDBPE__EMBEDDED_DECLARE(sym)                                                             \
    extern const unsigned char sym##_image[];                                                      \
    extern const size_t sym##_image_len;                                                           \
    extern const uint64_t sym##_joins[SIMDBPE__JOINS_WORDS];
SIMDBPE__EMBEDDED_MODELS(SIMDBPE__EMBEDDED_DECLARE)

/* The .tiktoken encoding whose OpenAI rank file is data[0..len), by its
 * hash, or NULL (load_tiktoken.c). */
const char *simdbpe__tiktoken_name_of(const char *data, size_t len);

/* hub.c: simdbpe_model_find_pretrained; with as_model, the message for a
 * repo that is not cached also says `repo_id` is no file or directory
 * (simdbpe_model_open's wording). */
simdbpe_status simdbpe__hub_find(const char *repo_id, const char *revision, int as_model,
                                 char **path, simdbpe_error *err);
/* Whether simdbpe_model_open reads `name` (not an existing path) as
 * ORG/NAME[@REVISION] in the Hugging Face cache: a repo id with one '/'. */
int simdbpe__hub_name(const char *name);


#endif
