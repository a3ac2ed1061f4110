/*
 * exact_ref.h - the reference of fuzz_exact: the textbook BPE of
 * tests/ref_bpe.h on the GPT-2 model files, with its answers remembered.
 *
 * exact_ref.c is compiled without coverage instrumentation (tests/
 * fuzz.cmake): libFuzzer should be steered by the library's code, not by
 * the reference's loops, which with instrumentation took most of each
 * input's time.
 */
#ifndef SIMDBPE_EXACT_REF_H
#define SIMDBPE_EXACT_REF_H

#include <stddef.h>
#include <stdint.h>

/* The ids the textbook BPE gives the pre-token w[0..len) (len >= 1), in
 * ids[] (room for len ids); returns their number, or -1 if a final
 * symbol is not in vocab.json. */
long exact_ref_encode(const uint8_t *w, size_t len, uint32_t *ids);

#endif
