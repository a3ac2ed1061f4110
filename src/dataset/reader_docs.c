/*
 * reader_docs.c - frames input files into batches of documents (see
 * reader_docs.h).
 *
 * Inside simdbpe__reader_fill() the batch buffer holds, for the current file, the
 * "unframed" bytes [ustart, len): read but not yet part of a segment.
 * Framing turns complete units (a line, the text before a separator) into
 * segments and advances ustart; what is left when the batch is full moves
 * to r->carry and starts the next batch. r->file_off and r->line always
 * describe the byte at ustart.
 */
#include "reader_docs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_source.h"

#define FIRST_BATCH (64u << 10)

struct reader {
    const job *j;
    size_t next_file;
    int has_file;
    uint32_t cur;
    source *src;
    int src_done;
    int failed;
    char fail_msg[400];
    char *carry;
    size_t carry_len, carry_cap;
    uint64_t file_off;
    uint64_t line;
    int in_doc;       /* the unframed bytes continue a started document */
    uint64_t doc_off; /* their offset within it */
    uint64_t raw_done;
    unsigned n_filled; /* batches returned so far */
    /* The unframed bytes up to here (from their start) were searched for
     * a cut point without finding one: a text without any is searched once,
     * not again each time its buffer doubles. */
    size_t no_cut_below;
};

/* Bytes searched again below no_cut_below: a point near the end of the
 * known bytes may have been undecided (it looks a little way ahead). A
 * point missed for want of margin costs a cut, never exactness. */
#define CUT_MARGIN 4096

int simdbpe__reader_new(reader **out, const job *j)
{
    reader *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->j = j;
    *out = r;
    return 0;
}

void simdbpe__reader_free(reader *r)
{
    if (!r)
        return;
    simdbpe__source_close(r->src);
    free(r->carry);
    free(r);
}

uint64_t simdbpe__reader_raw_pos(const reader *r)
{
    return r->raw_done + (r->src ? simdbpe__source_raw_pos(r->src) : 0);
}

/* Eight bytes at a time: a byte of x ^ 0x0A.. is 0 where x has '\n', and
 * ((t & 0x7F..) + 0x7F..) | t has its top bit clear exactly there; those
 * bits, moved to the bottom of each byte, are summed by one multiply. It
 * runs on the one thread that reads (bench/README.md). */
static uint64_t count_newlines(const char *s, size_t n)
{
    const uint64_t lf = 0x0A0A0A0A0A0A0A0AULL, low7 = 0x7F7F7F7F7F7F7F7FULL;
    uint64_t k = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t t = x ^ lf;
        uint64_t hit = ~(((t & low7) + low7) | t) >> 7 & 0x0101010101010101ULL;
        k += hit * 0x0101010101010101ULL >> 56;
    }
    for (; i < n; i++)
        k += s[i] == '\n';
    return k;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* A segment for [start, end) of the current file, at the reader's position. */
static seg *add_piece(reader *r, batch *b, size_t start, size_t end, uint8_t kind, int last)
{
    seg *s = simdbpe__batch_add_seg(b, start, end - start, kind);
    if (!s)
        return NULL;
    s->file = r->cur;
    s->file_off = r->file_off;
    s->line = r->line;
    s->doc_off = r->in_doc ? r->doc_off : 0;
    s->begin = !r->in_doc;
    s->end = (uint8_t)last;
    return s;
}

/* Moves the reader past [start, end) plus `delim` delimiter bytes. */
static void advance(reader *r, const batch *b, size_t start, size_t end, size_t delim)
{
    uint64_t lines = r->j->mode == SIMDBPE_INPUT_TEXT
                         ? count_newlines(b->buf + start, end - start + delim)
                         : (delim ? 1 : 0);
    r->file_off += end - start + delim;
    r->line += lines;
}

/* A complete unit [start, end) followed by `delim` delimiter bytes. */
static int emit_unit(reader *r, batch *b, size_t start, size_t end, size_t delim)
{
    int json = r->j->mode == SIMDBPE_INPUT_JSONL;
    if (!(json && is_blank(b->buf + start, end - start))) {
        if (!add_piece(r, b, start, end, json ? SEG_JSON : SEG_TEXT, 1))
            return -1;
    }
    advance(r, b, start, end, delim);
    r->in_doc = 0;
    r->doc_off = 0;
    return 0;
}

/* Turns every complete unit in [*ustart, len) into a segment. */
static int frame_units(reader *r, batch *b, size_t *ustart)
{
    const job *j = r->j;
    if (j->mode == SIMDBPE_INPUT_TEXT && !j->sep)
        return 0; /* the whole file is one document */
    for (;;) {
        size_t n = b->len - *ustart;
        if (n == 0)
            return 0; /* (b->buf may still be NULL) */
        const char *from = b->buf + *ustart;
        const char *hit = j->sep ? memmem(from, n, j->sep, j->sep_len) : memchr(from, '\n', n);
        if (!hit)
            return 0;
        size_t end = (size_t)(hit - b->buf);
        size_t delim = j->sep ? j->sep_len : 1;
        /* A line ends with \n or \r\n (a file written on Windows). */
        if (j->mode == SIMDBPE_INPUT_LINES && end > *ustart && b->buf[end - 1] == '\r') {
            end--;
            delim++;
        }
        if (emit_unit(r, b, *ustart, end, delim))
            return -1;
        *ustart = end + delim;
        r->no_cut_below = 0;
    }
}

/*
 * The unframed bytes fill the batch and hold no complete unit: cut them at
 * a safe point if the mode allows. Returns 1 if cut, 0 if not, -1 (nomem).
 */
static int try_cut(reader *r, batch *b, size_t *ustart)
{
    const job *j = r->j;
    if (j->mode == SIMDBPE_INPUT_JSONL)
        return 0;
    size_t n = b->len - *ustart;
    /* Keep clear of a separator that may be only partly read. */
    size_t guard = j->sep ? j->sep_len - 1 : 0;
    if (n <= guard + 2)
        return 0;
    size_t lo = r->no_cut_below > CUT_MARGIN ? r->no_cut_below - CUT_MARGIN : 1;
    size_t p = simdbpe_cut_find(j->model, &j->enc, b->buf + *ustart, n - guard, lo, n - guard - 1);
    if (p == SIMDBPE_NO_CUT) {
        r->no_cut_below = n - guard;
        return 0;
    }
    r->no_cut_below = 0;
    if (!add_piece(r, b, *ustart, *ustart + p, SEG_TEXT, 0))
        return -1;
    advance(r, b, *ustart, *ustart + p, 0);
    r->doc_off = (r->in_doc ? r->doc_off : 0) + p;
    r->in_doc = 1;
    *ustart += p;
    return 1;
}

static void carry_tail(reader *r, batch *b, size_t ustart)
{
    size_t n = b->len - ustart;
    r->carry_len = n;
    if (n == 0)
        return;
    if (n > r->carry_cap) {
        char *p = realloc(r->carry, n);
        if (!p)
            return; /* cannot happen: the carry is smaller than a batch it came from */
        r->carry = p;
        r->carry_cap = n;
    }
    memcpy(r->carry, b->buf + ustart, n);
    b->len = ustart;
}

static int fail_seg(reader *r, batch *b, size_t at, const char *reason, int fatal)
{
    char msg[700];
    snprintf(msg, sizeof msg, "%s: line %llu, byte offset %llu: %s",
             simdbpe__display_name(r->j->files[r->cur]), (unsigned long long)r->line,
             (unsigned long long)r->file_off, reason);
    seg *s = add_piece(r, b, at, at, SEG_FAIL, 1);
    if (!s || simdbpe__batch_fail_seg(b, s, msg))
        return -1;
    s->fatal = (uint8_t)fatal;
    s->err_status = SIMDBPE_ERR_IO;
    s->err_line = r->line;
    s->err_off = r->file_off;
    return 0;
}

/* The file ended (or failed) with [ustart, len) unframed. */
static int finish_file(reader *r, batch *b, size_t ustart)
{
    const job *j = r->j;
    size_t n = b->len - ustart;
    int rc = 0;
    if (r->failed) {
        /* The rest is cut short: drop it and report the document it ends,
         * where that document starts and where the data stopped. A stream
         * that fails its check fails the whole file: what was decoded
         * before the check (CRC, frame end) may already be garbage, so
         * the run stops even with --on-error skip. */
        char reason[600];
        snprintf(reason, sizeof reason, "%s (after %llu bytes of decompressed data)", r->fail_msg,
                 (unsigned long long)(r->file_off + n));
        b->len = ustart;
        rc = fail_seg(r, b, ustart, reason, 1);
    } else if (j->mode == SIMDBPE_INPUT_TEXT && !j->sep) {
        rc = add_piece(r, b, ustart, b->len, SEG_TEXT, 1) ? 0 : -1;
    } else if (n > 0 || r->in_doc) {
        rc = emit_unit(r, b, ustart, b->len, 0);
    }
    r->raw_done += simdbpe__source_raw_pos(r->src);
    simdbpe__source_close(r->src);
    r->src = NULL;
    r->has_file = 0;
    return rc;
}

static int open_next(reader *r, batch *b)
{
    r->cur = (uint32_t)r->next_file++;
    r->file_off = 0;
    r->line = 1;
    r->in_doc = 0;
    r->doc_off = 0;
    r->no_cut_below = 0;
    r->src_done = 0;
    r->failed = 0;
    r->carry_len = 0;
    int e = simdbpe__source_open(&r->src, r->j->files[r->cur]);
    if (e) {
        char reason[300];
        snprintf(reason, sizeof reason, "cannot open: %s", strerror(e));
        return fail_seg(r, b, b->len, reason, 0);
    }
    r->has_file = 1;
    return 0;
}

/*
 * Reads and frames the current file into `b`, whose bytes from `ustart` on
 * are unframed. Returns 1 when the batch is full (the tail is carried), 0
 * when the file is finished, -1 when out of memory.
 */
static int take_file(reader *r, batch *b, size_t ustart, size_t *want)
{
    for (;;) {
        if (frame_units(r, b, &ustart))
            return -1;
        if (r->src_done)
            return finish_file(r, b, ustart) ? -1 : 0;
        if (b->len >= *want) {
            if (b->nsegs > 0) {
                carry_tail(r, b, ustart);
                return 1;
            }
            int cut = try_cut(r, b, &ustart);
            if (cut < 0)
                return -1;
            if (cut) {
                carry_tail(r, b, ustart);
                return 1;
            }
            /* One unit longer than a batch, with no cut: hold it whole. */
            while (*want <= b->len)
                *want *= 2;
        }
        /* Read no further than the batch size: a batch is a unit of work. */
        size_t room = *want - b->len;
        if (simdbpe__batch_reserve(b, room))
            return -1;
        ssize_t got =
            simdbpe__source_read(r->src, b->buf + b->len, room, r->fail_msg, sizeof r->fail_msg);
        if (got < 0)
            r->failed = r->src_done = 1;
        else if (got == 0)
            r->src_done = 1;
        else {
            b->len += (size_t)got;
            b->in_bytes += (uint64_t)got;
        }
    }
}

int simdbpe__reader_fill(reader *r, batch *b)
{
    b->len = 0;
    b->nsegs = 0;
    b->in_bytes = 0;
    /* The first batches are small (64 KB, then doubling), so the other
     * threads get work a few hundred microseconds after the start instead
     * of waiting for a whole batch to be decompressed and framed. */
    size_t want = r->j->batch_bytes;
    if (r->n_filled < 8 && ((size_t)FIRST_BATCH << r->n_filled) < want)
        want = (size_t)FIRST_BATCH << r->n_filled;
    while (b->len < want || b->nsegs == 0) {
        if (!r->has_file) {
            if (r->next_file >= r->j->n_files)
                break;
            if (open_next(r, b))
                return -1;
            continue;
        }
        size_t ustart = b->len;
        if (simdbpe__batch_reserve(b, r->carry_len))
            return -1;
        if (r->carry_len) /* carry may be NULL when empty */
            memcpy(b->buf + b->len, r->carry, r->carry_len);
        b->len += r->carry_len;
        r->carry_len = 0;
        int full = take_file(r, b, ustart, &want);
        if (full < 0)
            return -1;
        if (full)
            break;
    }
    if (b->nsegs > 0)
        r->n_filled++;
    return b->nsegs > 0;
}
