/*
 * progress.h - a one-line progress display on stderr, only when stderr is a
 * terminal: done/total input bytes (compressed, as stored), documents,
 * MB/s of decompressed input, and an ETA when the total is known (not for
 * standard input). Redrawn at most 5 times a second by whichever thread is
 * writing; erased at the end so the summary starts on a clean line.
 */
#ifndef SIMDBPE_PROGRESS_H
#define SIMDBPE_PROGRESS_H

#include <stdint.h>

typedef struct progress progress;

/* NULL (no display) unless `enabled` and stderr is a terminal. */
progress *progress_new(int enabled, uint64_t total_raw_bytes);
void progress_update(progress *p, uint64_t raw_pos, uint64_t in_bytes, uint64_t docs);
/* Erases the line and frees; NULL is fine. */
void progress_end(progress *p);

#endif
