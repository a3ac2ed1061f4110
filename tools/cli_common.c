/*
 * cli_common.c - argument and message helpers shared by the commands.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbpe_dataset.h"

#include "cli.h"

static void on_fatal_signal(int sig)
{
    simdbpe_dataset_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("simdbpe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n" CLI_USAGE_HINT, stderr);
    va_end(ap);
    return EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("simdbpe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The library's option fields (simdbpe_dataset.h) and the flags that set
 * them. */
static const char *const FLAGS[][2] = {
    {"input_format", "--input-format"}, {"json_key", "--json-key"},
    {"doc_separator", "--doc-separator"}, {"output_format", "--output-format"},
    {"output", "-o"}, {"eot_token", "--eot-token"}, {"eot", "--eot"}, {"dtype", "--dtype"},
    {"shard_tokens", "--shard-tokens"}, {"threads", "--threads"}, {"cache_mb", "--cache-mb"},
    {"batch_bytes", "--batch-bytes"}, {"errors", "--errors"}, {"skip_errors", "--on-error skip"},
    {"special", "--special"}, {"add_special_tokens", "--add-special-tokens"},
    {"format", "--output-format"}};

char *cli_flags(const char *msg)
{
    size_t n = strlen(msg);
    char *out = malloc(3 * n + 64);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        const char *close = msg[i] == '`' ? strchr(msg + i + 1, '`') : NULL;
        if (!close) {
            out[k++] = msg[i++];
            continue;
        }
        size_t len = (size_t)(close - (msg + i + 1));
        const char *flag = NULL;
        for (size_t f = 0; f < sizeof FLAGS / sizeof *FLAGS && !flag; f++)
            if (strlen(FLAGS[f][0]) == len && !memcmp(FLAGS[f][0], msg + i + 1, len))
                flag = FLAGS[f][1];
        if (flag) {
            memcpy(out + k, flag, strlen(flag));
            k += strlen(flag);
        } else {
            memcpy(out + k, msg + i + 1, len);
            k += len;
        }
        i += len + 2;
    }
    out[k] = '\0';
    return out;
}

void cli_library_error(const char *msg)
{
    char *m = cli_flags(msg);
    cli_error("%s", m ? m : msg);
    free(m);
}

int cli_library_usage_error(const char *msg)
{
    char *m = cli_flags(msg);
    int rc = cli_usage_error("%s", m ? m : msg);
    free(m);
    return rc;
}

const char *cli_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

int cli_pick(const char *value, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

int cli_parse_count(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    double v = strtod(s, &end);
    double scale = 1;
    if (*end == 'k' || *end == 'K')
        scale = 1e3, end++;
    else if (*end == 'M')
        scale = 1e6, end++;
    else if (*end == 'G')
        scale = 1e9, end++;
    v *= scale;
    /* Counts are whole numbers below 2^63 ("1.5" is a mistake, not 1). */
    if (*end || v < 0 || v >= 9.2e18 || v != (double)(uint64_t)v)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long cli_unescape(const char *in, char *out)
{
    size_t o = 0;
    for (size_t i = 0; in[i]; i++) {
        if (in[i] != '\\') {
            out[o++] = in[i];
            continue;
        }
        char c = in[++i];
        if (c == 'n')
            out[o++] = '\n';
        else if (c == 't')
            out[o++] = '\t';
        else if (c == 'r')
            out[o++] = '\r';
        else if (c == '\\')
            out[o++] = '\\';
        else if (c == 'x' && hex_digit(in[i + 1]) >= 0 && hex_digit(in[i + 2]) >= 0) {
            out[o++] = (char)(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
            i += 2;
        } else {
            return -1; /* an unknown escape, or a backslash at the end */
        }
    }
    return (long)o;
}

long cli_peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}
