/*
 * test_train_cli.c - the real `simdbpe train` binary: output files equal to
 * HF's, messages that say what and where, exit codes, no partial output, and
 * the trained directory usable by `simdbpe encode -m DIR`.
 */
#include "test_train.h"

#include <sys/stat.h>
#include <sys/wait.h>

/* Runs `simdbpe ARGS` through the shell; returns the exit code and puts
 * what it wrote to stderr into err (NUL-terminated, truncated). */
static int run(const char *args, char *err, size_t cap)
{
    char errfile[] = "/tmp/simdbpe-train-cli-err.XXXXXX";
    int fd = mkstemp(errfile);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s' >/dev/null </dev/null", SIMDBPE_CLI_PATH, args,
             errfile);
    int status = system(cmd);
    cr_assert(status != -1 && WIFEXITED(status), "could not run: %s", cmd);
    size_t len = 0;
    char *text = tt_read(errfile, &len);
    snprintf(err, cap, "%s", text);
    free(text);
    unlink(errfile);
    return WEXITSTATUS(status);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

Test(cli, trains_the_golden_files)
{
    char dir[256], args[1024], err[4096];
    tt_tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args,
             "train --vocab-size 100000 --special '<|endoftext|>' --threads 2 -q -o '%s/out' '%s'",
             dir, TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    cr_assert_str_empty(err, "-q printed: %s", err);
    const char *files[2] = {"vocab.json", "merges.txt"};
    for (int i = 0; i < 2; i++) {
        char got_path[512], want_path[512];
        snprintf(got_path, sizeof got_path, "%s/out/%s", dir, files[i]);
        snprintf(want_path, sizeof want_path, TT_DIR "/golden/taylorswift/%s", files[i]);
        size_t gl, wl;
        char *got = tt_read(got_path, &gl), *want = tt_read(want_path, &wl);
        tt_assert_same(files[i], got, gl, want, wl);
        free(got);
        free(want);
    }
    /* no temporary files left next to them */
    snprintf(args, sizeof args, "ls -A '%s/out' | grep -c tmp", dir);
    FILE *p = popen(args, "r");
    int leftovers = -1;
    cr_assert(p && fscanf(p, "%d", &leftovers) == 1);
    pclose(p);
    cr_assert_eq(leftovers, 0);
    tt_rmdir(dir);
}

Test(cli, quiet_success_and_encode_with_the_result)
{
    char dir[256], args[1024], err[4096];
    tt_tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args,
             "train --vocab-size=500 --mode documents --doc-separator '\\n\\n' -o '%s' '%s' '%s'",
             dir, TT_CORPUS("taylorswift"), TT_CORPUS("tinyshakespeare"));
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    /* nothing on standard error when it succeeds (it is not a terminal) */
    cr_assert(err[0] == '\0', "stderr: %s", err);
    char merges[512];
    snprintf(merges, sizeof merges, "%s/merges.txt", dir);
    FILE *mf = fopen(merges, "r");
    cr_assert(mf);
    int lines = 0, c;
    while ((c = fgetc(mf)) != EOF)
        lines += c == '\n';
    fclose(mf);
    cr_assert_eq(lines, 1 + 244, "merges.txt: the #version line and 244 merges");
    snprintf(args, sizeof args, "encode -m '%s' -q '%s'", dir, TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 0, "encode with the trained model: %s", err);
    tt_rmdir(dir);
}

Test(cli, invalid_utf8_names_file_line_and_offset)
{
    char dir[256], args[1024], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bad.txt", dir);
    FILE *f = fopen(path, "wb");
    fputs("good line\nanother good line\nbad \xff byte\n", f);
    fclose(f);
    snprintf(args, sizeof args, "train --vocab-size 300 -o '%s/out' '%s'", dir, path);
    cr_assert_eq(run(args, err, sizeof err), 1);
    char want[700];
    snprintf(want, sizeof want, "%s: invalid UTF-8 at line 3, byte offset 32 (byte 0xFF)", path);
    cr_assert(strstr(err, want) != NULL, "message: %s", err);
    cr_assert(!exists(strcat(strcpy(path, dir), "/out/vocab.json")), "partial output");
    /* --errors replace trains on it */
    snprintf(path, sizeof path, "%s/bad.txt", dir);
    snprintf(args, sizeof args, "train --vocab-size 300 --errors replace -q -o '%s/out' '%s'",
             dir, path);
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    tt_rmdir(dir);
}

Test(cli, empty_corpus_and_small_vocab_are_clear_errors)
{
    char dir[256], args[1024], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    fclose(fopen(path, "wb"));
    snprintf(args, sizeof args, "train --vocab-size 300 -o '%s/out' '%s'", dir, path);
    cr_assert_eq(run(args, err, sizeof err), 1);
    cr_assert(strstr(err, "empty corpus") != NULL, "%s", err);
    snprintf(args, sizeof args,
             "train --vocab-size 256 --special '<|endoftext|>' -o '%s/out' '%s'", dir,
             TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 2);
    cr_assert(strstr(err, "vocab size 256 is below 257") != NULL, "%s", err);
    cr_assert(!exists(strcat(strcpy(path, dir), "/out")), "output directory made anyway");
    tt_rmdir(dir);
}

Test(cli, usage_errors)
{
    char err[4096];
    cr_assert_eq(run("train -o /tmp/x /dev/null", err, sizeof err), 2);
    cr_assert(strstr(err, "--vocab-size N is required") != NULL, "%s", err);
    cr_assert_eq(run("train --vocab-size 300 /dev/null", err, sizeof err), 2);
    cr_assert(strstr(err, "-o DIR is required") != NULL, "%s", err);
    cr_assert_eq(run("train --vocab-size 300 -o /tmp/x", err, sizeof err), 2);
    cr_assert_eq(run("train --vocab-size lots -o /tmp/x /dev/null", err, sizeof err), 2);
    cr_assert_eq(run("train --vocab-size 300 --mode words -o /tmp/x /dev/null", err, sizeof err),
                 2);
    cr_assert_eq(run("train --vocab-size 300 --doc-separator x -o /tmp/x /dev/null", err,
                     sizeof err),
                 2);
    cr_assert(strstr(err, "needs --mode documents") != NULL, "%s", err);
    cr_assert_eq(run("train --vocab-size 300 --pre-tokenizer llama9 -o /tmp/x /dev/null", err,
                     sizeof err),
                 2);
    cr_assert(strstr(err, "--pre-tokenizer is gpt2, cl100k, qwen2, o200k, deepseek_v3, tekken or kimi, not") !=
                  NULL,
              "%s", err);
    cr_assert_eq(run("train --vocab-size 300 --bogus 1 -o /tmp/x /dev/null", err, sizeof err), 2);
    cr_assert_eq(run("train --help", err, sizeof err), 0);
}

Test(cli, missing_file)
{
    char err[4096];
    cr_assert_eq(run("train --vocab-size 300 -o /tmp/simdbpe-never /nonexistent/file.txt", err,
                     sizeof err),
                 1);
    cr_assert(strstr(err, "/nonexistent/file.txt: No such file or directory") != NULL, "%s",
              err);
}

/* A model directory is replaced whole or not at all: a retrain that fails
 * part way (here the last file's name is taken by a directory) leaves the
 * older model's files as they were, and a retrain without --special
 * removes the older model's special_tokens. */
Test(cli, model_directory_replaced_whole)
{
    char dir[256], args[2048], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args, "train --vocab-size 300 -q -o '%s/m' '%s'", dir,
             TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    size_t vl, ml;
    snprintf(path, sizeof path, "%s/m/vocab.json", dir);
    char *old_vocab = tt_read(path, &vl);
    snprintf(path, sizeof path, "%s/m/merges.txt", dir);
    char *old_merges = tt_read(path, &ml);
    snprintf(path, sizeof path, "%s/m/special_tokens", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    snprintf(args, sizeof args,
             "train --vocab-size 400 --special '<|endoftext|>' -q -o '%s/m' '%s'", dir,
             TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 1, "a failed save exited 0: %s", err);
    cr_assert(strstr(err, "special_tokens") != NULL, "message: %s", err);
    size_t gl;
    snprintf(path, sizeof path, "%s/m/vocab.json", dir);
    char *got = tt_read(path, &gl);
    tt_assert_same("vocab.json after a failed retrain", got, gl, old_vocab, vl);
    free(got);
    snprintf(path, sizeof path, "%s/m/merges.txt", dir);
    got = tt_read(path, &gl);
    tt_assert_same("merges.txt after a failed retrain", got, gl, old_merges, ml);
    free(got);
    free(old_vocab);
    free(old_merges);
    snprintf(args, sizeof args, "ls -A '%s/m' | grep -c tmp", dir);
    FILE *p = popen(args, "r");
    int leftovers = -1;
    cr_assert(p && fscanf(p, "%d", &leftovers) == 1);
    pclose(p);
    cr_assert_eq(leftovers, 0, "temporary files left");
    /* With specials, then without: no stale special_tokens. */
    snprintf(path, sizeof path, "%s/m/special_tokens", dir);
    cr_assert_eq(rmdir(path), 0);
    snprintf(args, sizeof args,
             "train --vocab-size 400 --special '<|endoftext|>' -q -o '%s/m' '%s'", dir,
             TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    cr_assert(exists(path));
    snprintf(args, sizeof args, "train --vocab-size 300 -q -o '%s/m' '%s'", dir,
             TT_CORPUS("taylorswift"));
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    cr_assert(!exists(path), "a stale special_tokens survived a retrain without --special");
    tt_rmdir(dir);
}

/* `train -o DIR` where DIR/merges.txt is the corpus: refused before any
 * work, the corpus untouched. */
Test(cli, model_file_that_is_the_corpus_refused)
{
    char dir[256], args[2048], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("some corpus text, some corpus text\n", f);
    fclose(f);
    snprintf(args, sizeof args, "train --vocab-size 260 -q -o '%s' '%s'", dir, path);
    cr_assert_eq(run(args, err, sizeof err), 2, "%s", err);
    cr_assert(strstr(err, "is the input") != NULL, "message: %s", err);
    size_t len;
    char *text = tt_read(path, &len);
    cr_assert_str_eq(text, "some corpus text, some corpus text\n");
    free(text);
    tt_rmdir(dir);
}

/* The trainer and the loader share one token-length limit
 * (SIMDBPE__MAX_TOKEN_BYTES, 1024 bytes): 3,000 bytes of 'a' trained to
 * 300 ids make no token longer than that, so encode loads the result and
 * its ids decode back to the text. */
Test(cli, trained_model_with_long_runs_loads)
{
    char dir[256], args[2048], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < 3000; i++)
        fputc('a', f);
    fclose(f);
    snprintf(args, sizeof args, "train --vocab-size 300 -q -o '%s/m' '%s'", dir, path);
    cr_assert_eq(run(args, err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args,
             "encode -q -m '%s/m' -o '%s/ids' '%s' && '%s' decode -m '%s/m' -o '%s/back' '%s/ids'",
             dir, dir, path, SIMDBPE_CLI_PATH, dir, dir, dir);
    cr_assert_eq(run(args, err, sizeof err), 0, "the trained model does not load: %s", err);
    size_t a_len, b_len;
    snprintf(path, sizeof path, "%s/a.txt", dir);
    char *a = tt_read(path, &a_len);
    snprintf(path, sizeof path, "%s/back", dir);
    char *b = tt_read(path, &b_len);
    tt_assert_same("decode(encode(a.txt))", b, b_len, a, a_len);
    free(a);
    free(b);
    tt_rmdir(dir);
}

/* train reads .zst and .gz inputs as encode does (detected by content):
 * the same model as from the plain file. A .zst was read as bytes and
 * refused as "invalid UTF-8". */
Test(cli, compressed_inputs_are_decompressed)
{
    char dir[256], args[2048], err[4096], path[512];
    tt_tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args,
             "zstd -q -c '%s' > '%s/c.zst' && gzip -c '%s' > '%s/c.gz'", TT_CORPUS("taylorswift"),
             dir, TT_CORPUS("taylorswift"), dir);
    cr_assert_eq(system(args), 0, "zstd/gzip failed");
    const char *ins[3] = {TT_CORPUS("taylorswift"), "c.zst", "c.gz"};
    char *vocab[3];
    size_t len[3];
    for (int i = 0; i < 3; i++) {
        char in[512];
        snprintf(in, sizeof in, i ? "%s/%s" : "%.0s%s", dir, ins[i]);
        snprintf(args, sizeof args, "train --vocab-size 400 -q -o '%s/m%d' '%s'", dir, i, in);
        cr_assert_eq(run(args, err, sizeof err), 0, "%s: %s", ins[i], err);
        snprintf(path, sizeof path, "%s/m%d/merges.txt", dir, i);
        vocab[i] = tt_read(path, &len[i]);
    }
    tt_assert_same("merges from .zst", vocab[1], len[1], vocab[0], len[0]);
    tt_assert_same("merges from .gz", vocab[2], len[2], vocab[0], len[0]);
    for (int i = 0; i < 3; i++)
        free(vocab[i]);
    tt_rmdir(dir);
}
