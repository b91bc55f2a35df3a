/* Run commands from README.md and the shell scripts it runs; see
 * readme_run.h. */
#include "verifier/readme_run.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fileio.h"

#define LINE_MAX_CHARS 4096
#define MAX_SHELLS 16

/* Shell scripts to read after the README (internal: not part of the result). */
typedef struct shells {
  char name[MAX_SHELLS][RUN_WORD_MAX];
  size_t n;
} shells;

static void push(run_item **v, size_t *n, const char *word, const char *value, const char *where,
                 int torchrun) {
  if (*n >= RUN_MAX_ITEMS) return;
  run_item *nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return;
  *v = nv;
  run_item *it = &nv[(*n)++];
  snprintf(it->word, sizeof it->word, "%s", word);
  snprintf(it->value, sizeof it->value, "%s", value);
  snprintf(it->where, sizeof it->where, "%s", where);
  it->torchrun = torchrun;
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static const char *base_of(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

/* Remove one layer of matching quotes and trailing shell punctuation. */
static void clean_token(char *t) {
  size_t n = strlen(t);
  while (n && strchr(";&|)", t[n - 1])) t[--n] = 0;
  if (n >= 2 && (t[0] == '"' || t[0] == '\'') && t[n - 1] == t[0]) {
    memmove(t, t + 1, n - 2);
    t[n - 2] = 0;
  }
}

/* NAME=VALUE with an upper-case NAME (the convention for environment
 * variables; keyword arguments in Python snippets are lower-case). */
static int env_assignment(const char *t, char *name, char *value) {
  size_t k = 0;
  int upper = 0;
  if (!(isupper((unsigned char)t[0]) || t[0] == '_')) return 0;
  while (isupper((unsigned char)t[k]) || isdigit((unsigned char)t[k]) || t[k] == '_') {
    upper |= isupper((unsigned char)t[k]);
    k++;
  }
  if (!upper || t[k] != '=' || k >= RUN_WORD_MAX) return 0;
  memcpy(name, t, k);
  name[k] = 0;
  snprintf(value, RUN_WORD_MAX, "%s", t + k + 1);
  clean_token(value);
  return 1;
}

static int is_launcher(const char *t) {
  const char *b = base_of(t);
  return !strcmp(b, "torchrun") || !strcmp(b, "python") || !strncmp(b, "python3", 7) ||
         !strcmp(b, "accelerate") || !strcmp(b, "deepspeed");
}

static int is_compiler(const char *t) {
  static const char *cc[] = {"g++", "gcc", "c++", "cc", "clang", "clang++", "nvcc"};
  const char *b = base_of(t);
  for (size_t i = 0; i < sizeof cc / sizeof *cc; i++)
    if (!strcmp(b, cc[i])) return 1;
  return 0;
}

static int is_source(const char *t) {
  return ends_with(t, ".c") || ends_with(t, ".cc") || ends_with(t, ".cpp") ||
         ends_with(t, ".cxx") || ends_with(t, ".cu");
}

/* Split the line into tokens in place; returns their count. */
static size_t tokenize(char *buf, char **tok, size_t max) {
  size_t n = 0;
  char *p = buf;
  while (*p && n < max) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    tok[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = 0;
  }
  return n;
}

/* The line as a shell would split it, without a trailing comment and with
 * Markdown's `\_` escapes undone. */
static void line_copy(char *buf, const char *line, size_t len) {
  size_t k = 0;
  for (size_t i = 0; i < len && k < LINE_MAX_CHARS - 1; i++) {
    if (line[i] == '\\' && i + 1 < len && line[i + 1] == '_') continue;
    if (line[i] == '#' && (k == 0 || buf[k - 1] == ' ' || buf[k - 1] == '\t')) break;
    buf[k++] = line[i] == '\r' ? ' ' : line[i];
  }
  buf[k] = 0;
}

static void line_items(readme_run *r, shells *sh, const char *line, size_t len, const char *where) {
  char buf[LINE_MAX_CHARS];
  char *tok[512];
  line_copy(buf, line, len);
  int torchrun = strstr(buf, "torchrun") || strstr(buf, "torch.distributed.run") ||
                 strstr(buf, "torch.distributed.launch");
  size_t n = tokenize(buf, tok, sizeof tok / sizeof *tok);
  int launched = 0, compiling = 0;
  for (size_t i = 0; i < n; i++) {
    char *t = tok[i];
    clean_token(t);
    char name[RUN_WORD_MAX], value[RUN_WORD_MAX];
    if (env_assignment(t, name, value)) {
      push(&r->env, &r->n_env, name, value, where, 0);
    } else if (is_launcher(t)) {
      launched = 1;
    } else if (is_compiler(t)) {
      compiling = 1;
    } else if (launched && ends_with(t, ".py")) {
      push(&r->launch, &r->n_launch, t, "", where, torchrun);
    } else if (compiling && is_source(t)) {
      push(&r->build, &r->n_build, t, "", where, 0);
    } else if (ends_with(t, ".sh") && sh &&
               (!strncmp(t, "./", 2) ||
                (i > 0 && (!strcmp(tok[i - 1], "bash") || !strcmp(tok[i - 1], "sh") ||
                           !strcmp(tok[i - 1], "source") || !strcmp(tok[i - 1], "."))))) {
      int seen = 0;
      for (size_t k = 0; k < sh->n; k++) seen |= !strcmp(sh->name[k], t);
      if (!seen && sh->n < MAX_SHELLS) snprintf(sh->name[sh->n++], RUN_WORD_MAX, "%s", t);
    }
  }
}

void readme_run_line(readme_run *r, const char *line, size_t len, const char *where) {
  line_items(r, NULL, line, len, where);
}

static void read_text(readme_run *r, shells *sh, const char *text, size_t len, const char *rel,
                      int markdown);

void readme_run_markdown(readme_run *r, const char *text, size_t len, const char *rel) {
  read_text(r, NULL, text, len, rel, 1);
}

/* The NAME=VALUE words in a prose line's inline code spans (`...`). */
static void inline_items(readme_run *r, const char *s, size_t n, const char *where) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '`') continue;
    const char *close = memchr(s + i + 1, '`', n - i - 1);
    if (!close) return;
    char buf[LINE_MAX_CHARS], *tok[64];
    line_copy(buf, s + i + 1, (size_t)(close - (s + i + 1)));
    size_t nt = tokenize(buf, tok, 64);
    for (size_t k = 0; k < nt; k++) {
      char name[RUN_WORD_MAX], value[RUN_WORD_MAX];
      if (env_assignment(tok[k], name, value))
        push(&r->stated, &r->n_stated, name, value, where, 0);
    }
    i = (size_t)(close - s);
  }
}

/* Every line of text through line_items (fenced code only, for Markdown;
 * its prose through inline_items). */
static void read_text(readme_run *r, shells *sh, const char *text, size_t len, const char *rel,
                      int markdown) {
  int in_code = !markdown;
  unsigned line = 0;
  for (size_t off = 0; off < len;) {
    const char *nl = memchr(text + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
    const char *s = text + off;
    off += n + 1;
    line++;
    size_t k = 0;
    while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
    if (markdown && n - k >= 3 && (!memcmp(s + k, "```", 3) || !memcmp(s + k, "~~~", 3))) {
      in_code = !in_code;
      continue;
    }
    char where[RUN_WHERE_MAX];
    snprintf(where, sizeof where, "%s:%u", rel, line);
    if (!in_code) {
      inline_items(r, s, n, where);
      continue;
    }
    line_items(r, sh, s, n, where);
  }
}

static void read_file(readme_run *r, shells *sh, const char *dir, const char *rel, int markdown) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  uint8_t *buf;
  size_t len;
  pg_error err;
  if (file_read_all(path, RUN_MAX_SCRIPT_BYTES, &buf, &len, &err)) return;
  if (markdown) r->has_readme = 1;
  read_text(r, sh, (const char *)buf, len, rel, markdown);
  free(buf);
}

/* A script named in a command, as it ships: the path as written relative
 * to the folder, else its base name at the top level. */
static int shipped(const char *dir, const char *word, char *rel, size_t cap) {
  const char *cands[2] = {word[0] == '.' && word[1] == '/' ? word + 2 : word, base_of(word)};
  for (int k = 0; k < 2; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, cands[k]);
    FILE *f = strstr(cands[k], "..") ? NULL : fopen(path, "rb");
    if (f) {
      fclose(f);
      snprintf(rel, cap, "%s", cands[k]);
      return 1;
    }
  }
  return 0;
}

int readme_run_read(const char *dir, readme_run *out) {
  memset(out, 0, sizeof *out);
  shells sh = {.n = 0};
  read_file(out, &sh, dir, "README.md", 1);
  for (size_t i = 0; i < sh.n; i++) { /* sh.n grows as scripts name others */
    char rel[RUN_WORD_MAX];
    if (shipped(dir, sh.name[i], rel, sizeof rel)) read_file(out, &sh, dir, rel, 0);
  }
  return 0;
}

void readme_run_free(readme_run *r) {
  free(r->env);
  free(r->launch);
  free(r->build);
  free(r->stated);
  memset(r, 0, sizeof *r);
}

const run_item *readme_run_env(const readme_run *r, const char *name, size_t *n) {
  const run_item *first = NULL;
  *n = 0;
  for (size_t i = 0; i < r->n_env; i++)
    if (!strcmp(r->env[i].word, name)) {
      if (!first) first = &r->env[i];
      (*n)++;
    }
  return first;
}

int run_value_truthy(const char *v) {
  char t[RUN_WORD_MAX];
  snprintf(t, sizeof t, "%s", v);
  clean_token(t);
  if (t[0] == '$') return 1;
  static const char *no[] = {"", "0", "false", "no", "off", "none", "f", "n"};
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (!strcasecmp(t, no[i])) return 0;
  char *end;
  double d = strtod(t, &end);
  if (end != t && !*end && d == 0) return 0;
  return 1;
}
