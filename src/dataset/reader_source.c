/*
 * reader_source.c - plain, gzip (zlib) and zstd (libzstd) input streams.
 *
 * All three read the file through one raw buffer `in`. The first bytes are
 * read before anything else to pick the format by its magic number; for a
 * plain file they are simply the first bytes handed out.
 *
 * End-of-stream rules (what makes a compressed file "truncated"):
 *   gzip: the raw input ends before inflate() reports Z_STREAM_END for the
 *         current member; after a member, the next bytes must start another
 *         member (1F 8B) or be the end of the file.
 *   zstd: the raw input ends while ZSTD_decompressStream() still reports an
 *         unfinished frame (a non-zero return).
 */
#include "reader_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* The raw buffer: 256 KB, or a small regular file's size (a run over many
 * small files, or a fuzzer's inputs, would allocate 256 KB for each). */
#define RAW_BUF (1u << 18)
#define RAW_BUF_MIN (1u << 12)

struct source {
    int fd;
    source_kind kind;
    unsigned char *in;
    size_t in_cap, in_len, in_pos;
    int in_eof;
    uint64_t raw_pos;  /* raw bytes handed to the decoder (or out, if plain) */
    z_stream z;
    int z_ready;
    int z_member_done; /* between two gzip members */
    ZSTD_DStream *zd;
    size_t zstd_hint;  /* last return of ZSTD_decompressStream: 0 = frame done;
                          set to 1 at open (no frame decoded yet) */
    int zstd_held;     /* the last call filled the output: flush before input */
    int ended;         /* the stream's end was reached */
    int failed;        /* it failed: `why`, reported once its bytes are out */
    char why[200];
    unsigned char head[4]; /* the first decompressed bytes (look_at_head) */
    size_t head_len, head_pos; /* how many; how many went out */
    int head_done;     /* they were looked at */
};

/* Reads until `in` holds at least `want` bytes or the file ends. */
static int fill_at_least(source *s, size_t want)
{
    while (s->in_len < want && !s->in_eof) {
        ssize_t n = read(s->fd, s->in + s->in_len, s->in_cap - s->in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            s->in_eof = 1;
        s->in_len += (size_t)n;
    }
    return 0;
}

/* Refills `in` if it is empty. Returns 0, or an errno value. */
static int refill(source *s)
{
    if (s->in_pos < s->in_len || s->in_eof)
        return 0;
    s->in_pos = s->in_len = 0;
    return fill_at_least(s, 1);
}

int simdbpe__source_open(source **out, const char *path)
{
    *out = NULL;
    source *s = calloc(1, sizeof *s);
    if (!s)
        return ENOMEM;
    s->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
        int e = errno;
        free(s);
        return e;
    }
    struct stat st;
    s->in_cap = RAW_BUF;
    if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < RAW_BUF)
        s->in_cap = (size_t)st.st_size < RAW_BUF_MIN ? RAW_BUF_MIN : (size_t)st.st_size + 1;
    s->in = malloc(s->in_cap);
    int e = s->in ? fill_at_least(s, 4) : ENOMEM;
    if (e) {
        simdbpe__source_close(s);
        return e;
    }
    const unsigned char *m = s->in;
    if (s->in_len >= 2 && m[0] == 0x1F && m[1] == 0x8B) {
        s->kind = SOURCE_GZIP;
        /* 15 + 16: a gzip wrapper with the largest window. */
        if (inflateInit2(&s->z, 15 + 16) != Z_OK) {
            simdbpe__source_close(s);
            return ENOMEM;
        }
        s->z_ready = 1;
    } else if (s->in_len >= 4 && ((m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD) ||
                                  /* a skippable frame, 0x184D2A50-5F, may come first */
                                  ((m[0] & 0xF0) == 0x50 && m[1] == 0x2A && m[2] == 0x4D &&
                                   m[3] == 0x18))) {
        s->kind = SOURCE_ZSTD;
        s->zstd_hint = 1;
        s->zd = ZSTD_createDStream();
        if (!s->zd || ZSTD_isError(ZSTD_initDStream(s->zd))) {
            simdbpe__source_close(s);
            return ENOMEM;
        }
    }
    *out = s;
    return 0;
}

/* Records the stream's failure (the first one). The read that met it still
 * hands out the bytes it decoded; the next one reports it. */
static void fail(source *s, const char *fmt, const char *detail)
{
    if (!s->failed)
        snprintf(s->why, sizeof s->why, fmt, detail);
    s->failed = 1;
}

static size_t read_plain(source *s, unsigned char *buf, size_t cap)
{
    if (s->in_pos < s->in_len) {
        size_t n = s->in_len - s->in_pos < cap ? s->in_len - s->in_pos : cap;
        memcpy(buf, s->in + s->in_pos, n);
        s->in_pos += n;
        s->raw_pos += n;
        return n;
    }
    while (!s->in_eof) {
        ssize_t n = read(s->fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fail(s, "read error: %s", strerror(errno));
            return 0;
        }
        if (n == 0)
            s->in_eof = 1;
        s->raw_pos += (uint64_t)n;
        return (size_t)n;
    }
    s->ended = 1;
    return 0;
}

/* After a gzip member: the file must end or another member must follow. */
static void gzip_next_member(source *s)
{
    int e = refill(s);
    if (e) {
        fail(s, "read error: %s", strerror(e));
    } else if (s->in_pos == s->in_len && s->in_eof) {
        s->ended = 1;
    } else if (s->in[s->in_pos] != 0x1F) {
        fail(s, "corrupt gzip data: %s", "unexpected bytes after the end of the compressed stream");
    } else {
        inflateReset(&s->z);
        s->z_member_done = 0;
    }
}

/* Inflates into buf until some output comes, the stream ends or fails. A
 * member is truncated when the file has ended and inflate, called again,
 * gives nothing more: it may hold output it had no room for before. */
static size_t read_gzip(source *s, unsigned char *buf, size_t cap)
{
    uInt room = (uInt)(cap > (1u << 30) ? (1u << 30) : cap);
    s->z.next_out = buf;
    s->z.avail_out = room;
    while (s->z.avail_out == room && !s->failed && !s->ended) {
        if (s->z_member_done) {
            gzip_next_member(s);
            continue;
        }
        int e = refill(s);
        if (e) {
            fail(s, "read error: %s", strerror(e));
            break;
        }
        int no_input = s->in_pos == s->in_len; /* the file has ended (refill) */
        s->z.next_in = s->in + s->in_pos;
        s->z.avail_in = (uInt)(s->in_len - s->in_pos);
        int r = inflate(&s->z, Z_NO_FLUSH);
        size_t used = (s->in_len - s->in_pos) - s->z.avail_in;
        s->in_pos += used;
        s->raw_pos += used;
        if (r == Z_STREAM_END)
            s->z_member_done = 1;
        else if (r == Z_NEED_DICT || r == Z_DATA_ERROR)
            fail(s, "corrupt gzip data: %s", s->z.msg ? s->z.msg : "bad data");
        else if (r == Z_MEM_ERROR)
            fail(s, "gzip: %s", "out of memory");
        else if (no_input && s->z.avail_out == room)
            fail(s, "truncated gzip stream: %s", "the file ends inside a compressed member");
        /* else Z_OK / Z_BUF_ERROR: more input or output space needed */
    }
    return room - s->z.avail_out;
}

/*
 * libzstd reports an error without saying what the failing call wrote, so
 * a call must never both hand out data and meet an error: the output a
 * call could not take is flushed by a call without input, and input goes
 * in no more than one unit at a time (a block's data, a block header, a
 * frame's checksum), by ZSTD_decompressStream's hint.
 */
static size_t read_zstd(source *s, unsigned char *buf, size_t cap)
{
    ZSTD_outBuffer out = {buf, cap, 0};
    while (out.pos == 0 && !s->failed && !s->ended) {
        int e = refill(s);
        if (e) {
            fail(s, "read error: %s", strerror(e));
            break;
        }
        size_t avail = s->in_len - s->in_pos;
        int no_input = avail == 0; /* the file has ended (refill) */
        if (no_input && s->zstd_hint == 0 && !s->zstd_held) { /* all decoded and out */
            s->ended = 1;
            break;
        }
        /* A hint for a block's data adds the next block's 3-byte header:
         * the data goes alone, so that a bad header or checksum after it
         * fails a call of its own; and a unit's last byte goes alone, since
         * the call that completes a block or frame may fail after writing
         * (a raw block's bytes go out as they come, a frame's size is
         * checked at its end), as when zstd is fed a byte at a time.
         * Between frames the hint is 0: the next frame's magic number and
         * header descriptor (its hints say the rest). */
        size_t hint = s->zstd_hint ? s->zstd_hint : 5;
        size_t unit = hint > 3 ? hint - 3 : hint;
        size_t want = s->zstd_held ? 0 : unit > 1 ? unit - 1 : unit;
        ZSTD_inBuffer in = {s->in + s->in_pos, avail < want ? avail : want, 0};
        size_t r = ZSTD_decompressStream(s->zd, &out, &in);
        s->in_pos += in.pos;
        s->raw_pos += in.pos;
        if (ZSTD_isError(r)) {
            fail(s, "corrupt zstd data: %s", ZSTD_getErrorName(r));
            break;
        }
        int held = s->zstd_held;
        s->zstd_held = out.pos == out.size; /* it may hold more than there was room for */
        s->zstd_hint = r;
        /* No input left and nothing held: if the frame is unfinished, the
         * file ended inside it. */
        if (no_input && out.pos == 0 && !held && r != 0)
            fail(s, "truncated zstd stream: %s", "the file ends inside a frame");
    }
    return out.pos;
}

/* Whether decompressed data begins like gzip or zstd data: compressed
 * twice (a .zst of a .gz), which would otherwise be read as text. */
static const char *inner_format(const unsigned char *b, size_t n)
{
    if (n >= 2 && b[0] == 0x1F && b[1] == 0x8B)
        return "gzip";
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD)
        return "zstd";
    return NULL;
}

static size_t decode(source *s, unsigned char *buf, size_t cap)
{
    if (s->failed || s->ended)
        return 0;
    switch (s->kind) {
    case SOURCE_GZIP: return read_gzip(s, buf, cap);
    case SOURCE_ZSTD: return read_zstd(s, buf, cap);
    default: return read_plain(s, buf, cap);
    }
}

/* Decompresses the first 4 bytes into `head` (fewer if the stream ends or
 * fails first) and looks at them before any goes out, however the caller's
 * reads are sized: data compressed twice is a failure, and none of it is
 * handed out. */
static void look_at_head(source *s)
{
    while (s->head_len < 4 && !s->failed && !s->ended)
        s->head_len += decode(s, s->head + s->head_len, 4 - s->head_len);
    s->head_done = 1;
    const char *inner = inner_format(s->head, s->head_len);
    if (inner) {
        snprintf(s->why, sizeof s->why,
                 "%s data holds %s data (compressed twice?): decompress the outer layer first",
                 s->kind == SOURCE_GZIP ? "gzip" : "zstd", inner);
        s->failed = 1;
        s->head_len = 0;
    }
}

ssize_t simdbpe__source_read(source *s, void *buf, size_t cap, char *msg, size_t msg_cap)
{
    if (cap == 0)
        return 0;
    if (s->kind != SOURCE_PLAIN && !s->head_done)
        look_at_head(s);
    size_t n;
    if (s->head_pos < s->head_len) {
        n = s->head_len - s->head_pos < cap ? s->head_len - s->head_pos : cap;
        memcpy(buf, s->head + s->head_pos, n);
        s->head_pos += n;
    } else {
        n = decode(s, buf, cap);
    }
    if (n > 0)
        return (ssize_t)n;
    if (s->failed) {
        snprintf(msg, msg_cap, "%s", s->why);
        return -1;
    }
    return 0;
}

source_kind simdbpe__source_kind_of(const source *s)
{
    return s->kind;
}

uint64_t simdbpe__source_raw_pos(const source *s)
{
    return s->raw_pos;
}

void simdbpe__source_close(source *s)
{
    if (!s)
        return;
    if (s->z_ready)
        inflateEnd(&s->z);
    ZSTD_freeDStream(s->zd);
    if (s->fd > STDIN_FILENO)
        close(s->fd);
    free(s->in);
    free(s);
}
