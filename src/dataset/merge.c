/*
 * merge.c - simdbpe_dataset_merge: one dataset from the parts of a sharded
 * encode (marker.h), or from any list of Megatron/raw datasets (the engine
 * of `simdbpe merge --output-format megatron|u16|u32|text -o OUT [PART...]`).
 *
 * PART is what one rank wrote: a Megatron prefix (PART.bin + PART.idx) or
 * a raw file. Without PARTs, the parts of `simdbpe encode -o OUT` run with
 * ranks are found as OUT.RRRRR-of-WWWWW.done.
 *
 * With completion markers (PART.done) the parts must be all W ranks of one
 * run, and documents are put back in the order of the full input list:
 * rank r holds files r, r+W, r+2W, ... contiguously, with each file's
 * document and token counts in its marker, so the merge takes file 0 from
 * rank 0, file 1 from rank 1, and so on. The result is byte-identical to a
 * single-process run over the same inputs. Without markers the parts are
 * concatenated in the order given.
 *
 * Every part is checked before anything is written (Megatron index
 * structure, file sizes against the index or the marker); the outputs are
 * written under temporary names and renamed when complete. A failure is
 * recorded once (fail()), with the message `simdbpe merge` prints, and
 * unwinds as M_FAIL or M_USAGE.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simdbpe_dataset.h"

#include "../common/common.h"
#include "marker.h"
#include "megatron_idx.h"
#include "outfile.h"


/* How a step ends: 0, or a failure (the message is recorded). */
#define M_FAIL 1
#define M_USAGE 2

typedef struct part {
    char *base;
    char *data_path; /* BASE.bin (megatron) or BASE */
    int fd;
    uint64_t size, pos; /* of the data file; pos: how far it has been copied */
    int has_marker;
    marker mk;
    megatron_idx idx;
    uint64_t next_doc; /* megatron: the next document to copy */
} part;

typedef struct merge {
    simdbpe_output_format format; /* MEGATRON, U16, U32 or TEXT */
    const char *output;
    simdbpe_dataset_message_fn notice; /* removed leftovers; may be NULL */
    void *user;
    simdbpe_status status; /* of the first failure */
    char *message;         /* its whole message */
    int in_file_order;     /* the parts had markers */
    part *parts;
    size_t n;
    unsigned width;
    int dtype;
    /* outputs */
    outfile data, idx;
    char *data_path, *idx_path;
    uint32_t *lens;
    uint64_t *docs;
    uint64_t S, D;
    size_t lens_cap, docs_cap;
    uint64_t tokens, documents;
    char *buf;
} merge;

#define COPY_BUF (1u << 20)

/* Records the failure (the first one only; status SIMDBPE_ERR_IO, which
 * fail_as() changes) and returns M_FAIL. */
static int fail(merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(merge *m, const char *fmt, ...)
{
    if (m->message)
        return M_FAIL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&m->message, fmt, ap) < 0)
        m->message = NULL;
    va_end(ap);
    m->status = m->message ? SIMDBPE_ERR_IO : SIMDBPE_ERR_NOMEM;
    return M_FAIL;
}

/* The status of the failure just recorded. */
static int fail_as(merge *m, simdbpe_status st, int rc)
{
    m->status = st;
    return rc;
}

/* The parts of `simdbpe encode -o OUT` run with ranks: OUT.*-of-*.done. */
static int find_parts(merge *m, char ***names, int *n)
{
    size_t len = strlen(m->output);
    char *pattern = malloc(len + 64);
    if (!pattern)
        return M_FAIL;
    snprintf(pattern, len + 64, "%s.[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9].done",
             m->output);
    glob_t g;
    int r = glob(pattern, 0, NULL, &g);
    free(pattern);
    if (r != 0) {
        fail(m, "merge: no parts given and none found as %s.RRRRR-of-WWWWW.done", m->output);
        return M_FAIL;
    }
    free(*names);
    *names = calloc(g.gl_pathc + 1, sizeof **names);
    for (size_t i = 0; *names && i < g.gl_pathc; i++) {
        size_t l = strlen(g.gl_pathv[i]);
        (*names)[i] = strndup(g.gl_pathv[i], l - 5); /* without ".done" */
    }
    *n = (int)g.gl_pathc;
    globfree(&g);
    return *names ? 0 : M_FAIL;
}

/* ------------------------------------------------------------- parts */

static int open_part(merge *m, part *p, const char *base)
{
    char msg[700];
    p->fd = -1;
    p->base = strdup(base);
    size_t n = strlen(base);
    char *mpath = malloc(n + 8);
    p->data_path = malloc(n + 8);
    if (!p->base || !mpath || !p->data_path) {
        free(mpath);
        fail(m, "out of memory");
        return fail_as(m, SIMDBPE_ERR_NOMEM, M_FAIL);
    }
    snprintf(p->data_path, n + 8, m->format == SIMDBPE_OUTPUT_MEGATRON ? "%s.bin" : "%s", base);
    snprintf(mpath, n + 8, "%s.done", base);
    int r = simdbpe__marker_read(mpath, &p->mk, msg, sizeof msg);
    free(mpath);
    if (r < 0) {
        fail(m, "merge: %s", msg);
        return M_FAIL;
    }
    p->has_marker = r == 0;
    /* A marker of another format says so before its files are looked for. */
    if (p->has_marker && strcmp(p->mk.format, simdbpe_output_format_name(m->format))) {
        fail(m, "merge: %s.done was written with --output-format %s, not %s: merge with "
             "--output-format %s", base, p->mk.format, simdbpe_output_format_name(m->format),
             p->mk.format);
        return M_FAIL;
    }
    p->fd = open(p->data_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (p->fd < 0 || fstat(p->fd, &st) != 0) {
        int e = errno;
        char other[4200];
        snprintf(other, sizeof other, m->format == SIMDBPE_OUTPUT_MEGATRON ? "%s" : "%s.bin", base);
        if (e == ENOENT && m->format == SIMDBPE_OUTPUT_MEGATRON && n > 4 &&
            !strcmp(base + n - 4, ".bin"))
            fail(m, "merge: %s does not exist: a Megatron part is named by its prefix "
                 "(%.*s, for %.*s.bin and .idx)", p->data_path, (int)(n - 4), base,
                 (int)(n - 4), base);
        else if (e == ENOENT && stat(other, &st) == 0)
            fail(m, "merge: %s does not exist, but %s does: %s", p->data_path, other,
                 m->format == SIMDBPE_OUTPUT_MEGATRON
                     ? "a raw part is merged with --output-format u16, u32 or text"
                     : "a Megatron part is merged with --output-format megatron");
        else
            fail(m, "merge: %s: %s", p->data_path, strerror(e));
        return M_FAIL;
    }
    p->size = (uint64_t)st.st_size;
    if (m->format == SIMDBPE_OUTPUT_MEGATRON) {
        char *ipath = malloc(n + 8);
        if (!ipath)
            return M_FAIL;
        snprintf(ipath, n + 8, "%s.idx", base);
        r = simdbpe__megatron_idx_read(ipath, &p->idx, msg, sizeof msg);
        free(ipath);
        if (r) {
            fail(m, "merge: %s", msg);
            return M_FAIL;
        }
        uint64_t total = 0;
        for (uint64_t i = 0; i < p->idx.S; i++)
            total += p->idx.lens[i];
        if (total * p->idx.width != p->size) {
            fail(m, "merge: %s: %llu bytes, but its index describes %llu", p->data_path,
                 (unsigned long long)p->size, (unsigned long long)(total * p->idx.width));
            return M_FAIL;
        }
    }
    return 0;
}

static void close_part(part *p)
{
    if (p->fd >= 0)
        close(p->fd);
    simdbpe__marker_free(&p->mk);
    simdbpe__megatron_idx_free(&p->idx);
    free(p->base);
    free(p->data_path);
}

/* ------------------------------------------------------- marker checks */

/* Why marker k (of part `kb`) does not go with the first part's, or NULL. */
static const char *mismatch(const merge *m, const marker *k, const char *kb, part **by_rank,
                            char *why, size_t cap)
{
    const part *first = &m->parts[0];
    const marker *f = &first->mk;
    /* (The format was checked when the part was opened.) */
    if (k->world != f->world)
        snprintf(why, cap, "%s.done is from a run of %ld ranks, %s.done from one of %ld: parts "
                 "of different runs", kb, k->world, first->base, f->world);
    else if (k->total_files != f->total_files)
        snprintf(why, cap, "%s.done is from a run over %llu input files, %s.done from one over "
                 "%llu: parts of different runs", kb, (unsigned long long)k->total_files,
                 first->base, (unsigned long long)f->total_files);
    else if (strcmp(k->dtype, f->dtype) || strcmp(k->eot, f->eot))
        snprintf(why, cap, "%s.done has ids of %s with --eot %s, %s.done of %s with --eot %s",
                 kb, k->dtype, k->eot, first->base, f->dtype, f->eot);
    else if (k->rank < 0 || k->rank >= f->world)
        snprintf(why, cap, "%s.done says rank %ld of %ld", kb, k->rank, f->world);
    else if (by_rank[k->rank])
        snprintf(why, cap, "%s.done and %s.done are both rank %ld", by_rank[k->rank]->base, kb,
                 k->rank);
    else
        return NULL;
    return why;
}

typedef struct listed {
    const marker_file *f;
    const part *p;
} listed;

static int by_path(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    int c = strcmp(x->f->path, y->f->path);
    return c ? c : x->f->index < y->f->index ? -1 : x->f->index > y->f->index;
}

/* Whether some path is listed at two places by the markers (then the
 * failure is recorded): their lists differ. */
static int twice_listed(merge *m)
{
    size_t total = 0;
    for (size_t r = 0; r < m->n; r++)
        total += m->parts[r].mk.n_files;
    listed *all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        fail(m, "out of memory");
        return fail_as(m, SIMDBPE_ERR_NOMEM, 1);
    }
    size_t k = 0;
    for (size_t r = 0; r < m->n; r++)
        for (size_t i = 0; i < m->parts[r].mk.n_files; i++)
            all[k++] = (listed){&m->parts[r].mk.files[i], &m->parts[r]};
    qsort(all, total, sizeof *all, by_path);
    int found = 0;
    for (size_t i = 1; i < total && !found; i++) {
        if (strcmp(all[i - 1].f->path, all[i].f->path))
            continue;
        fail(m, "merge: %s is file %llu in %s.done and file %llu in %s.done: the ranks were "
                "given different input lists",
             all[i].f->path, (unsigned long long)all[i - 1].f->index, all[i - 1].p->base,
             (unsigned long long)all[i].f->index, all[i].p->base);
        found = 1;
    }
    free(all);
    return found;
}

/* Fails naming the input lists of parts a and b, which differ, by their
 * first files. */
static int different_lists(merge *m, const part *a, const part *b)
{
    const marker_file *fa = a->mk.n_files ? &a->mk.files[0] : NULL;
    const marker_file *fb = b->mk.n_files ? &b->mk.files[0] : NULL;
    fail(m, "merge: %s.done and %s.done come from runs over different input lists (the first "
            "lists %s as file %llu, the second %s as file %llu)",
         a->base, b->base, fa ? fa->path : "nothing", fa ? (unsigned long long)fa->index : 0ULL,
         fb ? fb->path : "nothing", fb ? (unsigned long long)fb->index : 0ULL);
    return M_FAIL;
}

/* The parts are exactly ranks 0..W-1 of one run, in rank order. */
static int check_markers(merge *m)
{
    part *first = &m->parts[0];
    long W = first->mk.world;
    part **by_rank = calloc((size_t)(W > 0 ? W : 1), sizeof *by_rank);
    if (!by_rank)
        return M_FAIL;
    char why[1200];
    for (size_t i = 0; i < m->n; i++) {
        marker *k = &m->parts[i].mk;
        if (mismatch(m, k, m->parts[i].base, by_rank, why, sizeof why)) {
            fail(m, "merge: %s", why);
            free(by_rank);
            return M_FAIL;
        }
        by_rank[k->rank] = &m->parts[i];
    }
    if ((long)m->n != W) {
        long missing = 0;
        while (missing < W && by_rank[missing])
            missing++;
        fail(m, "merge: %zu parts, but the markers say the run had %ld ranks (rank %ld is "
             "missing)", m->n, W, missing);
        free(by_rank);
        return M_FAIL;
    }
    /* Sort the parts by rank. */
    part *sorted = malloc(m->n * sizeof *sorted);
    if (!sorted) {
        free(by_rank);
        return M_FAIL;
    }
    for (long r = 0; r < W; r++)
        sorted[r] = *by_rank[r];
    memcpy(m->parts, sorted, m->n * sizeof *sorted);
    free(sorted);
    free(by_rank);
    /* One input list: the same hash in every marker (those older than it
     * have none; without them a file listed by two ranks at least shows
     * two lists). */
    int hashed = 1;
    for (long r = 0; r < W; r++)
        hashed &= m->parts[r].mk.input_list != NULL;
    for (long r = 1; hashed && r < W; r++)
        if (strcmp(m->parts[r].mk.input_list, m->parts[0].mk.input_list))
            return different_lists(m, &m->parts[0], &m->parts[r]);
    if (!hashed && twice_listed(m))
        return M_FAIL;
    /* Rank r must list files r, r+W, ... in order: each file exactly once. */
    uint64_t F = first->mk.total_files;
    for (long r = 0; r < W; r++) {
        marker *k = &m->parts[r].mk;
        uint64_t want_n = F > (uint64_t)r ? (F - (uint64_t)r + (uint64_t)W - 1) / (uint64_t)W : 0;
        int ok = k->n_files == want_n;
        for (size_t i = 0; ok && i < k->n_files; i++)
            ok = k->files[i].index == (uint64_t)r + i * (uint64_t)W;
        if (!ok) {
            fail(m, "merge: %s.done does not list files %ld, %ld+%ld, ... of %llu",
                 m->parts[r].base, r, r, W, (unsigned long long)F);
            return M_FAIL;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- output */

static int push_seq(merge *m, uint32_t len)
{
    if (simdbpe__grow((void **)&m->lens, &m->lens_cap, m->S + 1, sizeof *m->lens))
        return -1;
    m->lens[m->S++] = len;
    return 0;
}

static int push_doc(merge *m)
{
    if (simdbpe__grow((void **)&m->docs, &m->docs_cap, m->D + 1, sizeof *m->docs))
        return -1;
    m->docs[m->D++] = m->S;
    return 0;
}

/* Copies `n` bytes of part p from its current position. */
static int copy_bytes(merge *m, part *p, uint64_t n)
{
    while (n) {
        size_t k = n < COPY_BUF ? (size_t)n : COPY_BUF;
        ssize_t got = pread(p->fd, m->buf, k, (off_t)p->pos);
        if (got <= 0) {
            fail(m, "merge: %s: %s", p->data_path,
                 got < 0 ? strerror(errno) : "shorter than expected");
            return -1;
        }
        simdbpe__outfile_write(&m->data, m->buf, (size_t)got);
        p->pos += (uint64_t)got;
        n -= (uint64_t)got;
    }
    return 0;
}

/* Copies `ndocs` whole documents of part p (Megatron). */
static int copy_megatron_docs(merge *m, part *p, uint64_t ndocs)
{
    megatron_idx *x = &p->idx;
    if (p->next_doc + ndocs > x->D - 1) {
        fail(m, "merge: %s.idx has fewer documents than its marker says", p->base);
        return -1;
    }
    uint64_t bytes = 0;
    for (uint64_t d = p->next_doc; d < p->next_doc + ndocs; d++) {
        for (uint64_t s = x->docs[d]; s < x->docs[d + 1]; s++) {
            if (push_seq(m, x->lens[s]))
                return -1;
            bytes += (uint64_t)x->lens[s] * x->width;
        }
        if (push_doc(m))
            return -1;
    }
    p->next_doc += ndocs;
    m->documents += ndocs;
    m->tokens += bytes / x->width;
    return copy_bytes(m, p, bytes);
}

/* Copies `ndocs` lines (text) or `tokens` ids (u16/u32) of part p. */
static int copy_raw(merge *m, part *p, uint64_t ndocs, uint64_t tokens)
{
    m->documents += ndocs;
    m->tokens += tokens;
    if (m->format != SIMDBPE_OUTPUT_TEXT)
        return copy_bytes(m, p, tokens * m->width);
    /* Text: up to and including the ndocs-th newline. */
    uint64_t start = p->pos, end = p->pos, seen = 0;
    while (seen < ndocs) {
        ssize_t got = pread(p->fd, m->buf, COPY_BUF, (off_t)end);
        if (got <= 0) {
            fail(m, "merge: %s has fewer lines than its marker says", p->data_path);
            return -1;
        }
        ssize_t i = 0;
        for (; i < got && seen < ndocs; i++)
            seen += m->buf[i] == '\n';
        end += (uint64_t)i;
    }
    p->pos = start;
    return copy_bytes(m, p, end - start);
}

/* Global file order: file i comes from rank i % W. */
static int merge_in_file_order(merge *m)
{
    long W = m->parts[0].mk.world;
    uint64_t F = m->parts[0].mk.total_files;
    for (uint64_t i = 0; i < F; i++) {
        part *p = &m->parts[i % (uint64_t)W];
        marker_file *f = &p->mk.files[i / (uint64_t)W];
        int rc = m->format == SIMDBPE_OUTPUT_MEGATRON ? copy_megatron_docs(m, p, f->docs)
                                         : copy_raw(m, p, f->docs, f->tokens);
        if (rc)
            return M_FAIL;
    }
    for (size_t k = 0; k < m->n; k++) {
        part *p = &m->parts[k];
        if (p->pos != p->size ||
            (m->format == SIMDBPE_OUTPUT_MEGATRON && p->next_doc != p->idx.D - 1)) {
            fail(m, "merge: %s holds more than its marker lists", p->data_path);
            return M_FAIL;
        }
    }
    return 0;
}

static int concatenate(merge *m)
{
    for (size_t k = 0; k < m->n; k++) {
        part *p = &m->parts[k];
        if (m->format == SIMDBPE_OUTPUT_MEGATRON) {
            if (copy_megatron_docs(m, p, p->idx.D - 1))
                return M_FAIL;
            continue;
        }
        if (m->format != SIMDBPE_OUTPUT_TEXT && p->size % m->width) {
            fail(m, "merge: %s: %llu bytes is not a whole number of %u-byte ids", p->data_path,
                 (unsigned long long)p->size, m->width);
            return M_FAIL;
        }
        m->tokens += m->format == SIMDBPE_OUTPUT_TEXT ? 0 : p->size / m->width;
        if (copy_bytes(m, p, p->size))
            return M_FAIL;
    }
    return 0;
}

static int open_outputs(merge *m)
{
    size_t n = strlen(m->output);
    m->data_path = malloc(n + 8);
    m->idx_path = malloc(n + 8);
    m->buf = malloc(COPY_BUF);
    if (!m->data_path || !m->idx_path || !m->buf)
        return ENOMEM;
    snprintf(m->data_path, n + 8, m->format == SIMDBPE_OUTPUT_MEGATRON ? "%s.bin" : "%s",
             m->output);
    snprintf(m->idx_path, n + 8, "%s.idx", m->output);
    m->D = 0;
    if (m->format == SIMDBPE_OUTPUT_MEGATRON && push_doc(m)) /* document indices start at 0 */
        return ENOMEM;
    return simdbpe__outfile_open(&m->data, m->data_path);
}

static int finish_outputs(merge *m)
{
    int e = simdbpe__outfile_close(&m->data);
    if (e)
        return e;
    if (m->format == SIMDBPE_OUTPUT_MEGATRON) {
        e = simdbpe__outfile_open(&m->idx, m->idx_path);
        if (e)
            return e;
        simdbpe__megatron_idx_write_parts(&m->idx, m->dtype, m->width, m->lens, m->S, m->docs,
                                          m->D);
        e = simdbpe__outfile_close(&m->idx);
        if (e)
            return e;
    }
    sigset_t saved;
    simdbpe__outfile_commit_begin(&saved);
    e = simdbpe__outfile_commit(&m->data);
    if (!e && m->format == SIMDBPE_OUTPUT_MEGATRON)
        e = simdbpe__outfile_commit(&m->idx);
    simdbpe__outfile_commit_end(&saved);
    return e;
}

/* The parts agree on the id type (Megatron: from their indexes). */
static int check_dtype(merge *m)
{
    if (m->format == SIMDBPE_OUTPUT_U16 || m->format == SIMDBPE_OUTPUT_U32) {
        m->width = m->format == SIMDBPE_OUTPUT_U16 ? 2 : 4;
        return 0;
    }
    if (m->format == SIMDBPE_OUTPUT_TEXT)
        return 0;
    m->dtype = m->parts[0].idx.dtype;
    m->width = m->parts[0].idx.width;
    for (size_t k = 1; k < m->n; k++)
        if (m->parts[k].idx.dtype != m->dtype) {
            fail(m, "merge: %s.idx has dtype code %d, %s.idx has %d", m->parts[k].base,
                 m->parts[k].idx.dtype, m->parts[0].base, m->dtype);
            return M_FAIL;
        }
    return 0;
}

/* Whether `a` and `b` name the same existing file (device and inode). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Refuses, before anything is written, an output that is one of the parts'
 * files (data, index or marker): writing it would destroy the part. */
static int outputs_not_parts(merge *m)
{
    size_t n = strlen(m->output);
    char *out = malloc(n + 8), *in = NULL;
    int rc = out ? 0 : M_FAIL;
    for (int o = 0; !rc && o < (m->format == SIMDBPE_OUTPUT_MEGATRON ? 2 : 1); o++) {
        snprintf(out, n + 8, "%s%s", m->output,
                 m->format != SIMDBPE_OUTPUT_MEGATRON ? "" : o ? ".idx" : ".bin");
        for (size_t k = 0; !rc && k < m->n; k++) {
            const part *p = &m->parts[k];
            free(in);
            in = malloc(strlen(p->base) + 8);
            if (!in) {
                rc = M_FAIL;
                break;
            }
            static const char *const sfx[] = {".idx", ".done"};
            const char *hit = same_file(out, p->data_path) ? p->data_path : NULL;
            for (int i = 0; !hit && i < 2; i++) {
                sprintf(in, "%s%s", p->base, sfx[i]);
                hit = same_file(out, in) ? in : NULL;
            }
            if (hit) {
                fail(m, "merge: the output %s is the part's file %s: writing it would destroy "
                        "the part; choose another -o",
                     out, hit);
                rc = fail_as(m, SIMDBPE_ERR_INVALID_ARG, M_USAGE);
            }
        }
    }
    if (rc == M_FAIL)
        fail_as(m, SIMDBPE_ERR_NOMEM, fail(m, "merge: out of memory"));
    free(out);
    free(in);
    return rc;
}

static int run_merge(merge *m, char **names, int n_names)
{
    m->parts = calloc((size_t)n_names, sizeof *m->parts);
    if (!m->parts)
        return M_FAIL;
    int rc = 0;
    for (int i = 0; i < n_names && !rc; i++) {
        rc = open_part(m, &m->parts[i], names[i]);
        m->n = (size_t)i + 1;
    }
    size_t with = 0;
    for (size_t i = 0; !rc && i < m->n; i++)
        with += m->parts[i].has_marker;
    if (!rc && with && with != m->n) {
        fail(m, "merge: some parts have a completion marker (.done) and some do not");
        rc = M_FAIL;
    }
    if (!rc && with)
        rc = check_markers(m);
    if (!rc)
        rc = check_dtype(m);
    if (!rc)
        rc = outputs_not_parts(m);
    if (rc)
        return rc;
    /* The lock of each output file (outfile.h), then what a killed run
     * left under the name. */
    outlock lock = OUTLOCK_INIT;
    int e = 0;
    char *locked = NULL;
    for (int k = 0; k < (m->format == SIMDBPE_OUTPUT_MEGATRON ? 2 : 1) && !e; k++) {
        free(locked);
        if (asprintf(&locked, "%s%s", m->output,
                     m->format != SIMDBPE_OUTPUT_MEGATRON ? "" : k ? ".idx" : ".bin") < 0) {
            locked = NULL;
            e = ENOMEM;
        } else {
            e = simdbpe__outlock_take(&lock, locked);
        }
    }
    if (e == EBUSY) {
        fail(m, "merge: another run is writing %s (it holds its lock, %s.lock): wait for it to "
             "end, or choose another -o",
             locked, locked);
        free(locked);
        simdbpe__outlock_release(&lock);
        return M_FAIL;
    }
    free(locked);
    if (!e)
        simdbpe__outlock_remove_stale(&lock, m->output, m->notice, m->user);
    if (!e)
        e = open_outputs(m);
    if (e) {
        fail(m, "merge: %s: %s", m->data_path ? m->data_path : m->output, strerror(e));
        simdbpe__outlock_release(&lock);
        return M_FAIL;
    }
    rc = with ? merge_in_file_order(m) : concatenate(m);
    if (!rc && (e = finish_outputs(m)) != 0) {
        fail(m, "merge: cannot write %s: %s", m->output, strerror(e));
        rc = M_FAIL;
    }
    if (rc) {
        simdbpe__outfile_discard(&m->data);
        simdbpe__outfile_discard(&m->idx);
    }
    simdbpe__outlock_release(&lock);
    m->in_file_order = with > 0;
    return rc;
}

static void merge_free(merge *m, char **names, size_t n_names, int found)
{
    for (size_t i = 0; i < m->n; i++)
        close_part(&m->parts[i]);
    free(m->parts);
    if (found && names)
        for (size_t i = 0; i < n_names; i++)
            free(names[i]);
    free(names);
    simdbpe__outfile_free(&m->data);
    simdbpe__outfile_free(&m->idx);
    free(m->data_path);
    free(m->idx_path);
    free(m->lens);
    free(m->docs);
    free(m->buf);
    free(m->message);
}

/* The outcome into the caller's result and error. */
static simdbpe_status report(merge *m, int rc, simdbpe_merge_result *res, simdbpe_error *err)
{
    simdbpe_status st = rc == 0 ? SIMDBPE_OK : m->message ? m->status : SIMDBPE_ERR_NOMEM;
    const char *msg = rc == 0 ? "" : m->message ? m->message : "out of memory";
    if (res) {
        res->parts = m->n;
        res->documents = m->documents;
        res->tokens = m->tokens;
        res->in_file_order = m->in_file_order;
        res->message = rc ? strdup(msg) : NULL;
    }
    if (err) {
        err->status = st;
        err->byte_offset = err->index = SIMDBPE_NO_POSITION;
        err->line = 0;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return st;
}

simdbpe_status simdbpe_dataset_merge(const simdbpe_merge_options *opts, const char *const *parts,
                                     size_t n_parts, simdbpe_merge_result *result,
                                     simdbpe_error *err)
{
    merge m;
    memset(&m, 0, sizeof m);
    if (result)
        memset(result, 0, sizeof *result);
    m.data.fd = m.idx.fd = -1;
    m.data.slot = m.idx.slot = -1;
    simdbpe_output_format f = opts ? opts->format : SIMDBPE_OUTPUT_COUNT;
    int mergeable = f == SIMDBPE_OUTPUT_MEGATRON || f == SIMDBPE_OUTPUT_U16 ||
                    f == SIMDBPE_OUTPUT_U32 || f == SIMDBPE_OUTPUT_TEXT;
    int rc = 0;
    if (!opts || !mergeable || !opts->output || !strcmp(opts->output, "-") ||
        (n_parts && !parts))
        rc = fail_as(&m, SIMDBPE_ERR_INVALID_ARG,
                     fail(&m, "merge: give --output-format megatron|u16|u32|text and -o OUT"));
    char **names = NULL;
    int n_names = (int)n_parts, found = 0;
    if (!rc) {
        m.format = f;
        m.output = opts->output;
        m.notice = opts->on_message;
        m.user = opts->user;
        names = calloc(n_parts + 1, sizeof *names);
        rc = names ? 0 : fail_as(&m, SIMDBPE_ERR_NOMEM, fail(&m, "out of memory"));
    }
    for (size_t i = 0; !rc && i < n_parts; i++)
        names[i] = (char *)parts[i]; /* only read */
    if (!rc && n_parts == 0) {
        rc = find_parts(&m, &names, &n_names);
        found = 1;
    }
    if (!rc)
        rc = run_merge(&m, names, n_names);
    simdbpe_status st = report(&m, rc, result, err);
    merge_free(&m, names, (size_t)n_names, found);
    return st;
}
