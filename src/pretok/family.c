/*
 * family.c - the table of pre-tokenizer families (pretok.h).
 *
 * Each family's record lives with its scanners (simdbpe__pretok_NAME:
 * pretok.c, families.c). The list below gives each its value, stored in
 * model files: a new family goes at the end, and nothing is ever removed
 * or reordered. Everything else (names, patterns, messages, the choices of
 * `simdbpe train --pre-tokenizer`) is read from the records.
 *
 * Adding a family: its scanners and its record in a file of its own (and
 * that file in CMakeLists.txt's SIMDBPE_SOURCES; a family that shares
 * another's scanners, as Tekken o200k's, has its record beside them), and
 * its name at the end of SIMDBPE__PRETOK_FAMILIES below. tokenizer.json files with its
 * patterns then load as it, the trainer takes it and writes it, and
 * test_pretok_families and fuzz_pretok_family check its scanners against
 * its patterns; test_pretok_hf asks for HF's pieces of it in
 * tests/data/pretok/ (tests/gen/pretok_families.mjs).
 */
#include <stdio.h>
#include <string.h>

#include "pretok.h"

#include "simdbpe.h"

#define SIMDBPE__PRETOK_FAMILIES(X)                                                                \
    X(gpt2) X(cl100k) X(qwen2) X(o200k) X(deepseek_v3) X(regex) X(tekken) X(kimi)

#define DECLARE(fam) extern const simdbpe__pretok_family simdbpe__pretok_##fam;
SIMDBPE__PRETOK_FAMILIES(DECLARE)
#undef DECLARE

#define ENTRY(fam) &simdbpe__pretok_##fam,
static const simdbpe__pretok_family *const FAMILIES[] = {SIMDBPE__PRETOK_FAMILIES(ENTRY)};
#undef ENTRY
#define N_FAMILIES (sizeof FAMILIES / sizeof FAMILIES[0])

/* The constants of pretok.h name these values. */
_Static_assert(SIMDBPE__PRETOK_KIMI < N_FAMILIES, "a named family is not in the table");

const simdbpe__pretok_family *simdbpe__pretok_family_of(unsigned kind)
{
    return kind < N_FAMILIES ? FAMILIES[kind] : NULL;
}

const char *simdbpe__pretok_kind_name(unsigned kind)
{
    return kind < N_FAMILIES ? FAMILIES[kind]->name : NULL;
}

int simdbpe__pretok_kind_of(const char *name)
{
    for (unsigned k = 0; k < N_FAMILIES; k++)
        if (strcmp(FAMILIES[k]->name, name) == 0)
            return (int)k;
    return -1;
}

void simdbpe__pretok_names(char *out, size_t cap, const char *sep)
{
    size_t len = 0;
    if (cap)
        out[0] = '\0';
    for (unsigned k = 0; k < N_FAMILIES && len < cap; k++) {
        if (FAMILIES[k]->generic)
            continue;
        int w = snprintf(out + len, cap - len, "%s%s", k ? sep : "", FAMILIES[k]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

size_t simdbpe__pretok_family_piece_end(simdbpe__pretok_kind kind, const uint8_t *s, size_t n,
                                        size_t i)
{
    return FAMILIES[kind]->piece_end(s, n, i);
}

/* The families the trainer takes, in the table's order: all but the
 * generic one. */
const char *simdbpe_pretokenizer_name_at(size_t i)
{
    for (unsigned k = 0; k < N_FAMILIES; k++)
        if (!FAMILIES[k]->generic && i-- == 0)
            return FAMILIES[k]->name;
    return NULL;
}
