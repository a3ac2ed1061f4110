/*
 * simdbpe.c - the command-line tool: main() and the dispatch to commands.
 *
 *   simdbpe encode   text, lines or JSON Lines -> token ids (cmd_encode.c)
 *   simdbpe count    tokens per document and in total    (cmd_encode.c)
 *   simdbpe decode   token ids -> text                   (cmd_decode.c)
 *   simdbpe merge    the parts of a sharded encode       (cmd_merge.c)
 *   simdbpe compile  a model as a compiled .sbpe file    (cmd_compile.c)
 *
 * The CLI is a thin layer over the public API: it owns arguments, files and
 * messages; the library owns the rest. Exit codes: 0 success, 1 bad input
 * or failure, 2 bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "simdbpe.h"

#include "cli.h"
#include "cmd_compile.h"
#include "cmd_train.h"

/* The help texts, from parts so that each is written once. */
#define FILES_TEXT                                                                                 \
    "Each FILE (standard input when none, or \"-\") is one document, unless\n"                     \
    "--input-format or --doc-separator says otherwise. FILE may be a pattern\n"                    \
    "(\"data/*.jsonl.zst\", expanded in sorted order) or @LIST (a file naming one\n"               \
    "input per line). .gz and .zst inputs are decompressed (detected by content).\n"

#define COMMON_OPTIONS                                                                             \
    "  -m, --model MODEL        a name: gpt2 (default) = r50k_base, p50k_base, cl100k_base,\n"     \
    "                           o200k_base (embedded); a file: tokenizer.json (any name;\n"        \
    "                           .gz/.zst too), NAME.tiktoken, FILE.sbpe; a directory with\n"       \
    "                           tokenizer.json or vocab.json + merges.txt [+ special_tokens];\n"   \
    "                           else ORG/NAME[@REVISION]: its tokenizer.json in the local\n"       \
    "                           Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub or\n"             \
    "                           ~/.cache/huggingface/hub; nothing is downloaded)\n"               \
    "  --input-format F         text (default) | lines (each line, without its\n"                  \
    "                           newline, is a document) | jsonl (one JSON object per line)\n"      \
    "  --json-key KEY           jsonl: the text field (default \"text\"; \"a.b\" = nested)\n"      \
    "  --doc-separator SEP      text: documents are separated by SEP (\\n \\t \\r \\\\ \\xHH\n"    \
    "                           escapes), e.g. '<|endoftext|>' or '\\n\\n'\n"                      \
    "  --special P              text (default: specials are ordinary text) |\n"                    \
    "                           allow (special tokens -> their ids) |\n"                           \
    "                           error (fail on a special token); added tokens\n"                   \
    "                           that are not special always map to their ids\n"                    \
    "  --add-special-tokens     add the ids the model's post-processor puts around\n"              \
    "                           each document (Llama-3.1's <|begin_of_text|>)\n"                   \
    "  --errors E               strict (default: invalid UTF-8 or a lone \\uD800 escape is\n"      \
    "                           an error) | replace (-> U+FFFD)\n"                                 \
    "  --on-error A             stop (default: a bad document stops the run) | skip (it is\n"      \
    "                           skipped, counted and listed in the summary)\n"                     \
    "  --threads N              encoder threads (default: the CPUs this process may use)\n"        \
    "  --cache-mb N             each thread's table of the pieces it has encoded grows to\n"       \
    "                           N MB at most (1-65536; default 256)\n"                             \
    "  --rank R --world-size W  encode files R, R+W, R+2W, ... into OUT.RRRRR-of-WWWWW*,\n"        \
    "                           then OUT.RRRRR-of-WWWWW.done; a rerun of a done rank skips.\n"     \
    "                           Default: SLURM_ARRAY_TASK_ID/COUNT, SLURM_PROCID/NTASKS,\n"        \
    "                           OMPI_COMM_WORLD_RANK/SIZE or RANK/WORLD_SIZE if set\n"             \
    "  -o, --output PATH        write here instead of standard output (a prefix for\n"             \
    "                           llmc, megatron, datatrove); files appear only when complete\n"     \
    "  --summary FILE           write the JSON summary to FILE (\"-\": standard error)\n"          \
    "  -q, --quiet              no progress line or summary line on a terminal\n"                  \
    "\n"                                                                                           \
    "On success nothing is written to standard error, but a progress line and a\n"                 \
    "one-line summary when it is a terminal.\n"

#define ENCODE_OPTIONS                                                                             \
    "  --output-format F        text (default; one line of ids per document) |\n"                  \
    "                           u16 | u32 (little-endian ids, no header; nanoGPT = u16\n"          \
    "                           with --eot append) | llmc (PREFIX_{val,train}_NNNNNN.bin,\n"       \
    "                           shard 0 = val) | megatron (PREFIX.bin + PREFIX.idx) |\n"           \
    "                           datatrove (PREFIX.ds, .ds.index, .ds.metadata)\n"                  \
    "  --eot E                  none | append | prepend the end-of-text token to each\n"           \
    "                           document (default: none for text/u16/u32, prepend for\n"           \
    "                           llmc, append for megatron and datatrove)\n"                        \
    "  --eot-token TEXT|ID      that token (default: <|endoftext|>, else the model's EOS:\n"       \
    "                           its post-processor's, or <|end_of_text|>, </s>, ...)\n"            \
    "  --dtype D                u16 | u32 ids in llmc, megatron, datatrove (default: u16\n"        \
    "                           when the vocabulary fits)\n"                                       \
    "  --shard-tokens N         llmc: tokens per shard (default 100000000)\n"

const char cli_encode_help[] =
    "usage: simdbpe encode [OPTIONS] [FILE...]   text -> token ids\n"
    "\n" FILES_TEXT "\nOptions:\n" COMMON_OPTIONS "\n" ENCODE_OPTIONS
    "  -h, --help               this text\n";

const char cli_count_help[] =
    "usage: simdbpe count [OPTIONS] [FILE...]   tokens per document and in total\n"
    "\n" FILES_TEXT "\nOptions:\n" COMMON_OPTIONS "  -h, --help               this text\n";

const char cli_usage_text[] =
    "usage: simdbpe COMMAND [OPTIONS] [FILE...]\n"
    "\n"
    "Commands (simdbpe COMMAND --help for each one's options):\n"
    "  encode   text -> token ids\n"
    "  decode   token ids -> text\n"
    "  count    tokens per document and in total\n"
    "  merge    combine the parts of a sharded encode (megatron, u16, u32, text)\n"
    "  compile  write a model as a compiled .sbpe file\n"
    "  train    train a byte-level BPE vocabulary\n"
    "\n" FILES_TEXT
    "\n"
    "Options (encode, count):\n" COMMON_OPTIONS "\n"
    "Options (encode):\n" ENCODE_OPTIONS
    "\n"
    "Options (decode):\n"
    "  --input-format F         text (default; ids per line) | u16 | u32\n"
    "\n"
    "Options (merge): simdbpe merge --output-format megatron|u16|u32|text -o OUT [PART...]\n"
    "  PARTs are the OUT.RRRRR-of-WWWWW outputs of a sharded encode (found by\n"
    "  themselves when none are given); documents come back in input order.\n"
    "\n"
    "  -h, --help               this text\n"
    "  -V, --version            the version\n";

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "compile") == 0)
        return simdbpe_cmd_compile(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "train") == 0)
        return simdbpe_cmd_train(argc - 1, argv + 1);
    if (argc < 2)
        return cli_usage_error("missing command");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        fputs(cli_usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("simdbpe %s\n", simdbpe_version());
        return 0;
    }
    if (!strcmp(cmd, "encode") || !strcmp(cmd, "count"))
        return cmd_encode(cmd, argc - 2, argv + 2);
    if (!strcmp(cmd, "decode"))
        return cmd_decode(argc - 2, argv + 2);
    if (!strcmp(cmd, "merge"))
        return cmd_merge(argc - 2, argv + 2);
    return cli_usage_error("unknown command '%s'", cmd);
}
