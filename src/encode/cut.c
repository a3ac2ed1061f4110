/*
 * cut.c - where a long text may be cut so that its parts, encoded one
 * after the other, give exactly the ids of encoding it whole: a place
 * where the pre-tokenizer certainly ends a piece (pretok/cuts.c argues
 * which, for every family) that no added token straddles.
 *
 * Added tokens split the text before the pre-tokenizer: a cut is refused
 * where an occurrence of one that is matched (the non-special ones always,
 * the special ones unless they are text) begins before p and ends after
 * it; then both parts are split as the whole. Tokens matched after NFC
 * could straddle p in the normalized text only: with one of those (no
 * model has one) nothing is cut.
 *
 * The cut rules hold on NFC text (pretok/cuts.c); the other normal forms
 * map characters on either side of a cut to others of other classes
 * (NFKC: U+00A0 to a space, U+2460 to a digit), so their texts are not
 * cut; nor are those of a normalizer chain (model/normalizer.h: Strip
 * works on the whole text, Prepend on each part, a Replace's regex may
 * match across the cut), nor those of SentencePiece-style models, whose
 * Prepend puts a word marker at the start of each part. Every caller that
 * cuts (the dataset engine, batches) asks here, so those texts are
 * encoded whole, as HF encodes them.
 */
#include "../model/model.h"

size_t simdbpe_cut_find(const simdbpe_model *m, const simdbpe_encode_options *opts,
                        const char *text, size_t len, size_t lo, size_t hi)
{
    simdbpe_encode_options none = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!opts)
        opts = &none;
    if ((m->normalizer != SIMDBPE__NORM_NONE && m->normalizer != SIMDBPE__NORM_NFC) ||
        m->nz || m->sp)
        return SIMDBPE_NO_CUT;
    uint32_t mask = opts->special == SIMDBPE_SPECIAL_AS_TEXT ? SIMDBPE__ADDED_SPECIAL : 0;
    for (size_t i = 0; m->normalizer != SIMDBPE__NORM_NONE && i < m->n_specials; i++)
        if ((m->specials[i].flags & mask) == 0 &&
            (m->specials[i].flags & SIMDBPE__ADDED_NORMALIZED))
            return SIMDBPE_NO_CUT;
    int added = mask == 0 ? m->n_specials > 0 : m->has_plain_added;
    const uint8_t *s = (const uint8_t *)text;
    for (;;) {
        size_t p = simdbpe__pretok_cut_last(m->pretok, s, len, lo, hi);
        if (p == SIZE_MAX)
            return SIMDBPE_NO_CUT;
        if (!added || simdbpe__added_straddles(m, s, len, p, mask, 0) == 0)
            return p;
        hi = p - 1;
    }
}
