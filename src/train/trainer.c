/*
 * trainer.c - the public trainer object: options, lifetime, results.
 *
 * Life cycle: new -> feed / end_stream (any number) -> train (once) ->
 * results and save. A feeding error leaves the trainer "failed": it accepts
 * nothing more but can be freed. The trainer owns copies of every string in
 * its options.
 */
#include <stdlib.h>
#include <unistd.h>

#include "../../kernels/kernels.h"
#include "../pretok/pretok.h"
#include "train.h"

#define MAX_THREADS 64

void simdbpe_train_options_init(simdbpe_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->vocab_size = 30000;
    o->mode = SIMDBPE_TRAIN_LINES;
    o->errors = SIMDBPE_UTF8_STRICT;
}

/* The bytes a valid UTF-8 text spells in the byte-level alphabet, or NULL
 * (with *ok = 1) if some code point is not in it; *ok = 0 when out of
 * memory. */
static uint8_t *bytelevel_decode(const uint8_t *s, size_t n, size_t *out_len, int *ok)
{
    uint8_t *out = malloc(n ? n : 1);
    *ok = out != NULL;
    uint32_t bad;
    long len = out ? simdbpe__bytelevel_decode(s, n, out, &bad) : -1;
    if (len < 0) {
        free(out);
        return NULL;
    }
    *out_len = (size_t)len;
    return out;
}

static simdbpe_status copy_specials(simdbpe_trainer *t, const simdbpe_train_options *o,
                                    const simdbpe__kernels *k, simdbpe_error *err)
{
    t->specials = calloc(o->n_specials ? o->n_specials : 1, sizeof *t->specials);
    if (!t->specials)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    for (size_t i = 0; i < o->n_specials; i++) {
        const char *text = o->specials ? o->specials[i] : NULL;
        size_t len = text ? strlen(text) : 0;
        if (!len || memchr(text, '\n', len) || k->validate_utf8((const uint8_t *)text, len) != len)
            return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                                 "special token %zu is empty, has a newline or is not UTF-8",
                                 i + 1);
        int dup = 0;
        for (size_t j = 0; j < t->n_specials && !dup; j++)
            dup = t->specials[j].len == len && memcmp(t->specials[j].text, text, len) == 0;
        if (dup)
            continue;
        simdbpe__train_special *sp = &t->specials[t->n_specials++];
        sp->text = malloc(len);
        int ok = sp->text != NULL;
        if (ok) {
            memcpy(sp->text, text, len);
            sp->len = len;
            sp->bl = bytelevel_decode(sp->text, len, &sp->bl_len, &ok);
        }
        if (!ok)
            return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    return SIMDBPE_OK;
}

static simdbpe_status check_options(simdbpe_trainer *t, const simdbpe_train_options *o,
                                    simdbpe_error *err)
{
    /* A special spelled as one byte-level character is that byte's token
     * and takes no id of its own. */
    uint64_t least = 256;
    for (size_t i = 0; i < t->n_specials; i++)
        least += !(t->specials[i].bl && t->specials[i].bl_len == 1);
    if (o->vocab_size < least)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "vocab size %u is below %llu (256 byte tokens + %zu special "
                             "token%s)",
                             o->vocab_size, (unsigned long long)least, t->n_specials,
                             t->n_specials == 1 ? "" : "s");
    if (o->mode != SIMDBPE_TRAIN_LINES && o->mode != SIMDBPE_TRAIN_DOCUMENTS)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "unknown training mode %d", (int)o->mode);
    if (o->doc_separator && o->mode != SIMDBPE_TRAIN_DOCUMENTS)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "a document separator needs documents mode");
    int kind = o->pre_tokenizer ? simdbpe__pretok_kind_of(o->pre_tokenizer) : 0;
    if (kind < 0) {
        char names[128];
        simdbpe__pretok_names(names, sizeof names, ", ");
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "unknown pre-tokenizer \"%.40s\" (%s)", o->pre_tokenizer, names);
    }
    if (simdbpe__pretok_family_of((unsigned)kind)->generic)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "the trainer does not take the generic regex pre-tokenizer (it "
                             "needs a model's Split patterns); it takes a family with a "
                             "scanner");
    /* The words are counted as the pre-tokenizer splits the raw text. */
    if (simdbpe__pretok_family_of((unsigned)kind)->normalizer != SIMDBPE__NORM_NONE)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "the trainer applies no normalizer, which pre-tokenizer %s needs",
                             o->pre_tokenizer);
    if (o->errors != SIMDBPE_UTF8_STRICT && o->errors != SIMDBPE_UTF8_REPLACE)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "unknown UTF-8 error policy %d", (int)o->errors);
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_trainer_new(const simdbpe_train_options *o, simdbpe_trainer **out,
                                   simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!o || !out)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "trainer_new: NULL argument");
    *out = NULL;
    const simdbpe__kernels *k = simdbpe__kernels_select(getenv("SIMDBPE_KERNEL"));
    if (!k)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "SIMDBPE_KERNEL names an unknown or unsupported kernel set");
    simdbpe_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    t->opts = *o;
    t->opts.specials = NULL;
    simdbpe_status st = copy_specials(t, o, k, err);
    if (st == SIMDBPE_OK)
        st = check_options(t, o, err);
    if (st == SIMDBPE_OK && o->doc_separator) {
        size_t n = o->doc_separator_len;
        if (n == 0 || k->validate_utf8((const uint8_t *)o->doc_separator, n) != n)
            st = simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                               "the document separator is empty or not UTF-8");
        else if (!(t->sep = malloc(n)))
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
        else
            memcpy(t->sep, o->doc_separator, n);
    }
    simdbpe_pool *pool = o->pool;
    if (st == SIMDBPE_OK && !pool) {
        unsigned threads = o->threads;
        if (threads == 0) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            threads = n > 0 ? (unsigned)n : 1;
        }
        st = simdbpe_pool_new(threads < MAX_THREADS ? threads : MAX_THREADS, &t->own_pool, err);
        pool = t->own_pool;
    }
    if (st == SIMDBPE_OK) {
        unsigned threads = simdbpe_pool_threads(pool);
        simdbpe__feeder *f = &t->feed;
        f->pool = pool;
        f->mode = o->mode;
        f->pretok = o->pre_tokenizer ? (uint8_t)simdbpe__pretok_kind_of(o->pre_tokenizer) : 0;
        f->family = simdbpe__pretok_family_of(f->pretok);
        f->sep = t->sep;
        f->sep_len = t->sep ? o->doc_separator_len : 0;
        f->errors = o->errors;
        f->k = k;
        f->threads = threads < MAX_THREADS ? threads : MAX_THREADS;
        f->progress = o->progress;
        f->progress_user = o->progress_user;
        if (simdbpe__feeder_init(f) != SIMDBPE_OK)
            st = simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    }
    if (st != SIMDBPE_OK) {
        simdbpe_trainer_free(t);
        return st;
    }
    t->opts.doc_separator = (const char *)t->sep;
    t->opts.pre_tokenizer = simdbpe__pretok_kind_name(t->feed.pretok); /* static, not o's */
    *out = t;
    return SIMDBPE_OK;
}

void simdbpe_trainer_free(simdbpe_trainer *t)
{
    if (!t)
        return;
    simdbpe__feeder_free(&t->feed);
    simdbpe_pool_free(t->own_pool);
    if (t->specials)
        for (size_t i = 0; i < t->n_specials; i++) {
            free(t->specials[i].text);
            free(t->specials[i].bl);
        }
    free(t->specials);
    free(t->sep);
    simdbpe__train_result_free(&t->res);
    free(t);
}

static simdbpe_status not_feeding(const simdbpe_trainer *t, simdbpe_error *err)
{
    return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                         t->failed ? "the trainer stopped at an earlier error"
                                   : "the trainer has already been trained");
}

simdbpe_status simdbpe_trainer_feed(simdbpe_trainer *t, const void *data, size_t len,
                                    simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!t || (!data && len))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "feed: NULL argument");
    if (t->failed || t->trained)
        return not_feeding(t, err);
    simdbpe_status st = simdbpe__feeder_feed(&t->feed, data, len, err);
    if (st != SIMDBPE_OK)
        t->failed = 1;
    return st;
}

simdbpe_status simdbpe_trainer_end_stream(simdbpe_trainer *t, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!t)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "end_stream: NULL argument");
    if (t->failed || t->trained)
        return not_feeding(t, err);
    simdbpe_status st = simdbpe__feeder_end_stream(&t->feed, err);
    if (st != SIMDBPE_OK)
        t->failed = 1;
    return st;
}

simdbpe_status simdbpe_trainer_train(simdbpe_trainer *t, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!t)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "train: NULL argument");
    if (t->failed || t->trained)
        return not_feeding(t, err);
    simdbpe_status st = simdbpe__feeder_end_stream(&t->feed, err);
    if (st == SIMDBPE_OK)
        st = simdbpe__feeder_collect(&t->feed, err);
    if (st != SIMDBPE_OK) {
        t->failed = 1;
        return st;
    }
    t->unique_words = t->feed.tabs[0].n;
    if (t->unique_words == 0) {
        t->failed = 1;
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "empty corpus: no text to train on");
    }
    simdbpe__merge_config cfg = {
        .vocab_size = t->opts.vocab_size,
        .min_frequency = t->opts.min_frequency,
        .specials = t->specials,
        .n_specials = t->n_specials,
        .bytes_fed = t->feed.bytes_fed,
        .unique_words = t->unique_words,
        .progress = t->opts.progress,
        .progress_user = t->opts.progress_user,
    };
    st = simdbpe__train_merge(&t->feed.tabs[0], &cfg, &t->res, err);
    if (st != SIMDBPE_OK) {
        t->failed = 1;
        return st;
    }
    t->trained = 1;
    return SIMDBPE_OK;
}

uint32_t simdbpe_trainer_vocab_size(const simdbpe_trainer *t)
{
    return t && t->trained ? t->res.n_tokens : 0;
}

size_t simdbpe_trainer_merge_count(const simdbpe_trainer *t)
{
    return t && t->trained ? t->res.n_merges : 0;
}

uint64_t simdbpe_trainer_unique_words(const simdbpe_trainer *t)
{
    return t ? t->unique_words : 0;
}

simdbpe_status simdbpe_trainer_merge_at(const simdbpe_trainer *t, size_t i, uint32_t *left,
                                        uint32_t *right, uint32_t *id, uint64_t *count)
{
    if (!t || !t->trained || i >= t->res.n_merges)
        return SIMDBPE_ERR_INVALID_ARG;
    const simdbpe__merge_rec *m = &t->res.merges[i];
    if (left)
        *left = m->left;
    if (right)
        *right = m->right;
    if (id)
        *id = m->id;
    if (count)
        *count = m->count;
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_trainer_token_bytes(const simdbpe_trainer *t, uint32_t id,
                                           const uint8_t **bytes, size_t *len)
{
    if (!t || !t->trained || !bytes || !len)
        return SIMDBPE_ERR_INVALID_ARG;
    if (id >= t->res.n_tokens)
        return SIMDBPE_ERR_TOKEN_ID;
    *bytes = t->res.blob + t->res.tok_off[id];
    *len = (size_t)(t->res.tok_off[id + 1] - t->res.tok_off[id]);
    return SIMDBPE_OK;
}
