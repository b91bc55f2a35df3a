/* libFuzzer: `pgolf check` on a whole folder, every rule at once. The
 * input is a folder written out: chunks separated by 0xFF bytes, each one
 * file whose name its first byte picks from the names submissions use (a
 * README, the claims, the entry script, logs of several seeds, one of
 * several runs, one folder and three folders down) and whose content is
 * the rest. The folder's problems are findings, never a failure: the
 * check must succeed, each finding must carry a known severity, a code
 * and a message, a line only with a file, and the JSON summary must
 * build. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verifier/check_folder.h"

static const char *const names[] = {
    "README.md",
    "submission.json",
    "train_gpt.py",
    "train_seed42.log",
    "train_seed1337.log",
    "eval_seeds42_314.log",
    "train.log",
    "logs/train_seed7.txt",
    "helper.py",
    "submission_extra.json",
    "seeds/9/run/train.log",
    "requirements.txt",
};
#define N_NAMES (sizeof names / sizeof *names)

static char dir[64];

static const char *const subdirs[] = {"seeds/9/run", "seeds/9", "seeds", "logs"};

/* Remove the input's files; with all set, the folders and the folder too. */
static void clear(int all) {
  char p[128];
  for (size_t i = 0; i < N_NAMES; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  for (size_t i = 0; all && i < sizeof subdirs / sizeof *subdirs; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, subdirs[i]);
    rmdir(p);
  }
  if (all) rmdir(dir);
}

static void clear_all(void) { clear(1); }

/* The folder, made once per process (and removed at exit); its files
 * removed before each input. */
static int prepare(void) {
  char p[128];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/fuzz_check_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    atexit(clear_all);
    snprintf(p, sizeof p, "%s/logs", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/seeds", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/seeds/9", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/seeds/9/run", dir);
    mkdir(p, 0700);
  }
  clear(0);
  return 0;
}

/* One chunk as a file (appended to, when a name repeats). */
static void write_chunk(const uint8_t *c, size_t n) {
  if (!n) return;
  char p[128];
  snprintf(p, sizeof p, "%s/%s", dir, names[c[0] % N_NAMES]);
  FILE *fp = fopen(p, "ab");
  if (!fp) __builtin_trap();
  if (n > 1) fwrite(c + 1, 1, n - 1, fp);
  fclose(fp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (prepare()) return 0;
  for (size_t start = 0, i = 0; i <= size; i++)
    if (i == size || data[i] == 0xFF) {
      write_chunk(data + start, i - start);
      start = i + 1;
    }
  check_result r;
  pg_error err;
  if (check_folder(dir, -1, NULL, &r, &err)) __builtin_trap();
  for (size_t i = 0; i < r.f.n; i++) {
    const finding *x = &r.f.v[i];
    if ((x->sev != SEV_ERROR && x->sev != SEV_WARNING) || !x->code || !x->code[0] || !x->message ||
        (x->line && !x->file))
      __builtin_trap();
  }
  json_t *j = check_result_summary(&r);
  if (!j) __builtin_trap();
  json_decref(j);
  check_result_free(&r);
  return 0;
}
