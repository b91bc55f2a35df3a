/* The terminal progress line. */
#include "trainer/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void progress_init(progress *p, int64_t first_step, int64_t total, int64_t tokens_per_step, int quiet) {
  p->enabled = !quiet && isatty(STDERR_FILENO);
  p->shown = 0;
  p->total = total;
  p->tokens_per_step = tokens_per_step;
  p->first_step = first_step;
  p->t_first_ms = mono_ms();
  p->last_draw_ms = 0;
}

static void fmt_eta(double s, char *buf, size_t cap) {
  if (s < 0 || s != s) s = 0;
  long t = (long)(s + 0.5);
  if (t >= 3600) snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
}

void progress_update(progress *p, int64_t step, float loss) {
  if (!p->enabled) return;
  double now = mono_ms();
  if (step < p->total && now - p->last_draw_ms < 200) return;
  p->last_draw_ms = now;
  double s = (now - p->t_first_ms) / 1e3;
  int64_t done = step - p->first_step;
  double tps = s > 0 ? (double)(done * p->tokens_per_step) / s : 0;
  double eta = done > 0 ? s / (double)done * (double)(p->total - step) : 0;
  char e[32];
  fmt_eta(eta, e, sizeof e);
  fprintf(stderr, "\r\033[Kstep %lld/%lld  loss %.4f  %.0f tok/s  ETA %s", (long long)step,
          (long long)p->total, (double)loss, tps, e);
  fflush(stderr);
  p->shown = 1;
}

void progress_clear(progress *p) {
  if (!p->enabled || !p->shown) return;
  fprintf(stderr, "\r\033[K");
  fflush(stderr);
  p->shown = 0;
}
