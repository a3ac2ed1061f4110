/*
 * test_corpus.c - full-corpus parity with the references: every document of
 * corpus/{english,code,multilingual}.txt.zst (cut by NAME.index.tsv) and
 * every record of corpus/mixed.jsonl.zst must give the token count and the
 * sha256 of the little-endian u32 ids in golden/NAME.tsv (tiktoken 1.0.22
 * encode_ordinary, checked equal to HF tokenizers 0.23.2).
 *
 * The corpora are large and not part of the project. They are looked for in
 *   $SIMDBPE_CORPUS_DIR, else <project root>/../shared
 * as DIR/corpus/ + DIR/golden/ (a directory laid out like shared/), or, if
 * DIR has no corpus/ folder, as DIR itself + DIR/../golden. When they are
 * missing each test prints a line saying so and is skipped (ctest reports
 * it as skipped, not passed).
 */
#include "corpus_util.h"

typedef struct parity {
    simdbpe_model *m;
    simdbpe_encoder *e;
    size_t checked, failed;
    uint64_t bytes, tokens;
} parity;

static void parity_init(parity *p)
{
    memset(p, 0, sizeof *p);
    p->m = tu_gpt2();
    p->e = tu_encoder(p->m);
}

static void parity_free(parity *p)
{
    simdbpe_encoder_free(p->e);
    simdbpe_model_free(p->m);
}

/* Encodes one document and compares it with its golden row; mismatches are
 * counted and the first few described on stderr. */
static void check_doc(parity *p, const char *name, const golden_row *row, const char *text,
                      size_t len, const char *source)
{
    const uint32_t *ids = NULL;
    size_t n = 0;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(p->e, text, len, NULL, &ids, &n, &err);
    char hex[65] = "";
    if (st == SIMDBPE_OK)
        sha256_ids(ids, n, hex);
    p->checked++;
    p->bytes += len;
    p->tokens += n;
    if (st == SIMDBPE_OK && n == row->tokens && strcmp(hex, row->sha) == 0)
        return;
    if (p->failed++ < 10)
        fprintf(stderr, "%s doc %llu (%s, %zu bytes): %s; got %zu tokens, want %llu\n", name,
                (unsigned long long)row->doc, source, len,
                st != SIMDBPE_OK ? err.message : n == row->tokens ? "sha256 differs" : "count differs",
                n, (unsigned long long)row->tokens);
}

static void plain_corpus(const char *name)
{
    char zst[64], index[64], tsv[64];
    snprintf(zst, sizeof zst, "%s.txt.zst", name);
    snprintf(index, sizeof index, "%s.index.tsv", name);
    snprintf(tsv, sizeof tsv, "%s.tsv", name);
    dirs d;
    find_dirs(&d, zst, tsv);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", d.corpus, zst);
    size_t len;
    char *text = read_zst(path, &len);
    snprintf(path, sizeof path, "%s/%s", d.golden, tsv);
    size_t n_rows;
    golden_row *rows = read_golden(path, &n_rows);
    snprintf(path, sizeof path, "%s/%s", d.corpus, index);
    size_t ilen;
    char *idx = tu_read(path, &ilen);
    char *save = NULL;
    char *line = strtok_r(idx, "\n", &save);
    cr_assert(line && strncmp(line, "byte_offset", 11) == 0, "%s: unexpected header", path);
    parity p;
    parity_init(&p);
    size_t doc = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        unsigned long long off, blen;
        char source[256] = "";
        cr_assert_geq(sscanf(line, "%llu\t%llu\t%255[^\n]", &off, &blen, source), 2,
                      "%s: bad line \"%s\"", index, line);
        cr_assert_lt(doc, n_rows, "%s has more documents than %s", index, tsv);
        cr_assert(rows[doc].offset == off && rows[doc].length == blen,
                  "%s and %s disagree on document %zu", index, tsv, doc);
        cr_assert_leq(off + blen, len, "%s document %zu is past the end", index, doc);
        check_doc(&p, name, &rows[doc], text + off, blen, source);
        doc++;
    }
    cr_assert_eq(doc, n_rows, "%s has %zu documents, %s %zu", index, doc, tsv, n_rows);
    fprintf(stderr, "corpus parity %s: %zu documents, %llu bytes, %llu tokens, %zu mismatches\n",
            name, p.checked, (unsigned long long)p.bytes, (unsigned long long)p.tokens,
            p.failed);
    cr_assert_eq(p.failed, 0, "%s: %zu of %zu documents differ from the references", name,
                 p.failed, p.checked);
    parity_free(&p);
    free(idx);
    free(rows);
    free(text);
}

Test(corpus, english_every_document, .timeout = 600)
{
    plain_corpus("english");
}

Test(corpus, code_every_document, .timeout = 600)
{
    plain_corpus("code");
}

Test(corpus, multilingual_every_document, .timeout = 600)
{
    plain_corpus("multilingual");
}

Test(corpus, mixed_jsonl_every_record, .timeout = 600)
{
    dirs d;
    find_dirs(&d, "mixed.jsonl.zst", "mixed.tsv");
    char path[1200];
    snprintf(path, sizeof path, "%s/mixed.jsonl.zst", d.corpus);
    size_t len;
    char *data = read_zst(path, &len);
    snprintf(path, sizeof path, "%s/mixed.tsv", d.golden);
    size_t n_rows;
    golden_row *rows = read_golden(path, &n_rows);
    parity p;
    parity_init(&p);
    size_t rec = 0;
    uint64_t concat_off = 0;
    for (size_t i = 0; i < len;) {
        char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (end > i) {
            json_error_t jerr;
            json_t *obj = json_loadb(data + i, end - i, JSON_ALLOW_NUL, &jerr);
            cr_assert(obj, "mixed.jsonl record %zu: %s", rec, jerr.text);
            size_t tlen;
            const char *text = tu_json_text(obj, "text", &tlen);
            cr_assert_lt(rec, n_rows, "mixed.jsonl has more records than mixed.tsv");
            cr_assert(rows[rec].offset == concat_off && rows[rec].length == tlen,
                      "mixed.tsv row %zu does not describe record %zu", rec, rec);
            check_doc(&p, "mixed", &rows[rec], text, tlen, "mixed.jsonl");
            concat_off += tlen;
            json_decref(obj);
            rec++;
        }
        i = end + 1;
    }
    cr_assert_eq(rec, n_rows, "mixed.jsonl has %zu records, mixed.tsv %zu", rec, n_rows);
    fprintf(stderr, "corpus parity mixed: %zu records, %llu bytes, %llu tokens, %zu mismatches\n",
            p.checked, (unsigned long long)p.bytes, (unsigned long long)p.tokens, p.failed);
    cr_assert_eq(p.failed, 0, "mixed: %zu of %zu records differ from the references", p.failed,
                 p.checked);
    parity_free(&p);
    free(rows);
    free(data);
}
