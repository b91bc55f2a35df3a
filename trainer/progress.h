/* A one-line progress display for a person at a terminal: step, loss,
 * tokens per second and the time left, redrawn in place on stderr at most
 * a few times a second. Only when stderr is a terminal: logs and pipes
 * never see it. */
#ifndef PGOLF_PROGRESS_H
#define PGOLF_PROGRESS_H

#include <stdint.h>

typedef struct progress {
  int enabled;
  int shown;        /* a line is on the screen */
  int64_t total;    /* steps */
  int64_t tokens_per_step;
  int64_t first_step; /* where this process started (after a resume) */
  double t_first_ms, last_draw_ms;
} progress;

/* enabled = isatty(stderr) && !quiet. */
void progress_init(progress *p, int64_t first_step, int64_t total, int64_t tokens_per_step, int quiet);
/* After step `step` (1-based count of steps done), with its loss. */
void progress_update(progress *p, int64_t step, float loss);
/* Erase the line (before other output, and at the end). */
void progress_clear(progress *p);

#endif
