/* leaderboard.json and summary.md (verifier/leaderboard.h): every number
 * the page shows, and the short version for a pull request or an issue. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/leaderboard.h"
#include "verifier/text_buf.h"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }
static json_t *seeds_or_null(long n) { return n > 0 ? json_integer(n) : json_null(); }

/* "a,b" as ["a","b"]. */
static json_t *code_list(const char *codes) {
  json_t *a = json_array();
  const char *p = codes ? codes : "";
  while (*p) {
    const char *q = strchr(p, ',');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    json_array_append_new(a, json_stringn(p, n));
    p += n + (q != NULL);
  }
  return a;
}

static json_t *values_json(const lb_entry *e) {
  json_t *a = json_array();
  for (size_t i = 0; i < e->n_values; i++) {
    const lb_value *v = &e->values[i];
    json_t *o = json_object();
    json_object_set_new(o, "seed", v->seed >= 0 ? json_integer(v->seed) : json_null());
    json_object_set_new(o, "val_bpb", num(v->val_bpb));
    json_object_set_new(o, "val_loss", num(v->val_loss));
    json_object_set_new(o, "file", json_string(v->file));
    json_object_set_new(o, "line", json_integer(v->line));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *replays_json(const lb_entry *e) {
  if (!e->n_replays) return json_null();
  json_t *o = json_object(), *a = json_array();
  for (size_t i = 0; i < e->n_replays; i++) {
    const lb_replay *r = &e->replays[i];
    json_t *x = json_object();
    json_object_set_new(x, "manifest", json_string(r->path));
    json_object_set_new(x, "seed", r->seed >= 0 ? json_integer(r->seed) : json_null());
    json_object_set_new(x, "replayed_val_bpb", num(r->val_bpb));
    json_object_set_new(x, "claimed_val_bpb", num(r->claimed));
    json_object_set_new(x, "difference", num(r->val_bpb - r->claimed));
    json_object_set_new(x, "verdict", json_string(r->verdict));
    json_object_set_new(x, "errors", code_list(r->codes));
    json_array_append_new(a, x);
  }
  json_object_set_new(o, "runs", a);
  json_t *t = json_null();
  if (e->repro_tested) {
    const repro_result *r = &e->repro;
    t = json_object();
    json_object_set_new(t, "test", json_string(r->test));
    json_object_set_new(t, "n_claimed", json_integer((json_int_t)r->n_claimed));
    json_object_set_new(t, "n_replayed", json_integer((json_int_t)r->n_replayed));
    json_object_set_new(t, "claimed_mean", num(r->claimed_mean));
    json_object_set_new(t, "replayed_mean", num(r->replayed_mean));
    json_object_set_new(t, "gap", num(r->gap));
    json_object_set_new(t, "p", r->testable ? num(r->p) : json_null());
    json_object_set_new(t, "verdict", json_string(!r->testable          ? "untestable"
                                                  : r->gap_significant ? "REPRODUCTION_GAP"
                                                                       : "consistent"));
  }
  json_object_set_new(o, "reproduction", t);
  return o;
}

static json_t *entry_json(const lb_entry *e) {
  json_t *o = json_object();
  json_object_set_new(o, "folder", json_string(e->folder));
  json_object_set_new(o, "track", json_string(lb_kind_name(e->kind)));
  json_object_set_new(o, "track_dir", json_string(e->track_dir));
  json_object_set_new(o, "path", json_string(e->path));
  json_object_set_new(o, "report", json_string(e->page));
  json_object_set_new(o, "date", str_or_null(e->date));
  json_object_set_new(o, "date_from", json_string(e->date_source));
  json_object_set_new(o, "name", json_string(e->name ? e->name : e->folder));
  if (e->unreadable) {
    json_object_set_new(o, "verdict", json_string("unreadable"));
    json_object_set_new(o, "unreadable", json_string(e->error));
    return o;
  }
  json_object_set_new(o, "claimed_val_bpb", e->has_claim ? json_real(e->claim) : json_null());
  json_object_set_new(o, "claim_field", str_or_null(e->has_claim ? e->claim_key : NULL));
  json_object_set_new(o, "sample_from", json_string(e->sample_from));
  json_object_set_new(o, "n", json_integer((json_int_t)e->n_values));
  json_object_set_new(o, "runs_with_final_metric", json_integer((json_int_t)e->n_runs));
  json_object_set_new(o, "reruns", json_integer((json_int_t)e->n_reruns));
  json_object_set_new(o, "values", values_json(e));
  json_object_set_new(o, "mean_val_bpb", num(e->mean));
  json_object_set_new(o, "sd_val_bpb", num(e->sd));
  json_object_set_new(o, "min_val_bpb", num(e->lo));
  json_object_set_new(o, "max_val_bpb", num(e->hi));
  json_object_set_new(o, "claim_minus_mean", e->has_claim ? num(e->claim - e->mean) : json_null());
  json_object_set_new(o, "tokens_per_byte", num(e->tpb));
  json_object_set_new(o, "score", num(e->score));
  json_object_set_new(o, "bytes", num(e->bytes));
  json_object_set_new(o, "bytes_from", str_or_null(isfinite(e->bytes) ? e->bytes_from : NULL));
  json_object_set_new(o, "train_s", num(e->train_s));
  json_object_set_new(o, "eval_s", num(e->eval_s));
  json_object_set_new(o, "verdict", json_string(e->n_errors ? "fail" : "pass"));
  json_object_set_new(o, "n_errors", json_integer(e->n_errors));
  json_object_set_new(o, "n_warnings", json_integer(e->n_warnings));
  json_object_set_new(o, "errors", code_list(e->error_codes));
  json_object_set_new(o, "warnings", code_list(e->warning_codes));
  json_object_set_new(o, "replays", replays_json(e));
  return o;
}

static json_t *reading(double p, int have, int pass, double alpha) {
  json_t *o = json_object();
  json_object_set_new(o, "alpha", json_real(alpha));
  json_object_set_new(o, "p", have ? num(p) : json_null());
  json_object_set_new(o, "accepted", have ? json_boolean(pass) : json_null());
  return o;
}

static json_t *step_json(const leaderboard *lb, const lb_step *st) {
  const lb_entry *e = &lb->entries[st->rec];
  json_t *o = json_object();
  json_object_set_new(o, "record", json_string(e->folder));
  json_object_set_new(o, "date", json_string(e->date));
  json_object_set_new(o, "score", num(e->score));
  if (st->prev == LB_NONE) {
    json_object_set_new(o, "previous", json_null());
    return o;
  }
  const lb_entry *p = &lb->entries[st->prev];
  json_object_set_new(o, "previous", json_string(p->folder));
  json_object_set_new(o, "previous_score", num(p->score));
  json_object_set_new(o, "displaces", json_boolean(st->displaces));
  json_object_set_new(o, "n_new", json_integer((json_int_t)e->n_values));
  json_object_set_new(o, "n_record", json_integer((json_int_t)p->n_values));
  json_object_set_new(o, "mean_new", num(e->mean));
  json_object_set_new(o, "mean_record", num(p->mean));
  json_object_set_new(o, "diff", num(st->diff));
  json_object_set_new(o, "tokens_per_byte", num(st->tpb));
  json_object_set_new(o, "tokens_per_byte_from", json_string(st->tpb_from));
  json_object_set_new(o, "margin_nats", json_real(CHALLENGE_MARGIN_NATS));
  json_object_set_new(o, "margin_bpb", num(st->margin_bpb));
  json_object_set_new(o, "testable", json_boolean(st->testable));
  const significance *s = &st->sig;
  if (st->testable) {
    json_object_set_new(o, "readme", reading(s->readme.p_margin, s->have_readme, s->readme_pass,
                                             CHALLENGE_ALPHA));
    json_object_set_new(o, "practice", reading(s->practice.p_margin, 1, s->practice_pass,
                                               CHALLENGE_PRACTICE_ALPHA));
    json_object_set_new(o, "p_zero_margin", num(s->practice.p_margin));
    json_object_set_new(o, "df", num(s->practice.df));
    json_object_set_new(o, "grace", json_boolean(s->grace_pass));
    json_object_set_new(o, "seeds_needed_readme",
                        seeds_or_null(s->have_readme ? s->readme.seeds_needed : -1));
  } else {
    json_object_set_new(o, "why_not_testable", json_string(st->why));
    json_object_set_new(o, "readme", reading(NAN, 0, 0, CHALLENGE_ALPHA));
    json_object_set_new(o, "practice", reading(NAN, 0, 0, CHALLENGE_PRACTICE_ALPHA));
    json_object_set_new(o, "spread", num(st->spread));
    json_object_set_new(o, "spread_from", json_string(st->spread_from));
    json_object_set_new(o, "seeds_needed_readme", seeds_or_null(st->seeds_readme));
    json_object_set_new(o, "seeds_needed_practice", seeds_or_null(st->seeds_practice));
  }
  return o;
}

static json_t *counts_json(const leaderboard *lb) {
  lb_counts c = leaderboard_counts(lb);
  json_t *o = json_object(), *err = json_array();
  json_object_set_new(o, "folders", json_integer((json_int_t)lb->n_entries));
  json_object_set_new(o, "records", json_integer((json_int_t)c.records));
  json_object_set_new(o, "steps", json_integer((json_int_t)c.steps));
  json_object_set_new(o, "not_displacing", json_integer((json_int_t)c.not_displacing));
  json_object_set_new(o, "testable", json_integer((json_int_t)c.testable));
  json_object_set_new(o, "untestable", json_integer((json_int_t)c.untestable));
  json_object_set_new(o, "readme_accepted", json_integer((json_int_t)c.readme_pass));
  json_object_set_new(o, "practice_accepted", json_integer((json_int_t)c.practice_pass));
  json_object_set_new(o, "practice_only", json_integer((json_int_t)c.practice_only));
  json_object_set_new(o, "neither", json_integer((json_int_t)c.neither));
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    if (!e->n_errors && !e->unreadable) continue;
    json_t *x = json_object();
    json_object_set_new(x, "folder", json_string(e->folder));
    json_object_set_new(x, "track", json_string(lb_kind_name(e->kind)));
    json_object_set_new(x, "errors", e->unreadable ? json_pack("[s]", "UNREADABLE")
                                                   : code_list(e->error_codes));
    json_array_append_new(err, x);
  }
  json_object_set_new(o, "folders_with_errors", err);
  return o;
}

json_t *leaderboard_json(const leaderboard *lb) {
  json_t *o = json_object(), *recs = json_array(), *chain = json_array(), *skipped = json_array();
  json_object_set_new(o, "kind", json_string("pgolf/leaderboard/v1"));
  json_object_set_new(o, "records_dir", json_string(lb->root));
  json_t *lim = json_object();
  json_object_set_new(lim, "bytes", json_integer(CHALLENGE_SIZE_LIMIT_BYTES));
  json_object_set_new(lim, "train_s", json_real(CHALLENGE_TRAIN_LIMIT_S));
  json_object_set_new(lim, "eval_s", json_real(CHALLENGE_EVAL_LIMIT_S));
  json_object_set_new(lim, "margin_nats", json_real(CHALLENGE_MARGIN_NATS));
  json_object_set_new(lim, "readme_alpha", json_real(CHALLENGE_ALPHA));
  json_object_set_new(lim, "practice_alpha", json_real(CHALLENGE_PRACTICE_ALPHA));
  json_object_set_new(o, "limits", lim);
  json_object_set_new(o, "summary", counts_json(lb));
  json_object_set_new(o, "median_sd_val_bpb", num(lb->median_sd));
  for (size_t i = 0; i < lb->n_steps; i++) json_array_append_new(chain, step_json(lb, &lb->steps[i]));
  for (size_t i = 0; i < lb->n_entries; i++) json_array_append_new(recs, entry_json(&lb->entries[i]));
  for (size_t i = 0; i < lb->n_skipped_replays; i++)
    json_array_append_new(skipped, json_string(lb->skipped_replays[i]));
  json_object_set_new(o, "chain", chain);
  json_object_set_new(o, "folders", recs);
  json_object_set_new(o, "replay_files_skipped", skipped);
  return o;
}

/* ---- summary.md ---- */

static void md_p(text_buf *b, double p, int have) {
  if (have && isfinite(p)) tb_printf(b, " %.3g |", p);
  else tb_printf(b, " – |");
}

static void md_chain(text_buf *b, const leaderboard *lb) {
  tb_printf(b, "| date | record | score | n | vs | diff (bpb) | README p | practice p | accepted |\n"
               "|---|---|---:|---:|---|---:|---:|---:|---|\n");
  for (size_t i = 0; i < lb->n_steps; i++) {
    const lb_step *st = &lb->steps[i];
    const lb_entry *e = &lb->entries[st->rec];
    if (st->prev == LB_NONE || !st->displaces) continue;
    const lb_entry *p = &lb->entries[st->prev];
    tb_printf(b, "| %s | ", e->date);
    tb_md(b, e->folder);
    tb_printf(b, " | %.5f | %zu | ", e->score, e->n_values);
    tb_md(b, p->folder);
    tb_printf(b, " | %.5f |", st->diff);
    const significance *s = &st->sig;
    md_p(b, s->readme.p_margin, st->testable && s->have_readme);
    md_p(b, s->practice.p_margin, st->testable);
    if (!st->testable) {
      tb_printf(b, " not testable (");
      tb_md(b, st->why);
      tb_printf(b, ") |\n");
    } else
      tb_printf(b, " %s |\n", s->readme_pass ? "both rules" : s->practice_pass ? "practice only" : "neither");
  }
}

char *leaderboard_markdown(const leaderboard *lb) {
  text_buf b = {0};
  lb_counts c = leaderboard_counts(lb);
  tb_printf(&b, "## pgolf leaderboard\n\n");
  tb_printf(&b, "%zu folders, %zu on the record track. Of %zu record-to-record steps (a record "
                "below the standing one), %zu pass the README's rule (%g nats at p < %g), %zu the "
                "maintainers' practice (p < %g, no margin), %zu neither, %zu cannot be tested "
                "(a side with one seed); %zu did not beat the standing record.\n\n",
            lb->n_entries, c.records, c.steps, c.readme_pass, CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA,
            c.practice_pass, CHALLENGE_PRACTICE_ALPHA, c.neither, c.untestable, c.not_displacing);
  md_chain(&b, lb);
  tb_printf(&b, "\n**Folders with errors (%zu):**%s\n", c.folders_with_errors,
            c.folders_with_errors ? "" : " none");
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    if (!e->n_errors && !e->unreadable) continue;
    tb_printf(&b, "- `%s/", e->track_dir);
    tb_md(&b, e->folder);
    tb_printf(&b, "`: %s\n", e->unreadable ? "unreadable" : e->error_codes);
  }
  int any = 0;
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    if (!e->repro_tested) continue;
    if (!any) tb_printf(&b, "\n**Replays:**\n");
    any = 1;
    const repro_result *r = &e->repro;
    tb_printf(&b, "- `");
    tb_md(&b, e->folder);
    tb_printf(&b, "`: %zu replayed, mean %.5f against claimed %.5f (gap %+.5f): %s\n", r->n_replayed,
              r->replayed_mean, r->claimed_mean, r->gap,
              !r->testable ? "untestable" : r->gap_significant ? "REPRODUCTION_GAP" : "consistent");
  }
  return tb_finish(&b);
}
