/* Monotonic stamps for lines and files; see replay_clock.h. */
#include "verifier/replay_clock.h"
#include "common/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

void replay_clock_start(replay_clock *c) { clock_gettime(CLOCK_MONOTONIC, &c->t0); }

double replay_clock_ms(const replay_clock *c) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - c->t0.tv_sec) * 1e3 + (double)(t.tv_nsec - c->t0.tv_nsec) / 1e6;
}

/* ---- streams ---- */

void replay_stream_init(replay_stream *s, size_t max_bytes) {
  memset(s, 0, sizeof *s);
  s->max_bytes = max_bytes;
}

static int stamp_line(replay_stream *s, double now_ms) {
  if (PG_GROW(s->line_ms, s->lines_cap, s->n_lines + 1, 1024)) return -1;
  s->line_ms[s->n_lines++] = now_ms;
  return 0;
}

int replay_stream_feed(replay_stream *s, const char *buf, size_t n, double now_ms) {
  size_t room = s->max_bytes > s->len ? s->max_bytes - s->len : 0;
  size_t keep = n < room ? n : room;
  s->dropped += n - keep;
  if (PG_GROW(s->text, s->cap, s->len + keep + 1, 65536)) return -1;
  for (size_t i = 0; i < keep; i++) {
    s->text[s->len++] = buf[i];
    if (buf[i] == '\n' && stamp_line(s, now_ms)) return -1;
  }
  s->text[s->len] = 0;
  return 0;
}

int replay_stream_finish(replay_stream *s, double now_ms) {
  if (s->len && s->text[s->len - 1] != '\n') return stamp_line(s, now_ms);
  return 0;
}

double replay_stream_line_ms(const replay_stream *s, uint32_t line) {
  if (line == 0 || line > s->n_lines) return NAN;
  return s->line_ms[line - 1];
}

void replay_stream_free(replay_stream *s) {
  free(s->text);
  free(s->line_ms);
  memset(s, 0, sizeof *s);
}

/* ---- inotify ---- */


static int add_dir(replay_watch *w, const char *rel) {
  if (w->n_dirs == REPLAY_WATCH_MAX_DIRS) return w->overflowed = 1, 0;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s%s%s", w->root, *rel ? "/" : "", rel);
  int wd = inotify_add_watch(w->fd, path, IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO);
  if (wd < 0) return -1;
  w->dirs[w->n_dirs].wd = wd;
  if (!(w->dirs[w->n_dirs].rel = strdup(rel))) return -1;
  w->n_dirs++;
  return 0;
}

int replay_watch_open(replay_watch *w, const char *root, pg_error *err) {
  memset(w, 0, sizeof *w);
  w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (w->fd < 0) return pg_fail_errno(err, root, "inotify_init1");
  if (!(w->root = strdup(root)) || add_dir(w, "")) {
    int e = errno;
    replay_watch_close(w);
    errno = e;
    return pg_fail_errno(err, root, "cannot watch the scratch directory");
  }
  return 0;
}

static replay_file_event *file_slot(replay_watch *w, const char *rel, double now_ms) {
  for (size_t i = 0; i < w->n_files; i++)
    if (!strcmp(w->files[i].rel, rel)) return &w->files[i];
  if (w->n_files == REPLAY_WATCH_MAX_FILES) return w->overflowed = 1, NULL;
  if (PG_GROW(w->files, w->files_cap, w->n_files + 1, 32)) return NULL;
  replay_file_event *f = &w->files[w->n_files];
  if (!(f->rel = strdup(rel))) return NULL;
  f->created_ms = now_ms;
  f->written_ms = NAN;
  w->n_files++;
  return f;
}

static const char *dir_of(const replay_watch *w, int wd) {
  for (size_t i = 0; i < w->n_dirs; i++)
    if (w->dirs[i].wd == wd) return w->dirs[i].rel;
  return NULL;
}

static void handle(replay_watch *w, const struct inotify_event *ev, double now_ms) {
  if (ev->mask & IN_Q_OVERFLOW) {
    w->overflowed = 1;
    return;
  }
  const char *dir = dir_of(w, ev->wd);
  if (!dir || !ev->len) return;
  char rel[PATH_MAX];
  snprintf(rel, sizeof rel, "%s%s%s", dir, *dir ? "/" : "", ev->name);
  if (ev->mask & IN_ISDIR) {
    /* A directory made by the program (logs/): watch it too. Files made
     * in it before the watch exists are found when the run ends. */
    if (ev->mask & (IN_CREATE | IN_MOVED_TO)) add_dir(w, rel);
    return;
  }
  replay_file_event *f = file_slot(w, rel, now_ms);
  if (f && (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO))) f->written_ms = now_ms;
}

int replay_watch_drain(replay_watch *w, double now_ms) {
  char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
  int events = 0;
  for (;;) {
    ssize_t n = read(w->fd, buf, sizeof buf);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? events : -1;
    if (n == 0) return events;
    for (char *p = buf; p < buf + n;) {
      const struct inotify_event *ev = (const struct inotify_event *)p;
      handle(w, ev, now_ms);
      events++;
      p += sizeof *ev + ev->len;
    }
  }
}

const replay_file_event *replay_watch_find(const replay_watch *w, const char *rel) {
  for (size_t i = 0; i < w->n_files; i++)
    if (!strcmp(w->files[i].rel, rel)) return &w->files[i];
  return NULL;
}

void replay_watch_close(replay_watch *w) {
  if (w->fd > 0) close(w->fd);
  for (size_t i = 0; i < w->n_dirs; i++) free(w->dirs[i].rel);
  for (size_t i = 0; i < w->n_files; i++) free(w->files[i].rel);
  free(w->files);
  free(w->root);
  memset(w, 0, sizeof *w);
  w->fd = -1;
}
