/*
 * test_train_ref.c - the fast trainer against a slow, obviously correct one.
 *
 * The reference is the textbook loop: at every step count every adjacent
 * pair in every unique word (overlapping occurrences count), take the pair
 * with the highest count (on ties the smallest (left id, right id)), stop
 * if there is none or it is rarer than the minimum, name the merged token
 * (reusing the id of an existing token with the same bytes), and rewrite
 * every word left to right. Ids: 0-255 the bytes in GPT-2 order (sorted by
 * the code point that spells each byte), then new tokens in order.
 *
 * Both trainers see the same words: the reference cuts the text into
 * sequences (lines or documents) and pre-tokenizes them with the library's
 * GPT-2 scanner (simdbpe__pretok_piece_end, tested on its own against HF and
 * tiktoken elsewhere), so what is compared here is counting and merging.
 *
 * Corpora: random words over small alphabets (ASCII, multi-byte letters,
 * digits, punctuation, several whitespaces), every word over {a, b} up to a
 * length once (ties everywhere), runs like "aaaa" and "abab" (overlapping
 * pairs), and real text in documents mode with several threads.
 *
 * Both trainers give a merge whose result already is a token that token's
 * id. Merges alone never get there (a span of a word that no merge across
 * its edges has touched is always cut as its bytes would be alone, so once
 * T is a token every such span of T's bytes already is T); the case that
 * does occur, a special token spelled like a merged token, is tested in
 * test_train.c. The comparison below still checks every id.
 */
#include "test_train.h"

#include "pretok/pretok.h"

/* ------------------------------------------------------- the reference */

typedef struct rword {
    uint32_t *s;
    size_t n;
    uint64_t count;
} rword;

typedef struct rtok {
    uint8_t *b;
    size_t len;
} rtok;

typedef struct rmerge {
    uint32_t left, right, id;
    uint64_t count;
} rmerge;

typedef struct rtrainer {
    rword *w;
    size_t nw;
    rtok *tok;
    size_t ntok;
    rmerge *m;
    size_t nm;
} rtrainer;

/* GPT-2's id of byte b: its rank when bytes are sorted by the code point
 * that spells them (printable ones spell themselves, the other 68 are
 * U+0100.. in byte order). */
static uint32_t ref_byte_id(unsigned b)
{
    unsigned cp[256], n = 0;
    for (unsigned c = 0; c < 256; c++) {
        int own = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
        cp[c] = own ? c : 0x100 + n++;
    }
    uint32_t rank = 0;
    for (unsigned c = 0; c < 256; c++)
        rank += cp[c] < cp[b];
    return rank;
}

typedef struct piece {
    const uint8_t *p;
    size_t len;
} piece;

static int cmp_piece(const void *x, const void *y)
{
    const piece *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->p, b->p, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The unique words of `text` with their counts. */
static void ref_words(rtrainer *r, const char *text, size_t len, int lines)
{
    piece *ps = malloc((len + 1) * sizeof *ps);
    size_t np = 0;
    const uint8_t *s = (const uint8_t *)text;
    for (size_t start = 0; start < len;) {
        size_t end = len;
        if (lines) {
            const uint8_t *nl = memchr(s + start, '\n', len - start);
            end = nl ? (size_t)(nl - s) + 1 : len;
        }
        for (size_t i = start; i < end;) {
            size_t j = simdbpe__pretok_piece_end(s + start, end - start, i - start) + start;
            ps[np++] = (piece){s + i, j - i};
            i = j;
        }
        start = end;
    }
    qsort(ps, np, sizeof *ps, cmp_piece);
    uint32_t byte_id[256];
    for (unsigned b = 0; b < 256; b++)
        byte_id[b] = ref_byte_id(b);
    r->w = malloc((np + 1) * sizeof *r->w);
    r->nw = 0;
    for (size_t i = 0; i < np;) {
        size_t j = i;
        while (j < np && cmp_piece(&ps[i], &ps[j]) == 0)
            j++;
        rword *w = &r->w[r->nw++];
        w->n = ps[i].len;
        w->count = j - i;
        w->s = malloc(w->n * sizeof *w->s);
        for (size_t k = 0; k < w->n; k++)
            w->s[k] = byte_id[ps[i].p[k]];
        i = j;
    }
    free(ps);
    r->tok = malloc(256 * sizeof *r->tok);
    r->ntok = 256;
    for (unsigned b = 0; b < 256; b++) {
        r->tok[byte_id[b]].b = malloc(1);
        r->tok[byte_id[b]].b[0] = (uint8_t)b;
        r->tok[byte_id[b]].len = 1;
    }
}

typedef struct pslot {
    uint64_t key, count;
    uint32_t gen;
} pslot;

static void ref_train(rtrainer *r, uint32_t vocab_size, uint64_t min_frequency)
{
    size_t total = 0;
    for (size_t i = 0; i < r->nw; i++)
        total += r->w[i].n;
    size_t cap = 16;
    while (cap < 2 * total + 16)
        cap *= 2;
    pslot *tab = calloc(cap, sizeof *tab);
    uint64_t *keys = malloc((total + 1) * sizeof *keys);
    r->m = malloc(sizeof *r->m);
    r->nm = 0;
    uint64_t minf = min_frequency > 1 ? min_frequency : 1;
    for (uint32_t gen = 1; r->ntok < vocab_size; gen++) {
        /* count every pair */
        size_t nkeys = 0;
        for (size_t i = 0; i < r->nw; i++)
            for (size_t k = 0; k + 1 < r->w[i].n; k++) {
                uint64_t key = (uint64_t)r->w[i].s[k] << 32 | r->w[i].s[k + 1];
                size_t h = (size_t)(key * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
                while (tab[h].gen == gen && tab[h].key != key)
                    h = (h + 1) & (cap - 1);
                if (tab[h].gen != gen) {
                    tab[h] = (pslot){key, 0, gen};
                    keys[nkeys++] = key;
                }
                tab[h].count += r->w[i].count;
            }
        /* the best */
        uint64_t best = 0, best_key = UINT64_MAX;
        for (size_t k = 0; k < nkeys; k++) {
            size_t h = (size_t)(keys[k] * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
            while (tab[h].key != keys[k])
                h = (h + 1) & (cap - 1);
            if (tab[h].count > best || (tab[h].count == best && keys[k] < best_key)) {
                best = tab[h].count;
                best_key = keys[k];
            }
        }
        if (best < minf)
            break;
        uint32_t a = (uint32_t)(best_key >> 32), b = (uint32_t)best_key;
        /* name the token */
        size_t len = r->tok[a].len + r->tok[b].len;
        uint8_t *bytes = malloc(len);
        memcpy(bytes, r->tok[a].b, r->tok[a].len);
        memcpy(bytes + r->tok[a].len, r->tok[b].b, r->tok[b].len);
        uint32_t x = UINT32_MAX;
        for (size_t t = 0; t < r->ntok && x == UINT32_MAX; t++)
            if (r->tok[t].len == len && memcmp(r->tok[t].b, bytes, len) == 0)
                x = (uint32_t)t;
        if (x == UINT32_MAX) {
            r->tok = realloc(r->tok, (r->ntok + 1) * sizeof *r->tok);
            r->tok[r->ntok] = (rtok){bytes, len};
            x = (uint32_t)r->ntok++;
        } else {
            free(bytes);
        }
        r->m = realloc(r->m, (r->nm + 1) * sizeof *r->m);
        r->m[r->nm++] = (rmerge){a, b, x, best};
        /* rewrite every word, left to right */
        for (size_t i = 0; i < r->nw; i++) {
            rword *w = &r->w[i];
            size_t o = 0;
            for (size_t k = 0; k < w->n;) {
                if (k + 1 < w->n && w->s[k] == a && w->s[k + 1] == b) {
                    w->s[o++] = x;
                    k += 2;
                } else {
                    w->s[o++] = w->s[k++];
                }
            }
            w->n = o;
        }
    }
    free(tab);
    free(keys);
}

static void ref_free(rtrainer *r)
{
    for (size_t i = 0; i < r->nw; i++)
        free(r->w[i].s);
    for (size_t i = 0; i < r->ntok; i++)
        free(r->tok[i].b);
    free(r->w);
    free(r->tok);
    free(r->m);
}

/* --------------------------------------------------------- comparison */

/* Trains both ways and compares every merge (pair, id, count). */
static void compare(const char *what, const char *text, size_t len, int lines,
                    uint32_t vocab_size, uint64_t min_frequency, unsigned threads, size_t chunk)
{
    rtrainer r;
    ref_words(&r, text, len, lines);
    ref_train(&r, vocab_size, min_frequency);

    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = vocab_size;
    o.min_frequency = min_frequency;
    o.threads = threads;
    o.mode = lines ? SIMDBPE_TRAIN_LINES : SIMDBPE_TRAIN_DOCUMENTS;
    simdbpe_trainer *t = tt_train(&o, text, len, chunk);

    cr_assert_eq(simdbpe_trainer_merge_count(t), r.nm, "%s: %zu merges, reference %zu", what,
                 simdbpe_trainer_merge_count(t), r.nm);
    for (size_t i = 0; i < r.nm; i++) {
        uint32_t l, rr, id;
        uint64_t c;
        simdbpe_trainer_merge_at(t, i, &l, &rr, &id, &c);
        cr_assert(l == r.m[i].left && rr == r.m[i].right && id == r.m[i].id && c == r.m[i].count,
                  "%s: merge %zu is (%u %u -> %u, %llu), reference (%u %u -> %u, %llu)", what, i,
                  l, rr, id, (unsigned long long)c, r.m[i].left, r.m[i].right, r.m[i].id,
                  (unsigned long long)r.m[i].count);
    }
    cr_assert_eq(simdbpe_trainer_vocab_size(t), r.ntok, "%s: vocab size", what);
    for (uint32_t id = 0; id < r.ntok; id++) {
        const uint8_t *b;
        size_t bl;
        cr_assert_eq(simdbpe_trainer_token_bytes(t, id, &b, &bl), SIMDBPE_OK);
        cr_assert(bl == r.tok[id].len && memcmp(b, r.tok[id].b, bl) == 0, "%s: token %u", what,
                  id);
    }
    simdbpe_trainer_free(t);
    ref_free(&r);
}

/* ---------------------------------------------------------- corpora */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Random lines of random words. Letters come from `alphabet` (UTF-8
 * characters separated by '|'), with now and then a digit, punctuation or
 * an odd whitespace. */
static char *random_text(uint64_t seed, const char *alphabet, size_t lines, size_t *len)
{
    const char *syms[16];
    size_t sym_len[16], n_syms = 0;
    for (const char *p = alphabet; *p && n_syms < 16;) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        syms[n_syms] = p;
        sym_len[n_syms++] = l;
        p += l + (bar != NULL);
    }
    static const char *const extra[] = {"7", "42", ".", ",", "'s", "  ", "\t", "!?", "\xc2\xa0"};
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    size_t cap = lines * 200 + 16, n = 0;
    char *s = malloc(cap);
    for (size_t l = 0; l < lines; l++) {
        size_t words = 1 + rnd(8);
        for (size_t w = 0; w < words; w++) {
            if (w || rnd(3) == 0)
                s[n++] = ' ';
            size_t wl = 1 + rnd(7);
            for (size_t k = 0; k < wl; k++) {
                size_t i = rnd((uint32_t)n_syms);
                memcpy(s + n, syms[i], sym_len[i]);
                n += sym_len[i];
            }
            if (rnd(6) == 0) {
                const char *e = extra[rnd(sizeof extra / sizeof *extra)];
                memcpy(s + n, e, strlen(e));
                n += strlen(e);
            }
        }
        s[n++] = '\n';
    }
    *len = n;
    return s;
}

Test(reference, random_corpora)
{
    static const char *const alphabets[] = {
        "a|b", "a|b|c", "x|y|z|w", "\xc3\xa9|e|\xc3\xa8", "\xd0\xb4|\xd0\xb0|a", "a|b|c|d|e|f",
        "\xe4\xb8\xad|\xe6\x96\x87", "t|h|e",
    };
    for (uint64_t seed = 1; seed <= 24; seed++) {
        size_t len;
        const char *alpha = alphabets[seed % 8];
        char *text = random_text(seed, alpha, 60 + seed * 10, &len);
        char what[64];
        snprintf(what, sizeof what, "random seed %llu", (unsigned long long)seed);
        int lines = seed % 3 != 0;
        uint32_t vocab = seed % 4 == 0 ? 300 : 100000; /* some runs to exhaustion */
        uint64_t minf = seed % 5 == 0 ? 2 : 0;
        compare(what, text, len, lines, vocab, minf, 1 + (unsigned)(seed % 3),
                seed % 2 ? 7 : len);
        free(text);
    }
}

Test(reference, ties_everywhere)
{
    /* Every word over {a, b} of length 1..9 exactly once, each on its own
     * line: almost every pair count is tied with others. */
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (unsigned len = 1; len <= 9; len++)
        for (unsigned bits = 0; bits < (1u << len); bits++) {
            for (unsigned k = 0; k < len; k++)
                s[n++] = (bits >> k) & 1 ? 'b' : 'a';
            s[n++] = '\n';
        }
    compare("ties", s, n, 1, 100000, 0, 2, n);
    compare("ties, min frequency 3", s, n, 1, 100000, 3, 1, 5);
    free(s);
}

Test(reference, overlapping_pairs)
{
    /* Runs where one pair overlaps itself ("aaaa": (a,a) three times) or
     * alternates ("ababab"), with different counts so both orders happen. */
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (unsigned len = 1; len <= 24; len++)
        for (unsigned rep = 0; rep < 1 + (len * 7) % 5; rep++) {
            for (unsigned k = 0; k < len; k++)
                s[n++] = 'a';
            s[n++] = ' ';
            for (unsigned k = 0; k < len; k++)
                s[n++] = k % 2 ? 'b' : 'a';
            s[n++] = ' ';
            for (unsigned k = 0; k < len; k++)
                s[n++] = k % 3 == 2 ? 'b' : 'a';
            s[n++] = '\n';
        }
    compare("overlaps", s, n, 1, 100000, 0, 1, n);
    compare("overlaps, documents", s, n, 0, 100000, 0, 3, 13);
    free(s);
}

Test(reference, line_ends)
{
    /* Lines mode counts many lines at once and fixes the pieces where a line
     * differs from the whole text: whitespace before the '\n' (one piece
     * with it), CR LF, NBSP and U+3000 before it, empty and blank lines,
     * lines without a '\n' at the end, whitespace starting a line,
     * contractions at line ends. Each case repeats with different words so
     * the counts differ. */
    static const char *const cases[] = {
        "word \n", "word  \n", "word\t\n", "word\r\n", "word \r\n", "word\xc2\xa0\n",
        "word\xe3\x80\x80\n", "\n", " \n", "   \n", "\t\n", " word\n", "  word\n",
        "\tword \n", "it's\n", "it'\n", "word's \n", "12 \n", "!? \n", "word\n\n",
        "\xc2\xa0word\n", "word \xc2\x85\n",
    };
    static const char *const words[] = {"ab", "ba", "abab", "bab", "aab"};
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (size_t r = 0; r < 40; r++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const char *w = words[(r * 7 + c) % 5];
            for (const char *p = cases[c]; *p; p++) {
                if (!strncmp(p, "word", 4)) {
                    memcpy(s + n, w, strlen(w));
                    n += strlen(w);
                    p += 3;
                } else {
                    s[n++] = *p;
                }
            }
        }
    memcpy(s + n, "ab ", 3); /* the last line has no '\n' */
    n += 3;
    compare("line ends", s, n, 1, 100000, 0, 1, n);
    compare("line ends, 3 threads, small chunks", s, n, 1, 100000, 0, 3, 61);
    free(s);
}

Test(reference, real_text_documents_mode_threads)
{
    size_t len;
    char *text = tt_read(TT_CORPUS("tinyshakespeare"), &len);
    /* Documents mode with 3 threads cuts the file at safe points in the
     * middle of the text; the reference sees it whole. */
    compare("tinyshakespeare, documents", text, len, 0, 256 + 400, 0, 3, 1 << 16);
    free(text);
}
