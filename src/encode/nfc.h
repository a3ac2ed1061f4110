/*
 * nfc.h - NFC as HF tokenizers' normalizer applies it (nfc.c), for the
 * loaders (an added token with "normalized": true is matched by the NFC of
 * its content) as well as the encoder (simdbpe__nfc, encoder.h).
 */
#ifndef SIMDBPE_NFC_H
#define SIMDBPE_NFC_H

#include "../common/common.h"

/* The NFC of *text[0..*len) (valid UTF-8): unchanged, or *text and *len
 * set to the normalized copy in *buf (grown with realloc as needed; the
 * caller frees it). */
simdbpe_status simdbpe__nfc_into(uint8_t **buf, size_t *cap, const uint8_t **text, size_t *len);

#endif
