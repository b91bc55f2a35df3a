/* The evaluation event log (predicate.eval, shape in eval_chain.h): its
 * hash chain and its strict reading. */
#include "manifests/eval_chain.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manifests/dsse.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/manifest.h"

void eval_chain_init(uint8_t c[SHA256_LEN]) {
  sha256_buf(EVAL_CHAIN_TAG, strlen(EVAL_CHAIN_TAG), c);
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void eval_chain_extend(uint8_t c[SHA256_LEN], eval_event_kind kind, uint64_t chunk,
                       uint64_t first, uint64_t last, uint64_t nll_sum_bits) {
  uint8_t b[SHA256_LEN + 1 + 32];
  memcpy(b, c, SHA256_LEN);
  b[SHA256_LEN] = (uint8_t)kind;
  put64(b + SHA256_LEN + 1, chunk);
  put64(b + SHA256_LEN + 9, first);
  put64(b + SHA256_LEN + 17, last);
  put64(b + SHA256_LEN + 25, nll_sum_bits);
  sha256_buf(b, sizeof b, c);
}

json_t *eval_event_json(const eval_event *e) {
  char hex[SHA256_HEX_LEN + 1], bits[19];
  sha256_hex(e->chain, hex);
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(e->kind == EVAL_SCORE ? "SCORE" : "ADAPT"));
  json_object_set_new(o, "chunk", json_integer((json_int_t)e->chunk));
  json_object_set_new(o, "first", json_integer((json_int_t)e->first));
  json_object_set_new(o, "last", json_integer((json_int_t)e->last));
  if (e->kind == EVAL_SCORE) {
    snprintf(bits, sizeof bits, "0x%016" PRIx64, e->nll_sum_bits);
    json_object_set_new(o, "nll_sum_bits", json_string(bits));
  }
  json_object_set_new(o, "chain", json_string(hex));
  return o;
}

/* ---- reading ---- */

static int get_u64(const json_t *o, const char *key, const char *name, const char *path,
                   uint64_t *out, pg_error *err) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return pg_fail(err, name, -1, "%s.%s: expected a non-negative integer", path, key);
  *out = (uint64_t)json_integer_value(v);
  return 0;
}

static int get_digest(const json_t *o, const char *key, const char *name, const char *path,
                      uint8_t out[SHA256_LEN], pg_error *err) {
  const char *s = json_string_value(json_object_get(o, key));
  if (!s || sha256_from_hex(s, out))
    return pg_fail(err, name, -1, "%s.%s: expected 64 lowercase hex digits", path, key);
  return 0;
}

/* "0x" and exactly 16 lowercase hex digits. */
static int parse_bits64(const char *s, uint64_t *out) {
  if (!s || strlen(s) != 18 || s[0] != '0' || s[1] != 'x') return -1;
  uint64_t v = 0;
  for (int i = 2; i < 18; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return 0;
}

static int parse_event(const json_t *o, const char *name, size_t i, eval_event *e,
                       pg_error *err) {
  char path[64];
  snprintf(path, sizeof path, "predicate.eval.events[%zu]", i);
  if (!json_is_object(o)) return pg_fail(err, name, -1, "%s: expected an object", path);
  const char *kind = json_string_value(json_object_get(o, "kind"));
  if (kind && !strcmp(kind, "SCORE")) e->kind = EVAL_SCORE;
  else if (kind && !strcmp(kind, "ADAPT")) e->kind = EVAL_ADAPT;
  else return pg_fail(err, name, -1, "%s.kind: expected \"SCORE\" or \"ADAPT\"", path);
  if (get_u64(o, "chunk", name, path, &e->chunk, err) ||
      get_u64(o, "first", name, path, &e->first, err) ||
      get_u64(o, "last", name, path, &e->last, err) ||
      get_digest(o, "chain", name, path, e->chain, err))
    return -1;
  if (e->first > e->last)
    return pg_fail(err, name, -1, "%s: first %" PRIu64 " > last %" PRIu64, path, e->first,
                   e->last);
  const json_t *bits = json_object_get(o, "nll_sum_bits");
  e->nll_sum_bits = 0;
  if (e->kind == EVAL_ADAPT && bits)
    return pg_fail(err, name, -1, "%s: an ADAPT event has no nll_sum_bits", path);
  if (e->kind == EVAL_SCORE && parse_bits64(json_string_value(bits), &e->nll_sum_bits))
    return pg_fail(err, name, -1, "%s.nll_sum_bits: expected \"0x\" and 16 lowercase hex digits",
                   path);
  size_t known = 5 + (e->kind == EVAL_SCORE);
  if (json_object_size(o) != known)
    return pg_fail(err, name, -1, "%s: unexpected keys (an event has exactly kind, chunk, first, "
                   "last,%s chain)", path, e->kind == EVAL_SCORE ? " nll_sum_bits," : "");
  return 0;
}

int eval_claim_is_decimal(const char *s) {
  size_t before = strspn(s, "0123456789");
  if (before < 1 || before > 6) return 0;
  if (s[before] == 0) return 1;
  if (s[before] != '.') return 0;
  size_t after = strspn(s + before + 1, "0123456789");
  return after <= 17 && s[before + 1 + after] == 0;
}

/* predicate.eval.val_bpb, when present: a claim in the decimal form. */
static int parse_claim(const json_t *eval, const char *name, eval_events *ev, pg_error *err) {
  const json_t *v = json_object_get(eval, "val_bpb");
  if (!v) return 0;
  const char *s = json_string_value(v);
  if (!s || !eval_claim_is_decimal(s))
    return pg_fail(err, name, -1, "predicate.eval.val_bpb: expected a decimal string such as "
                   "\"1.22436570\"");
  snprintf(ev->val_bpb, sizeof ev->val_bpb, "%s", s);
  return 0;
}

static int parse_header_fields(const json_t *eval, const char *name, eval_events *ev,
                               pg_error *err) {
  const json_t *mode = json_object_get(eval, "mode");
  if (mode) {
    const char *s = json_string_value(mode);
    if (!s || strlen(s) >= sizeof ev->mode)
      return pg_fail(err, name, -1, "predicate.eval.mode: expected a short string");
    strcpy(ev->mode, s);
  }
  const json_t *dump = json_object_get(eval, "score_dump");
  if (dump) {
    if (!json_is_object(dump))
      return pg_fail(err, name, -1, "predicate.eval.score_dump: expected an object");
    if (get_digest(dump, "sha256", name, "predicate.eval.score_dump", ev->dump_sha256, err))
      return -1;
    ev->has_dump_sha256 = 1;
  }
  if (parse_claim(eval, name, ev, err)) return -1;
  return get_digest(eval, "chain", name, "predicate.eval", ev->head, err);
}

int eval_events_from_json(const json_t *eval, const char *name, eval_events *ev, pg_error *err) {
  memset(ev, 0, sizeof *ev);
  if (!json_is_object(eval)) return pg_fail(err, name, -1, "predicate.eval: expected an object");
  const json_t *events = json_object_get(eval, "events");
  if (!json_is_array(events))
    return pg_fail(err, name, -1, "predicate.eval.events: expected an array");
  size_t n = json_array_size(events);
  if (n > EVAL_MAX_EVENTS)
    return pg_fail(err, name, -1, "predicate.eval.events: %zu events, at most %zu", n,
                   EVAL_MAX_EVENTS);
  if (parse_header_fields(eval, name, ev, err)) return -1;
  ev->v = calloc(n ? n : 1, sizeof *ev->v);
  if (!ev->v) return pg_fail(err, name, -1, "out of memory for %zu events", n);
  for (size_t i = 0; i < n; i++)
    if (parse_event(json_array_get(events, i), name, i, &ev->v[i], err)) {
      eval_events_free(ev);
      return -1;
    }
  ev->n = n;
  return 0;
}

/* The statement inside a DSSE envelope, or the document itself. */
static int read_statement(const uint8_t *buf, size_t len, const char *name, json_t **out,
                          pg_error *err) {
  json_t *root;
  if (json_read_buf(buf, len, name, &root, err)) return -1;
  if (!dsse_is_envelope(root)) {
    *out = root;
    return 0;
  }
  dsse_envelope env;
  int rc = dsse_from_json(root, name, &env, err);
  json_decref(root);
  if (rc) return -1;
  rc = json_read_buf(env.payload, env.payload_len, name, out, err);
  dsse_free(&env);
  return rc;
}

int eval_events_parse(const uint8_t *buf, size_t len, const char *name, eval_events *ev,
                      pg_error *err) {
  memset(ev, 0, sizeof *ev);
  json_t *root;
  if (read_statement(buf, len, name, &root, err)) return -1;
  const json_t *eval = json_object_get(json_object_get(root, "predicate"), "eval");
  int rc = eval ? eval_events_from_json(eval, name, ev, err)
                : pg_fail(err, name, -1, "no predicate.eval: the manifest records no event log");
  json_decref(root);
  return rc;
}

int eval_events_load(const char *path, eval_events *ev, pg_error *err) {
  memset(ev, 0, sizeof *ev);
  uint8_t *buf;
  size_t len;
  if (file_read_all(path, MANIFEST_ENVELOPE_MAX_BYTES, &buf, &len, err)) return -1;
  int rc = eval_events_parse(buf, len, path, ev, err);
  free(buf);
  return rc;
}

void eval_events_free(eval_events *ev) {
  free(ev->v);
  memset(ev, 0, sizeof *ev);
}

char *eval_events_default_path(const char *dump_path) {
  size_t n = strlen(dump_path) + sizeof EVAL_EVENTS_SUFFIX;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s%s", dump_path, EVAL_EVENTS_SUFFIX);
  return p;
}
