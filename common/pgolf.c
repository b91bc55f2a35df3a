/* pgolf: reproducibility and submission verification for Parameter Golf.
 * This file only dispatches to the verbs (common/verbs.h). */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/verbs.h"
#include "common/version.h"

typedef struct verb {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} verb;

static const verb verbs[] = {
    {"train", cmd_train, "train the baseline GPT deterministically, write a manifest"},
    {"eval", cmd_eval, "evaluate an artifact on the validation split"},
    {"check", cmd_check, "static checks of submission folders"},
    {"replay", cmd_replay, "re-run a submission under a sandbox and an external clock"},
    {"audit", cmd_audit, "check a score dump: coverage, bytes, normalization, score-first order"},
    {"shard", cmd_shard, "inspect and validate token shards"},
    {"tokenizer", cmd_tokenizer, "read a SentencePiece model: byte tables, summary"},
    {"bpb", cmd_bpb, "tokens, bytes and tokens per byte of a split"},
    {"gpu", cmd_gpu, "the CUDA devices this build can use (exit 2 where there is none)"},
    {"data", cmd_data, "validation documents found in training shards"},
    {"hash", cmd_hash, "SHA-256 of files in parallel (sha256sum format)"},
    {"manifest", cmd_manifest, "create, show, verify, diff and sign run manifests"},
    {"stats", cmd_stats, "multi-seed significance: one-sided Welch test with a margin"},
    {"regress", cmd_regress, "CI gate: val_bpb band and loss chain against golden runs"},
    {"report", cmd_report, "self-contained HTML and Markdown report of runs and checks"},
    {"leaderboard", cmd_leaderboard, "every folder of a records/ tree: table, significance chain, pages"},
    {"verify", cmd_verify, "check, replay, audit and significance of a folder; HTML + Markdown"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: pgolf VERB [ARGS...]\n\nverbs:\n");
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    fprintf(out, "  %-11s %s\n", verbs[i].name, verbs[i].summary);
  fprintf(out,
          "\n  version     print version and build identity\n"
          "\nExit codes: 0 ok, 1 a check failed, 2 usage or input error.\n"
          "Run `pgolf VERB --help` for a verb's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return PG_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    usage(stdout);
    return PG_EXIT_OK;
  }
  if (!strcmp(name, "version") || !strcmp(name, "--version")) {
    printf("pgolf %s\nsource %s\ncompiler %s\ncuda %s\nmpi %s\n", PGOLF_VERSION, pgolf_source_digest(),
           pgolf_compiler(), pgolf_has_cuda() ? "yes" : "no", pgolf_has_mpi() ? "yes" : "no");
    return PG_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (!strcmp(name, verbs[i].name)) return verbs[i].run(argc - 1, argv + 1);
  pg_die_msg("unknown verb '%s' (try `pgolf --help`)", name);
  return PG_EXIT_USAGE;
}
