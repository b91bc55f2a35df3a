/* libFuzzer: the parsers of outside text that decide which code counts
 * and who wrote a log: the import scanner (on every statement of the input
 * lexed as Python), README run-command lines, and the comparison of a
 * log's script copy with a script (the input as the log, then as the
 * script). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/code_count.h"
#include "verifier/log_code.h"
#include "verifier/pysrc.h"

static void on_target(const char *module, int level, const char *name, void *ctx) {
  (void)name;
  if (!module || level < 0 || strlen(module) > 255) __builtin_trap();
  ++*(size_t *)ctx;
}

static const char *SCRIPT =
    "import os\nclass H:\n    a = int(os.environ.get('A', 1))\n"
    "def f0():\n    return 0\ndef f1():\n    return 1\ndef f2():\n    return 2\n"
    "def f3():\n    return 3\ndef f4():\n    return 4\ndef f5():\n    return 5\n"
    "def f6():\n    return 6\ndef f7():\n    return 7\ndef f8():\n    return 8\n"
    "if __name__ == '__main__':\n    f0()\n";

static int env_set(const char *var, const char *dflt, void *ctx) {
  (void)dflt;
  (void)ctx;
  return var[0] == 'A';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  py_src s;
  pg_error e;
  if (!pysrc_parse(text, size, "fuzz.py", &s, &e)) {
    for (size_t i = 0; i < s.n; i++) {
      size_t n = 0;
      code_import_targets(s.v[i].text, on_target, &n);
    }
    pysrc_free(&s);
  }
  readme_run r = {0};
  for (size_t off = 0; off < size;) {
    const char *nl = memchr(text + off, '\n', size - off);
    size_t n = nl ? (size_t)(nl - (text + off)) : size - off;
    readme_run_line(&r, text + off, n, "README.md:1");
    off += n + 1;
  }
  for (size_t i = 0; i < r.n_env; i++) (void)run_value_truthy(r.env[i].value);
  readme_run_free(&r);
  /* The same bytes as a README: commands and stated settings, bounded. */
  readme_run_markdown(&r, text, size, "README.md");
  if (r.n_env > RUN_MAX_ITEMS || r.n_stated > RUN_MAX_ITEMS) __builtin_trap();
  for (size_t i = 0; i < r.n_stated; i++)
    if (strlen(r.stated[i].word) >= RUN_WORD_MAX || strlen(r.stated[i].value) >= RUN_WORD_MAX ||
        !r.stated[i].word[0])
      __builtin_trap();
  readme_run_free(&r);
  const char *names[1] = {"train_gpt.py"};
  const char *texts[1] = {SCRIPT};
  size_t lens[1] = {strlen(SCRIPT)};
  log_code_result res;
  if (log_code_compare(text, size, 1, 100000, names, texts, lens, 1, env_set, NULL, &res) == 0 &&
      res.cls > LC_OTHER)
    __builtin_trap();
  texts[0] = text;
  lens[0] = size;
  char *log = malloc(strlen(SCRIPT) + 120);
  if (!log) return 0;
  size_t k = strlen(SCRIPT);
  memcpy(log, SCRIPT, k);
  memcpy(log + k, "====================================================================\n", 70);
  if (log_code_compare(log, k + 70, 1, 26, names, texts, lens, 1, env_set, NULL, &res) == 0 &&
      res.cls > LC_OTHER)
    __builtin_trap();
  free(log);
  return 0;
}
