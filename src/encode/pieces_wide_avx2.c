/*
 * pieces_wide_avx2.c - pieces_avx2.c with 18-bit ids in the hot values
 * (vocabularies of more than 2^16 ids).
 */
#define SIMDBPE__PIECES_FN simdbpe__encode_pieces_wide_avx2
#define SIMDBPE__WIDE_IDS 1
#include "pieces.inc.h"
