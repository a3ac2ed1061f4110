/*
 * fuzz_reader.c - property: the dataset engine's readers (src/dataset/
 * reader_source.c: plain, gzip and zstd streams; reader_docs.c: the text,
 * separator, lines and JSON Lines framing into batches, long documents cut
 * into pieces) deliver exactly the documents of the file, whatever the
 * batch size and read sizes.
 *
 * The fast target for what fuzz_dataset checks through the whole engine:
 * no encoder is made, no output written, one input file (or two equal
 * ones) rewritten in a folder made once (on /dev/shm when there is one).
 *
 * Input: byte 0 = options: bits 0-1 the framing (text, lines, jsonl, text
 * with a separator, bits 5-6 picking it), bits 2-3 the batch size (16, 64,
 * 256 or 1024 bytes: documents longer are cut), bit 4 two files (the same
 * bytes twice), bit 7 small reads; the rest is the file. Checked:
 *   - the stream: read 64 KB at a time, or in small, changing read sizes,
 *     it gives the bytes of decoding the file here with zlib and libzstd,
 *     and fails where they do (a plain file: its bytes, no failure);
 *   - the framing: the segments of simdbpe__reader_fill(), pieces joined, are the
 *     documents of those bytes by the rules of reader_docs.h, computed
 *     here independently: file index, offset, line (text: of each piece),
 *     the piece flags and offsets; after a stream failure, the units that
 *     ended before it, then one fatal failure whose message ends with the
 *     number of bytes decoded;
 *   - the cuts: a document (valid UTF-8) cut into pieces encodes, piece
 *     after piece, to the ids of encoding it whole (simdbpe_cut_find's
 *     promise).
 */
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "fuzz.h"

#include "reader_docs.h"
#include "reader_source.h"

/* A failing stream gives every byte decoded before its failure, and data
 * compressed twice none, whatever the read sizes (finding 11, fixed). */

static char dir[64], paths[2][96];

/* At exit: the folder and its files go (on /dev/shm they are memory). */
FUZZ_NO_COVERAGE
static void remove_dir(void)
{
    unlink(paths[0]);
    unlink(paths[1]);
    rmdir(dir);
}

FUZZ_NO_COVERAGE
static void setup(void)
{
    if (dir[0])
        return;
    fuzz_make_dir(dir, "reader");
    for (int i = 0; i < 2; i++)
        snprintf(paths[i], sizeof paths[i], "%s/in%d", dir, i);
    atexit(remove_dir);
}

/* Growing byte buffer. */
typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

FUZZ_NO_COVERAGE
static void put(bytes *b, const void *s, size_t n)
{
    if (b->len + n > b->cap || !b->p) { /* never NULL after a put */
        b->cap = 2 * (b->len + n) + 64;
        b->p = realloc(b->p, b->cap);
        FUZZ_CHECK(b->p != NULL, "out of memory");
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* A whole stream read `cap(i)` bytes at the i-th read: its bytes, and the
 * failure message ("" when it ended well). */
typedef struct stream {
    bytes data;
    char msg[400];
    int twice; /* (reference) it holds compressed data */
} stream;

FUZZ_NO_COVERAGE
static void read_stream(const char *path, int small, stream *out)
{
    static const size_t caps[] = {1, 7, 3, 64, 2, 4096, 5, 1};
    static uint8_t buf[1 << 16];
    source *s;
    FUZZ_CHECK(simdbpe__source_open(&s, path) == 0, "cannot open %s", path);
    out->data.len = 0;
    put(&out->data, NULL, 0);
    out->msg[0] = '\0';
    for (size_t i = 0;; i++) {
        size_t cap = small ? caps[i % (sizeof caps / sizeof *caps)] : sizeof buf;
        ssize_t n = simdbpe__source_read(s, buf, cap, out->msg, sizeof out->msg);
        FUZZ_CHECK(n >= -1 && n <= (ssize_t)cap, "simdbpe__source_read gave %zd for %zu", n, cap);
        if (n < 0) {
            FUZZ_CHECK(out->msg[0] != '\0', "a failed read without a message");
            break;
        }
        if (n == 0)
            break;
        put(&out->data, buf, (size_t)n);
    }
    simdbpe__source_close(s);
}

/*
 * The stream by reader_source.h's rules, decoded here with zlib and libzstd
 * fed one input byte at a time with ample room for output, so that every
 * byte decodable before a failure comes out: gzip members one after
 * another (after a member the file ends or 1F starts the next), zstd
 * frames and skippable frames, anything else as is; a stream that fails
 * gets a non-empty msg (not the reader's words). Decoded data that begins
 * with a gzip or zstd magic number is a failure with no bytes.
 */
FUZZ_NO_COVERAGE
static void decode_gzip(const uint8_t *s, size_t n, stream *out)
{
    static uint8_t buf[1 << 16];
    z_stream z;
    memset(&z, 0, sizeof z);
    FUZZ_CHECK(inflateInit2(&z, 15 + 16) == Z_OK, "inflateInit2");
    int in_member = 1;
    for (size_t i = 0; i < n && !out->msg[0]; i++) {
        if (!in_member) {
            if (s[i] != 0x1F) {
                strcpy(out->msg, "bytes after a member");
                break;
            }
            inflateReset(&z);
            in_member = 1;
        }
        z.next_in = (uint8_t *)s + i;
        z.avail_in = 1;
        int r;
        do {
            z.next_out = buf;
            z.avail_out = sizeof buf;
            r = inflate(&z, Z_NO_FLUSH);
            put(&out->data, buf, sizeof buf - z.avail_out);
        } while (r == Z_OK && z.avail_out == 0);
        if (r == Z_STREAM_END)
            in_member = 0;
        else if (r != Z_OK && r != Z_BUF_ERROR)
            strcpy(out->msg, "corrupt");
        FUZZ_CHECK(z.avail_in == 0 || out->msg[0] || r == Z_STREAM_END, "inflate kept input");
        if (r == Z_STREAM_END && z.avail_in)
            i--; /* (a member cannot end before its last byte: never) */
    }
    if (!out->msg[0] && in_member)
        strcpy(out->msg, "truncated");
    inflateEnd(&z);
}

FUZZ_NO_COVERAGE
static void decode_zstd(const uint8_t *s, size_t n, stream *out)
{
    static uint8_t buf[1 << 16];
    ZSTD_DStream *zd = ZSTD_createDStream();
    FUZZ_CHECK(zd && !ZSTD_isError(ZSTD_initDStream(zd)), "ZSTD_createDStream");
    size_t hint = 1;
    for (size_t i = 0; i < n && !out->msg[0]; i++) {
        ZSTD_inBuffer in = {s + i, 1, 0};
        do {
            ZSTD_outBuffer o = {buf, sizeof buf, 0};
            hint = ZSTD_decompressStream(zd, &o, &in);
            if (ZSTD_isError(hint)) {
                strcpy(out->msg, "corrupt");
                break;
            }
            put(&out->data, buf, o.pos);
            if (o.pos < o.size && in.pos == in.size)
                break;
        } while (1);
    }
    if (!out->msg[0] && hint != 0)
        strcpy(out->msg, "truncated");
    ZSTD_freeDStream(zd);
}

FUZZ_NO_COVERAGE
static int gzip_magic(const uint8_t *s, size_t n)
{
    return n >= 2 && s[0] == 0x1F && s[1] == 0x8B;
}

FUZZ_NO_COVERAGE
static int zstd_magic(const uint8_t *s, size_t n, int skippable)
{
    return n >= 4 && ((s[0] == 0x28 && s[1] == 0xB5 && s[2] == 0x2F && s[3] == 0xFD) ||
                      (skippable && (s[0] & 0xF0) == 0x50 && s[1] == 0x2A && s[2] == 0x4D &&
                       s[3] == 0x18));
}

FUZZ_NO_COVERAGE
static void decode_reference(const uint8_t *s, size_t n, stream *out)
{
    out->data.len = 0;
    put(&out->data, NULL, 0);
    out->msg[0] = '\0';
    out->twice = 0;
    if (gzip_magic(s, n))
        decode_gzip(s, n, out);
    else if (zstd_magic(s, n, 1))
        decode_zstd(s, n, out);
    else {
        put(&out->data, s, n);
        return;
    }
    if (gzip_magic(out->data.p, out->data.len) || zstd_magic(out->data.p, out->data.len, 0)) {
        strcpy(out->msg, "compressed twice");
        out->twice = 1;
    }
}

/* A read of the stream agrees with the reference: the same bytes and
 * failure. */
FUZZ_NO_COVERAGE
static void check_read(const stream *got, const stream *want, const char *how)
{
    int failed = got->msg[0] != '\0', want_failed = want->msg[0] != '\0';
    size_t want_len = want->twice ? 0 : want->data.len;
    FUZZ_CHECK(failed == want_failed && got->data.len == want_len &&
                   memcmp(got->data.p, want->data.p, want_len) == 0,
               "%s gave %zu bytes (%s), the stream has %zu (%s)", how, got->data.len, got->msg,
               want_len, want->msg);
}

/* A document as the reference frames it, or as the reader's pieces make
 * it: where it starts in the decoded file, its line, its bytes. */
typedef struct doc {
    uint32_t file;
    uint64_t off, line;
    size_t at, len; /* its bytes: text.p[at .. at + len) */
} doc;

typedef struct docs {
    doc *d;
    size_t n, cap;
    bytes text;
    int failed[2];     /* the file's stream failed after its documents */
    size_t fail_at[2]; /* the decoded bytes it delivered (reader) */
} docs;

FUZZ_NO_COVERAGE
static doc *add_doc(docs *ds, uint32_t file, uint64_t off, uint64_t line)
{
    if (ds->n == ds->cap) {
        ds->cap = 2 * ds->cap + 16;
        ds->d = realloc(ds->d, ds->cap * sizeof *ds->d);
        FUZZ_CHECK(ds->d != NULL, "out of memory");
    }
    doc *d = &ds->d[ds->n++];
    *d = (doc){file, off, line, ds->text.len, 0};
    return d;
}

/* line_at's place: asked in increasing offsets of one text at a time, it
 * counts on from its last answer (from the start, each call took a
 * quarter of an input's time on texts of many lines). Reset for every
 * input: the texts' buffers are reused. */
static const uint8_t *line_text;
static size_t line_off;
static uint64_t line_no;

FUZZ_NO_COVERAGE
static void line_reset(void)
{
    line_text = NULL;
}

FUZZ_NO_COVERAGE
static uint64_t line_at(const uint8_t *s, size_t off)
{
    const uint8_t *text = line_text;
    size_t at = line_off;
    uint64_t line = line_no;
    if (s != text || off < at) {
        text = s;
        at = 0;
        line = 1;
    }
    for (; at < off; at++)
        line += s[at] == '\n';
    line_text = text;
    line_off = at;
    line_no = line;
    return line;
}

FUZZ_NO_COVERAGE
static int blank(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

FUZZ_NO_COVERAGE
static const uint8_t *find(const uint8_t *s, size_t n, const uint8_t *pat, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, pat, m) == 0)
            return s + i;
    return NULL;
}

/* reader_docs.h's rules on the decoded bytes s[0..n) of file `file`; with
 * `failed`, only the units that end before the failure. */
FUZZ_NO_COVERAGE
static void frame(docs *ds, uint32_t file, const uint8_t *s, size_t n, simdbpe_input_format mode,
                  const uint8_t *sep, size_t sep_len, int failed)
{
    if (mode == SIMDBPE_INPUT_TEXT && !sep) {
        if (!failed) {
            add_doc(ds, file, 0, 1)->len = n;
            put(&ds->text, s, n);
        }
        ds->failed[file] = failed;
        return;
    }
    size_t a = 0;
    for (;;) {
        const uint8_t *hit = sep ? find(s + a, n - a, sep, sep_len)
                                 : memchr(s + a, '\n', n - a);
        size_t end = hit ? (size_t)(hit - s) : n, next = hit ? end + (sep ? sep_len : 1) : n;
        if (!hit && (failed || a == n))
            break;
        if (mode == SIMDBPE_INPUT_LINES && hit && end > a && s[end - 1] == '\r')
            end--;
        if (!(mode == SIMDBPE_INPUT_JSONL && blank(s + a, end - a))) {
            add_doc(ds, file, a, line_at(s, a))->len = end - a;
            put(&ds->text, s + a, end - a);
        }
        if (!hit)
            break;
        a = next;
    }
    ds->failed[file] = failed;
}

/* The ids of encoding text[0..len), appended to *out; 0 if it does not
 * encode (invalid UTF-8). */
FUZZ_NO_COVERAGE
static int encode_into(const uint8_t *text, size_t len, const simdbpe_encode_options *opts,
                       bytes *out)
{
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    if (simdbpe_encode(fuzz_encoder(), (const char *)text, len, opts, &ids, &n, &err) !=
        SIMDBPE_OK)
        return 0;
    put(out, ids, n * sizeof *ids);
    return 1;
}

/* A document the reader cut (with the job's options): its pieces encode
 * to the whole's ids. */
FUZZ_NO_COVERAGE
static void check_cuts(const job *j, const uint8_t *text, size_t len, const size_t *cut,
                       size_t n_cuts)
{
    static bytes whole, pieces;
    whole.len = pieces.len = 0;
    if (!encode_into(text, len, &j->enc, &whole))
        return;
    size_t a = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t b = i < n_cuts ? cut[i] : len;
        FUZZ_CHECK(encode_into(text + a, b - a, &j->enc, &pieces),
                   "piece [%zu, %zu) does not encode", a, b);
        a = b;
    }
    FUZZ_CHECK(whole.len == pieces.len && memcmp(whole.p, pieces.p, whole.len) == 0,
               "a document of %zu bytes cut in %zu pieces encodes to other ids", len,
               n_cuts + 1);
}

/* Reads the files (each decoded as `st`) with the reader into `ds`,
 * checking each segment. */
FUZZ_NO_COVERAGE
static void read_docs(const job *j, const stream *st, docs *ds)
{
    reader *r;
    FUZZ_CHECK(simdbpe__reader_new(&r, j) == 0, "simdbpe__reader_new");
    batch b = {0};
    doc *open = NULL; /* the document whose pieces are coming */
    static bytes cuts; /* size_t offsets in the open document */
    int rc;
    while ((rc = simdbpe__reader_fill(r, &b)) == 1) {
        FUZZ_CHECK(b.nsegs > 0, "a batch without segments");
        for (size_t i = 0; i < b.nsegs; i++) {
            const seg *s = &b.segs[i];
            FUZZ_CHECK(s->file < j->n_files, "segment of file %u", s->file);
            if (s->kind == SEG_FAIL) {
                FUZZ_CHECK(s->fatal && s->failed && s->msg >= 1 && s->msg <= b.nmsgs &&
                               s->err_status == SIMDBPE_ERR_IO,
                           "a stream failure that is not a fatal I/O error");
                FUZZ_CHECK(st->msg[0] != '\0', "a failure in file %u, whose stream is whole",
                           s->file);
                const char *m = b.msgs[s->msg - 1], *after = strrchr(m, '(');
                size_t n_at = 0, want_at = st->twice ? 0 : st->data.len;
                char end[2] = "";
                FUZZ_CHECK(after &&
                               sscanf(after, "(after %zu bytes of decompressed data%1[)]", &n_at,
                                      end) == 2 && after[strlen(after) - 1] == ')',
                           "failure message \"%s\"", m);
                FUZZ_CHECK(n_at == want_at, "failure after %zu decoded bytes, the stream has %zu",
                           n_at, want_at);
                ds->fail_at[s->file] = n_at;
                if (open) { /* a document cut short is dropped */
                    ds->text.len = open->at;
                    ds->n--;
                    open = NULL;
                }
                ds->failed[s->file] = 1;
                continue;
            }
            FUZZ_CHECK(s->kind == (j->mode == SIMDBPE_INPUT_JSONL ? SEG_JSON : SEG_TEXT),
                       "segment kind %u", s->kind);
            FUZZ_CHECK(s->off + s->len <= b.len, "segment past the batch");
            FUZZ_CHECK(!ds->failed[s->file], "a segment after file %u failed", s->file);
            if (s->begin) {
                FUZZ_CHECK(!open, "a document begins before the last one ended");
                FUZZ_CHECK(s->doc_off == 0, "first piece at %llu", (unsigned long long)s->doc_off);
                open = add_doc(ds, s->file, s->file_off, s->line);
                cuts.len = 0;
            } else {
                FUZZ_CHECK(open && open->file == s->file, "a piece without its document");
                FUZZ_CHECK(s->doc_off == open->len, "piece at %llu of a document, %zu bytes "
                           "before it", (unsigned long long)s->doc_off, open->len);
                FUZZ_CHECK(j->mode != SIMDBPE_INPUT_JSONL, "a JSON record cut");
                put(&cuts, &open->len, sizeof open->len);
            }
            FUZZ_CHECK(s->file_off == open->off + s->doc_off,
                       "piece at file offset %llu, its document at %llu + %llu",
                       (unsigned long long)s->file_off, (unsigned long long)open->off,
                       (unsigned long long)s->doc_off);
            uint64_t want_line =
                line_at(st->data.p, j->mode == SIMDBPE_INPUT_TEXT ? s->file_off : open->off);
            FUZZ_CHECK(s->line == want_line, "piece at %llu: line %llu, expected %llu",
                       (unsigned long long)s->file_off, (unsigned long long)s->line,
                       (unsigned long long)want_line);
            put(&ds->text, b.buf + s->off, s->len);
            open->len += s->len;
            if (s->end) {
                if (cuts.len)
                    check_cuts(j, ds->text.p + open->at, open->len, (const size_t *)cuts.p,
                               cuts.len / sizeof(size_t));
                open = NULL;
            }
        }
        for (size_t i = 0; i < b.nmsgs; i++)
            free(b.msgs[i]);
        b.nmsgs = 0;
    }
    FUZZ_CHECK(rc == 0, "simdbpe__reader_fill: out of memory");
    FUZZ_CHECK(!open, "the input ended inside a document");
    free(b.buf);
    free(b.segs);
    free(b.ids);
    free(b.msgs);
    simdbpe__reader_free(r);
}

FUZZ_NO_COVERAGE
static void docs_equal(const docs *got, const docs *want, unsigned n_files)
{
    for (unsigned f = 0; f < n_files; f++)
        FUZZ_CHECK(got->failed[f] == want->failed[f], "file %u: failed %d, expected %d", f,
                   got->failed[f], want->failed[f]);
    FUZZ_CHECK(got->n == want->n, "%zu documents, expected %zu", got->n, want->n);
    for (size_t i = 0; i < got->n; i++) {
        const doc *g = &got->d[i], *w = &want->d[i];
        FUZZ_CHECK(g->file == w->file && g->off == w->off && g->line == w->line,
                   "document %zu: file %u offset %llu line %llu, expected %u %llu %llu", i,
                   g->file, (unsigned long long)g->off, (unsigned long long)g->line, w->file,
                   (unsigned long long)w->off, (unsigned long long)w->line);
        FUZZ_CHECK(g->len == w->len && memcmp(got->text.p + g->at, want->text.p + w->at, g->len) == 0,
                   "document %zu: %zu bytes, expected %zu, or other bytes", i, g->len, w->len);
    }
}

FUZZ_NO_COVERAGE
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const seps[4] = {"\n\n", "<|endoftext|>", "\0", "ab"};
    static const size_t sep_lens[4] = {2, 13, 1, 2};
    static const simdbpe_input_format modes[4] = {SIMDBPE_INPUT_TEXT, SIMDBPE_INPUT_LINES,
                                                  SIMDBPE_INPUT_JSONL, SIMDBPE_INPUT_TEXT};
    if (size < 1)
        return 0;
    setup();
    line_reset();
    unsigned n_files = data[0] & 0x10 ? 2 : 1;
    int fd = open(paths[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_CHECK(fd >= 0 && write(fd, data + 1, size - 1) == (ssize_t)(size - 1) && close(fd) == 0,
               "cannot write %s", paths[0]);
    unlink(paths[1]);
    if (n_files == 2)
        FUZZ_CHECK(link(paths[0], paths[1]) == 0, "cannot link %s", paths[1]);

    job j;
    memset(&j, 0, sizeof j);
    j.model = fuzz_gpt2();
    j.mode = modes[data[0] & 3];
    if ((data[0] & 3) == 3) {
        j.sep = (const unsigned char *)seps[data[0] >> 5 & 3];
        j.sep_len = sep_lens[data[0] >> 5 & 3];
    }
    j.batch_bytes = (size_t)16 << (2 * (data[0] >> 2 & 3));
    char *files[2] = {paths[0], paths[1]};
    j.files = files;
    j.n_files = n_files;
    j.threads = 1;

    /* The stream, decoded here and read in 64 KB or small reads (bit 7:
     * one source more per input costs as much as the reader's); both
     * files are the same bytes. */
    static stream truth, read;
    decode_reference(data + 1, size - 1, &truth);
    int small = data[0] >> 7;
    read_stream(paths[0], small, &read);
    check_read(&read, &truth, small ? "small reads" : "64 KB reads");

    static docs want, got;
    want.n = got.n = want.text.len = got.text.len = 0;
    put(&want.text, NULL, 0);
    put(&got.text, NULL, 0);
    memset(want.failed, 0, sizeof want.failed);
    memset(got.failed, 0, sizeof got.failed);
    read_docs(&j, &truth, &got);
    for (unsigned f = 0; f < n_files; f++) {
        if (got.failed[f]) {
            frame(&want, f, truth.data.p, got.fail_at[f], j.mode, j.sep, j.sep_len, 1);
            continue;
        }
        FUZZ_CHECK(!truth.msg[0], "the reader read file %u to its end, the stream fails (%s)", f,
                   truth.msg);
        frame(&want, f, truth.data.p, truth.data.len, j.mode, j.sep, j.sep_len, 0);
    }
    docs_equal(&got, &want, n_files);
    if (n_files == 2)
        unlink(paths[1]);
    return 0;
}
