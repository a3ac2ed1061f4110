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
#include "model_open.h"
#include "options.h"

static const char compile_usage[] =
    "usage: simdbpe compile -m MODEL -o FILE.sbpe [-q]\n"
    "\n"
    "Writes MODEL (any model -m takes: a built-in name, a tokenizer.json, a .tiktoken\n"
    "or .sbpe file, a model directory, ORG/NAME[@REVISION] in the Hugging Face cache)\n"
    "as a compiled model that -m FILE.sbpe loads in about a millisecond.\n";

static const opt_spec compile_options[] = {
    {"--model", 'm', 1}, {"--output", 'o', 1}, {"--quiet", 'q', 0}, {NULL, 0, 0}};

typedef struct compile_args {
    const char *model, *output;
    int quiet;
} compile_args;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One option or operand (opt_fn of options.h); compile takes no operands. */
static int set_option(void *ctx, const char *name, const char *val)
{
    compile_args *a = ctx;
    if (!name) {
        fprintf(stderr, "simdbpe compile: unexpected argument '%s'\n%s", val, compile_usage);
        return 2;
    }
    if (!strcmp(name, "--model"))
        a->model = val;
    else if (!strcmp(name, "--output"))
        a->output = val;
    else /* --quiet */
        a->quiet = 1;
    return 0;
}

int simdbpe_cmd_compile(int argc, char **argv)
{
    static const opt_command cmd = {NULL, compile_options, compile_usage, "simdbpe compile",
                                    compile_usage};
    compile_args a = {NULL, NULL, 0};
    int rc = opt_parse(&cmd, argc - 1, argv + 1, set_option, &a);
    if (rc)
        return rc == OPT_HELP ? 0 : rc;
    if (!a.model || !a.output) {
        fprintf(stderr, "simdbpe compile: %s is required\n%s", a.model ? "-o FILE" : "-m MODEL",
                compile_usage);
        return 2;
    }
    simdbpe_model *m;
    simdbpe_error err;
    double t0 = seconds();
    if (cli_model_open(a.model, &m))
        return 1;
    double t1 = seconds();
    simdbpe_status st = simdbpe_model_save(m, a.output, &err);
    if (st != SIMDBPE_OK) {
        fprintf(stderr, "simdbpe compile: %s\n", err.message);
        simdbpe_model_free(m);
        return 1;
    }
    if (!a.quiet)
        fprintf(stderr,
                "simdbpe: compiled %s -> %s (%zu bytes, %u ids, whole-token shortcut %s; "
                "loaded in %.1f ms)\n",
                a.model, a.output, simdbpe_model_compiled_size(m), simdbpe_model_vocab_size(m),
                simdbpe_model_whole_token_exact(m) ? "exact" : "off", (t1 - t0) * 1e3);
    simdbpe_model_free(m);
    return 0;
}
