/*
 * test_pretok.c - the GPT-2 pre-tokenizer scanner (src/pretok).
 *
 * Pieces are compared with
 *   - tests/data/golden/pretok.jsonl: HF tokenizers' ByteLevel pre-tokenizer
 *     (the reference regex engine) on tricky strings, recorded by
 *     tests/gen/gen.mjs;
 *   - hand-written cases read off the regex
 *       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *     with the reasoning in a comment.
 */
#include <criterion/criterion.h>

#include "pretok/pretok.h"
#include "test_util.h"

/* Splits s into pieces with the library; returns their count. */
static size_t split(const char *s, size_t n, size_t *lens, size_t cap)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        size_t j = simdbpe__pretok_piece_end((const uint8_t *)s, n, i);
        cr_assert(j > i && j <= n, "piece at %zu ends at %zu (n %zu)", i, j, n);
        cr_assert_lt(count, cap);
        lens[count++] = j - i;
        i = j;
    }
    return count;
}

static void expect_pieces(const char *s, size_t n, const size_t *want, size_t n_want,
                          const char *where)
{
    size_t got[512];
    size_t n_got = split(s, n, got, 512);
    char shown[200];
    tu_show(shown, sizeof shown, s, n);
    cr_assert_eq(n_got, n_want, "%s \"%s\": %zu pieces, want %zu", where, shown, n_got, n_want);
    for (size_t i = 0; i < n_got; i++)
        cr_assert_eq(got[i], want[i], "%s \"%s\": piece %zu is %zu bytes, want %zu", where, shown,
                     i, got[i], want[i]);
}

static void check_golden(json_t *rec, size_t line, void *ctx)
{
    (void)ctx;
    size_t len;
    const char *text = tu_json_text(rec, "text", &len);
    size_t n;
    uint32_t *pieces = tu_json_ids(json_object_get(rec, "pieces"), &n);
    size_t want[512];
    cr_assert_leq(n, 512);
    for (size_t i = 0; i < n; i++)
        want[i] = pieces[i];
    char where[64];
    snprintf(where, sizeof where, "pretok.jsonl line %zu", line);
    expect_pieces(text, len, want, n, where);
    free(pieces);
}

Test(pretok, matches_hf_on_golden_strings)
{
    size_t n = tu_each_jsonl(TU_GOLDEN_DIR "/pretok.jsonl", check_golden, NULL);
    cr_assert_gt(n, 50);
}

#define PIECES(...) ((const size_t[]){__VA_ARGS__}), sizeof((const size_t[]){__VA_ARGS__}) / sizeof(size_t)

static void hand(const char *s, const size_t *want, size_t n_want)
{
    expect_pieces(s, strlen(s), want, n_want, "hand case");
}

Test(pretok, contractions)
{
    hand("'s", PIECES(2));           /* 's */
    hand("'ll've", PIECES(3, 3));    /* 'll then 've */
    hand("don't", PIECES(3, 2));     /* don + 't */
    hand("I'LL", PIECES(1, 1, 2));   /* upper case is not a contraction: ' then LL */
    hand("'sa", PIECES(2, 1));       /* 's is tried before letters */
    hand(" 's", PIECES(2, 1));       /* " '" is punctuation with its space, then s */
    hand("'", PIECES(1));
    hand("'x", PIECES(1, 1));
}

Test(pretok, optional_space_before_a_run)
{
    hand("a b", PIECES(1, 2));
    hand("hello world", PIECES(5, 6));
    hand(" 123", PIECES(4));
    hand("x 123", PIECES(1, 4));
    hand("ab12cd", PIECES(2, 2, 2)); /* letters, numbers, letters */
    hand(" !!", PIECES(3));
    hand("a\tb", PIECES(1, 1, 1));   /* only U+0020 joins the next run */
}

Test(pretok, whitespace_runs)
{
    /* \s+(?!\S) leaves the last space of a run to the next word... */
    hand("a  b", PIECES(1, 1, 2));
    hand("a   b", PIECES(1, 2, 2));
    /* ...but a run at the end of the text is one piece. */
    hand("a   ", PIECES(1, 3));
    hand("   ", PIECES(3));
    /* The backtracked code point is not a space: it becomes its own \s+ piece. */
    hand("a \tb", PIECES(1, 1, 1, 1));
    hand("a\n\nb", PIECES(1, 1, 1, 1));
    /* A single whitespace code point before a word is itself (\s+). */
    hand("\nb", PIECES(1, 1));
    /* Multi-byte whitespace: U+3000 is 3 bytes. */
    hand("a\xE3\x80\x80\xE3\x80\x80" "b", PIECES(1, 3, 3, 1));
    hand("\xC2\xA0" "a", PIECES(2, 1)); /* U+00A0 is \s, not a space before a word */
}

Test(pretok, unicode_classes)
{
    hand("e\xCC\x81", PIECES(1, 2));          /* a combining mark is not \p{L} */
    hand("\xEF\xBB\xBF" "a", PIECES(3, 1));   /* U+FEFF is other, not whitespace: */
    hand("\xEF\xBB\xBF\xEF\xBB\xBF" "a", PIECES(6, 1)); /* one run (as \\s it would be 3, 3, 1) */
    hand("x \xEF\xBB\xBFy", PIECES(1, 4, 1)); /* " \\uFEFF" is one piece */
    hand("\xD9\xA1\xD9\xA2", PIECES(4));      /* Arabic-Indic digits are one \p{N} run */
    hand("\xC2\xBD" "x", PIECES(2, 1));       /* 1/2 is \p{N} (No) */
    hand(" \xF0\x9F\x98\x80", PIECES(5));     /* an emoji is other, with its space */
    hand("\xE4\xB8\xAD\xE6\x96\x87", PIECES(6)); /* CJK letters */
}

Test(pretok, every_piece_is_a_prefix_split_of_random_text)
{
    /* Pieces must tile any valid UTF-8 text and end on code point
     * boundaries; random text built from a mix of classes. */
    static const char *const units[] = {"a", "Z", "7", " ", "  ", "\n", "'", "'s", "!",
                                        "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                        "\xE3\x80\x80", "\xCC\x81", "\xEF\xBB\xBF", "\t"};
    srand(7);
    for (int t = 0; t < 2000; t++) {
        char s[400];
        size_t n = 0;
        int k = 1 + rand() % 30;
        for (int i = 0; i < k; i++) {
            const char *u = units[rand() % (int)(sizeof units / sizeof units[0])];
            memcpy(s + n, u, strlen(u));
            n += strlen(u);
        }
        size_t lens[400];
        size_t count = split(s, n, lens, 400), pos = 0;
        for (size_t i = 0; i < count; i++) {
            pos += lens[i];
            cr_assert(pos == n || ((uint8_t)s[pos] & 0xC0) != 0x80,
                      "piece ends inside a code point");
        }
        cr_assert_eq(pos, n);
    }
}
