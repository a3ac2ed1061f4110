/*
 * bpe.c - applying a model's merges to one word (pre-token).
 *
 * BPE semantics: start from one symbol per byte; repeatedly merge the
 * adjacent pair with the lowest rank, the leftmost one among equal ranks
 * (HF word.rs and tiktoken agree), until no adjacent pair has a merge.
 *
 * Two implementations of that one rule, chosen by word length:
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
 *     bucket) and memory is O(n).
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

#define NONE UINT32_MAX
#define PREFETCH 16 /* entries ahead in a sweep (16 measured best on 5 MB of digits) */
#define SHORT_WORD 64

typedef struct simdbpe__bpe_bucket {
    uint32_t *pos; /* left positions of queued pairs of one rank */
    uint32_t n, cap;
} bucket;

/*
 * A small direct-mapped cache of merge lookups, (left, right) -> (rank,
 * new id) or "no merge", in front of the model's perfect hash. Words repeat
 * pairs a lot (a 5 MB run of digits has 100 distinct pairs), and one probe
 * here is a multiply and one L1/L2 load where the perfect hash costs two
 * mixes and two dependent loads.
 */
#define PAIR_BITS 14

typedef struct simdbpe__pair_entry {
    uint64_t key; /* left << 32 | right, or UINT64_MAX when empty */
    uint32_t rank, id; /* rank NONE: not a merge */
} pair_entry;

static inline size_t pair_index(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - PAIR_BITS));
}

/* The merge of the pair (left, right) = key in the model's perfect hash. */
static inline pair_entry merge_entry(const simdbpe_model *m, uint64_t key, uint32_t left,
                                     uint32_t right)
{
    const simdbpe__merge_slot *slot = simdbpe__merge_find(m, left, right);
    return (pair_entry){key, slot ? slot->rank : NONE, slot ? slot->id : NONE};
}

/* The merge (rank, id) of the pair; rank NONE if it is not one. The pair
 * filter answers most pairs that are not (model.h), the cache most that
 * are; one branch asks whether either did, since which one answers is
 * as good as random. Without a cache (out of memory) the filter and the
 * perfect hash answer alone. */
static inline pair_entry pair_find(const simdbpe_model *m, simdbpe__bpe_scratch *s,
                                   uint32_t left, uint32_t right)
{
    uint64_t key = (uint64_t)left << 32 | right;
    int may = simdbpe__pair_may_merge(m, key);
    if (SIMDBPE_UNLIKELY(!s->pairs)) {
        s->pairs = malloc(sizeof(pair_entry) << PAIR_BITS);
        if (!s->pairs)
            return may ? merge_entry(m, key, left, right) : (pair_entry){key, NONE, NONE};
        memset(s->pairs, 0xFF, sizeof(pair_entry) << PAIR_BITS);
    }
    pair_entry *e = &s->pairs[pair_index(key)];
    pair_entry c = *e;
    if (SIMDBPE_LIKELY(!may | (c.key == key))) {
        c.rank = may ? c.rank : NONE;
        c.id = may ? c.id : NONE;
        return c;
    }
    return *e = merge_entry(m, key, left, right);
}

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
    s->used = NULL;
    s->n_used = s->cap_used = 0;
    s->buckets = NULL;
    s->bits = NULL;
    s->n_buckets = 0;
}

void simdbpe__bpe_scratch_free(simdbpe__bpe_scratch *s)
{
    if (!s->pairs_lent)
        free(s->pairs);
    free(s->syms);
    free_buckets(s);
    const struct simdbpe__kernels *k = s->k;
    const simdbpe__byte_pair *byte_pairs = s->byte_pairs;
    memset(s, 0, sizeof *s);
    s->k = k;
    s->byte_pairs = byte_pairs;
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
 * Nodes of id, prev and next took 12 bytes a position: 60 MB for a 5 MB
 * word, whose sweeps read it at scattered places. With 20 MB, 5 MB of
 * digits went from 28.7 to 36.8 MB/s (bench/ab.sh, 8 rounds).
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
        if (!s->buckets || !s->bits) {
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
        /* Past 2 MB, arrays of whole huge pages: on 4 KB pages a 5 MB
         * run of one letter took 10 K page faults, a fifth of its time. */
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
    return 0;
}

/* The first non-empty rank at or after r, or NONE. */
static uint32_t next_rank(const simdbpe__bpe_scratch *s, uint32_t r)
{
    size_t words = ((size_t)s->n_buckets + 63) / 64;
    size_t w = r / 64;
    if (w >= words)
        return NONE;
    uint64_t bits = s->bits[w] & (~0ULL << (r % 64));
    while (!bits) {
        if (++w >= words)
            return NONE;
        bits = s->bits[w];
    }
    return (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
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
        s->bits[r / 64] &= ~(1ULL << (r % 64));
    }
}

/* Prefetches what a merge at pos reads: its entry, the entries of its
 * left neighbour and of the two symbols to its right, a few entries
 * apart: the lines of 16 bytes before the entry and 32 after it (with
 * 12-byte nodes, one line measured 20 MB/s on 5 MB of digits, two
 * 25-30). The addresses are integers: one may be before the array, which
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
    s->bits[r / 64] &= ~(1ULL << (r % 64));
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

simdbpe_status simdbpe__bpe_word(const simdbpe_model *m, simdbpe__bpe_scratch *scratch,
                                 const uint8_t *s, size_t len, uint32_t *out, size_t *n_out)
{
    if (len == 1) {
        out[(*n_out)++] = m->byte_id[s[0]];
        return SIMDBPE_OK;
    }
    if (len <= SHORT_WORD && m->n_merges < (1u << 26)) /* ranks fit a short-word key */
        return bpe_short(m, scratch, s, len, out, n_out);
    return bpe_long(m, scratch, s, len, out, n_out);
}
