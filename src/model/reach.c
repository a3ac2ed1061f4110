/*
 * reach.c - which tokens BPE yields from their own bytes, told from the
 * merge rules.
 *
 * The whole-token map (model.h) holds the tokens t with BPE(bytes(t)) = [t].
 * Running BPE on each of GPT-2's 50 K tokens was a third of loading
 * vocab.json + merges.txt. This decides most tokens from the rules with a
 * few lookups each, and leaves the others to BPE (SIMDBPE__REACH_ASK).
 *
 * It needs the rules in creation order: every rule's two parts are made
 * only by rules of lower rank (or are a byte's initial id). BPE then merges
 * in non-decreasing rank order, because the pairs a merge creates hold its
 * new token, and every rule using that token ranks above the rules making
 * it. Rules trained by BPE are in this order; rules that are not (any
 * merges.txt may list them so) leave every token to BPE.
 *
 * Take a token t made by exactly one rule, a + b at rank r. BPE on bytes(t)
 * can end in [t] only through [a, b], so:
 *   - the bytes of a and of b must be merged each on their own, and then
 *     they are merged exactly as BPE merges bytes(a) and bytes(b) alone:
 *     both must be reachable;
 *   - no merge may join a symbol of a's side with one of b's.
 * While the sides merge on their own, the symbols facing each other across
 * the boundary are on a's right spine (a, a's right part, its right part,
 * ... down to a byte) and on b's left spine. A spine symbol exists from the
 * rank of its rule to the rank of its parent's rule. Walking both spines up
 * from the bytes, in the order of those ranks, visits every pair that ever
 * faces the boundary. The pair (x, y) is merged iff it is a rule whose rank
 * c is below the rank of x's parent (at an equal rank that same rule
 * applies on a's side first, further left) and at most the rank of y's
 * parent (the boundary is left of b's side). If no pair is, t is reachable.
 * A token made by several rules, or from such a token, is left to BPE.
 */
#include <stdlib.h>

#include "model.h"

#define NONE UINT32_MAX /* no rule; as a rank, "never" */

static size_t token_len(const simdbpe_model *m, uint32_t id)
{
    return m->tok_off[id + 1] - m->tok_off[id];
}

/* Whether some merge joins the boundary pairs of left's right spine and
 * right's left spine; both are reachable (so their spines are single
 * rules down to bytes). rs and ls have room for the spines. */
static int boundary_merges(const simdbpe_model *m, const uint32_t *made, uint32_t left,
                           uint32_t right, uint32_t *rs, uint32_t *ls)
{
    size_t i = 0, j = 0;
    for (rs[0] = left; token_len(m, rs[i]) > 1; i++)
        rs[i + 1] = m->rules[made[rs[i]]].right;
    for (ls[0] = right; token_len(m, ls[j]) > 1; j++)
        ls[j + 1] = m->rules[made[ls[j]]].left;
    while (i > 0 || j > 0) {
        uint32_t until_r = i ? made[rs[i - 1]] : NONE, until_l = j ? made[ls[j - 1]] : NONE;
        uint64_t key = (uint64_t)rs[i] << 32 | ls[j];
        if (simdbpe__pair_may_merge(m, key)) {
            const simdbpe__merge_slot *s = simdbpe__merge_find(m, rs[i], ls[j]);
            if (s && s->rank < until_r && s->rank <= until_l)
                return 1;
        }
        if (until_r <= until_l)
            i--;
        else
            j--;
    }
    return 0;
}

simdbpe_status simdbpe__reach(const simdbpe_model *m, uint8_t *reach)
{
    uint32_t n = m->vocab_size;
    size_t max_len = 1;
    for (uint32_t id = 0; id < n; id++)
        max_len = token_len(m, id) > max_len ? token_len(m, id) : max_len;
    uint32_t *made = simdbpe__model_alloc((n ? n : 1) * sizeof *made);
    uint32_t *spines = malloc(2 * (max_len + 1) * sizeof *spines);
    if (!made || !spines) {
        free(made);
        free(spines);
        return SIMDBPE_ERR_NOMEM;
    }
    for (uint32_t id = 0; id < n; id++) {
        made[id] = NONE;
        size_t len = token_len(m, id);
        reach[id] = len == 1 && m->byte_id[m->blob[m->tok_off[id]]] == id ? SIMDBPE__REACH_YES
                                                                          : SIMDBPE__REACH_NO;
    }
    /* The rule that makes each token (the last one if several do: a
     * duplicated pair applies at its last rank only). */
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        const simdbpe__merge_slot *s = simdbpe__merge_find(m, u->left, u->right);
        if (!s || s->rank != r)
            continue;
        if (made[u->id] != NONE)
            reach[u->id] = SIMDBPE__REACH_ASK;
        made[u->id] = r;
    }
    /* Creation order: the last rule making each part ranks below each rule
     * that applies (its token's last maker, and every rule of a token that
     * several make: some of those may not apply, and checking them too only
     * errs toward BPE). */
    int ordered = 1;
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        if (made[u->id] == r || reach[u->id] == SIMDBPE__REACH_ASK)
            ordered &= (made[u->left] == NONE || made[u->left] < r) &&
                       (made[u->right] == NONE || made[u->right] < r) &&
                       token_len(m, u->left) > 0 && token_len(m, u->right) > 0;
    }
    for (uint32_t r = 0; r < m->n_merges; r++) {
        const simdbpe__merge_rule *u = &m->rules[r];
        if (!ordered) {
            reach[u->id] = SIMDBPE__REACH_ASK;
            continue;
        }
        if (made[u->id] != r || reach[u->id] == SIMDBPE__REACH_ASK)
            continue;
        uint8_t a = reach[u->left], b = reach[u->right];
        if (a == SIMDBPE__REACH_ASK || b == SIMDBPE__REACH_ASK)
            reach[u->id] = SIMDBPE__REACH_ASK;
        else if (a == SIMDBPE__REACH_YES && b == SIMDBPE__REACH_YES &&
                 !boundary_merges(m, made, u->left, u->right, spines, spines + max_len + 1))
            reach[u->id] = SIMDBPE__REACH_YES;
    }
    free(made);
    free(spines);
    return SIMDBPE_OK;
}
