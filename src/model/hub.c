/*
 * hub.c - a model's tokenizer.json in the local Hugging Face cache, found
 * as huggingface_hub lays the cache out; nothing is downloaded.
 *
 *   CACHE/models--ORG--NAME/
 *       refs/main                   the commit "main" stands for: 40 hex
 *                                   digits (refs/v1.0, refs/refs/pr/1 alike)
 *       snapshots/COMMIT/tokenizer.json  -> ../../blobs/ETAG (a link; a
 *                                   copy where links are not possible)
 *       .no_exist/COMMIT/tokenizer.json  an empty file: the Hub said there is
 *                                   no such file at COMMIT
 *
 * CACHE is $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub,
 * else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
 * (huggingface_hub's constants.py; a leading "~/" is $HOME; a variable set
 * to "" counts as unset). A revision that is a commit (40 lowercase hex
 * digits) names its snapshot; any other (a branch, a tag, refs/pr/N) is
 * looked up in refs/, as hf_hub_download does offline. Every failure says
 * which path was missing and how CACHE was chosen.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

#define PATH_CAP 4096

/* huggingface_hub's repo id: NAME or ORG/NAME, each of ASCII letters,
 * digits, '-', '_', '.', starting and ending with a letter, digit or '_',
 * without "--" or "..", NAME at most 96 characters and not ending in
 * ".git". Returns the byte offset of the first fault, or SIZE_MAX. */
static size_t repo_id_fault(const char *id, size_t n)
{
    const char *slash = memchr(id, '/', n);
    if (slash && memchr(slash + 1, '/', n - (size_t)(slash + 1 - id)))
        return (size_t)(slash - id); /* more than one '/' */
    size_t part = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || id[i] == '/') {
            /* a part is not empty, ends with a letter, digit or '_' */
            if (i == part)
                return i;
            if (id[i - 1] == '-' || id[i - 1] == '.')
                return i - 1;
            if (i - part > 96)
                return part + 96;
            part = i + 1;
            continue;
        }
        char c = id[i];
        int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_';
        /* '-' and '.' inside a part only, never doubled */
        if (!word && (i == part || (c != '-' && c != '.') || id[i - 1] == c))
            return i;
    }
    if (n >= 4 && memcmp(id + n - 4, ".git", 4) == 0)
        return n - 4;
    return SIZE_MAX;
}

/* A revision usable as a path under refs/: not empty, no "." or ".."
 * component, no empty component, no control character or backslash.
 * Returns the byte offset of the first fault, or SIZE_MAX. */
static size_t revision_fault(const char *rev)
{
    size_t n = strlen(rev), start = 0;
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = i < n ? (unsigned char)rev[i] : '/';
        if (c < 0x20 || c == 0x7F || c == '\\')
            return i;
        if (c != '/')
            continue;
        size_t len = i - start;
        if (len == 0 || (len == 1 && rev[start] == '.') ||
            (len == 2 && rev[start] == '.' && rev[start + 1] == '.'))
            return start;
        start = i + 1;
    }
    return SIZE_MAX;
}

static int is_commit(const char *s, size_t n)
{
    if (n != 40)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* Writes a + b + c into out; 0, or -1 if it does not fit. A leading "~/"
 * (or a lone "~") in a is the home directory. */
static int join(char *out, const char *a, const char *b, const char *c)
{
    const char *home = "";
    struct passwd pw, *found = NULL;
    char pw_buf[1024];
    if (a[0] == '~' && (a[1] == '/' || a[1] == '\0')) {
        home = env("HOME");
        if (!home) /* as Python's expanduser: the password database */
            home = getpwuid_r(getuid(), &pw, pw_buf, sizeof pw_buf, &found) == 0 && found &&
                           found->pw_dir
                       ? found->pw_dir
                       : "";
        a++;
    }
    int n = snprintf(out, PATH_CAP, "%s%s%s%s", home, a, b, c);
    return n >= 0 && n < PATH_CAP ? 0 : -1;
}

/* The cache directory and, in *from, what chose it (for messages). */
static int cache_dir(char *out, const char **from)
{
    const char *v;
    if ((v = env("HF_HUB_CACHE"))) {
        *from = "$HF_HUB_CACHE";
        return join(out, v, "", "");
    }
    if ((v = env("HUGGINGFACE_HUB_CACHE"))) {
        *from = "$HUGGINGFACE_HUB_CACHE";
        return join(out, v, "", "");
    }
    if ((v = env("HF_HOME"))) {
        *from = "$HF_HOME/hub";
        return join(out, v, "/hub", "");
    }
    if ((v = env("XDG_CACHE_HOME"))) {
        *from = "$XDG_CACHE_HOME/huggingface/hub";
        return join(out, v, "/huggingface/hub", "");
    }
    *from = "~/.cache/huggingface/hub, no HF_HUB_CACHE or HF_HOME";
    return join(out, "~", "/.cache/huggingface/hub", "");
}

/* Up to `max` names in `dir` (sorted, at most 12 characters of each),
 * comma-separated, into out (capacity cap); "none" when empty. */
static void list_dir(const char *dir, char *out, size_t cap, size_t max)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    size_t o = 0, shown = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *s = names[i]->d_name;
        if (s[0] != '.' && shown < max && o < cap) {
            int w = snprintf(out + o, cap - o, "%s%.12s%s", shown ? ", " : "", s,
                             strlen(s) > 12 ? "..." : "");
            o += w > 0 ? (size_t)w : 0;
            shown++;
        } else if (s[0] != '.' && shown == max && o < cap) {
            int w = snprintf(out + o, cap - o, ", ...");
            o += w > 0 ? (size_t)w : 0;
            shown++;
        }
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    if (!out[0])
        snprintf(out, cap, "none");
}

/* The commit a ref file names: 40 hex digits (a trailing newline allowed,
 * which huggingface_hub never writes but an editor may). */
static simdbpe_status read_ref(const char *path, char commit[41], simdbpe_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0, "%s: %s", path,
                             strerror(errno));
    char buf[64];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    while (n > 0 && n <= 42 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    if (is_commit(buf, n)) {
        memcpy(commit, buf, 40);
        commit[40] = '\0';
        return SIMDBPE_OK;
    }
    size_t bad = 0;
    while (bad < n && bad < 40 &&
           ((buf[bad] >= '0' && buf[bad] <= '9') || (buf[bad] >= 'a' && buf[bad] <= 'f')))
        bad++;
    return simdbpe__fail(err, SIMDBPE_ERR_IO, bad, 1,
                         "%s byte %zu: %s; a ref holds a commit (40 hex digits)", path, bad,
                         n == 0 ? "empty" : "not a commit");
}

/* The snapshot's tokenizer.json is missing: says what the snapshot has
 * instead, and whether the Hub recorded that it has no such file. */
static simdbpe_status no_tokenizer_json(const char *repo, const char *snap, const char *folder,
                                        const char *commit, const char *spec, simdbpe_error *err)
{
    char p[PATH_CAP], q[PATH_CAP];
    if (join(p, snap, "/tokenizer.json", "") == 0) {
        struct stat st;
        char target[512];
        ssize_t t;
        if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode) &&
            (t = readlink(p, target, sizeof target - 1)) > 0) {
            target[t] = '\0';
            return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                                 "%s: a link to a missing blob (%s)", p, target);
        }
    }
    int vocab = join(p, snap, "/vocab.json", "") == 0 && is_file(p);
    int merges = join(p, snap, "/merges.txt", "") == 0 && is_file(p);
    int spm = join(p, snap, "/tokenizer.model", "") == 0 && is_file(p);
    int none = join(q, folder, "/.no_exist/", commit) == 0 &&
               join(p, q, "/tokenizer.json", "") == 0 && is_file(p);
    if (vocab && merges)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "%s: no tokenizer.json, only vocab.json + merges.txt, which do not "
                             "name the pre-tokenizer; simdbpe needs tokenizer.json",
                             snap);
    if (spm)
        return simdbpe__fail(err, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, 0,
                             "%s: no tokenizer.json, only tokenizer.model (SentencePiece); "
                             "simdbpe needs tokenizer.json",
                             snap);
    if (none)
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "%s: the Hub has no tokenizer.json at %s (%s/.no_exist/%.12s...)",
                             spec, commit, folder, commit);
    return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                         "%s: no tokenizer.json (simdbpe does not download: hf download %s "
                         "tokenizer.json)",
                         snap, repo);
}

simdbpe_status simdbpe__hub_find(const char *repo_id, const char *revision, int as_model,
                                 char **path, simdbpe_error *err)
{
    simdbpe__error_clear(err);
    if (!repo_id || !path)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "model_find_pretrained: NULL argument");
    *path = NULL;
    const char *at = strchr(repo_id, '@');
    size_t id_len = at ? (size_t)(at - repo_id) : strlen(repo_id);
    const char *rev = revision ? revision : at ? at + 1 : "main";
    if (at && revision)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, id_len, 0,
                             "repo id %s byte %zu: '@' is not part of a repo id (the revision "
                             "is given apart)",
                             repo_id, id_len);
    size_t bad = repo_id_fault(repo_id, id_len);
    if (bad != SIZE_MAX)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, bad, 0,
                             "repo id %.*s byte %zu: a repo id is NAME or ORG/NAME (ASCII "
                             "letters, digits, '-', '_', '.'; no \"--\" or \"..\"; NAME at most "
                             "96)",
                             (int)id_len, repo_id, bad);
    if ((bad = revision_fault(rev)) != SIZE_MAX)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, bad, 0,
                             "revision '%s' byte %zu: not a branch, tag or commit name", rev, bad);

    char repo[128], spec[256], cache[PATH_CAP], folder[PATH_CAP], p[PATH_CAP], snap[PATH_CAP];
    char commit[41];
    const char *from;
    snprintf(repo, sizeof repo, "%.*s", (int)id_len, repo_id);
    snprintf(spec, sizeof spec, "%s%s%s", repo, strcmp(rev, "main") ? "@" : "",
             strcmp(rev, "main") ? rev : "");
    /* models--ORG--NAME: the id with its '/' spelled "--" */
    char *slash = strchr(repo, '/');
    int fits = cache_dir(cache, &from) == 0;
    if (fits && slash) {
        *slash = '\0';
        fits = join(p, cache, "/models--", repo) == 0 && join(folder, p, "--", slash + 1) == 0;
        *slash = '/';
    } else if (fits) {
        fits = join(folder, cache, "/models--", repo) == 0;
    }
    if (!fits)
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "%s: the Hugging Face cache's path (%s) is too long", spec, from);
    if (!is_dir(folder))
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "%s%s not in the Hugging Face cache: no %s (the cache: %s); simdbpe "
                             "does not download",
                             spec, as_model ? ": not a file or directory, and" : " is", folder,
                             from);

    int by_ref = !is_commit(rev, strlen(rev));
    if (by_ref) {
        if (join(p, folder, "/refs/", rev))
            return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                                 "%s: revision too long", spec);
        if (!is_file(p)) {
            char refs[96], snaps[96];
            join(snap, folder, "/refs", "");
            list_dir(snap, refs, sizeof refs, 4);
            join(snap, folder, "/snapshots", "");
            list_dir(snap, snaps, sizeof snaps, 3);
            return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                                 "%s: not in the Hugging Face cache: no %s (refs: %s; snapshots: "
                                 "%s)",
                                 spec, p, refs, snaps);
        }
        simdbpe_status st = read_ref(p, commit, err);
        if (st != SIMDBPE_OK)
            return st;
    } else {
        memcpy(commit, rev, 41);
    }
    if (join(snap, folder, "/snapshots/", commit))
        return simdbpe__fail(err, SIMDBPE_ERR_INVALID_ARG, SIMDBPE_NO_POSITION, 0,
                             "%s: the Hugging Face cache's path is too long", spec);
    if (!is_dir(snap)) {
        if (by_ref)
            return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                                 "%s/refs/%s names %s, which has no snapshot (no "
                                 "snapshots/%.12s...)",
                                 folder, rev, commit, commit);
        return simdbpe__fail(err, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, 0,
                             "%s: not in the Hugging Face cache: no %s", spec, snap);
    }
    if (join(p, snap, "/tokenizer.json", "") || !is_file(p))
        return no_tokenizer_json(repo, snap, folder, commit, spec, err);
    *path = strdup(p);
    if (!*path)
        return simdbpe__fail(err, SIMDBPE_ERR_NOMEM, SIMDBPE_NO_POSITION, 0, "out of memory");
    return SIMDBPE_OK;
}

simdbpe_status simdbpe_model_find_pretrained(const char *repo_id, const char *revision,
                                             char **path, simdbpe_error *err)
{
    return simdbpe__hub_find(repo_id, revision, 0, path, err);
}

int simdbpe__hub_name(const char *name)
{
    const char *at = strchr(name, '@');
    size_t n = at ? (size_t)(at - name) : strlen(name);
    const char *slash = memchr(name, '/', n);
    return slash && repo_id_fault(name, n) == SIZE_MAX;
}
