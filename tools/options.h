/*
 * options.h - the one command-line parser every simdbpe command uses.
 *
 * A command describes its options in a table and gets a callback per
 * option and per operand, in command-line order:
 *
 *   --name VALUE, --name=VALUE, -n VALUE   an option that takes a value
 *   --name, -n                             a flag (the callback gets NULL)
 *   -h, --help                             the command's help on stdout
 *   -, or anything not starting with '-'   an operand (a file, a part)
 *   --                                     every later argument is an operand
 *
 * Short options are whole words ("-m gpt2", never "-mgpt2" or "-m=gpt2").
 * A bad option (unknown, a value missing, a value given to a flag) is
 * reported by the parser itself, naming the option as written without its
 * value, so every command words these errors the same way.
 */
#ifndef SIMDBPE_OPTIONS_H
#define SIMDBPE_OPTIONS_H

/* One option of a command. Tables end with an entry whose name is NULL. */
typedef struct opt_spec {
    const char *name;  /* long form with its dashes: "--model" */
    char short_name;   /* 'm' for "-m", or 0 */
    int takes_value;
} opt_spec;

/*
 * Gets each option in turn: `name` is its long form (whichever form was
 * written) and `value` its value or NULL for a flag; for an operand `name`
 * is NULL and `value` the argument. Returns 0 to go on, or an exit code
 * that stops the parse (after printing why).
 */
typedef int (*opt_fn)(void *ctx, const char *name, const char *value);

typedef struct opt_command {
    const char *name;         /* "unknown option '-x' for NAME"; NULL: no "for" */
    const opt_spec *options;  /* without -h/--help, which every command has */
    const char *help;         /* printed on stdout for -h or --help */
    /* A bad option is reported as "PREFIX: <message>\n" then `hint`, in the
     * style of the command's other usage errors. */
    const char *prefix;
    const char *hint;
} opt_command;

/* The exit code after a bad option. */
#define OPT_BAD_USAGE 2

/* opt_parse()'s return when -h or --help printed the help: exit with 0. */
#define OPT_HELP (-1)

/*
 * Parses argv[0..argc-1] (the arguments after the command name) against
 * cmd's table, calling fn(ctx, ...) for each option and operand. Returns
 * 0, OPT_HELP, OPT_BAD_USAGE, or the first nonzero return of fn.
 */
int opt_parse(const opt_command *cmd, int argc, char **argv, opt_fn fn, void *ctx);

#endif
