/* TEMPORARY LOCAL PLACEHOLDER - NOT TO BE COMMITTED */
#include "pretok.h"
size_t simdbpe__pretok_family_piece_end(simdbpe__pretok_kind kind, const uint8_t *s, size_t n,
                                        size_t i)
{
    (void)kind;
    return simdbpe__pretok_piece_end(s, n, i);
}
