/*
 * added.c - finding a model's added tokens in text.
 *
 * HF tokenizers cuts added tokens out of the text before anything else,
 * taking at each place the leftmost occurrence and, of those starting
 * there, the longest (an Aho-Corasick automaton in LeftmostLongest mode).
 * Models have one to a few hundred of them, nearly all beginning with '<'
 * (DeepSeek-V3: 818, most "<｜place▁holder▁no▁N｜>"), so a byte trie walked
 * from each place whose byte can begin one finds the same occurrences:
 * the scan between candidates is memchr (one possible first byte) or a
 * 256-bit table, and a walk stops at the first byte no token continues
 * with.
 *
 * Trie layout: node 0 is the root; each node's children are a linked list
 * (first_child, next_sibling) in no particular order; token[k] is the
 * index in m->specials of the token that ends at the node, or NONE: k = 1
 * for a NORMALIZED one, 0 for the others. The two kinds are matched in
 * different passes (the raw text, then the normalized), and a normalized
 * token's text may be another's ("e\u0301" normalized is matched by the
 * NFC "\u00e9", which a token matched in the raw text may be too). The
 * loaders refuse two tokens of one kind with one text where that would be
 * ambiguous (tokenizer.json); otherwise the first listed wins.
 */
#include <stdlib.h>

#include "model.h"

#define NONE UINT32_MAX

typedef struct trie_node {
    uint32_t first_child, next_sibling, token[2];
    uint8_t byte;
} trie_node;

struct simdbpe__added_trie {
    trie_node *nodes;
    uint32_t n_nodes;
    uint64_t first[4]; /* bytes some token begins with */
    int n_first;
    uint8_t only_first; /* the first byte when n_first == 1 */
    uint32_t max_len;   /* the longest token's length */
};

void simdbpe__added_free(struct simdbpe__added_trie *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t);
}

static uint32_t child(const struct simdbpe__added_trie *t, uint32_t node, uint8_t b)
{
    for (uint32_t c = t->nodes[node].first_child; c != NONE; c = t->nodes[c].next_sibling)
        if (t->nodes[c].byte == b)
            return c;
    return NONE;
}

simdbpe_status simdbpe__added_build(simdbpe_model *m)
{
    m->trie = NULL;
    if (m->n_specials == 0)
        return SIMDBPE_OK;
    size_t total = 1;
    for (size_t i = 0; i < m->n_specials; i++)
        total += m->specials[i].len;
    if (total > UINT32_MAX)
        return SIMDBPE_ERR_NOMEM;
    struct simdbpe__added_trie *t = calloc(1, sizeof *t);
    if (!t || !(t->nodes = malloc(total * sizeof *t->nodes))) {
        free(t);
        return SIMDBPE_ERR_NOMEM;
    }
    t->nodes[0] = (trie_node){NONE, NONE, {NONE, NONE}, 0};
    t->n_nodes = 1;
    for (size_t i = 0; i < m->n_specials; i++) {
        const simdbpe__special *sp = &m->specials[i];
        uint32_t at = 0;
        if (sp->len > t->max_len)
            t->max_len = sp->len;
        for (uint32_t k = 0; k < sp->len; k++) {
            uint8_t b = sp->text[k];
            uint32_t c = child(t, at, b);
            if (c == NONE) {
                c = t->n_nodes++;
                t->nodes[c] = (trie_node){NONE, t->nodes[at].first_child, {NONE, NONE}, b};
                t->nodes[at].first_child = c;
            }
            at = c;
        }
        uint32_t *slot = &t->nodes[at].token[(sp->flags & SIMDBPE__ADDED_NORMALIZED) != 0];
        if (*slot == NONE)
            *slot = (uint32_t)i;
        if (!(sp->flags & SIMDBPE__ADDED_SPECIAL))
            m->has_plain_added = 1;
        uint8_t b0 = sp->text[0];
        if (!(t->first[b0 >> 6] >> (b0 & 63) & 1)) {
            t->first[b0 >> 6] |= 1ULL << (b0 & 63);
            t->n_first++;
            t->only_first = b0;
        }
    }
    m->trie = t;
    return SIMDBPE_OK;
}

/* The token (flags & mask == want) that ends at `node`, or NONE. */
static uint32_t token_at(const simdbpe_model *m, const trie_node *node, uint32_t mask,
                         uint32_t want)
{
    for (int k = 0; k < 2; k++) {
        uint32_t tok = node->token[k];
        if (tok != NONE && (m->specials[tok].flags & mask) == want)
            return tok;
    }
    return NONE;
}

/* The longest token (flags & mask == want) that s[0..n) begins with, as
 * its index, or NONE. */
static uint32_t longest_at(const simdbpe_model *m, const uint8_t *s, size_t n, uint32_t mask,
                           uint32_t want)
{
    const struct simdbpe__added_trie *t = m->trie;
    uint32_t at = 0, best = NONE;
    for (size_t k = 0; k < n; k++) {
        if ((at = child(t, at, s[k])) == NONE)
            break;
        uint32_t tok = token_at(m, &t->nodes[at], mask, want);
        if (tok != NONE)
            best = tok;
    }
    return best;
}

size_t simdbpe__added_find(const simdbpe_model *m, const uint8_t *s, size_t n, uint32_t mask,
                           uint32_t want, size_t *which)
{
    const struct simdbpe__added_trie *t = m->trie;
    if (!t)
        return n;
    for (size_t i = 0; i < n; i++) {
        if (t->n_first == 1) {
            const uint8_t *hit = memchr(s + i, t->only_first, n - i);
            if (!hit)
                return n;
            i = (size_t)(hit - s);
        } else if (!(t->first[s[i] >> 6] >> (s[i] & 63) & 1)) {
            continue;
        }
        uint32_t tok = longest_at(m, s + i, n - i, mask, want);
        if (tok != NONE) {
            *which = tok;
            return i;
        }
    }
    return n;
}

int simdbpe__added_straddles(const simdbpe_model *m, const uint8_t *s, size_t n, size_t p,
                             uint32_t mask, uint32_t want)
{
    const struct simdbpe__added_trie *t = m->trie;
    if (!t)
        return 0;
    for (size_t q = p >= t->max_len ? p - t->max_len + 1 : 0; q < p; q++) {
        uint32_t at = 0;
        for (size_t k = q;; k++) {
            if (k >= n) /* a longer token might go on past the known bytes */
                return t->nodes[at].first_child == NONE ? 0 : -1;
            if ((at = child(t, at, s[k])) == NONE)
                break;
            if (k >= p && token_at(m, &t->nodes[at], mask, want) != NONE)
                return 1;
        }
    }
    return 0;
}
