/*
 * bench_pair.c - two builds of the library in one process, pass for pass.
 *
 *   bench_pair [-n PAIRS] [-g GROUP_MB] LIB_BASE LIB_NEW FILE...
 *
 * LIB_BASE and LIB_NEW are two shared builds of libsimdbpe (cmake
 * -DBUILD_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON), opened
 * with dlopen side by side, each with its own encoder of the embedded
 * GPT-2 model. Each FILE is one document, read into its own buffer. After
 * two untimed passes each, PAIRS times (default 12) both encoders encode
 * every document, in groups of about GROUP_MB MB of text (default 8)
 * that the two take in turn, the first of each group alternating between
 * them; each one's time is this thread's CPU time summed over its groups.
 * Prints each one's median MB/s and the median, first and third quartile
 * of new/base speed over the pairs.
 *
 * Why: on this project's shared 2-core VM the machine's speed swings by
 * 15-30% from one second to the next, so separate processes (bench/ab.sh)
 * need many rounds to see a 2% change. Groups of 8 MB, about 15 ms each,
 * see nearly the same machine; their tables stay warm between turns
 * (smaller groups made both builds slower by evicting each other's
 * tables). Each process still lands its memory differently, which moves
 * the ratio by about 2% (a build against a copy of itself: 0.97-1.02), so
 * bench/pair.sh runs several processes, each build first in turn.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/simdbpe.h"
#include "docs.h"
#include "timing.h"

typedef simdbpe_status (*model_open_fn)(const char *, simdbpe_model **, simdbpe_error *);
typedef simdbpe_status (*encoder_new_fn)(const simdbpe_model *, simdbpe_encoder **,
                                         simdbpe_error *);
typedef simdbpe_status (*encode_fn)(simdbpe_encoder *, const char *, size_t,
                                    const simdbpe_encode_options *, const uint32_t **, size_t *,
                                    simdbpe_error *);

/* One build: its encode function and an encoder of its own. */
typedef struct build {
    const char *path;
    encode_fn encode;
    simdbpe_encoder *enc;
} build;

/* Opens the build at path; returns 0, or -1 after saying why. */
static int open_build(build *b, const char *path)
{
    b->path = path;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_pair: %s\n", dlerror());
        return -1;
    }
    model_open_fn model_open = (model_open_fn)dlsym(h, "simdbpe_model_open");
    encoder_new_fn encoder_new = (encoder_new_fn)dlsym(h, "simdbpe_encoder_new");
    b->encode = (encode_fn)dlsym(h, "simdbpe_encode");
    if (!model_open || !encoder_new || !b->encode) {
        fprintf(stderr, "bench_pair: %s is not a build of libsimdbpe\n", path);
        return -1;
    }
    simdbpe_model *m;
    simdbpe_error err;
    if (model_open("gpt2", &m, &err) != SIMDBPE_OK) {
        fprintf(stderr, "bench_pair: %s: %s\n", path, err.message);
        return -1;
    }
    if (encoder_new(m, &b->enc, &err) != SIMDBPE_OK) {
        fprintf(stderr, "bench_pair: %s: %s\n", path, err.message);
        return -1;
    }
    return 0;
}

/* Encodes docs[0..n) with b; returns the CPU time, adds the ids to *tokens. */
static double encode_docs(const build *b, const doc *docs, int n, size_t *tokens)
{
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < n; i++) {
        const uint32_t *ids;
        size_t n_ids;
        simdbpe_error err;
        if (b->encode(b->enc, docs[i].data, docs[i].len, NULL, &ids, &n_ids, &err) !=
            SIMDBPE_OK) {
            fprintf(stderr, "bench_pair: %s: document %d: %s\n", b->path, i, err.message);
            exit(1);
        }
        *tokens += n_ids;
    }
    return clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
}

int main(int argc, char **argv)
{
    unsigned long long pairs = 12, group_mb = 8;
    int a = 1;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        unsigned long long *v = strcmp(argv[a], "-n") == 0   ? &pairs
                                : strcmp(argv[a], "-g") == 0 ? &group_mb
                                                             : NULL;
        if (!v || !parse_count(argv[a + 1], 100000, v)) {
            fprintf(stderr, "bench_pair: bad option '%s %s'\n", argv[a], argv[a + 1]);
            return 2;
        }
    }
    if (argc - a < 3) {
        fprintf(stderr, "usage: bench_pair [-n PAIRS] [-g GROUP_MB] LIB_BASE LIB_NEW FILE...\n");
        return 2;
    }
    build b[2];
    if (open_build(&b[0], argv[a]) || open_build(&b[1], argv[a + 1]))
        return 1;
    int n = argc - a - 2;
    doc *docs = calloc((size_t)n, sizeof *docs);
    double *t[2] = {calloc((size_t)pairs, sizeof(double)), calloc((size_t)pairs, sizeof(double))};
    double *ratio = calloc((size_t)pairs, sizeof(double));
    if (!docs || !t[0] || !t[1] || !ratio) {
        fprintf(stderr, "bench_pair: out of memory\n");
        return 1;
    }
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (read_doc(argv[a + 2 + i], &docs[i]))
            return 1;
        bytes += docs[i].len;
    }
    size_t tokens[2] = {0, 0};
    for (int warm = 0; warm < 2; warm++)
        for (int k = 0; k < 2; k++) {
            tokens[k] = 0;
            encode_docs(&b[k], docs, n, &tokens[k]);
        }
    if (tokens[0] != tokens[1]) {
        fprintf(stderr, "bench_pair: the builds disagree: %zu ids against %zu\n", tokens[0],
                tokens[1]);
        return 1;
    }
    size_t group = (size_t)group_mb << 20;
    for (unsigned long long p = 0; p < pairs; p++) {
        int turn = (int)(p & 1);
        for (int i = 0; i < n; turn ^= 1) {
            int j = i;
            for (size_t sz = 0; j < n && sz < group; j++)
                sz += docs[j].len;
            for (int k = 0; k < 2; k++) {
                size_t unused = 0;
                int which = turn ^ k;
                t[which][p] += encode_docs(&b[which], docs + i, j - i, &unused);
            }
            i = j;
        }
        ratio[p] = t[0][p] / t[1][p];
    }
    for (int k = 0; k < 2; k++)
        qsort(t[k], (size_t)pairs, sizeof(double), cmp_double);
    qsort(ratio, (size_t)pairs, sizeof(double), cmp_double);
    printf("base %.1f MB/s  new %.1f MB/s  new/base %.4f  quartiles %.4f %.4f  (%llu pairs, %zu "
           "bytes)\n",
           (double)bytes / t[0][pairs / 2] / 1e6, (double)bytes / t[1][pairs / 2] / 1e6,
           ratio[pairs / 2], ratio[pairs / 4], ratio[(3 * pairs) / 4], pairs, bytes);
    return 0;
}
