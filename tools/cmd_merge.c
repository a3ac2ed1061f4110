/*
 * cmd_merge.c - `simdbpe merge`: arguments and messages around
 * simdbpe_dataset_merge (simdbpe_dataset.h).
 *
 *   simdbpe merge --output-format megatron|u16|u32|text -o OUT [PART...]
 *
 * PART is what one rank wrote: a Megatron prefix (PART.bin + PART.idx) or
 * a raw file. Without PARTs, the parts of `simdbpe encode -o OUT` run with
 * ranks are found as OUT.RRRRR-of-WWWWW.done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe_dataset.h"

#include "cli.h"
#include "options.h"

typedef struct merge_args {
    const char *format; /* --output-format's name, or NULL */
    const char *output;
    int quiet;
    const char **names; /* the parts named */
    size_t n_names;
} merge_args;

static const opt_spec merge_options[] = {
    {"--output", 'o', 1}, {"--output-format", 0, 1}, {"--quiet", 'q', 0}, {NULL, 0, 0}};

/* One option or part (opt_fn of options.h). */
static int set_option(void *ctx, const char *name, const char *val)
{
    merge_args *a = ctx;
    if (!name) {
        a->names[a->n_names++] = val; /* an element of argv */
    } else if (!strcmp(name, "--output")) {
        a->output = val;
    } else if (!strcmp(name, "--quiet")) {
        a->quiet = 1;
    } else { /* --output-format, checked by the library */
        a->format = val;
    }
    return 0;
}

/* Returns 0, OPT_HELP (the help was printed) or an exit code. */
static int parse_args(merge_args *a, int argc, char **argv)
{
    static const opt_command cmd = {"merge", merge_options, cli_usage_text, "simdbpe",
                                    CLI_USAGE_HINT};
    a->names = calloc((size_t)argc + 1, sizeof *a->names);
    if (!a->names)
        return cli_usage_error("out of memory");
    int rc = opt_parse(&cmd, argc, argv, set_option, a);
    if (rc)
        return rc;
    if (!a->output || !strcmp(a->output, "-"))
        return cli_usage_error("merge: give -o OUT");
    if (!a->format)
        return cli_usage_error("merge: give --output-format megatron|u16|u32|text");
    return 0;
}

/* Notices of the library (removed leftovers), as messages. */
static void print_notice(void *user, simdbpe_dataset_event event, const char *text)
{
    (void)user;
    (void)event;
    cli_error("%s", text);
}

int cmd_merge(int argc, char **argv)
{
    merge_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc) {
        free(a.names);
        return rc == OPT_HELP ? 0 : rc;
    }
    simdbpe_merge_options o = {SIMDBPE_OUTPUT_TEXT, a.output, a.quiet ? NULL : print_notice,
                               NULL};
    if (simdbpe_output_format_of(a.format, &o.format) != SIMDBPE_OK) {
        free(a.names);
        return cli_usage_error("merge: bad --output-format '%s' (megatron, u16, u32 or text; "
                               "llm.c and datatrove parts are read as they are)",
                               a.format);
    }
    simdbpe_merge_result r;
    simdbpe_error err;
    cli_cleanup_on_signals();
    simdbpe_status st = simdbpe_dataset_merge(&o, a.names, a.n_names, &r, &err);
    free(a.names);
    if (st != SIMDBPE_OK) {
        cli_error("%s", r.message ? r.message : err.message);
        simdbpe_free(r.message);
        return st == SIMDBPE_ERR_INVALID_ARG ? EXIT_USAGE : EXIT_FAIL;
    }
    if (!a.quiet)
        cli_error("merged %zu part%s into %s: %llu documents, %llu tokens%s", r.parts,
                  r.parts == 1 ? "" : "s", a.output, (unsigned long long)r.documents,
                  (unsigned long long)r.tokens,
                  r.in_file_order ? " (in the order of the original input files)"
                                  : " (concatenated)");
    return 0;
}
