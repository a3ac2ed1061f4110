/*
 * bytelevel.h - GPT-2's byte-level alphabet (internal): how vocab.json,
 * merges.txt and tokenizer.json spell token bytes as printable text.
 *
 * Bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for themselves; the other
 * 68 bytes (0x00-0x20, 0x7F-0xA0, 0xAD), in ascending order, stand for
 * U+0100, U+0101, ... U+0143. So ' ' (0x20) is U+0120 'Ġ'. The byte
 * tokens of a GPT-2 vocabulary are ordered by the code points that spell
 * them (the "rank" below): the bytes that spell themselves first.
 */
#ifndef SIMDBPE_BYTELEVEL_H
#define SIMDBPE_BYTELEVEL_H

#include <stddef.h>
#include <stdint.h>

/* The code point that spells byte b. */
uint32_t simdbpe__bytelevel_cp(uint8_t b);
/* The byte code point cp spells, or -1 if it is outside the alphabet. */
int simdbpe__bytelevel_byte(uint32_t cp);
/* Byte b's spelling in UTF-8 (1 or 2 bytes) into out; returns its length. */
size_t simdbpe__bytelevel_utf8(uint8_t b, uint8_t out[2]);

/* The spelling of the bytes b[0..n) in UTF-8 into out (room for 2n
 * bytes), as vocab.json holds them; returns its length. */
size_t simdbpe__bytelevel_string(const uint8_t *b, size_t n, char *out);

/* The bytes the byte-level text s[0..len) (valid UTF-8) spells, into out
 * (room for len bytes): their number, or -1 with *bad_cp the first code
 * point outside the alphabet. */
long simdbpe__bytelevel_decode(const uint8_t *s, size_t len, uint8_t *out, uint32_t *bad_cp);

/* Byte b's place (0..255) in the order of the code points that spell the
 * bytes (GPT-2's byte token ids), and the byte at place r. */
uint32_t simdbpe__bytelevel_rank(uint8_t b);
uint8_t simdbpe__bytelevel_at_rank(uint32_t r);

#endif
