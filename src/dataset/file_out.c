/*
 * file_out.c - the engine's file handling for the library's callers
 * (simdbpe_dataset.h): simdbpe_dataset_file_out over outfile.h,
 * simdbpe_dataset_input over reader_source.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbpe_dataset.h"

#include "outfile.h"
#include "reader_source.h"

struct simdbpe_dataset_file_out {
    outfile o;
};

static void set_error(simdbpe_error *err, simdbpe_status st, const char *msg)
{
    if (!err)
        return;
    err->status = st;
    err->byte_offset = err->index = SIMDBPE_NO_POSITION;
    err->line = 0;
    snprintf(err->message, sizeof err->message, "%s", msg);
}

/* An errno as a status, with strerror's words in err. */
static simdbpe_status fail(simdbpe_error *err, int e)
{
    simdbpe_status st = e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO;
    set_error(err, st, strerror(e));
    return st;
}

simdbpe_status simdbpe_dataset_file_open(const char *path, simdbpe_dataset_file_out **out,
                                         simdbpe_error *err)
{
    *out = NULL;
    simdbpe_dataset_file_out *f = calloc(1, sizeof *f);
    if (!f)
        return fail(err, ENOMEM);
    int e = simdbpe__outfile_open(&f->o, path);
    if (e) {
        simdbpe__outfile_discard(&f->o);
        free(f);
        return fail(err, e);
    }
    *out = f;
    return SIMDBPE_OK;
}

void simdbpe_dataset_file_write(simdbpe_dataset_file_out *f, const void *data, size_t len)
{
    simdbpe__outfile_write(&f->o, data, len);
}

simdbpe_status simdbpe_dataset_file_commit(simdbpe_dataset_file_out *f, simdbpe_error *err)
{
    int e = simdbpe__outfile_close(&f->o);
    if (!e)
        e = simdbpe__outfile_commit(&f->o);
    return e ? fail(err, e) : SIMDBPE_OK;
}

void simdbpe_dataset_file_discard(simdbpe_dataset_file_out *f)
{
    if (!f)
        return;
    simdbpe__outfile_discard(&f->o);
    free(f);
}
simdbpe_status simdbpe_dataset_input_open(const char *path, simdbpe_dataset_input **out,
                                          simdbpe_error *err)
{
    source *s = NULL;
    int e = simdbpe__source_open(&s, path);
    *out = (simdbpe_dataset_input *)s;
    if (!e)
        return SIMDBPE_OK;
    simdbpe_status st = e == ENOMEM ? SIMDBPE_ERR_NOMEM : SIMDBPE_ERR_IO;
    set_error(err, st, strerror(e));
    return st;
}

long simdbpe_dataset_input_read(simdbpe_dataset_input *in, void *buf, size_t cap,
                                simdbpe_error *err)
{
    char msg[256];
    ssize_t got = simdbpe__source_read((source *)in, buf, cap, msg, sizeof msg);
    if (got < 0)
        set_error(err, SIMDBPE_ERR_IO, msg);
    return (long)got;
}

void simdbpe_dataset_input_close(simdbpe_dataset_input *in)
{
    if (in)
        simdbpe__source_close((source *)in);
}
