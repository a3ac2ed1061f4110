/*
 * pipeline.c - N threads that read, encode and write in order (see
 * pipeline.h).
 *
 * Shared state is under one mutex; the slow work (reading a batch,
 * encoding it, writing it) is done outside it:
 *   reading  - thread 0 only, filling batches (numbered seq) into a short
 *              queue, `read_ahead` deep, so that the decompressor stays on
 *              one core;
 *   encoding - any thread takes the oldest filled batch;
 *   writing  - at most one thread at a time writes batch `next_write` once
 *              it is encoded.
 * A thread prefers writing (it frees memory), then (thread 0) reading, then
 * encoding, else waits. Encoded batches wait in slots[seq % window]; no
 * batch is read more than `window` ahead of the writer, so the slots never
 * collide and memory stays bounded. With one thread this is a plain loop:
 * read, encode, write. The threads are the workers of one simdbpe_pool run
 * (one task each, which loops until the input is written), so "thread 0"
 * is task 0, and it stays on one thread for the whole run.
 *
 * Errors: the worker records a failed segment with its message; the writer
 * meets failures in input order, so the error reported (or the skip list)
 * is the same for any thread count, with its status, input, line and byte
 * offset (seg.err_*) for simdbpe_error. In stop mode the first failure stops
 * everything; in skip mode the whole document is dropped, which is why the
 * writer holds a document cut into pieces until its last piece (also when
 * writing to standard output, where a stopped run must not leave part of
 * a document).
 */
#include "pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/common.h"
#include "reader_docs.h"
#include "reader_source.h"
#include "writer.h"

/* --------------------------------------------------------------- batches */

int simdbpe__batch_reserve(batch *b, size_t extra)
{
    return simdbpe__grow((void **)&b->buf, &b->cap, b->len + extra, 1);
}

seg *simdbpe__batch_add_seg(batch *b, size_t off, size_t len, uint8_t kind)
{
    if (simdbpe__grow((void **)&b->segs, &b->segcap, b->nsegs + 1, sizeof *b->segs))
        return NULL;
    seg *s = &b->segs[b->nsegs++];
    memset(s, 0, sizeof *s);
    s->off = off;
    s->len = len;
    s->kind = kind;
    return s;
}

int simdbpe__batch_fail_seg(batch *b, seg *s, const char *msg)
{
    if (simdbpe__grow((void **)&b->msgs, &b->msgcap, b->nmsgs + 1, sizeof *b->msgs))
        return -1;
    char *m = strdup(msg);
    if (!m)
        return -1;
    b->msgs[b->nmsgs++] = m;
    s->failed = 1;
    s->msg = (uint32_t)b->nmsgs;
    return 0;
}

static void batch_clear_msgs(batch *b)
{
    for (size_t i = 0; i < b->nmsgs; i++)
        free(b->msgs[i]);
    b->nmsgs = 0;
}

static void batch_free(batch *b)
{
    if (!b)
        return;
    batch_clear_msgs(b);
    free(b->msgs);
    free(b->buf);
    free(b->segs);
    free(b->ids);
    free(b);
}

/* ---------------------------------------------------------------- state */

typedef struct pipeline {
    const job *j;
    writer *w;
    reader *rd;
    run_totals *t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int reading, writing, input_done, stop;
    uint64_t next_seq, next_write;
    batch **slots;   /* encoded batches, by seq % window, until written */
    size_t window;
    batch *filled_head, *filled_tail; /* read, not yet encoded, in order */
    size_t n_filled, read_ahead;
    batch *free_list;
    size_t n_batches;
    char *fatal; /* the message that stopped the run */
    int doc_failed;    /* ... about a document (not a stream or a write) */
    simdbpe_status fail_status;
    uint64_t fail_file; /* the input at fault, or SIMDBPE_NO_POSITION */
    uint64_t fail_line, fail_off;
    /* Writer-role state: the document being written. */
    int doc_open, doc_poisoned, doc_buffered;
    uint32_t doc_file;
    uint64_t doc_line, doc_text_bytes;
    uint32_t *docbuf;
    size_t docbuf_len, docbuf_cap;
    FILE *spill;      /* the held document's ids beyond SPILL_IDS (unlinked) */
    uint64_t spilled; /* ids in it */
} pipeline;

typedef struct worker {
    pipeline *p;
    int reader; /* thread 0: the only one that reads (see do_read) */
    simdbpe_encoder *enc;
    jsonl_buf scratch;
} worker;

double simdbpe__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Stops the run with `msg` (NULL: out of memory), unless it is stopping
 * already; `st` is its status. */
static void set_fatal(pipeline *p, simdbpe_status st, const char *msg)
{
    pthread_mutex_lock(&p->mu);
    if (!p->fatal) {
        p->fatal = strdup(msg ? msg : "out of memory");
        p->fail_status = msg ? st : SIMDBPE_ERR_NOMEM;
    }
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* --------------------------------------------------------------- encoding */

/* The message for a library error in a segment; sets its error fields. */
static void encode_message(const pipeline *p, const batch *b, seg *s, simdbpe_status st,
                           const simdbpe_error *err, char *msg, size_t cap)
{
    const job *j = p->j;
    const char *name = simdbpe__display_name(j->files[s->file]);
    uint64_t at = err->byte_offset;
    s->err_status = st;
    s->err_line = s->line;
    s->err_off = at;
    if (j->mode == SIMDBPE_INPUT_JSONL) {
        if (at != SIMDBPE_NO_POSITION)
            snprintf(msg, cap, "%s: line %llu: %s (byte %llu of the \"%s\" value): %s", name,
                     (unsigned long long)s->line, simdbpe_strerror(st), (unsigned long long)at,
                     j->key.spec, err->message);
        else
            snprintf(msg, cap, "%s: line %llu: %s", name, (unsigned long long)s->line,
                     err->message[0] ? err->message : simdbpe_strerror(st));
        return;
    }
    if (at == SIMDBPE_NO_POSITION) {
        snprintf(msg, cap, "%s: line %llu: %s", name, (unsigned long long)s->line,
                 err->message[0] ? err->message : simdbpe_strerror(st));
        return;
    }
    /* Text: the line and byte offset in the (decompressed) file. */
    uint64_t line = s->line;
    const char *t = b->buf + s->off;
    for (uint64_t i = 0; i < at && i < s->len; i++)
        line += t[i] == '\n';
    s->err_line = line;
    s->err_off = s->file_off + at;
    if (s->doc_off == 0)
        snprintf(msg, cap, "%s: line %llu, byte offset %llu: %s: %s", name,
                 (unsigned long long)line, (unsigned long long)(s->file_off + at),
                 simdbpe_strerror(st), err->message);
    else
        snprintf(msg, cap, "%s: line %llu, byte offset %llu: %s (at byte %llu of the document)",
                 name, (unsigned long long)line, (unsigned long long)(s->file_off + at),
                 simdbpe_strerror(st), (unsigned long long)(s->doc_off + at));
}

/*
 * Texts longer than this (a JSON record, a text without a cut point that
 * the reader could use within a batch) are encoded in parts at cut points,
 * so that the encoder's output buffer stays small: a 52 MB record took
 * 246 MB; the record, its ids and these parts take about 2.2 times its
 * size.
 */
#define PART_BYTES (1u << 20)

/* The text of a JSON segment, or a failure recorded on it. */
static int json_text(worker *wk, batch *b, seg *s, const char **text, size_t *len)
{
    const job *j = wk->p->j;
    char why[400], msg[700];
    /* A UTF-8 byte order mark at the start of a file is not part of its
     * first record (RFC 8259 lets a parser ignore it; it was reported as
     * "'[' or '{' expected near '\xEF\xBB\xBF'", invisible). */
    int bom = s->file_off == 0 && s->len >= 3 && !memcmp(b->buf + s->off, "\xEF\xBB\xBF", 3);
    size_t skip = bom ? 3 : 0;
    int replace = j->enc.errors == SIMDBPE_UTF8_REPLACE;
    char *rec = b->buf + s->off + skip;
    jsonl_status st =
        s->len - skip > PART_BYTES
            ? simdbpe__jsonl_extract_in_place(rec, s->len - skip, &j->key, replace, &wk->scratch,
                                              text, len, why, sizeof why)
            : simdbpe__jsonl_extract(rec, s->len - skip, &j->key, replace, &wk->scratch, text, len,
                                     why, sizeof why, NULL);
    if (st == JSONL_OK)
        return 0;
    snprintf(msg, sizeof msg, "%s: line %llu: %s", simdbpe__display_name(j->files[s->file]),
             (unsigned long long)s->line, why);
    if (simdbpe__batch_fail_seg(b, s, msg))
        return -2;
    s->err_status = st == JSONL_NOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_INVALID_ARG;
    s->err_line = s->line;
    s->err_off = SIMDBPE_NO_POSITION;
    return -1;
}

/* Where the part of text[0..len) that starts the rest ends: the first cut
 * point at or after PART_BYTES, else len. */
static size_t part_end(const job *j, const simdbpe_encode_options *o, const char *text,
                       size_t len)
{
    if (len <= PART_BYTES)
        return len;
    for (size_t lo = 1, hi = PART_BYTES; lo < len; lo = hi + 1, hi *= 2) {
        size_t p = simdbpe_cut_find(j->model, o, text, len, lo, hi);
        if (p != SIMDBPE_NO_CUT)
            return p;
    }
    return len;
}

/*
 * Encodes one segment (a document or the part of one that the reader cut)
 * into b's ids, in parts of about PART_BYTES. A failure is reported as
 * encoding the whole text reports it (its offsets are the text's): parts
 * only save memory.
 */
static simdbpe_status encode_parts(worker *wk, batch *b, const seg *s, const char *text,
                                   size_t len, simdbpe_error *err)
{
    const job *j = wk->p->j;
    simdbpe_encode_options o = j->enc;
    /* A document in parts gets its post-processor ids once. */
    int prefix = s->begin ? SIMDBPE_ADD_PREFIX : 0, suffix = s->end ? SIMDBPE_ADD_SUFFIX : 0;
    size_t off = 0, mark = b->nids;
    do {
        size_t end = off + part_end(j, &j->enc, text + off, len - off);
        if (j->enc.add_special_tokens)
            o.add_special_tokens = (off == 0 ? prefix : 0) | (end == len ? suffix : 0);
        /* Into the batch's array: a long piece's ids are held once. */
        simdbpe_status st = simdbpe_encode_append(wk->enc, text + off, end - off, &o, &b->ids,
                                                  &b->idcap, &b->nids, err);
        if (st != SIMDBPE_OK && st != SIMDBPE_ERR_NOMEM && off > 0) {
            if (j->enc.add_special_tokens)
                o.add_special_tokens = prefix | suffix;
            b->nids = mark;
            st = simdbpe_encode_append(wk->enc, text, len, &o, &b->ids, &b->idcap, &b->nids, err);
            end = len;
        }
        if (st != SIMDBPE_OK)
            return st;
        off = end;
    } while (off < len);
    return SIMDBPE_OK;
}

/* Encodes every segment of `b`. Returns 0, or -1 when out of memory. */
static int encode_batch(worker *wk, batch *b)
{
    const job *j = wk->p->j;
    b->nids = 0;
    for (size_t i = 0; i < b->nsegs; i++) {
        seg *s = &b->segs[i];
        if (s->kind == SEG_FAIL) {
            if (!j->skip_errors)
                break;
            continue;
        }
        /* An empty document may come from a batch without a buffer. */
        const char *text = b->buf ? b->buf + s->off : "";
        size_t len = s->len;
        if (s->kind == SEG_JSON) {
            int r = json_text(wk, b, s, &text, &len);
            if (r == -2)
                return -1;
            if (r) {
                if (!j->skip_errors)
                    break; /* nothing after it will be written */
                continue;
            }
        }
        size_t mark = b->nids;
        simdbpe_error err;
        simdbpe_status st = encode_parts(wk, b, s, text, len, &err);
        if (st == SIMDBPE_ERR_NOMEM)
            return -1;
        if (st != SIMDBPE_OK) {
            b->nids = mark;
            char msg[900];
            encode_message(wk->p, b, s, st, &err, msg, sizeof msg);
            if (simdbpe__batch_fail_seg(b, s, msg))
                return -1;
            if (!j->skip_errors)
                break;
            continue;
        }
        s->ntok = b->nids - mark;
        s->text_bytes = len;
    }
    return 0;
}

/*
 * Whether the compressed file `path` fails its stream check (CRC, frame,
 * truncation), read through to the end; `why` gets the reason. A damaged
 * stream yields garbage before its check fails, so a malformed record
 * read from it is the damage, not the data: the run names the stream.
 */
static int stream_fails(const char *path, char *why, size_t cap)
{
    source *src = NULL;
    if (strcmp(path, "-") == 0 || simdbpe__source_open(&src, path) != 0)
        return 0;
    int fails = 0;
    char *buf = malloc(1 << 16);
    if (buf && simdbpe__source_kind_of(src) != SOURCE_PLAIN) {
        ssize_t got;
        uint64_t total = 0;
        while ((got = simdbpe__source_read(src, buf, 1 << 16, why, cap)) > 0)
            total += (uint64_t)got;
        if (got < 0) {
            size_t n = strlen(why);
            snprintf(why + n, cap - n, " (after %llu bytes of decompressed data)",
                     (unsigned long long)total);
            fails = 1;
        }
    }
    free(buf);
    simdbpe__source_close(src);
    return fails;
}

/* ---------------------------------------------------------------- writing */

static int write_error(pipeline *p, int e)
{
    char msg[1400];
    if (e == EBUSY) /* an llm.c shard's lock (writer_llmc.c) */
        snprintf(msg, sizeof msg,
                 "cannot write %s: another run is writing it (it holds its lock, %s.lock)",
                 p->w->err_path, p->w->err_path);
    else
        snprintf(msg, sizeof msg, "cannot write %s: %s", p->w->err_path, strerror(e));
    set_fatal(p, SIMDBPE_ERR_IO, msg);
    return -1;
}

static void record_skip(pipeline *p, const char *msg)
{
    run_totals *t = p->t;
    t->skipped++;
    t->files[p->doc_file].skipped++;
    if (p->j->on_message)
        p->j->on_message(p->j->user, SIMDBPE_DATASET_SKIPPED, msg);
    if (t->n_skips < MAX_SKIP_LIST) {
        char *m = strdup(msg);
        if (m)
            t->skips[t->n_skips++].what = m;
    }
}

/*
 * In skip mode a document cut into parts is held until its last part (a
 * failure drops it whole). Past SPILL_IDS (16 MB) its ids go on in an
 * unlinked temporary file, so that memory does not grow with its length.
 */
#define SPILL_IDS (4u << 20)

static const char *temp_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* Appends ids to the spill file; -1 (the run stopped, with a message). */
static int spill_ids(pipeline *p, const uint32_t *ids, size_t n)
{
    char msg[4200];
    if (!p->spill) {
        char path[4096];
        snprintf(path, sizeof path, "%s/simdbpe-doc.XXXXXX", temp_dir());
        int fd = mkstemp(path);
        if (fd >= 0) {
            unlink(path);
            if (!(p->spill = fdopen(fd, "w+b")))
                close(fd);
        }
        if (!p->spill) {
            snprintf(msg, sizeof msg, "cannot create a temporary file in %s (for a long document "
                     "held with `skip_errors`; set TMPDIR): %s", temp_dir(), strerror(errno));
            set_fatal(p, SIMDBPE_ERR_IO, msg);
            return -1;
        }
    }
    if (fwrite(ids, sizeof *ids, n, p->spill) != n) {
        snprintf(msg, sizeof msg, "cannot write a temporary file in %s: %s", temp_dir(),
                 strerror(errno));
        set_fatal(p, SIMDBPE_ERR_IO, msg);
        return -1;
    }
    p->spilled += n;
    return 0;
}

/* Forgets the held document. */
static void docbuf_clear(pipeline *p)
{
    p->docbuf_len = 0;
    if (p->spilled) {
        rewind(p->spill); /* overwritten; p->spilled says how much is valid */
        p->spilled = 0;
    }
}

/* Writes the held document's ids. */
static int docbuf_write(pipeline *p)
{
    if (p->spilled) {
        uint32_t chunk[16384];
        int ok = fflush(p->spill) == 0 && fseek(p->spill, 0, SEEK_SET) == 0;
        for (uint64_t left = p->spilled; ok && left > 0;) {
            size_t k = left < 16384 ? (size_t)left : 16384;
            if (fread(chunk, sizeof *chunk, k, p->spill) != k) {
                ok = 0;
                break;
            }
            int e = simdbpe__writer_ids(p->w, chunk, k);
            if (e)
                return e;
            left -= k;
        }
        if (!ok) {
            char msg[4200];
            snprintf(msg, sizeof msg, "cannot read back a temporary file in %s: %s", temp_dir(),
                     errno ? strerror(errno) : "short read");
            set_fatal(p, SIMDBPE_ERR_IO, msg);
            return -1;
        }
    }
    return simdbpe__writer_ids(p->w, p->docbuf, p->docbuf_len);
}

static int docbuf_add(pipeline *p, const uint32_t *ids, size_t n)
{
    if (n == 0)
        return 0;
    if (p->docbuf_len + n > SPILL_IDS) {
        if (p->docbuf_len && spill_ids(p, p->docbuf, p->docbuf_len))
            return -1;
        p->docbuf_len = 0;
        if (n > SPILL_IDS)
            return spill_ids(p, ids, n);
    }
    if (simdbpe__grow((void **)&p->docbuf, &p->docbuf_cap, p->docbuf_len + n, sizeof *p->docbuf))
        return ENOMEM;
    memcpy(p->docbuf + p->docbuf_len, ids, n * sizeof *ids);
    p->docbuf_len += n;
    return 0;
}

static int end_document(pipeline *p)
{
    int e = 0;
    if (p->doc_buffered) {
        e = simdbpe__writer_begin_doc(p->w);
        if (!e)
            e = docbuf_write(p);
    } else if (!p->doc_open) {
        e = simdbpe__writer_begin_doc(p->w); /* an empty document */
    }
    uint64_t tokens = 0;
    if (!e)
        e = simdbpe__writer_end_doc(p->w, p->doc_file, p->doc_line, &tokens);
    run_totals *t = p->t;
    t->docs++;
    t->tokens += tokens;
    t->text_bytes += p->doc_text_bytes;
    t->files[p->doc_file].docs++;
    t->files[p->doc_file].tokens += tokens;
    return e;
}

/* One segment, in input order; `ids` are its ids. */
static int write_seg(pipeline *p, const batch *b, const seg *s, const uint32_t *ids)
{
    int e = 0;
    p->t->cuts += !s->begin;
    if (s->begin) {
        p->doc_open = p->doc_poisoned = 0;
        p->doc_buffered = p->j->hold_docs && !s->end;
        docbuf_clear(p);
        p->doc_file = s->file;
        p->doc_line = s->line;
        p->doc_text_bytes = 0;
    }
    if (s->failed) {
        const char *msg = b->msgs[s->msg - 1];
        if (!p->j->skip_errors || s->fatal) {
            p->doc_failed = !s->fatal;
            pthread_mutex_lock(&p->mu);
            if (!p->fatal) {
                p->fail_file = s->file;
                p->fail_line = s->err_line;
                p->fail_off = s->err_off;
            }
            pthread_mutex_unlock(&p->mu);
            set_fatal(p, (simdbpe_status)s->err_status, msg);
            return -1;
        }
        if (!p->doc_poisoned)
            record_skip(p, msg);
        p->doc_poisoned = 1;
    } else if (!p->doc_poisoned) {
        p->doc_text_bytes += s->text_bytes;
        if (p->doc_buffered) {
            e = docbuf_add(p, ids, s->ntok);
        } else {
            if (!p->doc_open)
                e = simdbpe__writer_begin_doc(p->w);
            p->doc_open = 1;
            if (!e)
                e = simdbpe__writer_ids(p->w, ids, s->ntok);
        }
    }
    if (!e && s->end && !p->doc_poisoned)
        e = end_document(p);
    if (s->end)
        p->doc_open = 0;
    if (e == -1)
        return -1; /* the message is set */
    return e ? write_error(p, e) : 0;
}

static int write_batch(pipeline *p, batch *b)
{
    const uint32_t *ids = b->ids;
    for (size_t i = 0; i < b->nsegs; i++) {
        if (write_seg(p, b, &b->segs[i], ids))
            return -1;
        if (b->segs[i].ntok) /* ids is NULL in a batch without any */
            ids += b->segs[i].ntok;
    }
    p->t->in_bytes += b->in_bytes;
    if (p->j->on_progress && p->j->on_progress(p->j->user, b->raw_pos, p->t->in_bytes, p->t->docs)) {
        set_fatal(p, SIMDBPE_ERR_CANCELLED, "cancelled");
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------------- threads */

/* A batch to fill, or NULL if all are in use. Called with the lock held. */
static batch *take_batch(pipeline *p)
{
    batch *b = p->free_list;
    if (b) {
        p->free_list = b->next_free;
        return b;
    }
    if (p->n_batches >= p->window)
        return NULL;
    b = calloc(1, sizeof *b);
    if (b)
        p->n_batches++;
    return b;
}

static void give_batch(pipeline *p, batch *b)
{
    batch_clear_msgs(b);
    /* A batch that held a document far longer than a batch gives its
     * arrays back: kept, they would stay resident for the rest of the run. */
    size_t usual = p->j->batch_bytes;
    if (b->cap > 4 * usual) {
        free(b->buf);
        b->buf = NULL;
        b->cap = 0;
    }
    if (b->idcap > 2 * usual) { /* 8 bytes of ids a usual batch byte */
        free(b->ids);
        b->ids = NULL;
        b->idcap = 0;
    }
    b->next_free = p->free_list;
    p->free_list = b;
}

/* Writes the next batch in order. Called and returns with the lock held. */
static void do_write(pipeline *p)
{
    size_t slot = p->next_write % p->window;
    batch *b = p->slots[slot];
    p->slots[slot] = NULL;
    p->writing = 1;
    pthread_mutex_unlock(&p->mu);
    int rc = write_batch(p, b);
    pthread_mutex_lock(&p->mu);
    p->writing = 0;
    p->next_write++;
    give_batch(p, b);
    if (rc)
        p->stop = 1;
    pthread_cond_broadcast(&p->cv);
}

/*
 * Reads the next batch into the queue of filled batches. Only thread 0
 * reads: a decompressor's state (zstd keeps a window of several MiB) stays
 * in one core's caches instead of moving with every batch, which made
 * decompression several times slower when the reading role alternated.
 * Called and returns with the lock held.
 */
static void do_read(pipeline *p, batch *b)
{
    p->reading = 1;
    pthread_mutex_unlock(&p->mu);
    int got = simdbpe__reader_fill(p->rd, b);
    b->raw_pos = simdbpe__reader_raw_pos(p->rd);
    pthread_mutex_lock(&p->mu);
    p->reading = 0;
    if (got <= 0) {
        p->input_done = 1;
        give_batch(p, b);
        if (got < 0 && !p->fatal) {
            p->fatal = strdup("out of memory");
            p->fail_status = SIMDBPE_ERR_NOMEM;
            p->stop = 1;
        }
    } else {
        b->seq = p->next_seq++;
        b->next_free = NULL;
        if (p->filled_tail)
            p->filled_tail->next_free = b;
        else
            p->filled_head = b;
        p->filled_tail = b;
        p->n_filled++;
    }
    pthread_cond_broadcast(&p->cv);
}

/* Encodes the oldest filled batch. Called and returns with the lock held. */
static void do_encode(worker *wk)
{
    pipeline *p = wk->p;
    batch *b = p->filled_head;
    p->filled_head = b->next_free;
    if (!p->filled_head)
        p->filled_tail = NULL;
    p->n_filled--;
    pthread_mutex_unlock(&p->mu);
    int rc = encode_batch(wk, b);
    if (rc)
        set_fatal(p, SIMDBPE_ERR_NOMEM, NULL);
    pthread_mutex_lock(&p->mu);
    p->slots[b->seq % p->window] = b;
    pthread_cond_broadcast(&p->cv);
}

/* Whether thread 0 should read now: input is left, the queue of filled
 * batches is short and the writer is not too far behind. */
static int should_read(const pipeline *p)
{
    return !p->input_done && p->n_filled < p->read_ahead &&
           p->next_seq < p->next_write + p->window;
}

/* Each thread, in order of preference: write the next batch if it is
 * encoded; (thread 0) keep the queue of filled batches topped up; encode
 * the oldest filled batch; else wait. */
static void *worker_main(void *arg)
{
    worker *wk = arg;
    pipeline *p = wk->p;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        batch *ready = p->slots[p->next_write % p->window];
        if (!p->writing && ready && ready->seq == p->next_write) {
            do_write(p);
            continue;
        }
        if (wk->reader && should_read(p)) {
            batch *b = take_batch(p);
            if (b) {
                do_read(p, b);
                continue;
            }
        }
        if (p->filled_head) {
            do_encode(wk);
            continue;
        }
        if (p->input_done && p->next_write == p->next_seq)
            break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ------------------------------------------------------------------- run */

void simdbpe__run_totals_free(run_totals *t)
{
    for (size_t i = 0; i < t->n_skips; i++)
        free(t->skips[i].what);
    free(t->skips);
    free(t->files);
    memset(t, 0, sizeof *t);
}

static int setup(pipeline *p, const job *j, writer *w, run_totals *t)
{
    memset(p, 0, sizeof *p);
    p->j = j;
    p->w = w;
    p->t = t;
    p->fail_file = SIMDBPE_NO_POSITION;
    p->fail_off = SIMDBPE_NO_POSITION;
    p->window = 2 * (size_t)j->threads + 2;
    /* One batch queued per other thread, plus one, so that nobody waits
     * while thread 0 reads or encodes; a single thread reads just in time. */
    p->read_ahead = j->threads > 1 ? (size_t)j->threads + 1 : 1;
    memset(t, 0, sizeof *t);
    t->files = calloc(j->n_files ? j->n_files : 1, sizeof *t->files);
    t->skips = calloc(MAX_SKIP_LIST, sizeof *t->skips);
    p->slots = calloc(p->window, sizeof *p->slots);
    if (!t->files || !t->skips || !p->slots || simdbpe__reader_new(&p->rd, j))
        return -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return 0;
}

static void teardown(pipeline *p)
{
    for (size_t i = 0; p->slots && i < p->window; i++)
        batch_free(p->slots[i]);
    while (p->filled_head) {
        batch *b = p->filled_head;
        p->filled_head = b->next_free;
        batch_free(b);
    }
    while (p->free_list) {
        batch *b = p->free_list;
        p->free_list = b->next_free;
        batch_free(b);
    }
    free(p->slots);
    free(p->docbuf);
    if (p->spill)
        fclose(p->spill);
    free(p->fatal);
    simdbpe__reader_free(p->rd);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

/* Task `t` of the pool run: worker t's loop. */
static void worker_task(void *user, size_t t, unsigned w)
{
    (void)w;
    worker_main((worker *)user + t);
}

static int fail(run_failure *f, simdbpe_status st, const char *msg)
{
    f->status = st;
    f->message = strdup(msg);
    return -1;
}

/* The encoders, one per worker. Returns 0 or -1 (reason in f). */
static int make_encoders(const job *j, worker *wk, pipeline *p, run_failure *f)
{
    for (int i = 0; i < j->threads; i++) {
        wk[i].p = p;
        wk[i].reader = i == 0;
        simdbpe_encoder_options eo = SIMDBPE_ENCODER_OPTIONS_INIT;
        eo.cache_mb = j->cache_mb;
        simdbpe_status st = simdbpe_encoder_new_with(j->model, &eo, &wk[i].enc, NULL);
        if (st != SIMDBPE_OK) {
            char msg[300];
            snprintf(msg, sizeof msg, "cannot create an encoder: %s%s", simdbpe_strerror(st),
                     st == SIMDBPE_ERR_UNSUPPORTED ? " (check SIMDBPE_KERNEL)" : "");
            return fail(f, st, msg);
        }
    }
    return 0;
}

/* The failure that stopped the run, into f. */
static void report(const job *j, pipeline *p, run_failure *f)
{
    char why[600];
    f->status = p->fail_status;
    f->file = p->fail_file;
    f->line = p->fail_line;
    f->byte_offset = p->fail_off;
    if (p->doc_failed && stream_fails(j->files[p->fail_file], why, sizeof why)) {
        const char *name = simdbpe__display_name(j->files[p->fail_file]);
        size_t n = strlen(name) + strlen(why) + strlen(p->fatal) + 100;
        f->message = malloc(n);
        if (f->message)
            snprintf(f->message, n,
                     "%s: %s; the document error before the check is from the damaged data: %s",
                     name, why, p->fatal);
        f->status = SIMDBPE_ERR_IO;
        f->line = 0;
        f->byte_offset = SIMDBPE_NO_POSITION;
    } else {
        f->message = strdup(p->fatal);
    }
}

int simdbpe__pipeline_run(const job *j, writer *w, run_totals *t, run_failure *f)
{
    pipeline p;
    double t0 = simdbpe__now();
    memset(f, 0, sizeof *f);
    f->file = f->byte_offset = SIMDBPE_NO_POSITION;
    if (setup(&p, j, w, t)) {
        free(p.slots);
        simdbpe__reader_free(p.rd);
        simdbpe__run_totals_free(t);
        return fail(f, SIMDBPE_ERR_NOMEM, "out of memory");
    }
    worker *wk = calloc((size_t)j->threads, sizeof *wk);
    int rc = wk ? make_encoders(j, wk, &p, f) : fail(f, SIMDBPE_ERR_NOMEM, "out of memory");
    if (rc == 0) {
        t->kernel = simdbpe_encoder_kernel_name(wk[0].enc);
        /* Task 0 reads; any worker of the pool may run it. */
        simdbpe_pool_run(j->pool, (size_t)j->threads, (unsigned)j->threads, worker_task, wk);
    }
    if (rc == 0 && p.fatal) {
        report(j, &p, f);
        rc = -1;
    }
    for (int i = 0; wk && i < j->threads; i++) {
        simdbpe_encoder_free(wk[i].enc);
        simdbpe__jsonl_buf_free(&wk[i].scratch);
    }
    free(wk);
    teardown(&p);
    t->seconds = simdbpe__now() - t0;
    return rc;
}
