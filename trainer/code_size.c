/* Measuring pgolf's code bytes (see code_size.h for the convention). */
#include "trainer/code_size.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/version.h"
#include "common/sha256.h"

#define MAX_SOURCES 4096

static int is_root(const char *dir) {
  char p[1100];
  struct stat st;
  snprintf(p, sizeof p, "%s/Makefile", dir);
  if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  snprintf(p, sizeof p, "%s/common/pgolf.c", dir);
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int find_root(char *out, size_t cap) {
  if (is_root(".")) {
    snprintf(out, cap, ".");
    return 0;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = 0;
  for (int up = 0; up < 4; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash || slash == exe) return -1;
    *slash = 0;
    if (is_root(exe) && strlen(exe) < cap) {
      memcpy(out, exe, strlen(exe) + 1);
      return 0;
    }
  }
  return -1;
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .c, .h and .cu files of one part, appended to names. */
static void list_part(const char *root, const char *part, char **names, int *n) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/%s", root, part);
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    int want = ends_with(e->d_name, ".c") || ends_with(e->d_name, ".h") ||
               ends_with(e->d_name, ".cu");
    if (!want || e->d_name[0] == '.' || *n == MAX_SOURCES) continue;
    size_t len = strlen(part) + strlen(e->d_name) + 2;
    if (!(names[*n] = malloc(len))) break;
    snprintf(names[(*n)++], len, "%s/%s", part, e->d_name);
  }
  closedir(d);
}

/* Relative paths of the digest's files, in make's $(sort) order: the
 * parts the binary's digest was built from (never a list of our own, which
 * a move of files would silently leave behind). */
static int list_sources(const char *root, char **names, int *n) {
  char parts[256];
  snprintf(parts, sizeof parts, "%s", pgolf_source_parts());
  *n = 0;
  char *save = NULL;
  for (char *p = strtok_r(parts, " ", &save); p; p = strtok_r(NULL, " ", &save))
    list_part(root, p, names, n);
  if (*n < MAX_SOURCES && (names[*n] = strdup("Makefile"))) (*n)++;
  qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return 0;
}

int code_size_measure(code_size *cs, pg_error *err) {
  memset(cs, 0, sizeof *cs);
  if (find_root(cs->root, sizeof cs->root) != 0)
    return pg_fail(err, "", -1, "cannot find pgolf's source tree (Makefile and common/pgolf.c) "
                                "in the current directory or above the binary, to count code bytes");
  char **names = calloc(MAX_SOURCES, sizeof *names);
  sha256_ctx *h = sha256_new();
  if (!names || !h) {
    free(names);
    sha256_free(h);
    return pg_fail(err, "", -1, "out of memory");
  }
  int n = 0, rc = 0;
  list_sources(cs->root, names, &n);
  for (int i = 0; i < n && rc == 0; i++) {
    char path[2200], line[2400], hex[SHA256_HEX_LEN + 1];
    uint8_t d[SHA256_LEN];
    uint64_t size = 0;
    snprintf(path, sizeof path, "%s/%s", cs->root, names[i]);
    if (sha256_file(path, d, &size, err) != 0) {
      rc = -1;
      break;
    }
    sha256_hex(d, hex);
    int len = snprintf(line, sizeof line, "%s  %s\n", hex, names[i]);
    sha256_update(h, line, (size_t)len);
    cs->bytes += size;
  }
  uint8_t dg[SHA256_LEN];
  sha256_final(h, dg);
  sha256_hex(dg, cs->digest);
  cs->n_files = n;
  cs->matches_binary = !strcmp(cs->digest, pgolf_source_digest());
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  sha256_free(h);
  return rc;
}
