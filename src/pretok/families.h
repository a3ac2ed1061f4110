/*
 * families.h - what the block scanner of the cl100k, Qwen2, o200k,
 * DeepSeek-V3, Tekken and Kimi K2 pre-tokenizers (families_scan.c) takes from their piece
 * scanners (families.c), and gives back. Internal to src/pretok.
 */
#ifndef SIMDBPE_PRETOK_FAMILIES_H
#define SIMDBPE_PRETOK_FAMILIES_H

#include <stddef.h>
#include <stdint.h>

#include "pretok.h"

/* The families the block scanner serves (Tekken's rules are o200k's
 * without the contraction suffix, with Qwen2's single \p{N}; Kimi K2's
 * o200k's with Han apart). */
enum {
    SIMDBPE__FAM_CL100K,
    SIMDBPE__FAM_QWEN2,
    SIMDBPE__FAM_O200K,
    SIMDBPE__FAM_DEEPSEEK,
    SIMDBPE__FAM_TEKKEN,
    SIMDBPE__FAM_KIMI
};

/* Whether cp is in Script=Han (Unicode 16.0.0), for Kimi K2's scanners;
 * valid once a family scanner has been entered (families.c). */
int simdbpe__fam_is_han(uint32_t cp);

/* The end of family `fam`'s piece that starts at s[i] (i < n, a piece
 * start), one code point at a time (families.c). */
size_t simdbpe__fam_piece_end(int fam, const uint8_t *s, size_t n, size_t i);

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i] == '\'': its length, or 0
 * (families.c). */
size_t simdbpe__fam_contraction(const uint8_t *s, size_t n, size_t i);

/* The piece starts of the blocks of s[lo..hi) into starts[] (zeroed by
 * the caller), lo the first byte of the chunk that follows the one the
 * state last scanned (families_scan.c). */
void simdbpe__fam_scan(int fam, simdbpe__pretok_state *st, size_t lo, size_t hi,
                       uint64_t *starts);

#endif
