/* Building the evaluator's event log (see eval_events.h). */
#include "trainer/eval_events.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"

void eval_events_begin(eval_events *ev, const char *mode) {
  memset(ev, 0, sizeof *ev);
  eval_chain_init(ev->head);
  snprintf(ev->mode, sizeof ev->mode, "%s", mode);
}

int eval_events_append(eval_events *ev, size_t *cap, eval_event_kind kind, uint64_t chunk,
                       uint64_t first, uint64_t last, uint64_t nll_sum_bits, pg_error *err) {
  if (ev->n >= EVAL_MAX_EVENTS)
    return pg_fail(err, "", -1, "evaluation: more than %zu events", EVAL_MAX_EVENTS);
  if (PG_GROW(ev->v, *cap, ev->n + 1, 64))
    return pg_fail(err, "", -1, "evaluation: out of memory for %zu events", ev->n + 1);
  if (kind == EVAL_ADAPT) nll_sum_bits = 0;
  eval_chain_extend(ev->head, kind, chunk, first, last, nll_sum_bits);
  eval_event *e = &ev->v[ev->n++];
  e->kind = kind;
  e->chunk = chunk;
  e->first = first;
  e->last = last;
  e->nll_sum_bits = nll_sum_bits;
  memcpy(e->chain, ev->head, SHA256_LEN);
  return 0;
}

json_t *eval_events_json(const eval_events *ev) {
  json_t *o = json_object(), *list = json_array();
  if (!o || !list) goto oom;
  if (json_object_set_new(o, "mode", json_string(ev->mode))) goto oom;
  char hex[SHA256_HEX_LEN + 1];
  if (ev->has_dump_sha256) {
    sha256_hex(ev->dump_sha256, hex);
    if (json_object_set_new(o, "score_dump", json_pack("{s:s}", "sha256", hex))) goto oom;
  }
  if (ev->val_bpb[0] && json_object_set_new(o, "val_bpb", json_string(ev->val_bpb))) goto oom;
  for (size_t i = 0; i < ev->n; i++)
    if (json_array_append_new(list, eval_event_json(&ev->v[i]))) goto oom;
  if (json_object_set_new(o, "events", list)) {
    list = NULL;
    goto oom;
  }
  list = NULL;
  sha256_hex(ev->head, hex);
  if (json_object_set_new(o, "chain", json_string(hex))) goto oom;
  return o;
oom:
  json_decref(list);
  json_decref(o);
  return NULL;
}

int eval_events_write(const char *path, const eval_events *ev, pg_error *err) {
  json_t *e = eval_events_json(ev);
  json_t *doc = e ? json_pack("{s:{s:o}}", "predicate", "eval", e) : NULL;
  char *text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
  json_decref(doc);
  if (!text) return pg_fail(err, path, -1, "out of memory writing the event log");
  size_t len = strlen(text);
  text[len] = '\n'; /* the NUL's byte becomes the final newline */
  int rc = file_write_atomic(path, text, len + 1, 0644, err);
  free(text);
  return rc;
}
