/*
 * test_cli.c - runs the real `simdbpe` binary (SIMDBPE_CLI, the built
 * simdbpe_cli target) and checks its output, exit status and messages
 * against the issue-2 contract:
 *
 *   simdbpe encode [-m MODEL] [--input-format text|lines]
 *                  [--output-format text|u16|u32] [--special text|allow|error]
 *                  [--errors strict|replace] [FILE...]
 *   simdbpe decode [-m MODEL] [--input-format text|u16|u32] [FILE...]
 *   simdbpe count [FILE...]
 *
 * Each FILE (stdin when none) is one document; `lines` makes each line one.
 * Text output is one line of space-separated ids per document. Errors go to
 * stderr with the file, the byte offset where it applies, and a non-zero
 * exit; malformed model files are named with their line. `-o FILE` never
 * leaves a partial file.
 *
 * Expected ids come from the golden files (references), never from the
 * library. Each test works in its own temporary directory.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hub_util.h"
#include "test_model.h"
#include "test_util.h"

#ifndef SIMDBPE_CLI
#error "define SIMDBPE_CLI as the path of the simdbpe binary"
#endif

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/simdbpe-cli-XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp failed");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_dir(void)
{
    if (dir[0])
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(cli, .init = make_dir, .fini = remove_dir, .timeout = 60);

/* The path of `name` inside this test's directory (a static buffer ring,
 * so a few can be used in one expression). */
static const char *at(const char *name)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static void put(const char *name, const void *data, size_t len)
{
    tu_write(at(name), data, len);
}

static void puts_file(const char *name, const char *text)
{
    put(name, text, strlen(text));
}

typedef struct run_result {
    int status; /* exit code, or 128 + signal */
    char *out;
    size_t out_len;
    char *err;
    size_t err_len;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* Runs simdbpe with argv (NULL-terminated, without argv[0]) and the file
 * `stdin_name` (in the test directory; NULL = an empty stdin). */
static run_result run_cli(const char *stdin_name, const char *const *args)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = SIMDBPE_CLI;
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(n, 63);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    char in_path[512], out_path[512], err_path[512];
    snprintf(in_path, sizeof in_path, "%s/%s", dir, stdin_name ? stdin_name : ".stdin-empty");
    snprintf(out_path, sizeof out_path, "%s/.stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/.stderr", dir);
    if (!stdin_name)
        tu_write(in_path, "", 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork failed");
    if (pid == 0) {
        int in = open(in_path, O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(SIMDBPE_CLI, (char *const *)argv);
        _exit(127);
    }
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    run_result r = {0};
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    cr_assert_neq(r.status, 127, "cannot run %s", SIMDBPE_CLI);
    r.out = tu_read(out_path, &r.out_len);
    r.err = tu_read(err_path, &r.err_len);
    unlink(out_path);
    unlink(err_path);
    if (!stdin_name)
        unlink(in_path);
    return r;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_ok(const run_result *r)
{
    cr_assert_eq(r->status, 0, "exit status %d, stderr: %s", r->status, r->err);
}

static void expect_out(const run_result *r, const char *want)
{
    expect_ok(r);
    cr_assert(r->out_len == strlen(want) && memcmp(r->out, want, r->out_len) == 0,
              "stdout \"%s\", want \"%s\"", r->out, want);
}

/* A failure: non-zero exit, and stderr containing every needle. */
static void expect_error(const run_result *r, const char *const *needles)
{
    cr_assert_neq(r->status, 0, "expected failure; stdout: %.200s", r->out);
    cr_assert_lt(r->status, 128, "killed by a signal (%d)", r->status - 128);
    for (size_t i = 0; needles[i]; i++)
        cr_assert(strstr(r->err, needles[i]), "stderr \"%s\" lacks \"%s\"", r->err, needles[i]);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ----------------------------------------------------------------- encode */

/* tiktoken gpt2: "Hello world" -> 15496 995; edge.jsonl doc 7: "x 中" ->
 * 87 220 40792. */
#define HELLO "Hello world"
#define HELLO_IDS "15496 995"
#define CJK "x \xE4\xB8\xAD"
#define CJK_IDS "87 220 40792"

Test(cli, encode_one_file)
{
    puts_file("a.txt", HELLO);
    run_result r = run_cli(NULL, ARGS("encode", at("a.txt")));
    expect_out(&r, HELLO_IDS "\n");
    run_free(&r);
}

Test(cli, encode_several_files_in_order_with_an_empty_one)
{
    puts_file("a.txt", HELLO);
    puts_file("empty.txt", "");
    puts_file("b.txt", CJK);
    run_result r = run_cli(NULL, ARGS("encode", at("b.txt"), at("empty.txt"), at("a.txt")));
    expect_out(&r, CJK_IDS "\n\n" HELLO_IDS "\n");
    run_free(&r);
}

/* A batch of nothing but empty (or skipped) documents has no ids at all:
 * walking it must not add 0 to a null pointer (UBSan, in the sanitizer
 * build, stops the run if it does). */
Test(cli, encode_only_empty_or_skipped_documents)
{
    puts_file("empty.txt", "");
    run_result r = run_cli(NULL, ARGS("encode", at("empty.txt")));
    expect_out(&r, "\n");
    run_free(&r);
    puts_file("bad.jsonl", "{\"text\": 5}\n");
    r = run_cli(NULL, ARGS("encode", "-q", "--input-format", "jsonl", "--on-error", "skip",
                           at("bad.jsonl")));
    expect_out(&r, "");
    run_free(&r);
}

Test(cli, encode_stdin)
{
    puts_file("in.txt", HELLO);
    run_result r = run_cli("in.txt", ARGS("encode"));
    expect_out(&r, HELLO_IDS "\n");
    run_free(&r);
    r = run_cli("in.txt", ARGS("encode", "-"));
    expect_out(&r, HELLO_IDS "\n");
    run_free(&r);
    r = run_cli(NULL, ARGS("encode"));
    expect_out(&r, "\n"); /* an empty document prints an empty line */
    run_free(&r);
}

Test(cli, encode_lines)
{
    /* Each line without its newline is a document; an empty line is an
     * empty document; the last line needs no newline. */
    puts_file("l.txt", HELLO "\n\n" CJK "\n" HELLO);
    run_result r = run_cli(NULL, ARGS("encode", "--input-format", "lines", at("l.txt")));
    expect_out(&r, HELLO_IDS "\n\n" CJK_IDS "\n" HELLO_IDS "\n");
    run_free(&r);
    /* A final newline ends the last line; it does not start another one. */
    puts_file("m.txt", HELLO "\n" CJK "\n");
    r = run_cli("m.txt", ARGS("encode", "--input-format", "lines"));
    expect_out(&r, HELLO_IDS "\n" CJK_IDS "\n");
    run_free(&r);
    /* Lines from several files, in order. */
    r = run_cli(NULL, ARGS("encode", "--input-format=lines", at("m.txt"), at("m.txt")));
    expect_out(&r, HELLO_IDS "\n" CJK_IDS "\n" HELLO_IDS "\n" CJK_IDS "\n");
    run_free(&r);
}

static void expect_binary(const run_result *r, const uint32_t *ids, size_t n, size_t width)
{
    expect_ok(r);
    cr_assert_eq(r->out_len, n * width, "got %zu bytes, want %zu", r->out_len, n * width);
    const uint8_t *p = (const uint8_t *)r->out;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (size_t k = 0; k < width; k++)
            v |= (uint32_t)p[i * width + k] << (8 * k);
        cr_assert_eq(v, ids[i], "id %zu: got %u, want %u", i, v, ids[i]);
    }
}

Test(cli, encode_binary_formats)
{
    puts_file("a.txt", HELLO);
    puts_file("b.txt", CJK);
    static const uint32_t ids[] = {15496, 995, 87, 220, 40792};
    run_result r =
        run_cli(NULL, ARGS("encode", "--output-format", "u16", at("a.txt"), at("b.txt")));
    expect_binary(&r, ids, 5, 2);
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--output-format", "u32", at("a.txt"), at("b.txt")));
    expect_binary(&r, ids, 5, 4);
    run_free(&r);
}

Test(cli, encode_special_policies)
{
    /* specials.jsonl: "a<|endoftext|>b" -> allow: 64 50256 65; text:
     * 64 27 91 437 1659 5239 91 29 65. */
    puts_file("s.txt", "a<|endoftext|>b");
    run_result r = run_cli(NULL, ARGS("encode", at("s.txt")));
    expect_out(&r, "64 27 91 437 1659 5239 91 29 65\n");
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--special", "text", at("s.txt")));
    expect_out(&r, "64 27 91 437 1659 5239 91 29 65\n");
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--special", "allow", at("s.txt")));
    expect_out(&r, "64 50256 65\n");
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--special", "error", at("s.txt")));
    expect_error(&r, NEEDLES(at("s.txt"), "offset 1"));
    run_free(&r);
}

/* Finds the record of small_model.jsonl whose text is `text`. */
static void small_model_ids(const char *text, const char *key, char *out, size_t cap)
{
    size_t len;
    char *data = tu_read(TU_GOLDEN_DIR "/small_model.jsonl", &len);
    out[0] = '\0';
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, JSON_ALLOW_NUL, NULL);
        cr_assert(rec);
        const json_t *t = json_object_get(rec, "text");
        if (t && json_is_string(t) && strcmp(json_string_value(t), text) == 0) {
            size_t n;
            uint32_t *ids = tu_json_ids(json_object_get(rec, key), &n);
            size_t o = 0;
            for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(out + o, cap - o, i ? " %u" : "%u", ids[i]);
            free(ids);
            json_decref(rec);
            break;
        }
        json_decref(rec);
    }
    free(data);
    cr_assert(out[0], "no record for \"%s\" in small_model.jsonl", text);
}

Test(cli, encode_with_a_model_directory)
{
    /* The RoBERTa-style model (ids not 256 + rank, special_tokens file);
     * expected ids are HF's, from small_model.jsonl. */
    char want[256], line[300];
    puts_file("x.txt", "xyz");
    small_model_ids("xyz", "ids_text", want, sizeof want);
    snprintf(line, sizeof line, "%s\n", want);
    run_result r = run_cli(NULL, ARGS("encode", "-m", TU_GOLDEN_DIR "/small_model", at("x.txt")));
    expect_out(&r, line);
    run_free(&r);
    puts_file("s.txt", "<s>hello</s>");
    small_model_ids("<s>hello</s>", "ids_allow", want, sizeof want);
    snprintf(line, sizeof line, "%s\n", want);
    r = run_cli(NULL, ARGS("encode", "--model", TU_GOLDEN_DIR "/small_model", "--special",
                           "allow", at("s.txt")));
    expect_out(&r, line);
    run_free(&r);
    small_model_ids("<s>hello</s>", "ids_text", want, sizeof want);
    snprintf(line, sizeof line, "%s\n", want);
    r = run_cli(NULL, ARGS("encode", "-m", TU_GOLDEN_DIR "/small_model", at("s.txt")));
    expect_out(&r, line);
    run_free(&r);
    /* The GPT-2 files as a directory give the embedded model's ids. */
    puts_file("a.txt", HELLO);
    r = run_cli(NULL, ARGS("encode", "-m", TU_GPT2_DIR, at("a.txt")));
    expect_out(&r, HELLO_IDS "\n");
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "-m", "gpt2", at("a.txt")));
    expect_out(&r, HELLO_IDS "\n");
    run_free(&r);
}

/* ------------------------------------------------------------ UTF-8 errors */

Test(cli, invalid_utf8_names_file_and_byte_offset)
{
    puts_file("good.txt", HELLO);
    put("bad.txt", "Hello \xFF world", 13);
    run_result r = run_cli(NULL, ARGS("encode", at("good.txt"), at("bad.txt")));
    expect_error(&r, NEEDLES(at("bad.txt"), "byte offset 6"));
    run_free(&r);
    /* A truncated sequence at the end of a file. */
    put("trunc.txt", "ab\xE2\x82", 4);
    r = run_cli(NULL, ARGS("encode", at("trunc.txt")));
    expect_error(&r, NEEDLES(at("trunc.txt"), "byte offset 2"));
    run_free(&r);
    /* In lines mode the offset is the file's: line 2 starts at byte 3. */
    put("lines.txt", "ok\nab\xEDxx\n", 9);
    r = run_cli(NULL, ARGS("encode", "--input-format", "lines", at("lines.txt")));
    expect_error(&r, NEEDLES(at("lines.txt"), "byte offset 5"));
    run_free(&r);
    /* stdin is named too. */
    r = run_cli("bad.txt", ARGS("encode"));
    expect_error(&r, NEEDLES("stdin", "byte offset 6"));
    run_free(&r);
}

Test(cli, invalid_utf8_replace_mode)
{
    /* utf8.jsonl: Python's errors="replace" turns "a\xFF" + "a" into
     * "a\uFFFDa"; its ids equal those of the repaired text, which the golden
     * file gives for hex 61ff61. */
    put("bad.txt", "a\xFF" "a", 3);
    size_t len;
    char *data = tu_read(TU_GOLDEN_DIR "/utf8.jsonl", &len);
    char want[256] = "";
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        const json_t *hex = json_object_get(rec, "hex");
        if (hex && strcmp(json_string_value(hex), "61ff61") == 0) {
            size_t n, o = 0;
            uint32_t *ids = tu_json_ids(json_object_get(rec, "ids"), &n);
            for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(want + o, sizeof want - o, i ? " %u" : "%u", ids[i]);
            o += (size_t)snprintf(want + o, sizeof want - o, "\n");
            free(ids);
        }
        json_decref(rec);
    }
    free(data);
    cr_assert(want[0], "utf8.jsonl has no record 61ff61");
    run_result r = run_cli(NULL, ARGS("encode", "--errors", "replace", at("bad.txt")));
    expect_out(&r, want);
    run_free(&r);
}

/* ------------------------------------------------------------ decode */

/* A document that exercises every kind of text: stress.jsonl itself. */
static void stress_document(void)
{
    size_t len;
    char *data = tu_read(TU_GOLDEN_DIR "/stress.jsonl", &len);
    put("doc.txt", data, len);
    free(data);
}

static void expect_same_file(const run_result *r, const char *name)
{
    expect_ok(r);
    size_t len;
    char *want = tu_read(at(name), &len);
    cr_assert(r->out_len == len && memcmp(r->out, want, len) == 0,
              "decoded %zu bytes differ from %s (%zu bytes)", r->out_len, name, len);
    free(want);
}

Test(cli, decode_round_trips)
{
    stress_document();
    static const char *const fmts[] = {"text", "u16", "u32"};
    for (size_t i = 0; i < 3; i++) {
        run_result r = run_cli(NULL, ARGS("encode", "--output-format", fmts[i], "-o",
                                          at("ids"), at("doc.txt")));
        expect_ok(&r);
        run_free(&r);
        r = run_cli(NULL, ARGS("decode", "--input-format", fmts[i], at("ids")));
        expect_same_file(&r, "doc.txt");
        run_free(&r);
        /* From stdin too. */
        r = run_cli("ids", ARGS("decode", "--input-format", fmts[i]));
        expect_same_file(&r, "doc.txt");
        run_free(&r);
    }
}

Test(cli, decode_text_lines_are_documents)
{
    /* One line of ids per document; documents come out separated by a
     * newline. */
    puts_file("ids.txt", HELLO_IDS "\n" CJK_IDS "\n");
    run_result r = run_cli(NULL, ARGS("decode", at("ids.txt")));
    expect_ok(&r);
    cr_assert(strncmp(r.out, HELLO "\n" CJK, strlen(HELLO "\n" CJK)) == 0, "got \"%s\"", r.out);
    run_free(&r);
}

Test(cli, decode_with_a_model_directory)
{
    char want[256];
    small_model_ids("xyz", "ids_text", want, sizeof want);
    puts_file("ids.txt", want);
    run_result r = run_cli(NULL, ARGS("decode", "-m", TU_GOLDEN_DIR "/small_model", at("ids.txt")));
    expect_ok(&r);
    cr_assert(r.out_len >= 3 && memcmp(r.out, "xyz", 3) == 0, "got \"%s\"", r.out);
    run_free(&r);
}

Test(cli, decode_out_of_range_id_names_the_id)
{
    puts_file("ids.txt", "15496 50257 995\n");
    run_result r = run_cli(NULL, ARGS("decode", at("ids.txt")));
    expect_error(&r, NEEDLES(at("ids.txt"), "50257"));
    run_free(&r);
    uint8_t u32[8] = {0x68, 0x3C, 0, 0, 0x39, 0x30, 0x01, 0}; /* 15464, 77881 */
    put("ids.u32", u32, sizeof u32);
    r = run_cli(NULL, ARGS("decode", "--input-format", "u32", at("ids.u32")));
    expect_error(&r, NEEDLES(at("ids.u32"), "77881"));
    run_free(&r);
    /* Not an id at all. */
    puts_file("junk.txt", "15496 abc\n");
    r = run_cli(NULL, ARGS("decode", at("junk.txt")));
    expect_error(&r, NEEDLES(at("junk.txt"), "line 1"));
    run_free(&r);
    /* A binary file that is not a whole number of ids. */
    put("odd.u16", "\x01\x02\x03", 3);
    r = run_cli(NULL, ARGS("decode", "--input-format", "u16", at("odd.u16")));
    expect_error(&r, NEEDLES(at("odd.u16")));
    run_free(&r);
}

/* ------------------------------------------------------------- count */

Test(cli, count_per_document_and_total)
{
    puts_file("a.txt", HELLO);
    puts_file("b.txt", CJK);
    run_result r = run_cli(NULL, ARGS("count", at("a.txt"), at("b.txt")));
    expect_ok(&r);
    /* One line per document with its count and name, then the total. */
    char *line_a = strstr(r.out, at("a.txt"));
    char *line_b = strstr(r.out, at("b.txt"));
    cr_assert(line_a && line_b && line_a < line_b, "stdout: %s", r.out);
    char *nl_a = memchr(r.out, '\n', r.out_len);
    cr_assert(nl_a && line_a < nl_a, "document a is not on the first line: %s", r.out);
    cr_assert(strncmp(r.out, "2", 1) == 0 || strstr(r.out, "\t2\n") || strstr(r.out, " 2\n"),
              "document a has 2 tokens: %s", r.out);
    char *tot = strstr(r.out, "total");
    cr_assert(tot, "no total: %s", r.out);
    char *tl = tot;
    while (tl > r.out && tl[-1] != '\n')
        tl--;
    cr_assert(strstr(tl, "5") && strstr(tl, "5") < strchr(tl, '\n'), "total should be 5: %s",
              r.out);
    run_free(&r);
}

/* --------------------------------------------------- model file errors */

static void model_dir_with(const char *vocab, const char *merges)
{
    mkdir(at("model"), 0755);
    if (vocab)
        puts_file("model/vocab.json", vocab);
    if (merges)
        puts_file("model/merges.txt", merges);
    puts_file("a.txt", "abc");
}

static char *full_vocab(const char *extra, int skip_byte)
{
    tm_buf b = {0};
    tm_vocab_begin(&b, NULL, skip_byte);
    tm_add(&b, extra, strlen(extra));
    tm_vocab_end(&b);
    return b.s;
}

Test(cli, malformed_vocab_json)
{
    model_dir_with("{\"a\": 1,\n\"b\" 2}", "#version: 0.2\n");
    run_result r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/vocab.json"), "line 2"));
    run_free(&r);

    char *v = full_vocab(",\"ab\":\"x\"", -1);
    model_dir_with(v, "#version: 0.2\n");
    free(v);
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/vocab.json"), "\"ab\"", "integer"));
    run_free(&r);

    v = full_vocab(",\"a\xE4\xB8\xAD\":300", -1);
    model_dir_with(v, "#version: 0.2\n");
    free(v);
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/vocab.json"), "U+4E2D"));
    run_free(&r);

    v = full_vocab("", 'A');
    model_dir_with(v, "#version: 0.2\n");
    free(v);
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/vocab.json"), "0x41"));
    run_free(&r);
}

Test(cli, malformed_merges_txt)
{
    char *v = full_vocab(",\"ab\":256,\"abc\":257", -1);
    model_dir_with(v, "#version: 0.2\na b\nab c d\n");
    run_result r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/merges.txt"), "line 3"));
    run_free(&r);
    model_dir_with(v, "#version: 0.2\nq r\nab zz\n");
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/merges.txt"), "line 2"));
    run_free(&r);
    model_dir_with(v, "#version: 0.2\na b\nab zz\n");
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/merges.txt"), "line 3", "\"zz\""));
    run_free(&r);
    /* A working directory model with a special_tokens file. */
    model_dir_with(v, "#version: 0.2\na b\nab c\n");
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_out(&r, "257\n");
    run_free(&r);
    puts_file("model/special_tokens", "<nope>\n");
    r = run_cli(NULL, ARGS("encode", "-m", at("model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("model/special_tokens"), "<nope>"));
    run_free(&r);
    free(v);
}

Test(cli, missing_model)
{
    puts_file("a.txt", "abc");
    run_result r = run_cli(NULL, ARGS("encode", "-m", at("no-such-model"), at("a.txt")));
    expect_error(&r, NEEDLES(at("no-such-model")));
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", at("no-such-file.txt")));
    expect_error(&r, NEEDLES(at("no-such-file.txt")));
    run_free(&r);
}

/* ---------------------------------------------- the Hugging Face cache */

/* -m ORG/NAME is the repo's tokenizer.json in the cache (hub_util.h):
 * encode, compile and decode give what the file itself gives. */
Test(cli, a_model_from_the_hugging_face_cache)
{
    char folder[256], blob[300];
    hub_make_repo(at("hf/hub"), "acme", "small", HUB_COMMIT, "main", folder);
    hub_clear_env();
    setenv("HF_HOME", at("hf"), 1);
    snprintf(blob, sizeof blob, "%s/blobs/e1", folder);
    puts_file("a.txt", "Hello <tool> world</s>\n");
    run_result direct = run_cli(NULL, ARGS("encode", "--add-special-tokens", "--special", "allow",
                                           "-m", blob, at("a.txt")));
    expect_ok(&direct);
    cr_assert_gt(direct.out_len, 10);
    run_result r = run_cli(NULL, ARGS("encode", "--add-special-tokens", "--special", "allow", "-m",
                                      "acme/small", at("a.txt")));
    expect_out(&r, direct.out);
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--add-special-tokens", "--special", "allow", "-m",
                           "acme/small@" HUB_COMMIT, at("a.txt")));
    expect_out(&r, direct.out);
    run_free(&r);
    r = run_cli(NULL, ARGS("compile", "-m", "acme/small", "-o", at("small.sbpe")));
    expect_ok(&r);
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--add-special-tokens", "--special", "allow", "-m",
                           at("small.sbpe"), at("a.txt")));
    expect_out(&r, direct.out);
    run_free(&r);
    put("ids.txt", direct.out, direct.out_len);
    r = run_cli(NULL, ARGS("decode", "-m", "acme/small", at("ids.txt")));
    expect_out(&r, "<s>Hello <tool> world</s>\n</s>");
    run_free(&r);
    run_free(&direct);
}

/* The notice about a tokenizer.json's truncation reads the cached file. */
Test(cli, a_cached_model_with_truncation_gets_the_notice)
{
    char folder[256], blob[300];
    hub_make_repo(at("hub"), "acme", "small", HUB_COMMIT, "main", folder);
    hub_clear_env();
    setenv("HF_HUB_CACHE", at("hub"), 1);
    snprintf(blob, sizeof blob, "%s/blobs/e1", folder);
    size_t len;
    char *json = tu_read(blob, &len);
    char *t = strstr(json, "\"truncation\":null");
    cr_assert(t);
    FILE *f = fopen(blob, "wb");
    cr_assert(f);
    fprintf(f, "%.*s\"truncation\":{\"direction\":\"Right\",\"max_length\":4,"
               "\"strategy\":\"LongestFirst\",\"stride\":0}%s",
            (int)(t - json), json, t + strlen("\"truncation\":null"));
    cr_assert_eq(fclose(f), 0);
    free(json);
    puts_file("a.txt", HELLO);
    run_result r = run_cli(NULL, ARGS("encode", "-q", "--summary", at("summary.json"), "-m",
                                      "acme/small", at("a.txt")));
    expect_ok(&r);
    run_free(&r);
    char *summary = tu_read(at("summary.json"), &len);
    cr_assert(strstr(summary, "its truncation is not applied"), "%s", summary);
    free(summary);
}

Test(cli, a_model_missing_from_the_hugging_face_cache)
{
    char folder[256], want[512];
    hub_make_repo(at("hf/hub"), "acme", "small", HUB_COMMIT, "main", folder);
    hub_clear_env();
    setenv("HF_HOME", at("hf"), 1);
    puts_file("a.txt", HELLO);
    run_result r = run_cli(NULL, ARGS("encode", "-m", "acme/none", at("a.txt")));
    snprintf(want, sizeof want,
             "simdbpe: cannot load model: acme/none: not a file or directory, and not in the "
             "Hugging Face cache: no %s/hf/hub/models--acme--none (the cache: $HF_HOME/hub)",
             dir);
    expect_error(&r, NEEDLES(want));
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "-m", "acme/small@v2", at("a.txt")));
    snprintf(want, sizeof want,
             "simdbpe: cannot load model: acme/small@v2: not in the Hugging Face cache: no "
             "%s/refs/v2 (refs: main; snapshots: 0123456789ab...)",
             folder);
    expect_error(&r, NEEDLES(want));
    run_free(&r);
    /* HF_HUB_CACHE wins over HF_HOME */
    setenv("HF_HUB_CACHE", at("elsewhere"), 1);
    r = run_cli(NULL, ARGS("compile", "-m", "acme/small", "-o", at("x.sbpe")));
    snprintf(want, sizeof want,
             "no %s/elsewhere/models--acme--small (the cache: $HF_HUB_CACHE)", dir);
    expect_error(&r, NEEDLES(want));
    run_free(&r);
}

/* ------------------------------------------------------------- -o FILE */

/* The names in the test directory other than the given ones. */
static size_t extra_entries(const char *const *known, char *first, size_t cap)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int k = 0;
        for (size_t i = 0; known[i]; i++)
            k |= strcmp(e->d_name, known[i]) == 0;
        if (!k && n++ == 0)
            snprintf(first, cap, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

Test(cli, output_file_is_never_partial)
{
    puts_file("good.txt", HELLO);
    put("bad.txt", "x\xFF", 2);
    char extra[256];
    /* Success: the whole output, no temporary left behind. */
    run_result r = run_cli(NULL, ARGS("encode", "-o", at("out.txt"), at("good.txt")));
    expect_ok(&r);
    run_free(&r);
    size_t len;
    char *got = tu_read(at("out.txt"), &len);
    cr_assert(len == strlen(HELLO_IDS "\n") && memcmp(got, HELLO_IDS "\n", len) == 0);
    free(got);
    /* Failure after a good document: the old file stays as it was. */
    r = run_cli(NULL, ARGS("encode", "-o", at("out.txt"), at("good.txt"), at("bad.txt")));
    expect_error(&r, NEEDLES(at("bad.txt")));
    run_free(&r);
    got = tu_read(at("out.txt"), &len);
    cr_assert(len == strlen(HELLO_IDS "\n") && memcmp(got, HELLO_IDS "\n", len) == 0,
              "a failed run changed the existing output file");
    free(got);
    /* Failure with no previous file: nothing under the final name. */
    r = run_cli(NULL, ARGS("encode", "--output-format", "u32", "-o", at("new.bin"),
                           at("good.txt"), at("bad.txt")));
    expect_error(&r, NEEDLES(at("bad.txt")));
    run_free(&r);
    struct stat st;
    cr_assert_neq(stat(at("new.bin"), &st), 0, "a failed run left new.bin");
    cr_assert_eq(extra_entries(ARGS("good.txt", "bad.txt", "out.txt"), extra, sizeof extra), 0,
                 "a temporary file was left behind: %s", extra);
    /* The same for decode with an out-of-range id. */
    puts_file("ids.txt", HELLO_IDS "\n99999\n");
    r = run_cli(NULL, ARGS("decode", "-o", at("dec.txt"), at("ids.txt")));
    expect_error(&r, NEEDLES("99999"));
    run_free(&r);
    cr_assert_neq(stat(at("dec.txt"), &st), 0, "a failed decode left dec.txt");
    cr_assert_eq(
        extra_entries(ARGS("good.txt", "bad.txt", "out.txt", "ids.txt"), extra, sizeof extra), 0,
        "a temporary file was left behind: %s", extra);
}

/* -o onto something that is not a regular file (a FIFO here; /dev/null in
 * practice) must write into it, not replace it with a regular file. */
Test(cli, output_to_a_fifo_writes_through)
{
    puts_file("a.txt", HELLO);
    cr_assert_eq(mkfifo(at("fifo"), 0644), 0);
    int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
    cr_assert_geq(rd, 0);
    run_result r = run_cli(NULL, ARGS("encode", "-o", at("fifo"), at("a.txt")));
    expect_ok(&r);
    run_free(&r);
    struct stat st;
    cr_assert_eq(stat(at("fifo"), &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "-o replaced the FIFO with a regular file");
    char buf[64] = {0};
    ssize_t n = read(rd, buf, sizeof buf - 1);
    cr_assert(n == (ssize_t)strlen(HELLO_IDS "\n") && strcmp(buf, HELLO_IDS "\n") == 0,
              "read \"%s\" from the FIFO", buf);
    close(rd);
}

/* ------------------------------------------------------------- usage */

Test(cli, usage_errors)
{
    run_result r = run_cli(NULL, ARGS("frobnicate"));
    cr_assert_neq(r.status, 0);
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "--output-format", "u12"));
    cr_assert_neq(r.status, 0);
    cr_assert(strstr(r.err, "u12"), "stderr: %s", r.err);
    run_free(&r);
}

/* A tokenizer.json's truncation and padding are not applied, and the
 * encode says so once: a notice in the summary (on a terminal too),
 * nothing on a standard error that is no terminal; the ids are the whole
 * text's. A Sequence of 200 RobertaProcessing is refused with a message
 * (the CLI died of SIGSEGV, even without --add-special-tokens). */
Test(cli, model_file_notices_and_post_processor_refusals)
{
    size_t len;
    char *base = tu_read(SIMDBPE_SOURCE_DIR "/tests/data/hf/qwen3_2k.json", &len);
    cr_assert(base && base[0] == '{');
    /* The file begins with {"version":"1.0","truncation":null,"padding":null,... */
    const char *from = "\"truncation\":null,\"padding\":null";
    char *at_null = strstr(base, from);
    cr_assert(at_null, "qwen3_2k.json has no null truncation and padding");
    const char *set = "\"truncation\":{\"direction\":\"Right\",\"max_length\":2,\"strategy\":"
                      "\"LongestFirst\",\"stride\":0},\"padding\":null";
    char *edited = malloc(len + strlen(set) + 1);
    size_t head = (size_t)(at_null - base);
    memcpy(edited, base, head);
    strcpy(edited + head, set);
    strcat(edited, at_null + strlen(from));
    puts_file("trunc.json", edited);
    puts_file("a.txt", "hi there, you");
    run_result r =
        run_cli(NULL, ARGS("encode", "--summary", "-", "-m", at("trunc.json"), at("a.txt")));
    expect_out(&r, "71 72 1052 11 498\n");
    json_error_t jerr;
    json_t *summary = json_loads(r.err, 0, &jerr);
    cr_assert(summary, "stderr is not the summary: %s", r.err);
    const json_t *notices = json_object_get(summary, "notices");
    const char *said = "trunc.json: its truncation is not applied";
    cr_assert(json_array_size(notices) == 1 &&
                  strstr(json_string_value(json_array_get(notices, 0)), said),
              "summary: %s", r.err);
    json_decref(summary);
    run_free(&r);
    r = run_cli(NULL, ARGS("encode", "-m", at("trunc.json"), at("a.txt")));
    expect_out(&r, "71 72 1052 11 498\n");
    cr_assert_eq(r.err_len, 0, "stderr of a run that succeeded: %s", r.err);
    run_free(&r);

    /* "post_processor":{"type":"ByteLevel",...} -> a Sequence of 200. */
    char *pp = strstr(base, "\"post_processor\":{\"type\":\"ByteLevel\"");
    cr_assert(pp, "qwen3_2k.json's post_processor");
    char *pp_end = strchr(pp, '}');
    size_t cap = len + 200 * 128 + 64;
    char *many = malloc(cap);
    size_t k = (size_t)(pp - base);
    memcpy(many, base, k);
    k += (size_t)snprintf(many + k, cap - k,
                          "\"post_processor\":{\"type\":\"Sequence\",\"processors\":[");
    for (int i = 0; i < 200; i++)
        k += (size_t)snprintf(many + k, cap - k,
                              "%s{\"type\":\"RobertaProcessing\",\"sep\":[\"a\",64],"
                              "\"cls\":[\"b\",65]}",
                              i ? "," : "");
    k += (size_t)snprintf(many + k, cap - k, "]}%s", pp_end + 1);
    puts_file("many.json", many);
    r = run_cli(NULL, ARGS("encode", "-m", at("many.json"), at("a.txt")));
    expect_error(&r, NEEDLES("many.json: a post_processor Sequence of more than one processor "
                             "that adds ids"));
    run_free(&r);
    free(many);
    free(edited);
    free(base);
}
