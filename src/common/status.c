/*
 * status.c - status names and descriptions, errors, and small utilities.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <xxhash.h>

#include "common.h"

const char *simdbpe_version(void)
{
    return SIMDBPE_VERSION_STRING;
}

void simdbpe_free(void *ptr)
{
    free(ptr);
}

const char *simdbpe_strerror(simdbpe_status status)
{
    switch (status) {
#define CASE(name, value, text)                                                                    \
    case SIMDBPE_##name:                                                                           \
        return text;
        SIMDBPE_STATUS_LIST(CASE)
#undef CASE
    }
    return "unknown status";
}

const char *simdbpe_status_name(simdbpe_status status)
{
    switch (status) {
#define CASE(name, value, text)                                                                    \
    case SIMDBPE_##name:                                                                           \
        return #name;
        SIMDBPE_STATUS_LIST(CASE)
#undef CASE
    }
    return "UNKNOWN";
}

void simdbpe__error_clear(simdbpe_error *err)
{
    if (!err)
        return;
    err->status = SIMDBPE_OK;
    err->byte_offset = SIMDBPE_NO_POSITION;
    err->line = 0;
    err->index = SIMDBPE_NO_POSITION;
    err->message[0] = '\0';
}

simdbpe_status simdbpe__fail(simdbpe_error *err, simdbpe_status status, uint64_t byte_offset,
                             uint64_t line, const char *fmt, ...)
{
    if (!err)
        return status;
    err->status = status;
    err->byte_offset = byte_offset;
    err->line = line;
    err->index = SIMDBPE_NO_POSITION;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

void simdbpe__quote(char *out, size_t cap, const uint8_t *s, size_t len)
{
    size_t o = 0;
    if (cap < 8) {
        if (cap)
            out[0] = '\0';
        return;
    }
    out[o++] = '"';
    for (size_t i = 0; i < len; i++) {
        uint8_t c = s[i];
        char tmp[5];
        int n;
        if (c == '"' || c == '\\')
            n = snprintf(tmp, sizeof tmp, "\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            n = snprintf(tmp, sizeof tmp, "\\x%02X", c);
        else {
            tmp[0] = (char)c;
            n = 1;
        }
        if (o + (size_t)n + 5 > cap) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, tmp, (size_t)n);
        o += (size_t)n;
    }
    out[o++] = '"';
    out[o] = '\0';
}

int simdbpe__grow(void **buf, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem_size)
            return -1;
        n *= 2;
    }
    void *p = realloc(*buf, n * elem_size);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

uint64_t simdbpe__hash_bytes(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}
