/*
 * feed.c - streaming, multi-threaded pre-tokenization and word counting.
 *
 * Bytes fed to the trainer collect in a batch buffer. When the buffer holds
 * `batch` bytes (or the stream ends) it is counted:
 *
 *   buf:  [ counted now ........................ | carried over ]
 *         0        cut1        cut2           end            buf_len
 *         |-thread 0-|-thread 1-|--thread 2----|
 *
 * `end` and every cut are safe points: places where the pre-tokens of the
 * whole stream and of the pieces on either side are the same, so each
 * thread can pre-tokenize its part on its own and the counts do not depend
 * on the number of threads or on how the caller chunked the input.
 *
 *   - lines mode: right after a '\n' (each line is its own sequence);
 *   - documents mode: between two code points where a pre-token must end
 *     whatever comes next (see is_split_point), and not inside an
 *     occurrence of the document separator.
 *
 * The bytes after `end` (an unfinished line, word or UTF-8 character) are
 * moved to the front and counted with the next batch. If a batch has no safe
 * point at all (one enormous word or line), the batch size doubles, so the
 * cost stays linear; memory is then the size of that word, which the word
 * table has to hold anyway.
 *
 * Each thread validates its part as UTF-8 (strict: the first invalid byte
 * stops the run with its stream offset and line; replace: the part is copied
 * with each maximal invalid subpart turned into U+FFFD), runs the library's
 * block pre-tokenizer over it (documents: one run per stretch between
 * separators; lines: one run over all its lines, fixed up at line ends, see
 * count_lines) and counts the pieces in its own hot cache + word table. The
 * tables are merged when counting is over.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../kernels/kernels.h"
#include "../common/utf8_valid.h"
#include "../pretok/pretok.h"
#include "../pretok/ucd.h"
#include "train.h"

#define BATCH_PER_THREAD ((size_t)8 << 20)
/* The input buffer's first size. */
#define MIN_BUF ((size_t)1 << 12)
/* Below this many bytes a batch is counted by one thread. */
#define MIN_PART ((size_t)1 << 16)
/* Documents mode looks this far back from the end of a batch for a safe
 * point before giving up and growing the batch. */
#define SPLIT_SEARCH ((size_t)1 << 20)
#define PROGRESS_EVERY 0.2 /* seconds */

double simdbpe__train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

simdbpe_status simdbpe__feeder_init(simdbpe__feeder *f)
{
    f->tabs = calloc(f->threads, sizeof *f->tabs);
    if (!f->tabs)
        return SIMDBPE_ERR_NOMEM;
    for (unsigned i = 0; i < f->threads; i++)
        if (simdbpe__wordtab_init(&f->tabs[i], (size_t)1 << 8))
            return SIMDBPE_ERR_NOMEM;
    f->batch = BATCH_PER_THREAD * f->threads;
    return SIMDBPE_OK;
}

void simdbpe__feeder_free(simdbpe__feeder *f)
{
    if (f->tabs)
        for (unsigned i = 0; i < f->threads; i++)
            simdbpe__wordtab_free(&f->tabs[i]);
    free(f->tabs);
    free(f->hot);
    free(f->buf);
    f->hot = NULL;
    f->tabs = NULL;
    f->buf = NULL;
}

/* ------------------------------------------------------------ safe points */

/*
 * Whether every pre-token boundary of the stream is kept when the text is
 * cut at p (0 < p < n) and each side is pre-tokenized alone: the family's
 * rule (its train_cut), and no occurrence of the document separator
 * straddles p.
 */
static int is_split_point(const simdbpe__feeder *f, const uint8_t *s, size_t n, size_t p)
{
    if (!f->family->train_cut || !f->family->train_cut(s, n, p))
        return 0;
    if (f->sep) {
        /* No occurrence of the separator may straddle p, nor possibly
         * start before p and run past the bytes we have. */
        size_t from = p >= f->sep_len ? p - f->sep_len + 1 : 0;
        for (size_t q = from; q < p; q++) {
            size_t have = n - q < f->sep_len ? n - q : f->sep_len;
            if (memcmp(s + q, f->sep, have) == 0)
                return 0;
        }
    }
    return 1;
}

/* The first safe point in [from, n), or n if none. */
static size_t next_safe(const simdbpe__feeder *f, const uint8_t *s, size_t n, size_t from)
{
    if (f->mode == SIMDBPE_TRAIN_LINES) {
        const uint8_t *nl = from < n ? memchr(s + from, '\n', n - from) : NULL;
        return nl ? (size_t)(nl - s) + 1 : n;
    }
    for (size_t p = from > 0 ? from : 1; p < n; p++)
        if (is_split_point(f, s, n, p))
            return p;
    return n;
}

/* The last safe point in buf, or 0 if none. */
static size_t last_safe(const simdbpe__feeder *f, const uint8_t *s, size_t n)
{
    if (f->mode == SIMDBPE_TRAIN_LINES) {
        const uint8_t *nl = n ? memrchr(s, '\n', n) : NULL;
        return nl ? (size_t)(nl - s) + 1 : 0;
    }
    size_t stop = n > SPLIT_SEARCH ? n - SPLIT_SEARCH : 1;
    for (size_t p = n - 1; p >= stop && p > 0; p--)
        if (is_split_point(f, s, n, p))
            return p;
    return 0;
}

/* --------------------------------------------------------------- counting */

typedef struct job {
    const simdbpe__feeder *f;
    simdbpe__wordtab *tab;
    simdbpe__hot_slot *hot;
    unsigned hot_bits;
    const uint8_t *s; /* the part */
    size_t n;
    uint64_t newlines; /* '\n' bytes in the part */
    size_t bad;        /* offset of the first invalid byte, or SIZE_MAX */
    int nomem;
    uint8_t *fixed; /* replace mode: the repaired part */
    size_t fixed_cap;
} job;

/* Counts the pieces that end at the piece starts in `bits` (bit i is byte
 * at + i of s); *piece is where the open piece began, and becomes where the
 * last one begins. Returns 0, or -1 when out of memory. */
static int count_starts(job *j, const uint8_t *s, size_t room, size_t at, uint64_t bits,
                        size_t *piece)
{
    for (; bits; bits &= bits - 1) {
        size_t next = at + (size_t)__builtin_ctzll(bits);
        if (simdbpe__count_word(j->hot, j->hot_bits, j->tab, s + *piece, next - *piece, room - *piece))
            return -1;
        *piece = next;
    }
    return 0;
}

/* Pre-tokenizes one sequence s[0..n) and counts its pieces; `room` bytes
 * from s may be read (room >= n). The block scanner gives piece starts 64
 * bytes at a time. */
static int count_sequence(job *j, const uint8_t *s, size_t n, size_t room)
{
    simdbpe__pretok_state ps;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, piece = 0;
    simdbpe__pretok_begin_kind(&ps, j->f->pretok, j->f->k, s, n);
    while ((count = simdbpe__pretok_next(&ps, starts, &base)) != 0) {
        for (size_t b = 0; b < count; b++) {
            uint64_t bits = starts[b];
            size_t at = base + 64 * b;
            if (at == 0)
                bits &= bits - 1; /* the text's first start opens the first piece */
            if (count_starts(j, s, room, at, bits, &piece))
                return -1;
        }
    }
    if (n > 0 && simdbpe__count_word(j->hot, j->hot_bits, j->tab, s + piece, n - piece, room - piece))
        return -1;
    return 0;
}

/*
 * Lines mode over many lines at once: the pieces of the whole text, fixed
 * where the lines differ from it. Every line start starts a piece, and a
 * line's trailing whitespace run (which ends with its '\n') is one piece:
 * in the whole text `\s+(?!\S)` would leave the '\n' alone when the next
 * line starts with non-whitespace, so a start at a '\n' that follows
 * whitespace of the same line is dropped. Nothing else in a line depends on
 * what follows its '\n'.
 */
/* Lines mode for the families whose pieces are not fixed up at line
 * breaks as above (train_lines_joined 0): each line on its own. */
static int count_each_line(job *j, const uint8_t *s, size_t n, size_t room)
{
    for (size_t i = 0; i < n;) {
        const uint8_t *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) + 1 : n;
        if (count_sequence(j, s + i, end - i, room - i))
            return -1;
        i = end;
    }
    return 0;
}

static int count_lines(job *j, const uint8_t *s, size_t n, size_t room)
{
    if (!j->f->family->train_lines_joined)
        return count_each_line(j, s, n, room);
    simdbpe__pretok_state ps;
    uint64_t starts[SIMDBPE__PRETOK_CHUNK];
    size_t base, count, piece = 0;
    const uint8_t *hit = n ? memchr(s, '\n', n) : NULL;
    size_t nl = hit ? (size_t)(hit - s) : SIZE_MAX; /* the next '\n' to note */
    uint64_t carry = 0; /* the previous block ended with '\n' */
    simdbpe__pretok_begin_kind(&ps, j->f->pretok, j->f->k, s, n);
    while ((count = simdbpe__pretok_next(&ps, starts, &base)) != 0) {
        for (size_t b = 0; b < count; b++) {
            size_t at = base + 64 * b;
            uint64_t bits = starts[b] | carry, lf = 0;
            while (nl < at + 64) {
                lf |= (uint64_t)1 << (nl - at);
                hit = nl + 1 < n ? memchr(s + nl + 1, '\n', n - nl - 1) : NULL;
                nl = hit ? (size_t)(hit - s) : SIZE_MAX;
            }
            carry = lf >> 63;
            bits |= lf << 1;
            for (uint64_t m = lf & bits; m; m &= m - 1) {
                size_t p = at + (size_t)__builtin_ctzll(m);
                if (p > 0 && s[p - 1] != '\n' &&
                    simdbpe__pretok_class_before(s, p) == SIMDBPE__CP_SPACE)
                    bits &= ~((uint64_t)1 << (p - at));
            }
            if (n - at < 64)
                bits &= ((uint64_t)1 << (n - at)) - 1; /* a start at n is the end */
            if (at == 0)
                bits &= bits - 1;
            if (count_starts(j, s, room, at, bits, &piece))
                return -1;
        }
    }
    if (n > 0 && simdbpe__count_word(j->hot, j->hot_bits, j->tab, s + piece, n - piece, room - piece))
        return -1;
    return 0;
}

static uint64_t count_newlines(const uint8_t *s, size_t n)
{
    uint64_t c = 0;
    const uint8_t *end = s + n;
    while ((s = memchr(s, '\n', (size_t)(end - s))) != NULL) {
        c++;
        s++;
    }
    return c;
}

/* Copies s into j->fixed with every maximal invalid subpart replaced by
 * U+FFFD (EF BF BD); `bad` is the offset of the first invalid byte. */
static int repair(job *j, const uint8_t *s, size_t n, size_t bad, size_t *out_len)
{
    if (n > (SIZE_MAX - 1) / 3)
        return -1;
    if (simdbpe__grow((void **)&j->fixed, &j->fixed_cap, 3 * n + 1, 1))
        return -1;
    const simdbpe__kernels *k = j->f->k;
    uint8_t *o = j->fixed;
    memcpy(o, s, bad);
    size_t w = bad, i = bad;
    while (i < n) {
        size_t valid = k->validate_utf8(s + i, n - i);
        memcpy(o + w, s + i, valid);
        w += valid;
        i += valid;
        if (i == n)
            break;
        i += simdbpe__utf8_maximal_subpart(s + i, n - i);
        memcpy(o + w, "\xEF\xBF\xBD", 3);
        w += 3;
    }
    *out_len = w;
    return 0;
}

/* Documents mode: the separator ends a document; a part's edges are safe
 * points, so each stretch is pre-tokenized as a whole text. */
static int count_documents(job *j, const uint8_t *s, size_t n, size_t room)
{
    const simdbpe__feeder *f = j->f;
    if (!f->sep)
        return count_sequence(j, s, n, room);
    size_t i = 0;
    while (i < n) {
        const uint8_t *hit = memmem(s + i, n - i, f->sep, f->sep_len);
        size_t end = hit ? (size_t)(hit - s) : n;
        if (end > i && count_sequence(j, s + i, end - i, room - i))
            return -1;
        i = hit ? end + f->sep_len : n;
    }
    return 0;
}

static void *run_job(void *arg)
{
    job *j = arg;
    const simdbpe__feeder *f = j->f;
    const uint8_t *s = j->s;
    size_t n = j->n;
    /* The batch buffer may be read past the part up to its capacity. */
    size_t room = (size_t)(f->buf + f->buf_cap - s);
    size_t bad = n ? f->k->validate_utf8(s, n) : 0;
    if (bad != n) {
        if (f->errors != SIMDBPE_UTF8_REPLACE) {
            j->bad = bad;
            return NULL;
        }
        if (repair(j, s, n, bad, &n)) {
            j->nomem = 1;
            return NULL;
        }
        s = j->fixed;
        room = j->fixed_cap;
    }
    j->newlines = count_newlines(j->s, j->n);
    int rc = f->mode == SIMDBPE_TRAIN_LINES ? count_lines(j, s, n, room)
                                             : count_documents(j, s, n, room);
    if (rc)
        j->nomem = 1;
    return NULL;
}

static void count_task(void *user, size_t task, unsigned worker)
{
    (void)worker; /* each part has its own table, whoever counts it */
    run_job(&((job *)user)[task]);
}

/*
 * Sizes the hot caches for `bytes` counted per thread so far: a slot per
 * 8 bytes (prose averages 4-5 bytes a piece, and a cache larger than the
 * words seen only costs page faults and a longer flush), between
 * 2^SIMDBPE__HOT_MIN_BITS and 2^SIMDBPE__HOT_BITS slots. A cache only
 * grows, at most a few times (a large corpus reaches the largest size in
 * its first batch), and is flushed into its table first. Returns 0, or -1
 * when out of memory.
 */
static int hot_reserve(simdbpe__feeder *f, uint64_t bytes)
{
    unsigned bits = SIMDBPE__HOT_MIN_BITS;
    while (bits < SIMDBPE__HOT_BITS && ((uint64_t)8 << bits) < bytes)
        bits++;
    if (f->hot && bits <= f->hot_bits)
        return 0;
    size_t old = (size_t)1 << f->hot_bits;
    for (unsigned i = 0; f->hot && i < f->threads; i++)
        if (simdbpe__hot_flush(f->hot + i * old, old, &f->tabs[i]))
            return -1;
    simdbpe__hot_slot *hot = calloc((size_t)f->threads << bits, sizeof *hot);
    if (!hot)
        return -1;
    free(f->hot);
    f->hot = hot;
    f->hot_bits = bits;
    return 0;
}

/* Counts buf[0..end) with up to f->threads threads. */
static simdbpe_status count_region(simdbpe__feeder *f, size_t end, simdbpe_error *err)
{
    unsigned parts = f->threads;
    if (end / parts < MIN_PART)
        parts = end / MIN_PART > 0 ? (unsigned)(end / MIN_PART) : 1;
    if (parts > f->threads)
        parts = f->threads;
    if (hot_reserve(f, (f->bytes_counted + end) / parts))
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                             "out of memory for the word cache");
    job jobs[64];
    if (parts > 64)
        parts = 64;
    size_t start = 0;
    for (unsigned i = 0; i < parts; i++) {
        size_t stop = end;
        if (i + 1 < parts) {
            size_t target = end / parts * (i + 1);
            stop = next_safe(f, f->buf, end, target > start ? target : start);
        }
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].f = f;
        jobs[i].tab = &f->tabs[i];
        jobs[i].hot = f->hot + ((size_t)i << f->hot_bits);
        jobs[i].hot_bits = f->hot_bits;
        jobs[i].s = f->buf + start;
        jobs[i].n = stop - start;
        jobs[i].bad = SIZE_MAX;
        start = stop;
    }
    simdbpe_pool_run(f->pool, parts, parts, count_task, jobs);
    simdbpe_status st = SIMDBPE_OK;
    uint64_t newlines = 0;
    for (unsigned i = 0; i < parts; i++) {
        free(jobs[i].fixed);
        if (st != SIMDBPE_OK)
            continue;
        if (jobs[i].nomem) {
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                               "out of memory while counting words");
        } else if (jobs[i].bad != SIZE_MAX) {
            size_t at = (size_t)(jobs[i].s - f->buf) + jobs[i].bad;
            uint64_t off = f->stream_off + at;
            uint64_t line = f->stream_line + count_newlines(f->buf, at) + 1;
            st = simdbpe__fail(err, SIMDBPE_ERR_INVALID_UTF8, off, line,
                               "invalid UTF-8 at line %llu, byte offset %llu (byte 0x%02X)",
                               (unsigned long long)line, (unsigned long long)off, f->buf[at]);
        } else {
            newlines += jobs[i].newlines;
        }
    }
    if (st == SIMDBPE_OK) {
        f->stream_line += newlines;
        f->stream_off += end;
        f->bytes_counted += end;
        if (end)
            f->sequences = 1;
    }
    return st;
}

static void report(simdbpe__feeder *f, int force)
{
    if (!f->progress)
        return;
    double now = simdbpe__train_now();
    if (!force && now - f->last_report < PROGRESS_EVERY)
        return;
    f->last_report = now;
    simdbpe_train_progress p;
    memset(&p, 0, sizeof p);
    p.stage = SIMDBPE_TRAIN_COUNTING;
    p.bytes = f->bytes_fed;
    f->progress(&p, f->progress_user);
}

/* Counts what is safe to count now (everything when `final`) and keeps
 * the rest for later. */
static simdbpe_status process(simdbpe__feeder *f, int final, simdbpe_error *err)
{
    size_t end = final ? f->buf_len : last_safe(f, f->buf, f->buf_len);
    if (end > 0) {
        simdbpe_status st = count_region(f, end, err);
        if (st != SIMDBPE_OK)
            return st;
        memmove(f->buf, f->buf + end, f->buf_len - end);
        f->buf_len -= end;
    }
    /* Keep at least as much room for new bytes as is carried over, so a
     * huge word is rescanned only a logarithmic number of times. */
    if (f->buf_len * 2 > f->batch)
        f->batch *= 2;
    report(f, final);
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__feeder_feed(simdbpe__feeder *f, const uint8_t *data, size_t len,
                                    simdbpe_error *err)
{
    while (len > 0) {
        /* The buffer grows by doubling up to a batch: a small corpus
         * does not pay for mapping megabytes it never fills. */
        if (f->buf_cap < f->batch && f->buf_cap - f->buf_len < len) {
            size_t cap = f->buf_cap ? f->buf_cap : MIN_BUF;
            while (cap < f->batch && cap - f->buf_len < len)
                cap *= 2;
            uint8_t *p = realloc(f->buf, cap < f->batch ? cap : f->batch);
            if (!p)
                return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                     "out of memory for the input buffer");
            f->buf = p;
            f->buf_cap = cap < f->batch ? cap : f->batch;
        }
        size_t take = f->batch - f->buf_len;
        if (take > len)
            take = len;
        memcpy(f->buf + f->buf_len, data, take);
        f->buf_len += take;
        f->bytes_fed += take;
        f->stream_open = 1;
        data += take;
        len -= take;
        if (f->buf_len == f->batch) {
            simdbpe_status st = process(f, 0, err);
            if (st != SIMDBPE_OK)
                return st;
        }
    }
    return SIMDBPE_OK;
}

simdbpe_status simdbpe__feeder_end_stream(simdbpe__feeder *f, simdbpe_error *err)
{
    simdbpe_status st = SIMDBPE_OK;
    if (f->buf_len > 0)
        st = process(f, 1, err);
    f->buf_len = 0;
    f->stream_off = 0;
    f->stream_line = 0;
    f->stream_open = 0;
    return st;
}

simdbpe_status simdbpe__feeder_collect(simdbpe__feeder *f, simdbpe_error *err)
{
    size_t slots = (size_t)1 << f->hot_bits;
    for (unsigned i = 0; f->hot && i < f->threads; i++)
        if (simdbpe__hot_flush(f->hot + i * slots, slots, &f->tabs[i]))
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                 "out of memory while merging word counts");
    for (unsigned i = 1; i < f->threads; i++) {
        if (simdbpe__wordtab_merge(&f->tabs[0], &f->tabs[i]))
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0,
                                 "out of memory while merging word counts");
        simdbpe__wordtab_free(&f->tabs[i]);
    }
    return SIMDBPE_OK;
}
