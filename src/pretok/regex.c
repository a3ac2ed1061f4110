/*
 * regex.c - the generic pre-tokenizer (regex.h): Split regexes run by
 * Oniguruma, and the "regex" family record.
 *
 * Compiling. HF compiles a Split's pattern with onig's Regex::new: UTF-8,
 * no options, onig's default syntax (ONIG_SYNTAX_ONIGURUMA; named here, not
 * taken from the process default, which any library may change). The
 * pattern is first compiled as it is, so a pattern HF's engine refuses is
 * refused here with Oniguruma's message; then it is rewritten (each \p{X},
 * \P{X}, \p{^X} becomes a bracket of Unicode 16.0.0 ranges, which is valid
 * both inside and outside a character class) and the rewritten text is
 * what runs.
 *
 * Matching. onig_search from position p finds the first position q >= p
 * where the pattern matches, with the match anchored there found as
 * onig_match finds it; onig_match at q with no region gives the length.
 * So the walk tries onig_match where the search starts (pre-tokenizer
 * patterns match nearly everywhere: mostly one call a piece), and else
 * asks onig_search, without a region, for the next q and matches there.
 * No match region: nothing is allocated while encoding, and one compiled
 * regex serves all threads (matching does not write to it). \G (the
 * search's start) would tell the two apart: it is refused.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oniguruma.h>

#include "pretok.h"
#include "regex.h"
#include "ucd_ranges.h"

#include "../common/common.h"
#include "../common/utf8_valid.h"

struct simdbpe__regex {
    size_t n;
    char *pattern[SIMDBPE__REGEX_MAX_SPLITS];
    uint8_t flags[SIMDBPE__REGEX_MAX_SPLITS];
    regex_t *re[SIMDBPE__REGEX_MAX_SPLITS];
};

static pthread_once_t onig_once = PTHREAD_ONCE_INIT;
static int onig_ready;
/* onig_new is not safe to call from two threads at once (its parser's
 * shared state): models opened on several threads take turns. Matching
 * needs no lock. */
static pthread_mutex_t onig_new_lock = PTHREAD_MUTEX_INITIALIZER;

static void init_onig(void)
{
    OnigEncoding use[] = {ONIG_ENCODING_UTF8};
    onig_ready = onig_initialize(use, 1) == ONIG_NORMAL;
}

/* ---- the rewriting --------------------------------------------------- */

typedef struct text_buf {
    char *p;
    size_t len, cap;
    int nomem;
} text_buf;

static void put(text_buf *b, const char *s, size_t len)
{
    if (b->nomem)
        return;
    if (simdbpe__grow((void **)&b->p, &b->cap, b->len + len + 1, 1) != 0) {
        b->nomem = 1;
        return;
    }
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

static void put_ranges(text_buf *b, const simdbpe__ucd_range_set *set)
{
    char tmp[32];
    for (size_t i = 0; i < set->n; i++) {
        uint32_t lo = set->ranges[i][0], hi = set->ranges[i][1];
        int w = lo == hi ? snprintf(tmp, sizeof tmp, "\\x{%X}", (unsigned)lo)
                         : snprintf(tmp, sizeof tmp, "\\x{%X}-\\x{%X}", (unsigned)lo, (unsigned)hi);
        put(b, tmp, (size_t)w);
    }
}

/* Oniguruma's property names ignore case, ' ', '_' and '-'. */
static int name_is(const char *name, size_t len, const char *want)
{
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c == ' ' || c == '_' || c == '-')
            continue;
        while (want[j] == '_')
            j++;
        if (!want[j] || (c | 0x20) != (want[j] | 0x20))
            return 0;
        j++;
    }
    while (want[j] == '_')
        j++;
    return want[j] == '\0';
}

/* The General_Category groups, as the two-letter values they join. */
static const struct {
    const char *name, *long_name, *members;
} GROUPS[] = {
    {"L", "Letter", "Lu Ll Lt Lm Lo"},         {"LC", "Cased_Letter", "Lu Ll Lt"},
    {"M", "Mark", "Mn Mc Me"},                 {"N", "Number", "Nd Nl No"},
    {"P", "Punctuation", "Pc Pd Ps Pe Pi Pf Po"}, {"S", "Symbol", "Sm Sc Sk So"},
    {"Z", "Separator", "Zs Zl Zp"},            {"C", "Other", "Cc Cf Co Cn"},
};

static const simdbpe__ucd_range_set *range_set(const char *name, size_t len)
{
    for (size_t i = 0; i < simdbpe__ucd_n_range_sets; i++) {
        const simdbpe__ucd_range_set *r = &simdbpe__ucd_range_sets[i];
        if (name_is(name, len, r->name) || name_is(name, len, r->long_name) ||
            (strcmp(r->name, "Han") == 0 && name_is(name, len, "Hani")))
            return r;
    }
    return NULL;
}

/* Writes property `name` as a bracket (negated: [^...]); 0 if the name is
 * not one whose Unicode 16 ranges are known. */
static int put_property(text_buf *b, const char *name, size_t len, int negated)
{
    const simdbpe__ucd_range_set *one = range_set(name, len);
    const char *members = NULL;
    for (size_t g = 0; !one && g < sizeof GROUPS / sizeof GROUPS[0]; g++)
        if (name_is(name, len, GROUPS[g].name) || name_is(name, len, GROUPS[g].long_name))
            members = GROUPS[g].members;
    if (!one && !members)
        return 0;
    put(b, negated ? "[^" : "[", negated ? 2 : 1);
    if (one)
        put_ranges(b, one);
    else
        for (const char *m = members; *m; m += m[2] ? 3 : 2)
            put_ranges(b, range_set(m, 2));
    put(b, "]", 1);
    return 1;
}

/* Whether an option group's text from `p` (just after "(?") turns on
 * case-insensitive matching: its letters before ':' or ')', up to a '-'. */
static int turns_on_i(const char *p, const char **after, char *ends)
{
    int on = 1, i = 0;
    for (; *p && *p != ':' && *p != ')'; p++) {
        if (*p == '-')
            on = 0;
        else if (*p == 'i' && on)
            i = 1;
        else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return 0;
    }
    *after = p;
    *ends = *p;
    return i;
}

/*
 * The pattern with its properties written out, into *b; NULL on success
 * or what in it is refused. Case-insensitive groups are accepted when
 * they hold only ASCII literals (no escape, class, or group): the code
 * points that fold to an ASCII letter (K: U+212A, s: U+017F) are the same
 * in both Unicode versions.
 */
static const char *rewrite(const char *pat, text_buf *b)
{
    for (const char *p = pat; *p;) {
        if (p[0] == '(' && p[1] == '?') {
            const char *after;
            char ends;
            if (turns_on_i(p + 2, &after, &ends)) {
                if (ends != ':')
                    return "a case-insensitive option that runs to the end of its group";
                int depth = 0;
                const char *q = after + 1;
                for (; *q && !(*q == ')' && depth == 0); q++) {
                    unsigned char c = (unsigned char)*q;
                    if (c >= 0x80 || c == '\\' || c == '[' || c == '(')
                        return "a case-insensitive group with more than ASCII literals";
                }
                if (!*q)
                    return "an unclosed group";
                put(b, p, (size_t)(q + 1 - p));
                p = q + 1;
                continue;
            }
        }
        if (p[0] == '[' && p[1] == ':')
            return "a POSIX bracket ([:name:])";
        if (p[0] != '\\') {
            put(b, p, 1);
            p++;
            continue;
        }
        char c = p[1];
        if (c == 'p' || c == 'P') {
            if (p[2] != '{')
                return "a property without braces";
            const char *name = p + 3;
            int negated = c == 'P';
            if (*name == '^') {
                negated = !negated;
                name++;
            }
            const char *close = strchr(name, '}');
            if (!close)
                return "an unclosed \\p{";
            if (!put_property(b, name, (size_t)(close - name), negated))
                return "a property other than a General_Category or Han";
            p = close + 1;
            continue;
        }
        if (c && strchr("wWdDbBXyYG", c))
            return "an escape whose meaning depends on other Unicode data (\\w \\d \\b \\X "
                   "\\y) or on where the search starts (\\G)";
        if (!c)
            return "a trailing backslash";
        put(b, p, 2);
        p += 2;
    }
    return NULL;
}

/* ---- compiling ------------------------------------------------------- */

static simdbpe_status compile(const char *pattern, size_t len, regex_t **re, const char *what,
                              const char *which, simdbpe_error *err)
{
    OnigErrorInfo info;
    pthread_mutex_lock(&onig_new_lock);
    int r = onig_new(re, (const UChar *)pattern, (const UChar *)pattern + len, ONIG_OPTION_NONE,
                     ONIG_ENCODING_UTF8, ONIG_SYNTAX_ONIGURUMA, &info);
    pthread_mutex_unlock(&onig_new_lock);
    if (r == ONIG_NORMAL)
        return SIMDBPE_OK;
    *re = NULL;
    if (r == ONIGERR_MEMORY)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    UChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(msg, r, &info);
    return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                         "%s: %s Split pattern does not compile (Oniguruma: %s)", what, which,
                         (const char *)msg);
}

simdbpe_status simdbpe__regex_new(const char *const *patterns, const uint8_t *flags, size_t n,
                                  const char *what, simdbpe__regex **out, simdbpe_error *err)
{
    *out = NULL;
    if (n == 0 || n > SIMDBPE__REGEX_MAX_SPLITS)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "%s: %zu Split pre-tokenizers (1 to %d are supported)", what, n,
                             SIMDBPE__REGEX_MAX_SPLITS);
    pthread_once(&onig_once, init_onig);
    if (!onig_ready)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "Oniguruma could not be initialised");
    simdbpe__regex *rx = calloc(1, sizeof *rx);
    if (!rx)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    simdbpe_status st = SIMDBPE_OK;
    for (size_t i = 0; i < n && st == SIMDBPE_OK; i++) {
        char q[160];
        size_t len = strlen(patterns[i]);
        simdbpe__quote(q, sizeof q, (const uint8_t *)patterns[i], len);
        if ((flags[i] & ~SIMDBPE__SPLIT_INVERT) >= SIMDBPE__SPLIT_BEHAVIORS) {
            st = simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                               "%s: Split behavior %u is not supported", what, flags[i]);
            break;
        }
        rx->flags[i] = flags[i];
        rx->n = i + 1;
        rx->pattern[i] = malloc(len + 1);
        if (!rx->pattern[i]) {
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
            break;
        }
        memcpy(rx->pattern[i], patterns[i], len + 1);
        /* As HF's engine reads it (its errors are the file's errors). */
        regex_t *plain;
        st = compile(patterns[i], len, &plain, what, q, err);
        if (st != SIMDBPE_OK)
            break;
        onig_free(plain);
        text_buf b = {0};
        const char *why = rewrite(patterns[i], &b);
        if (b.nomem)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        else if (why)
            st = simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                               "%s: Split pattern %s has %s, which this library cannot match "
                               "as HF tokenizers does",
                               what, q, why);
        else
            st = compile(b.p, b.len, &rx->re[i], what, q, err);
        free(b.p);
    }
    if (st != SIMDBPE_OK) {
        simdbpe__regex_free(rx);
        return st;
    }
    *out = rx;
    return SIMDBPE_OK;
}

void simdbpe__regex_free(simdbpe__regex *rx)
{
    if (!rx)
        return;
    for (size_t i = 0; i < rx->n; i++) {
        free(rx->pattern[i]);
        if (rx->re[i])
            onig_free(rx->re[i]);
    }
    free(rx);
}

size_t simdbpe__regex_splits(const simdbpe__regex *rx)
{
    return rx->n;
}

const char *simdbpe__regex_pattern(const simdbpe__regex *rx, size_t i)
{
    return rx->pattern[i];
}

uint8_t simdbpe__regex_flags(const simdbpe__regex *rx, size_t i)
{
    return rx->flags[i];
}

/* ---- the compiled model's section ----------------------------------- */

size_t simdbpe__regex_image_size(const char *const *patterns, size_t n)
{
    size_t len = 4;
    for (size_t i = 0; i < n; i++)
        len += 8 + strlen(patterns[i]);
    return len;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void simdbpe__regex_image_put(const char *const *patterns, const uint8_t *flags, size_t n,
                              uint8_t *out)
{
    put_u32(out, (uint32_t)n);
    out += 4;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(patterns[i]);
        put_u32(out, flags[i]);
        put_u32(out + 4, (uint32_t)len);
        memcpy(out + 8, patterns[i], len);
        out += 8 + len;
    }
}

simdbpe_status simdbpe__regex_from_image(const uint8_t *p, size_t len, simdbpe__regex **out,
                                         simdbpe_error *err)
{
    *out = NULL;
    size_t n = len >= 4 ? get_u32(p) : 0, at = 4;
    char *pat[SIMDBPE__REGEX_MAX_SPLITS] = {0};
    uint8_t flags[SIMDBPE__REGEX_MAX_SPLITS];
    simdbpe_status st = SIMDBPE_OK;
    if (n == 0 || n > SIMDBPE__REGEX_MAX_SPLITS)
        st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                           "compiled model: the Split pre-tokenizers are malformed");
    for (size_t i = 0; st == SIMDBPE_OK && i < n; i++) {
        uint32_t fl = len - at >= 8 ? get_u32(p + at) : UINT32_MAX;
        uint32_t plen = len - at >= 8 ? get_u32(p + at + 4) : 0;
        if (fl > 0xFF || (fl & ~SIMDBPE__SPLIT_INVERT) >= SIMDBPE__SPLIT_BEHAVIORS ||
            plen > len - at - 8 || memchr(p + at + 8, 0, plen)) {
            st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                               "compiled model: Split pre-tokenizer %zu is malformed", i);
            break;
        }
        flags[i] = (uint8_t)fl;
        pat[i] = malloc(plen + 1);
        if (!pat[i]) {
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
            break;
        }
        memcpy(pat[i], p + at + 8, plen);
        pat[i][plen] = '\0';
        at += 8 + plen;
    }
    if (st == SIMDBPE_OK && at != len)
        st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                           "compiled model: the Split pre-tokenizers are malformed");
    if (st == SIMDBPE_OK)
        st = simdbpe__regex_new((const char *const *)pat, flags, n, "compiled model", out, err);
    for (size_t i = 0; i < n && i < SIMDBPE__REGEX_MAX_SPLITS; i++)
        free(pat[i]);
    return st;
}

/* ---- the walk -------------------------------------------------------- */

void simdbpe__regex_begin(simdbpe__regex_iter *it, const simdbpe__regex *rx, const uint8_t *s,
                          size_t n)
{
    memset(it, 0, sizeof *it);
    it->rx = rx;
    it->s = s;
    it->n = n;
}

static void level_start(simdbpe__regex_level *L, size_t ps, size_t pe)
{
    memset(L, 0, sizeof *L);
    L->ps = ps;
    L->pe = pe;
    L->last_end = ps;
    L->last_match_end = SIZE_MAX;
    L->prev = ps;
    L->active = 1;
}

/* The length of the code point at s[p] (valid UTF-8), 1 at the end. */
static size_t char_len(const uint8_t *s, size_t p, size_t end)
{
    if (p >= end)
        return 1;
    size_t len;
    (void)simdbpe__utf8_decode(s, p, &len);
    return len;
}

/* The next match of onig's find_iter over s[ps..pe) into [*ms, *me):
 * 1, or 0 when there is none (or Oniguruma failed: it->failed). */
static int find_next(simdbpe__regex_iter *it, regex_t *re, simdbpe__regex_level *L, size_t *ms,
                     size_t *me)
{
    const UChar *str = it->s + L->ps, *end = it->s + L->pe;
    for (;;) {
        if (L->last_end > L->pe)
            return 0;
        size_t p = L->last_end;
        int r = onig_match(re, str, end, it->s + p, NULL, ONIG_OPTION_NONE);
        if (r == ONIG_MISMATCH && p < L->pe) {
            /* Not here: onig_search's scan (its literal and class maps)
             * finds the next position that matches, much faster than a
             * match attempted at every character of a long gap. */
            const UChar *from = it->s + p + char_len(it->s, p, L->pe);
            int q = onig_search(re, str, end, from, end, NULL, ONIG_OPTION_NONE);
            if (q == ONIG_MISMATCH)
                return 0;
            if (q < 0) {
                it->failed = 1;
                return 0;
            }
            p = L->ps + (size_t)q;
            r = onig_match(re, str, end, it->s + p, NULL, ONIG_OPTION_NONE);
        }
        if (r == ONIG_MISMATCH)
            return 0;
        if (r < 0) {
            it->failed = 1;
            return 0;
        }
        size_t e = p + (size_t)r;
        if (e == p && L->last_match_end == e) {
            L->last_end += char_len(it->s, L->last_end, L->pe);
            continue;
        }
        L->last_end = e;
        L->last_match_end = e;
        *ms = p;
        *me = e;
        return 1;
    }
}

/* The next match or gap of the piece being cut: 1 with [*a, *b) and
 * *is_match, or 0 at its end. */
static int raw_next(simdbpe__regex_iter *it, regex_t *re, simdbpe__regex_level *L, size_t *a,
                    size_t *b, int *is_match)
{
    if (L->have_match) {
        L->have_match = 0;
        *a = L->ms;
        *b = L->me;
        *is_match = 1;
        L->prev = L->me;
        return 1;
    }
    if (L->done)
        return 0;
    size_t ms, me;
    if (it->failed || !find_next(it, re, L, &ms, &me)) {
        L->done = 1;
        if (L->prev == L->pe)
            return 0;
        *a = L->prev;
        *b = L->pe;
        *is_match = 0;
        L->prev = L->pe;
        return 1;
    }
    if (L->prev != ms) {
        *a = L->prev;
        *b = ms;
        *is_match = 0;
        L->ms = ms;
        L->me = me;
        L->have_match = 1;
        L->prev = ms;
        return 1;
    }
    *a = ms;
    *b = me;
    *is_match = 1;
    L->prev = me;
    return 1;
}

/* The next piece (possibly empty) of Split j over the piece being cut, by
 * its behavior: 1 with [*a, *b), or 0 at its end. */
static int behave_next(simdbpe__regex_iter *it, size_t j, size_t *a, size_t *b)
{
    simdbpe__regex_level *L = &it->level[j];
    uint8_t fl = it->rx->flags[j];
    int behavior = fl & ~SIMDBPE__SPLIT_INVERT, invert = (fl & SIMDBPE__SPLIT_INVERT) != 0;
    for (;;) {
        size_t xa, xb;
        int m;
        if (!raw_next(it, it->rx->re[j], L, &xa, &xb, &m)) {
            if (!L->held)
                return 0;
            L->held = 0;
            *a = L->bs;
            *b = L->be;
            return 1;
        }
        m ^= invert;
        int give = 0;
        size_t ga = 0, gb = 0;
        switch (behavior) {
        case SIMDBPE__SPLIT_ISOLATED:
            *a = xa;
            *b = xb;
            return 1;
        case SIMDBPE__SPLIT_REMOVED:
            it->dropped |= m && xb > xa;
            *a = xa;
            *b = xb;
            return 1;
        case SIMDBPE__SPLIT_CONTIGUOUS:
            /* runs of matches and runs of gaps become one piece each */
            if (L->held && m == L->held_match) {
                L->be = xb;
                continue;
            }
            break;
        case SIMDBPE__SPLIT_MERGED_WITH_PREVIOUS:
            /* a match joins the piece before it, if that was a gap */
            if (L->held && m && !L->prev_match) {
                L->be = xb;
                L->prev_match = 1;
                continue;
            }
            break;
        default: /* SIMDBPE__SPLIT_MERGED_WITH_NEXT */
            /* a match joins the gap after it */
            if (L->held && L->held_match && !m) {
                L->held = 0;
                L->prev_match = 0;
                *a = L->bs;
                *b = xb;
                return 1;
            }
            break;
        }
        if (L->held) {
            give = 1;
            ga = L->bs;
            gb = L->be;
        }
        L->held = 1;
        L->bs = xa;
        L->be = xb;
        L->held_match = (uint8_t)m;
        L->prev_match = (uint8_t)m;
        if (give) {
            *a = ga;
            *b = gb;
            return 1;
        }
    }
}

/* The next non-empty piece of Splits 0..j. */
static int level_next(simdbpe__regex_iter *it, size_t j, size_t *a, size_t *b)
{
    simdbpe__regex_level *L = &it->level[j];
    for (;;) {
        if (!L->active) {
            size_t pa, pb;
            if (j == 0) {
                if (it->top_given || it->n == 0)
                    return 0;
                it->top_given = 1;
                pa = 0;
                pb = it->n;
            } else if (!level_next(it, j - 1, &pa, &pb))
                return 0;
            level_start(L, pa, pb);
        }
        if (behave_next(it, j, a, b)) {
            if (*b > *a)
                return 1;
            continue;
        }
        L->active = 0;
    }
}

int simdbpe__regex_next(simdbpe__regex_iter *it, size_t *start, size_t *end)
{
    return level_next(it, it->rx->n - 1, start, end);
}

int simdbpe__regex_matches(const simdbpe__regex *rx, const uint8_t *s, size_t n,
                           simdbpe__regex_match_fn fn, void *ctx)
{
    simdbpe__regex_iter it;
    simdbpe__regex_begin(&it, rx, s, n);
    simdbpe__regex_level *L = &it.level[0];
    level_start(L, 0, n);
    size_t ms, me;
    while (find_next(&it, rx->re[0], L, &ms, &me)) {
        int r = fn(ctx, ms, me);
        if (r)
            return r;
    }
    return it.failed ? -1 : 0;
}

/* ---- the family record ----------------------------------------------- */

/* The regex family has no patterns of its own (each model brings its
 * Splits), no scanner and no reference scanner; its texts are never cut
 * (no cut rule holds for every pattern) and the trainer refuses it. */
const simdbpe__pretok_family simdbpe__pretok_regex = {
    .name = "regex",
    .generic = 1,
    .cuts = SIMDBPE__CUTS_NONE,
    .normalizer = SIMDBPE__NORM_NONE,
};
