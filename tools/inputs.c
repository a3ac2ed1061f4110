/*
 * inputs.c - expanding input arguments into files (see inputs.h): the
 * library's simdbpe_dataset_expand_inputs, its errors printed.
 */
#include "inputs.h"

#include <string.h>

#include "simdbpe_dataset.h"

#include "cli.h"

int inputs_expand(char **args, int n_args, file_list *out)
{
    memset(out, 0, sizeof *out);
    simdbpe_error err;
    if (simdbpe_dataset_expand_inputs((const char *const *)args, (size_t)n_args, &out->paths,
                                      &out->n, &err) != SIMDBPE_OK) {
        cli_error("%s", err.message);
        return EXIT_FAIL;
    }
    out->cap = out->n;
    return 0;
}

void inputs_free(file_list *l)
{
    simdbpe_dataset_inputs_free(l->paths, l->n);
    memset(l, 0, sizeof *l);
}
