/*
 * json_escape.h - JSON string escapes (internal), for the readers that
 * parse JSON strings themselves on their fast paths (vocab.json,
 * model/load.c; JSON Lines, dataset/reader_jsonl.c).
 */
#ifndef SIMDBPE_JSON_ESCAPE_H
#define SIMDBPE_JSON_ESCAPE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The escape s[0..n) begins with, after its backslash: \" \\ \/ \b \f \n
 * \r \t or \uXXXX. Sets *cp to the code point it stands for and returns
 * the bytes it takes, or 0 if it is no escape. A \uD800-\uDBFF followed by
 * a \uDC00-\uDFFF is one pair (one code point, 10 bytes); any other
 * surrogate is returned alone, for the caller to refuse or replace.
 */
size_t simdbpe__json_escape(const char *s, size_t n, uint32_t *cp);

/* Whether cp is a surrogate (U+D800-U+DFFF), which UTF-8 cannot hold. */
static inline int simdbpe__is_surrogate(uint32_t cp)
{
    return cp >= 0xD800 && cp <= 0xDFFF;
}

#endif
