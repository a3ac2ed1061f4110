/*
 * dispatch.c - choosing a kernel set for this CPU.
 */
#include <string.h>

#include "kernels.h"

static const simdbpe__kernels *const all_sets[] = {
    &simdbpe__kernels_scalar,
    NULL,
};

const simdbpe__kernels *const *simdbpe__kernels_available(void)
{
    return all_sets;
}

const simdbpe__kernels *simdbpe__kernels_select(const char *force)
{
    if (!force || !*force)
        return all_sets[0];
    for (size_t i = 0; all_sets[i]; i++)
        if (strcmp(all_sets[i]->name, force) == 0)
            return all_sets[i];
    return NULL;
}
