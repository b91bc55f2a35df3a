/* The score-first evaluators (trainer/eval_session.h), their audit and
 * the perturbation test, on a tiny model (2 layers, width 32, windows of
 * 32) over the first 1025 tokens of the demo validation shard:
 *   - windows: every position once, in order; plain equals the official
 *     eval_val nll and sliding at stride T, bit for bit; TTT with lr 0
 *     equals sliding; thread count and batch size change no bit;
 *   - TTT: SCORE/ADAPT alternate per chunk, no ADAPT after the last chunk,
 *     the chain recomputes, chunk 0 scores as sliding and later chunks do
 *     not (the model learned);
 *   - the audit passes all three legal modes and finds exactly the
 *     condition each negative control breaks (tests/eval_controls.h);
 *   - the perturbation test passes the legal TTT at every cut with
 *     bit-identical prefixes, and catches adapt-before-score at the first
 *     position of the cut's chunk, and target reading at the probe at the
 *     cut. */
#include "tests/test_util.h"

#include <math.h>
#include <omp.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/sha256.h"
#include "tests/eval_controls.h"
#include "trainer/eval.h"
#include "trainer/eval_session.h"
#include "trainer/model_init.h"
#include "formats/shard.h"
#include "formats/tokenizer.h"
#include "verifier/audit.h"
#include "verifier/audit_perturb.h"
#include "manifests/score_dump.h"

#define DEMO_VAL "data/demo/fineweb_val_000000.bin"
#define SP1024 "data/tokenizers/fineweb_1024_bpe.model"
#define N_VAL 1025 /* tokens: 1024 targets */
#define T 32
#define S 8
#define CHUNK 256

static gpt_layout lay;
static float *flat;
static byte_luts luts;
static char *dir;     /* scratch: the split in dir/data, dumps beside it */
static char data[600];

static void write_split(const char *path, const uint16_t *t, size_t n) {
  size_t len = SHARD_HEADER_BYTES + 2 * n;
  uint8_t *b = calloc(1, len);
  uint32_t head[3] = {SHARD_MAGIC, SHARD_VERSION, (uint32_t)n};
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 4; j++) b[4 * k + j] = (uint8_t)(head[k] >> (8 * j));
  for (size_t i = 0; i < n; i++) {
    b[SHARD_HEADER_BYTES + 2 * i] = (uint8_t)t[i];
    b[SHARD_HEADER_BYTES + 2 * i + 1] = (uint8_t)(t[i] >> 8);
  }
  test_write_file(path, b, len);
  free(b);
}

/* The official initialisation plus small deterministic noise, so that
 * attention and the MLP (zero-initialised projections) carry context. */
static int make_model(void) {
  gpt_config c;
  gpt_config_preset("tiny", &c);
  c.num_layers = 2, c.model_dim = 32, c.num_heads = 2, c.num_kv_heads = 1, c.seq_len = T;
  pg_error err;
  if (gpt_layout_init(&lay, &c, &err)) return -1;
  flat = malloc(lay.n_params * sizeof *flat);
  if (gpt_init_params(&lay, flat, 1337, &err)) return -1;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < lay.n_params; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    flat[i] += 0.05f * ((float)(x >> 40) / (float)(1 << 24) - 0.5f);
  }
  return 0;
}

static int setup(void **state) {
  (void)state;
  /* One thread: spinning OpenMP workers on a busy machine cost more than
   * this model's work; the threads test sets 2 where it matters. */
  omp_set_num_threads(1);
  sp_model m;
  pg_error err;
  if (sp_model_load(SP1024, &m, &err)) return -1;
  int rc = luts_from_model(&m, 1024, &luts, &err);
  sp_model_free(&m);
  if (rc || make_model()) return -1;
  shard s;
  if (shard_open(DEMO_VAL, 1024, &s, &err)) return -1;
  uint16_t t[N_VAL];
  for (size_t i = 0; i < N_VAL; i++) t[i] = shard_token(&s, i);
  shard_close(&s);
  dir = test_tmpdir();
  snprintf(data, sizeof data, "%s/data", dir);
  mkdir(data, 0755);
  char path[700];
  snprintf(path, sizeof path, "%s/fineweb_val_000000.bin", data);
  write_split(path, t, N_VAL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmdir(dir);
  free(flat);
  gpt_layout_free(&lay);
  luts_free(&luts);
  return 0;
}

static eval_config config(eval_mode mode) {
  eval_config c;
  eval_config_default(&c, mode, T);
  if (mode != EVAL_MODE_PLAIN) c.stride = S;
  c.chunk = CHUNK;
  c.epochs = 1;
  c.lr = 0.05;
  c.ttt_batch_seqs = 4;
  c.batch_seqs = 5;
  return c;
}

static void open_val(const char *d, val_data *v) {
  pg_error err;
  if (val_data_open(v, d, "fineweb_val_", T, 1024, &err)) fail_msg("%s", err.msg);
}

/* Run fn (a control, or the mode's evaluator when NULL) on the split in
 * d; the dump goes to dump (if not NULL); events copied to ev if given. */
static void run_eval(const eval_config *c, control_fn fn, const char *d, const char *dump,
                     eval_events *ev, double *nats) {
  val_data v;
  open_val(d, &v);
  eval_session s;
  pg_error err;
  if (eval_session_open(&s, c, &v, &luts, &lay, flat, dump, &err)) fail_msg("%s", err.msg);
  int rc = fn ? fn(&s, &err) : eval_run_mode(&s, &err);
  if (rc || eval_session_finish(&s, &err)) fail_msg("%s", err.msg);
  if (nats) *nats = s.nats;
  if (ev) {
    *ev = s.events;
    memset(&s.events, 0, sizeof s.events);
  }
  eval_session_close(&s);
  val_data_close(&v);
}

static char *tmp_path(const char *name) {
  static char buf[8][700];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len);
  assert_int_equal(fread(b, 1, *len, f), *len);
  fclose(f);
  return b;
}

static void assert_same_file(const char *a, const char *b) {
  size_t la, lb;
  uint8_t *x = read_file(a, &la), *y = read_file(b, &lb);
  assert_int_equal(la, lb);
  assert_memory_equal(x, y, la);
  free(x), free(y);
}

/* The same records and probes, header included, except the event chain
 * head (header bytes 40..72): for evaluations whose scores agree while
 * their event logs do not (TTT's has ADAPT events and per-chunk SCOREs). */
static void assert_same_scores(const char *a, const char *b) {
  size_t la, lb;
  uint8_t *x = read_file(a, &la), *y = read_file(b, &lb);
  assert_int_equal(la, lb);
  assert_true(la >= SCORE_DUMP_HEADER_BYTES);
  assert_memory_equal(x, y, 40);
  assert_memory_equal(x + 72, y + 72, la - 72);
  free(x), free(y);
}

/* ---- windows ---- */

static void test_every_position_once(void **state) {
  (void)state;
  eval_mode modes[] = {EVAL_MODE_PLAIN, EVAL_MODE_SLIDING, EVAL_MODE_TTT};
  for (int m = 0; m < 3; m++) {
    eval_config c = config(modes[m]);
    run_eval(&c, NULL, data, tmp_path("once.pgsd"), NULL, NULL);
    score_dump d;
    pg_error err;
    assert_int_equal(score_dump_open(tmp_path("once.pgsd"), &d, &err), 0);
    assert_int_equal(d.n_records, N_VAL - 1);
    val_data v;
    open_val(data, &v);
    uint16_t t[N_VAL];
    assert_int_equal(val_data_copy(&v, 0, N_VAL, t, &err), 0);
    for (uint64_t i = 0; i < d.n_records; i++) {
      score_record r = score_dump_record(&d, i);
      assert_int_equal(r.position, i + 1);
      assert_int_equal(r.target, t[i + 1]);
    }
    val_data_close(&v);
    score_dump_close(&d);
  }
}

/* Every mode's dump records T and the head of its event chain, and holds
 * the default probes: what `pgolf audit` needs without being told. */
static void test_dump_records_t_and_head(void **state) {
  (void)state;
  eval_mode modes[] = {EVAL_MODE_PLAIN, EVAL_MODE_SLIDING, EVAL_MODE_TTT};
  for (int m = 0; m < 3; m++) {
    eval_config c = config(modes[m]);
    eval_events ev;
    run_eval(&c, NULL, data, tmp_path("head.pgsd"), &ev, NULL);
    score_dump d;
    pg_error err;
    assert_int_equal(score_dump_open(tmp_path("head.pgsd"), &d, &err), 0);
    assert_int_equal(d.version, 2);
    assert_int_equal(d.seq_len, T);
    assert_true(d.has_chain);
    assert_memory_equal(d.chain_head, ev.head, SHA256_LEN);
    assert_int_equal(d.n_probes, EVAL_DEFAULT_PROBES);
    score_dump_close(&d);
    eval_events_free(&ev);
  }
}

/* Plain is the official eval_val, per token and bit for bit, and equals
 * sliding with stride T. */
static void test_plain_is_official(void **state) {
  (void)state;
  val_data v;
  open_val(data, &v);
  float nll[N_VAL - 1];
  gpt_params p;
  gpt_params_bind(&p, &lay, flat);
  eval_opts o = {.batch_seqs = 3, .precision = GPT_FP32, .nll_out = nll};
  eval_result r;
  pg_error err;
  assert_int_equal(eval_val(&v, &luts, &lay, &p, &o, &r, &err), 0);
  gpt_params_free(&p);
  val_data_close(&v);
  eval_config c = config(EVAL_MODE_PLAIN);
  double nats;
  run_eval(&c, NULL, data, tmp_path("plain.pgsd"), NULL, &nats);
  score_dump d;
  assert_int_equal(score_dump_open(tmp_path("plain.pgsd"), &d, &err), 0);
  for (uint64_t i = 0; i < d.n_records; i++) {
    double want = nll[i];
    double got = score_dump_record(&d, i).nll;
    assert_memory_equal(&got, &want, sizeof got);
  }
  score_dump_close(&d);
  assert_memory_equal(&nats, &r.loss_sum, sizeof nats);
  c = config(EVAL_MODE_SLIDING);
  c.stride = T;
  run_eval(&c, NULL, data, tmp_path("sliding_t.pgsd"), NULL, NULL);
  assert_same_file(tmp_path("plain.pgsd"), tmp_path("sliding_t.pgsd"));
}

/* More context helps on average: sliding beats plain on this text. */
static void test_sliding_differs_from_plain(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_PLAIN);
  double plain, sliding;
  run_eval(&c, NULL, data, NULL, NULL, &plain);
  c = config(EVAL_MODE_SLIDING);
  run_eval(&c, NULL, data, NULL, NULL, &sliding);
  assert_true(plain != sliding);
}

static void test_threads_and_batch_change_nothing(void **state) {
  (void)state;
  eval_mode modes[] = {EVAL_MODE_SLIDING, EVAL_MODE_TTT};
  for (int m = 0; m < 2; m++) {
    eval_config c = config(modes[m]);
    omp_set_num_threads(1);
    c.batch_seqs = 1;
    run_eval(&c, NULL, data, tmp_path("a.pgsd"), NULL, NULL);
    omp_set_num_threads(2);
    c.batch_seqs = 7;
    run_eval(&c, NULL, data, tmp_path("b.pgsd"), NULL, NULL);
    assert_same_file(tmp_path("a.pgsd"), tmp_path("b.pgsd"));
  }
  omp_set_num_threads(1);
}

/* ---- TTT ---- */

static void test_ttt_lr_schedule(void **state) {
  (void)state;
  assert_int_equal(eval_ttt_chunks(1025, 256), 4);
  assert_int_equal(eval_ttt_chunks(1026, 256), 5);
  /* full rate first, zero for the last chunk (never used), half midway
   * (float cosine: within float rounding) */
  assert_true(eval_ttt_lr(0.002, 0, 4) == 0.002);
  assert_true(eval_ttt_lr(0.002, 3, 4) == 0.0);
  assert_true(fabs(eval_ttt_lr(0.002, 1, 3) - 0.001) < 0.002 * 1e-7);
  assert_true(fabs(eval_ttt_lr(0.002, 1, 4) - 0.0015) < 0.002 * 1e-7);
  assert_true(eval_ttt_lr(0.002, 0, 1) == 0.002);
}

static void test_ttt_events(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_TTT);
  eval_events ev;
  run_eval(&c, NULL, data, NULL, &ev, NULL);
  /* 4 chunks: SCORE ADAPT SCORE ADAPT SCORE ADAPT SCORE */
  assert_int_equal(ev.n, 7);
  uint8_t chain[SHA256_LEN];
  eval_chain_init(chain);
  for (size_t i = 0; i < ev.n; i++) {
    const eval_event *e = &ev.v[i];
    assert_int_equal(e->kind, i % 2 ? EVAL_ADAPT : EVAL_SCORE);
    assert_int_equal(e->chunk, i / 2);
    assert_int_equal(e->first, 1 + (i / 2) * CHUNK);
    assert_int_equal(e->last, (i / 2 + 1) * CHUNK);
    eval_chain_extend(chain, e->kind, e->chunk, e->first, e->last, e->nll_sum_bits);
    assert_memory_equal(chain, e->chain, SHA256_LEN);
  }
  assert_memory_equal(chain, ev.head, SHA256_LEN);
  eval_events_free(&ev);
}

/* Chunk 0 is scored by the artifact's model (as sliding); later chunks by
 * an adapted one; lr 0 adapts nothing and gives sliding's dump exactly. */
static void test_ttt_adapts_after_scoring(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_SLIDING);
  run_eval(&c, NULL, data, tmp_path("sl.pgsd"), NULL, NULL);
  c = config(EVAL_MODE_TTT);
  run_eval(&c, NULL, data, tmp_path("ttt.pgsd"), NULL, NULL);
  score_dump a, b;
  pg_error err;
  assert_int_equal(score_dump_open(tmp_path("sl.pgsd"), &a, &err), 0);
  assert_int_equal(score_dump_open(tmp_path("ttt.pgsd"), &b, &err), 0);
  uint64_t moved_in_chunk0 = 0, moved_later = 0;
  for (uint64_t i = 0; i < a.n_records; i++) {
    double x = score_dump_record(&a, i).nll, y = score_dump_record(&b, i).nll;
    if (memcmp(&x, &y, sizeof x)) {
      if (i < CHUNK) moved_in_chunk0++;
      else moved_later++;
    }
  }
  assert_int_equal(moved_in_chunk0, 0);
  assert_true(moved_later > CHUNK);
  score_dump_close(&a);
  score_dump_close(&b);
  c.lr = 0;
  run_eval(&c, NULL, data, tmp_path("ttt0.pgsd"), NULL, NULL);
  assert_same_scores(tmp_path("sl.pgsd"), tmp_path("ttt0.pgsd"));
}

static void test_config_errors(void **state) {
  (void)state;
  pg_error err;
  eval_config c = config(EVAL_MODE_SLIDING);
  c.stride = T + 1;
  assert_int_equal(eval_config_check(&c, &lay, &err), -1);
  assert_non_null(strstr(err.msg, "--stride"));
  c = config(EVAL_MODE_PLAIN);
  c.stride = S;
  assert_int_equal(eval_config_check(&c, &lay, &err), -1);
  c = config(EVAL_MODE_SLIDING);
  c.seq_len = T + 1;
  assert_int_equal(eval_config_check(&c, &lay, &err), -1);
  assert_non_null(strstr(err.msg, "--seq-len"));
  c = config(EVAL_MODE_TTT);
  c.momentum = 1.0;
  assert_int_equal(eval_config_check(&c, &lay, &err), -1);
  c = config(EVAL_MODE_TTT);
  c.chunk = 0;
  assert_int_equal(eval_config_check(&c, &lay, &err), -1);
  assert_int_equal(eval_mode_parse("ttt", &c.mode), 0);
  assert_int_equal(eval_mode_parse("TTT", &c.mode), -1);
}

/* An artifact's header is read before its layout is known: a header that
 * promises a model far larger than the file is refused before allocation,
 * and a file that is not a zlib stream names itself. */
static void test_model_header_bounds(void **state) {
  (void)state;
  uint8_t h[72] = "PGOLFQ8";
  int32_t cfg[7] = {65536, 256, 16384, 256, 256, 4, 1024};
  h[8] = 1, h[12] = 72;
  for (int k = 0; k < 7; k++)
    for (int j = 0; j < 4; j++) h[24 + 4 * k + j] = (uint8_t)((uint32_t)cfg[k] >> (8 * j));
  float f[4] = {10000.0f, 30.0f, 1.5f, 0.005f};
  memcpy(h + 52, f, sizeof f);
  uint8_t z[256];
  uLongf zl = sizeof z;
  assert_int_equal(compress2(z, &zl, h, sizeof h, 9), Z_OK);
  char *path = tmp_path("huge.ptz");
  test_write_file(path, z, zl);
  gpt_config c;
  pg_error err;
  assert_int_equal(eval_model_config(path, &c, &err), 0);
  assert_int_equal(c.model_dim, 16384);
  gpt_layout l;
  float *w;
  assert_int_equal(eval_model_load(path, &l, &w, &err), -1);
  assert_non_null(strstr(err.msg, "more than the file can hold"));
  test_write_file(path, "not zlib", 8);
  assert_int_equal(eval_model_load(path, &l, &w, &err), -1);
  assert_non_null(strstr(err.file, "huge.ptz"));
}

/* ---- the audit ---- */

typedef struct audited {
  audit_status status[AUDIT_N_CONDITIONS];
  int64_t position[AUDIT_N_CONDITIONS];
} audited;

/* Run fn, then audit its dump with its events and its own bpb as claim. */
static audited audit_of(const eval_config *c, control_fn fn) {
  eval_events ev;
  double nats;
  const char *dump = tmp_path("audit.pgsd");
  run_eval(c, fn, data, dump, &ev, &nats);
  val_data v;
  open_val(data, &v);
  uint64_t bytes;
  uint16_t t[N_VAL];
  pg_error err;
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), 0);
  assert_int_equal(val_data_copy(&v, 0, N_VAL, t, &err), 0);
  val_data_close(&v);
  char claim[64];
  snprintf(claim, sizeof claim, "%.8f", nats / log(2.0) / (double)bytes);
  score_dump d;
  assert_int_equal(score_dump_open(dump, &d, &err), 0);
  audit_input in = {.dump_name = dump, .dump = &d, .tokens = t, .n_tokens = N_VAL,
                    .luts = &luts, .claim = claim, .events = &ev, .dump_sha256 = NULL};
  audit_outcome out[AUDIT_N_CONDITIONS];
  audit_run(&in, out);
  audited a;
  for (int k = 0; k < AUDIT_N_CONDITIONS; k++) {
    a.status[k] = out[k].status;
    a.position[k] = out[k].position;
    if (getenv("PGOLF_TEST_VERBOSE"))
      fprintf(stderr, "  %s %s %s\n", out[k].code, audit_status_name(out[k].status), out[k].message);
  }
  score_dump_close(&d);
  eval_events_free(&ev);
  return a;
}

static void expect(const audited *a, audit_status cov, audit_status bytes, audit_status norm,
                   audit_status order) {
  assert_int_equal(a->status[AUDIT_COVERAGE], cov);
  assert_int_equal(a->status[AUDIT_BYTES], bytes);
  assert_int_equal(a->status[AUDIT_NORMALIZATION], norm);
  assert_int_equal(a->status[AUDIT_ORDER], order);
}

static void test_audit_passes_legal_modes(void **state) {
  (void)state;
  eval_mode modes[] = {EVAL_MODE_PLAIN, EVAL_MODE_SLIDING, EVAL_MODE_TTT};
  for (int m = 0; m < 3; m++) {
    eval_config c = config(modes[m]);
    c.n_probes = 8;
    audited a = audit_of(&c, NULL);
    expect(&a, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS);
  }
}

static void test_control_adapt_before_score(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_TTT);
  c.n_probes = 8;
  audited a = audit_of(&c, control_adapt_before_score);
  expect(&a, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS, AUDIT_FAIL);
  assert_int_equal(a.position[AUDIT_ORDER], 1); /* chunk 0 adapted on before it was scored */
}

static void test_control_best_of_two(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_TTT);
  c.n_probes = 8;
  audited a = audit_of(&c, control_best_of_two);
  /* rescoring is C4 (events score chunk 0 twice); its dump no longer
   * holds the scores of the first pass (C3) */
  expect(&a, AUDIT_FAIL, AUDIT_PASS, AUDIT_PASS, AUDIT_FAIL);
  assert_int_equal(a.position[AUDIT_COVERAGE], 1);
  assert_int_equal(a.position[AUDIT_ORDER], 1);
}

static void test_control_read_target(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_SLIDING);
  c.n_probes = 8;
  audited a = audit_of(&c, control_read_target);
  /* normalized and self-consistent: the dump alone cannot tell (the
   * perturbation test does, below) */
  expect(&a, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS);
}

static void test_control_not_normalized(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_SLIDING);
  c.n_probes = 8;
  audited a = audit_of(&c, control_not_normalized);
  expect(&a, AUDIT_PASS, AUDIT_PASS, AUDIT_FAIL, AUDIT_PASS);
}

static void test_control_skip_token(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_SLIDING);
  c.n_probes = 8;
  audited a = audit_of(&c, control_skip_token);
  expect(&a, AUDIT_FAIL, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS);
  assert_int_equal(a.position[AUDIT_COVERAGE], CONTROL_SKIPPED_POSITION);
}

static void test_control_score_twice(void **state) {
  (void)state;
  eval_config c = config(EVAL_MODE_SLIDING);
  c.n_probes = 8;
  audited a = audit_of(&c, control_score_twice);
  expect(&a, AUDIT_FAIL, AUDIT_PASS, AUDIT_PASS, AUDIT_PASS);
  assert_int_equal(a.position[AUDIT_COVERAGE], CONTROL_TWICE_POSITION);
}

/* ---- the perturbation test ---- */

typedef struct in_process {
  eval_config cfg;
  control_fn fn;
} in_process;

static int eval_in_process(void *ctx, const char *d, const char *dump, const uint64_t *probe_at,
                           size_t n_probe_at, pg_error *err) {
  (void)err;
  in_process *ip = ctx;
  eval_config c = ip->cfg;
  c.probe_at = probe_at;
  c.n_probe_at = n_probe_at;
  run_eval(&c, ip->fn, d, dump, NULL, NULL);
  return 0;
}

static perturb_report *perturb(eval_mode mode, control_fn fn, int failing) {
  in_process ip = {config(mode), fn};
  perturb_opts o = {.data_dir = data, .chunk = CHUNK};
  perturb_report *r = malloc(sizeof *r);
  pg_error err;
  int got = perturb_run(&o, eval_in_process, &ip, r, &err);
  if (got < 0) fail_msg("%s", err.msg);
  for (size_t i = 0; getenv("PGOLF_TEST_VERBOSE") && i < r->n_cuts; i++)
    fprintf(stderr, "  cut %llu %s %s\n", (unsigned long long)r->cuts[i].cut,
            perturb_status_name(r->cuts[i].status), r->cuts[i].why);
  assert_int_equal(got, failing);
  return r;
}

static void test_perturb_cuts(void **state) {
  (void)state;
  uint64_t cuts[PERTURB_MAX_CUTS];
  /* 1024 targets in chunks of 256: boundaries 257 and 769, insides 129 and 641 */
  assert_int_equal(perturb_choose_cuts(N_VAL, CHUNK, cuts), 4);
  assert_int_equal(cuts[0], 129);
  assert_int_equal(cuts[1], 257);
  assert_int_equal(cuts[2], 641);
  assert_int_equal(cuts[3], 769);
  assert_int_equal(perturb_choose_cuts(N_VAL, 0, cuts), 3);
  assert_int_equal(cuts[1], 513);
}

static void test_perturb_stream(void **state) {
  (void)state;
  /* splitmix64's first output from state 0 (Vigna's reference) */
  assert_true(perturb_splitmix64(0) == 0xe220a8397b1dcdafull);
  for (uint64_t i = 0; i < 5000; i++) {
    uint16_t t = (uint16_t)(i % 1024);
    uint16_t r = perturb_token(t, i, 1024);
    assert_true(r < 1024 && r != t);
    assert_int_equal(r, perturb_token(t, i, 1024));
  }
  assert_true(perturb_token(0, 7, 2) == 1 && perturb_token(1, 7, 2) == 0);
  /* the copy: same length, same tokens before the cut, all different after */
  char out[700];
  snprintf(out, sizeof out, "%s/copy", dir);
  pg_error err;
  assert_int_equal(perturb_write_copy(data, out, 300, 1024, &err), 0);
  val_data a, b;
  open_val(data, &a);
  open_val(out, &b);
  assert_int_equal(a.n_all, b.n_all);
  uint16_t x[N_VAL], y[N_VAL];
  assert_int_equal(val_data_copy(&a, 0, N_VAL, x, &err), 0);
  assert_int_equal(val_data_copy(&b, 0, N_VAL, y, &err), 0);
  for (int i = 0; i < N_VAL; i++) {
    if (i < 300) assert_int_equal(x[i], y[i]);
    else assert_int_equal(y[i], perturb_token(x[i], (uint64_t)i, 1024));
  }
  val_data_close(&a);
  val_data_close(&b);
}

static void test_perturb_legal_ttt(void **state) {
  (void)state;
  perturb_report *r = perturb(EVAL_MODE_TTT, NULL, 0);
  assert_int_equal(r->n_cuts, 4);
  for (size_t i = 0; i < r->n_cuts; i++) {
    assert_int_equal(r->cuts[i].status, PERTURB_PASS);
    assert_int_equal(r->cuts[i].compared, r->cuts[i].cut - 1);
    assert_true(r->cuts[i].max_abs_diff == 0.0);
    assert_true(r->cuts[i].probes_compared >= 1); /* the probe at the cut itself */
  }
  free(r);
}

/* A cut inside a chunk moves the chunk's first position (the model that
 * scored it was trained on the whole chunk). A cut at a chunk's first
 * position moves no earlier record, but the probe at the cut: the
 * distribution at k was trained on t[k]. The last chunk's learning rate
 * is 0 (cosine), so its boundary cut sees nothing. */
static void test_perturb_adapt_before_score(void **state) {
  (void)state;
  perturb_report *r = perturb(EVAL_MODE_TTT, control_adapt_before_score, 3);
  const uint64_t last_chunk_first = 1 + 3 * CHUNK;
  for (size_t i = 0; i < r->n_cuts; i++) {
    const perturb_cut *c = &r->cuts[i];
    uint64_t chunk_first = 1 + ((c->cut - 1) / CHUNK) * CHUNK;
    if (c->cut == last_chunk_first) {
      assert_int_equal(c->status, PERTURB_PASS);
    } else if (chunk_first == c->cut) {
      assert_int_equal(c->status, PERTURB_MOVED);
      assert_int_equal(c->first_moved, -1);
      assert_int_equal(c->probe_moved, (int64_t)c->cut);
    } else {
      assert_int_equal(c->status, PERTURB_MOVED);
      assert_int_equal(c->first_moved, (int64_t)chunk_first);
    }
  }
  free(r);
}

static void test_perturb_best_of_two(void **state) {
  (void)state;
  perturb_report *r = perturb(EVAL_MODE_TTT, control_best_of_two, 3); /* as adapt-before-score */
  for (size_t i = 0; i < r->n_cuts; i++) {
    const perturb_cut *c = &r->cuts[i];
    uint64_t chunk_first = 1 + ((c->cut - 1) / CHUNK) * CHUNK;
    if (chunk_first != c->cut) {
      assert_int_equal(c->status, PERTURB_MOVED);
      assert_true(c->first_moved >= (int64_t)chunk_first && c->first_moved < (int64_t)c->cut);
    }
  }
  free(r);
}

static void test_perturb_read_target(void **state) {
  (void)state;
  perturb_report *r = perturb(EVAL_MODE_SLIDING, control_read_target, 4);
  for (size_t i = 0; i < r->n_cuts; i++) {
    assert_int_equal(r->cuts[i].status, PERTURB_MOVED);
    assert_int_equal(r->cuts[i].first_moved, -1); /* the nll before the cut is fine */
    assert_int_equal(r->cuts[i].probe_moved, (int64_t)r->cuts[i].cut);
  }
  free(r);
}

/* Controls that break C2 or C4 are causal: the perturbation test passes them. */
static void test_perturb_passes_causal_controls(void **state) {
  (void)state;
  free(perturb(EVAL_MODE_SLIDING, control_not_normalized, 0));
  free(perturb(EVAL_MODE_SLIDING, control_skip_token, 0));
}

/* An evaluator that ignores its data proves nothing: inconclusive. */
static int ignore_data(void *ctx, const char *d, const char *dump, const uint64_t *probe_at,
                       size_t n_probe_at, pg_error *err) {
  (void)d;
  return eval_in_process(ctx, data, dump, probe_at, n_probe_at, err);
}

static void test_perturb_inconclusive(void **state) {
  (void)state;
  in_process ip = {config(EVAL_MODE_PLAIN), NULL};
  uint64_t cut = 500;
  perturb_opts o = {.data_dir = data, .cuts = &cut, .n_cuts = 1};
  perturb_report r;
  pg_error err;
  assert_int_equal(perturb_run(&o, ignore_data, &ip, &r, &err), 1);
  assert_int_equal(r.cuts[0].status, PERTURB_INCONCLUSIVE);
  cut = 1;
  assert_int_equal(perturb_run(&o, ignore_data, &ip, &r, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_position_once),
      cmocka_unit_test(test_dump_records_t_and_head),
      cmocka_unit_test(test_plain_is_official),
      cmocka_unit_test(test_sliding_differs_from_plain),
      cmocka_unit_test(test_threads_and_batch_change_nothing),
      cmocka_unit_test(test_ttt_lr_schedule),
      cmocka_unit_test(test_ttt_events),
      cmocka_unit_test(test_ttt_adapts_after_scoring),
      cmocka_unit_test(test_config_errors),
      cmocka_unit_test(test_model_header_bounds),
      cmocka_unit_test(test_audit_passes_legal_modes),
      cmocka_unit_test(test_control_adapt_before_score),
      cmocka_unit_test(test_control_best_of_two),
      cmocka_unit_test(test_control_read_target),
      cmocka_unit_test(test_control_not_normalized),
      cmocka_unit_test(test_control_skip_token),
      cmocka_unit_test(test_control_score_twice),
      cmocka_unit_test(test_perturb_cuts),
      cmocka_unit_test(test_perturb_stream),
      cmocka_unit_test(test_perturb_legal_ttt),
      cmocka_unit_test(test_perturb_adapt_before_score),
      cmocka_unit_test(test_perturb_best_of_two),
      cmocka_unit_test(test_perturb_read_target),
      cmocka_unit_test(test_perturb_passes_causal_controls),
      cmocka_unit_test(test_perturb_inconclusive),
  };
  if (getenv("PGOLF_TEST_FILTER")) cmocka_set_test_filter(getenv("PGOLF_TEST_FILTER"));
  return cmocka_run_group_tests(tests, setup, teardown);
}
