/*
 * options.c - the command-line parser of options.h.
 *
 * Options are found by whole name only (no abbreviations), so adding an
 * option never changes what an existing command line means.
 */
#include <stdio.h>
#include <string.h>

#include "options.h"

/* Every command has it; the parser answers it itself. */
static const opt_spec help_options[] = {{"--help", 'h', 0}, {NULL, 0, 0}};

/* The length of the option's name in `arg`: a long option ends at '='.
 * Short options never carry a value, so "-m=x" is a name (an unknown one). */
static size_t name_length(const char *arg)
{
    const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    return eq ? (size_t)(eq - arg) : strlen(arg);
}

/* The entry of `options` that the first `len` bytes of `arg` name, or NULL. */
static const opt_spec *find(const opt_spec *options, const char *arg, size_t len)
{
    for (const opt_spec *o = options; o->name; o++) {
        if (o->short_name && len == 2 && arg[1] == o->short_name)
            return o;
        if (strlen(o->name) == len && memcmp(o->name, arg, len) == 0)
            return o;
    }
    return NULL;
}

/* "PREFIX: unknown option '--name' for NAME" and the hint. */
static int unknown_option(const opt_command *cmd, const char *arg, size_t len)
{
    fprintf(stderr, "%s: unknown option '%.*s'", cmd->prefix, (int)len, arg);
    if (cmd->name)
        fprintf(stderr, " for %s", cmd->name);
    fprintf(stderr, "\n%s", cmd->hint);
    return OPT_BAD_USAGE;
}

/* "PREFIX: option '--name' <why>" and the hint. */
static int misused_option(const opt_command *cmd, const char *arg, size_t len, const char *why)
{
    fprintf(stderr, "%s: option '%.*s' %s\n%s", cmd->prefix, (int)len, arg, why, cmd->hint);
    return OPT_BAD_USAGE;
}

/* The option at argv[*i]; moves *i past a value given as the next argument. */
static int take_option(const opt_command *cmd, int argc, char **argv, int *i, opt_fn fn,
                       void *ctx)
{
    const char *arg = argv[*i];
    size_t len = name_length(arg);
    const char *value = arg[len] ? arg + len + 1 : NULL;
    const opt_spec *help = find(help_options, arg, len);
    const opt_spec *opt = help ? help : find(cmd->options, arg, len);
    if (!opt)
        return unknown_option(cmd, arg, len);
    if (!opt->takes_value && value)
        return misused_option(cmd, arg, len, "takes no value");
    if (opt->takes_value && !value) {
        if (*i + 1 >= argc)
            return misused_option(cmd, arg, len, "needs a value");
        value = argv[++*i];
    }
    if (help) {
        fputs(cmd->help, stdout);
        return OPT_HELP;
    }
    return fn(ctx, opt->name, value);
}

int opt_parse(const opt_command *cmd, int argc, char **argv, opt_fn fn, void *ctx)
{
    int operands_only = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (operands_only || a[0] != '-' || a[1] == '\0')
            rc = fn(ctx, NULL, a); /* "-" is standard input: an operand */
        else if (strcmp(a, "--") == 0)
            operands_only = 1;
        else
            rc = take_option(cmd, argc, argv, &i, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}
