/*
 * test_hub.c - models found in the local Hugging Face cache
 * (simdbpe_model_find_pretrained, simdbpe_model_locate, simdbpe_model_open
 * with ORG/NAME[@REVISION]): the cache each environment variable chooses,
 * refs and commits, the symlinks into blobs/, the precedence of built-in
 * names and existing paths, and every error with its message and position.
 * Each test builds its cache in its own temporary directory (hub_util.h).
 */
#include <criterion/criterion.h>

#include <ftw.h>

#include "hub_util.h"

static char root[64];
static char cwd[4096];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/simdbpe-hub-XXXXXX");
    cr_assert(mkdtemp(root));
    cr_assert(getcwd(cwd, sizeof cwd));
    hub_clear_env();
    setenv("HOME", root, 1); /* the default cache is under it */
}

static void teardown(void)
{
    if (chdir(cwd) != 0)
        return;
    if (root[0])
        nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(hub, .init = setup, .fini = teardown, .timeout = 60);

static const char *in_root(const char *rel)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 4096, "%s/%s", root, rel);
    return b;
}

/* The ids of texts under `model`, one array each, compared with `want`'s. */
static void expect_same_ids(const simdbpe_model *got_model, const simdbpe_model *want_model)
{
    static const char *const texts[] = {"", "Hello world", "a <tool> and tool, <s>x</s>\n",
                                        "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80 12345"};
    simdbpe_encoder *a = tu_encoder(got_model), *b = tu_encoder(want_model);
    simdbpe_encode_options opts = SIMDBPE_ENCODE_OPTIONS_INIT;
    opts.special = SIMDBPE_SPECIAL_ALLOW;
    opts.add_special_tokens = 1;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        const uint32_t *x, *y;
        size_t nx, ny;
        simdbpe_error err;
        cr_assert_eq(simdbpe_encode(a, texts[i], strlen(texts[i]), &opts, &x, &nx, &err),
                     SIMDBPE_OK, "%s", err.message);
        uint32_t *copy = malloc((nx + 1) * sizeof *copy);
        memcpy(copy, x, nx * sizeof *x);
        cr_assert_eq(simdbpe_encode(b, texts[i], strlen(texts[i]), &opts, &y, &ny, &err),
                     SIMDBPE_OK, "%s", err.message);
        char why[160];
        cr_assert(!tu_ids_differ(copy, nx, y, ny, why, sizeof why), "text %zu: %s", i, why);
        cr_assert_gt(nx, 1, "text %zu: the post-processor's <s> ... </s> were added", i);
        free(copy);
    }
    simdbpe_encoder_free(a);
    simdbpe_encoder_free(b);
}

/* The model the small tokenizer.json gives when read directly. */
static simdbpe_model *small_direct(void)
{
    size_t len;
    char *json = hub_small_json(&len);
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_load_hf_json(json, len, &m, &err), SIMDBPE_OK, "%s", err.message);
    free(json);
    return m;
}

/* find_pretrained's status and message; the path, when found, in *path. */
static simdbpe_status find(const char *repo, const char *rev, char **path, simdbpe_error *err)
{
    *path = NULL;
    return simdbpe_model_find_pretrained(repo, rev, path, err);
}

static void expect_found(const char *repo, const char *rev, const char *want_path)
{
    char *path;
    simdbpe_error err;
    cr_assert_eq(find(repo, rev, &path, &err), SIMDBPE_OK, "%s @ %s: %s", repo,
                 rev ? rev : "-", err.message);
    cr_assert_str_eq(path, want_path);
    simdbpe_free(path);
}

static void expect_error(const char *repo, const char *rev, simdbpe_status status,
                         uint64_t byte_offset, const char *message)
{
    char *path;
    simdbpe_error err;
    cr_assert_eq(find(repo, rev, &path, &err), status, "%s: %s", repo, err.message);
    cr_assert_null(path);
    cr_assert_eq(err.byte_offset, byte_offset, "%s: byte %llu in %s", repo,
                 (unsigned long long)err.byte_offset, err.message);
    cr_assert_str_eq(err.message, message);
}

Test(hub, main_through_refs_and_a_symlink_into_blobs)
{
    char folder[256], want[512];
    hub_make_repo(in_root("hf/hub"), "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HOME", in_root("hf"), 1);
    snprintf(want, sizeof want, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", folder);
    expect_found("acme/small", NULL, want);
    expect_found("acme/small", "main", want);
    expect_found("acme/small@main", NULL, want);

    /* the model opened by its repo id encodes as the file itself */
    simdbpe_model *hub, *direct = small_direct();
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open("acme/small", &hub, &err), SIMDBPE_OK, "%s", err.message);
    expect_same_ids(hub, direct);
    simdbpe_model_free(hub);
    simdbpe_model_free(direct);
}

Test(hub, revisions_by_branch_tag_pull_request_and_commit)
{
    char folder[256], want[512], want2[512];
    const char *cache = in_root("cache");
    hub_make_repo(cache, "acme", "small", HUB_COMMIT, "main", folder);
    hub_make_repo(cache, "acme", "small", HUB_COMMIT2, "v1.0", folder);
    hub_make_repo(cache, "acme", "small", HUB_COMMIT2, "refs/pr/1", folder);
    setenv("HF_HUB_CACHE", cache, 1);
    snprintf(want, sizeof want, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", folder);
    snprintf(want2, sizeof want2, "%s/snapshots/" HUB_COMMIT2 "/tokenizer.json", folder);
    expect_found("acme/small", NULL, want);
    expect_found("acme/small", "v1.0", want2);
    expect_found("acme/small@v1.0", NULL, want2);
    expect_found("acme/small@refs/pr/1", NULL, want2);
    expect_found("acme/small", HUB_COMMIT2, want2);
    expect_found("acme/small@" HUB_COMMIT, NULL, want);

    char *path;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_locate("acme/small@v1.0", &path, &err), SIMDBPE_OK, "%s",
                 err.message);
    cr_assert_str_eq(path, want2);
    simdbpe_free(path);
}

Test(hub, a_repo_without_organisation)
{
    char folder[256], want[512];
    hub_make_repo(in_root("c"), "acme", "small", HUB_COMMIT, "main", folder);
    /* models--gpt2-like: a legacy repo id with no '/' */
    char legacy[256];
    snprintf(legacy, sizeof legacy, "%s/models--small", in_root("c"));
    cr_assert_eq(rename(folder, legacy), 0);
    setenv("HF_HUB_CACHE", in_root("c"), 1);
    snprintf(want, sizeof want, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", legacy);
    expect_found("small", NULL, want);
    /* simdbpe_model_open takes only ORG/NAME from the cache: a bare name
     * is a built-in name or a path */
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open("small", &m, &err), SIMDBPE_ERR_IO);
    cr_assert(strstr(err.message, "model small: not a name"), "%s", err.message);
}

Test(hub, the_cache_each_variable_chooses)
{
    char f[256], want_hub[512], want_legacy[512], want_home[512], want_xdg[512],
        want_default[512];
    hub_make_repo(in_root("hubcache"), "acme", "small", HUB_COMMIT, "main", f);
    snprintf(want_hub, sizeof want_hub, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", f);
    hub_make_repo(in_root("legacy"), "acme", "small", HUB_COMMIT, "main", f);
    snprintf(want_legacy, sizeof want_legacy, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", f);
    hub_make_repo(in_root("home/hub"), "acme", "small", HUB_COMMIT, "main", f);
    snprintf(want_home, sizeof want_home, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", f);
    hub_make_repo(in_root("xdg/huggingface/hub"), "acme", "small", HUB_COMMIT, "main", f);
    snprintf(want_xdg, sizeof want_xdg, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", f);
    hub_make_repo(in_root(".cache/huggingface/hub"), "acme", "small", HUB_COMMIT, "main", f);
    snprintf(want_default, sizeof want_default, "%s/snapshots/" HUB_COMMIT "/tokenizer.json",
             f);

    expect_found("acme/small", NULL, want_default); /* ~/.cache/huggingface/hub */
    setenv("XDG_CACHE_HOME", in_root("xdg"), 1);
    expect_found("acme/small", NULL, want_xdg);
    setenv("HF_HOME", in_root("home"), 1);
    expect_found("acme/small", NULL, want_home);
    setenv("HUGGINGFACE_HUB_CACHE", in_root("legacy"), 1);
    expect_found("acme/small", NULL, want_legacy);
    setenv("HF_HUB_CACHE", in_root("hubcache"), 1);
    expect_found("acme/small", NULL, want_hub);
    /* set but empty counts as unset */
    setenv("HF_HUB_CACHE", "", 1);
    expect_found("acme/small", NULL, want_legacy);
    /* a leading ~/ is the home directory */
    unsetenv("HUGGINGFACE_HUB_CACHE");
    setenv("HF_HOME", "~/home", 1);
    char want_tilde[512];
    snprintf(want_tilde, sizeof want_tilde, "%s/home/hub/models--acme--small/snapshots/" HUB_COMMIT
             "/tokenizer.json", root);
    expect_found("acme/small", NULL, want_tilde);
}

Test(hub, built_in_names_and_existing_paths_come_first)
{
    char folder[256];
    const char *cache = in_root("c");
    hub_make_repo(cache, "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HUB_CACHE", cache, 1);
    cr_assert_eq(chdir(root), 0);
    /* ./acme/small, a directory with GPT-2's files, is what "acme/small" names */
    hub_mkdirs(in_root("acme/small"));
    size_t len;
    char *v = tu_read(TU_GPT2_DIR "/vocab.json", &len);
    tu_write(in_root("acme/small/vocab.json"), v, len);
    free(v);
    v = tu_read(TU_GPT2_DIR "/merges.txt", &len);
    tu_write(in_root("acme/small/merges.txt"), v, len);
    free(v);

    char *path;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_locate("acme/small", &path, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_str_eq(path, "acme/small");
    simdbpe_free(path);
    simdbpe_model *m, *gpt2 = tu_gpt2();
    cr_assert_eq(simdbpe_model_open("acme/small", &m, &err), SIMDBPE_OK, "%s", err.message);
    cr_assert_eq(simdbpe_model_vocab_size(m), simdbpe_model_vocab_size(gpt2));
    simdbpe_model_free(m);
    simdbpe_model_free(gpt2);

    /* a built-in name: no path at all */
    path = (char *)"unchanged";
    cr_assert_eq(simdbpe_model_locate("cl100k_base", &path, &err), SIMDBPE_OK);
    cr_assert_null(path);
}

Test(hub, a_repo_that_is_not_cached)
{
    char folder[256], msg[1024];
    hub_make_repo(in_root("hf/hub"), "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HOME", in_root("hf"), 1);
    snprintf(msg, sizeof msg,
             "acme/missing is not in the Hugging Face cache: no %s/hf/hub/models--acme--missing "
             "(the cache: $HF_HOME/hub); simdbpe does not download",
             root);
    expect_error("acme/missing", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
    /* another organisation's repo of the same name */
    snprintf(msg, sizeof msg,
             "other/small is not in the Hugging Face cache: no %s/hf/hub/models--other--small "
             "(the cache: $HF_HOME/hub); simdbpe does not download",
             root);
    expect_error("other/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);

    /* the same through simdbpe_model_open, which also read it as a path */
    simdbpe_model *m;
    simdbpe_error err;
    cr_assert_eq(simdbpe_model_open("other/small", &m, &err), SIMDBPE_ERR_IO);
    snprintf(msg, sizeof msg,
             "other/small: not a file or directory, and not in the Hugging Face cache: no "
             "%s/hf/hub/models--other--small (the cache: $HF_HOME/hub); simdbpe does not "
             "download",
             root);
    cr_assert_str_eq(err.message, msg);

    /* the default cache, with no variable set */
    unsetenv("HF_HOME");
    snprintf(msg, sizeof msg,
             "acme/small is not in the Hugging Face cache: no "
             "%s/.cache/huggingface/hub/models--acme--small (the cache: ~/.cache/huggingface/hub, "
             "no HF_HUB_CACHE or HF_HOME); simdbpe does not download",
             root);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
}

Test(hub, a_revision_that_is_not_cached)
{
    char folder[256], msg[1024];
    hub_make_repo(in_root("c"), "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HUB_CACHE", in_root("c"), 1);
    snprintf(msg, sizeof msg,
             "acme/small@v2: not in the Hugging Face cache: no %s/refs/v2 (refs: main; "
             "snapshots: 0123456789ab...)",
             folder);
    expect_error("acme/small", "v2", SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
    expect_error("acme/small@v2", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
    /* a commit with no snapshot */
    snprintf(msg, sizeof msg,
             "acme/small@" HUB_COMMIT2 ": not in the Hugging Face cache: no "
             "%s/snapshots/" HUB_COMMIT2,
             folder);
    expect_error("acme/small", HUB_COMMIT2, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
    /* refs/main names a commit whose snapshot is gone */
    char ref[512];
    snprintf(ref, sizeof ref, "%s/refs/main", folder);
    tu_write(ref, HUB_COMMIT2, 40);
    snprintf(msg, sizeof msg,
             "%s/refs/main names " HUB_COMMIT2 ", which has no snapshot (no "
             "snapshots/89abcdef0123...)",
             folder);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);
}

Test(hub, a_ref_that_is_not_a_commit)
{
    char folder[256], ref[512], msg[1024];
    hub_make_repo(in_root("c"), "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HUB_CACHE", in_root("c"), 1);
    snprintf(ref, sizeof ref, "%s/refs/main", folder);
    tu_write(ref, "0123zz", 6);
    char *path;
    simdbpe_error err;
    cr_assert_eq(find("acme/small", NULL, &path, &err), SIMDBPE_ERR_IO);
    cr_assert_eq(err.byte_offset, 4);
    cr_assert_eq(err.line, 1);
    snprintf(msg, sizeof msg,
             "%s byte 4: not a commit; a ref holds a commit (40 hex digits)", ref);
    cr_assert_str_eq(err.message, msg);
    tu_write(ref, "", 0);
    snprintf(msg, sizeof msg, "%s byte 0: empty; a ref holds a commit (40 hex digits)", ref);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, 0, msg);
    /* upper-case hex is not how the Hub writes a commit */
    tu_write(ref, "0123456789ABCDEF0123456789abcdef01234567", 40);
    snprintf(msg, sizeof msg, "%s byte 10: not a commit; a ref holds a commit (40 hex digits)",
             ref);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, 10, msg);
    /* a trailing newline, as an editor leaves it, is accepted */
    tu_write(ref, HUB_COMMIT "\n", 41);
    char want[512];
    snprintf(want, sizeof want, "%s/snapshots/" HUB_COMMIT "/tokenizer.json", folder);
    expect_found("acme/small", NULL, want);
}

Test(hub, a_snapshot_without_tokenizer_json)
{
    char folder[256], snap[320], p[400], msg[1024];
    hub_make_repo(in_root("c"), "acme", "small", HUB_COMMIT, "main", folder);
    setenv("HF_HUB_CACHE", in_root("c"), 1);
    snprintf(snap, sizeof snap, "%s/snapshots/" HUB_COMMIT, folder);
    snprintf(p, sizeof p, "%s/tokenizer.json", snap);

    /* the blob the link points to was removed */
    snprintf(msg, sizeof msg, "%s/blobs/e1", folder);
    cr_assert_eq(unlink(msg), 0);
    snprintf(msg, sizeof msg,
             "%s: a link to a missing blob (../../blobs/e1)", p);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);

    /* no file at all */
    cr_assert_eq(unlink(p), 0);
    snprintf(msg, sizeof msg,
             "%s: no tokenizer.json (simdbpe does not download: hf download acme/small "
             "tokenizer.json)",
             snap);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);

    /* the Hub said it has none (huggingface_hub's .no_exist marker) */
    snprintf(msg, sizeof msg, "%s/.no_exist/" HUB_COMMIT, folder);
    hub_mkdirs(msg);
    strcat(msg, "/tokenizer.json");
    tu_write(msg, "", 0);
    snprintf(msg, sizeof msg,
             "acme/small: the Hub has no tokenizer.json at " HUB_COMMIT
             " (%s/.no_exist/0123456789ab...)",
             folder);
    expect_error("acme/small", NULL, SIMDBPE_ERR_IO, SIMDBPE_NO_POSITION, msg);

    /* SentencePiece's model file only */
    snprintf(p, sizeof p, "%s/tokenizer.model", snap);
    tu_write(p, "x", 1);
    snprintf(msg, sizeof msg,
             "%s: no tokenizer.json, only tokenizer.model (SentencePiece); simdbpe needs "
             "tokenizer.json",
             snap);
    expect_error("acme/small", NULL, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, msg);

    /* vocab.json + merges.txt: named, and what simdbpe needs instead */
    snprintf(p, sizeof p, "%s/vocab.json", snap);
    tu_write(p, "{}", 2);
    snprintf(p, sizeof p, "%s/merges.txt", snap);
    tu_write(p, "", 0);
    snprintf(msg, sizeof msg,
             "%s: no tokenizer.json, only vocab.json + merges.txt, which do not name the "
             "pre-tokenizer; simdbpe needs tokenizer.json",
             snap);
    expect_error("acme/small", NULL, SIMDBPE_ERR_UNSUPPORTED, SIMDBPE_NO_POSITION, msg);
}

Test(hub, malformed_repo_ids_and_revisions)
{
    setenv("HF_HUB_CACHE", in_root("c"), 1);
    static const struct {
        const char *id;
        uint64_t at;
    } bad[] = {
        {"a/b/c", 1},   {"-a/b", 0},     {"a/b-", 3},     {"a--b/c", 2},  {"a/b..c", 4},
        {"a/b.git", 3}, {"a/", 2},       {"/a", 0},       {"a b/c", 1},   {"a/\xC3\xA9", 2},
        {"", 0},        {"org/.x", 4},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *path;
        simdbpe_error err;
        cr_assert_eq(find(bad[i].id, NULL, &path, &err), SIMDBPE_ERR_INVALID_ARG, "'%s': %s",
                     bad[i].id, err.message);
        cr_assert_eq(err.byte_offset, bad[i].at, "'%s': byte %llu: %s", bad[i].id,
                     (unsigned long long)err.byte_offset, err.message);
        char want[128];
        snprintf(want, sizeof want, "repo id %s byte %llu: a repo id is NAME or ORG/NAME",
                 bad[i].id, (unsigned long long)bad[i].at);
        cr_assert_eq(strncmp(err.message, want, strlen(want)), 0, "%s", err.message);
    }
    char long_name[200] = "org/";
    memset(long_name + 4, 'x', 97);
    char long_msg[400];
    snprintf(long_msg, sizeof long_msg,
             "repo id %s byte 100: a repo id is NAME or ORG/NAME (ASCII letters, digits, '-', "
             "'_', '.'; no \"--\" or \"..\"; NAME at most 96)",
             long_name);
    expect_error(long_name, NULL, SIMDBPE_ERR_INVALID_ARG, 100, long_msg);
    long_name[100] = '\0'; /* 96 x: accepted as an id, not cached */
    char *path;
    simdbpe_error err;
    cr_assert_eq(find(long_name, NULL, &path, &err), SIMDBPE_ERR_IO, "%s", err.message);

    expect_error("acme/small@v1", "v1", SIMDBPE_ERR_INVALID_ARG, 10,
                 "repo id acme/small@v1 byte 10: '@' is not part of a repo id (the revision is "
                 "given apart)");
    expect_error("acme/small", "../x", SIMDBPE_ERR_INVALID_ARG, 0,
                 "revision '../x' byte 0: not a branch, tag or commit name");
    expect_error("acme/small@refs//1", NULL, SIMDBPE_ERR_INVALID_ARG, 5,
                 "revision 'refs//1' byte 5: not a branch, tag or commit name");
    expect_error("acme/small", "", SIMDBPE_ERR_INVALID_ARG, 0,
                 "revision '' byte 0: not a branch, tag or commit name");
    expect_error("acme/small", "a\\b", SIMDBPE_ERR_INVALID_ARG, 1,
                 "revision 'a\\b' byte 1: not a branch, tag or commit name");

    /* simdbpe_model_open reads a name that is no repo id as a path only */
    simdbpe_model *m;
    cr_assert_eq(simdbpe_model_open("a/b/c", &m, &err), SIMDBPE_ERR_IO);
    cr_assert_str_eq(err.message,
                     "model a/b/c: not a name (gpt2, r50k_base, p50k_base, cl100k_base, "
                     "o200k_base), a model file (tokenizer.json, .tiktoken, .sbpe), a directory "
                     "or ORG/NAME in the Hugging Face cache");
    cr_assert_eq(simdbpe_model_find_pretrained(NULL, NULL, &path, &err),
                 SIMDBPE_ERR_INVALID_ARG);
    cr_assert_eq(simdbpe_model_locate("gpt2", NULL, &err), SIMDBPE_ERR_INVALID_ARG);
}
