/*
 * pieces_avx2.c - the piece path compiled for AVX2, BMI1 and BMI2 (x86
 * builds; used with the AVX2 kernel set, which needs the same).
 */
#define SIMDBPE__PIECES_FN simdbpe__encode_pieces_avx2
#include "pieces.inc.h"
