/*
 * dispatch.c - choosing a kernel set for this CPU.
 *
 * Sets are listed best first. The SIMD sets exist only in x86 builds that
 * are not SIMDBPE_SCALAR_ONLY (SIMDBPE_HAVE_X86_KERNELS); each is offered
 * only if the CPU reports its instruction set, so a forced but unsupported
 * set is refused rather than run.
 */
#include <pthread.h>
#include <string.h>

#include "kernels.h"

static const simdbpe__kernels *available[4];
static pthread_once_t available_once = PTHREAD_ONCE_INIT;

/* Fills `available` (once: pthread_once). */
static void fill(void)
{
    const simdbpe__kernels *list[4];
    size_t n = 0;
#if defined(SIMDBPE_HAVE_X86_KERNELS)
    __builtin_cpu_init();
    /* The AVX2 set (and the encoder's code built with it) may use BMI1
     * and BMI2 too. */
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
        __builtin_cpu_supports("bmi2"))
        list[n++] = &simdbpe__kernels_avx2;
    if (__builtin_cpu_supports("sse4.2"))
        list[n++] = &simdbpe__kernels_sse42;
#endif
    list[n++] = &simdbpe__kernels_scalar;
    list[n] = NULL;
    memcpy(available, list, sizeof list);
}

static void detect(void)
{
    pthread_once(&available_once, fill);
}

const simdbpe__kernels *const *simdbpe__kernels_available(void)
{
    detect();
    return available;
}

const simdbpe__kernels *simdbpe__kernels_select(const char *force)
{
    detect();
    if (!force || !*force)
        return available[0];
    for (size_t i = 0; available[i]; i++)
        if (strcmp(available[i]->name, force) == 0)
            return available[i];
    return NULL;
}
