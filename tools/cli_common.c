/*
 * cli_common.c - argument and message helpers shared by the commands.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

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
