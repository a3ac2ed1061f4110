/*
 * test_adversarial_jsonl.c - JSON Lines records that are huge or escaped
 * everywhere, through the real CLI (`simdbpe encode --input-format jsonl`),
 * under an address-space limit.
 *
 * The text of each record is one of the 10 MB inputs of adv_gen.h, written
 * into JSON with escapes, so the expected ids are the references' ids for
 * that input (tests/adversarial/long.tsv, HF tokenizers): the reader must
 * unescape exactly, and the encoder then gives HF's ids.
 *   - mixture, every code point escaped as \uXXXX (surrogate pairs above
 *     U+FFFF, upper- and lower-case hex), after a padding member, so the
 *     line is 50,000,000 bytes;
 *   - whitespace, with the short escapes \t \n \r \f and \u000B, \u00A0,
 *     \u2000.. \u3000 spelled as escapes;
 *   - punctuation, with \" \\ \/ escaped and the rest raw.
 * Plus the documented error: a lone \uD800 is an error naming the record
 * (exit status 1) in strict mode.
 *
 * The CLI runs in a forked child with RLIMIT_AS (not under
 * AddressSanitizer, which needs terabytes of address space: then the test
 * says so), one encoder thread, output u32 into a temporary file.
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv_expect.h"
#include "adv_gen.h"

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

#define LINE_BYTES 50000000u
/* Address space for the CLI: the encoder's bound for a 10 MB text (as in
 * test_adversarial.c: 256 MB + 32 B per byte) plus room for the reader to
 * hold the record and its unescaped copy (3 B per line byte). */
#define AS_LIMIT(line, text) (((rlim_t)256 << 20) + (rlim_t)32 * (text) + (rlim_t)3 * (line))

typedef enum { ESC_ALL_U, ESC_SHORT, ESC_MINIMAL } escape_style;

typedef struct outbuf {
    char *p;
    size_t n, cap;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->p = realloc(o->p, o->cap);
        cr_assert(o->p != NULL);
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static void put_u(outbuf *o, unsigned v, int upper)
{
    char tmp[16];
    snprintf(tmp, sizeof tmp, upper ? "\\u%04X" : "\\u%04x", v & 0xFFFF);
    put(o, tmp, 6);
}

/* Decodes the (valid) UTF-8 code point at s[i]; returns its length. */
static size_t decode(const uint8_t *s, size_t i, uint32_t *cp)
{
    uint8_t c = s[i];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    *cp = c & (0x7F >> n);
    for (size_t k = 1; k < n; k++)
        *cp = *cp << 6 | (s[i + k] & 0x3F);
    return n;
}

/* Appends text as the body of a JSON string, escaped in `style`. */
static void escape(outbuf *o, const uint8_t *s, size_t len, escape_style style)
{
    int upper = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = decode(s, i, &cp);
        const char *short_esc = NULL;
        switch (cp) {
        case '"': short_esc = "\\\""; break;
        case '\\': short_esc = "\\\\"; break;
        case '/': short_esc = style != ESC_ALL_U ? "\\/" : NULL; break;
        case '\t': short_esc = "\\t"; break;
        case '\n': short_esc = "\\n"; break;
        case '\r': short_esc = "\\r"; break;
        case '\f': short_esc = "\\f"; break;
        case '\b': short_esc = "\\b"; break;
        }
        if (style == ESC_ALL_U) {
            upper ^= 1;
            if (cp >= 0x10000) {
                put_u(o, 0xD800 + ((cp - 0x10000) >> 10), upper);
                put_u(o, 0xDC00 + ((cp - 0x10000) & 0x3FF), upper);
            } else {
                put_u(o, cp, upper);
            }
        } else if (short_esc) {
            put(o, short_esc, strlen(short_esc));
        } else if (cp < 0x20 || (style == ESC_SHORT && cp >= 0x80)) {
            put_u(o, cp, 1);
        } else {
            put(o, (const char *)s + i, n);
        }
        i += n;
    }
}

/* Writes `line` + "\n" to a new temporary file; returns its path. */
static char *write_temp(const char *data, size_t len)
{
    char *path = strdup("/tmp/simdbpe-adv-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        cr_assert(w > 0, "write: %s", strerror(errno));
        off += (size_t)w;
    }
    cr_assert(write(fd, "\n", 1) == 1);
    close(fd);
    return path;
}

/* Runs the CLI on `input` with --errors `errors`, output u32 into a
 * temporary file; returns the exit status, the output, the child's peak
 * RSS and what it wrote on stderr (in msg). */
static int run_cli(const char *input, const char *errors, rlim_t limit, char **out,
                   size_t *out_len, long *rss_mb, char *msg, size_t msg_cap)
{
    const char *cli = getenv("SIMDBPE_CLI");
    cr_assert(cli != NULL, "SIMDBPE_CLI is not set (ctest sets it)");
    char out_path[] = "/tmp/simdbpe-adv-out-XXXXXX";
    int ofd = mkstemp(out_path);
    cr_assert(ofd >= 0);
    close(ofd);
    char err_path[] = "/tmp/simdbpe-adv-err-XXXXXX";
    int efd = mkstemp(err_path);
    cr_assert(efd >= 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (!UNDER_ASAN) {
            struct rlimit rl = {limit, limit};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(90);
        }
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        dup2(efd, STDERR_FILENO);
        execl(cli, cli, "encode", "--input-format", "jsonl", "--output-format", "u32",
              "--errors", errors, "--threads", "1", "-q", "-o", out_path, input, (char *)NULL);
        _exit(91);
    }
    int status;
    struct rusage ru;
    cr_assert(wait4(pid, &status, 0, &ru) == pid);
    *rss_mb = ru.ru_maxrss / 1024;
    ssize_t got = pread(efd, msg, msg_cap - 1, 0);
    msg[got > 0 ? got : 0] = '\0';
    close(efd);
    unlink(err_path);
    *out = NULL;
    *out_len = 0;
    FILE *f = fopen(out_path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        *out = malloc((size_t)n + 1);
        cr_assert(*out != NULL);
        *out_len = fread(*out, 1, (size_t)n, f);
        fclose(f);
    }
    unlink(out_path);
    cr_assert(WIFEXITED(status), "the CLI died of signal %d", WTERMSIG(status));
    return WEXITSTATUS(status);
}

static void check_record(const char *kind, escape_style style, size_t pad_to)
{
    size_t k = 0;
    while (k < ADV_N_KINDS && strcmp(adv_kinds[k].name, kind) != 0)
        k++;
    adv_expected e;
    cr_assert(k < ADV_N_KINDS && adv_read_expected(kind, &e), "no data for %s", kind);
    size_t len;
    uint8_t *text = adv_generate(k, 10000000, &len);
    cr_assert(text != NULL);
    outbuf o = {0};
    put(&o, "{\"id\": 1, ", 10);
    const char *tail = "\"}";
    const char *text_key = "\"text\": \"";
    if (pad_to) {
        /* Padding before the text: the reader must skip a huge member. */
        outbuf body = {0};
        escape(&body, text, len, style);
        size_t fixed = o.n + strlen("\"pad\": \"\", ") + strlen(text_key) + body.n + strlen(tail);
        put(&o, "\"pad\": \"", 8);
        for (size_t i = 0; fixed + i < pad_to; i++)
            put(&o, i % 2 ? "x" : " ", 1);
        put(&o, "\", ", 3);
        put(&o, text_key, strlen(text_key));
        put(&o, body.p, body.n);
        free(body.p);
    } else {
        put(&o, text_key, strlen(text_key));
        escape(&o, text, len, style);
    }
    put(&o, tail, strlen(tail));
    free(text);
    if (pad_to)
        cr_assert(o.n == pad_to, "%s: line is %zu bytes, wanted %zu", kind, o.n, pad_to);
    char *path = write_temp(o.p, o.n);
    rlim_t limit = AS_LIMIT(o.n, len);
    char *out;
    size_t out_len;
    long rss;
    char msg[1024];
    int rc = run_cli(path, "strict", limit, &out, &out_len, &rss, msg, sizeof msg);
    unlink(path);
    free(path);
    if (UNDER_ASAN)
        fprintf(stderr, "NOTE %s: memory limit not applied under AddressSanitizer\n", kind);
    cr_log_info("%s: JSON line of %zu bytes, CLI peak RSS %ld MB (limit %llu MB)", kind, o.n,
                rss, (unsigned long long)(limit >> 20));
    free(o.p);
    cr_assert(rc == 0, "%s: the CLI exited %d (limit %llu MB of address space): %s", kind, rc,
              (unsigned long long)(limit >> 20), msg);
    cr_assert(out_len == 4 * e.tokens, "%s: %zu tokens, HF has %zu", kind, out_len / 4,
              e.tokens);
    char hex[65];
    adv_sha256_hex(out, out_len, hex);
    cr_assert_str_eq(hex, e.ids_sha, "%s: ids differ from HF's", kind);
    free(out);
}

Test(jsonl, line_of_50_mb_all_u_escapes) { check_record("mixture", ESC_ALL_U, LINE_BYTES); }
Test(jsonl, whitespace_short_escapes) { check_record("whitespace", ESC_SHORT, 0); }
Test(jsonl, punctuation_escapes) { check_record("punctuation", ESC_MINIMAL, 0); }

Test(jsonl, lone_surrogate_is_an_error)
{
    static const char line[] = "{\"text\": \"ok\"}\n{\"text\": \"a\\ud800b\"}";
    char *path = write_temp(line, sizeof line - 1);
    char *out;
    size_t out_len;
    long rss;
    char msg[1024];
    int rc = run_cli(path, "strict", AS_LIMIT(1 << 20, 1 << 20), &out, &out_len, &rss, msg,
                     sizeof msg);
    unlink(path);
    free(path);
    free(out);
    cr_assert(rc == 1, "a lone \\ud800 in strict mode: exit %d, documented 1", rc);
    cr_assert(strstr(msg, "line 2") && strstr(msg, "surrogate"),
              "the message does not name line 2 and the surrogate: %s", msg);
}
