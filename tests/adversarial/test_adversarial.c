/*
 * test_adversarial.c - pathological inputs give the references' ids (or
 * the documented error) with bounded memory.
 *
 * Expected values come from tests/adversarial/gen_expected.mjs (HF
 * tokenizers 0.23.2 for ids, Python 3 for UTF-8 offsets and replacement),
 * never from simdbpe:
 *   - cases.jsonl: NUL bytes, overlong forms, UTF-8-encoded surrogates,
 *     code points above U+10FFFF, multi-byte characters whole or cut at
 *     block boundaries 16..65536. Strict mode must give the ids, or
 *     ERR_INVALID_UTF8 at Python's offset; replace mode the ids of Python's
 *     replacement. Run once per kernel set this CPU has (SIMDBPE_KERNEL).
 *   - long.tsv: 10 MB single pieces of each kind in adv_gen.h. Each runs in
 *     a forked child under an address-space limit (setrlimit RLIMIT_AS;
 *     not under AddressSanitizer, whose shadow memory needs terabytes of
 *     address space - then the test says so and runs without it); the
 *     child sends back the status, offset, token count and the sha256 of
 *     the ids, and the parent compares. Time is measured in
 *     bench/adversarial/, not here.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "simdbpe.h"

#include "adv_expect.h"
#include "adv_gen.h"
#include "kernels.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The address-space limit of a long-piece child: a fixed allowance for the
 * process (model, libraries, Criterion) plus a linear bound per byte of the
 * text that is encoded (in replace mode each invalid byte can become 3).
 * Measured with bench/adversarial/ and prlimit: every valid 10 MB kind
 * runs in 400 MB of address space, the 30 MB repaired texts in 1 GB (peak
 * RSS 165-225 MB and 546 MB); the limit leaves about 1.5x of headroom. */
#define AS_BASE ((rlim_t)256 << 20)
#define AS_PER_BYTE 32

static simdbpe_model *gpt2(void)
{
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert(simdbpe_model_load_gpt2(&m, &err) == SIMDBPE_OK, "%s", err.message);
    return m;
}

/* ------------------------------------------------------------ small cases */

static uint8_t *build_case(json_t *c, size_t *len)
{
    const char *pre = json_string_value(json_object_get(c, "pre"));
    const char *post = json_string_value(json_object_get(c, "post"));
    const char *mid = json_string_value(json_object_get(c, "mid"));
    size_t n = (size_t)json_integer_value(json_object_get(c, "n"));
    size_t m = (size_t)json_integer_value(json_object_get(c, "m"));
    cr_assert(pre && post && mid, "malformed case");
    size_t lp = strlen(pre), lq = strlen(post), lm = strlen(mid) / 2;
    uint8_t *buf = malloc(lp * n + lm + lq * m + 1);
    cr_assert(buf != NULL);
    size_t o = 0;
    for (size_t i = 0; i < n; i++, o += lp)
        memcpy(buf + o, pre, lp);
    for (size_t i = 0; i < lm; i++) {
        unsigned v;
        cr_assert(sscanf(mid + 2 * i, "%2x", &v) == 1);
        buf[o++] = (uint8_t)v;
    }
    for (size_t i = 0; i < m; i++, o += lq)
        memcpy(buf + o, post, lq);
    *len = o;
    return buf;
}

static void check_ids(json_t *c, const char *what, const uint32_t *ids, size_t n)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    size_t want_n = (size_t)json_integer_value(json_object_get(c, "tokens"));
    json_t *want_ids = json_object_get(c, "ids");
    if (want_ids)
        for (size_t i = 0; i < n && i < json_array_size(want_ids); i++)
            cr_expect(ids[i] == (uint32_t)json_integer_value(json_array_get(want_ids, i)),
                      "%s (%s): id %zu is %u, HF has %lld", name, what, i, ids[i],
                      (long long)json_integer_value(json_array_get(want_ids, i)));
    cr_assert(n == want_n, "%s (%s): %zu tokens, HF has %zu", name, what, n, want_n);
    char hex[65];
    adv_ids_sha256(ids, n, hex);
    cr_assert_str_eq(hex, json_string_value(json_object_get(c, "ids_sha256")),
                     "%s (%s): ids differ from HF's", name, what);
}

static void run_case(simdbpe_encoder *enc, json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    size_t len;
    uint8_t *text = build_case(c, &len);
    json_t *off = json_object_get(c, "strict_offset");
    const uint32_t *ids;
    size_t n;
    simdbpe_error err;
    simdbpe_status st = simdbpe_encode(enc, (const char *)text, len, NULL, &ids, &n, &err);
    if (json_is_null(off)) {
        cr_assert(st == SIMDBPE_OK, "%s: strict encode of valid UTF-8: %s", name, err.message);
        check_ids(c, "strict", ids, n);
    } else {
        cr_assert(st == SIMDBPE_ERR_INVALID_UTF8, "%s: strict encode gave %s, not ERR_INVALID_UTF8",
                  name, simdbpe_status_name(st));
        cr_assert(err.byte_offset == (uint64_t)json_integer_value(off),
                  "%s: error at byte %llu, Python says %lld", name,
                  (unsigned long long)err.byte_offset, (long long)json_integer_value(off));
    }
    simdbpe_encode_options replace = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_REPLACE};
    st = simdbpe_encode(enc, (const char *)text, len, &replace, &ids, &n, &err);
    cr_assert(st == SIMDBPE_OK, "%s: replace-mode encode: %s", name, err.message);
    check_ids(c, "replace", ids, n);
    free(text);
}

Test(cases, every_kernel_set)
{
    json_error_t jerr;
    const char *path = SIMDBPE_ADV_DIR "/cases.jsonl";
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "%s: %s", path, strerror(errno));
    json_t *cases = json_array();
    for (json_t *c; (c = json_loadf(f, JSON_DISABLE_EOF_CHECK, &jerr));)
        if (!json_object_get(c, "header"))
            json_array_append_new(cases, c);
        else
            json_decref(c);
    fclose(f);
    cr_assert(json_array_size(cases) > 200, "%s: only %zu cases", path, json_array_size(cases));
    simdbpe_model *m = gpt2();
    size_t sets = 0;
    for (const simdbpe__kernels *const *k = simdbpe__kernels_available(); *k; k++, sets++) {
        setenv("SIMDBPE_KERNEL", (*k)->name, 1);
        simdbpe_encoder *enc;
        cr_assert(simdbpe_encoder_new(m, &enc, NULL) == SIMDBPE_OK, "encoder for %s", (*k)->name);
        cr_assert_str_eq(simdbpe_encoder_kernel_name(enc), (*k)->name);
        for (size_t i = 0; i < json_array_size(cases); i++)
            run_case(enc, json_array_get(cases, i));
        simdbpe_encoder_free(enc);
    }
    unsetenv("SIMDBPE_KERNEL");
    cr_log_info("%zu cases x %zu kernel sets", json_array_size(cases), sets);
    json_decref(cases);
    simdbpe_model_free(m);
}

/* ------------------------------------------------------------- long pieces */

/* What the child reports. */
typedef struct long_result {
    int stage; /* 0 done; 1 generate failed; 2 encoder; 3 replace encode */
    simdbpe_status strict, replace;
    uint64_t strict_offset;
    size_t len, tokens;
    char input_sha[65], ids_sha[65];
    char message[256];
} long_result;

/* In the child: generate, encode strict (and replace when invalid),
 * digest. Runs under the address-space limit. */
static void long_child(size_t k, size_t bytes, long_result *r)
{
    uint8_t *text = adv_generate(k, bytes, &r->len);
    if (!text) {
        r->stage = 1;
        return;
    }
    adv_sha256_hex(text, r->len, r->input_sha);
    simdbpe_model *m;
    simdbpe_encoder *enc;
    simdbpe_error err;
    if (simdbpe_model_load_gpt2(&m, &err) != SIMDBPE_OK || simdbpe_encoder_new(m, &enc, NULL) != SIMDBPE_OK) {
        r->stage = 2;
        return;
    }
    const uint32_t *ids;
    size_t n;
    r->strict = simdbpe_encode(enc, (const char *)text, r->len, NULL, &ids, &n, &err);
    r->strict_offset = err.byte_offset;
    snprintf(r->message, sizeof r->message, "%s", err.message);
    if (r->strict == SIMDBPE_ERR_INVALID_UTF8) {
        simdbpe_encode_options replace = {.special = SIMDBPE_SPECIAL_AS_TEXT, .errors = SIMDBPE_UTF8_REPLACE};
        r->replace = simdbpe_encode(enc, (const char *)text, r->len, &replace, &ids, &n, &err);
        snprintf(r->message, sizeof r->message, "%s", err.message);
        if (r->replace != SIMDBPE_OK) {
            r->stage = 3;
            return;
        }
    }
    if (r->strict == SIMDBPE_OK || r->replace == SIMDBPE_OK) {
        r->tokens = n;
        adv_ids_sha256(ids, n, r->ids_sha);
    }
    r->stage = 0;
}

static void check_long(const char *kind)
{
    size_t k = 0;
    while (k < ADV_N_KINDS && strcmp(adv_kinds[k].name, kind) != 0)
        k++;
    cr_assert(k < ADV_N_KINDS, "no generator for %s", kind);
    adv_expected e;
    cr_assert(adv_read_expected(kind, &e), "long.tsv has no row for %s", kind);
    int fd[2];
    cr_assert(pipe(fd) == 0);
    size_t text_bytes = e.strict_offset < 0 ? e.bytes : 3 * e.bytes;
    rlim_t limit = AS_BASE + (rlim_t)AS_PER_BYTE * text_bytes;
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        if (!UNDER_ASAN) {
            struct rlimit rl = {limit, limit};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(90);
        }
        long_result r;
        memset(&r, 0, sizeof r);
        long_child(k, 10000000, &r);
        _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 91);
    }
    close(fd[1]);
    long_result r;
    ssize_t got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    int status;
    struct rusage ru;
    cr_assert(wait4(pid, &status, 0, &ru) == pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == (ssize_t)sizeof r,
              "%s: the child died (%s %d) under a %llu MB address-space limit", kind,
              WIFSIGNALED(status) ? "signal" : "exit",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
              (unsigned long long)(limit >> 20));
    if (UNDER_ASAN)
        fprintf(stderr, "NOTE %s: memory limit not applied under AddressSanitizer\n", kind);
    cr_log_info("%s: %zu bytes, peak RSS %ld MB (limit %llu MB of address space)", kind, r.len,
                ru.ru_maxrss / 1024, (unsigned long long)(limit >> 20));
    cr_assert(r.len == e.bytes && strcmp(r.input_sha, e.input_sha) == 0,
              "%s: the generated input differs from gen_expected.mjs's (%zu bytes)", kind, r.len);
    cr_assert(r.stage == 0, "%s: failed at stage %d: %s", kind, r.stage, r.message);
    if (e.strict_offset < 0) {
        cr_assert(r.strict == SIMDBPE_OK, "%s: strict encode: %s", kind, r.message);
    } else {
        cr_assert(r.strict == SIMDBPE_ERR_INVALID_UTF8 &&
                      r.strict_offset == (uint64_t)e.strict_offset,
                  "%s: strict gave %s at %llu, Python says invalid at %lld", kind,
                  simdbpe_status_name(r.strict), (unsigned long long)r.strict_offset,
                  e.strict_offset);
    }
    cr_assert(r.tokens == e.tokens, "%s: %zu tokens, HF has %zu", kind, r.tokens, e.tokens);
    cr_assert_str_eq(r.ids_sha, e.ids_sha, "%s: ids differ from HF's", kind);
}

Test(long, one_letter) { check_long("one_letter"); }
Test(long, letters) { check_long("letters"); }
Test(long, digits) { check_long("digits"); }
Test(long, punctuation) { check_long("punctuation"); }
Test(long, spaces) { check_long("spaces"); }
Test(long, whitespace) { check_long("whitespace"); }
Test(long, cjk) { check_long("cjk"); }
Test(long, emoji) { check_long("emoji"); }
Test(long, letters_mixed) { check_long("letters_mixed"); }
Test(long, nul) { check_long("nul"); }
Test(long, mixture) { check_long("mixture"); }
Test(long, overlong) { check_long("overlong"); }
Test(long, surrogates) { check_long("surrogates"); }
Test(long, late_invalid) { check_long("late_invalid"); }
