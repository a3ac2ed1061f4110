/*
 * pieces.c - the piece path for the baseline CPU (every build).
 */
#define SIMDBPE__PIECES_FN simdbpe__encode_pieces
#include "pieces.inc.h"
