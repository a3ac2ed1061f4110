/*
 * bpe_small_avx2.c - BPE of small words (bpe_small.inc.h) compiled for
 * AVX2 (x86 builds; an encoder whose kernel set is the AVX2 one uses it).
 */
#include "model.h"

#define SMALL_WORD SIMDBPE__SMALL_WORD
#define SIMDBPE__BPE_SMALL_FN simdbpe__bpe_small_avx2
#include "bpe_small.inc.h"
