/* The audit on hand-made dumps: a clean one passes every condition, and
 * each kind of fault is flagged by exactly its condition, with the first
 * offending position, while the other conditions still run and pass. */
#include "tests/test_util.h"

#include <math.h>

#include "formats/byte_accounting.h"
#include "manifests/dsse.h"
#include "verifier/audit.h"

#define SP1024 "data/tokenizers/fineweb_1024_bpe.model"
#define V 1024u
#define N 41       /* tokens t[0..41): targets 1..40 */
#define CHUNK 10   /* events: chunks 1..10, 11..20, ... */
#define MAXREC 64

typedef struct probe_in {
  uint64_t pos;
  uint32_t target;
  double probs[V];
} probe_in;

typedef struct fixture {
  uint16_t tokens[N];
  byte_luts luts;
  uint64_t pos[MAXREC];
  uint32_t tgt[MAXREC];
  double nll[MAXREC];
  size_t n;
  probe_in probe[2];
  size_t n_probes;
  eval_event ev[16];
  size_t n_ev;
  char claim[32];
  int v2;                  /* build a version 2 dump recording T and head */
  uint32_t T;
  uint8_t head[SHA256_LEN];
  uint8_t *buf;
  score_dump dump;
} fixture;

/* ---- building ---- */

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void putf64(uint8_t *p, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  put64(p, b);
}

/* A distribution over V ids peaked on `target`, sums to 1 up to rounding. */
static void make_probs(double *probs, uint32_t target, double peak) {
  double rest = (1.0 - peak) / (V - 1);
  for (uint32_t i = 0; i < V; i++) probs[i] = i == target ? peak : rest;
}

/* A stream with a BOS (boundary) followed by pieces with a leading space,
 * so the byte rule's boundary case matters. */
static void make_tokens(fixture *f) {
  f->tokens[0] = 1; /* BOS */
  uint32_t next_space = 0, next_plain = 0;
  for (int i = 1; i < N; i++) {
    int want_space = i % 3 != 2;
    if (i == 20) {
      f->tokens[i] = 1; /* a second document */
      continue;
    }
    uint32_t *k = want_space ? &next_space : &next_plain;
    do (*k)++;
    while (f->luts.is_boundary[*k] || f->luts.has_leading_space[*k] != want_space ||
           f->luts.base_bytes[*k] == 0);
    f->tokens[i] = (uint16_t)*k; /* ids increase within each kind */
  }
}

static void clean_records(fixture *f) {
  f->n = 0;
  for (uint64_t p = 1; p < N; p++) {
    f->pos[f->n] = p;
    f->tgt[f->n] = f->tokens[p];
    f->nll[f->n] = 0.5 + 0.125 * (double)(p % 17);
    f->n++;
  }
  /* probes at 5 and 24, records agree with them */
  f->n_probes = 2;
  uint64_t at[2] = {5, 24};
  double peak[2] = {0.3, 0.75};
  for (int j = 0; j < 2; j++) {
    f->probe[j].pos = at[j];
    f->probe[j].target = f->tokens[at[j]];
    make_probs(f->probe[j].probs, f->tokens[at[j]], peak[j]);
    f->nll[at[j] - 1] = -log(peak[j]);
  }
}

/* Version 1 (64-byte header), or version 2 with f->T and f->head. */
static void build_dump(fixture *f) {
  size_t h = f->v2 ? 96 : 64, pb = 16 + 8 * V, len = h + 24 * f->n + pb * f->n_probes;
  free(f->buf);
  f->buf = calloc(1, len);
  assert_non_null(f->buf);
  uint8_t *b = f->buf;
  memcpy(b, "PGSD", 4);
  put32(b + 4, f->v2 ? 2 : 1);
  put32(b + 8, V);
  put64(b + 16, f->n);
  put64(b + 24, f->n_probes);
  if (f->v2) {
    put32(b + 32, f->T);
    memcpy(b + 40, f->head, SHA256_LEN);
  }
  for (size_t i = 0; i < f->n; i++) {
    uint8_t *r = b + h + 24 * i;
    put64(r, f->pos[i]);
    put32(r + 8, f->tgt[i]);
    putf64(r + 16, f->nll[i]);
  }
  for (size_t j = 0; j < f->n_probes; j++) {
    uint8_t *p = b + h + 24 * f->n + pb * j;
    put64(p, f->probe[j].pos);
    put32(p + 8, f->probe[j].target);
    put32(p + 12, V);
    for (uint32_t k = 0; k < V; k++) putf64(p + 16 + 8 * k, f->probe[j].probs[k]);
  }
  pg_error err;
  assert_int_equal(score_dump_parse(f->buf, len, "hand.pgsd", &f->dump, &err), 0);
}

/* Sum of the records' nll over positions [a, b]: positions ascending,
 * records of one position in record order (written independently of the
 * audit's index). */
static uint64_t range_sum_bits(const fixture *f, uint64_t a, uint64_t b) {
  double s = 0.0;
  for (uint64_t p = a; p <= b; p++)
    for (size_t i = 0; i < f->n; i++)
      if (f->pos[i] == p) s += f->nll[i];
  uint64_t bits;
  memcpy(&bits, &s, 8);
  return bits;
}

static void add_event(fixture *f, eval_event_kind kind, uint64_t chunk, uint64_t a, uint64_t b) {
  eval_event *e = &f->ev[f->n_ev++];
  e->kind = kind;
  e->chunk = chunk;
  e->first = a;
  e->last = b;
  e->nll_sum_bits = kind == EVAL_SCORE ? range_sum_bits(f, a, b) : 0;
}

/* Fill in every link from the start. */
static void chain_events(fixture *f, eval_events *ev) {
  uint8_t c[SHA256_LEN];
  eval_chain_init(c);
  for (size_t i = 0; i < f->n_ev; i++) {
    eval_event *e = &f->ev[i];
    eval_chain_extend(c, e->kind, e->chunk, e->first, e->last, e->nll_sum_bits);
    memcpy(e->chain, c, SHA256_LEN);
  }
  memset(ev, 0, sizeof *ev);
  ev->v = f->ev;
  ev->n = f->n_ev;
  memcpy(ev->head, c, SHA256_LEN);
}

/* Score-first TTT events: SCORE chunk k, then ADAPT on it. */
static void ttt_events(fixture *f) {
  f->n_ev = 0;
  for (uint64_t k = 0; k * CHUNK + 1 < N; k++) {
    uint64_t a = k * CHUNK + 1, b = a + CHUNK - 1 < N - 1 ? a + CHUNK - 1 : N - 1;
    add_event(f, EVAL_SCORE, k, a, b);
    add_event(f, EVAL_ADAPT, k, a, b);
  }
}

/* The claim an honest evaluator would print for these records. */
static void honest_claim(fixture *f) {
  double nats = 0;
  for (size_t i = 0; i < f->n; i++) nats += f->nll[i];
  uint64_t bytes;
  pg_error err;
  assert_int_equal(stream_total_bytes(&f->luts, f->tokens, N, &bytes, "t", &err), 0);
  snprintf(f->claim, sizeof f->claim, "%.6f", nats / log(2.0) / (double)bytes);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_load(SP1024, &m, &err), 0);
  assert_int_equal(luts_from_model(&m, V, &f->luts, &err), 0);
  sp_model_free(&m);
  make_tokens(f);
  clean_records(f);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  luts_free(&f->luts);
  free(f->buf);
  free(f);
  return 0;
}

/* Build the dump, events and claim from the fixture as it stands and run
 * every condition. */
static void run(fixture *f, audit_outcome o[AUDIT_N_CONDITIONS], int with_events) {
  build_dump(f);
  eval_events ev;
  chain_events(f, &ev);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, f->claim[0] ? f->claim : NULL,
                    with_events ? &ev : NULL, NULL, 0, NULL};
  audit_run(&in, o);
}

/* Exactly `which` fails (at `position` if >= 0); all others pass. */
static void expect_only(const audit_outcome *o, int which, int64_t position) {
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) {
    audit_status want = i == which ? AUDIT_FAIL : AUDIT_PASS;
    if (o[i].status != want) {
      fprintf(stderr, "%s: %s (wanted %s): %s\n", o[i].code, audit_status_name(o[i].status),
              audit_status_name(want), o[i].message);
      fail();
    }
  }
  if (which >= 0 && position >= 0 && o[which].position != position) {
    fprintf(stderr, "%s at %lld, wanted %lld: %s\n", o[which].code, (long long)o[which].position,
            (long long)position, o[which].message);
    fail();
  }
}

/* ---- the cases ---- */

static void test_tokens_exercise_boundary_rule(void **state) {
  fixture *f = *state;
  /* the stream has a boundary followed by a leading-space piece */
  assert_true(f->luts.is_boundary[f->tokens[20]]);
  assert_true(f->luts.has_leading_space[f->tokens[21]]);
}

static void test_clean(void **state) {
  fixture *f = *state;
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, -1, -1);
  assert_non_null(strstr(o[AUDIT_BYTES].message, "matches"));
  assert_true(o[AUDIT_BYTES].bytes > 0 && o[AUDIT_BYTES].targets == N - 1);
}

static void test_nothing_to_check_is_skipped(void **state) {
  fixture *f = *state;
  f->n_probes = 0;
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 0);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_PASS);
  assert_int_equal(o[AUDIT_BYTES].status, AUDIT_SKIP);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_SKIP);
  assert_int_equal(o[AUDIT_ORDER].status, AUDIT_SKIP);
  assert_false(isnan(o[AUDIT_BYTES].val_bpb)); /* still recomputed and reported */
}

static void test_duplicate(void **state) {
  fixture *f = *state;
  /* record 7 is written twice, right after itself */
  memmove(&f->pos[8], &f->pos[7], (f->n - 7) * sizeof f->pos[0]);
  memmove(&f->tgt[8], &f->tgt[7], (f->n - 7) * sizeof f->tgt[0]);
  memmove(&f->nll[8], &f->nll[7], (f->n - 7) * sizeof f->nll[0]);
  f->pos[7] = 7, f->tgt[7] = f->tokens[7], f->nll[7] = 2.0;
  f->n++;
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_COVERAGE, 7);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "scored twice"));
  assert_null(strstr(o[AUDIT_COVERAGE].message, "out of order"));
}

static void test_gap(void **state) {
  fixture *f = *state;
  memmove(&f->pos[12], &f->pos[13], (f->n - 13) * sizeof f->pos[0]); /* drop position 13 */
  memmove(&f->tgt[12], &f->tgt[13], (f->n - 13) * sizeof f->tgt[0]);
  memmove(&f->nll[12], &f->nll[13], (f->n - 13) * sizeof f->nll[0]);
  f->n--;
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_COVERAGE, 13);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "1 positions never scored (first: 13)"));
}

static void test_gap_at_end(void **state) {
  fixture *f = *state;
  f->n--; /* the last target is never scored */
  f->n_ev = 0;
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 0);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_FAIL);
  assert_int_equal(o[AUDIT_COVERAGE].position, N - 1);
}

static void test_reorder(void **state) {
  fixture *f = *state;
  /* positions 15 and 16 scored the other way round */
  uint64_t p = f->pos[14];
  uint32_t t = f->tgt[14];
  double l = f->nll[14];
  f->pos[14] = f->pos[15], f->tgt[14] = f->tgt[15], f->nll[14] = f->nll[15];
  f->pos[15] = p, f->tgt[15] = t, f->nll[15] = l;
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_COVERAGE, 15);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "out of order"));
  assert_null(strstr(o[AUDIT_COVERAGE].message, "twice"));
}

static void test_outside_and_wrong_target(void **state) {
  fixture *f = *state;
  f->pos[f->n] = N; /* one past the last target */
  f->tgt[f->n] = 0;
  f->nll[f->n++] = 1.0;
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 0);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_FAIL);
  assert_int_equal(o[AUDIT_COVERAGE].position, N);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "outside the split"));

  clean_records(f);
  f->tgt[30] = (uint32_t)(f->tokens[31] + 1) % V; /* record 30 scores position 31 */
  run(f, o, 0);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_FAIL);
  assert_int_equal(o[AUDIT_COVERAGE].position, 31);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "wrong target"));

  clean_records(f);
  f->pos[0] = 0; /* position 0 has no prefix: never a target */
  run(f, o, 0);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_FAIL);
  assert_int_equal(o[AUDIT_COVERAGE].position, 0);
}

static void test_wrong_byte_claim(void **state) {
  fixture *f = *state;
  ttt_events(f);
  /* the claim of an evaluator that counts the leading space even after a
   * boundary (the classic byte-count error) */
  double nats = 0;
  for (size_t i = 0; i < f->n; i++) nats += f->nll[i];
  uint64_t wrong = 0, right;
  for (int i = 1; i < N; i++)
    wrong += f->luts.base_bytes[f->tokens[i]] + f->luts.has_leading_space[f->tokens[i]];
  pg_error err;
  assert_int_equal(stream_total_bytes(&f->luts, f->tokens, N, &right, "t", &err), 0);
  assert_true(wrong > right);
  snprintf(f->claim, sizeof f->claim, "%.4f", nats / log(2.0) / (double)wrong);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_BYTES, -1);
  assert_non_null(strstr(o[AUDIT_BYTES].message, "does not match"));
  assert_int_equal(o[AUDIT_BYTES].bytes, right);
}

/* The claim is compared to the digits it gives. */
static void test_claim_digits(void **state) {
  fixture *f = *state;
  honest_claim(f);
  double v = strtod(f->claim, NULL);
  audit_outcome o[AUDIT_N_CONDITIONS];
  char good[32], bad[32];
  snprintf(good, sizeof good, "%.2f", v);
  snprintf(bad, sizeof bad, "%.2f", v + 0.01);
  const char *cases[][2] = {{good, "pass"}, {bad, "fail"}, {"1e0", "fail"}, {"-1.0", "fail"}};
  for (size_t i = 0; i < 4; i++) {
    snprintf(f->claim, sizeof f->claim, "%s", cases[i][0]);
    run(f, o, 0);
    assert_string_equal(audit_status_name(o[AUDIT_BYTES].status), cases[i][1]);
  }
  /* a recomputed 2.71828 claimed as 2.7183 (rounded) or 2.7182 (truncated
   * by more than half a unit) */
  double val;
  int d;
  assert_int_equal(audit_parse_claim("2.7183", &val, &d), 0);
  assert_int_equal(d, 4);
  assert_int_equal(audit_parse_claim("12", &val, &d), 0);
  assert_int_equal(d, 0);
  assert_int_equal(audit_parse_claim(".5", &val, &d), -1);
  assert_int_equal(audit_parse_claim("1.5 ", &val, &d), -1);
  assert_int_equal(audit_parse_claim("nan", &val, &d), -1);
}

static void test_probe_not_normalized(void **state) {
  fixture *f = *state;
  /* an n-gram mixture that forgot to renormalise: every other id +1e-5 */
  for (uint32_t k = 0; k < V; k++)
    if (k != f->probe[1].target) f->probe[1].probs[k] += 1e-5;
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_NORMALIZATION, 24);
  assert_non_null(strstr(o[AUDIT_NORMALIZATION].message, "sum to"));

  clean_records(f);
  f->probe[0].probs[3] = -1e-9; /* negative, even if the sum still works */
  f->probe[0].probs[4] += 1e-9;
  run(f, o, 0);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_FAIL);
  assert_non_null(strstr(o[AUDIT_NORMALIZATION].message, "id 3"));

  clean_records(f);
  f->probe[0].probs[3] = NAN;
  run(f, o, 0);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_FAIL);
}

/* Within the tolerance: rounding noise of a float32 softmax passes. */
static void test_probe_rounding_passes(void **state) {
  fixture *f = *state;
  for (uint32_t k = 0; k < V; k++) f->probe[1].probs[k] = (float)f->probe[1].probs[k];
  f->nll[23] = (float)f->nll[23];
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 0);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_PASS);
}

static void test_probe_target_mismatch(void **state) {
  fixture *f = *state;
  f->nll[4] += 0.01; /* the score is not -ln p[target] of the probed distribution */
  ttt_events(f);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_NORMALIZATION, 5);
  assert_non_null(strstr(o[AUDIT_NORMALIZATION].message, "the record says"));

  clean_records(f);
  f->probe[0].target = (f->probe[0].target + 1) % V;
  run(f, o, 0);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_FAIL);
  assert_non_null(strstr(o[AUDIT_NORMALIZATION].message, "the record has"));

  clean_records(f);
  f->n_probes = 1;
  f->probe[0].pos = 1000; /* a position nothing scored */
  run(f, o, 0);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_FAIL);
  assert_non_null(strstr(o[AUDIT_NORMALIZATION].message, "no record"));
}

static void test_adapt_before_score(void **state) {
  fixture *f = *state;
  f->n_ev = 0;
  for (uint64_t k = 0; k < 4; k++) {
    uint64_t a = k * CHUNK + 1, b = a + CHUNK - 1;
    if (k == 2) { /* chunk 2 adapted on before it is scored */
      add_event(f, EVAL_ADAPT, k, a, b);
      add_event(f, EVAL_SCORE, k, a, b);
    } else {
      add_event(f, EVAL_SCORE, k, a, b);
      add_event(f, EVAL_ADAPT, k, a, b);
    }
  }
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_ORDER, 21);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "ADAPT, chunk 2"));
}

/* An ADAPT that spans a scored chunk and the next, unscored one. */
static void test_adapt_overreaching(void **state) {
  fixture *f = *state;
  f->n_ev = 0;
  add_event(f, EVAL_SCORE, 0, 1, 10);
  add_event(f, EVAL_ADAPT, 0, 1, 12);
  add_event(f, EVAL_SCORE, 1, 11, 40);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_ORDER, 11);
}

static void test_broken_chain(void **state) {
  fixture *f = *state;
  ttt_events(f);
  honest_claim(f);
  build_dump(f);
  eval_events ev;
  chain_events(f, &ev);
  f->ev[3].last = 19; /* edited after the fact */
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, f->claim, &ev, NULL, 0, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  expect_only(o, AUDIT_ORDER, -1);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "event 3: its chain link"));

  /* dropping the last event: every link still recomputes, the head does not */
  chain_events(f, &ev);
  ev.n--;
  audit_run(&in, o);
  expect_only(o, AUDIT_ORDER, -1);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "head"));

  /* swapping two events breaks the links even though each is intact */
  chain_events(f, &ev);
  eval_event t = f->ev[4];
  f->ev[4] = f->ev[5];
  f->ev[5] = t;
  audit_run(&in, o);
  expect_only(o, AUDIT_ORDER, -1);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "event 4"));
}

/* The dump holds a later score than the one fixed at SCORE time. */
static void test_rescored_dump(void **state) {
  fixture *f = *state;
  ttt_events(f);
  f->nll[16] -= 0.25; /* position 17 improved after chunk 1 was scored */
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_ORDER, 11);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "not hold the scores fixed"));
}

/* Scoring a chunk twice (keep the better) shows in the event log even if
 * the dump keeps one record per position: a single pass fails. */
static void test_events_score_twice(void **state) {
  fixture *f = *state;
  ttt_events(f);
  add_event(f, EVAL_SCORE, 1, 11, 20);
  honest_claim(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  expect_only(o, AUDIT_COVERAGE, 11);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "event log"));
}

static void test_dump_digest(void **state) {
  fixture *f = *state;
  ttt_events(f);
  build_dump(f);
  eval_events ev;
  chain_events(f, &ev);
  ev.has_dump_sha256 = 1;
  memset(ev.dump_sha256, 0xab, SHA256_LEN);
  uint8_t mine[SHA256_LEN];
  memset(mine, 0xab, SHA256_LEN);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, NULL, &ev, mine, 0, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  assert_int_equal(o[AUDIT_ORDER].status, AUDIT_PASS);
  mine[0] = 0;
  audit_run(&in, o);
  assert_int_equal(o[AUDIT_ORDER].status, AUDIT_FAIL);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "another dump"));
}

/* ---- version 2 dumps: T and the chain head ---- */

/* A version 2 dump of the clean records with T = 1 (every target) whose
 * header records the head of the score-first events' chain. */
static void v2_with_own_head(fixture *f, eval_events *ev) {
  ttt_events(f);
  honest_claim(f);
  chain_events(f, ev);
  f->v2 = 1;
  f->T = 1;
  memcpy(f->head, ev->head, SHA256_LEN);
  build_dump(f);
}

static void test_v2_own_log_passes(void **state) {
  fixture *f = *state;
  eval_events ev;
  v2_with_own_head(f, &ev);
  assert_int_equal(f->dump.version, 2);
  assert_true(f->dump.has_chain);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, f->claim, &ev, NULL, 1, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  expect_only(o, -1, -1);
}

/* A log whose head is not the dump's is not used: C3 fails saying so, and
 * coverage ignores its events (here, one that rescores a chunk). */
static void test_v2_log_of_another_evaluation(void **state) {
  fixture *f = *state;
  eval_events ev;
  v2_with_own_head(f, &ev);
  add_event(f, EVAL_SCORE, 1, 11, 20);
  chain_events(f, &ev);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, f->claim, &ev, NULL, 1, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  expect_only(o, AUDIT_ORDER, -1);
  assert_non_null(strstr(o[AUDIT_ORDER].message, "not this dump's"));
  char *why = malloc(600);
  assert_false(audit_events_match(&in, why, 600));
  free(why);
}

/* The dump records a head, the log is missing: C3 fails with the reason
 * the caller gives. A head of zeros (no log kept) is skipped as before. */
static void test_v2_missing_log(void **state) {
  fixture *f = *state;
  eval_events ev;
  v2_with_own_head(f, &ev);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N,   &f->luts,
                    f->claim,    NULL,     NULL,      1,   "no log at hand.pgsd.events.json"};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  expect_only(o, AUDIT_ORDER, -1);
  assert_string_equal(o[AUDIT_ORDER].message, "no log at hand.pgsd.events.json");
  memset(f->head, 0, SHA256_LEN);
  build_dump(f);
  assert_false(f->dump.has_chain);
  in.events_missing = NULL;
  audit_run(&in, o);
  assert_int_equal(o[AUDIT_ORDER].status, AUDIT_SKIP);
}

/* The split kept for another T than the dump's is a coverage finding that
 * says so, even where the positions would happen to agree. */
static void test_v2_seq_len_mismatch(void **state) {
  fixture *f = *state;
  eval_events ev;
  v2_with_own_head(f, &ev);
  f->T = 8; /* 41 tokens: ((41-1)/8)*8 + 1 = 41, the same split as T = 1 */
  build_dump(f);
  audit_input in = {"hand.pgsd", &f->dump, f->tokens, N, &f->luts, f->claim, &ev, NULL, 8, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  expect_only(o, -1, -1);
  in.seq_len = 0; /* not known: nothing to compare */
  audit_run(&in, o);
  expect_only(o, -1, -1);
  in.seq_len = 10;
  audit_run(&in, o);
  expect_only(o, AUDIT_COVERAGE, -1);
  assert_non_null(strstr(o[AUDIT_COVERAGE].message, "evaluated with sequence length 8 but the "
                                                    "split was kept for 10"));
}

/* Unsorted dumps still find their records (probe and event lookups). */
static void test_index_unsorted(void **state) {
  fixture *f = *state;
  /* reverse the records */
  for (size_t i = 0; i < f->n / 2; i++) {
    size_t j = f->n - 1 - i;
    uint64_t p = f->pos[i];
    uint32_t t = f->tgt[i];
    double l = f->nll[i];
    f->pos[i] = f->pos[j], f->tgt[i] = f->tgt[j], f->nll[i] = f->nll[j];
    f->pos[j] = p, f->tgt[j] = t, f->nll[j] = l;
  }
  ttt_events(f);
  audit_outcome o[AUDIT_N_CONDITIONS];
  run(f, o, 1);
  assert_int_equal(o[AUDIT_COVERAGE].status, AUDIT_FAIL);
  assert_int_equal(o[AUDIT_COVERAGE].position, N - 2);
  assert_int_equal(o[AUDIT_NORMALIZATION].status, AUDIT_PASS);
  assert_int_equal(o[AUDIT_ORDER].status, AUDIT_PASS);
  audit_index ix;
  assert_int_equal(audit_index_build(&f->dump, &ix), 0);
  assert_false(ix.sorted);
  assert_int_equal(audit_index_lower(&ix, 7), 6);
  assert_int_equal(audit_index_record(&ix, 6, NULL).position, 7);
  assert_int_equal(audit_index_lower(&ix, 1000), ix.n);
  audit_index_free(&ix);
}

/* ---- the event log's JSON ---- */

static void test_events_json_round_trip(void **state) {
  fixture *f = *state;
  ttt_events(f);
  eval_events ev;
  chain_events(f, &ev);
  json_t *eval = json_object(), *list = json_array();
  for (size_t i = 0; i < ev.n; i++) json_array_append_new(list, eval_event_json(&ev.v[i]));
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(ev.head, hex);
  json_object_set_new(eval, "mode", json_string("ttt"));
  json_object_set_new(eval, "events", list);
  json_object_set_new(eval, "chain", json_string(hex));
  json_t *root = json_pack("{s:{s:O}}", "predicate", "eval", eval);

  char *dir = test_tmpdir(), path[600];
  snprintf(path, sizeof path, "%s/m.json", dir);
  assert_int_equal(json_dump_file(root, path, 0), 0);
  eval_events got;
  pg_error err;
  assert_int_equal(eval_events_load(path, &got, &err), 0);
  assert_int_equal(got.n, ev.n);
  assert_string_equal(got.mode, "ttt");
  assert_memory_equal(got.head, ev.head, SHA256_LEN);
  for (size_t i = 0; i < ev.n; i++) {
    assert_int_equal(got.v[i].kind, ev.v[i].kind);
    assert_int_equal(got.v[i].first, ev.v[i].first);
    assert_int_equal(got.v[i].last, ev.v[i].last);
    assert_int_equal(got.v[i].nll_sum_bits, ev.v[i].nll_sum_bits);
    assert_memory_equal(got.v[i].chain, ev.v[i].chain, SHA256_LEN);
  }
  eval_events_free(&got);

  /* the same statement from memory, bare and inside a DSSE envelope */
  char *text = json_dumps(root, 0);
  assert_non_null(text);
  assert_int_equal(eval_events_parse((const uint8_t *)text, strlen(text), "mem.json", &got, &err),
                   0);
  assert_int_equal(got.n, ev.n);
  assert_memory_equal(got.v, ev.v, ev.n * sizeof *ev.v);
  eval_events_free(&got);
  char *payload = b64_encode((const uint8_t *)text, strlen(text));
  json_t *env = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", DSSE_PAYLOAD_TYPE, "payload",
                          payload, "signatures", "keyid", "k", "sig", "AAAA");
  char *env_text = json_dumps(env, 0);
  assert_int_equal(
      eval_events_parse((const uint8_t *)env_text, strlen(env_text), "env.json", &got, &err), 0);
  assert_int_equal(got.n, ev.n);
  assert_memory_equal(got.head, ev.head, SHA256_LEN);
  eval_events_free(&got);
  json_object_set_new(env, "payload", json_string("not base64!"));
  free(env_text);
  env_text = json_dumps(env, 0);
  assert_int_equal(
      eval_events_parse((const uint8_t *)env_text, strlen(env_text), "env.json", &got, &err), -1);
  assert_string_equal(err.file, "env.json");
  assert_non_null(strstr(err.msg, "payload"));
  assert_int_equal(
      eval_events_parse((const uint8_t *)text, strlen(text) / 2, "cut.json", &got, &err), -1);
  assert_string_equal(err.file, "cut.json");
  free(env_text);
  json_decref(env);
  free(payload);
  free(text);

  /* malformed logs are input errors naming the JSON path */
  json_t *e0 = json_array_get(json_object_get(eval, "events"), 0);
  struct {
    const char *key;
    json_t *value;
    const char *want;
  } bad[] = {
      {"kind", json_string("score"), "events[0].kind"},
      {"first", json_integer(-1), "events[0].first"},
      {"last", json_integer(0), "first 1 > last 0"},
      {"nll_sum_bits", json_string("0x3FF0000000000000"), "nll_sum_bits"},
      {"chain", json_string("00"), "events[0].chain"},
      {"extra", json_true(), "unexpected keys"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *copy = json_deep_copy(eval);
    json_object_set_new(json_array_get(json_object_get(copy, "events"), 0), bad[i].key,
                        bad[i].value);
    assert_int_equal(eval_events_from_json(copy, "m.json", &got, &err), -1);
    if (!strstr(err.msg, bad[i].want)) {
      fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].want);
      fail();
    }
    json_decref(copy);
  }
  (void)e0;
  json_t *adapt_bits = json_deep_copy(eval);
  json_object_set_new(json_array_get(json_object_get(adapt_bits, "events"), 1), "nll_sum_bits",
                      json_string("0x0000000000000000"));
  assert_int_equal(eval_events_from_json(adapt_bits, "m.json", &got, &err), -1);
  assert_non_null(strstr(err.msg, "ADAPT event has no nll_sum_bits"));
  json_decref(adapt_bits);

  /* a manifest without predicate.eval */
  json_t *none = json_pack("{s:{}}", "predicate");
  assert_int_equal(json_dump_file(none, path, 0), 0);
  assert_int_equal(eval_events_load(path, &got, &err), -1);
  assert_non_null(strstr(err.msg, "no predicate.eval"));
  json_decref(none);
  json_decref(root);
  json_decref(eval);
  test_rmdir(dir);
}

/* predicate.eval.val_bpb: read when it is a claim in pgolf audit's
 * decimal form, an error naming the JSON path otherwise. */
static void test_events_claim(void **state) {
  (void)state;
  json_t *eval = json_pack("{s:s, s:[], s:s}", "mode", "ttt", "events", "chain",
                           "8d4d5cf8a0d8cd5b0e6b4bd3e11a3ec86ebb6c54c4bb2a1a3ff9eb4d4e8e7a51");
  eval_events got;
  pg_error err;
  assert_int_equal(eval_events_from_json(eval, "m.json", &got, &err), 0);
  assert_string_equal(got.val_bpb, "");
  eval_events_free(&got);
  json_object_set_new(eval, "val_bpb", json_string("3.39511423"));
  assert_int_equal(eval_events_from_json(eval, "m.json", &got, &err), 0);
  assert_string_equal(got.val_bpb, "3.39511423");
  eval_events_free(&got);
  const char *bad[] = {"1e0", "-1.5", "", "1234567.5", "1.123456789012345678", " 1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_object_set_new(eval, "val_bpb", json_string(bad[i]));
    assert_int_equal(eval_events_from_json(eval, "m.json", &got, &err), -1);
    assert_non_null(strstr(err.msg, "predicate.eval.val_bpb"));
  }
  json_object_set_new(eval, "val_bpb", json_real(1.5));
  assert_int_equal(eval_events_from_json(eval, "m.json", &got, &err), -1);
  json_decref(eval);
  assert_true(eval_claim_is_decimal("1") && eval_claim_is_decimal("123456.12345678901234567"));
  char *path = eval_events_default_path("out/ttt.pgsd");
  assert_string_equal(path, "out/ttt.pgsd.events.json");
  free(path);
}

/* The chain is the documented byte string. */
static void test_chain_definition(void **state) {
  (void)state;
  uint8_t c[SHA256_LEN], want[SHA256_LEN];
  eval_chain_init(c);
  sha256_buf("pgolf-eval-chain-v1", 19, want);
  assert_memory_equal(c, want, SHA256_LEN);
  uint8_t msg[SHA256_LEN + 33];
  memcpy(msg, c, SHA256_LEN);
  uint8_t tail[33] = {1, 7, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0, 0,
                      0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  memcpy(msg + SHA256_LEN, tail, 33);
  sha256_buf(msg, sizeof msg, want);
  eval_chain_extend(c, EVAL_SCORE, 7, 0x201, 0xff, 0x3ff0000000000000ull);
  assert_memory_equal(c, want, SHA256_LEN);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_tokens_exercise_boundary_rule), T(test_clean), T(test_nothing_to_check_is_skipped),
      T(test_duplicate), T(test_gap), T(test_gap_at_end), T(test_reorder),
      T(test_outside_and_wrong_target), T(test_wrong_byte_claim), T(test_claim_digits),
      T(test_probe_not_normalized), T(test_probe_rounding_passes), T(test_probe_target_mismatch),
      T(test_adapt_before_score), T(test_adapt_overreaching), T(test_broken_chain),
      T(test_rescored_dump), T(test_events_score_twice), T(test_dump_digest),
      T(test_index_unsorted), T(test_events_json_round_trip), T(test_chain_definition),
      T(test_events_claim),
      T(test_v2_own_log_passes), T(test_v2_log_of_another_evaluation), T(test_v2_missing_log),
      T(test_v2_seq_len_mismatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
