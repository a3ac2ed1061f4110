/*
 * pieces_wide.c - the piece path for the baseline CPU, with 18-bit ids in
 * the hot values (vocabularies of more than 2^16 ids).
 */
#define SIMDBPE__PIECES_FN simdbpe__encode_pieces_wide
#define SIMDBPE__WIDE_IDS 1
#include "pieces.inc.h"
