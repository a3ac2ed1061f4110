/*
 * test_models.c - parity with the references for every byte-level BPE
 * model simdbpe claims, on every document of the public corpora:
 * golden/models/NAME/{english,code,multilingual}.tsv (documents cut by
 * corpus/NAME.index.tsv), edge.tsv (each line of golden/edge.jsonl) and,
 * where it differs, edge.specials.tsv (added tokens recognised: encoded
 * with SIMDBPE_SPECIAL_ALLOW). The ids are HF tokenizers 0.23.2's,
 * cross-checked with tiktoken 1.0.22 where it has the encoding (see
 * golden/models/README.md).
 *
 * Models: r50k_base, p50k_base, cl100k_base, o200k_base by name (embedded
 * in the library), the tokenizer.json of gpt4o, gpt_oss (o200k with the
 * harmony chat tokens), llama3, llama3_1,
 * qwen3, deepseek_v3, claude (GPT-2's regex behind NFKC) and the
 * SentencePiece-style mistral_v1 and gemma3 from
 * shared/models/NAME/tokenizer.json.zst, and the synthetic kimi, qwen35
 * and nemotron (shared/models/synthetic: llama3's vocabulary under other
 * Split regexes): qwen35 runs the generic regex path, kimi and nemotron
 * (Tekken's regex) their scanners. The generic path is also run on the
 * scanners' models (their patterns wrapped so no scanner claims them):
 * the same ids. Where the golden files have NAME.specials.tsv for a
 * corpus (added tokens recognised, HF's default), that is checked too,
 * with SIMDBPE_SPECIAL_ALLOW: every document whose ids the added tokens
 * change, and every 8th of the others (plain_corpus).
 * Under the sanitizers (slow) only the edge sets run, and the test says
 * so. Each model's compiled image is also checked: opened
 * untrusted from a copy, it must give the same ids on the edge set. And
 * every document's ids must decode to its text (its normal form under a
 * normalizer; with the spaces a SentencePiece-style Prepend puts after
 * added tokens).
 */
#include "corpus_util.h"

#include <unistd.h>

#include <jansson.h>

#include "common/nfc.h"
#include "model/model.h"

#ifndef SIMDBPE_TESTS_SANITIZE
#define SIMDBPE_TESTS_SANITIZE 0
#endif

/* A text's normal form, built from the stretches the normalizer changes. */
typedef struct normalized {
    const uint8_t *s;
    uint8_t *out;
    size_t n, copied;
} normalized;

static void norm_put(normalized *w, const uint8_t *b, size_t n)
{
    w->out = realloc(w->out, w->n + n + 1);
    cr_assert(w->out);
    memcpy(w->out + w->n, b, n);
    w->n += n;
}

static int norm_append(void *ctx, size_t start, size_t end, const uint8_t *norm, size_t len)
{
    normalized *w = ctx;
    norm_put(w, w->s + w->copied, start - w->copied);
    norm_put(w, norm, len);
    w->copied = end;
    return 0;
}

typedef struct parity {
    simdbpe_model *m;
    simdbpe_encoder *e;
    simdbpe_encode_options opts;
    size_t checked, failed;
    uint64_t bytes, tokens;
    uint8_t *text; /* decode's output */
    size_t text_cap;
    uint32_t *both; /* check_cuts' ids of the two parts */
    size_t both_cap;
    size_t cuts, cut_failed;
    unsigned cut_every; /* check the cuts of every k-th document */
    const uint8_t *added; /* per id: 1 for an added token (the specials sets) */
} parity;

/* Whether text[0..len) is decoded[0..got) with some spaces taken out, at
 * most `most` of them (greedy: spaces are all alike, so taking the first
 * that does not match loses no way of matching). */
static int spaces_inserted(const uint8_t *decoded, size_t got, const char *text, size_t len,
                           size_t most)
{
    size_t i = 0, j = 0, extra = 0;
    while (i < got) {
        if (j < len && decoded[i] == (uint8_t)text[j]) {
            i++;
            j++;
        } else if (decoded[i] == ' ' && extra < most) {
            i++;
            extra++;
        } else {
            return 0;
        }
    }
    return j == len;
}

/* Shapes of cut points (src/encode/cut.c), by the byte after the cut. */
static int cut_shape(unsigned char c)
{
    return c >= '0' && c <= '9' ? 0 : c > 0x20 && c < 0x7F ? 1 : 2;
}

/* Encodes text[0..p) and then text[p..len): ids and count must be the
 * golden ones. */
static void check_cut(parity *p, const char *what, const golden_row *row, const char *text,
                      size_t len, size_t at)
{
    const uint32_t *ids;
    size_t n1 = 0, n2 = 0;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(p->e, text, at, &p->opts, &ids, &n1, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%s doc %llu, cut at %zu: %s", what,
                 (unsigned long long)row->doc, at, err.message);
    if (n1 > p->both_cap)
        cr_assert(p->both = realloc(p->both, (p->both_cap = 2 * n1) * sizeof *p->both));
    memcpy(p->both, ids, n1 * sizeof *ids);
    st = simdbpe_encode(p->e, text + at, len - at, &p->opts, &ids, &n2, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%s doc %llu, cut at %zu: %s", what,
                 (unsigned long long)row->doc, at, err.message);
    if (n1 + n2 > p->both_cap)
        cr_assert(p->both = realloc(p->both, (p->both_cap = 2 * (n1 + n2)) * sizeof *p->both));
    memcpy(p->both + n1, ids, n2 * sizeof *ids);
    char hex[65];
    sha256_ids(p->both, n1 + n2, hex);
    p->cuts++;
    if (n1 + n2 == row->tokens && strcmp(hex, row->sha) == 0)
        return;
    if (p->cut_failed++ < 5) {
        char show[80];
        size_t from = at > 20 ? at - 20 : 0;
        tu_show(show, sizeof show, text + from, len - from < 40 ? len - from : 40);
        fprintf(stderr, "%s doc %llu: cut at byte %zu near \"%s\" changes the ids\n", what,
                (unsigned long long)row->doc, at, show);
    }
}

/* The last cut point of each shape in each half of the document. */
static void check_cuts(parity *p, const char *what, const golden_row *row, const char *text,
                       size_t len)
{
    for (size_t half = 0; half < 2; half++) {
        size_t lo = half ? len / 2 : 1, hi = half ? len : len / 2;
        int seen[3] = {0, 0, 0};
        while (hi > lo && !(seen[0] && seen[1] && seen[2])) {
            size_t at = simdbpe_cut_find(p->m, &p->opts, text, len, lo, hi - 1);
            if (at == SIMDBPE_NO_CUT)
                break;
            int k = cut_shape((unsigned char)text[at]);
            if (!seen[k]++)
                check_cut(p, what, row, text, len, at);
            hi = at;
        }
    }
}

static void check_doc(parity *p, const char *what, const golden_row *row, const char *text,
                      size_t len)
{
    const uint32_t *ids = NULL;
    size_t n = 0;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(p->e, text, len, &p->opts, &ids, &n, &err);
    char hex[65] = "";
    if (st == SIMDBPE_OK)
        sha256_ids(ids, n, hex);
    p->checked++;
    p->bytes += len;
    p->tokens += n;
    /* Decoding gives the text back (the golden texts are valid UTF-8). */
    size_t got = 0;
    simdbpe_status dst = SIMDBPE_ERR_INVALID_ARG;
    if (st == SIMDBPE_OK) {
        dst = simdbpe_decode(p->m, ids, n, p->text, p->text_cap, &got, &err);
        if (dst == SIMDBPE_ERR_BUFFER_TOO_SMALL) {
            p->text = realloc(p->text, p->text_cap = got);
            cr_assert(p->text);
            dst = simdbpe_decode(p->m, ids, n, p->text, p->text_cap, &got, &err);
        }
    }
    int round_trip = dst == SIMDBPE_OK && got == len && memcmp(p->text, text, len) == 0;
    if (!round_trip && dst == SIMDBPE_OK && p->m->normalizer != SIMDBPE__NORM_NONE) {
        /* A model with a normalizer gives back the normalized text (the
         * normalizer is checked against HF's in test_nfc). */
        normalized nt = {(const uint8_t *)text, NULL, 0, 0};
        cr_assert_eq(simdbpe__nfc_stretches(p->m->normalizer, nt.s, len, norm_append, &nt), 0);
        norm_put(&nt, nt.s + nt.copied, len - nt.copied);
        round_trip = nt.n == got && memcmp(nt.out, p->text, got) == 0;
        free(nt.out);
    }
    /* A SentencePiece-style model's Prepend("\u2581") marks the start of
     * each stretch between added tokens, which its decoder turns into a
     * space: with added tokens cut out, decoding gives the text with at
     * most one space more after each of them (HF's decode does the same:
     * tests/hf/unseen_documents.mjs checks it against HF's). */
    if (!round_trip && dst == SIMDBPE_OK && p->m->sp && p->added) {
        size_t n_added = 0;
        for (size_t i = 0; i < n; i++)
            n_added += p->added[ids[i]];
        round_trip = spaces_inserted(p->text, got, text, len, n_added);
    }
    if (st == SIMDBPE_OK && n == row->tokens && strcmp(hex, row->sha) == 0 && round_trip) {
        if (p->cut_every && row->doc % p->cut_every == 0)
            check_cuts(p, what, row, text, len);
        return;
    }
    if (p->failed++ < 5)
        fprintf(stderr, "%s doc %llu (%zu bytes): %s; got %zu tokens, want %llu\n", what,
                (unsigned long long)row->doc, len,
                st != SIMDBPE_OK   ? err.message
                : !round_trip      ? "decoding does not give the text back"
                : n == row->tokens ? "sha256 differs"
                                   : "count differs",
                n, (unsigned long long)row->tokens);
}

/* The synthetic models: llama3's vocabulary under other families' Split
 * regexes, shared/models/synthetic/NAME.tokenizer.json.zst. */
/* The synthetic models and the family each must load as: nemotron's
 * Split is Tekken's pattern and kimi's Kimi K2's, which have scanners;
 * qwen35 runs the generic path. NULL for a model that is not synthetic. */
static const char *synthetic_family(const char *name)
{
    static const char *const fams[][2] = {
        {"kimi", "kimi"}, {"qwen35", "regex"}, {"nemotron", "tekken"}};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        if (!strcmp(name, fams[i][0]))
            return fams[i][1];
    return NULL;
}

static int is_synthetic(const char *name)
{
    return synthetic_family(name) != NULL;
}

/* The tokenizer.json of model NAME (shared/models), or skips the test. */
static char *model_json(const dirs *d, const char *name, size_t *len)
{
    char path[1300];
    if (is_synthetic(name))
        snprintf(path, sizeof path, "%s/../models/synthetic/%s.tokenizer.json.zst", d->golden,
                 name);
    else
        snprintf(path, sizeof path, "%s/../models/%s/tokenizer.json.zst", d->golden, name);
    if (!is_file(path)) {
        fprintf(stderr, SKIP_LINE ": %s not found\n", path);
        cr_skip_test("model not available: %s", path);
    }
    return read_zst(path, len);
}

/* The model NAME: embedded, or its tokenizer.json; `plain`: with its
 * added_tokens list emptied, as the golden files of ordinary encoding were
 * made (gemma3's 6,406 added tokens that are not special, "\n" among
 * them, would otherwise cut every document). */
static simdbpe_model *open_model(const dirs *d, const char *name, int plain)
{
    simdbpe_model *m = NULL;
    simdbpe_error err;
    if (simdbpe_model_open(name, &m, &err) == SIMDBPE_OK)
        return m;
    size_t len;
    char *json = model_json(d, name, &len);
    if (plain) {
        json_error_t jerr;
        json_t *root = json_loadb(json, len, 0, &jerr);
        cr_assert(root, "%s: %s", name, jerr.text);
        cr_assert_eq(json_object_set_new(root, "added_tokens", json_array()), 0);
        free(json);
        json = json_dumps(root, JSON_COMPACT);
        cr_assert(json);
        len = strlen(json);
        json_decref(root);
    }
    simdbpe_status st = simdbpe_model_load_hf_json(json, len, &m, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%s: %s", name, err.message);
    free(json);
    if (is_synthetic(name))
        cr_assert_str_eq(simdbpe_model_pretokenizer(m), synthetic_family(name), "%s", name);
    return m;
}

/* A Split whose pattern is `pattern` wrapped in a non-capturing group: the
 * same matches, but no family's pattern, so the generic path runs it. */
static json_t *wrapped_split(const char *pattern)
{
    char *re = malloc(strlen(pattern) + 8);
    cr_assert(re);
    sprintf(re, "(?:%s)", pattern);
    json_t *split = json_pack("{s:s, s:{s:s}, s:s, s:b}", "type", "Split", "pattern", "Regex",
                              re, "behavior", "Isolated", "invert", 0);
    free(re);
    return split;
}

/*
 * The model NAME through the generic regex path: its tokenizer.json with
 * each Split's pattern wrapped (wrapped_split). For r50k_base (GPT-2's
 * vocabulary, whose tokenizer.json HF writes as a ByteLevel running the
 * GPT-2 regex, Isolated) a tokenizer.json is made of shared/models/gpt2's
 * vocab.json and merges.txt with that regex as a wrapped Split.
 */
static simdbpe_model *open_model_generic(const dirs *d, const char *name)
{
    json_t *root;
    json_error_t jerr;
    if (!strcmp(name, "r50k_base")) {
        char path[1300];
        snprintf(path, sizeof path, "%s/../models/gpt2/vocab.json", d->golden);
        if (!is_file(path)) {
            fprintf(stderr, SKIP_LINE ": %s not found\n", path);
            cr_skip_test("model not available: %s", path);
        }
        json_t *vocab = json_load_file(path, 0, &jerr);
        cr_assert(vocab, "%s: %s", path, jerr.text);
        snprintf(path, sizeof path, "%s/../models/gpt2/merges.txt", d->golden);
        size_t len;
        char *text = tu_read(path, &len);
        json_t *merges = json_array();
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            if (strncmp(line, "#version", 8) != 0)
                json_array_append_new(merges, json_string(line));
        free(text);
        root = json_pack("{s:{s:s, s:o, s:o}, s:[{s:i, s:s, s:b}], s:n}", "model", "type", "BPE",
                         "vocab", vocab, "merges", merges, "added_tokens", "id", 50256,
                         "content", "<|endoftext|>", "special", 1, "normalizer");
        cr_assert(root);
        json_object_set_new(root, "pre_tokenizer",
                            json_pack("{s:s, s:[o, {s:s, s:b, s:b}]}", "type", "Sequence",
                                      "pretokenizers",
                                      wrapped_split("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| "
                                                    "?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
                                                    "\\s+(?!\\S)|\\s+"),
                                      "type", "ByteLevel", "add_prefix_space", 0, "use_regex",
                                      0));
    } else {
        size_t len;
        char *json = model_json(d, name, &len);
        root = json_loadb(json, len, 0, &jerr);
        cr_assert(root, "%s: %s", name, jerr.text);
        free(json);
        json_t *steps = json_object_get(json_object_get(root, "pre_tokenizer"), "pretokenizers");
        size_t i;
        json_t *step;
        json_array_foreach(steps, i, step)
        {
            json_t *re = json_object_get(json_object_get(step, "pattern"), "Regex");
            if (re)
                json_array_set_new(steps, i, wrapped_split(json_string_value(re)));
        }
    }
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    simdbpe_model *m;
    simdbpe_error err;
    simdbpe_status st = simdbpe_model_load_hf_json(text, strlen(text), &m, &err);
    cr_assert_eq(st, SIMDBPE_OK, "%s through the generic path: %s", name, err.message);
    free(text);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "regex", "%s", name);
    return m;
}

/* The corpus `name` against golden/models/MODEL/NAME.tsv, or with
 * `specials` NAME.specials.tsv (0 if there is none). Of the latter, the
 * documents whose ids the added tokens change (their rows differ from
 * NAME.tsv's) are all checked, and every `SPECIALS_SAMPLE`-th of the
 * others, which NAME.tsv's pass has checked with the added tokens as
 * text: each is the full price of encoding it again (a SentencePiece-style
 * model encodes at 10-25 MB/s), to learn that the added tokens change no
 * id where HF's do not. *differ counts the former. */
#define SPECIALS_SAMPLE 8
static int plain_corpus(parity *p, const dirs *d, const char *model, const char *name,
                        int specials, size_t *differ)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/models/%s/%s%s.tsv", d->golden, model, name,
             specials ? ".specials" : "");
    if (!is_file(path))
        return 0;
    size_t n_rows, n_plain = 0;
    golden_row *rows = read_golden(path, &n_rows);
    cr_assert_gt(n_rows, 0, "%s: no rows", path);
    golden_row *plain = NULL;
    if (specials) {
        char ordinary[1300];
        snprintf(ordinary, sizeof ordinary, "%s/models/%s/%s.tsv", d->golden, model, name);
        plain = read_golden(ordinary, &n_plain);
        cr_assert_eq(n_plain, n_rows, "%s and %s have other documents", ordinary, path);
    }
    char what[128];
    snprintf(what, sizeof what, "%s %s%s", model, name, specials ? " (specials)" : "");
    snprintf(path, sizeof path, "%s/%s.txt.zst", d->corpus, name);
    size_t len;
    char *text = read_zst(path, &len);
    for (size_t i = 0; i < n_rows; i++) {
        cr_assert_leq(rows[i].offset + rows[i].length, len, "%s row %zu is past the text", what,
                      i);
        if (plain) {
            cr_assert(plain[i].offset == rows[i].offset && plain[i].length == rows[i].length,
                      "%s row %zu is another document than the ordinary set's", what, i);
            int same = plain[i].tokens == rows[i].tokens && !strcmp(plain[i].sha, rows[i].sha);
            *differ += !same;
            if (same && i % SPECIALS_SAMPLE != 0)
                continue;
        }
        check_doc(p, what, &rows[i], text + rows[i].offset, rows[i].length);
    }
    free(plain);
    free(rows);
    free(text);
    return 1;
}

/* golden/edge.jsonl's texts, one per line. */
typedef struct edge_docs {
    json_t **objs;
    size_t n;
} edge_docs;

static edge_docs read_edge(const dirs *d)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/edge.jsonl", d->golden);
    size_t len;
    char *data = tu_read(path, &len);
    edge_docs e = {NULL, 0};
    size_t cap = 0;
    for (size_t i = 0; i < len;) {
        char *nl = memchr(data + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (end > i) {
            json_error_t jerr;
            json_t *obj = json_loadb(data + i, end - i, JSON_ALLOW_NUL, &jerr);
            cr_assert(obj, "edge.jsonl line %zu: %s", e.n + 1, jerr.text);
            if (e.n == cap)
                e.objs = realloc(e.objs, (cap = cap ? 2 * cap : 1024) * sizeof *e.objs);
            e.objs[e.n++] = obj;
        }
        i = end + 1;
    }
    free(data);
    return e;
}

static void edge_free(edge_docs *e)
{
    for (size_t i = 0; i < e->n; i++)
        json_decref(e->objs[i]);
    free(e->objs);
}

/* Returns 0 if the golden file is not there (edge.specials.tsv exists only
 * where it differs from edge.tsv). */
static int edge_set(parity *p, const dirs *d, const edge_docs *e, const char *model,
                    const char *file)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/models/%s/%s", d->golden, model, file);
    if (!is_file(path))
        return 0;
    size_t n_rows;
    golden_row *rows = read_golden(path, &n_rows);
    cr_assert_eq(n_rows, e->n, "%s has %zu rows, edge.jsonl %zu lines", path, n_rows, e->n);
    char what[128];
    snprintf(what, sizeof what, "%s %s", model, file);
    for (size_t i = 0; i < n_rows; i++) {
        size_t tlen;
        const char *text = tu_json_text(e->objs[i], "text", &tlen);
        cr_assert_eq(rows[i].length, tlen, "%s row %zu: length differs from edge.jsonl", path, i);
        check_doc(p, what, &rows[i], text, tlen);
    }
    free(rows);
    return 1;
}

static void model_parity_of(const char *model, int generic, int plain)
{
    dirs d;
    find_dirs(&d, "english.txt.zst", "edge.jsonl");
    parity p;
    memset(&p, 0, sizeof p);
    p.m = generic ? open_model_generic(&d, model) : open_model(&d, model, plain);
    /* The generic path has no cut rule: simdbpe_cut_find finds none; nor
     * are texts under NFKC (and the other forms but NFC), and those of
     * SentencePiece-style models, ever cut (cut.c). */
    int cuts = strcmp(simdbpe_model_pretokenizer(p.m), "regex") != 0 &&
               (p.m->normalizer == SIMDBPE__NORM_NONE || p.m->normalizer == SIMDBPE__NORM_NFC) &&
               !p.m->sp;
    p.e = tu_encoder(p.m);
    edge_docs edge = read_edge(&d);
    /* The cut points of every edge document and of every 8th of the
     * corpora (each costs encoding its document once more). */
    p.cut_every = 1;
    cr_assert(edge_set(&p, &d, &edge, model, "edge.tsv"), "no edge.tsv for %s", model);
    p.opts.special = SIMDBPE_SPECIAL_ALLOW;
    edge_set(&p, &d, &edge, model, "edge.specials.tsv");
    p.opts.special = SIMDBPE_SPECIAL_AS_TEXT;
    p.cut_every = 8;
    static const char *const corpora[] = {"english", "code", "multilingual"};
    for (size_t c = 0; c < 3; c++) {
        if (SIMDBPE_TESTS_SANITIZE) {
            fprintf(stderr, "%s: %s not checked under the sanitizers (slow)\n", model,
                    corpora[c]);
            continue;
        }
        plain_corpus(&p, &d, model, corpora[c], 0, NULL);
    }
    /* The corpora with the added tokens recognised, where that differs:
     * the model as shipped, HF's default. */
    simdbpe_model *ordinary_m = p.m, *shipped = plain ? open_model(&d, model, 0) : p.m;
    simdbpe_encoder *ordinary = p.e;
    uint8_t *added = calloc(simdbpe_model_vocab_size(shipped), 1);
    cr_assert(added);
    for (size_t i = 0; i < shipped->n_specials; i++)
        added[shipped->specials[i].id] = 1;
    p.m = shipped;
    p.e = tu_encoder(shipped);
    p.added = added;
    p.opts.special = SIMDBPE_SPECIAL_ALLOW;
    p.cut_every = 0;
    size_t special_sets = 0, differ = 0, before = p.checked;
    for (size_t c = 0; c < 3 && !SIMDBPE_TESTS_SANITIZE; c++)
        special_sets += (size_t)plain_corpus(&p, &d, model, corpora[c], 1, &differ);
    size_t special_docs = p.checked - before;
    simdbpe_encoder_free(p.e);
    p.e = ordinary;
    p.m = ordinary_m;
    p.added = NULL;
    free(added);
    if (shipped != p.m)
        simdbpe_model_free(shipped);
    p.opts.special = SIMDBPE_SPECIAL_AS_TEXT;
    p.cut_every = 0;
    fprintf(stderr,
            "model parity %s%s: %zu documents, %llu bytes, %llu tokens, %zu mismatches; "
            "%zu cut points, %zu wrong; %zu corpora with added tokens: %zu documents (the %zu "
            "whose ids they change, every %dth of the others)\n",
            model, generic ? " (generic regex path)" : "", p.checked,
            (unsigned long long)p.bytes, (unsigned long long)p.tokens, p.failed, p.cuts,
            p.cut_failed, special_sets, special_docs, differ, SPECIALS_SAMPLE);
    if (special_sets)
        cr_assert_gt(differ, 0, "%s: the added tokens change no document's ids", model);
    cr_assert_eq(p.failed, 0, "%s: %zu of %zu documents differ from the references", model,
                 p.failed, p.checked);
    if (cuts)
        cr_assert_gt(p.cuts, 1000, "%s: only %zu cut points checked", model, p.cuts);
    else
        cr_assert_eq(p.cuts, 0, "%s: %zu cut points in a text that is never cut", model, p.cuts);
    cr_assert_eq(p.cut_failed, 0, "%s: %zu of %zu cut points change the ids", model,
                 p.cut_failed, p.cuts);

    /* The compiled image, opened untrusted from a copy, encodes the same. */
    size_t len = simdbpe_model_compiled_size(p.m);
    void *img = malloc(len);
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_compile(p.m, img, len, &len, &err), SIMDBPE_OK);
    simdbpe_model *m2;
    cr_assert_eq(simdbpe_model_load_compiled(img, len, &m2, &err), SIMDBPE_OK, "%s: %s", model,
                 err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m2), simdbpe_model_pretokenizer(p.m));
    simdbpe_encoder_free(p.e);
    p.e = tu_encoder(m2);
    p.checked = p.failed = 0;
    cr_assert(edge_set(&p, &d, &edge, model, "edge.tsv"));
    cr_assert_eq(p.failed, 0, "%s: the compiled image encodes %zu edge documents differently",
                 model, p.failed);
    simdbpe_encoder_free(p.e);
    simdbpe_model_free(m2);
    free(img);
    edge_free(&edge);
    simdbpe_model_free(p.m);
    free(p.text);
    free(p.both);
}

static void model_parity(const char *model)
{
    model_parity_of(model, 0, 0);
}

Test(models, r50k_base, .timeout = 900) { model_parity("r50k_base"); }
Test(models, p50k_base, .timeout = 900) { model_parity("p50k_base"); }
Test(models, cl100k_base, .timeout = 900) { model_parity("cl100k_base"); }
Test(models, o200k_base, .timeout = 900) { model_parity("o200k_base"); }
Test(models, gpt4o, .timeout = 900) { model_parity("gpt4o"); }
Test(models, gpt_oss, .timeout = 900) { model_parity("gpt_oss"); }
Test(models, llama3, .timeout = 900) { model_parity("llama3"); }
Test(models, llama3_1, .timeout = 900) { model_parity("llama3_1"); }
Test(models, qwen3, .timeout = 900) { model_parity("qwen3"); }
Test(models, deepseek_v3, .timeout = 900) { model_parity("deepseek_v3"); }
Test(models, claude, .timeout = 900) { model_parity("claude"); }
Test(models, mistral_v1, .timeout = 900) { model_parity("mistral_v1"); }
Test(models, gemma3, .timeout = 900) { model_parity_of("gemma3", 0, 1); }
/* A Split regex no scanner implements: the generic path. */
Test(models, qwen35, .timeout = 900) { model_parity("qwen35"); }
/* Kimi K2's and Tekken's patterns: their scanners. */
Test(models, kimi, .timeout = 900) { model_parity("kimi"); }
Test(models, nemotron, .timeout = 900) { model_parity("nemotron"); }
/* The scanners' models through the generic path give their ids. */
Test(models, generic_r50k_base, .timeout = 900) { model_parity_of("r50k_base", 1, 0); }
Test(models, generic_llama3, .timeout = 900) { model_parity_of("llama3", 1, 0); }
Test(models, generic_qwen3, .timeout = 900) { model_parity_of("qwen3", 1, 0); }
Test(models, generic_gpt4o, .timeout = 900) { model_parity_of("gpt4o", 1, 0); }
Test(models, generic_deepseek_v3, .timeout = 900) { model_parity_of("deepseek_v3", 1, 0); }
Test(models, generic_nemotron, .timeout = 900) { model_parity_of("nemotron", 1, 0); }
Test(models, generic_kimi, .timeout = 900) { model_parity_of("kimi", 1, 0); }

/* A directory with Qwen3's tokenizer.json beside vocab.json + merges.txt
 * (here GPT-2's) encodes as Qwen3: the ids HF tokenizers gives (the
 * vocab.json + merges.txt pair alone, read with GPT-2's pre-tokenizer,
 * would give 84641 6 51 2936 400 14990). */
Test(models, a_directory_with_tokenizer_json_encodes_as_its_model)
{
    dirs d;
    find_dirs(&d, "english.txt.zst", "edge.jsonl");
    char path[1300];
    snprintf(path, sizeof path, "%s/../models/qwen3/tokenizer.json.zst", d.golden);
    if (!is_file(path)) {
        fprintf(stderr, SKIP_LINE ": %s not found\n", path);
        cr_skip_test("model not available: %s", path);
    }
    size_t len;
    char *json = read_zst(path, &len);
    char dir[] = "/tmp/simdbpe-qwen3-dir-XXXXXX";
    cr_assert(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/tokenizer.json", dir);
    tu_write(file, json, len);
    free(json);
    const char *names[] = {"vocab.json", "merges.txt"};
    for (int i = 0; i < 2; i++) {
        char src[512];
        snprintf(src, sizeof src, "%s/%s", TU_GPT2_DIR, names[i]);
        char *data = tu_read(src, &len);
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        tu_write(file, data, len);
        free(data);
    }
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open(dir, &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_str_eq(simdbpe_model_pretokenizer(m), "qwen2");
    simdbpe_encoder *e = tu_encoder(m);
    uint32_t want[] = {84641, 17323, 2936, 400, 14990};
    const uint32_t *ids;
    size_t n;
    const char *text = "DON'T stop $hello";
    cr_assert_eq(simdbpe_encode(e, text, strlen(text), NULL, &ids, &n, &err), SIMDBPE_OK);
    char msg[200];
    cr_assert(!tu_ids_differ(ids, n, want, 5, msg, sizeof msg), "%s", msg);
    simdbpe_encoder_free(e);
    simdbpe_model_free(m);
    const char *all[] = {"tokenizer.json", "vocab.json", "merges.txt"};
    for (int i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, all[i]);
        unlink(file);
    }
    rmdir(dir);
}
