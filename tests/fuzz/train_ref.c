/*
 * train_ref.c - the textbook BPE trainer of fuzz_train (train_ref.h):
 * obviously correct and slow. Every failure here is a bug of the harness
 * and aborts through FUZZ_CHECK.
 */
#include "train_ref.h"

#include "fuzz.h"
#include "pretok/pretok.h"

/* No token is longer than this (simdbpe_train.h): a pair whose merge
 * would be longer is never chosen. */
#define MAX_TOKEN_BYTES 1024

/*
 * Memory kept from one call to the next, grown when a call needs more:
 * under ASan every fresh block is filled and, freed blocks being held in
 * quarantine, lands on new pages, which took more time than training a
 * tiny corpus. Contents are kept when a block grows.
 */
typedef struct keep {
    void *p;
    size_t cap;
} keep;

static void *room(keep *k, size_t bytes)
{
    if (bytes > k->cap) {
        k->cap = bytes > 2 * k->cap ? bytes : 2 * k->cap;
        k->p = realloc(k->p, k->cap);
        FUZZ_CHECK(k->p != NULL, "out of memory");
    }
    return k->p;
}

static keep tok_bytes_mem, tok_off_mem, tok_len_mem, ids_mem, word_off_mem, word_len_mem,
    count_mem, slot_mem, tab_mem, used_mem;

typedef struct ref {
    uint8_t *tok_bytes; /* the bytes of each id: tok_bytes[tok_off[id] ..][0 .. tok_len[id]) */
    size_t *tok_off, *tok_len, tok_used;
    uint32_t n_tok, max_tok;
    uint32_t *ids; /* unique words as ids: ids[word_off[w] ..][0 .. word_len[w]) */
    size_t *word_off, *word_len;
    uint64_t *count;
    size_t n_words, ids_used;
    size_t *slot; /* word index + 1 by a hash of its bytes; 0 = empty */
    size_t mask;
} ref;

/* GPT-2's id of byte b: the rank of the code point that spells it. */
static uint32_t byte_id(uint8_t b)
{
    static uint32_t id[256];
    static int ready;
    if (!ready) {
        uint32_t next = 0;
        for (uint32_t cp = 0; cp < 0x144; cp++) {
            int self = (cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) ||
                       (cp >= 0xAE && cp <= 0xFF);
            if (cp < 0x100 && !self)
                continue;
            uint32_t byte = cp;
            if (cp >= 0x100) { /* the (cp - 0x100)-th byte that does not print as itself */
                uint32_t n = cp - 0x100;
                for (byte = 0; byte < 256; byte++) {
                    int s = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                            byte >= 0xAE;
                    if (!s && n-- == 0)
                        break;
                }
            }
            id[byte] = next++;
        }
        ready = 1;
    }
    return id[b];
}

static void add_word(ref *r, const uint8_t *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    size_t at = h & r->mask;
    for (; r->slot[at]; at = (at + 1) & r->mask) {
        size_t w = r->slot[at] - 1;
        if (r->word_len[w] != len)
            continue;
        const uint32_t *word = r->ids + r->word_off[w];
        size_t i = 0;
        while (i < len && word[i] == byte_id(s[i]))
            i++;
        if (i == len) {
            r->count[w]++;
            return;
        }
    }
    r->slot[at] = r->n_words + 1;
    size_t n = r->n_words++; /* room for one word per byte of the text */
    r->word_off[n] = r->ids_used;
    for (size_t i = 0; i < len; i++)
        r->ids[r->ids_used++] = byte_id(s[i]);
    r->word_len[n] = len;
    r->count[n] = 1;
}

static void add_sequence(ref *r, const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = simdbpe__pretok_piece_end(s, len, i);
        add_word(r, s + i, j - i);
        i = j;
    }
}

/* One pair's count in the table of best_pair; count 0 = empty slot. */
typedef struct pair_count {
    uint32_t a, b;
    uint64_t count;
} pair_count;

/* The best pair now, or 0 if none: every adjacent pair of every word is
 * added with the word's count into `tab` (mask + 1 slots, more than twice
 * the pairs there can be; empty on entry and on return; `used` lists the
 * slots filled), then the largest sum wins, the smallest (left, right)
 * among equal sums, leaving out pairs whose token would be longer than
 * MAX_TOKEN_BYTES. */
static int best_pair(const ref *r, pair_count *tab, size_t mask, size_t *used, uint32_t *left,
                     uint32_t *right, uint64_t *best)
{
    size_t n_used = 0;
    for (size_t w = 0; w < r->n_words; w++)
        for (size_t i = 0; i + 1 < r->word_len[w]; i++) {
            uint32_t a = r->ids[r->word_off[w] + i], b = r->ids[r->word_off[w] + i + 1];
            uint64_t h = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ULL;
            size_t at = (size_t)(h >> 32) & mask;
            while (tab[at].count && (tab[at].a != a || tab[at].b != b))
                at = (at + 1) & mask;
            if (!tab[at].count) {
                tab[at] = (pair_count){a, b, 0};
                used[n_used++] = at;
            }
            tab[at].count += r->count[w];
        }
    *best = 0;
    *left = *right = UINT32_MAX;
    for (size_t k = 0; k < n_used; k++) {
        pair_count *p = &tab[used[k]];
        int smaller = p->a < *left || (p->a == *left && p->b < *right);
        int fits = r->tok_len[p->a] + r->tok_len[p->b] <= MAX_TOKEN_BYTES;
        if (fits && (p->count > *best || (p->count == *best && smaller))) {
            *best = p->count;
            *left = p->a;
            *right = p->b;
        }
        p->count = 0;
    }
    return *best > 0;
}

/* The id of the token spelled by a's bytes then b's: an existing one, or
 * the next. */
static uint32_t name_token(ref *r, uint32_t a, uint32_t b)
{
    size_t len = r->tok_len[a] + r->tok_len[b];
    r->tok_bytes = room(&tok_bytes_mem, r->tok_used + len);
    uint8_t *t = r->tok_bytes + r->tok_used; /* past every token's bytes */
    memcpy(t, r->tok_bytes + r->tok_off[a], r->tok_len[a]);
    memcpy(t + r->tok_len[a], r->tok_bytes + r->tok_off[b], r->tok_len[b]);
    for (uint32_t id = 0; id < r->n_tok; id++)
        if (r->tok_len[id] == len && memcmp(r->tok_bytes + r->tok_off[id], t, len) == 0)
            return id;
    FUZZ_CHECK(r->n_tok < r->max_tok, "too many tokens");
    r->tok_off[r->n_tok] = r->tok_used;
    r->tok_len[r->n_tok] = len;
    r->tok_used += len;
    return r->n_tok++;
}

static void apply(ref *r, uint32_t a, uint32_t b, uint32_t id)
{
    for (size_t w = 0; w < r->n_words; w++) {
        uint32_t *word = r->ids + r->word_off[w];
        size_t o = 0;
        for (size_t i = 0; i < r->word_len[w]; i++) {
            if (i + 1 < r->word_len[w] && word[i] == a && word[i + 1] == b) {
                word[o++] = id;
                i++;
            } else {
                word[o++] = word[i];
            }
        }
        r->word_len[w] = o;
    }
}

size_t train_ref(const uint8_t *text, size_t text_len, int documents, uint32_t vocab_size,
                 train_ref_merge **out)
{
    ref r = {0};
    /* Each merge names at most one new id, and the loop below stops at
     * vocab_size ids. */
    r.max_tok = vocab_size > 256 ? vocab_size : 256;
    r.tok_off = room(&tok_off_mem, r.max_tok * sizeof *r.tok_off);
    r.tok_len = room(&tok_len_mem, r.max_tok * sizeof *r.tok_len);
    r.tok_bytes = room(&tok_bytes_mem, 256);
    for (unsigned by = 0; by < 256; by++) {
        uint32_t id = byte_id((uint8_t)by);
        r.tok_bytes[id] = (uint8_t)by;
        r.tok_off[id] = id;
        r.tok_len[id] = 1;
    }
    r.n_tok = 256;
    r.tok_used = 256;
    /* At most one word, and one id of a word, per byte. */
    size_t max_words = text_len ? text_len : 1;
    r.ids = room(&ids_mem, max_words * sizeof *r.ids);
    r.word_off = room(&word_off_mem, max_words * sizeof *r.word_off);
    r.word_len = room(&word_len_mem, max_words * sizeof *r.word_len);
    r.count = room(&count_mem, max_words * sizeof *r.count);
    /* A table at most half full. */
    for (r.mask = 15; r.mask < 2 * text_len; r.mask = 2 * r.mask + 1)
        ;
    r.slot = room(&slot_mem, (r.mask + 1) * sizeof *r.slot);
    memset(r.slot, 0, (r.mask + 1) * sizeof *r.slot);
    for (size_t i = 0; i < text_len;) {
        size_t j = i;
        if (documents)
            j = text_len;
        else {
            while (j < text_len && text[j] != '\n')
                j++;
            j = j < text_len ? j + 1 : j;
        }
        add_sequence(&r, text + i, j - i);
        i = j;
    }
    size_t n_pairs = 0, mask = 15;
    for (size_t w = 0; w < r.n_words; w++)
        n_pairs += r.word_len[w];
    while (mask < 2 * n_pairs)
        mask = 2 * mask + 1;
    pair_count *tab = room(&tab_mem, (mask + 1) * sizeof *tab);
    memset(tab, 0, (mask + 1) * sizeof *tab);
    size_t *used = room(&used_mem, (n_pairs ? n_pairs : 1) * sizeof *used);
    /* A merge that makes an existing token adds no id, so the merges may
     * outnumber vocab_size - 256. */
    train_ref_merge *merges = NULL;
    size_t n = 0, cap = 0;
    uint32_t left, right;
    uint64_t best;
    while (r.n_tok < vocab_size && best_pair(&r, tab, mask, used, &left, &right, &best)) {
        uint32_t id = name_token(&r, left, right);
        apply(&r, left, right, id);
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            merges = realloc(merges, cap * sizeof *merges);
            FUZZ_CHECK(merges != NULL, "out of memory");
        }
        merges[n++] = (train_ref_merge){left, right, id, best};
    }
    *out = merges;
    return n;
}
