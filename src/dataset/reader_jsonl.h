/*
 * reader_jsonl.h - the text field of one JSON Lines record.
 *
 * simdbpe__jsonl_extract() returns the string at a key path ("text", or "a.b" for
 * {"a": {"b": "..."}}) of a record that is one JSON object. A hand-written
 * fast path parses the whole record (RFC 8259: it must be valid JSON, not
 * just the part we use) and unescapes the string, returning a pointer into
 * the record when the string has no escapes. jansson is the arbiter:
 *   - for the message when a record is malformed (jansson's own words and
 *     byte position);
 *   - for anything the fast path does not handle itself: nesting deeper
 *     than 64 levels, a record that is not an object.
 * Both agree on everything else (tests/dataset/test_jsonl.c checks this),
 * including duplicate keys, where the last one wins as in jansson.
 *
 * Deliberate differences: valid JSON that jansson refuses is read (RFC 8259
 * sets no limit on numbers, and allows \u0000 in a key): a number beyond a
 * 64-bit integer or a double, a NUL in a key. And two about the extracted
 * text only:
 *   - its raw bytes are not checked for UTF-8 here: the encoder does that
 *     and either reports the byte offset or, with --errors replace,
 *     substitutes U+FFFD, as for text files. Elsewhere in the record,
 *     invalid UTF-8 makes the record malformed, as in jansson;
 *   - an escaped lone surrogate (\uD800 without its pair, or a lone
 *     \uDC00) is JSONL_SURROGATE, or U+FFFD when `replace` is set.
 */
#ifndef SIMDBPE_READER_JSONL_H
#define SIMDBPE_READER_JSONL_H

#include <stddef.h>

typedef struct jsonl_key {
    char **parts;  /* the path, split at '.' */
    size_t *lens;
    size_t n;
    const char *spec; /* as given, for messages */
} jsonl_key;

/* Splits "a.b.c" into parts. Returns 0, or -1 for an empty part. */
int simdbpe__jsonl_key_parse(jsonl_key *k, const char *spec);
void simdbpe__jsonl_key_free(jsonl_key *k);

typedef struct jsonl_buf {
    char *p;
    size_t len, cap;
    int fixed; /* p is not ours: never reallocated */
} jsonl_buf;

void simdbpe__jsonl_buf_free(jsonl_buf *b);

typedef enum jsonl_status {
    JSONL_OK = 0,
    JSONL_MALFORMED,  /* not valid JSON */
    JSONL_NOT_OBJECT, /* valid JSON, but not an object (or a path step is not) */
    JSONL_NO_KEY,     /* the key path is absent */
    JSONL_NOT_STRING, /* the value is not a string */
    JSONL_SURROGATE,  /* a lone surrogate escape in the value (strict mode) */
    JSONL_NOMEM
} jsonl_status;

/*
 * Extracts the string at `key` from the record line[0..len) (without its
 * newline). On JSONL_OK, *text and *text_len are the unescaped value: either
 * inside `line` or in `scratch`. Otherwise `msg` gets a one-line reason
 * such as "malformed JSON: end of file expected near ',' (byte 17)".
 * `used_jansson` (may be NULL) is set to 1 when jansson decided.
 */
jsonl_status simdbpe__jsonl_extract(const char *line, size_t len, const jsonl_key *key, int replace,
                                    jsonl_buf *scratch, const char **text, size_t *text_len,
                                    char *msg, size_t msg_cap, int *used_jansson);

/*
 * simdbpe__jsonl_extract for records that may be large: an escaped value is
 * unescaped inside `line` (only on JSONL_OK), so that a 200 MB record does
 * not cost twice its size. `scratch` serves the rare records that jansson
 * decides. The value is scanned twice (checked, then unescaped), which is
 * why small records take simdbpe__jsonl_extract.
 */
jsonl_status simdbpe__jsonl_extract_in_place(char *line, size_t len, const jsonl_key *key,
                                             int replace, jsonl_buf *scratch, const char **text,
                                             size_t *text_len, char *msg, size_t msg_cap);

/* Only the fast path, or only jansson (for tests that compare them).
 * simdbpe__jsonl_fast() returns -1 where it would hand over to jansson. */
int simdbpe__jsonl_fast(const char *line, size_t len, const jsonl_key *key, int replace,
                        jsonl_buf *scratch, const char **text, size_t *text_len, char *msg,
                        size_t msg_cap);
jsonl_status simdbpe__jsonl_jansson(const char *line, size_t len, const jsonl_key *key,
                                    jsonl_buf *scratch, const char **text, size_t *text_len,
                                    char *msg, size_t msg_cap);

#endif
