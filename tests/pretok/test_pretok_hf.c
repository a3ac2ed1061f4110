/*
 * test_pretok_hf.c - the pre-tokenizers of the byte-level BPE families
 * (src/pretok/families.c) against HF tokenizers' own pieces.
 *
 * tests/data/pretok/families.jsonl.zst holds, for 22,895 texts (hand-picked
 * edge cases, seeded random strings over code points of every class, every
 * text of shared/golden/edge.jsonl, multilingual texts of many 64-byte
 * blocks), the pieces HF tokenizers 0.23.2 makes
 * with each family's pre_tokenizer taken from a real tokenizer.json
 * (tests/gen/pretok_families.mjs; provenance in tests/data/pretok/PROVENANCE.md).
 * Every family's scanners must reproduce every piece: one piece at a time,
 * and the chunk scanner the encoder runs with every kernel set of this CPU.
 * (test_pretok_families.c and the fuzz target compare the scanners with the
 * regexes run by PCRE2 on any text.)
 */
#include <criterion/criterion.h>

#include "pretok/pretok.h"
#include "test_util.h"
#include "zst_util.h"

#define FAMILIES_FILE SIMDBPE_TEST_DATA_DIR "/pretok/families.jsonl.zst"

/* Every family of the library's table but GPT-2, whose pieces are checked
 * against HF's in test_pretok (tests/data/golden/pretok.jsonl), and the
 * generic one (test_regex, tests/data/pretok/splits.jsonl.zst): a family
 * added to the table must be added to the data file too. */
#define MAX_FAMILIES 32
static simdbpe__pretok_kind families[MAX_FAMILIES];
static size_t n_families;

static void list_families(void)
{
    n_families = 0;
    for (unsigned k = 0; simdbpe__pretok_family_of(k); k++)
        if (k != SIMDBPE__PRETOK_GPT2 && !simdbpe__pretok_family_of(k)->generic) {
            cr_assert(n_families < MAX_FAMILIES);
            families[n_families++] = (simdbpe__pretok_kind)k;
        }
}

static const char *name_of(size_t f)
{
    return simdbpe__pretok_kind_name(families[f]);
}

typedef struct tally {
    size_t records;
    size_t scanner_bad[MAX_FAMILIES];
    size_t chunks_bad[MAX_FAMILIES]; /* the chunk scanner, any kernel set */
} tally;

/* The piece ends the chunk scanner (simdbpe__pretok_next, what the encoder
 * runs) of family `kind` with kernel set `ks` gives for s[0..len), into
 * got[]; returns their count. */
static size_t chunk_piece_ends(simdbpe__pretok_kind kind, const simdbpe__kernels *ks,
                               const uint8_t *s, size_t len, size_t *got)
{
    simdbpe__pretok_state st;
    simdbpe__pretok_begin_kind(&st, kind, ks, s, len);
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, n_got = 0;
    while ((count = simdbpe__pretok_next(&st, starts, &base)) != 0)
        for (size_t w = 0; w < count; w++)
            for (uint64_t b = starts[w]; b; b &= b - 1) {
                size_t at = base + 64 * w + (size_t)__builtin_ctzll(b);
                cr_assert(at < len && (at == 0) == (n_got == 0), "a piece start at %zu of %zu",
                          at, len);
                if (n_got)
                    got[n_got - 1] = at;
                n_got++;
            }
    if (n_got)
        got[n_got - 1] = len;
    return n_got;
}

/* Compares piece ends; reports the first difference of the first few
 * failing texts. Returns whether they are equal. */
static bool same_pieces(const char *who, const char *fam, size_t line, const char *text,
                        size_t len, const size_t *got, size_t n_got, const size_t *want,
                        size_t n_want, size_t *bad)
{
    size_t k = 0;
    while (k < n_got && k < n_want && got[k] == want[k])
        k++;
    if (k == n_got && k == n_want)
        return true;
    if ((*bad)++ < 5) {
        char shown[240];
        tu_show(shown, sizeof shown, text, len);
        size_t from = k ? want[k - 1] : 0;
        cr_log_error("%s %s, line %zu \"%s\": piece %zu from byte %zu ends at %ld, HF: %ld "
                     "(%zu pieces, HF %zu)",
                     who, fam, line, shown, k, from, k < n_got ? (long)got[k] : -1L,
                     k < n_want ? (long)want[k] : -1L, n_got, n_want);
    }
    return false;
}

static void check_record(json_t *rec, size_t line, tally *t)
{
    size_t len;
    const char *text = tu_json_text(rec, "text", &len);
    const uint8_t *s = (const uint8_t *)text;
    size_t *want = malloc((len + 1) * sizeof *want);
    size_t *got = malloc((len + 1) * sizeof *got);
    cr_assert(want && got);
    for (size_t f = 0; f < n_families; f++) {
        size_t n_want;
        uint32_t *lens = tu_json_ids(json_object_get(rec, name_of(f)), &n_want);
        cr_assert(n_want <= len, "line %zu: %s has more pieces than bytes", line,
                  name_of(f));
        size_t end = 0;
        for (size_t k = 0; k < n_want; k++)
            want[k] = end += lens[k];
        free(lens);
        cr_assert_eq(end, len, "line %zu: %s pieces cover %zu of %zu bytes", line,
                     name_of(f), end, len);

        size_t n_got = 0;
        for (size_t i = 0; i < len && n_got < len;) {
            size_t j = simdbpe__pretok_family_piece_end(families[f], s, len, i);
            cr_assert(j > i && j <= len, "%s line %zu: the piece at %zu ends at %zu (n %zu)",
                      name_of(f), line, i, j, len);
            got[n_got++] = i = j;
        }
        same_pieces("scanner", name_of(f), line, text, len, got, n_got, want, n_want,
                    &t->scanner_bad[f]);

        /* In a buffer of exactly len bytes, so that ASan sees a read past it. */
        uint8_t *exact = malloc(len ? len : 1);
        cr_assert(exact);
        memcpy(exact, text, len);
        int bad = 0;
        for (const simdbpe__kernels *const *ks = simdbpe__kernels_available(); *ks && !bad;
             ks++) {
            char who[64];
            snprintf(who, sizeof who, "chunk scanner (%s kernels)", (*ks)->name);
            n_got = chunk_piece_ends(families[f], *ks, exact, len, got);
            bad = !same_pieces(who, name_of(f), line, text, len, got, n_got, want, n_want,
                               &t->chunks_bad[f]);
        }
        free(exact);
    }
    free(want);
    free(got);
    t->records++;
}

Test(pretok_hf, reproduce_hf_pieces)
{
    size_t len, line = 0, texts = 0;
    char *data = read_zst(FAMILIES_FILE, &len);
    list_families();
    tally t = {0};
    json_t *rec;
    for (size_t i = 0; (rec = tu_jsonl_next(data, len, &i, &line, FAMILIES_FILE));) {
        if (line == 1) {
            json_t *count = json_object_get(
                json_object_get(json_object_get(rec, "header"), "texts"), "unique");
            cr_assert(json_is_integer(count), "%s starts without its header", FAMILIES_FILE);
            texts = (size_t)json_integer_value(count);
            json_t *have = json_object_get(json_object_get(rec, "header"), "families");
            for (size_t f = 0; f < n_families; f++)
                cr_assert(json_object_get(have, name_of(f)),
                          "%s has no pieces of family %s (tests/gen/pretok_families.mjs)",
                          FAMILIES_FILE, name_of(f));
        } else
            check_record(rec, line, &t);
        json_decref(rec);
    }
    free(data);
    /* the file is whole: as many texts as the generator wrote */
    cr_assert(t.records == texts && texts > 20000, "%zu texts in %s, its header says %zu",
              t.records, FAMILIES_FILE, texts);
    for (size_t f = 0; f < n_families; f++) {
        cr_expect_eq(t.scanner_bad[f], 0, "%s: the scanner differs from HF on %zu texts",
                     name_of(f), t.scanner_bad[f]);
        cr_expect_eq(t.chunks_bad[f], 0, "%s: the chunk scanner differs from HF on %zu texts",
                     name_of(f), t.chunks_bad[f]);
    }
}

/* GPT2 is the GPT-2 scanner; its pieces are checked against HF in test_pretok. */
Test(pretok_hf, gpt2_is_the_gpt2_scanner)
{
    const char *text = "Hello world's  \n\n  x 123456 \xe4\xb8\xad\xe6\x96\x87!!";
    const uint8_t *s = (const uint8_t *)text;
    size_t n = strlen(text), pieces = 0;
    for (size_t i = 0; i < n; pieces++) {
        size_t j = simdbpe__pretok_family_piece_end(SIMDBPE__PRETOK_GPT2, s, n, i);
        cr_assert_eq(j, simdbpe__pretok_piece_end(s, n, i), "at %zu", i);
        i = j;
    }
    cr_assert_eq(pieces, 8);
}
