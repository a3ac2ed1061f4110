/*
 * reader_docs.h - cuts the input files into batches of documents.
 *
 * Documents are: a whole file (SIMDBPE_INPUT_TEXT), the parts of a file between
 * occurrences of a separator (SIMDBPE_INPUT_TEXT with job->sep), a line without its
 * newline (SIMDBPE_INPUT_LINES), or one JSON object per line (SIMDBPE_INPUT_JSONL; the worker
 * parses it). Files never share a document.
 *
 * The reader streams: it keeps one batch buffer plus the unframed tail of
 * the current file, never a whole file. A text document longer than a
 * batch is cut into pieces at safe pre-token boundaries (simdbpe_cut_find); only
 * a JSON record or a text document without any safe cut point (e.g. 1 GB
 * without whitespace) is held whole.
 *
 * Input problems (a file that cannot be opened, a truncated or corrupt
 * .gz/.zst) become SEG_FAIL segments in input order, attached to the
 * document they cut short, so that the writer reports or skips them at the
 * right place. Rules at the end of a file:
 *   text: the rest is the last document (an empty file is one empty
 *         document);
 *   lines, separator: the rest is a document if it is not empty (a final
 *         newline or separator does not start another document);
 *   jsonl: the rest is a record if it is not blank; blank lines anywhere
 *         are not records.
 */
#ifndef SIMDBPE_READER_DOCS_H
#define SIMDBPE_READER_DOCS_H

#include "pipeline.h"

typedef struct reader reader;

int simdbpe__reader_new(reader **out, const job *j);
void simdbpe__reader_free(reader *r);

/*
 * Fills `b` (emptied first) with the next segments. Returns 1 if it holds
 * at least one segment, 0 when the input is exhausted, -1 when out of
 * memory.
 */
int simdbpe__reader_fill(reader *r, batch *b);

/* Raw (compressed) bytes consumed so far, over all files. */
uint64_t simdbpe__reader_raw_pos(const reader *r);

#endif
