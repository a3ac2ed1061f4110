/*
 * model_open.h - how the commands open -m MODEL.
 */
#ifndef SIMDBPE_MODEL_OPEN_H
#define SIMDBPE_MODEL_OPEN_H

#include "simdbpe.h"

/*
 * simdbpe_model_open (ORG/NAME in the Hugging Face cache included: the
 * library's simdbpe_model_locate says which file a name stands for), and a
 * model file compressed with gzip or zstd (read through the library's
 * reader: `-m tokenizer.json.zst`). A name that is
 * neither a model nor a file gets "did you mean" the closest of the names
 * the library knows. Returns 0, or EXIT_FAIL after printing "cannot load
 * model: ...". What the file asks for and is not applied (a
 * tokenizer.json's truncation and padding) is the model's notice
 * (simdbpe_model_notice).
 */
int cli_model_open(const char *name, simdbpe_model **out);

#endif
