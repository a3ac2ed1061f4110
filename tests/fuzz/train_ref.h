/*
 * train_ref.h - the reference of fuzz_train: a textbook BPE trainer.
 *
 * train_ref.c is compiled without coverage instrumentation (tests/
 * fuzz.cmake), as exact_ref.c is: libFuzzer should be steered by the
 * trainer's code, not by the reference's loops, which with
 * instrumentation took about half of each input's time.
 */
#ifndef SIMDBPE_TRAIN_REF_H
#define SIMDBPE_TRAIN_REF_H

#include <stddef.h>
#include <stdint.h>

typedef struct train_ref_merge {
    uint32_t left, right, id;
    uint64_t count;
} train_ref_merge;

/*
 * The merges of the textbook trainer on text[0..len) (valid UTF-8): cut
 * into sequences (lines with their '\n', or the whole text as one
 * document when `documents`), each pre-tokenized by the library's GPT-2
 * scanner; unique words are counted; then at every step every adjacent
 * pair of every word is counted (overlapping pairs count), the pair with
 * the highest count wins (ties: smallest (left id, right id)), its token
 * is named (reusing the id of an existing token with the same bytes), and
 * every word is rewritten left to right; a pair whose token would be
 * longer than 1024 bytes is never chosen (simdbpe_train.h: the limit the
 * loaders enforce). Ids: 0-255 the bytes in GPT-2
 * order, then new tokens in order. It stops at vocab_size tokens or when
 * no pair is left. Returns the number of merges, the merges in a
 * malloc'ed array in *out. Not reentrant: its tables are kept from one
 * call to the next (fresh memory under ASan cost more than the training).
 */
size_t train_ref(const uint8_t *text, size_t len, int documents, uint32_t vocab_size,
                 train_ref_merge **out);

#endif
