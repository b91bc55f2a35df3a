/* Building the bubblewrap command line, and checking once that it runs. */
#include "verifier/sandbox.h"
#include "common/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Files of /etc a dynamically linked program (and Python, and torchrun's
 * localhost rendezvous) needs; the rest of /etc stays out. */
static const char *const etc_essentials[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd",
    "/etc/group",       "/etc/nsswitch.conf", "/etc/hosts",     "/etc/localtime",
    "/etc/alternatives", "/etc/os-release",   NULL};

int sandbox_find_bwrap(char *path, size_t cap, pg_error *err) {
  const char *over = getenv("PGOLF_BWRAP");
  if (over && *over) {
    if (access(over, X_OK) != 0) return pg_fail_errno(err, over, "PGOLF_BWRAP names no executable bubblewrap (bwrap)");
    snprintf(path, cap, "%s", over);
    return 0;
  }
  const char *env = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", env && *env ? env : "/usr/bin:/bin");
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(path, cap, "%s/bwrap", d);
    if (access(path, X_OK) == 0) return 0;
  }
  return pg_fail(err, "bwrap", -1,
                 "bubblewrap is not installed (no bwrap on PATH); install the Debian package: "
                 "apt-get install -y bubblewrap");
}

static int push(sandbox_argv *a, const char *s) {
  if (PG_GROW(a->v, a->cap, a->n + 2, 64)) return -1;
  if (!(a->v[a->n] = strdup(s))) return -1;
  a->v[++a->n] = NULL;
  return 0;
}

static int push3(sandbox_argv *a, const char *x, const char *y, const char *z) {
  return push(a, x) || push(a, y) || (z && push(a, z)) ? -1 : 0;
}

void sandbox_argv_free(sandbox_argv *a) {
  for (size_t i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
  memset(a, 0, sizeof *a);
}

int sandbox_tokenizer_inside(const char *host_path, char *out, size_t cap) {
  const char *base = strrchr(host_path, '/');
  base = base ? base + 1 : host_path;
  if (!*base) base = "tokenizer.model";
  return snprintf(out, cap, "%s/%s", SANDBOX_TOKENIZER_DIR, base) >= (int)cap ? -1 : 0;
}

/* 1 when the device node name is nvidiaN and N >= limit (a GPU the run
 * was not given; limit 0 gives every GPU); control nodes (nvidiactl,
 * nvidia-uvm, nvidia-caps...) always pass. */
static int gpu_excluded(const char *name, int limit) {
  if (limit <= 0 || strncmp(name, "nvidia", 6) != 0) return 0;
  const char *d = name + 6;
  if (!*d) return 0;
  for (const char *p = d; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return atoi(d) >= limit;
}

/* The GPUs the spec asks for: their device nodes bound (device nodes must
 * stay writable for the driver's ioctls; the driver's libraries come with
 * the read-only /usr). */
static int add_gpus(sandbox_argv *a, const sandbox_spec *s) {
  if (s->gpus == SANDBOX_NO_GPU) return 0;
  char pattern[600];
  const char *root = s->dev_root ? s->dev_root : "/dev";
  snprintf(pattern, sizeof pattern, "%s/nvidia*", root);
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0) return 0; /* no GPU here: nothing to bind */
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
    const char *name = g.gl_pathv[i] + strlen(root) + 1;
    if (gpu_excluded(name, s->gpus)) continue;
    char inside[600];
    snprintf(inside, sizeof inside, "/dev/%s", name);
    rc = push3(a, "--dev-bind", g.gl_pathv[i], inside);
  }
  globfree(&g);
  return rc;
}

/* The fixed system view: /usr read-only, the merged-/usr links, /etc
 * essentials, proc, dev, GPUs, sys, and an empty /tmp. */
static int add_system(sandbox_argv *a, const sandbox_spec *s) {
  if (push3(a, "--ro-bind", "/usr", "/usr")) return -1;
  const char *links[][2] = {{"usr/bin", "/bin"},     {"usr/sbin", "/sbin"},
                            {"usr/lib", "/lib"},     {"usr/lib64", "/lib64"},
                            {"usr/lib32", "/lib32"}, {"usr/libx32", "/libx32"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    struct stat st;
    char target[64];
    snprintf(target, sizeof target, "/%s", links[i][0]);
    if (stat(target, &st) != 0) continue; /* e.g. no /usr/lib32 on this host */
    if (push3(a, "--symlink", links[i][0], links[i][1])) return -1;
  }
  for (const char *const *e = etc_essentials; *e; e++)
    if (push3(a, "--ro-bind-try", *e, *e)) return -1;
  if (push3(a, "--proc", "/proc", NULL) || push3(a, "--dev", "/dev", NULL)) return -1;
  /* A replay on the real hardware needs the GPUs; absent nodes are skipped. */
  if (add_gpus(a, s)) return -1;
  if (push3(a, "--ro-bind-try", "/sys", "/sys")) return -1;
  return push3(a, "--tmpfs", "/tmp", NULL);
}

static int add_env(sandbox_argv *a, const sandbox_spec *s) {
  char tok[1024];
  if (push(a, "--clearenv")) return -1;
  if (push3(a, "--setenv", "PATH", SANDBOX_PATH_ENV) || push3(a, "--setenv", "HOME", SANDBOX_WORK))
    return -1;
  if (s->seed && push3(a, "--setenv", "SEED", s->seed)) return -1;
  if (s->gpus > 0) {
    char list[256] = "";
    for (int i = 0; i < s->gpus && strlen(list) + 8 < sizeof list; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", i);
    if (push3(a, "--setenv", "CUDA_VISIBLE_DEVICES", list)) return -1;
  }
  if (s->run_id && push3(a, "--setenv", "RUN_ID", s->run_id)) return -1;
  if (s->data_dir && push3(a, "--setenv", "DATA_PATH", SANDBOX_DATA)) return -1;
  if (s->tokenizer) {
    if (sandbox_tokenizer_inside(s->tokenizer, tok, sizeof tok)) return -1;
    if (push3(a, "--setenv", "TOKENIZER_PATH", tok)) return -1;
  }
  return 0;
}

int sandbox_build(const sandbox_spec *s, const char *bwrap, sandbox_argv *a, pg_error *err) {
  char tok[1024];
  memset(a, 0, sizeof *a);
  if (!s->cmd || !s->cmd[0]) return pg_fail(err, "", -1, "no command to run in the sandbox");
  if (s->tokenizer && sandbox_tokenizer_inside(s->tokenizer, tok, sizeof tok))
    return pg_fail(err, s->tokenizer, -1, "tokenizer path too long");
  /* --unshare-all: user (where allowed), ipc, pid, net, uts, cgroup.
   * --die-with-parent: the sandbox dies with the replay, whatever kills it.
   * No --new-session: the replay puts bwrap in a new session itself, so
   * the whole tree shares one process group it can signal (and the
   * sandbox has no controlling terminal). */
  int bad = push(a, bwrap) || push(a, "--unshare-all") || push(a, "--die-with-parent") ||
            add_system(a, s);
  if (!bad && s->data_dir) bad = push3(a, "--ro-bind", s->data_dir, SANDBOX_DATA);
  if (!bad && s->tokenizer) bad = push3(a, "--ro-bind", s->tokenizer, tok);
  for (size_t i = 0; !bad && i < s->n_ro_extra; i++)
    bad = push3(a, "--ro-bind", s->ro_extra[i], s->ro_extra[i]);
  if (!bad) bad = push3(a, "--bind", s->scratch, SANDBOX_WORK);
  if (!bad) bad = push3(a, "--chdir", SANDBOX_WORK, NULL);
  /* Last, after every mount point exists: nothing outside the binds and
   * the tmpfs can be written. */
  if (!bad) bad = push3(a, "--remount-ro", "/", NULL);
  if (!bad) bad = add_env(a, s);
  if (!bad) bad = push(a, "--");
  for (size_t i = 0; !bad && s->cmd[i]; i++) bad = push(a, s->cmd[i]);
  if (bad) {
    sandbox_argv_free(a);
    return pg_fail(err, "", -1, "out of memory building the sandbox command line");
  }
  return 0;
}

/* A one-line kernel setting, or "absent". */
static void read_sysctl(const char *path, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f || !fgets(out, (int)cap, f)) snprintf(out, cap, "absent");
  else out[strcspn(out, "\n")] = 0;
  if (f) fclose(f);
}

/* What the kernel says about user namespaces, for the failure message. */
static void userns_facts(char *out, size_t cap) {
  char maxns[32], clone[32], apparmor[32];
  read_sysctl("/proc/sys/user/max_user_namespaces", maxns, sizeof maxns);
  read_sysctl("/proc/sys/kernel/unprivileged_userns_clone", clone, sizeof clone);
  read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", apparmor, sizeof apparmor);
  snprintf(out, cap,
           "euid %d; user.max_user_namespaces=%s, kernel.unprivileged_userns_clone=%s, "
           "kernel.apparmor_restrict_unprivileged_userns=%s",
           (int)geteuid(), maxns, clone, apparmor);
}

/* Run argv with stdin from /dev/null and stderr captured; give up after
 * timeout_ms. Returns the wait status, or -1 with errno. */
static int run_capture(char *const *argv, char *errbuf, size_t cap, int timeout_ms) {
  int p[2];
  if (pipe(p) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setsid();
    int fd = open("/dev/null", 0);
    if (fd >= 0) dup2(fd, 0), dup2(fd, 1);
    dup2(p[1], 2);
    close(p[0]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  size_t got = 0;
  struct pollfd pf = {p[0], POLLIN, 0};
  while (poll(&pf, 1, timeout_ms) > 0) {
    ssize_t r = read(p[0], errbuf + got, cap - 1 - got);
    if (r <= 0) break;
    got += (size_t)r;
    if (got + 1 >= cap) break;
  }
  errbuf[got] = 0;
  close(p[0]);
  int st = 0;
  for (int waited = 0; waitpid(pid, &st, WNOHANG) == 0; waited += 10) {
    if (waited >= timeout_ms) {
      kill(-pid, SIGKILL);
      waitpid(pid, &st, 0);
      break;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return st;
}

int sandbox_probe(const char *bwrap, pg_error *err) {
  char dir[] = "/tmp/pgolf-sandbox-probe.XXXXXX";
  if (!mkdtemp(dir)) return pg_fail_errno(err, "/tmp", "cannot create a probe directory");
  char *cmd[] = {"true", NULL};
  sandbox_spec s = {.scratch = dir, .seed = "0", .run_id = "probe", .cmd = cmd};
  sandbox_argv a;
  if (sandbox_build(&s, bwrap, &a, err)) {
    rmdir(dir);
    return -1;
  }
  char why[1024];
  int st = run_capture(a.v, why, sizeof why, 10000);
  sandbox_argv_free(&a);
  rmdir(dir);
  if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  why[strcspn(why, "\n")] = 0;
  char facts[512];
  userns_facts(facts, sizeof facts);
  if (st == -1) return pg_fail_errno(err, bwrap, "cannot run bubblewrap");
  return pg_fail(err, bwrap, -1,
                 "bubblewrap cannot create a sandbox here (%s%s); it needs user namespaces "
                 "(or root with CAP_SYS_ADMIN): %s",
                 *why ? why : "no message",
                 WIFSIGNALED(st) ? ", killed by a signal" : "", facts);
}
