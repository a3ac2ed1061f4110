/*
 * consumer.c - a program of another project using an installed simdbpe:
 * includes <simdbpe.h>, encodes with the embedded GPT-2 model and checks
 * the ids and that the header and the library linked agree on the
 * version. Built by run.sh with find_package(simdbpe) and with pkg-config.
 */
#include <simdbpe.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(simdbpe_version(), SIMDBPE_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", SIMDBPE_VERSION_STRING, simdbpe_version());
        return 1;
    }
    simdbpe_model *model;
    simdbpe_encoder *enc;
    simdbpe_error err;
    if (simdbpe_model_open("gpt2", &model, &err) != SIMDBPE_OK ||
        simdbpe_encoder_new(model, &enc, &err) != SIMDBPE_OK) {
        fprintf(stderr, "cannot open gpt2: %s\n", err.message);
        return 1;
    }
    const uint32_t want[] = {15496, 995}; /* "Hello", " world" */
    const uint32_t *ids;
    size_t n;
    simdbpe_encode_options opts = SIMDBPE_ENCODE_OPTIONS_INIT;
    simdbpe_status st = simdbpe_encode(enc, "Hello world", 11, &opts, &ids, &n, &err);
    int ok = st == SIMDBPE_OK && n == 2 && ids[0] == want[0] && ids[1] == want[1];
    if (!ok)
        fprintf(stderr, "encode: %s, %zu ids\n", simdbpe_strerror(st), st == SIMDBPE_OK ? n : 0);
    simdbpe_encoder_free(enc);
    simdbpe_model_free(model);
    if (ok)
        printf("simdbpe %s: ok\n", simdbpe_version());
    return ok ? 0 : 1;
}
