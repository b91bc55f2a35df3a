/* Running a submission under supervision: scratch copy, sandboxed spawn in
 * its own process group, line-stamped output, hard limit. See
 * replay_external.h. */
#include "verifier/replay_external.h"
#include "common/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define COPY_MAX_DEPTH 32
#define POLL_TICK_MS 50

/* ---- file lists ---- */

static replay_file *files_push(replay_files *f, const char *rel) {
  if (f->n == REPLAY_MAX_FILES) return NULL;
  if (PG_GROW(f->v, f->cap, f->n + 1, 32)) return NULL;
  replay_file *x = &f->v[f->n];
  memset(x, 0, sizeof *x);
  if (!(x->rel = strdup(rel))) return NULL;
  x->created_ms = x->written_ms = NAN;
  f->n++;
  return x;
}

void replay_files_free(replay_files *f) {
  for (size_t i = 0; i < f->n; i++) free(f->v[i].rel);
  free(f->v);
  memset(f, 0, sizeof *f);
}

static const replay_file *files_find(const replay_files *f, const char *rel) {
  for (size_t i = 0; i < f->n; i++)
    if (!strcmp(f->v[i].rel, rel)) return &f->v[i];
  return NULL;
}

/* ---- scratch copy (hashing as it copies) ---- */

static int copy_file(const char *src, const char *dst, replay_file *rec, pg_error *err) {
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return pg_fail_errno(err, src, "cannot read");
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    close(in);
    return pg_fail_errno(err, dst, "cannot create");
  }
  struct stat st;
  if (fstat(in, &st) == 0 && (st.st_mode & 0111)) fchmod(out, 0755); /* keep scripts runnable */
  sha256_ctx *c = sha256_new();
  char buf[1 << 16];
  ssize_t n;
  int rc = c ? 0 : pg_fail(err, src, -1, "out of memory");
  while (!rc && (n = read(in, buf, sizeof buf)) != 0) {
    if (n < 0) {
      rc = pg_fail_errno(err, src, "read");
      break;
    }
    sha256_update(c, buf, (size_t)n);
    rec->bytes += (uint64_t)n;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out, buf + off, (size_t)(n - off));
      if (w < 0) {
        rc = pg_fail_errno(err, dst, "write");
        break;
      }
      off += w;
    }
  }
  if (c) sha256_final(c, rec->sha256), sha256_free(c);
  close(in);
  if (close(out) != 0 && !rc) rc = pg_fail_errno(err, dst, "close");
  return rc;
}

/* Regular files and directories only: a symbolic link could point the
 * replay at anything on the host, so the copy refuses the folder. */
static int copy_tree(const char *src, const char *dst, const char *rel, int depth,
                     replay_files *files, pg_error *err) {
  if (depth > COPY_MAX_DEPTH) return pg_fail(err, src, -1, "folder nested too deeply");
  DIR *d = opendir(src);
  if (!d) return pg_fail_errno(err, src, "cannot open folder");
  int rc = 0;
  struct dirent *e;
  while (!rc && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char s[PATH_MAX], t[PATH_MAX], r[PATH_MAX];
    snprintf(s, sizeof s, "%s/%s", src, e->d_name);
    snprintf(t, sizeof t, "%s/%s", dst, e->d_name);
    snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    struct stat st;
    if (lstat(s, &st) != 0) rc = pg_fail_errno(err, s, "stat");
    else if (S_ISDIR(st.st_mode)) {
      if (mkdir(t, 0755) != 0) rc = pg_fail_errno(err, t, "mkdir");
      else rc = copy_tree(s, t, r, depth + 1, files, err);
    } else if (S_ISREG(st.st_mode)) {
      replay_file *rec = files_push(files, r);
      rc = rec ? copy_file(s, t, rec, err) : pg_fail(err, s, -1, "too many files (limit %d)", REPLAY_MAX_FILES);
    } else
      rc = pg_fail(err, s, -1, "not a regular file or folder (symbolic links are refused)");
  }
  closedir(d);
  return rc;
}

static int cmp_rel(const void *a, const void *b) {
  return strcmp(((const replay_file *)a)->rel, ((const replay_file *)b)->rel);
}

/* One digest for the whole folder: SHA-256 over "hex  path\n" lines in
 * path order, as sha256sum prints them. */
static void tree_digest(replay_files *f, uint8_t out[SHA256_LEN]) {
  qsort(f->v, f->n, sizeof *f->v, cmp_rel);
  sha256_ctx *c = sha256_new();
  if (!c) return;
  for (size_t i = 0; i < f->n; i++) {
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(f->v[i].sha256, hex);
    sha256_update(c, hex, SHA256_HEX_LEN);
    sha256_update(c, "  ", 2);
    sha256_update(c, f->v[i].rel, strlen(f->v[i].rel));
    sha256_update(c, "\n", 1);
  }
  sha256_final(c, out);
  sha256_free(c);
}

/* ---- spawning ---- */

static pid_t spawn(char *const *argv, int out_fd, int err_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  /* A new session: a new process group the replay can kill as a whole,
   * and no controlling terminal inside the sandbox. */
  setsid();
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  execv(argv[0], argv);
  dprintf(2, "pgolf: %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* ---- supervision ---- */

static void read_pipe(int *fd, replay_stream *s, const replay_clock *c) {
  char buf[65536];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0) replay_stream_feed(s, buf, (size_t)n, replay_clock_ms(c));
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close(*fd);
    *fd = -1;
  }
}

/* The official script appends to logs/RUN_ID.txt; any produced file whose
 * name starts with RUN_ID is taken as the log. */
static void find_log(replay_run *r) {
  if (*r->log_rel) return;
  for (size_t i = 0; i < r->watch.n_files; i++) {
    const char *rel = r->watch.files[i].rel, *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (!strncmp(base, r->run_id, strlen(r->run_id))) {
      snprintf(r->log_rel, sizeof r->log_rel, "%s", rel);
      return;
    }
  }
}

/* Read what the log file gained since last time. */
static void tail_log(replay_run *r, int *fd, uint64_t *off) {
  find_log(r);
  if (!*r->log_rel) return;
  if (*fd < 0) {
    char path[PATH_MAX + 600];
    snprintf(path, sizeof path, "%s/%s", r->scratch, r->log_rel);
    if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return;
  }
  char buf[65536];
  ssize_t n;
  while ((n = pread(*fd, buf, sizeof buf, (off_t)*off)) > 0) {
    replay_stream_feed(&r->log, buf, (size_t)n, replay_clock_ms(&r->clock));
    *off += (uint64_t)n;
  }
}

static void progress(const replay_ext_opts *o, const replay_run *r, double now) {
  if (!o->progress) return;
  fprintf(stderr, "\rpgolf replay: seed %llu  %6.1fs of %.0fs  log %zu lines  stdout %zu lines ",
          (unsigned long long)o->seed, now / 1e3, r->limit_ms / 1e3, r->log.n_lines, r->out.n_lines);
  fflush(stderr);
}

/* Only called before the child is reaped, so pid is still ours. */
static void kill_group(pid_t pid, int sig) {
  if (kill(-pid, sig) != 0) kill(pid, sig);
}

/* Poll output, files and the child until it has exited and its output is
 * drained, enforcing the hard limit on the way. */
static void supervise(const replay_ext_opts *o, replay_run *r, pid_t pid, int out_fd, int err_fd) {
  int log_fd = -1, reaped = 0;
  uint64_t log_off = 0;
  double term_ms = NAN, reaped_ms = NAN, last_progress = -1e9;
  while (!reaped || out_fd >= 0 || err_fd >= 0) {
    struct pollfd p[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {r->watch.fd, POLLIN, 0}};
    poll(p, 3, POLL_TICK_MS);
    if (out_fd >= 0 && (p[0].revents & (POLLIN | POLLHUP))) read_pipe(&out_fd, &r->out, &r->clock);
    if (err_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP))) read_pipe(&err_fd, &r->err, &r->clock);
    replay_watch_drain(&r->watch, replay_clock_ms(&r->clock));
    tail_log(r, &log_fd, &log_off);
    double now = replay_clock_ms(&r->clock);
    if (!reaped) {
      int st;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        reaped = 1;
        reaped_ms = r->exit_ms = now;
        r->exited = WIFEXITED(st);
        r->signaled = WIFSIGNALED(st);
        r->status = r->exited ? WEXITSTATUS(st) : WTERMSIG(st);
        /* Nothing is signalled after this: the pid may be reused. What the
         * program left running died with bwrap's pid namespace. */
      }
    }
    if (!reaped && !r->killed && now >= r->limit_ms) {
      r->killed = 1;
      r->killed_ms = term_ms = now;
      kill_group(pid, SIGTERM);
    }
    if (!reaped && r->killed && now >= term_ms + REPLAY_KILL_WAIT_MS) kill_group(pid, SIGKILL);
    /* Output still open long after exit: a leftover holds the pipe. */
    if (reaped && now >= reaped_ms + REPLAY_KILL_WAIT_MS) break;
    if (now - last_progress >= 500) progress(o, r, now), last_progress = now;
  }
  if (o->progress) fprintf(stderr, "\n");
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0) close(err_fd);
  replay_watch_drain(&r->watch, replay_clock_ms(&r->clock));
  tail_log(r, &log_fd, &log_off);
  if (log_fd >= 0) close(log_fd);
  double end = replay_clock_ms(&r->clock);
  replay_stream_finish(&r->out, end);
  replay_stream_finish(&r->err, end);
  replay_stream_finish(&r->log, end);
}

/* ---- produced files ---- */

static int scan_produced(replay_run *r, const char *dir, const char *rel, int depth, pg_error *err) {
  if (depth > COPY_MAX_DEPTH) return 0;
  DIR *d = opendir(dir);
  if (!d) return pg_fail_errno(err, dir, "cannot open");
  struct dirent *e;
  int rc = 0;
  while (!rc && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX], q[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    snprintf(q, sizeof q, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      rc = scan_produced(r, p, q, depth + 1, err);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    replay_file tmp = {0};
    uint64_t size = 0;
    if (sha256_file(p, tmp.sha256, &size, err)) {
      rc = -1;
      break;
    }
    /* A file of the folder counts only if the run changed it. */
    const replay_file *was = files_find(&r->code, q);
    if (was && was->bytes == size && !memcmp(was->sha256, tmp.sha256, SHA256_LEN)) continue;
    replay_file *f = files_push(&r->produced, q);
    if (!f) {
      rc = pg_fail(err, p, -1, "too many produced files (limit %d)", REPLAY_MAX_FILES);
      break;
    }
    f->bytes = size;
    memcpy(f->sha256, tmp.sha256, SHA256_LEN);
    const replay_file_event *ev = replay_watch_find(&r->watch, q);
    if (ev) f->created_ms = ev->created_ms, f->written_ms = ev->written_ms;
  }
  closedir(d);
  return rc;
}

/* ---- the whole run ---- */

static int make_scratch(const replay_ext_opts *o, replay_run *r, pg_error *err) {
  if (mkdir(o->out_dir, 0755) != 0 && errno != EEXIST)
    return pg_fail_errno(err, o->out_dir, "cannot create the output folder");
  snprintf(r->scratch, sizeof r->scratch, "%s/scratch-seed%llu", o->out_dir,
           (unsigned long long)o->seed);
  if (mkdir(r->scratch, 0755) != 0)
    return pg_fail_errno(err, r->scratch,
                         errno == EEXIST ? "scratch folder of an earlier replay; remove it"
                                         : "cannot create the scratch folder");
  if (copy_tree(o->record_dir, r->scratch, "", 0, &r->code, err)) return -1;
  tree_digest(&r->code, r->code_tree);
  return 0;
}

int replay_external_run(const replay_ext_opts *o, const char *bwrap, replay_run *r, pg_error *err) {
  memset(r, 0, sizeof *r);
  r->watch.fd = -1;
  replay_stream_init(&r->out, LOG_MAX_BYTES);
  replay_stream_init(&r->err, LOG_MAX_BYTES);
  replay_stream_init(&r->log, LOG_MAX_BYTES);
  snprintf(r->run_id, sizeof r->run_id, "pgolf_replay_seed%llu", (unsigned long long)o->seed);
  r->limit_ms = (o->budget_train_s + o->budget_eval_s + o->grace_s) * 1e3;
  r->killed_ms = r->exit_ms = NAN;
  if (make_scratch(o, r, err)) return -1;
  if (replay_watch_open(&r->watch, r->scratch, err)) return -1;

  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
  sandbox_spec s = {.scratch = r->scratch, .data_dir = o->data_dir, .tokenizer = o->tokenizer,
                    .seed = seed, .run_id = r->run_id, .cmd = o->cmd, .gpus = o->gpus};
  memcpy(s.ro_extra, o->ro_extra, sizeof s.ro_extra);
  s.n_ro_extra = o->n_ro_extra;
  sandbox_argv a;
  if (sandbox_build(&s, bwrap, &a, err)) return -1;

  int po[2], pe[2];
  if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
    sandbox_argv_free(&a);
    return pg_fail_errno(err, "", "pipe");
  }
  replay_clock_start(&r->clock);
  pid_t pid = spawn(a.v, po[1], pe[1]);
  sandbox_argv_free(&a);
  close(po[1]);
  close(pe[1]);
  if (pid < 0) {
    close(po[0]);
    close(pe[0]);
    return pg_fail_errno(err, bwrap, "fork");
  }
  supervise(o, r, pid, po[0], pe[0]);
  return scan_produced(r, r->scratch, "", 0, err);
}

void replay_run_free(replay_run *r) {
  replay_stream_free(&r->out);
  replay_stream_free(&r->err);
  replay_stream_free(&r->log);
  replay_watch_close(&r->watch);
  replay_files_free(&r->code);
  replay_files_free(&r->produced);
  if (r->parsed_ok) log_free(&r->parsed);
  r->parsed_ok = 0;
}
