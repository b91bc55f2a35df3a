/* The README's rule and the maintainers' practice; see significance.h. */
#include "verifier/significance.h"

#include <math.h>

#include "common/challenge.h"

static int test(sample_summary a, sample_summary b, int target, double margin, double alpha,
                margin_test *out, pg_error *err) {
  return target ? one_sample_margin_test(a, b.mean, margin, alpha, out, err)
                : welch_margin_test(a, b, margin, alpha, out, err);
}

int significance_compute(sample_summary new_runs, sample_summary rec, int rec_is_target,
                         double margin_metric, significance *out, pg_error *err) {
  *out = (significance){0};
  if (test(new_runs, rec, rec_is_target, 0, CHALLENGE_PRACTICE_ALPHA, &out->practice, err)) return -1;
  out->practice_pass = out->practice.significant;
  out->grace_pass = out->practice.p_margin <= CHALLENGE_GRACE_P;
  out->readme_margin = margin_metric;
  if (isfinite(margin_metric)) {
    if (test(new_runs, rec, rec_is_target, margin_metric, CHALLENGE_ALPHA, &out->readme, err)) return -1;
    out->have_readme = 1;
    out->readme_pass = out->readme.significant;
  }
  return 0;
}

void significance_print(FILE *out, const significance *s, const char *unit, const char *indent) {
  if (s->have_readme)
    fprintf(out, "%sREADME rule  diff > %.6f %s (%g nats) at p < %g:  p = %.4g  %s\n", indent,
            s->readme_margin, unit, CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA, s->readme.p_margin,
            s->readme_pass ? "significant" : "not significant");
  else
    fprintf(out, "%sREADME rule  diff > %g nats at p < %g:  unknown (no tokens per byte to convert "
                 "the margin)\n", indent, CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA);
  fprintf(out, "%spractice     diff > 0 at p < %g (progression cutoff):  p = %.4g  %s\n", indent,
          CHALLENGE_PRACTICE_ALPHA, s->practice.p_margin, s->practice_pass ? "accepted" : "rejected");
  fprintf(out, "%sgrace        diff > 0 at p <= %g (accepted under the grace policy):  %s\n", indent,
          CHALLENGE_GRACE_P, s->grace_pass ? "within" : "above");
}

json_t *significance_json(const significance *s) {
  json_t *o = json_object(), *r = json_object(), *p = json_object(), *g = json_object();
  json_object_set_new(r, "margin_nats", json_real(CHALLENGE_MARGIN_NATS));
  json_object_set_new(r, "margin", s->have_readme ? json_real(s->readme_margin) : json_null());
  json_object_set_new(r, "alpha", json_real(CHALLENGE_ALPHA));
  json_object_set_new(r, "p", s->have_readme ? json_real(s->readme.p_margin) : json_null());
  json_object_set_new(r, "verdict", json_string(!s->have_readme ? "unknown"
                                                : s->readme_pass ? "significant"
                                                                 : "not_significant"));
  json_object_set_new(p, "margin", json_real(0));
  json_object_set_new(p, "alpha", json_real(CHALLENGE_PRACTICE_ALPHA));
  json_object_set_new(p, "p", json_real(s->practice.p_margin));
  json_object_set_new(p, "verdict", json_string(s->practice_pass ? "accepted" : "rejected"));
  json_object_set_new(g, "p_max", json_real(CHALLENGE_GRACE_P));
  json_object_set_new(g, "p", json_real(s->practice.p_margin));
  json_object_set_new(g, "verdict", json_string(s->grace_pass ? "within" : "above"));
  json_object_set_new(o, "readme", r);
  json_object_set_new(o, "practice", p);
  json_object_set_new(o, "grace", g);
  return o;
}
