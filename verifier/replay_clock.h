/* The replay's own clock, and what it timestamps.
 *
 * A replay never trusts the times a submission prints. It reads the
 * program's output and log as they appear and stamps every line with its
 * own monotonic clock (milliseconds since the process was started); after
 * the run the shared log parser says which line is the first training
 * step, the end of training and the final metric, and the stamps of those
 * lines are the events. Files that appear in the scratch directory are
 * stamped by inotify: when each was created and when it was last closed
 * after writing. */
#ifndef PGOLF_REPLAY_CLOCK_H
#define PGOLF_REPLAY_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/error.h"

typedef struct replay_clock {
  struct timespec t0;
} replay_clock;

void replay_clock_start(replay_clock *c);
double replay_clock_ms(const replay_clock *c); /* milliseconds since start */

/* Text arriving in chunks, split into lines, each stamped with the time
 * its newline arrived. Lines are numbered from 1 as the log parser numbers
 * them. At most max_bytes are kept; later text is counted, not stored. */
typedef struct replay_stream {
  char *text;
  size_t len, cap, max_bytes;
  double *line_ms; /* line_ms[k-1]: when line k was complete */
  size_t n_lines, lines_cap;
  uint64_t dropped; /* bytes beyond max_bytes */
} replay_stream;

void replay_stream_init(replay_stream *s, size_t max_bytes);
int replay_stream_feed(replay_stream *s, const char *buf, size_t n, double now_ms);
/* A last line without a newline is stamped now. */
int replay_stream_finish(replay_stream *s, double now_ms);
/* The stamp of 1-based line k; NAN if there is no such line. */
double replay_stream_line_ms(const replay_stream *s, uint32_t line);
void replay_stream_free(replay_stream *s);

/* Files created under a directory (recursively), stamped by inotify. */
#define REPLAY_WATCH_MAX_DIRS 256
#define REPLAY_WATCH_MAX_FILES 4096

typedef struct replay_file_event {
  char *rel;         /* path relative to the watched root */
  double created_ms; /* first IN_CREATE or IN_MOVED_TO */
  double written_ms; /* last IN_CLOSE_WRITE or IN_MOVED_TO; NAN if never */
} replay_file_event;

typedef struct replay_watch {
  int fd;
  struct {
    int wd;
    char *rel; /* "" for the root */
  } dirs[REPLAY_WATCH_MAX_DIRS];
  size_t n_dirs;
  char *root;
  replay_file_event *files;
  size_t n_files, files_cap;
  int overflowed; /* the kernel dropped events, or a limit above was hit */
} replay_watch;

int replay_watch_open(replay_watch *w, const char *root, pg_error *err);
/* Read every pending event (non-blocking); stamp them now_ms. Returns the
 * number of events read, -1 on error. */
int replay_watch_drain(replay_watch *w, double now_ms);
const replay_file_event *replay_watch_find(const replay_watch *w, const char *rel);
void replay_watch_close(replay_watch *w);

#endif
