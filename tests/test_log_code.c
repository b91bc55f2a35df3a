/* A log's copy of its script against the shipped script: one case per
 * class (same, layout, partial, config, defaults, code, other, none), with
 * timestamps, preamble lines and interleaved output. */
#include "tests/test_util.h"

#include "verifier/log_code.h"

static char script[8192];

static void make_script(void) {
  size_t k = (size_t)snprintf(script, sizeof script,
                              "import os\n"
                              "import sys\n"
                              "class Hyperparameters:\n"
                              "    seed = int(os.environ.get('SEED', 1337))\n"
                              "    warmdown = int(os.environ.get('WARMDOWN_ITERS', 3000))\n"
                              "    lr = float(os.environ.get('LR', 0.02))\n");
  for (int i = 0; i < 12; i++)
    k += (size_t)snprintf(script + k, sizeof script - k, "def f%d(x):\n    return x + %d\n", i, i);
  snprintf(script + k, sizeof script - k,
           "def main():\n    print('train')\n    sys.stdout.flush()\n"
           "if __name__ == '__main__':\n    main()\n");
}

/* script with `from` replaced by `to` (first occurrence). */
static char *edited(const char *from, const char *to) {
  static char out[8192];
  const char *p = strstr(script, from);
  assert_non_null(p);
  snprintf(out, sizeof out, "%.*s%s%s", (int)(p - script), script, to, p + strlen(from));
  return out;
}

static int readme_sets_lr(const char *var, const char *dflt, void *ctx) {
  (void)dflt;
  (void)ctx;
  return !strcmp(var, "LR");
}

/* Output lines the run printed after the '=' row, before its first step. */
static const char *printed = "";

/* Compare a log made of pre + copy + the '=' row + output lines. */
static log_code_result run(const char *pre, const char *copy) {
  char log[20000];
  size_t k = (size_t)snprintf(log, sizeof log, "%s%s", pre, copy);
  uint32_t last = 0;
  for (size_t i = 0; i < k; i++) last += log[i] == '\n';
  k += (size_t)snprintf(log + k, sizeof log - k, "%.100s\n%sstep:1/10 train_loss:2.0\n",
                        "====================================================================================================",
                        printed);
  const char *names[1] = {"train_gpt.py"};
  const char *texts[1] = {script};
  size_t lens[1] = {strlen(script)};
  log_code_result r;
  assert_int_equal(log_code_compare(log, k, 1, last, names, texts, lens, 1, readme_sets_lr, NULL, &r), 0);
  return r;
}

/* The script with `each` before every line and `first` before the first. */
static const char *prefixed(const char *first, const char *each) {
  static char out[16000];
  size_t k = (size_t)snprintf(out, sizeof out, "%s", first);
  for (const char *p = script; *p;) {
    const char *nl = strchr(p, '\n');
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%.*s\n", each, (int)(nl - p), p);
    p = nl + 1;
  }
  return out;
}

static void test_same_and_layout(void **st) {
  (void)st;
  make_script();
  log_code_result r = run("", script);
  assert_int_equal(r.cls, LC_SAME);
  assert_string_equal(r.script, "train_gpt.py");
  /* Unix timestamps on every line; torchrun's --tee tag on every line and
   * a logger's clock on the first. */
  r = run("", prefixed("", "1776142348.135 "));
  assert_int_equal(r.cls, LC_SAME);
  r = run("", prefixed("[2026-03-23 04:39:13] INFO: ", "[default0]:"));
  assert_int_equal(r.cls, LC_SAME);
  r = run("nohup: ignoring input\n", script);
  assert_int_equal(r.cls, LC_SAME);
  assert_int_equal(r.first, 2);
  /* Comments, spacing and a docstring: layout only (a warning). */
  r = run("", edited("def f3(x):\n    return x + 3\n", "def f3( x ):  # three\n    \"\"\"Doc.\"\"\"\n    return x+3\n"));
  assert_int_equal(r.cls, LC_LAYOUT);
  /* A call split over lines with a trailing comma (black's) is layout; a
   * tuple's comma is not (PR #734's signatures). */
  r = run("", edited("def f3(x):\n", "def f3(\n    x,\n):\n"));
  assert_int_equal(r.cls, LC_LAYOUT);
  r = run("", edited("return x + 3\n", "return (x + 3,)\n"));
  assert_int_equal(r.cls, LC_CODE);
}

static void test_partial_config_defaults(void **st) {
  (void)st;
  make_script();
  char copy[8192];
  snprintf(copy, sizeof copy, "%s", script);
  *strstr(copy, "def f10") = 0; /* the tail is missing */
  log_code_result r = run("", copy);
  assert_int_equal(r.cls, LC_PARTIAL);
  /* A default the README sets, and the seed: configuration only. */
  r = run("", edited("'LR', 0.02", "'LR', 0.05"));
  assert_int_equal(r.cls, LC_CONFIG);
  r = run("", edited("'SEED', 1337", "'SEED', 42"));
  assert_int_equal(r.cls, LC_CONFIG);
  r = run("", edited("import sys\n", "import sys\nresume = os.environ.get('RESUME_FROM', '')\n"));
  assert_int_equal(r.cls, LC_CONFIG);
  /* A default the README does not set: the documented run differs. */
  r = run("", edited("'WARMDOWN_ITERS', 3000", "'WARMDOWN_ITERS', 800"));
  assert_int_equal(r.cls, LC_DEFAULTS);
  assert_string_equal(r.detail, "WARMDOWN_ITERS");
  /* ... unless the log prints the shipped value: the run used it. */
  printed = "warmdown_iters:3000 num_layers:9\n";
  r = run("", edited("'WARMDOWN_ITERS', 3000", "'WARMDOWN_ITERS', 800"));
  assert_int_equal(r.cls, LC_CONFIG);
  printed = "warmdown_iters:800 num_layers:9\n";
  r = run("", edited("'WARMDOWN_ITERS', 3000", "'WARMDOWN_ITERS', 800"));
  assert_int_equal(r.cls, LC_DEFAULTS);
  printed = "";
}

static void test_code_other_none(void **st) {
  (void)st;
  make_script();
  log_code_result r = run("", edited("return x + 7", "return x * 7"));
  assert_int_equal(r.cls, LC_CODE);
  assert_int_equal(r.hunks, 1);
  assert_non_null(strstr(r.detail, "`return x*7` where train_gpt.py:"));
  /* Output printed in the middle of the copy is not a code difference. */
  r = run("", edited("def f5(x):\n", "train_loader:dataset:fineweb10B_sp1024 train_shards:80\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_LAYOUT);
  assert_non_null(strstr(r.detail, "output interrupts the copy at log line 17"));
  char other[4000];
  size_t k = 0;
  for (int i = 0; i < 30; i++) k += (size_t)snprintf(other + k, sizeof other - k, "import m%d\n", i);
  r = run("", other);
  assert_int_equal(r.cls, LC_OTHER);
  r = run("", "import os\nprint(1)\n");
  assert_int_equal(r.cls, LC_NONE);
}

/* A statement that only moved is no example of the difference: the
 * message shows the first one changed, and the moved one only when
 * nothing else differs (moving code can change what runs, so the copy is
 * still other code). */
static void test_moved_statements(void **st) {
  (void)st;
  make_script();
  char copy[8192];
  snprintf(copy, sizeof copy, "%s", edited("import sys\n", ""));
  char *at = strstr(copy, "def f6(x):");
  assert_non_null(at);
  char moved[8192];
  snprintf(moved, sizeof moved, "%.*simport sys\n%s", (int)(at - copy), copy, at);
  log_code_result r = run("", moved);
  assert_int_equal(r.cls, LC_CODE);
  assert_int_equal(r.hunks, 2);
  assert_non_null(strstr(r.detail, "import sys"));
  char *f9 = strstr(moved, "return x + 9");
  assert_non_null(f9);
  memcpy(f9, "return x - 9", strlen("return x - 9"));
  r = run("", moved);
  assert_int_equal(r.cls, LC_CODE);
  assert_int_equal(r.hunks, 3);
  assert_non_null(strstr(r.detail, "`return x-9` where train_gpt.py:"));
  assert_null(strstr(r.detail, "import sys"));
}

/* A copy that differs only in what it prints, or in an assignment nothing
 * reads from builtins without side effects, computes the same numbers
 * (PR #175: a renamed final line and an unused set); an unused assignment
 * that calls anything else, or one whose name is read, is code. */
static void test_prints_and_dead_assignments(void **st) {
  (void)st;
  make_script();
  log_code_result r = run("", edited("print('train')", "print('training', flush=True)"));
  assert_int_equal(r.cls, LC_PRINTS); /* how it prints is printing too */
  r = run("", edited("print('train')", "print('final_int8_zlib_roundtrip_exact')"));
  assert_int_equal(r.cls, LC_PRINTS);
  assert_non_null(strstr(r.detail, "print('final_int8_zlib_roundtrip_exact')"));
  r = run("", edited("def f5(x):\n", "late_k=set(range(3, 5))\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("def f5(x):\n", "log0(f'step {x}')\nlate_k=set(range(3, 5))\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("def f5(x):\n", "late_k=draw(3)\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("def f5(x):\n", "late_k=np.random.rand()\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("def f5(x):\n", "lr=len('ab')\ndef f5(x):\n")); /* lr is read */
  assert_int_equal(r.cls, LC_CODE);
  /* An import nothing uses, and a guard around an import (PR #172), are
   * no computation; a used import, or a fallback that imports something
   * else or computes, is code. */
  r = run("", edited("import sys\n", "import sys\nimport uuid\nfrom a.b import c as d, e\n"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("import sys\n",
                     "try:\n    import sys\n    HAS_SYS = True\n"
                     "except (ImportError, ModuleNotFoundError) as e:\n"
                     "    sys = HAS_SYS = None\n"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("import sys\n", "try:\n    import sys\nexcept:\n    pass\n"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("import sys\n",
                     "try:\n    import sys\nexcept ImportError:\n"
                     "    import sys2 as sys\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("import sys\n",
                     "try:\n    import sys\nexcept ImportError:\n"
                     "    sys = load()\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("import sys\n",
                     "try:\n    import sys\nexcept ValueError:\n"
                     "    sys = None\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("import sys\n",
                     "try:\n    import sys\n    init()\nexcept ImportError:\n"
                     "    sys = None\n"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("def f5(x):\n", "import math\nk = math.pi\ndef f5(x):\n"));
  assert_int_equal(r.cls, LC_CODE);
  /* An exception's message is text (PR #1846); its type, or a raise the
   * other side lacks, is not. */
  char raising[8192];
  snprintf(raising, sizeof raising, "%s",
           edited("    return x + 4\n",
                  "    if x < 0:\n        raise ValueError(f'bad {x}')\n"
                  "    return x + 4\n"));
  memcpy(script, raising, strlen(raising) + 1);
  r = run("", edited("raise ValueError(f'bad {x}')",
                     "raise ValueError(f'negative: {x}', 'see README')"));
  assert_int_equal(r.cls, LC_CODE); /* another argument, not other text */
  r = run("", edited("raise ValueError(f'bad {x}')", "raise ValueError(f'x<0 {x}')"));
  assert_int_equal(r.cls, LC_PRINTS);
  r = run("", edited("raise ValueError(f'bad {x}')", "raise TypeError(f'bad {x}')"));
  assert_int_equal(r.cls, LC_CODE);
  r = run("", edited("        raise ValueError(f'bad {x}')\n", "        x = -x\n"));
  assert_int_equal(r.cls, LC_CODE);
  make_script();
  /* A printed change beside a code change: the code is what is shown. */
  char both[8192];
  snprintf(both, sizeof both, "%s", edited("print('train')", "print('other')"));
  char *f7 = strstr(both, "return x + 7");
  assert_non_null(f7);
  memcpy(f7, "return x * 7", strlen("return x * 7"));
  r = run("", both);
  assert_int_equal(r.cls, LC_CODE);
  assert_non_null(strstr(r.detail, "return x*7"));
  assert_int_equal(r.hunks, 2);
  assert_int_equal(r.code_hunks, 1); /* the print is no code */
  /* The example is a change to what runs (f9's body), not the new flag and
   * function before it, which run only where something reads them. */
  snprintf(both, sizeof both, "%s",
           edited("def f2(x):\n",
                  "FLAG = False\n@wrap\ndef helper(x):\n    if FLAG:\n"
                  "        x = x * 2\n    return x\ndef f2(x):\n"));
  f7 = strstr(both, "return x + 9");
  assert_non_null(f7);
  memcpy(f7, "return x - 9", strlen("return x - 9"));
  r = run("", both);
  assert_int_equal(r.cls, LC_CODE);
  assert_int_equal(r.code_hunks, 2);
  assert_non_null(strstr(r.detail, "return x-9"));
  snprintf(both, sizeof both, "%s",
           edited("def f2(x):\n", "FLAG = False\ndef helper(x):\n    return x\ndef f2(x):\n"));
  r = run("", both); /* only a definition: it is the example */
  assert_int_equal(r.cls, LC_CODE);
  assert_non_null(strstr(r.detail, "FLAG=False"));
}

/* A copy of the script's tail is a part of it; with a change in it, the
 * change is reported, not the missing head. A default changed in an `if`
 * that reads the environment is a default, not code. */
static void test_partial_and_if_defaults(void **st) {
  (void)st;
  make_script();
  const char *tail = strstr(script, "def f4(x)");
  log_code_result r = run("", tail);
  assert_int_equal(r.cls, LC_PARTIAL);
  char copy[8192];
  snprintf(copy, sizeof copy, "%s", tail);
  char *p = strstr(copy, "return x + 9");
  p[9] = '*';
  r = run("", copy);
  assert_int_equal(r.cls, LC_CODE);
  assert_true(r.partial);
  assert_int_equal(r.hunks, 1);
  assert_non_null(strstr(r.detail, "`return x*9`"));
  char ifs[9000];
  snprintf(ifs, sizeof ifs, "%sif int(os.environ.get('ANS', '1')):\n    main()\n", script);
  snprintf(script + strlen(script), sizeof script - strlen(script), "if int(os.environ.get('ANS', '0')):\n    main()\n");
  r = run("", ifs);
  assert_int_equal(r.cls, LC_DEFAULTS);
  assert_string_equal(r.detail, "ANS");
}

/* A copy cut inside a statement (PR #1026: the run's output overwrote the
 * copy's first lines, leaving `"QAT_ENABLED", "0")))`) is a part of the
 * script: the piece is that statement's tail, or at the end its head. A
 * piece that is no tail of the statement there is code. */
static void test_cut_inside_statement(void **st) {
  (void)st;
  make_script();
  log_code_result r = run("", strstr(script, "'WARMDOWN_ITERS'"));
  assert_int_equal(r.cls, LC_PARTIAL);
  assert_true(r.partial);
  char copy[8192];
  snprintf(copy, sizeof copy, "%s", script);
  strcpy(strstr(copy, "x + 11\n") + 3, "\n"); /* ends in `return x + 1` of `return x + 11` */
  r = run("", copy);
  assert_int_equal(r.cls, LC_PARTIAL);
  snprintf(copy, sizeof copy, "%s", strstr(script, "'WARMDOWN_ITERS'"));
  copy[strlen("'WARMDOWN_ITERS', ")] = '8';
  r = run("", copy);
  assert_int_equal(r.cls, LC_CODE);
  assert_non_null(strstr(r.detail, "log line 1"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_and_layout),
      cmocka_unit_test(test_partial_config_defaults),
      cmocka_unit_test(test_code_other_none),
      cmocka_unit_test(test_moved_statements),
      cmocka_unit_test(test_prints_and_dead_assignments),
      cmocka_unit_test(test_partial_and_if_defaults),
      cmocka_unit_test(test_cut_inside_statement),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
