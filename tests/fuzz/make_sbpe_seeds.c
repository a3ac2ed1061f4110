/*
 * make_sbpe_seeds.c - writes seeds for fuzz_model_compiled: each model
 * file of corpus/model_load/ that loads (the small models cut from the
 * golden trained model, see make_seeds.py) compiled into a .sbpe image,
 * once as is (mode byte 0) and once with the checksum fix-up (mode 1).
 *
 *   fuzz_make_sbpe_seeds OUT_DIR MODEL_LOAD_SEED...
 *
 * Built by tests/fuzz.cmake; not a test. Seeds are committed, so it is
 * run by hand when the format changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int write_seed(const char *dir, const char *name, int mode, const void *img, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/seed_%s_mode%d", dir, name, mode);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    unsigned char m = (unsigned char)mode;
    int ok = fwrite(&m, 1, 1, f) == 1 && fwrite(img, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    int written = 0;
    for (int i = 2; i < argc; i++) {
        size_t len;
        char *data = slurp(argv[i], &len);
        if (!data || len == 0 || data[0] != '+') {
            free(data);
            continue; /* only the "+" seeds: the 256 byte symbols are implied */
        }
        /* "+" + extra members NUL merges: rebuild the vocab as fuzz_model_load does. */
        char *nul = memchr(data, 0, len);
        if (!nul || memchr(nul + 1, 0, len - (size_t)(nul + 1 - data))) {
            free(data);
            continue;
        }
        char vocab[65536];
        size_t vn = 0;
        vn += (size_t)snprintf(vocab, sizeof vocab, "{");
        for (unsigned b = 0, id = 0; b < 0x144 && id < 256; b++) {
            /* code points in order: printable bytes stand for themselves */
            unsigned cp = b;
            int self = (cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) ||
                       (cp >= 0xAE && cp <= 0xFF);
            if (cp < 0x100 && !self)
                continue;
            if (cp == '"' || cp == '\\')
                vn += (size_t)snprintf(vocab + vn, sizeof vocab - vn, "\"\\%c\":%u,", cp, id++);
            else if (cp < 0x80)
                vn += (size_t)snprintf(vocab + vn, sizeof vocab - vn, "\"%c\":%u,", cp, id++);
            else
                vn += (size_t)snprintf(vocab + vn, sizeof vocab - vn, "\"%c%c\":%u,",
                                       0xC0 | cp >> 6, 0x80 | (cp & 0x3F), id++);
        }
        size_t extra = (size_t)(nul - data - 1);
        if (extra == 0)
            vn--;
        if (vn + extra + 2 > sizeof vocab) {
            free(data);
            continue;
        }
        memcpy(vocab + vn, data + 1, extra);
        vn += extra;
        vocab[vn++] = '}';
        simdbpe_model *m;
        simdbpe_error err;
        if (simdbpe_model_load_memory(vocab, vn, nul + 1, len - (size_t)(nul + 1 - data), NULL, 0,
                                      &m, &err) != SIMDBPE_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], err.message);
            free(data);
            continue;
        }
        size_t size = simdbpe_model_compiled_size(m), got;
        void *img = malloc(size);
        if (img && simdbpe_model_compile(m, img, size, &got, &err) == SIMDBPE_OK) {
            const char *base = strrchr(argv[i], '/');
            base = base ? base + 1 : argv[i];
            if (strncmp(base, "seed_", 5) == 0)
                base += 5;
            written += write_seed(argv[1], base, 0, img, got) == 0;
            written += write_seed(argv[1], base, 1, img, got) == 0;
        }
        free(img);
        simdbpe_model_free(m);
        free(data);
    }
    printf("wrote %d seeds\n", written);
    return written ? 0 : 1;
}
