/*
 * cli.h - what the simdbpe commands share: entry points, exit codes and
 * small helpers for arguments and messages.
 *
 * Every command is a function `int cmd_NAME(int argc, char **argv)` that
 * gets the arguments after the command name and returns the exit code:
 * 0 success, 1 bad input or failure, 2 bad usage. Only tools/ prints;
 * the library returns statuses.
 */
#ifndef SIMDBPE_CLI_H
#define SIMDBPE_CLI_H

#include <stddef.h>
#include <stdint.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* Commands. `name` is argv[0] of the command ("encode" or "count"). */
int cmd_encode(const char *name, int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* The top-level usage text (simdbpe --help), and encode's and count's. */
extern const char cli_usage_text[];
extern const char cli_encode_help[];
extern const char cli_count_help[];

/* What a usage error of these commands ends with. */
#define CLI_USAGE_HINT "Try 'simdbpe --help'.\n"

/* "simdbpe: <message>\n" and CLI_USAGE_HINT on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "simdbpe: <message>" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* On SIGINT, SIGTERM, SIGHUP and SIGPIPE: remove the library's temporary
 * outputs and locks (simdbpe_dataset_remove_temporaries), then die of the
 * signal, so that an interrupted command leaves no partial file. */
void cli_cleanup_on_signals(void);

/* A library message with the options it names in its words (`json_key`)
 * turned into the flags that set them (--json-key): malloc'd, or NULL when
 * out of memory. */
char *cli_flags(const char *msg);
/* cli_error and cli_usage_error of a library message, in flags. */
void cli_library_error(const char *msg);
int cli_library_usage_error(const char *msg);

/* "<stdin>" for "-", else the path itself. */
const char *cli_display_name(const char *path);

/* The index of `value` in the NULL-terminated `names`, or -1. */
int cli_pick(const char *value, const char *const *names);

/* Parses a non-negative count such as "100000000", "1e8", "64k", "2M".
 * Returns 0 and sets *out, or -1. */
int cli_parse_count(const char *s, uint64_t *out);

/* Seconds on a monotonic clock. */
double cli_now(void);

/* This process's peak resident memory in KB (VmHWM: since its exec, not
 * what its parent had before it), or -1 where /proc does not tell. */
long cli_peak_rss_kb(void);

/* Decodes \n \t \r \\ and \xHH in a command-line argument into out (room
 * for strlen(in) bytes); returns the decoded length, or -1 for an unknown
 * escape or a backslash at the end. */
long cli_unescape(const char *in, char *out);

#endif
