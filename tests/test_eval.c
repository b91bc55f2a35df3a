/* Evaluation: the validation stream and its truncation, bytes equal to the
 * sentencepiece golden (golden/demo_bytes.json) for one shard and for the
 * same tokens split over several, and with a model: the loss sum is the
 * float64 sum of the per-token nll in order, independent of the batch
 * size, and val_loss / val_bpb follow from it. */
#include "tests/test_util.h"

#include <jansson.h>
#include <math.h>

#include "trainer/eval.h"
#include "formats/tokenizer.h"

#define DEMO_VAL "data/demo/fineweb_val_000000.bin"
#define SP1024 "data/tokenizers/fineweb_1024_bpe.model"

static byte_luts luts;
static json_t *golden;

static int setup(void **state) {
  (void)state;
  sp_model m;
  pg_error err;
  if (sp_model_load(SP1024, &m, &err)) return -1;
  int rc = luts_from_model(&m, 1024, &luts, &err);
  sp_model_free(&m);
  json_error_t je;
  golden = json_load_file("golden/demo_bytes.json", 0, &je);
  return rc || !golden ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  luts_free(&luts);
  json_decref(golden);
  return 0;
}

static json_int_t golden_val(const char *key) {
  json_t *v = json_object_get(json_object_get(golden, "splits"), "val");
  return json_integer_value(json_object_get(v, key));
}

static json_int_t golden_truncated(const char *key) {
  json_t *v = json_object_get(json_object_get(golden, "splits"), "val");
  return json_integer_value(json_object_get(json_object_get(v, "truncated"), key));
}

static void open_demo(val_data *v, uint32_t seq) {
  char *paths[] = {DEMO_VAL};
  pg_error err;
  if (val_data_open_paths(v, paths, 1, seq, 1024, &err)) fail_msg("%s", err.msg);
}

static void test_truncation_and_bytes(void **state) {
  (void)state;
  val_data v;
  open_demo(&v, 1024);
  assert_int_equal(v.n_all, golden_val("tokens"));
  assert_int_equal(v.n_tokens - 1, golden_truncated("targets"));
  assert_int_equal((v.n_tokens - 1) / 1024, golden_truncated("sequences"));
  uint64_t bytes;
  pg_error err;
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), 0);
  assert_int_equal(bytes, golden_truncated("target_bytes"));
  val_data_close(&v);
  /* seq 128: the numbers `pgolf bpb --seq-len 128` prints for this shard */
  open_demo(&v, 128);
  assert_int_equal(v.n_tokens - 1, 150656);
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), 0);
  assert_int_equal(bytes, 407268);
  val_data_close(&v);
  /* sequences of 1 keep every target */
  open_demo(&v, 1);
  assert_int_equal(v.n_tokens, v.n_all);
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), 0);
  assert_int_equal(bytes, golden_val("target_bytes"));
  val_data_close(&v);
}

/* The demo tokens, split over shards with an empty one between: the same
 * stream, the same bytes (a shard's first target uses the previous shard's
 * last token). */
static char *split_demo(const size_t *cuts, size_t n_cuts) {
  val_data whole;
  open_demo(&whole, 1);
  uint64_t N = whole.n_all;
  uint16_t *t = malloc(N * 2);
  pg_error err;
  assert_int_equal(val_data_copy(&whole, 0, N, t, &err), 0);
  val_data_close(&whole);
  char *dir = test_tmpdir();
  size_t from = 0;
  for (size_t f = 0; f <= n_cuts; f++) {
    size_t to = f < n_cuts ? cuts[f] : N;
    size_t n = to - from, len = SHARD_HEADER_BYTES + 2 * n;
    uint8_t *b = calloc(1, len);
    uint32_t head[3] = {SHARD_MAGIC, SHARD_VERSION, (uint32_t)n};
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 4; j++) b[4 * k + j] = (uint8_t)(head[k] >> (8 * j));
    for (size_t i = 0; i < n; i++) {
      b[SHARD_HEADER_BYTES + 2 * i] = (uint8_t)t[from + i];
      b[SHARD_HEADER_BYTES + 2 * i + 1] = (uint8_t)(t[from + i] >> 8);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/fineweb_val_%06zu.bin", dir, f);
    test_write_file(path, b, len);
    free(b);
    from = to;
  }
  free(t);
  return dir;
}

static void test_split_shards_same_stream(void **state) {
  (void)state;
  const size_t cuts[] = {50000, 50000, 100001};
  char *dir = split_demo(cuts, 3);
  val_data v, w;
  pg_error err;
  if (val_data_open(&v, dir, "fineweb_val_", 1024, 1024, &err)) fail_msg("%s", err.msg);
  assert_int_equal(v.n_shards, 4);
  open_demo(&w, 1024);
  assert_int_equal(v.n_tokens, w.n_tokens);
  uint64_t b1, b2;
  assert_int_equal(val_data_bytes(&v, &luts, &b1, &err), 0);
  assert_int_equal(val_data_bytes(&w, &luts, &b2, &err), 0);
  assert_int_equal(b1, golden_truncated("target_bytes"));
  assert_int_equal(b1, b2);
  /* copies across each boundary agree with the single shard */
  uint16_t a[300], c[300];
  const uint64_t starts[] = {0, 49900, 49999, 50000, 99950, 100000, 150440};
  for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
    assert_int_equal(val_data_copy(&v, starts[i], 300, a, &err), 0);
    assert_int_equal(val_data_copy(&w, starts[i], 300, c, &err), 0);
    assert_memory_equal(a, c, sizeof a);
  }
  assert_int_equal(val_data_copy(&v, v.n_all - 1, 2, a, &err), -1);
  assert_non_null(strstr(err.msg, "outside the 150741-token stream"));
  val_data_close(&v);
  val_data_close(&w);
  test_rmdir(dir);
}

static void test_input_errors(void **state) {
  (void)state;
  val_data v;
  pg_error err;
  char *paths[] = {DEMO_VAL};
  assert_int_equal(val_data_open_paths(&v, paths, 1, 150740, 1024, &err), 0);
  assert_int_equal(v.n_tokens, 150741);
  val_data_close(&v);
  assert_int_equal(val_data_open_paths(&v, paths, 1, 150741, 1024, &err), -1);
  assert_non_null(strstr(err.msg, "too short for sequences of 150741"));
  assert_non_null(strstr(err.file, "fineweb_val_000000.bin"));
  /* ids beyond a smaller vocabulary: file and byte offset of the first */
  assert_int_equal(val_data_open_paths(&v, paths, 1, 1024, 500, &err), 0);
  uint64_t bytes;
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), -1);
  assert_non_null(strstr(err.msg, "is not below the vocabulary size 500"));
  assert_true(err.pos >= SHARD_HEADER_BYTES);
  val_data_close(&v);
  char *dir = test_tmpdir();
  assert_int_equal(val_data_open(&v, dir, "fineweb_val_", 1024, 1024, &err), -1);
  assert_non_null(strstr(err.msg, "no shards match"));
  test_rmdir(dir);
}

/* ---- with a model ---- */

static void gen(uint32_t seed, size_t n, float scale, float *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x = (uint32_t)((uint64_t)i * 2654435761u + (uint64_t)seed * 97531u + 12345u);
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    x ^= x >> 16;
    out[i] = scale * (float)(((double)(x % 4001) - 2000.0) / 2000.0);
  }
}

typedef struct model {
  gpt_layout l;
  float *flat;
  gpt_params p;
} model;

static void tiny_model(model *m) {
  gpt_config c;
  assert_int_equal(gpt_config_preset("tiny", &c), 0);
  pg_error err;
  if (gpt_layout_init(&m->l, &c, &err)) fail_msg("%s", err.msg);
  m->flat = malloc(m->l.n_params * 4);
  for (int i = 0; i < m->l.n_tensors; i++) {
    const gpt_tensor *t = &m->l.tensors[i];
    float scale = t->is_control ? 0.5f : t->ndim == 2 ? 0.08f : 0.5f;
    gen(300 + (uint32_t)i, t->numel, scale, m->flat + t->offset);
  }
  gpt_params_bind(&m->p, &m->l, m->flat);
}

static void free_model(model *m) {
  gpt_params_free(&m->p);
  free(m->flat);
  gpt_layout_free(&m->l);
}

/* The first 3,000 demo tokens as one shard: 23 sequences of 128. */
static char *small_val(void) {
  const size_t cuts[] = {3000};
  return split_demo(cuts, 1);
}

static void test_eval_sums_nll_in_order(void **state) {
  (void)state;
  model m;
  tiny_model(&m);
  char *dir = small_val();
  char first[1024];
  snprintf(first, sizeof first, "%s/fineweb_val_000000.bin", dir);
  char *paths[] = {first};
  val_data v;
  pg_error err;
  const uint32_t T = (uint32_t)m.l.cfg.seq_len;
  assert_int_equal(val_data_open_paths(&v, paths, 1, T, 1024, &err), 0);
  uint64_t n_targets = v.n_tokens - 1;
  assert_int_equal(n_targets, 2999 / T * T);
  float *nll = malloc(n_targets * 4);
  eval_opts o = {.batch_seqs = 16, .precision = GPT_FP32, .nll_out = nll};
  eval_result r;
  if (eval_val(&v, &luts, &m.l, &m.p, &o, &r, &err)) fail_msg("%s", err.msg);
  assert_int_equal(r.tokens, n_targets);
  assert_int_equal(r.sequences, n_targets / T);
  double sum = 0;
  for (uint64_t i = 0; i < n_targets; i++) {
    assert_true(isfinite(nll[i]) && nll[i] > 0);
    sum += (double)nll[i];
  }
  assert_memory_equal(&sum, &r.loss_sum, sizeof sum);
  uint64_t bits;
  memcpy(&bits, &sum, 8);
  assert_int_equal(r.loss_sum_bits, bits);
  uint64_t bytes;
  assert_int_equal(val_data_bytes(&v, &luts, &bytes, &err), 0);
  assert_int_equal(r.bytes, bytes);
  assert_true(r.val_loss == sum / (double)n_targets);
  assert_true(r.val_bpb == sum / log(2.0) / (double)bytes);
  /* an untrained model scores near ln(vocab) */
  assert_true(r.val_loss > 5.0 && r.val_loss < 9.0);
  /* the first sequence's mean from gpt_forward itself */
  gpt_acts *a = gpt_acts_new(&m.l, 1, (int)T, &err);
  uint16_t x[1024], y[1024];
  assert_int_equal(val_data_copy(&v, 0, T, x, &err), 0);
  assert_int_equal(val_data_copy(&v, 1, T, y, &err), 0);
  float mean = gpt_forward(&m.l, &m.p, a, x, y, 1, (int)T, GPT_FP32, NULL);
  double s0 = 0;
  for (uint32_t i = 0; i < T; i++) s0 += nll[i];
  assert_true(fabs(s0 / T - mean) <= 1e-5 * fabs(mean));
  gpt_acts_free(a);
  /* batch size does not change a bit: 1, 7 and more than there are */
  const int batches[] = {1, 7, 1000};
  for (int k = 0; k < 3; k++) {
    eval_opts o2 = {.batch_seqs = batches[k], .precision = GPT_FP32};
    eval_result r2;
    if (eval_val(&v, &luts, &m.l, &m.p, &o2, &r2, &err)) fail_msg("%s", err.msg);
    if (r2.loss_sum_bits != r.loss_sum_bits)
      fail_msg("batch %d: loss sum %.17g, batch 16: %.17g", batches[k], r2.loss_sum, r.loss_sum);
    assert_int_equal(r2.bytes, r.bytes);
  }
  /* a different model scores differently */
  m.flat[m.l.tensors[1].offset] += 0.5f;
  eval_result r3;
  assert_int_equal(eval_val(&v, &luts, &m.l, &m.p, &o, &r3, &err), 0);
  assert_true(r3.loss_sum_bits != r.loss_sum_bits);
  free(nll);
  val_data_close(&v);
  test_rmdir(dir);
  free_model(&m);
}

/* The GPU's validation (trainer_gpu_validate) runs batches of the
 * training's shape, the last one padded with token 0, and sums the real
 * targets' losses on the host in order; under PGOLF_TEST_GPU_TREES=1 the
 * CPU's eval_val (tree_refs) must give those bits. Here that path is
 * replayed on the CPU with B = 4 over 23 sequences (the last batch 3 real
 * and 1 padding), in both precisions, against eval_val at several batch
 * sizes; the trees move the result by rounding only. */
static void test_eval_tree_refs_padded_batches(void **state) {
  (void)state;
  model m;
  tiny_model(&m);
  char *dir = small_val();
  char first[1024];
  snprintf(first, sizeof first, "%s/fineweb_val_000000.bin", dir);
  char *paths[] = {first};
  val_data v;
  pg_error err;
  const int T = m.l.cfg.seq_len, B = 4;
  assert_int_equal(val_data_open_paths(&v, paths, 1, (uint32_t)T, 1024, &err), 0);
  const uint64_t n_seq = (v.n_tokens - 1) / (uint64_t)T;
  assert_int_equal(n_seq % B, 3);
  gpt_acts *a = gpt_acts_new(&m.l, B, T, &err);
  assert_non_null(a);
  gpt_acts_use_tree_refs(a);
  const size_t n = (size_t)B * T;
  uint16_t *win = malloc((n + 1) * 2), *x = malloc(n * 2), *y = malloc(n * 2);
  float *nll = malloc(n * 4);
  for (int prec = GPT_FP32; prec <= GPT_MIXED; prec++) {
    eval_opts o = {.batch_seqs = 16, .precision = (gpt_precision)prec, .tree_refs = 1};
    eval_result r;
    if (eval_val(&v, &luts, &m.l, &m.p, &o, &r, &err)) fail_msg("%s", err.msg);
    double sum = 0;
    uint64_t bytes = 0;
    for (uint64_t s0 = 0; s0 < n_seq; s0 += B) {
      int b = n_seq - s0 < (uint64_t)B ? (int)(n_seq - s0) : B;
      memset(x, 0, n * 2);
      memset(y, 0, n * 2);
      assert_int_equal(eval_batch_ids(&v, &luts, s0, b, win, x, y, &bytes, &err), 0);
      gpt_forward(&m.l, &m.p, a, x, y, B, T, (gpt_precision)prec, nll);
      for (size_t k = 0; k < (size_t)b * T; k++) sum += (double)nll[k];
    }
    if (memcmp(&sum, &r.loss_sum, sizeof sum))
      fail_msg("precision %d: padded batches of 4 sum %.17g, eval_val %.17g", prec, sum, r.loss_sum);
    assert_int_equal(bytes, r.bytes);
    eval_result r2 = {.loss_sum = sum, .bytes = bytes};
    eval_result_finish(&r2, n_seq, (uint64_t)T, 1.0);
    assert_int_equal(r2.loss_sum_bits, r.loss_sum_bits);
    assert_true(r2.val_loss == r.val_loss && r2.val_bpb == r.val_bpb);
    assert_int_equal(r2.tokens, r.tokens);
    const int batches[] = {1, 7, 1000};
    for (int k = 0; k < 3; k++) {
      o.batch_seqs = batches[k];
      eval_result rb;
      if (eval_val(&v, &luts, &m.l, &m.p, &o, &rb, &err)) fail_msg("%s", err.msg);
      if (rb.loss_sum_bits != r.loss_sum_bits)
        fail_msg("precision %d, batch %d: %.17g, batch 16: %.17g", prec, batches[k], rb.loss_sum,
                 r.loss_sum);
    }
    o.tree_refs = 0;
    eval_result rp;
    if (eval_val(&v, &luts, &m.l, &m.p, &o, &rp, &err)) fail_msg("%s", err.msg);
    assert_true(fabs(rp.val_loss - r.val_loss) <= 1e-4 * r.val_loss);
  }
  free(win), free(x), free(y), free(nll);
  gpt_acts_free(a);
  val_data_close(&v);
  test_rmdir(dir);
  free_model(&m);
}

static void test_eval_argument_errors(void **state) {
  (void)state;
  model m;
  tiny_model(&m);
  val_data v;
  pg_error err;
  open_demo(&v, 128);
  eval_result r;
  eval_opts o = {.batch_seqs = 0};
  assert_int_equal(eval_val(&v, &luts, &m.l, &m.p, &o, &r, &err), -1);
  assert_non_null(strstr(err.msg, "batch of 0 sequences"));
  val_data_close(&v);
  /* windows longer than the model's sequence length */
  open_demo(&v, 256);
  o.batch_seqs = 4;
  assert_int_equal(eval_val(&v, &luts, &m.l, &m.p, &o, &r, &err), -1);
  val_data_close(&v);
  /* data checked for another vocabulary */
  char *paths[] = {DEMO_VAL};
  assert_int_equal(val_data_open_paths(&v, paths, 1, 128, 2048, &err), 0);
  assert_int_equal(eval_val(&v, &luts, &m.l, &m.p, &o, &r, &err), -1);
  assert_non_null(strstr(err.msg, "vocabulary 2048, the model has 1024"));
  val_data_close(&v);
  free_model(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncation_and_bytes),
      cmocka_unit_test(test_split_shards_same_stream),
      cmocka_unit_test(test_input_errors),
      cmocka_unit_test(test_eval_sums_nll_in_order),
      cmocka_unit_test(test_eval_tree_refs_padded_batches),
      cmocka_unit_test(test_eval_argument_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
