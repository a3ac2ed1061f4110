/*
 * normalizer.c - the normalizer chain (normalizer.h): its image, and the
 * steps applied one after the other, each writing its result into the
 * buffer the previous one did not (a step that changes nothing writes
 * nothing, and Strip only moves the text's ends).
 */
#include <stdlib.h>

#include "../common/common.h"
#include "../common/nfc.h"
#include "../common/utf8_valid.h"
#include "../../kernels/kernels.h"
#include "../pretok/regex.h"
#include "normalizer.h"

typedef struct step {
    uint8_t kind, arg;
    const uint8_t *a, *b;
    size_t a_len, b_len;
    simdbpe__regex *rx; /* REPLACE_REGEX */
} step;

struct simdbpe__normalizer {
    size_t n;
    step steps[SIMDBPE__NZ_MAX_STEPS];
};

/* ---- the image ---- */

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint8_t *image_room(simdbpe__nz_image *im, size_t n)
{
    if (im->nomem || simdbpe__grow((void **)&im->p, &im->cap, im->len + n, 1)) {
        im->nomem = 1;
        return NULL;
    }
    uint8_t *at = im->p + im->len;
    im->len += n;
    return at;
}

void simdbpe__nz_image_step(simdbpe__nz_image *im, uint8_t kind, uint8_t arg, const uint8_t *a,
                            size_t a_len, const uint8_t *b, size_t b_len)
{
    if (im->len == 0 && !image_room(im, 4))
        return;
    uint8_t *p = image_room(im, 12 + a_len + b_len);
    if (!p)
        return;
    p[0] = kind;
    p[1] = arg;
    p[2] = p[3] = 0;
    put_u32(p + 4, (uint32_t)a_len);
    if (a_len)
        memcpy(p + 8, a, a_len);
    put_u32(p + 8 + a_len, (uint32_t)b_len);
    if (b_len)
        memcpy(p + 12 + a_len, b, b_len);
    put_u32(im->p, ++im->n);
}

void simdbpe__normalizer_free(simdbpe__normalizer *nz)
{
    if (!nz)
        return;
    for (size_t i = 0; i < nz->n; i++)
        simdbpe__regex_free(nz->steps[i].rx);
    free(nz);
}

/* Whether s[0..n) is valid UTF-8 without NUL (a step's strings). */
static int text_ok(const uint8_t *s, size_t n)
{
    return simdbpe__kernels_scalar.validate_utf8(s, n) == n && !memchr(s, 0, n);
}

simdbpe_status simdbpe__normalizer_new(const uint8_t *p, size_t len, const char *what,
                                       simdbpe__normalizer **out, simdbpe_error *err)
{
    *out = NULL;
    simdbpe__normalizer *nz = calloc(1, sizeof *nz);
    if (!nz)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    size_t n = len >= 4 ? get_u32(p) : 0, at = 4;
    simdbpe_status st = SIMDBPE_OK;
    if (n == 0 || n > SIMDBPE__NZ_MAX_STEPS)
        st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                           "%s: the normalizer is malformed (%zu steps)", what, n);
    for (size_t i = 0; st == SIMDBPE_OK && i < n; i++) {
        step *s = &nz->steps[i];
        size_t a_len = len - at >= 8 ? get_u32(p + at + 4) : SIZE_MAX;
        size_t b_at = at + 8 + a_len;
        size_t b_len = a_len <= len - at - 8 && len - b_at >= 4 ? get_u32(p + b_at) : SIZE_MAX;
        if (b_len > len - b_at - 4 || p[at] < SIMDBPE__NZ_FORM || p[at] > SIMDBPE__NZ_LAST) {
            st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                               "%s: normalizer step %zu is malformed", what, i);
            break;
        }
        *s = (step){p[at], p[at + 1], p + at + 8, p + b_at + 4, a_len, b_len, NULL};
        at = b_at + 4 + b_len;
        nz->n = i + 1;
        int ok = text_ok(s->a, s->a_len) && text_ok(s->b, s->b_len);
        switch (s->kind) {
        case SIMDBPE__NZ_FORM:
            ok &= s->arg >= SIMDBPE__NORM_NFC && s->arg <= SIMDBPE__NORM_NFKD;
            break;
        case SIMDBPE__NZ_STRIP:
            ok &= s->arg >= 1 && s->arg <= 3;
            break;
        case SIMDBPE__NZ_REPLACE:
        case SIMDBPE__NZ_PREPEND:
            ok &= s->a_len > 0;
            break;
        default:
            break;
        }
        if (!ok) {
            st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                               "%s: normalizer step %zu is malformed", what, i);
            break;
        }
        if (s->kind == SIMDBPE__NZ_REPLACE_REGEX) {
            char *pat = malloc(s->a_len + 1);
            if (!pat) {
                st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                   "out of memory");
                break;
            }
            memcpy(pat, s->a, s->a_len);
            pat[s->a_len] = '\0';
            const char *pats[1] = {pat};
            uint8_t flags[1] = {SIMDBPE__SPLIT_ISOLATED};
            st = simdbpe__regex_new(pats, flags, 1, what, &s->rx, err);
            free(pat);
        }
    }
    if (st == SIMDBPE_OK && at != len)
        st = simdbpe__fail(err, SIMDBPE_ERR_MODEL_FILE, SIMDBPE_NO_POSITION, 0,
                           "%s: the normalizer is malformed", what);
    if (st != SIMDBPE_OK) {
        simdbpe__normalizer_free(nz);
        return st;
    }
    *out = nz;
    return SIMDBPE_OK;
}

int simdbpe__normalizer_keeps_start(const simdbpe__normalizer *nz)
{
    for (size_t i = 0; i < nz->n; i++)
        if (nz->steps[i].kind != SIMDBPE__NZ_FORM && nz->steps[i].kind != SIMDBPE__NZ_LOWERCASE)
            return 0;
    return 1;
}

/* ---- characters ---- */

size_t simdbpe__lowercase(uint32_t cp, uint32_t out[2])
{
    if (cp < 0x80) {
        out[0] = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
        return 1;
    }
    for (size_t i = 0; i < simdbpe__lower_several_count; i++)
        if (simdbpe__lower_several[i][0] == cp) {
            out[0] = simdbpe__lower_several[i][2];
            out[1] = simdbpe__lower_several[i][3];
            return simdbpe__lower_several[i][1];
        }
    size_t lo = 0, hi = simdbpe__lower_one_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (simdbpe__lower_one[mid][0] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[0] = lo < simdbpe__lower_one_count && simdbpe__lower_one[lo][0] == cp
                 ? simdbpe__lower_one[lo][1]
                 : cp;
    return 1;
}

int simdbpe__is_white_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* ---- the steps ---- */

void simdbpe__nz_work_free(simdbpe__nz_work *w)
{
    free(w->buf[0]);
    free(w->buf[1]);
    free(w->al[0]);
    free(w->al[1]);
    memset(w, 0, sizeof *w);
}

/* An output buffer being written: o->p[0..o->n); with alignments (in not
 * NULL: the input's, 2 per byte), o->al[0..2 o->n) too. */
typedef struct outbuf {
    uint8_t **p;
    size_t *cap;
    size_t n;
    const size_t *in;
    size_t **al;
    size_t *al_cap;
} outbuf;

static int out_room(outbuf *o, size_t n)
{
    return simdbpe__grow((void **)o->p, o->cap, o->n + n, 1) ||
           (o->in && simdbpe__grow((void **)o->al, o->al_cap, o->n + n, 2 * sizeof **o->al));
}

/* The input's bytes s[from..from + n), kept with their alignments. */
static int out_copy(outbuf *o, const uint8_t *s, size_t from, size_t n)
{
    if (n == 0)
        return 0;
    if (out_room(o, n))
        return -1;
    memcpy(*o->p + o->n, s + from, n);
    if (o->in)
        memcpy(*o->al + 2 * o->n, o->in + 2 * from, 2 * n * sizeof **o->al);
    o->n += n;
    return 0;
}

/* New bytes, each aligned to [a, b) (ignored without alignments). */
static int out_new(outbuf *o, const uint8_t *s, size_t n, size_t a, size_t b)
{
    if (n == 0)
        return 0;
    if (out_room(o, n))
        return -1;
    memcpy(*o->p + o->n, s, n);
    if (o->in)
        for (size_t k = 0; k < n; k++) {
            (*o->al)[2 * (o->n + k)] = a;
            (*o->al)[2 * (o->n + k) + 1] = b;
        }
    o->n += n;
    return 0;
}

/* The span of the input's byte k (that of its character). */
static size_t al_start(const outbuf *o, size_t k)
{
    return o->in ? o->in[2 * k] : 0;
}

static size_t al_end(const outbuf *o, size_t k)
{
    return o->in ? o->in[2 * k + 1] : 0;
}

/* Each character's lowercase; HF aligns a second character (U+0130 gives
 * "i\u0307") to the one before it: all to the character lowercased. */
static int lowercase(const uint8_t *s, size_t n, outbuf *o)
{
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && s[run] < 0x80 && !(s[run] >= 'A' && s[run] <= 'Z'))
            run++;
        if (out_copy(o, s, i, run - i))
            return -1;
        i = run;
        if (i == n)
            break;
        size_t l;
        uint32_t cp = simdbpe__utf8_decode(s, i, &l), to[2];
        size_t k = simdbpe__lowercase(cp, to);
        for (size_t j = 0; j < k; j++) {
            uint8_t u[4];
            if (out_new(o, u, simdbpe__utf8_encode(to[j], u), al_start(o, i), al_end(o, i)))
                return -1;
        }
        i += l;
    }
    return 0;
}

/* The start of the character that ends at s[i] (i > 0). */
static size_t char_before(const uint8_t *s, size_t i)
{
    size_t k = i - 1;
    while (k > 0 && (s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

/* Moves the text's ends: *cut is what was cut at the start. */
static void strip(const step *st, const uint8_t **text, size_t *len, size_t *cut)
{
    const uint8_t *s = *text;
    size_t a = 0, b = *len, l;
    while ((st->arg & SIMDBPE__NZ_STRIP_LEFT) && a < b &&
           simdbpe__is_white_space(simdbpe__utf8_decode(s, a, &l)))
        a += l;
    while ((st->arg & SIMDBPE__NZ_STRIP_RIGHT) && b > a) {
        size_t k = char_before(s, b);
        if (!simdbpe__is_white_space(simdbpe__utf8_decode(s, k, &l)))
            break;
        b = k;
    }
    *text = s + a;
    *len = b - a;
    *cut = a;
}

/* A Replace's walk: the text up to each match, then the content. */
typedef struct replacing {
    const step *st;
    const uint8_t *s;
    size_t done; /* s[0..done) is written */
    size_t lo;   /* the span an inserted character gets with nothing before it */
    outbuf *o;
} replacing;

/* HF aligns the content to the last character before the match's end (the
 * match's last, or for an empty match the one before it), [lo, lo) at the
 * very start. */
static int replace_match(void *ctx, size_t start, size_t end)
{
    replacing *r = ctx;
    size_t a = r->lo, b = r->lo;
    if (end > 0) {
        a = al_start(r->o, end - 1);
        b = al_end(r->o, end - 1);
    }
    if (out_copy(r->o, r->s, r->done, start - r->done) ||
        out_new(r->o, r->st->b, r->st->b_len, a, b))
        return -2;
    r->done = end;
    return 0;
}

/* 1 if the text changed (into o), 0 if not, -1 out of memory, -2
 * Oniguruma gave up. */
static int replace(const step *st, const uint8_t *s, size_t n, size_t lo, outbuf *o)
{
    replacing r = {st, s, 0, lo, o};
    int got = 0;
    if (n == 0)
        return 0; /* HF finds no match in an empty text, not even an empty one */
    if (st->kind == SIMDBPE__NZ_REPLACE_REGEX) {
        int v = simdbpe__regex_matches(st->rx, s, n, replace_match, &r);
        if (v)
            return v == -2 ? -1 : -2;
        got = r.done > 0 || o->n > 0;
    } else {
        for (size_t i = 0; i + st->a_len <= n;) {
            const uint8_t *hit = memmem(s + i, n - i, st->a, st->a_len);
            if (!hit)
                break;
            size_t at = (size_t)(hit - s);
            if (replace_match(&r, at, at + st->a_len))
                return -1;
            got = 1;
            i = at + st->a_len;
        }
    }
    if (!got)
        return 0;
    return out_copy(o, s, r.done, n - r.done) ? -1 : 1;
}

/* A Unicode form with alignments: the changed stretches aligned as
 * common/nfc.c aligns them, through the input's alignments. */
typedef struct forming {
    const uint8_t *s;
    size_t done, lo;
    unsigned form;
    outbuf *o;
} forming;

static int form_stretch(void *ctx, size_t start, size_t end, const uint8_t *norm, size_t len)
{
    forming *f = ctx;
    outbuf *o = f->o;
    if (out_copy(o, f->s, f->done, start - f->done) || out_room(o, len))
        return -1;
    size_t *al = *o->al + 2 * o->n;
    simdbpe__nfc_align(f->form, f->s, 0, start, end, norm, len, al);
    for (size_t k = 0; k < len; k++) { /* spans in s, of one character: through o->in */
        size_t a = al[2 * k], b = al[2 * k + 1];
        al[2 * k] = b > a ? o->in[2 * a] : f->lo;
        al[2 * k + 1] = b > a ? o->in[2 * (b - 1) + 1] : f->lo;
    }
    memcpy(*o->p + o->n, norm, len);
    o->n += len;
    f->done = end;
    return 0;
}

static int form_aligned(unsigned form, const uint8_t *s, size_t n, size_t lo, outbuf *o)
{
    forming f = {s, 0, lo, form, o};
    int v = simdbpe__nfc_stretches(form, s, n, form_stretch, &f);
    if (v)
        return -1;
    if (f.done == 0)
        return 0;
    return out_copy(o, s, f.done, n - f.done) ? -1 : 1;
}

/* The chain, with alignments when *al is not NULL (see
 * simdbpe__normalize_aligned). */
static simdbpe_status normalize(const simdbpe__normalizer *nz, simdbpe__nz_work *w,
                                const uint8_t **text, size_t *len, const size_t **al, size_t lo)
{
    const uint8_t *s = *text;
    size_t n = *len;
    const size_t *in = al ? *al : NULL;
    int cur = -1; /* the buffer s is in, or -1: the caller's text */
    for (size_t i = 0; i < nz->n; i++) {
        const step *st = &nz->steps[i];
        int to = cur == 0 ? 1 : 0;
        outbuf o = {&w->buf[to], &w->cap[to], 0, in, &w->al[to], &w->al_cap[to]};
        int r = 0;
        switch (st->kind) {
        case SIMDBPE__NZ_FORM: {
            if (in) {
                r = form_aligned(st->arg, s, n, lo, &o);
                break;
            }
            const uint8_t *t = s;
            size_t tl = n;
            if (simdbpe__nfc_into(st->arg, o.p, o.cap, &t, &tl) != SIMDBPE_OK)
                return SIMDBPE_ERR_NOMEM;
            r = t != s;
            o.n = tl;
            break;
        }
        case SIMDBPE__NZ_LOWERCASE:
            r = lowercase(s, n, &o) ? -1 : 1;
            break;
        case SIMDBPE__NZ_STRIP: {
            size_t cut;
            strip(st, &s, &n, &cut);
            if (in)
                in += 2 * cut;
            break;
        }
        case SIMDBPE__NZ_REPLACE:
        case SIMDBPE__NZ_REPLACE_REGEX:
            r = replace(st, s, n, lo, &o);
            break;
        case SIMDBPE__NZ_PREPEND: /* HF aligns it to the first character */
            if (n)
                r = out_new(&o, st->a, st->a_len, al_start(&o, 0), al_end(&o, 0)) ||
                            out_copy(&o, s, 0, n)
                        ? -1
                        : 1;
            break;
        }
        if (r == -1)
            return SIMDBPE_ERR_NOMEM;
        if (r == -2)
            return SIMDBPE_ERR_TOO_LARGE;
        if (r == 1) {
            s = *o.p;
            n = o.n;
            cur = to;
            if (in)
                in = w->al[to];
        }
    }
    *text = s;
    *len = n;
    if (al)
        *al = in;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__normalize(const simdbpe__normalizer *nz, simdbpe__nz_work *w,
                                  const uint8_t **text, size_t *len)
{
    return normalize(nz, w, text, len, NULL, 0);
}

simdbpe_status simdbpe__normalize_aligned(const simdbpe__normalizer *nz, simdbpe__nz_work *w,
                                          const uint8_t **text, size_t *len, const size_t **al,
                                          size_t lo)
{
    return normalize(nz, w, text, len, al, lo);
}
