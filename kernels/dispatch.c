/*
 * dispatch.c - choosing a kernel set for this CPU.
 *
 * Sets are listed best first. The SIMD sets exist only in x86 builds that
 * are not SIMDBPE_SCALAR_ONLY (SIMDBPE_HAVE_X86_KERNELS); each is offered
 * only if the CPU reports its instruction set, so a forced but unsupported
 * set is refused rather than run.
 */
#include <string.h>

#include "kernels.h"

static const simdbpe__kernels *available[4];
static int available_ready;

/* Fills `available` once. Racing threads compute the same list, so the
 * race is harmless; the flag is written last. */
static void detect(void)
{
    if (__atomic_load_n(&available_ready, __ATOMIC_ACQUIRE))
        return;
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
    __atomic_store_n(&available_ready, 1, __ATOMIC_RELEASE);
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
