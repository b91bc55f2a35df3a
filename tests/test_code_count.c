/* Counting the code a run loads: import statements, README run commands,
 * flag values, and whole folders built here (entry, imported module under
 * an env-var flag, a named source folder, a readable companion nothing
 * runs, a loader that exec's another file). */
#include "tests/test_util.h"

#include <sys/stat.h>

#include "verifier/code_count.h"

typedef struct seen {
  char v[16][128];
  int n;
} seen;

static void collect(const char *module, int level, const char *name, void *ctx) {
  seen *s = ctx;
  snprintf(s->v[s->n++], sizeof s->v[0], "%d:%s:%s", level, module, name ? name : "-");
}

static void test_import_targets(void **st) {
  (void)st;
  seen s = {.n = 0};
  assert_int_equal(code_import_targets("import os,ngram_tilt as nt,a.b", collect, &s), 3);
  assert_string_equal(s.v[0], "0:os:-");
  assert_string_equal(s.v[1], "0:ngram_tilt:-");
  assert_string_equal(s.v[2], "0:a.b:-");
  s.n = 0;
  assert_int_equal(code_import_targets("from ngram_tilt import NgramTiltState,x as y", collect, &s), 2);
  assert_string_equal(s.v[0], "0:ngram_tilt:NgramTiltState");
  assert_string_equal(s.v[1], "0:ngram_tilt:x");
  s.n = 0;
  assert_int_equal(code_import_targets("from . import helper", collect, &s), 1);
  assert_string_equal(s.v[0], "1::helper");
  s.n = 0;
  assert_int_equal(code_import_targets("from ..pkg.mod import(a,b)", collect, &s), 2);
  assert_string_equal(s.v[0], "2:pkg.mod:a");
  s.n = 0;
  assert_int_equal(code_import_targets("from m import*", collect, &s), 1);
  assert_string_equal(s.v[0], "0:m:*");
  s.n = 0;
  assert_int_equal(code_import_targets("imported=1", collect, &s), 0);
  assert_int_equal(code_import_targets("from", collect, &s), 0);
}

static void test_readme_lines(void **st) {
  (void)st;
  readme_run r = {0};
  readme_run_line(&r, "export NGRAM_TILT_ENABLED=1", 27, "README.md:3");
  const char *l2 = "SEED=$SEED QK_GAIN='5.0' uv run torchrun --standalone --nproc\\_per\\_node=8 train\\_gpt.py";
  readme_run_line(&r, l2, strlen(l2), "README.md:9");
  const char *l3 = "g++ -O3 -shared -o lib.so ngram/kernel.cpp  # build the kernel";
  readme_run_line(&r, l3, strlen(l3), "README.md:12");
  const char *l4 = "python3 prepare.py --val-docs=50000 && snapshot_download(repo_id='x')";
  readme_run_line(&r, l4, strlen(l4), "README.md:14");
  assert_int_equal(r.n_env, 3);
  assert_string_equal(r.env[0].word, "NGRAM_TILT_ENABLED");
  assert_string_equal(r.env[0].value, "1");
  assert_string_equal(r.env[2].word, "QK_GAIN");
  assert_string_equal(r.env[2].value, "5.0");
  assert_int_equal(r.n_launch, 2);
  assert_string_equal(r.launch[0].word, "train_gpt.py");
  assert_true(r.launch[0].torchrun);
  assert_string_equal(r.launch[0].where, "README.md:9");
  assert_string_equal(r.launch[1].word, "prepare.py");
  assert_false(r.launch[1].torchrun);
  assert_int_equal(r.n_build, 1);
  assert_string_equal(r.build[0].word, "ngram/kernel.cpp");
  readme_run_free(&r);
  /* A README: fenced lines are commands, prose's inline code states
   * settings (TrainingOptSeq4096's configuration list) without running. */
  const char *md =
      "Batching: `TRAIN_BATCH_TOKENS=393216` (3/4 batch), `MATRIX_LR=0.020 lr`\n"
      "```bash\nSEED=1 torchrun train_gpt.py\n```\nUnclosed `WARMDOWN_ITERS=1\n";
  readme_run_markdown(&r, md, strlen(md), "README.md");
  assert_int_equal(r.n_env, 1);
  assert_string_equal(r.env[0].word, "SEED");
  assert_int_equal(r.n_stated, 2);
  assert_string_equal(r.stated[0].word, "TRAIN_BATCH_TOKENS");
  assert_string_equal(r.stated[0].value, "393216");
  assert_string_equal(r.stated[1].value, "0.020");
  assert_string_equal(r.stated[1].where, "README.md:1");
  readme_run_free(&r);
  assert_true(run_value_truthy("1"));
  assert_true(run_value_truthy("$SEED"));
  assert_true(run_value_truthy("True"));
  assert_false(run_value_truthy("0"));
  assert_false(run_value_truthy("0.0"));
  assert_false(run_value_truthy("\"false\""));
  assert_false(run_value_truthy(""));
}

/* ---- folders ---- */

static void put(const char *dir, const char *rel, const char *text, size_t pad) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  char *slash = strrchr(path, '/');
  *slash = 0;
  mkdir(path, 0755);
  *slash = '/';
  size_t n = strlen(text);
  char *buf = malloc(n + pad + 1);
  memcpy(buf, text, n);
  for (size_t i = 0; i < pad; i++) buf[n + i] = i % 64 == 63 ? '\n' : '#';
  test_write_file(path, buf, n + pad);
  free(buf);
}

static const code_file *find(const code_count *c, const char *rel) {
  for (size_t i = 0; i < c->n_sets; i++)
    for (size_t j = 0; j < c->sets[i].n; j++)
      if (!strcmp(c->sets[i].files[j].rel, rel)) return &c->sets[i].files[j];
  for (size_t i = 0; i < c->n_unused; i++)
    if (!strcmp(c->unused[i].rel, rel)) return &c->unused[i];
  return NULL;
}

static void count(const char *dir, code_count *c) {
  submission s;
  memset(&s, 0, sizeof s);
  s.dir = (char *)dir;
  pg_error e;
  assert_int_equal(code_count_build(&s, c, &e), 0);
}

static const char *ENTRY =
    "import os\n"
    "class Hyperparameters:\n"
    "    ngram_tilt_enabled=bool(int(os.environ.get('NGRAM_TILT_ENABLED','0')))\n"
    "def main():\n"
    "    h=Hyperparameters()\n"
    "    if h.ngram_tilt_enabled:from ngram_tilt import Tilt;Tilt()\n";

static void test_flag_on_counts_module_and_folder(void **st) {
  (void)st;
  char *d = test_tmpdir();
  put(d, "train_gpt.py", ENTRY, 0);
  put(d, "ngram_tilt.py", "from pathlib import Path\nSRC = Path(__file__).parent / \"ngram\" / \"k.cpp\"\n", 100);
  put(d, "ngram/k.cpp", "int main(){}\n", 200);
  put(d, "train_gpt_human.py", "print('readable')\n", 5000);
  put(d, "README.md", "# x\n```bash\nexport NGRAM_TILT_ENABLED=1\ntorchrun --nproc_per_node=8 train_gpt.py\n```\n", 0);
  code_count c;
  count(d, &c);
  assert_int_equal(c.n_sets, 1);
  const code_file *m = find(&c, "ngram_tilt.py"), *k = find(&c, "ngram/k.cpp"), *h = find(&c, "train_gpt_human.py");
  assert_non_null(m);
  assert_int_equal(m->state, CODE_COUNTED);
  assert_non_null(strstr(m->why, "imported by train_gpt.py:6"));
  assert_non_null(strstr(m->why, "NGRAM_TILT_ENABLED=1 in README.md:3"));
  assert_non_null(k);
  assert_int_equal(k->state, CODE_COUNTED);
  assert_non_null(strstr(k->why, "ngram_tilt.py:2"));
  assert_non_null(h);
  assert_int_equal(h->state, CODE_NOT_LOADED);
  assert_int_equal(c.sets[0].counted, (int64_t)strlen(ENTRY) + m->bytes + k->bytes);
  code_count_free(&c);
  /* The flag off: the module is listed, not counted, and its folder is
   * never reached. */
  put(d, "README.md", "```\nNGRAM_TILT_ENABLED=0 torchrun train_gpt.py\n```\n", 0);
  count(d, &c);
  m = find(&c, "ngram_tilt.py");
  assert_int_equal(m->state, CODE_NOT_LOADED);
  assert_non_null(strstr(m->why, "off for the documented run"));
  assert_int_equal(c.sets[0].counted, (int64_t)strlen(ENTRY));
  code_count_free(&c);
  /* No README setting: the script's default ('0') decides. */
  put(d, "README.md", "nothing to run here\n", 0);
  count(d, &c);
  m = find(&c, "ngram_tilt.py");
  assert_int_equal(m->state, CODE_NOT_LOADED);
  assert_non_null(strstr(m->why, "the default is '0'"));
  code_count_free(&c);
  test_rmdir(d);
}

/* A name in a metadata constant or a message is not a load. */
static void test_names_without_load(void **st) {
  (void)st;
  char *d = test_tmpdir();
  put(d, "train_gpt.py", "SOURCE = \"scripts/prep.py\"\nprint(\"run\", \"prep.py\")\n", 0);
  put(d, "scripts/prep.py", "import os\n", 0);
  code_count c;
  count(d, &c);
  assert_int_equal(find(&c, "scripts/prep.py")->state, CODE_NOT_LOADED);
  assert_int_equal(c.sets[0].n, 1);
  code_count_free(&c);
  test_rmdir(d);
}

static void test_loader_undecidable_and_fallback(void **st) {
  (void)st;
  char *d = test_tmpdir();
  put(d, "train_gpt.py", "exec(open(__file__.replace(\"train_gpt.py\",\"impl.py\")).read())\n", 0);
  put(d, "impl.py", "import sys\nif len(sys.argv) > 3:\n    import extra\n", 0);
  put(d, "extra.py", "x = 1\n", 0);
  code_count c;
  count(d, &c);
  const code_file *impl = find(&c, "impl.py"), *extra = find(&c, "extra.py");
  assert_int_equal(impl->state, CODE_COUNTED);
  assert_non_null(strstr(impl->why, "named \"impl.py\" at train_gpt.py:1"));
  assert_int_equal(extra->state, CODE_MAYBE);
  assert_non_null(strstr(extra->why, "cannot decide"));
  assert_int_equal(c.sets[0].maybe, extra->bytes);
  code_count_free(&c);
  test_rmdir(d);
  /* No train_gpt.py and no launch: every top-level script is counted. */
  d = test_tmpdir();
  put(d, "a.py", "import b\n", 0);
  put(d, "b.py", "y = 2\n", 0);
  count(d, &c);
  assert_int_equal(c.n_sets, 2);
  assert_non_null(strstr(c.entry_rule, "no entry script identified"));
  code_count_free(&c);
  test_rmdir(d);
}

/* A script naming a shipped file 200,000 times, and importing it under
 * as many conditions: the work is bounded, the file counted once. */
static void test_hostile_repetition(void **st) {
  (void)st;
  char *d = test_tmpdir();
  size_t n = 200000, cap = n * 40 + 64, k = 0;
  char *src = malloc(cap);
  for (size_t i = 0; i < n; i++)
    k += (size_t)snprintf(src + k, cap - k, i % 2 ? "x=open(\"helper.py\")\n" : "if y%zu:\n import helper\n", i);
  put(d, "train_gpt.py", src, 0);
  free(src);
  put(d, "helper.py", "z = 1\n", 0);
  code_count c;
  count(d, &c);
  const code_file *h = find(&c, "helper.py");
  assert_non_null(h);
  assert_int_equal(h->state, CODE_COUNTED);
  assert_int_equal(c.sets[0].n, 2);
  code_count_free(&c);
  test_rmdir(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_import_targets),
      cmocka_unit_test(test_readme_lines),
      cmocka_unit_test(test_flag_on_counts_module_and_folder),
      cmocka_unit_test(test_loader_undecidable_and_fallback),
      cmocka_unit_test(test_hostile_repetition),
      cmocka_unit_test(test_names_without_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
