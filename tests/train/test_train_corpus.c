/*
 * test_train_corpus.c - the trainer on the public English corpus (100 MB)
 * against HF tokenizers' merges (tests/data/train/golden/english_lines.tsv).
 *
 * The corpus is looked for in $SIMDBPE_CORPUS_DIR (a folder holding
 * english.txt.zst, or one holding corpus/english.txt.zst), else in
 * <project>/../shared/corpus. When it is not there the test prints
 * "SIMDBPE TRAIN CORPUS SKIPPED: ..." and is skipped (ctest reports it as
 * skipped, not passed).
 *
 * The file is decompressed as a stream and fed in 1 MiB pieces, so the test
 * also shows that the trainer never needs the corpus whole.
 */
#include "test_train.h"

#include <sys/stat.h>
#include <zstd.h>

#define SKIP_LINE "SIMDBPE TRAIN CORPUS SKIPPED"

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The path of corpus file `name`, or skips the test. */
static void find_corpus(const char *name, char *out, size_t cap)
{
    const char *env = getenv("SIMDBPE_CORPUS_DIR");
    const char *roots[3] = {env && *env ? env : NULL, NULL, NULL};
    char with_corpus[700];
    if (roots[0]) {
        snprintf(with_corpus, sizeof with_corpus, "%s/corpus", roots[0]);
        roots[1] = with_corpus;
    } else {
        roots[0] = SIMDBPE_SOURCE_DIR "/../shared/corpus";
    }
    for (int i = 0; i < 3 && roots[i]; i++) {
        snprintf(out, cap, "%s/%s", roots[i], name);
        if (is_file(out))
            return;
    }
    fprintf(stderr, SKIP_LINE ": %s not found in %s (set SIMDBPE_CORPUS_DIR)\n", name,
            env && *env ? "$SIMDBPE_CORPUS_DIR" : "<project>/../shared/corpus");
    cr_skip_test("corpus %s not available", name);
}

/* Streams a .zst file into the trainer as one stream. */
static void feed_zst(simdbpe_trainer *t, const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    ZSTD_DStream *z = ZSTD_createDStream();
    cr_assert(z != NULL);
    size_t in_cap = ZSTD_DStreamInSize(), out_cap = (size_t)1 << 20;
    char *in = malloc(in_cap), *out = malloc(out_cap);
    cr_assert(in && out);
    simdbpe_error err;
    size_t got;
    while ((got = fread(in, 1, in_cap, f)) > 0) {
        ZSTD_inBuffer ib = {in, got, 0};
        while (ib.pos < ib.size) {
            ZSTD_outBuffer ob = {out, out_cap, 0};
            size_t rc = ZSTD_decompressStream(z, &ob, &ib);
            cr_assert(!ZSTD_isError(rc), "zstd: %s", ZSTD_getErrorName(rc));
            cr_assert_eq(simdbpe_trainer_feed(t, out, ob.pos, &err), SIMDBPE_OK, "%s",
                         err.message);
        }
    }
    cr_assert_eq(simdbpe_trainer_end_stream(t, &err), SIMDBPE_OK, "%s", err.message);
    ZSTD_freeDStream(z);
    free(in);
    free(out);
    fclose(f);
}

Test(corpus, english_lines_mode_equals_hf_merges)
{
    char path[800];
    find_corpus("english.txt.zst", path, sizeof path);
    size_t len;
    char *tsv = tt_read(TT_DIR "/golden/english_lines.tsv", &len);
    unsigned vocab = 0;
    size_t merges = 0;
    char sha[65] = "";
    const char *row = strchr(tsv, '\n');
    cr_assert(row != NULL);
    cr_assert_eq(sscanf(row + 1, "english.txt.zst lines %u %zu %64s", &vocab, &merges, sha), 3);
    free(tsv);

    simdbpe_train_options o;
    simdbpe_train_options_init(&o);
    o.vocab_size = vocab;
    o.threads = 2;
    simdbpe_trainer *t;
    simdbpe_error err;
    cr_assert_eq(simdbpe_trainer_new(&o, &t, &err), SIMDBPE_OK);
    feed_zst(t, path);
    cr_assert_eq(simdbpe_trainer_train(t, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_trainer_merge_count(t), merges);
    size_t mlen;
    char *m = tt_render(t, simdbpe_trainer_merges_txt, &mlen);
    char got[65];
    tt_sha256(m, mlen, got);
    cr_assert_str_eq(got, sha, "merges.txt differs from HF's");
    free(m);
    simdbpe_trainer_free(t);
}
