/*
 * bpe.c - applying a model's merges to one word (pre-token).
 *
 * BPE semantics: start from one symbol per byte; repeatedly merge the
 * adjacent pair with the lowest rank, the leftmost one among equal ranks
 * (HF word.rs and tiktoken agree), until no adjacent pair has a merge.
 *
 * Three implementations of that one rule, chosen by word length (and,
 * for the last, by the model and the word's bytes):
 *
 *   short words (<= SHORT_WORD bytes, nearly every cache miss in text):
 *     a slot per byte position on the stack (symbol id, links, the key of
 *     its pair with the next symbol); each step scans the keys for the
 *     lowest rank and relinks. O(n^2) but n is small, the scan runs eight
 *     independent minimums and everything is in L1.
 *
 *   long words (a 5 MB run of digits, letters, spaces, one emoji...):
 *     one 4-byte entry per byte position that gives a symbol's id where
 *     it starts and its length at its second and last bytes (see "long
 *     words" below); candidate pairs in one bucket of positions per rank,
 *     merged rank by rank in left-to-right sweeps. Entries go stale when a
 *     neighbour changes; an entry is applied only if its pair is still
 *     the rank's pair (model->rules[rank]). Each merge queues at most two
 *     entries, so a word of n bytes costs O(n log n) at worst (sorting a
 *     bucket) and memory is O(n): 8 to 12 bytes a byte at first.
 *
 *   very long words of a model whose every token is BPE of its own bytes:
 *     no merging at all, a search for the one sequence of tokens whose
 *     every adjacent pair BPE would leave as it is (see "backtracking"
 *     below): a bit per byte beside the output ids.
 *
 * A merge never creates a pair of its own rank (the new symbol's bytes are
 * longer than either input's), which is what makes per-rank queues exact.
 */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "../../kernels/kernels.h"
#include "model.h"

#define PREFETCH 16 /* entries ahead in a sweep (the best on long words: bench/README.md) */
#define SHORT_WORD 64

/* Words of up to SMALL_WORD bytes: bpe_small.inc.h, here for the
 * baseline CPU (bpe_small_avx2.c builds it for AVX2). */
#define SMALL_WORD SIMDBPE__SMALL_WORD
#define SIMDBPE__BPE_SMALL_FN simdbpe__bpe_small
#include "bpe_small.inc.h"

typedef struct simdbpe__bpe_bucket {
    uint32_t *pos; /* left positions of queued pairs of one rank */
    uint32_t n, cap;
} bucket;

#include "bpe_pairs.h"

/* Frees the buckets and their arrays. Only the buckets that got an array
 * are visited: reading all n_merges of them would fault in the whole
 * (mostly untouched) calloc'd table, 200 page faults for GPT-2. */
static void free_buckets(simdbpe__bpe_scratch *s)
{
    /* A rank may be listed twice (see release_bucket): NULL after free. */
    for (size_t i = 0; s->buckets && i < s->n_used; i++) {
        free(s->buckets[s->used[i]].pos);
        s->buckets[s->used[i]].pos = NULL;
    }
    free(s->used);
    free(s->buckets);
    free(s->bits);
    free(s->summary);
    s->summary = NULL;
    s->used = NULL;
    s->n_used = s->cap_used = 0;
    s->buckets = NULL;
    s->bits = NULL;
    s->n_buckets = 0;
}

static void bt_free(struct simdbpe__bpe_backtrack *t);

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s)
{
    if (!s->pairs_lent)
        free(s->pairs);
    free(s->syms);
    free_buckets(s);
    bt_free(s->backtrack);
    const struct simdbpe__kernels *k = s->k;
    const simdbpe__byte_pair *byte_pairs = s->byte_pairs;
    simdbpe__bpe_small_fn small = s->small;
    memset(s, 0, sizeof *s);
    s->k = k;
    s->byte_pairs = byte_pairs;
    s->small = small;
}

size_t simdbpe__bpe_pairs_bytes(void)
{
    return sizeof(pair_entry) << PAIR_BITS;
}

void simdbpe__bpe_lend_pairs(simdbpe__bpe_scratch *s, void *mem)
{
    if (!s->pairs_lent)
        free(s->pairs);
    s->pairs = mem;
    s->pairs_lent = 1;
    memset(s->pairs, 0xFF, sizeof(pair_entry) << PAIR_BITS); /* every entry empty */
}

void simdbpe__byte_pairs_fill(const simdbpe_model *m, simdbpe__byte_pair *table)
{
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        uint32_t l0 = m->tok_off[u->left], r0 = m->tok_off[u->right];
        if (m->tok_off[u->left + 1] - l0 != 1 || m->tok_off[u->right + 1] - r0 != 1)
            continue;
        uint8_t a = m->blob[l0], b = m->blob[r0];
        /* The tokens BPE starts from (two ids could have the same byte);
         * the last of a repeated rule wins, as in the perfect hash. */
        if (u->left == m->byte_id[a] && u->right == m->byte_id[b])
            table[a << 8 | b] = (simdbpe__byte_pair){r + 1, u->id};
    }
}

/* ------------------------------------------------------------ short words */

/*
 * A short word keeps one slot per byte position. The symbol starting at
 * position i has id[i] and runs to next[i]; its pair with the following
 * symbol has key[i] = rank << 6 | i (positions < 64), so the smallest key
 * is the lowest rank, leftmost on ties. A pair that is not a merge has a
 * key >= NO_PAIR (rank NONE shifted), as have positions inside merged
 * symbols and the padding. A merge rewrites three keys, nothing moves.
 * Keys fit 32 bits while ranks are below 2^26 - 1: simdbpe__bpe_word sends
 * the words of a model with 2^26 merges or more (merges.txt may list
 * more lines than there are ids) to the long-word path.
 */
#define NO_PAIR ((uint32_t)NONE << 6)
#define KEY_PAD 8 /* keys are scanned 8 at a time */

static inline uint32_t pair_key(uint32_t rank, size_t pos)
{
    return rank << 6 | (uint32_t)pos; /* rank NONE gives a key >= NO_PAIR */
}

/* The smallest of key[0..n), n a multiple of KEY_PAD: eight independent
 * minimums, so the compares do not wait on each other. */
static inline uint32_t min_key(const uint32_t *key, size_t n)
{
    uint32_t m[KEY_PAD];
    for (size_t j = 0; j < KEY_PAD; j++)
        m[j] = key[j];
    for (size_t i = KEY_PAD; i < n; i += KEY_PAD)
        for (size_t j = 0; j < KEY_PAD; j++)
            m[j] = key[i + j] < m[j] ? key[i + j] : m[j];
    uint32_t best = m[0];
    for (size_t j = 1; j < KEY_PAD; j++)
        best = m[j] < best ? m[j] : best;
    return best;
}

/* Sets the key (and merged id) of the pair of the symbols at l and r. */
static inline void set_pair(const simdbpe_model *m, simdbpe__bpe_scratch *sc, const uint32_t *id,
                            uint32_t *key, uint32_t *made, size_t l, size_t r)
{
    pair_entry p = pair_find(m, sc, id[l], id[r]);
    key[l] = pair_key(p.rank, l);
    made[l] = p.id;
}

static simdbpe_status bpe_short(const simdbpe_model *m, simdbpe__bpe_scratch *sc,
                                const uint8_t *s, size_t n, uint32_t *out, size_t *n_out)
{
    uint32_t id[SHORT_WORD], made[SHORT_WORD], key[SHORT_WORD + KEY_PAD];
    uint8_t next[SHORT_WORD], prev[SHORT_WORD];
    for (size_t i = 0; i < n; i++) {
        id[i] = m->byte_id[s[i]];
        next[i] = (uint8_t)(i + 1);
        prev[i] = (uint8_t)(i - 1); /* 0xFF for the first */
    }
    size_t padded = (n + KEY_PAD - 1) / KEY_PAD * KEY_PAD;
    for (size_t i = n - 1; i < padded; i++)
        key[i] = UINT32_MAX;
    /* The initial pairs are byte pairs (model.h); 0 - 1 is NONE. */
    if (SIMDBPE_LIKELY(sc->byte_pairs != NULL)) {
        for (size_t i = 0; i + 1 < n; i++) {
            simdbpe__byte_pair bp = sc->byte_pairs[s[i] << 8 | s[i + 1]];
            key[i] = pair_key(bp.rank1 - 1, i);
            made[i] = bp.id;
        }
    } else {
        for (size_t i = 0; i + 1 < n; i++)
            set_pair(m, sc, id, key, made, i, i + 1);
    }
    for (;;) {
        uint32_t best = min_key(key, padded);
        if (best >= NO_PAIR)
            break;
        size_t at = best & 63, gone = next[at], after = next[gone];
        /* The symbol at `gone` joins the one at `at`. */
        id[at] = made[at];
        key[gone] = UINT32_MAX;
        next[at] = (uint8_t)after;
        if (after < n) {
            prev[after] = (uint8_t)at;
            set_pair(m, sc, id, key, made, at, after);
        } else {
            key[at] = UINT32_MAX;
        }
        if (at > 0)
            set_pair(m, sc, id, key, made, prev[at], at);
    }
    for (size_t i = 0; i < n; i = next[i])
        out[(*n_out)++] = id[i];
    return SIMDBPE_OK;
}

/* ------------------------------------------------------------- long words */

/*
 * Long words are merged rank by rank, each rank in one left-to-right sweep,
 * which touches the symbols in increasing position order (prefetchable)
 * instead of jumping around a 5 MB word as a global heap would.
 *
 * Why it is exact: at the start of the sweep of rank r no pair of a lower
 * rank exists (all were merged in earlier sweeps), so the leftmost pair of
 * rank r is the one BPE merges next. A merge changes only the pairs on
 * either side of it. A new pair of a rank above r waits in its bucket; a
 * new pair of rank r or lower (rank r can appear only after a lower-rank
 * merge) goes into a small local heap, and the next merge is always the
 * smallest (rank, position) among the heap's top and the sweep's next
 * entry: again exactly the pair BPE picks. Buckets are filled in increasing
 * position order within each sweep; a bucket is sorted when its sweep
 * starts if it is not sorted already.
 */
/*
 * The symbols of a long word of n bytes: a doubly linked list whose
 * links are lengths, one 4-byte entry per byte position. A symbol of the
 * bytes [a, c) has its id at a; if it is two bytes or longer, the entries
 * at a + 1 and at c - 1 (the same one for two bytes) are TAG | (c - a),
 * and any entry between them is some TAG value. So the symbol after the
 * one at a starts at a + 1 if entry a + 1 is an id, else at a + its
 * length; the one before at a - 1 if entry a - 1 is an id, else at a -
 * its length. Ids are below 2^24 (the loaders' limit) and never look like
 * a TAG entry, which is what makes an entry queued for a position inside
 * a symbol stale.
 *
 * Nodes of id, prev and next took 12 bytes a position, three times as
 * much for the sweeps to read at scattered places (bench/README.md).
 */
#define TAG 0x80000000u
#define MAX_LONG_WORD (TAG - 1) /* lengths must fit in a TAG entry */

/* Where the symbol after the one at a starts (n at the end). */
static inline uint32_t sym_next(const uint32_t *sym, uint32_t n, uint32_t a)
{
    if (a + 1 >= n)
        return n;
    uint32_t v = sym[a + 1];
    return v & TAG ? a + (v & ~TAG) : a + 1;
}

/* Where the symbol before the one at a starts (a > 0). */
static inline uint32_t sym_prev(const uint32_t *sym, uint32_t a)
{
    uint32_t v = sym[a - 1];
    return v & TAG ? a - (v & ~TAG) : a - 1;
}

static int reserve_long(const simdbpe_model *m, simdbpe__bpe_scratch *s, size_t n)
{
    if (n > s->cap) {
        /* Large words are swept many times at scattered positions: ask
         * for huge pages so the TLB covers them (and page faults are few). */
        size_t cap = n < 4096 ? 4096 : n;
        size_t bytes = (cap * sizeof *s->syms + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
        uint32_t *syms = aligned_alloc(2u << 20, bytes);
        if (!syms)
            return -1;
#if defined(MADV_HUGEPAGE)
        madvise(syms, bytes, MADV_HUGEPAGE);
#endif
        free(s->syms);
        s->syms = syms;
        s->cap = bytes / sizeof *s->syms;
    }
    if (s->n_buckets != m->n_merges || !s->buckets) {
        free_buckets(s);
        s->n_buckets = m->n_merges;
        size_t words = ((size_t)m->n_merges + 63) / 64;
        s->buckets = calloc(m->n_merges ? m->n_merges : 1, sizeof *s->buckets);
        s->bits = calloc(words ? words : 1, sizeof *s->bits);
        s->summary = calloc(words / 64 + 1, sizeof *s->summary);
        if (!s->buckets || !s->bits || !s->summary) {
            free_buckets(s);
            return -1;
        }
    }
    return 0;
}

/*
 * Memory: a word of n bytes holds its n entries plus the queued pairs, at
 * most n - 1 when the sweeps start (4n bytes for a run of one letter) and
 * fewer once merged. A bucket's array is freed after its sweep when it
 * has grown large (BIG_BUCKET), and the entries after the word when they
 * are (BIG_WORD), so that one long word does not leave its peak behind in
 * the encoder: 50 MB of one letter peaked at 18 times its size before.
 */
#define BIG_BUCKET (1u << 16)
#define HUGE_BUCKET (1u << 19) /* entries: 2 MB */
#define BIG_WORD (4u << 20)

/* Gives the pages of b->pos[0..i) back to the system while its sweep
 * goes on (they are not read again): the queues that the sweep fills
 * then take about the room it frees. */
#define RELEASE_STEP (1u << 18) /* entries, 1 MB */
static void release_read(bucket *b, uint32_t i)
{
#if defined(MADV_DONTNEED)
    uintptr_t from = ((uintptr_t)b->pos + 4095) & ~(uintptr_t)4095;
    uintptr_t to = (uintptr_t)(b->pos + i) & ~(uintptr_t)4095;
    if (to > from)
        madvise((void *)from, to - from, MADV_DONTNEED);
#else
    (void)b;
    (void)i;
#endif
}

static void release_bucket(bucket *b)
{
    free(b->pos);
    b->pos = NULL;
    b->n = b->cap = 0; /* the next array lists the rank again in s->used */
}

/* Makes room in bucket b (of rank r) for one more position. */
static int bucket_grow(simdbpe__bpe_scratch *s, bucket *b, uint32_t r)
{
    /* A bucket's first array is recorded in s->used (for freeing); the
     * room for that is made first, so no failure half-records it. */
    int first = b->pos == NULL;
    if (first && simdbpe__grow((void **)&s->used, &s->cap_used, s->n_used + 1, sizeof *s->used))
        return -1;
    size_t cap = b->cap;
    if (cap >= HUGE_BUCKET) {
        /* Past 2 MB, arrays of whole huge pages: on 4 KB pages a long
         * run of one letter spends much of its time in page faults. */
        size_t bytes = 2 * cap * sizeof *b->pos;
        uint32_t *pos = cap <= UINT32_MAX / 2 ? aligned_alloc(2u << 20, bytes) : NULL;
        if (!pos)
            return -1;
#if defined(MADV_HUGEPAGE)
        madvise(pos, bytes, MADV_HUGEPAGE);
#endif
        memcpy(pos, b->pos, b->n * sizeof *pos);
        free(b->pos);
        b->pos = pos;
        b->cap = (uint32_t)(2 * cap);
        return 0;
    }
    if (simdbpe__grow((void **)&b->pos, &cap, (size_t)b->n + 1, sizeof *b->pos) ||
        cap > UINT32_MAX)
        return -1;
    b->cap = (uint32_t)cap;
    if (first)
        s->used[s->n_used++] = r;
    return 0;
}

/* Appends position `pos` to rank r's bucket. Inline, with the growing
 * apart: it runs twice per merge of a long word (5 MB of digits: 25 -> 30
 * MB/s). */
static inline int bucket_add(simdbpe__bpe_scratch *s, uint32_t r, uint32_t pos)
{
    bucket *b = &s->buckets[r];
    if (SIMDBPE_UNLIKELY(b->n == b->cap) && bucket_grow(s, b, r))
        return -1;
    b->pos[b->n++] = pos;
    s->bits[r / 64] |= 1ULL << (r % 64);
    s->summary[r / 4096] |= 1ULL << (r / 64 % 64);
    return 0;
}

/* Marks rank r's bucket empty. */
static inline void rank_clear(simdbpe__bpe_scratch *s, uint32_t r)
{
    if (!(s->bits[r / 64] &= ~(1ULL << (r % 64))))
        s->summary[r / 4096] &= ~(1ULL << (r / 64 % 64));
}

/* The first non-empty rank at or after r, or NONE. The summary's bit w
 * says whether bits[w] has any: a word of a few hundred bytes has that
 * many ranks among o200k's 200 K, and scanning the 3 K words of bits
 * from each to the next dominated its merging (bench/README.md). */
static uint32_t next_rank(const simdbpe__bpe_scratch *s, uint32_t r)
{
    size_t words = ((size_t)s->n_buckets + 63) / 64;
    size_t w = r / 64;
    if (w >= words)
        return NONE;
    uint64_t bits = s->bits[w] & (~0ULL << (r % 64));
    if (bits)
        return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
    /* The next word with a bit, through the summary. */
    size_t sw = ++w / 64, n_summary = words / 64 + 1;
    if (w >= words)
        return NONE;
    uint64_t sum = s->summary[sw] & (~0ULL << (w % 64));
    while (!sum) {
        if (++sw >= n_summary)
            return NONE;
        sum = s->summary[sw];
    }
    w = sw * 64 + (size_t)__builtin_ctzll(sum);
    return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(s->bits[w]));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The local heap of pairs of rank <= the sweep's rank (usually tiny). */
typedef struct local_heap {
    uint64_t *k;
    size_t n, cap;
} local_heap;

static int local_push(local_heap *h, uint64_t key)
{
    if (h->n == h->cap && simdbpe__grow((void **)&h->k, &h->cap, h->n + 1, sizeof *h->k))
        return -1;
    size_t i = h->n++;
    while (i > 0 && h->k[(i - 1) / 2] > key) {
        h->k[i] = h->k[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->k[i] = key;
    return 0;
}

static uint64_t local_pop(local_heap *h)
{
    uint64_t top = h->k[0], last = h->k[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->k[c + 1] < h->k[c])
            c++;
        if (last <= h->k[c])
            break;
        h->k[i] = h->k[c];
        i = c;
    }
    if (h->n > 0)
        h->k[i] = last;
    return top;
}

/* Queues the pair (left at pos, its right neighbour) if it is a merge:
 * into the local heap if its rank is <= r, else into its bucket. */
static inline int queue_pair(const simdbpe_model *m, simdbpe__bpe_scratch *s, local_heap *h,
                             uint32_t r, uint32_t pos, uint32_t left, uint32_t right)
{
    pair_entry p = pair_find(m, s, left, right);
    if (p.rank == NONE)
        return 0;
    if (p.rank <= r)
        return local_push(h, (uint64_t)p.rank << 32 | pos);
    return bucket_add(s, p.rank, pos);
}

/* queue_pair, for a pair that only matters if it merges in this sweep. */
static inline int queue_now(const simdbpe_model *m, simdbpe__bpe_scratch *s, local_heap *h,
                            uint32_t r, uint32_t pos, uint32_t left, uint32_t right)
{
    pair_entry p = pair_find(m, s, left, right);
    return p.rank != NONE && p.rank <= r ? local_push(h, (uint64_t)p.rank << 32 | pos) : 0;
}

/* Applies the merge of rank r at pos of a word of n bytes if the pair
 * there is still its pair, and queues the two pairs it changes. Returns
 * -1 when out of memory. */
static int apply(const simdbpe_model *m, simdbpe__bpe_scratch *s, local_heap *h, uint32_t n,
                 uint32_t sweep, uint32_t r, uint32_t pos)
{
    uint32_t *sym = s->syms;
    const simdbpe__merge_rule *rule = &m->rules[r];
    if (sym[pos] != rule->left)
        return 0; /* stale: a neighbour changed since it was queued */
    uint32_t nx = sym_next(sym, n, pos);
    if (nx == n || sym[nx] != rule->right)
        return 0;
    uint32_t end = sym_next(sym, n, nx);
    sym[pos] = rule->id;
    sym[nx] = sym[pos + 1] = sym[end - 1] = TAG | (end - pos);
    if (pos > 0) {
        uint32_t pv = sym_prev(sym, pos);
        if (queue_pair(m, s, h, sweep, pv, sym[pv], sym[pos]))
            return -1;
    }
    if (end < n) {
        /* If the pair at `end` is of this sweep's rank, it merges in this
         * sweep (every pair of that rank is queued) and queues its own left
         * pair: the pair (new symbol, sym[end]) is stale before its turn
         * unless it merges first, in this sweep (rank <= sweep). Not
         * queueing it halves the queues of a run of one letter. */
        const simdbpe__merge_rule *cur = &m->rules[sweep];
        uint32_t after = sym_next(sym, n, end);
        int doomed = after < n && sym[end] == cur->left && sym[after] == cur->right;
        if (doomed ? queue_now(m, s, h, sweep, pos, sym[pos], sym[end])
                   : queue_pair(m, s, h, sweep, pos, sym[pos], sym[end]))
            return -1;
    }
    return 0;
}

/* Empties every bucket (after a failure, so the scratch stays usable). */
static void drain(simdbpe__bpe_scratch *s)
{
    for (uint32_t r = next_rank(s, 0); r != NONE; r = next_rank(s, r + 1)) {
        s->buckets[r].n = 0;
        if (s->buckets[r].cap > BIG_BUCKET)
            release_bucket(&s->buckets[r]);
        rank_clear(s, r);
    }
}

/* Prefetches what a merge at pos reads: its entry, the entries of its
 * left neighbour and of the two symbols to its right, a few entries
 * apart: the lines of 16 bytes before the entry and 32 after it (two
 * lines beat one on long words: bench/README.md). The addresses are integers: one may be before the array, which
 * a prefetch does not mind but a C pointer may not point to. */
static inline void prefetch_merge(const uint32_t *sym, uint32_t pos)
{
    uintptr_t at = (uintptr_t)&sym[pos];
    __builtin_prefetch((const void *)(at - 16));
    __builtin_prefetch((const void *)(at + 32));
}

/* One sweep: every queued pair of rank r, left to right, interleaved with
 * the local heap. */
static int sweep(const simdbpe_model *m, simdbpe__bpe_scratch *s, local_heap *h, uint32_t n_bytes,
                 uint32_t r)
{
    bucket *b = &s->buckets[r];
    int sorted = 1;
    for (uint32_t i = 1; i < b->n && sorted; i++)
        sorted = b->pos[i - 1] <= b->pos[i];
    if (!sorted)
        qsort(b->pos, b->n, sizeof *b->pos, cmp_u32);
    /* Nothing is added to bucket r during its own sweep (such pairs go to
     * the local heap), so b->pos is stable here. */
    uint32_t i = 0, n = b->n;
    while (i < n || h->n) {
        uint64_t next = i < n ? (uint64_t)r << 32 | b->pos[i] : UINT64_MAX;
        uint64_t key;
        if (h->n && h->k[0] < next)
            key = local_pop(h);
        else {
            key = next;
            i++;
            if (i + PREFETCH < n)
                prefetch_merge(s->syms, b->pos[i + PREFETCH]);
        }
        if (apply(m, s, h, n_bytes, r, (uint32_t)(key >> 32), (uint32_t)key))
            return -1;
        if (SIMDBPE_UNLIKELY((i & (RELEASE_STEP - 1)) == 0) && b->cap > BIG_BUCKET)
            release_read(b, i);
    }
    b->n = 0;
    if (b->cap > BIG_BUCKET)
        release_bucket(b);
    rank_clear(s, r);
    return 0;
}

static simdbpe_status bpe_long(const simdbpe_model *m, simdbpe__bpe_scratch *s,
                               const uint8_t *bytes, size_t len, uint32_t *out, size_t *n_out)
{
    if (len > MAX_LONG_WORD)
        return SIMDBPE_ERR_TOO_LARGE;
    if (reserve_long(m, s, len))
        return SIMDBPE_ERR_NOMEM;
    uint32_t *sym = s->syms, n = (uint32_t)len;
    /* One symbol per byte: the initial ids, through the kernel set. */
    (s->k ? s->k : &simdbpe__kernels_scalar)->map_bytes(bytes, len, m->byte_id, sym);
    local_heap h = {NULL, 0, 0};
    int fail = 0;
    for (uint32_t i = 0; i + 1 < n && !fail; i++) {
        pair_entry p = pair_find(m, s, sym[i], sym[i + 1]);
        if (p.rank != NONE)
            fail = bucket_add(s, p.rank, i);
    }
    for (uint32_t r = fail ? NONE : next_rank(s, 0); r != NONE; r = next_rank(s, r + 1)) {
        if (sweep(m, s, &h, n, r)) {
            fail = 1;
            break;
        }
    }
    free(h.k);
    if (fail) {
        drain(s);
        return SIMDBPE_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i = sym_next(sym, n, i))
        out[(*n_out)++] = sym[i];
    if (s->cap > BIG_WORD) {
        free(s->syms);
        s->syms = NULL;
        s->cap = 0;
    }
    return SIMDBPE_OK;
}

/* ----------------------------------------------- long words, backtracking */

/*
 * For a model whose every token is what BPE makes of its own bytes (its
 * whole-token map holds them all: whole_exact and not no_cuts), a long
 * word is encoded without simulating the merges, keeping one bit per byte
 * position and the output ids (GitHub's rust-gems `bpe` crate describes
 * this search; this is written from its argument).
 *
 * Two adjacent tokens a, b are compatible when BPE of bytes(a) bytes(b) is
 * [a, b]. A sequence of tokens is BPE's output for its bytes iff every
 * adjacent pair in it is compatible: BPE of one token's bytes is that
 * token, and a merge across a boundary between two tokens would happen
 * in BPE of those two alone (the symbols facing each other across it are
 * the same there, at the same ranks; see compatible()). BPE's output is
 * unique, so a prefix of the word has at most one such sequence.
 *
 * The search: from the current end, push the longest candidate token that
 * is compatible with the last one pushed and ends at a position not known
 * to be dead; when none does, the position is dead (the sequence before it
 * is the only valid one for those bytes, so no other way of reaching it
 * helps): clear its bit, pop the last token and try its next shorter
 * prefix token instead. Every position dies at most once.
 *
 * test_bpe checks that claim against textbook BPE (GPT-2, o200k_base,
 * random models whose tokens are all reachable) and against the sweeps.
 *
 * Memory: n / 8 bytes of bits beside the output, and per encoder four
 * words per id and the trie of the candidates that the bytes of its long
 * words spell (see bt_trie).
 * If the search finds nothing (it cannot, when the precondition holds) the
 * word goes to the queued sweeps above.
 */
#define BT_NONE UINT32_MAX
#define PREFERRED 0x80000000u /* on a stacked id: it was tried before its chain (ids < 2^24) */
/* Which long words the search takes (simdbpe__bpe_word): from BT_MIN_WORD
 * bytes those of at most FEW_BYTES distinct bytes (runs of one letter,
 * of digits, of spaces, of an emoji: 1.5 to 8 times as fast as the
 * sweeps, which were as fast below that length), and all from
 * BT_ANY_WORD bytes, where the sweeps' 8 to 12 bytes a byte matter more
 * than speed (on random letters or bytes the search runs 1.3 to 3 times
 * the instructions of the sweeps: a compatible() walk for most tokens,
 * over pairs too many to keep). */
#define BT_MIN_WORD (64u << 10)
#define BT_ANY_WORD (1u << 20)
#define FEW_BYTES 16
#define COMPAT_BITS 18  /* 2 MB of cached compatible() answers, past DENSE_MAX candidates */
#define DENSE_MAX 2048  /* candidates with a table of all their pairs (1 MB) */

typedef struct bt_token {
    uint32_t made;    /* rank of the rule that makes it; NONE for a byte's id */
    uint32_t shorter; /* the longest candidate that is a proper prefix of it, or BT_NONE */
    uint32_t len;     /* its length; 0 if it can be no candidate (no bytes, added) */
    uint32_t dense;   /* its index among the trie's candidates */
} bt_token;

typedef struct simdbpe__bpe_backtrack {
    const simdbpe_model *m; /* built for this model */
    int usable;             /* the precondition holds and the tables were built */
    bt_token *tok;          /* vocab_size */
    uint32_t *node_tok;     /* per trie node: the candidate spelled by its path, or BT_NONE */
    uint32_t n_nodes, cap_nodes;
    uint64_t *edges;     /* child of node p by byte c: key (p << 8 | c) << 32 | child; 0 empty */
    uint32_t edge_bits;  /* log2 of the edge table's slots */
    uint32_t n_edges;
    uint32_t root[256];  /* the children of the root (node 0), 0 if none */
    uint64_t alphabet[4]; /* the trie holds the candidates spelled with these bytes */
    /* The trie again as a table, when small enough: the child of node p
     * by byte c is rows[p * width + column[c]] (0: none); bytes outside
     * the alphabet have the last column, all 0. One load a byte where the
     * edge table costs a hash and a compare (5 MB of one letter under
     * o200k: the walks were most of the search). */
    uint32_t *rows;
    uint32_t width;
    uint8_t column[256];
    uint64_t *bits;      /* positions of the current word not known to be dead */
    size_t cap_bits;
    uint64_t *compat;    /* recent compatible() answers: see compatible_cached */
    uint32_t n_cand;     /* candidates in the trie */
    uint64_t *pairs;     /* with at most DENSE_MAX of them: see compatible_cached */
} bt_state;

static inline size_t edge_slot(uint32_t key, uint32_t bits)
{
    return (size_t)((key * 0x9E3779B1u) >> (32 - bits));
}

/* The child of node p (p > 0) by byte c, or 0. */
static inline uint32_t trie_child(const bt_state *t, uint32_t p, uint8_t c)
{
    uint32_t key = p << 8 | c, mask = (1u << t->edge_bits) - 1;
    for (size_t i = edge_slot(key, t->edge_bits);; i = (i + 1) & mask) {
        uint64_t e = t->edges[i];
        if (e == 0 || (uint32_t)(e >> 32) == key)
            return (uint32_t)e;
    }
}

static int edges_put(bt_state *t, uint32_t key, uint32_t child)
{
    if (2 * (t->n_edges + 1) > (1u << t->edge_bits)) {
        uint32_t bits = t->edge_bits + 1;
        uint64_t *e = calloc((size_t)1 << bits, sizeof *e);
        if (!e)
            return -1;
        for (size_t i = 0; i < ((size_t)1 << t->edge_bits); i++) {
            uint64_t x = t->edges[i];
            if (x == 0)
                continue;
            size_t j = edge_slot((uint32_t)(x >> 32), bits);
            while (e[j])
                j = (j + 1) & (((size_t)1 << bits) - 1);
            e[j] = x;
        }
        free(t->edges);
        t->edges = e;
        t->edge_bits = bits;
    }
    size_t j = edge_slot(key, t->edge_bits), mask = ((size_t)1 << t->edge_bits) - 1;
    while (t->edges[j])
        j = (j + 1) & mask;
    t->edges[j] = (uint64_t)key << 32 | child;
    t->n_edges++;
    return 0;
}

/* Inserts candidate id (bytes s[0..len)); every shorter candidate is in
 * already, so the last one met on the way is its next shorter prefix. */
static int trie_insert(bt_state *t, uint32_t id, const uint8_t *s, uint32_t len)
{
    uint32_t p = 0, shorter = BT_NONE;
    for (uint32_t i = 0; i < len; i++) {
        uint32_t c = p ? trie_child(t, p, s[i]) : t->root[s[i]];
        if (c == 0) {
            if (t->n_nodes >= t->cap_nodes) {
                size_t cap = t->cap_nodes;
                if (simdbpe__grow((void **)&t->node_tok, &cap, (size_t)t->n_nodes + 1,
                                  sizeof *t->node_tok) ||
                    cap >= (1u << 24)) /* node << 8 | byte is 32 bits */
                    return -1;
                t->cap_nodes = (uint32_t)cap;
            }
            c = t->n_nodes++;
            t->node_tok[c] = BT_NONE;
            if (p == 0)
                t->root[s[i]] = c;
            else if (edges_put(t, p << 8 | s[i], c))
                return -1;
        }
        p = c;
        if (i + 1 < len && t->node_tok[p] != BT_NONE)
            shorter = t->node_tok[p];
    }
    if (t->node_tok[p] != BT_NONE)
        return -1; /* two candidates with the same bytes: the whole map has one */
    t->node_tok[p] = id;
    t->tok[id].shorter = shorter;
    t->tok[id].dense = t->n_cand++;
    return 0;
}

static uint32_t tok_len(const simdbpe_model *m, uint32_t id)
{
    return m->tok_off[id + 1] - m->tok_off[id];
}

/* Whether the model meets the precondition, and the rules tell each
 * candidate's merge tree: one applying rule per merged token, parts made
 * at lower ranks (what compatible() walks), bytes that concatenate. */
static int bt_rules(const simdbpe_model *m, bt_token *tok)
{
    if (!m->whole_exact || m->no_cuts || m->n_whole == 0)
        return 0;
    for (uint32_t id = 0; id < m->vocab_size; id++)
        tok[id] = (bt_token){NONE, BT_NONE, m->tok_has[id] ? tok_len(m, id) : 0, 0};
    for (size_t i = 0; i < m->n_specials; i++) /* added tokens: never BPE's */
        if (m->specials[i].id < m->vocab_size)
            tok[m->specials[i].id].len = 0;
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        const simdbpe__merge_slot *slot = simdbpe__merge_find(m, u->left, u->right);
        if (!slot || slot->rank != r)
            continue; /* a pair listed again later: the later rank applies */
        if (u->id >= m->vocab_size || tok[u->id].made != NONE)
            return 0;
        tok[u->id].made = r;
    }
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        if (tok[u->id].made != r)
            continue;
        uint32_t a = tok[u->left].made, b = tok[u->right].made;
        uint32_t la = tok_len(m, u->left), lb = tok_len(m, u->right);
        if ((a != NONE && a >= r) || (b != NONE && b >= r) || la == 0 || lb == 0 ||
            tok_len(m, u->id) != la + lb ||
            memcmp(m->blob + m->tok_off[u->id], m->blob + m->tok_off[u->left], la) != 0 ||
            memcmp(m->blob + m->tok_off[u->id] + la, m->blob + m->tok_off[u->right], lb) != 0)
            return 0;
    }
    return 1;
}

/* Empties the trie (its arrays stay). */
static void trie_clear(bt_state *t)
{
    if (t->edges)
        memset(t->edges, 0, ((size_t)1 << t->edge_bits) * sizeof *t->edges);
    t->n_edges = 0;
    t->n_cand = 0;
    free(t->rows);
    t->rows = NULL;
    free(t->pairs);
    t->pairs = NULL;
    t->n_nodes = 1; /* the root */
    memset(t->root, 0, sizeof t->root);
}

/* Sets t->rows from the edges if the table is at most ROWS_MAX entries
 * (else the walks use the edges). */
#define ROWS_MAX (1u << 21) /* 8 MB */
static void trie_rows(bt_state *t)
{
    uint32_t width = 0;
    for (unsigned b = 0; b < 256; b++)
        width += (unsigned)(t->alphabet[b / 64] >> (b % 64) & 1);
    width++; /* the column of the bytes outside */
    if ((uint64_t)t->n_nodes * width > ROWS_MAX)
        return;
    uint32_t *rows = calloc((size_t)t->n_nodes * width, sizeof *rows);
    if (!rows)
        return; /* the edges serve */
    for (unsigned b = 0, c = 0; b < 256; b++) {
        int in = (int)(t->alphabet[b / 64] >> (b % 64) & 1);
        t->column[b] = (uint8_t)(in ? c++ : width - 1);
    }
    for (unsigned b = 0; b < 256; b++)
        rows[t->column[b]] = t->root[b]; /* 0 for the outside column */
    for (size_t i = 0; i < ((size_t)1 << t->edge_bits); i++) {
        uint64_t e = t->edges[i];
        uint32_t key = (uint32_t)(e >> 32);
        if (e != 0)
            rows[(size_t)(key >> 8) * width + t->column[key & 255]] = (uint32_t)e;
    }
    t->rows = rows;
    t->width = width;
}

/* Whether every byte of s[0..len) is in the set `bytes` (256 bits). */
static int bytes_within(const uint8_t *s, uint32_t len, const uint64_t *bytes)
{
    for (uint32_t i = 0; i < len; i++)
        if (!(bytes[s[i] / 64] >> (s[i] % 64) & 1))
            return 0;
    return 1;
}

/*
 * (Re)builds the trie of the candidates made only of bytes in `bytes`:
 * a long word can only be spelled by those (a run of digits by about a
 * thousand of GPT-2's tokens), which keeps the trie small enough to stay
 * in cache and cheap to build (all of o200k's tokens would take a
 * hundred times longer). The candidates are the tokens of the whole-token map
 * (each is BPE of its own bytes), inserted shortest first.
 */
static int bt_trie(const simdbpe_model *m, bt_state *t, const uint64_t *bytes)
{
    uint32_t max_len = 0, n = 0;
    uint32_t *ids = malloc((m->vocab_size ? m->vocab_size : 1) * sizeof *ids);
    if (!ids)
        return -1;
    for (uint32_t id = 0; id < m->vocab_size; id++) {
        uint32_t len = t->tok[id].len;
        const uint8_t *s = m->blob + m->tok_off[id];
        if (len == 0 || !bytes_within(s, len, bytes))
            continue;
        uint64_t lo, hi;
        simdbpe__short_words(s, len < 16 ? len : 16, &lo, &hi);
        if (simdbpe__whole_find(m, s, len, simdbpe__piece_hash(s, len), lo, hi) != id)
            continue;
        ids[n++] = id;
        max_len = len > max_len ? len : max_len;
    }
    /* Shortest first: a counting sort by length. */
    uint32_t *start = calloc((size_t)max_len + 2, sizeof *start);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    int st = start && order ? 0 : -1;
    for (uint32_t i = 0; !st && i < n; i++)
        start[t->tok[ids[i]].len + 1]++;
    for (uint32_t l = 1; !st && l <= max_len + 1; l++)
        start[l] += start[l - 1];
    for (uint32_t i = 0; !st && i < n; i++)
        order[start[t->tok[ids[i]].len]++] = ids[i];
    if (!st && !t->edges) {
        t->edge_bits = 10;
        t->edges = calloc((size_t)1 << t->edge_bits, sizeof *t->edges);
        st = t->edges ? 0 : -1;
    }
    if (!st)
        trie_clear(t);
    for (uint32_t i = 0; !st && i < n; i++)
        st = trie_insert(t, order[i], m->blob + m->tok_off[order[i]], t->tok[order[i]].len);
    free(ids);
    free(start);
    free(order);
    if (!st && t->n_cand <= DENSE_MAX) {
        size_t pairs = (size_t)t->n_cand * t->n_cand;
        st = !(t->pairs = calloc(pairs / 32 + 1, sizeof *t->pairs));
    } else if (!st && !t->compat) {
        st = !(t->compat = calloc((size_t)1 << COMPAT_BITS, sizeof *t->compat));
    }
    if (st) {
        trie_clear(t);
        memset(t->alphabet, 0, sizeof t->alphabet);
        return -1;
    }
    memcpy(t->alphabet, bytes, sizeof t->alphabet);
    trie_rows(t);
    return 0;
}

static void bt_free(bt_state *t)
{
    if (!t)
        return;
    free(t->tok);
    free(t->node_tok);
    free(t->edges);
    free(t->bits);
    free(t->compat);
    free(t->pairs);
    free(t->rows);
    free(t);
}

/* The scratch's tables for model m, built on first use; NULL if m does
 * not meet the precondition (or memory ran out). */
static bt_state *bt_get(const simdbpe_model *m, simdbpe__bpe_scratch *s)
{
    bt_state *t = s->backtrack;
    if (t && t->m == m)
        return t->usable ? t : NULL;
    bt_free(t);
    t = s->backtrack = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->m = m;
    t->tok = malloc((m->vocab_size ? m->vocab_size : 1) * sizeof *t->tok);
    if (!t->tok || !bt_rules(m, t->tok)) {
        free(t->tok);
        *t = (bt_state){.m = m};
        return NULL;
    }
    t->usable = 1;
    return t;
}

/* Sets seen[b] for the bytes b of s[0..n); returns how many distinct
 * ones it found, stopping early past `enough`. */
static unsigned byte_set(const uint8_t *s, size_t n, uint8_t *seen, unsigned enough)
{
    unsigned distinct = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n && distinct <= enough; i += 8) {
        uint64_t w = 0;
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(&w, s + i, k);
        if (w == prev && i > 0 && k == 8)
            continue; /* a run of one letter or emoji: the same 8 bytes again */
        prev = w;
        for (size_t j = 0; j < k; j++) {
            distinct += !seen[s[i + j]];
            seen[s[i + j]] = 1;
        }
    }
    return distinct;
}

/* Makes the trie hold every candidate spelled with the bytes of
 * s[0..n) (and those it held); -1 if out of memory. */
static int bt_cover(const simdbpe_model *m, bt_state *t, const uint8_t *s, size_t n)
{
    uint8_t seen[256] = {0};
    byte_set(s, n, seen, 256);
    uint64_t bytes[4];
    memcpy(bytes, t->alphabet, sizeof bytes);
    int more = 0;
    for (unsigned b = 0; b < 256; b++) {
        more |= seen[b] && !(bytes[b / 64] >> (b % 64) & 1);
        bytes[b / 64] |= (uint64_t)seen[b] << (b % 64);
    }
    return more ? bt_trie(m, t, bytes) : 0;
}

/*
 * Whether BPE of bytes(a) bytes(b) is [a, b] (a and b candidates). Both
 * sides merge on their own as in BPE of each alone unless some merge joins
 * a symbol of a's side to one of b's; the symbols that face each other
 * across the boundary are on a's right spine (a, its rule's right part,
 * that one's right part... down to a byte) and on b's left spine. A spine
 * symbol x lives from its own rule's rank to its parent's (ux; the top
 * one forever). Walking down from (a, b), the pair that faced the boundary
 * before (x, y) differs from it on the side whose symbol was made later
 * (y's on equal ranks: a's side merges first, being further left). (x, y)
 * merges iff its rule's rank c is below ux (at c = ux the same rule takes
 * x's left neighbour and x first: it is further left) and at most uy.
 */
static int compatible(const simdbpe_model *m, const bt_token *tok, uint32_t a, uint32_t b)
{
    uint32_t x = a, y = b, ux = NONE, uy = NONE;
    for (;;) {
        /* The pair filter, then the perfect hash: the pairs along two
         * spines are seldom merges, and seldom met again soon (the pair
         * cache only added a load). */
        uint64_t key = (uint64_t)x << 32 | y;
        if (simdbpe__pair_may_merge(m, key)) {
            const simdbpe__merge_slot *slot = simdbpe__merge_find(m, x, y);
            if (slot && slot->rank < ux && slot->rank <= uy)
                return 0;
        }
        uint32_t mx = tok[x].made, my = tok[y].made;
        /* NONE + 1 = 0: a byte was made before every rule. */
        if (mx + 1 > my + 1) {
            ux = mx;
            x = m->rules[mx].right;
        } else if (my != NONE) {
            uy = my;
            y = m->rules[my].left;
        } else {
            return 1; /* two bytes, and no rule joins them */
        }
    }
}

/*
 * A direct-mapped cache of compatible(a, b), since a word repeats its
 * pairs of tokens (a run of digits has a few thousand) and compatible()
 * walks both spines with a merge lookup a step. An entry is
 * (a << 24 | b) << 1 | answer, plus one (0: empty); ids are below 2^24.
 */
static inline int compatible_cached(const simdbpe_model *m, bt_state *t, uint32_t a, uint32_t b)
{
    if (t->pairs) {
        /* Few candidates (a run of digits, of one letter...): two bits
         * for each pair of them, 0 unknown, 1 no, 3 yes. */
        size_t i = (size_t)t->tok[a].dense * t->n_cand + t->tok[b].dense;
        uint64_t *w = &t->pairs[i / 32];
        unsigned v = (unsigned)(*w >> (2 * (i % 32)) & 3);
        if (v)
            return (int)(v >> 1);
        int ok = compatible(m, t->tok, a, b);
        *w |= (uint64_t)(ok ? 3 : 1) << (2 * (i % 32));
        return ok;
    }
    uint64_t key = (uint64_t)a << 24 | b;
    uint64_t *e = &t->compat[(key * 0x9E3779B97F4A7C15ULL) >> (64 - COMPAT_BITS)];
    if ((*e - 1) >> 1 == key && *e != 0)
        return (int)((*e - 1) & 1);
    int ok = compatible(m, t->tok, a, b);
    *e = (key << 1 | (uint64_t)ok) + 1;
    return ok;
}

/* The longest candidate that begins at s[0] (n >= 1 bytes), or BT_NONE. */
static inline uint32_t longest_at(const bt_state *t, const uint8_t *s, size_t n)
{
    if (t->rows) {
        const uint32_t *rows = t->rows;
        size_t width = t->width;
        uint32_t p = 0, best = BT_NONE;
        for (size_t i = 0; i < n; i++) {
            p = rows[p * width + t->column[s[i]]];
            if (p == 0)
                break;
            uint32_t id = t->node_tok[p];
            best = id != BT_NONE ? id : best;
        }
        return best;
    }
    uint32_t p = t->root[s[0]];
    if (p == 0)
        return BT_NONE;
    uint32_t best = t->node_tok[p];
    for (size_t i = 1; i < n; i++) {
        p = trie_child(t, p, s[i]);
        if (p == 0)
            break;
        uint32_t id = t->node_tok[p];
        best = id != BT_NONE ? id : best;
    }
    return best;
}

/* Whether s[pos..pos + len) exists and is s[pos - len..pos) again. */
__attribute__((noinline)) static int repeats(const uint8_t *s, size_t pos, size_t n, size_t len)
{
    return len <= n - pos && memcmp(s + pos - len, s + pos, len) == 0;
}

static inline int bit_get(const uint64_t *b, size_t i)
{
    return (int)(b[i / 64] >> (i % 64) & 1);
}

simdbpe_status simdbpe__bpe_word_backtrack(const simdbpe_model *m, simdbpe__bpe_scratch *s,
                                           const uint8_t *bytes, size_t n, uint32_t *out,
                                           size_t *n_out)
{
    bt_state *t = bt_get(m, s);
    if (!t)
        return SIMDBPE_ERR_UNSUPPORTED;
    if (bt_cover(m, t, bytes, n))
        return SIMDBPE_ERR_NOMEM;
    size_t words = n / 64 + 1;
    if (words > t->cap_bits) {
        free(t->bits);
        t->cap_bits = 0;
        if (!(t->bits = malloc(words * sizeof *t->bits)))
            return SIMDBPE_ERR_NOMEM;
        t->cap_bits = words;
    }
    uint64_t *bits = t->bits;
    memset(bits, 0xFF, words * sizeof *bits);
    const bt_token *tok = t->tok;
    uint32_t *stack = out + *n_out;
    size_t k = 0, pos = 0;
    uint32_t cand = longest_at(t, bytes, n), flag = 0;
    while (pos < n) {
        if (cand != BT_NONE) {
            size_t end = pos + tok[cand].len;
            uint32_t last = k ? stack[k - 1] & ~PREFERRED : BT_NONE;
            if (bit_get(bits, end) && (k == 0 || compatible_cached(m, t, last, cand))) {
                stack[k++] = cand | flag;
                pos = end;
                if (pos < n) {
                    /* The last token, if it came three times in a row
                     * and the text repeats it, goes first (a run of spaces
                     * under p50k: longest first took 15 tries a byte);
                     * else the candidates go longest first. Any order
                     * is exact as long as every candidate is tried
                     * before a position is declared dead. */
                    flag = k >= 3 && (stack[k - 2] & ~PREFERRED) == cand &&
                                   (stack[k - 3] & ~PREFERRED) == cand &&
                                   repeats(bytes, pos, n, tok[cand].len)
                               ? PREFERRED
                               : 0;
                    if (!flag)
                        cand = longest_at(t, bytes + pos, n - pos);
                }
            } else if (flag) {
                /* The repeated one failed: every candidate, longest first
                 * (it comes again and fails cheaply: cached or dead). */
                cand = longest_at(t, bytes + pos, n - pos);
                flag = 0;
            } else {
                cand = tok[cand].shorter;
            }
            continue;
        }
        /* No candidate left at pos: it is dead. */
        bits[pos / 64] &= ~(1ULL << (pos % 64));
        if (k == 0)
            break; /* no valid sequence: not BPE's (cannot happen, see above) */
        uint32_t e = stack[--k], last = e & ~PREFERRED;
        pos -= tok[last].len;
        /* A token tried in the chain's order gives way to the next
         * shorter one; a repeated one, tried first, to the whole chain. */
        cand = e & PREFERRED ? longest_at(t, bytes + pos, n - pos) : tok[last].shorter;
        flag = 0;
    }
    for (size_t i = 0; i < k; i++)
        stack[i] &= ~PREFERRED;
    if (t->cap_bits > BIG_WORD / 64) { /* a long word's bits do not stay */
        free(t->bits);
        t->bits = NULL;
        t->cap_bits = 0;
    }
    if (pos < n)
        return SIMDBPE_ERR_UNSUPPORTED;
    *n_out += k;
    return SIMDBPE_OK;
}

/* Whether s[0..n) has at most FEW_BYTES distinct bytes. */
static int few_bytes(const uint8_t *s, size_t n)
{
    uint8_t seen[256] = {0};
    return byte_set(s, n, seen, FEW_BYTES) <= FEW_BYTES;
}

simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out)
{
    if (len == 1) {
        out[(*n_out)++] = m->byte_id[s[0]];
        return SIMDBPE_OK;
    }
    if (len <= SMALL_WORD && scratch->byte_pairs)
        return scratch->small ? scratch->small(m, scratch, s, len, out, n_out)
                              : simdbpe__bpe_small(m, scratch, s, len, out, n_out);
    if (len <= SHORT_WORD && m->n_merges < (1u << 26)) /* ranks fit a short-word key */
        return bpe_short(m, scratch, s, len, out, n_out);
    if (len >= BT_MIN_WORD && (len >= BT_ANY_WORD || few_bytes(s, len))) {
        simdbpe_status st = simdbpe__bpe_word_backtrack(m, scratch, s, len, out, n_out);
        if (st != SIMDBPE_ERR_UNSUPPORTED)
            return st;
    }
    return bpe_long(m, scratch, s, len, out, n_out);
}

simdbpe_status simdbpe__bpe_word_queued(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                        const uint8_t *s, size_t len, uint32_t *out,
                                        size_t *n_out)
{
    return bpe_long(m, scratch, s, len, out, n_out);
}
