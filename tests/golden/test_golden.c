/*
 * test_golden.c - exact ids on the golden documents shipped in
 * tests/data/golden (see PROVENANCE.md there): edge.jsonl and stress.jsonl
 * (tiktoken 1.0.22 = HF tokenizers 0.23.2), random.jsonl (documents never
 * seen before, both references agreeing), and small_model.jsonl (HF on a
 * RoBERTa-style model). Every record, not a sample; with every kernel set
 * the CPU supports.
 */
#include <criterion/criterion.h>

#include "../../kernels/kernels.h"
#include "test_util.h"

typedef struct golden_run {
    simdbpe_encoder *enc;
    const char *file;
    const char *ids_key;
    const simdbpe_encode_options *opts;
    size_t records;
} golden_run;

static void check_record(json_t *rec, size_t line, void *ctx)
{
    golden_run *g = ctx;
    size_t len, n;
    const char *text = tu_json_text(rec, "text", &len);
    uint32_t *want = tu_json_ids(json_object_get(rec, g->ids_key), &n);
    char where[128];
    snprintf(where, sizeof where, "%s line %zu (%s, kernel %s)", g->file, line, g->ids_key,
             simdbpe_encoder_kernel_name(g->enc));
    tu_expect_ids(g->enc, text, len, g->opts, want, n, where);
    free(want);
    g->records++;
}

/* Runs one golden file through an encoder; returns the record count. */
static size_t run_file(simdbpe_encoder *enc, const char *file, const char *ids_key,
                       const simdbpe_encode_options *opts)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TU_GOLDEN_DIR, file);
    golden_run g = {enc, file, ids_key, opts, 0};
    tu_each_jsonl(path, check_record, &g);
    return g.records;
}

/* Calls fn once per kernel set this CPU supports, with an encoder on it. */
static void for_each_kernel(const simdbpe_model *m, void (*fn)(simdbpe_encoder *))
{
    const simdbpe__kernels *const *all = simdbpe__kernels_available();
    size_t count = 0;
    for (size_t i = 0; all[i]; i++, count++) {
        cr_assert_eq(setenv("SIMDBPE_KERNEL", all[i]->name, 1), 0);
        simdbpe_encoder *e = tu_encoder(m);
        cr_assert_str_eq(simdbpe_encoder_kernel_name(e), all[i]->name);
        fn(e);
        simdbpe_encoder_free(e);
    }
    unsetenv("SIMDBPE_KERNEL");
    cr_assert_gt(count, 0);
}

static void edge(simdbpe_encoder *e)
{
    /* shared/golden/README.md: 7,229 edge documents. */
    cr_assert_eq(run_file(e, "edge.jsonl", "ids", NULL), 7229);
}

static void stress(simdbpe_encoder *e)
{
    cr_assert_eq(run_file(e, "stress.jsonl", "ids", NULL), 96);
}

static void random_docs(simdbpe_encoder *e)
{
    cr_assert_eq(run_file(e, "random.jsonl", "ids", NULL), 2600);
}

Test(golden, edge_jsonl_every_document)
{
    simdbpe_model *m = tu_gpt2();
    for_each_kernel(m, edge);
    simdbpe_model_free(m);
}

Test(golden, stress_jsonl_every_document)
{
    simdbpe_model *m = tu_gpt2();
    for_each_kernel(m, stress);
    simdbpe_model_free(m);
}

Test(golden, random_jsonl_documents_never_seen_before)
{
    simdbpe_model *m = tu_gpt2();
    for_each_kernel(m, random_docs);
    simdbpe_model_free(m);
}

/* The generator must name both references and their versions. */
Test(golden, random_jsonl_header_names_the_references)
{
    size_t len;
    char *data = tu_read(TU_GOLDEN_DIR "/random.jsonl", &len);
    char *nl = strchr(data, '\n');
    cr_assert(nl);
    json_error_t jerr;
    json_t *h = json_loadb(data, (size_t)(nl - data), 0, &jerr);
    cr_assert(h, "header: %s", jerr.text);
    json_t *refs = json_object_get(json_object_get(h, "header"), "references");
    cr_assert(json_is_string(json_object_get(refs, "tokenizers")));
    cr_assert(json_is_string(json_object_get(refs, "tiktoken")));
    json_decref(h);
    free(data);
}

/* A fresh encoder per document gives the same ids as one encoder reused
 * (its cache) - checked on the random documents. */
static void one_fresh_encoder_each(json_t *rec, size_t line, void *ctx)
{
    const simdbpe_model *m = ctx;
    simdbpe_encoder *e = tu_encoder(m);
    golden_run g = {e, "random.jsonl", "ids", NULL, 0};
    check_record(rec, line, &g);
    simdbpe_encoder_free(e);
}

Test(golden, random_jsonl_with_a_fresh_encoder_per_document)
{
    simdbpe_model *m = tu_gpt2();
    tu_each_jsonl(TU_GOLDEN_DIR "/random.jsonl", one_fresh_encoder_each, m);
    simdbpe_model_free(m);
}

/* HF on a RoBERTa-style model: ids are not 256 + rank, "xyz" is a token its
 * own merges never produce, specials are listed in special_tokens. */
Test(golden, small_model_matches_hf)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(TU_GOLDEN_DIR "/small_model", &m, &err), SIMDBPE_OK, "%s",
                 err.message);
    simdbpe_encoder *e = tu_encoder(m);
    static const simdbpe_encode_options as_text = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_STRICT};
    static const simdbpe_encode_options allow = {.special = SIMDBPE_SPECIAL_ALLOW, .errors = SIMDBPE_UTF8_STRICT};
    size_t n = run_file(e, "small_model.jsonl", "ids_text", &as_text);
    cr_assert_gt(n, 200);
    cr_assert_eq(run_file(e, "small_model.jsonl", "ids_allow", &allow), n);
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
}
