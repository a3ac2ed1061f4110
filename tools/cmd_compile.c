/*
 * cmd_compile.c - `simdbpe compile`: load a model (vocab.json + merges.txt
 * directory, "gpt2", or another .sbpe) and save its compiled image, which
 * `-m FILE.sbpe` then opens with one mmap instead of parsing JSON.
 *
 *   simdbpe compile -m MODEL -o FILE.sbpe [-q]
 *
 * The file is written under a temporary name and renamed when complete
 * (simdbpe_model_save), so a failed run leaves no partial file.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "simdbpe.h"

#include "cmd_compile.h"

static const char compile_usage[] =
    "usage: simdbpe compile -m MODEL -o FILE.sbpe [-q]\n"
    "\n"
    "Writes MODEL (\"gpt2\", a directory with vocab.json + merges.txt [+ special_tokens],\n"
    "or a .sbpe file) as a compiled model that -m FILE.sbpe loads in about a millisecond.\n";

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int simdbpe_cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *output = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(compile_usage, stdout);
            return 0;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if ((strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) && i + 1 < argc) {
            model = argv[++i];
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
            output = argv[++i];
        } else if (strncmp(a, "--model=", 8) == 0) {
            model = a + 8;
        } else if (strncmp(a, "--output=", 9) == 0) {
            output = a + 9;
        } else {
            fprintf(stderr, "simdbpe compile: unexpected argument '%s'\n%s", a, compile_usage);
            return 2;
        }
    }
    if (!model || !output) {
        fprintf(stderr, "simdbpe compile: %s is required\n%s", model ? "-o FILE" : "-m MODEL",
                compile_usage);
        return 2;
    }
    simdbpe_model *m;
    simdbpe_error err;
    double t0 = seconds();
    if (simdbpe_model_open(model, &m, &err) != SIMDBPE_OK) {
        fprintf(stderr, "simdbpe compile: cannot load model: %s\n", err.message);
        return 1;
    }
    double t1 = seconds();
    simdbpe_status st = simdbpe_model_save(m, output, &err);
    if (st != SIMDBPE_OK) {
        fprintf(stderr, "simdbpe compile: %s\n", err.message);
        simdbpe_model_free(m);
        return 1;
    }
    if (!quiet)
        fprintf(stderr,
                "simdbpe: compiled %s -> %s (%zu bytes, %u ids, whole-token shortcut %s; "
                "loaded in %.1f ms)\n",
                model, output, simdbpe_model_compiled_size(m), simdbpe_model_vocab_size(m),
                simdbpe_model_whole_token_exact(m) ? "exact" : "off", (t1 - t0) * 1e3);
    simdbpe_model_free(m);
    return 0;
}
