/*
 * offsets.c - where each token of a document comes from
 * (simdbpe_encode_offsets).
 *
 * Works on the document, after the encoder: the ids of the text as
 * simdbpe_encode gives them, each token's bytes taken in turn along the
 * text the tokens spell. That text is the one given, except where the
 * encoder changed it before pre-tokenizing:
 *
 *   given text O --(UTF-8 repair)--> R --(NFC, stretches between the
 *   added tokens matched in the raw text)--> T (what the tokens spell)
 *
 * The pieces (pre-tokens and added tokens, HF's words) are found in T as
 * the encoder finds them: the added tokens matched in R, then in each
 * normalized stretch the others, then the family's scanner (one piece at
 * a time) over what is left.
 *
 * Both changes are recorded as blocks (a range of the later text that
 * replaced a range of the earlier one); outside the blocks the two texts
 * are the same bytes, shifted. A block of the repair is one U+FFFD for one
 * ill-formed sequence; a block of NFC carries an alignment per byte
 * (common/nfc.c: HF tokenizers' rule). Nearly all text has no block at all, and
 * then the spans are the tokens' bytes widened to whole characters.
 *
 * A SentencePiece-style model's T goes further, as encode_sp.c makes it:
 * each stretch (in its Unicode form, if any) gets the word markers of
 * Prepend("\u2581") and Replace(" ", "\u2581"), is split by the normalized
 * added tokens, and each pre-token gets a Metaspace pre-tokenizer's markers.
 * Its T carries an alignment per byte (16 bytes of memory per byte of T,
 * for these models and chains only), as HF's NormalizedString aligns them: a marker
 * for a space spans the space; a prepended marker spans the first
 * character of what it is put before; the Unicode forms' blocks as above.
 * Its tokens are walked along T as simdbpe__sp_word makes them: a <0xNN>
 * token is one byte (so each byte token of a character spans the whole
 * character, as in HF), the unknown token one character it stands for
 * (with fuse_unk, the run of them up to the piece's end), any other
 * token its vocabulary string. A model whose normalizer is a chain of HF's
 * steps (Lowercase, Strip, Replace, Prepend, the forms) gets T the same
 * way, each stretch through simdbpe__normalize_aligned (normalizer.c: the
 * same steps as the encoder's, carrying HF's alignments).
 *
 * The tokens are checked to spell T byte for byte, an added token where
 * it was matched by its text (which may differ from its bytes: a
 * normalized one's NFC, or "\u00c5X" whose bytes are C5 58): the split of
 * the raw added tokens below mirrors the encoder's (encode_stretch in
 * encoder.c), and a disagreement is reported (SIMDBPE_ERR_UNSUPPORTED),
 * never turned into wrong spans.
 */
#include <stdlib.h>

#include "encoder.h"
#include "../common/nfc.h"
#include "../common/utf8_valid.h"

/* A range of a later text [to_start, to_end) that replaced [from_start,
 * from_end) of the earlier one; align (NFC blocks): 2 offsets in the earlier
 * text per byte of the range, else NULL. */
typedef struct block {
    size_t from_start, from_end, to_start, to_end;
    size_t *align;
} block;

typedef struct blocks {
    block *b;
    size_t n, cap;
    int failed; /* out of memory */
} blocks;

static block *blocks_add(blocks *bs)
{
    if (simdbpe__grow((void **)&bs->b, &bs->cap, bs->n + 1, sizeof *bs->b)) {
        bs->failed = 1;
        return NULL;
    }
    block *b = &bs->b[bs->n++];
    memset(b, 0, sizeof *b);
    return b;
}

static void blocks_free(blocks *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        free(bs->b[i].align);
    free(bs->b);
}

/* Position x of the later text in the earlier one, x outside every block
 * or on one's edge (a start maps to the replaced range's start, an end to
 * its end): x shifted by the last block that ends at or before x. */
static size_t map_back(const blocks *bs, size_t x)
{
    size_t lo = 0, hi = bs->n; /* the blocks with to_end <= x are bs->b[0..lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bs->b[mid].to_end <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return x;
    const block *b = &bs->b[lo - 1];
    return x - b->to_end + b->from_end;
}

/* The block holding position x of the later text strictly inside, or NULL. */
static const block *block_at(const blocks *bs, size_t x)
{
    size_t lo = 0, hi = bs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bs->b[mid].to_end <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bs->n && bs->b[lo].to_start <= x ? &bs->b[lo] : NULL;
}

/* ------------------------------------------------------------ UTF-8 repair */

/* R: the text with each maximal ill-formed subpart replaced by U+FFFD, as
 * the encoder's SIMDBPE_UTF8_REPLACE does, and a block for each. */
static uint8_t *repair(const simdbpe_encoder *e, const uint8_t *s, size_t len, size_t bad,
                       size_t *out_len, blocks *bs)
{
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    uint8_t *o = malloc(3 * len + 1);
    if (!o)
        return NULL;
    memcpy(o, s, bad);
    size_t n = bad, i = bad;
    while (i < len) {
        size_t valid = e->k->validate_utf8(s + i, len - i);
        memcpy(o + n, s + i, valid);
        n += valid;
        i += valid;
        if (i == len)
            break;
        size_t sub = simdbpe__utf8_maximal_subpart(s + i, len - i);
        block *b = blocks_add(bs);
        if (!b) {
            free(o);
            return NULL;
        }
        *b = (block){i, i + sub, n, n + 3, NULL};
        memcpy(o + n, "\xEF\xBF\xBD", 3);
        n += 3;
        i += sub;
    }
    *out_len = n;
    return o;
}

/* ------------------------------------------------- NFC, pieces: T */

typedef struct splitter {
    const simdbpe_model *m;
    uint32_t mask;    /* the added tokens that count (see encode_stretch) */
    const uint8_t *r; /* R */
    size_t base, lo;  /* the stretch being normalized: its offset in R; where its piece starts */
    uint8_t *t;       /* T, when it is not R (NFC) */
    size_t t_len, t_cap, r_copied; /* R[0..r_copied) is in t */
    blocks *bs;       /* NFC blocks */
    size_t *pieces;   /* where each piece starts in T */
    size_t n_pieces, cap_pieces;
    size_t *added;    /* the added tokens matched: 2 k, where in T; 2 k + 1, which */
    size_t n_added, cap_added;
    int failed;
} splitter;

static int t_append(splitter *w, const uint8_t *s, size_t n)
{
    if (simdbpe__grow((void **)&w->t, &w->t_cap, w->t_len + n + 1, 1))
        return -1;
    memcpy(w->t + w->t_len, s, n);
    w->t_len += n;
    return 0;
}

static void piece_at(splitter *w, size_t at)
{
    if (simdbpe__grow((void **)&w->pieces, &w->cap_pieces, w->n_pieces + 1, sizeof *w->pieces))
        w->failed = 1;
    else
        w->pieces[w->n_pieces++] = at;
}

/* A piece that is the added token m->specials[which], at `at` in T. */
static void added_at(splitter *w, size_t at, size_t which)
{
    piece_at(w, at);
    if (simdbpe__grow((void **)&w->added, &w->cap_added, 2 * (w->n_added + 1), sizeof *w->added)) {
        w->failed = 1;
        return;
    }
    w->added[2 * w->n_added] = at;
    w->added[2 * w->n_added++ + 1] = which;
}

static int on_stretch(void *ctx, size_t start, size_t end, const uint8_t *norm, size_t len)
{
    splitter *w = ctx;
    start += w->base;
    end += w->base;
    if (t_append(w, w->r + w->r_copied, start - w->r_copied))
        return -1;
    block *b = blocks_add(w->bs);
    size_t *align = b ? malloc(2 * (len ? len : 1) * sizeof *align) : NULL;
    if (!align)
        return -1;
    *b = (block){start, end, w->t_len, w->t_len + len, align};
    simdbpe__nfc_align(w->m->normalizer, w->r, w->lo, start, end, norm, len, align);
    if (t_append(w, norm, len))
        return -1;
    w->r_copied = end;
    return 0;
}

/* The pieces of t[a..b) (normalized): the added tokens matched there (the
 * encoder's second pass), and the pre-tokens of the stretches between. */
static void pieces_of(splitter *w, const uint8_t *t, size_t a, size_t b)
{
    const simdbpe_model *m = w->m;
    for (size_t i = a; i < b;) {
        size_t which = 0;
        size_t at = m->trie ? i + simdbpe__added_find(m, t + i, b - i, w->mask,
                                                       SIMDBPE__ADDED_NORMALIZED, &which)
                            : b;
        /* the pre-tokens of t[i..at): the scanner runs over the stretch alone */
        if (m->regex) {
            simdbpe__regex_iter it;
            size_t ps, pe;
            simdbpe__regex_begin(&it, m->regex, t + i, at - i);
            while (simdbpe__regex_next(&it, &ps, &pe))
                piece_at(w, i + ps);
        } else
            for (size_t p = i; p < at;) {
                piece_at(w, p);
                p = i + simdbpe__pretok_family_piece_end((simdbpe__pretok_kind)m->pretok, t + i,
                                                         at - i, p - i);
            }
        if (at == b)
            break;
        added_at(w, at, which);
        i = at + m->specials[which].len;
    }
}

/* T (for NFC models; else T is R) with its NFC blocks, and the pieces:
 * the added tokens matched in the raw text R first, then each stretch
 * between them normalized and split by the others (encode_stretch). */
static int split(splitter *w, const uint8_t *r, size_t len, int nfc)
{
    const simdbpe_model *m = w->m;
    w->r = r;
    for (size_t i = 0; i <= len;) {
        size_t which = 0;
        size_t at = m->trie && i < len ? i + simdbpe__added_find(m, r + i, len - i, w->mask, 0,
                                                                 &which)
                                       : len;
        if (nfc) {
            size_t t0 = w->t_len + (i - w->r_copied); /* where R[i] lands in T */
            w->base = w->lo = i;
            if (at > i && simdbpe__nfc_stretches(m->normalizer, r + i, at - i, on_stretch, w) != 0)
                return -1;
            if (t_append(w, r + w->r_copied, at - w->r_copied))
                return -1;
            w->r_copied = at;
            pieces_of(w, w->t, t0, w->t_len);
        } else {
            pieces_of(w, r, i, at);
        }
        if (at == len)
            break;
        size_t tl = m->specials[which].len;
        added_at(w, nfc ? w->t_len : at, which);
        if (nfc) {
            if (t_append(w, r + at, tl))
                return -1;
            w->r_copied = at + tl;
        }
        i = at + tl;
    }
    return w->failed ? -1 : 0;
}

/* ------------- SentencePiece-style models, normalizer chains: aligned T */

/* A text with where each byte comes from in R: al[2 k], al[2 k + 1] are
 * the start and end of byte k's span (HF's alignments, per byte). */
typedef struct aligned {
    uint8_t *t;
    size_t *al;
    size_t len, cap, al_cap;
} aligned;

static int al_reserve(aligned *a, size_t more)
{
    return simdbpe__grow((void **)&a->t, &a->cap, a->len + more + 1, 1) ||
           simdbpe__grow((void **)&a->al, &a->al_cap, a->len + more + 1, 2 * sizeof *a->al);
}

/* n bytes, each aligned to [start, end), where room was reserved. */
static void al_fill(aligned *a, const uint8_t *s, size_t n, size_t start, size_t end)
{
    for (size_t k = 0; k < n; k++) {
        a->t[a->len] = s[k];
        a->al[2 * a->len] = start;
        a->al[2 * a->len++ + 1] = end;
    }
}

static int al_put(aligned *a, const uint8_t *s, size_t n, size_t start, size_t end)
{
    if (al_reserve(a, n))
        return -1;
    al_fill(a, s, n, start, end);
    return 0;
}

/* R[from..to) unchanged: each byte aligned to its character. */
static int al_copy(aligned *a, const uint8_t *r, size_t from, size_t to)
{
    if (al_reserve(a, to - from))
        return -1;
    for (size_t i = from; i < to;) {
        size_t l = 1;
        if (r[i] >= 0x80)
            simdbpe__utf8_decode(r, i, &l);
        al_fill(a, r + i, l, i, i + l);
        i += l;
    }
    return 0;
}

/* src[from..to) with its alignment. */
static int al_take(aligned *a, const aligned *src, size_t from, size_t to)
{
    if (to == from)
        return 0;
    if (al_reserve(a, to - from))
        return -1;
    memcpy(a->t + a->len, src->t + from, to - from);
    memcpy(a->al + 2 * a->len, src->al + 2 * from, 2 * (to - from) * sizeof *a->al);
    a->len += to - from;
    return 0;
}

static const uint8_t MARKER[3] = {0xE2, 0x96, 0x81}; /* U+2581 */

/* src[from..to) with its spaces turned into markers (each aligned to its
 * space), and a marker put before it (aligned to its first character) if
 * `prepend` and it is not empty: HF's Replace(" ", "\u2581") and
 * Prepend("\u2581"), or a Metaspace pre-tokenizer's. */
static int al_mark(aligned *out, const aligned *src, size_t from, size_t to, int replace,
                   int prepend)
{
    size_t need = to - from + 3;
    for (size_t k = from; replace && k < to; k++)
        need += src->t[k] == ' ' ? 2 : 0;
    if (al_reserve(out, need))
        return -1;
    if (prepend && to > from)
        al_fill(out, MARKER, 3, src->al[2 * from], src->al[2 * from + 1]);
    for (size_t k = from; k < to; k++) {
        int sp = replace && src->t[k] == ' ';
        al_fill(out, sp ? MARKER : src->t + k, sp ? 3 : 1, src->al[2 * k], src->al[2 * k + 1]);
    }
    return 0;
}

typedef struct aligned_splitter {
    splitter *w;           /* pieces and added tokens (positions in doc) */
    aligned doc, form, sp; /* T; a stretch after the Unicode form; after Prepend/Replace */
    aligned raw;           /* a stretch of R, for a normalizer chain */
    simdbpe__nz_work work; /* the chain's */
    const uint8_t *r;
    size_t base;           /* the stretch's offset in R */
    size_t copied;         /* R[base..copied) is in form */
} aligned_splitter;

static int aligned_on_stretch(void *ctx, size_t start, size_t end, const uint8_t *norm, size_t len)
{
    aligned_splitter *q = ctx;
    start += q->base;
    end += q->base;
    if (al_copy(&q->form, q->r, q->copied, start) || al_reserve(&q->form, len))
        return -1;
    simdbpe__nfc_align(q->w->m->normalizer, q->r, q->base, start, end, norm, len,
                       q->form.al + 2 * q->form.len);
    memcpy(q->form.t + q->form.len, norm, len);
    q->form.len += len;
    q->copied = end;
    return 0;
}

/* The pre-tokens of sp.t[a..b) (a stretch between added tokens) into T:
 * with a Metaspace pre-tokenizer its markers (the text's first pre-token
 * if `first`), cut before each marker with its split; else one piece. */
static int sp_pretokens(aligned_splitter *q, size_t a, size_t b, int first)
{
    const simdbpe_model *m = q->w->m;
    size_t at = q->doc.len;
    if (m->sp & SIMDBPE__SP_META) {
        int prepend = simdbpe__sp_meta_prepends(m->sp, q->sp.t + a, b - a, first);
        if (al_mark(&q->doc, &q->sp, a, b, 1, prepend))
            return -1;
    } else if (al_take(&q->doc, &q->sp, a, b)) {
        return -1;
    }
    piece_at(q->w, at);
    if (m->sp & SIMDBPE__SP_META_SPLIT)
        for (size_t k = at + 1; k + 3 <= q->doc.len; k++)
            if (memcmp(q->doc.t + k, MARKER, 3) == 0)
                piece_at(q->w, k);
    return 0;
}

/* T with a per-byte alignment, and its pieces, as encode_stretch and
 * encode_sp.c make it: the added tokens matched in R first, each stretch
 * between them through the normalizer chain or its Unicode form, then
 * (SentencePiece-style) Prepend/Replace, split by the normalized added
 * tokens, then the Metaspace pre-tokenizer's markers; byte-level, the
 * family's pre-tokens (pieces_of). */
static int split_aligned(aligned_splitter *q, const uint8_t *r, size_t len)
{
    splitter *w = q->w;
    const simdbpe_model *m = w->m;
    q->r = r;
    for (size_t i = 0; i <= len;) {
        size_t which = 0;
        size_t at = m->trie && i < len ? i + simdbpe__added_find(m, r + i, len - i, w->mask, 0,
                                                                 &which)
                                       : len;
        q->form.len = q->sp.len = q->raw.len = 0;
        q->base = q->copied = i;
        if (m->normalizer == SIMDBPE__NORM_CHAIN) {
            if (al_copy(&q->raw, r, i, at))
                return -1;
            const uint8_t *s = q->raw.t;
            const size_t *al = q->raw.al;
            size_t n = q->raw.len;
            if (n && simdbpe__normalize_aligned(m->nz, &q->work, &s, &n, &al, i) != SIMDBPE_OK)
                return -1;
            if (al_reserve(&q->form, n))
                return -1;
            if (n) { /* (an empty stretch's s may be NULL) */
                memcpy(q->form.t, s, n);
                memcpy(q->form.al, al, 2 * n * sizeof *al);
            }
            q->form.len = n;
            q->copied = at;
        } else if (m->normalizer != SIMDBPE__NORM_NONE && at > i &&
                   simdbpe__nfc_stretches(m->normalizer, r + i, at - i, aligned_on_stretch, q) != 0) {
            return -1;
        }
        if (al_copy(&q->form, r, q->copied, at) ||
            al_mark(&q->sp, &q->form, 0, q->form.len, (m->sp & SIMDBPE__SP_REPLACE) != 0,
                    (m->sp & SIMDBPE__SP_PREPEND) != 0))
            return -1;
        if (!m->sp) { /* byte-level: its pre-tokens as the encoder finds them */
            size_t t0 = q->doc.len;
            if (al_take(&q->doc, &q->sp, 0, q->sp.len))
                return -1;
            pieces_of(w, q->doc.t, t0, q->doc.len);
        }
        for (size_t k = 0; m->sp && k < q->sp.len;) {
            size_t nw = 0;
            size_t nat = m->trie ? k + simdbpe__added_find(m, q->sp.t + k, q->sp.len - k,
                                                           w->mask, SIMDBPE__ADDED_NORMALIZED,
                                                           &nw)
                                 : q->sp.len;
            if (nat > k && sp_pretokens(q, k, nat, i == 0 && k == 0))
                return -1;
            if (nat == q->sp.len)
                break;
            size_t nl = m->specials[nw].len;
            added_at(w, q->doc.len, nw);
            if (al_take(&q->doc, &q->sp, nat, nat + nl))
                return -1;
            k = nat + nl;
        }
        if (at == len)
            break;
        size_t tl = m->specials[which].len;
        added_at(w, q->doc.len, which);
        if (al_put(&q->doc, r + at, tl, at, at + tl))
            return -1;
        i = at + tl;
    }
    return w->failed ? -1 : 0;
}

/* How many bytes of T at x the SentencePiece-style token `id` (not an
 * added token matched there) stands for, or 0 if it does not fit: a
 * <0xNN> token one byte, the unknown token one unknown character (with
 * fuse_unk all those that follow within the piece, up to `end`), any
 * other its string. */
static size_t sp_token_len(const simdbpe_model *m, uint32_t id, const uint8_t *t, size_t x,
                           size_t end)
{
    if ((m->sp & SIMDBPE__SP_BYTE_FALLBACK) && m->byte_id[t[x]] == id && id != m->unk_id)
        return 1;
    if (id == m->unk_id) {
        size_t k = x;
        do {
            size_t l = 1;
            if (t[k] >= 0x80)
                simdbpe__utf8_decode(t, k, &l);
            if (!simdbpe__sp_char_unknown(m, t + k, l))
                break;
            k += l;
        } while (k < end && (m->sp & SIMDBPE__SP_FUSE_UNK));
        if (k > x)
            return k - x;
    }
    const uint8_t *tok;
    size_t tl;
    if (simdbpe_model_token_bytes(m, id, &tok, &tl) != SIMDBPE_OK || tl == 0 || tl > end - x ||
        memcmp(tok, t + x, tl) != 0)
        return 0;
    return tl;
}

/* ---------------------------------------------------------------- spans */

/* The span in R of byte x of T: its NFC alignment, or the whole character
 * of R it is part of. */
static void span_of(const blocks *nfc, const uint8_t *r, size_t r_len, size_t x, size_t *a,
                    size_t *b)
{
    const block *k = block_at(nfc, x);
    if (k) {
        *a = k->align[2 * (x - k->to_start)];
        *b = k->align[2 * (x - k->to_start) + 1];
        return;
    }
    size_t p = map_back(nfc, x), q = p + 1;
    while (p > 0 && (r[p] & 0xC0) == 0x80)
        p--;
    while (q < r_len && (r[q] & 0xC0) == 0x80)
        q++;
    *a = p;
    *b = q;
}

simdbpe_status simdbpe_encode_offsets(simdbpe_encoder *e, const char *text, size_t len,
                                      const simdbpe_encode_options *opts, const uint32_t **ids,
                                      simdbpe_span **spans, size_t *n_ids, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!spans)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "encode_offsets: NULL argument");
    *spans = NULL;
    simdbpe_status st = simdbpe_encode(e, text, len, opts, ids, n_ids, err);
    if (st != SIMDBPE_OK)
        return st;
    static const simdbpe_encode_options defaults = SIMDBPE_ENCODE_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    const simdbpe_model *m = e->m;
    size_t n = *n_ids;
    int add = opts->add_special_tokens;
    size_t n_pre = add & ~SIMDBPE_ADD_SUFFIX ? m->n_prefix : 0;
    size_t n_suf = add & ~SIMDBPE_ADD_PREFIX ? m->n_suffix : 0;
    simdbpe_span *out = calloc(n ? n : 1, sizeof *out);
    blocks fixes = {0}, nfc = {0};
    splitter w = {0};
    aligned_splitter q = {0};
    w.m = m;
    w.mask = SIMDBPE__ADDED_NORMALIZED |
             (opts->special == SIMDBPE_SPECIAL_AS_TEXT ? SIMDBPE__ADDED_SPECIAL : 0);
    w.bs = &nfc;
    const uint8_t *o = (const uint8_t *)text, *r = o, *t;
    uint8_t *repaired = NULL;
    size_t r_len = len, t_len;
    if (!out)
        goto nomem;
    size_t bad = len ? e->k->validate_utf8(o, len) : 0;
    if (bad != len && !(r = repaired = repair(e, o, len, bad, &r_len, &fixes)))
        goto nomem;
    for (size_t i = 0; i < n; i++)
        out[i].piece = SIMDBPE_NO_PIECE;
    int aligned_t = m->sp || m->normalizer == SIMDBPE__NORM_CHAIN;
    if (aligned_t) {
        q.w = &w;
        if (split_aligned(&q, r, r_len))
            goto nomem;
        t = q.doc.t;
        t_len = q.doc.len;
    } else {
        int nfc_model = m->normalizer != SIMDBPE__NORM_NONE;
        if (split(&w, r, r_len, nfc_model) || nfc.failed)
            goto nomem;
        t = nfc_model ? w.t : r;
        t_len = nfc_model ? w.t_len : r_len;
    }
    size_t x = 0, piece = 0; /* where the next token starts in T; its piece */
    size_t k = 0;            /* the next added token matched at x or after */
    for (size_t i = n_pre; i + n_suf < n; i++) {
        const uint8_t *tok;
        size_t tl;
        while (k < w.n_added && w.added[2 * k] < x)
            k++;
        const simdbpe__special *sp =
            k < w.n_added && w.added[2 * k] == x ? &m->specials[w.added[2 * k + 1]] : NULL;
        while (piece + 1 < w.n_pieces && w.pieces[piece + 1] <= x)
            piece++;
        if (sp && sp->id == (*ids)[i]) {
            tok = sp->text; /* what it was matched by */
            tl = sp->len;
        } else if (m->sp) {
            size_t end = piece + 1 < w.n_pieces ? w.pieces[piece + 1] : t_len;
            if (x >= t_len || !(tl = sp_token_len(m, (*ids)[i], t, x, end)))
                break;
            tok = t + x;
        } else if (simdbpe_model_token_bytes(m, (*ids)[i], &tok, &tl) != SIMDBPE_OK) {
            break;
        }
        if (tl == 0 || tl > t_len - x || memcmp(tok, t + x, tl) != 0)
            break;
        size_t a, b, c, d; /* HF: the first byte's start, the last byte's end */
        if (aligned_t) {
            a = q.doc.al[2 * x];
            d = q.doc.al[2 * (x + tl - 1) + 1];
        } else {
            span_of(&nfc, r, r_len, x, &a, &b);
            span_of(&nfc, r, r_len, x + tl - 1, &c, &d);
        }
        out[i].start = map_back(&fixes, a);
        out[i].end = map_back(&fixes, d);
        out[i].piece = piece;
        x += tl;
    }
    if (x != t_len || (n_pre + n_suf > n)) {
        st = simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                           "encode_offsets: the tokens do not spell the text (at byte %zu of "
                           "its normalized form)",
                           x);
        goto done;
    }
    *spans = out;
    out = NULL;
    goto done;
nomem:
    st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
done:
    free(out);
    free(repaired);
    free(w.t);
    free(w.pieces);
    free(w.added);
    free(q.doc.t);
    free(q.doc.al);
    free(q.form.t);
    free(q.form.al);
    free(q.sp.t);
    free(q.sp.al);
    free(q.raw.t);
    free(q.raw.al);
    simdbpe__nz_work_free(&q.work);
    blocks_free(&fixes);
    blocks_free(&nfc);
    if (st != SIMDBPE_OK) {
        *ids = NULL;
        *n_ids = 0;
    }
    return st;
}
