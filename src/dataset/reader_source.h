/*
 * reader_source.h - one input file as a stream of bytes, decompressed.
 *
 * The format is chosen by the first bytes, not the name: 1F 8B is gzip
 * (zlib; concatenated members are read one after another), 28 B5 2F FD is
 * zstd (libzstd; several frames and skippable frames allowed), anything
 * else is read as is. "-" is standard input, detected the same way.
 *
 * A stream that ends inside a gzip member or a zstd frame is "truncated";
 * bytes that do not decode are "corrupt". Both are errors with a message
 * saying which; the bytes decoded before the failure are delivered first,
 * whatever the sizes of the reads (the read that meets a failure returns
 * its bytes, the next one -1). Data compressed twice (a .zst of a .gz) is
 * an error too, found in the first 4 decompressed bytes before any goes
 * out, however the reads are sized.
 * Memory use is a fixed buffer per open source, whatever the file size.
 */
#ifndef SIMDBPE_READER_SOURCE_H
#define SIMDBPE_READER_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct source source;

typedef enum { SOURCE_PLAIN, SOURCE_GZIP, SOURCE_ZSTD } source_kind;

/* Opens `path`. Returns 0, or an errno value (the file cannot be opened). */
int simdbpe__source_open(source **out, const char *path);

/*
 * Reads up to `cap` decompressed bytes into `buf`. Returns the count, 0 at
 * the end of the stream, or -1 on failure with a one-line reason in `msg`
 * (e.g. "truncated gzip stream: unexpected end of file").
 */
ssize_t simdbpe__source_read(source *s, void *buf, size_t cap, char *msg, size_t msg_cap);

source_kind simdbpe__source_kind_of(const source *s);

/* How many bytes of the file itself (compressed) have been consumed. */
uint64_t simdbpe__source_raw_pos(const source *s);

void simdbpe__source_close(source *s);

#endif
