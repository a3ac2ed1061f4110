/*
 * fuzz_dataset.c - property: the library's dataset engine (simdbpe_dataset.h:
 * stream readers for plain, gzip and zstd input, the text / lines / JSON Lines
 * framing, the pipeline, the u32 writer) never crashes on any file, and what
 * it writes is what the encoder gives.
 *
 * Input: byte 0 picks the input format (text, lines, jsonl) and the batch
 * size (tiny batches cut documents into parts at the cut points); the rest is
 * the input file, written to a temporary folder. Checked, for every input:
 *   - the status is OK or one a bad input may get (invalid UTF-8, a malformed
 *     record, a damaged stream), with a message;
 *   - after a failure no output file exists; after success the output holds
 *     4 bytes for each of the result's tokens.
 * And for an uncompressed input in text or lines mode, against simdbpe_encode
 * of each document (the whole file; each line without its \n or \r\n):
 *   - success exactly when every document encodes, and then the same ids;
 *   - otherwise SIMDBPE_ERR_INVALID_UTF8 with the first bad document's byte
 *     offset in the file (text mode) or its line (lines mode).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#include "simdbpe_dataset.h"

static char dir[64], in_path[96], out_path[96];

/* The folder of the input and output files (fuzz_make_dir), made once:
 * the engine opens, locks, writes, renames and removes files for every
 * input. */
static void remove_dir(void)
{
    unlink(in_path);
    unlink(out_path);
    rmdir(dir);
}

static void setup(void)
{
    if (dir[0])
        return;
    fuzz_make_dir(dir, "dataset");
    snprintf(in_path, sizeof in_path, "%s/in", dir);
    snprintf(out_path, sizeof out_path, "%s/out.u32", dir);
    atexit(remove_dir); /* the folder and its files go at exit */
}

static int compressed(const uint8_t *s, size_t n)
{
    return (n >= 2 && s[0] == 0x1F && s[1] == 0x8B) ||
           (n >= 4 && ((s[0] == 0x28 && s[1] == 0xB5 && s[2] == 0x2F && s[3] == 0xFD) ||
                       ((s[0] & 0xF0) == 0x50 && s[1] == 0x2A && s[2] == 0x4D && s[3] == 0x18)));
}

/* The expected ids (appended to *ids) or the first failure of the documents
 * of s[0..n) in text (lines 0) or lines mode. */
typedef struct expect {
    uint32_t *ids;
    size_t n, cap;
    simdbpe_status st;
    uint64_t line, byte_offset;
} expect;

static void expect_doc(expect *x, const uint8_t *doc, size_t len, uint64_t line, size_t at)
{
    if (x->st != SIMDBPE_OK)
        return;
    const uint32_t *ids;
    size_t got;
    simdbpe_error err;
    simdbpe_status st =
        simdbpe_encode(fuzz_encoder(), (const char *)doc, len, NULL, &ids, &got, &err);
    if (st != SIMDBPE_OK) {
        x->st = st;
        x->line = line;
        x->byte_offset = at + err.byte_offset;
        return;
    }
    if (x->n + got > x->cap) {
        x->cap = 2 * (x->n + got) + 64;
        x->ids = realloc(x->ids, x->cap * sizeof *x->ids);
        FUZZ_CHECK(x->ids != NULL, "out of memory");
    }
    if (got) /* (ids may be NULL then) */
        memcpy(x->ids + x->n, ids, got * sizeof *ids);
    x->n += got;
}

static void expected(const uint8_t *s, size_t n, int lines, expect *x)
{
    if (!lines) {
        expect_doc(x, s, n, 1, 0);
        return;
    }
    uint64_t line = 1;
    for (size_t a = 0; a < n; line++) {
        const uint8_t *nl = memchr(s + a, '\n', n - a);
        size_t end = nl ? (size_t)(nl - s) : n, e = end;
        if (nl && e > a && s[e - 1] == '\r')
            e--;
        expect_doc(x, s + a, e - a, line, a);
        a = end + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    setup();
    static const simdbpe_input_format formats[3] = {SIMDBPE_INPUT_TEXT, SIMDBPE_INPUT_LINES,
                                                    SIMDBPE_INPUT_JSONL};
    simdbpe_input_format fmt = formats[data[0] % 3];
    const uint8_t *s = data + 1;
    size_t n = size - 1;
    FILE *f = fopen(in_path, "wb");
    FUZZ_CHECK(f && fwrite(s, 1, n, f) == n && fclose(f) == 0, "cannot write %s", in_path);

    simdbpe_dataset_options o;
    simdbpe_dataset_options_init(&o);
    o.input_format = fmt;
    o.output_format = SIMDBPE_OUTPUT_U32;
    o.output = out_path;
    o.threads = 1;
    o.cache_mb = 1;
    o.batch_bytes = data[0] & 0x80 ? 16 : 0; /* 16: the smallest batch */
    const char *paths[] = {in_path};
    simdbpe_dataset_result res;
    simdbpe_error err;
    simdbpe_status st = simdbpe_dataset_encode_files(fuzz_gpt2(), &o, paths, 1, &res, &err);
    FUZZ_CHECK(st == SIMDBPE_OK || st == SIMDBPE_ERR_INVALID_UTF8 ||
                   st == SIMDBPE_ERR_INVALID_ARG || st == SIMDBPE_ERR_IO ||
                   st == SIMDBPE_ERR_TOO_LARGE,
               "status %s: %s", simdbpe_status_name(st), err.message);
    struct stat sb;
    int have_out = stat(out_path, &sb) == 0;
    if (st != SIMDBPE_OK) {
        FUZZ_CHECK(err.message[0] != '\0', "%s without a message", simdbpe_status_name(st));
        FUZZ_CHECK(!have_out, "%s left after a failure", out_path);
    } else {
        FUZZ_CHECK(have_out && (uint64_t)sb.st_size == 4 * res.tokens,
                   "%lld bytes written for %llu tokens", (long long)sb.st_size,
                   (unsigned long long)res.tokens);
    }

    if (fmt != SIMDBPE_INPUT_JSONL && !compressed(s, n)) {
        expect x = {0};
        expected(s, n, fmt == SIMDBPE_INPUT_LINES, &x);
        FUZZ_CHECK(st == x.st, "%s, the encoder says %s", simdbpe_status_name(st),
                   simdbpe_status_name(x.st));
        if (st == SIMDBPE_OK) {
            uint32_t *got = malloc(sb.st_size ? (size_t)sb.st_size : 1);
            FILE *g = fopen(out_path, "rb");
            FUZZ_CHECK(got && g && fread(got, 1, (size_t)sb.st_size, g) == (size_t)sb.st_size,
                       "cannot read %s", out_path);
            fclose(g);
            FUZZ_CHECK(res.tokens == x.n, "%llu ids, the encoder gives %zu",
                       (unsigned long long)res.tokens, x.n);
            for (size_t i = 0; i < x.n; i++)
                FUZZ_CHECK(got[i] == x.ids[i], "id %zu: %u, the encoder gives %u", i, got[i],
                           x.ids[i]); /* the host is little-endian, as the file */
            free(got);
        } else if (fmt == SIMDBPE_INPUT_TEXT) {
            FUZZ_CHECK(err.byte_offset == x.byte_offset, "byte %llu, the encoder says %llu",
                       (unsigned long long)err.byte_offset, (unsigned long long)x.byte_offset);
        } else {
            FUZZ_CHECK(err.line == x.line, "line %llu, the encoder says %llu",
                       (unsigned long long)err.line, (unsigned long long)x.line);
        }
        free(x.ids);
    }
    unlink(out_path);
    return 0;
}
