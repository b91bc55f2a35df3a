/* Every verb of the pgolf command. Each lives in one file of the part it
 * belongs to; common/pgolf.c only dispatches. A verb returns its exit code
 * (PG_EXIT_OK, PG_EXIT_CHECK_FAILED, PG_EXIT_USAGE). argv[0] is the verb. */
#ifndef PGOLF_VERBS_H
#define PGOLF_VERBS_H

int cmd_shard(int argc, char **argv);     /* formats/cmd_shard.c */
int cmd_tokenizer(int argc, char **argv); /* formats/cmd_tokenizer.c */
int cmd_bpb(int argc, char **argv);       /* formats/cmd_bpb.c */
int cmd_gpu(int argc, char **argv);       /* kernels/cmd_gpu.c */
int cmd_data(int argc, char **argv);      /* formats/cmd_data.c */
int cmd_hash(int argc, char **argv);      /* manifests/cmd_hash.c */
int cmd_manifest(int argc, char **argv);  /* manifests/cmd_manifest.c */
int cmd_stats(int argc, char **argv);     /* verifier/cmd_stats.c */
int cmd_train(int argc, char **argv);     /* trainer/cmd_train.c */
int cmd_eval(int argc, char **argv);      /* trainer/cmd_eval.c */
int cmd_check(int argc, char **argv);     /* verifier/cmd_check.c */
int cmd_replay(int argc, char **argv);    /* verifier/cmd_replay.c */
int cmd_audit(int argc, char **argv);     /* verifier/cmd_audit.c */
int cmd_regress(int argc, char **argv);   /* verifier/cmd_regress.c */
int cmd_report(int argc, char **argv);    /* verifier/cmd_report.c */
int cmd_leaderboard(int argc, char **argv); /* verifier/cmd_leaderboard.c */
int cmd_verify(int argc, char **argv);    /* verifier/cmd_verify.c */

#endif
