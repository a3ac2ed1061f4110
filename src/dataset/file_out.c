/*
 * file_out.c - simdbpe_dataset_file_out: outfile.h for the library's
 * callers (simdbpe_dataset.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe_dataset.h"

#include "outfile.h"

struct simdbpe_dataset_file_out {
    outfile o;
    char *path;
};

static simdbpe_status fail(simdbpe_error *err, const char *path, int e)
{
    simdbpe_status st = e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO;
    if (err) {
        err->status = st;
        err->byte_offset = err->index = SIMDBPE_NO_POSITION;
        err->line = 0;
        snprintf(err->message, sizeof err->message, "%s: %s", path, strerror(e));
    }
    return st;
}

simdbpe_status simdbpe_dataset_file_open(const char *path, simdbpe_dataset_file_out **out,
                                         simdbpe_error *err)
{
    *out = NULL;
    simdbpe_dataset_file_out *f = calloc(1, sizeof *f);
    char *p = strdup(path);
    if (!f || !p) {
        free(f);
        free(p);
        return fail(err, path, ENOMEM);
    }
    int e = outfile_open(&f->o, path);
    if (e) {
        outfile_discard(&f->o);
        free(f);
        free(p);
        return fail(err, path, e);
    }
    f->path = p;
    *out = f;
    return SIMDBPE_OK;
}

void simdbpe_dataset_file_write(simdbpe_dataset_file_out *f, const void *data, size_t len)
{
    outfile_write(&f->o, data, len);
}

simdbpe_status simdbpe_dataset_file_commit(simdbpe_dataset_file_out *f, simdbpe_error *err)
{
    int e = outfile_close(&f->o);
    if (!e)
        e = outfile_commit(&f->o);
    return e ? fail(err, f->path, e) : SIMDBPE_OK;
}

void simdbpe_dataset_file_discard(simdbpe_dataset_file_out *f)
{
    if (!f)
        return;
    outfile_discard(&f->o);
    free(f->path);
    free(f);
}
