/* The artifact container: a byte-exact header, round trips through a file,
 * and every damaged input refused with the file and offset named: truncated
 * and corrupt zlib streams, trailing bytes, each header and record field,
 * non-finite values, promised sizes too large or wrong, and a
 * decompression bomb. */
#include "tests/test_util.h"

#include <math.h>
#include <zlib.h>

#include "kernels/bf16.h"
#include "common/fileio.h"
#include "trainer/artifact.h"

static void gen(uint32_t seed, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x = (uint32_t)((uint64_t)i * 2654435761u + (uint64_t)seed * 97531u + 12345u);
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    x ^= x >> 16;
    out[i] = (float)(((double)(x % 4001) - 2000.0) * 0x1p-14);
  }
}

/* 2 layers, width 128, vocab 1024: int8 per-row (the embedding), fp16
 * (block matrices) and fp32 (control) records. */
static void mini_layout(gpt_layout *l) {
  gpt_config c;
  assert_int_equal(gpt_config_preset("baseline", &c), 0);
  c.num_layers = 2, c.model_dim = 128, c.num_heads = 4, c.num_kv_heads = 2;
  assert_int_equal(gpt_layout_init(l, &c, NULL), 0);
}

typedef struct fixture {
  gpt_layout l;
  float *flat;
  quant_dtype *dt;
  quant_model m;
  uint8_t *raw;
  size_t raw_len;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  mini_layout(&f->l);
  f->flat = malloc(f->l.n_params * 4);
  f->dt = malloc(f->l.n_tensors * sizeof *f->dt);
  for (int i = 0; i < f->l.n_tensors; i++)
    gen(7 + (uint32_t)i, f->l.tensors[i].numel, f->flat + f->l.tensors[i].offset);
  quant_dtypes_for(&f->l, 1, f->dt);
  const gpt_tensor *te = gpt_layout_find(&f->l, "tok_emb.weight");
  bf16_round_array(f->flat + te->offset, te->numel);
  pg_error err;
  if (quant_model_build(&f->m, &f->l, f->flat, f->dt, &err)) return -1;
  if (artifact_encode(&f->m, &f->raw, &f->raw_len, &err)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  quant_model_free(&f->m);
  free(f->raw), free(f->flat), free(f->dt);
  gpt_layout_free(&f->l);
  free(f);
  return 0;
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void set32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void set64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The header, checked against the documented offsets, by hand. */
static void test_header_bytes(void **state) {
  fixture *f = *state;
  const uint8_t *p = f->raw;
  assert_memory_equal(p, "PGOLFQ8\0", 8);
  assert_int_equal(le32(p + 8), 1);
  assert_int_equal(le32(p + 12), 72);
  assert_int_equal(le32(p + 16), f->raw_len);
  assert_int_equal(le32(p + 20), 0);
  const uint32_t cfg[7] = {1024, 2, 128, 4, 2, 2, 1024};
  for (int i = 0; i < 7; i++) assert_int_equal(le32(p + 24 + 4 * i), cfg[i]);
  assert_int_equal(le32(p + 52), 0x461c4000); /* 10000.0f */
  assert_int_equal(le32(p + 56), 0x41f00000); /* 30.0f */
  assert_int_equal(le32(p + 68), 22);
  /* the first record: skip_weights [1, 128], fp32 passthrough */
  assert_int_equal(p[72] | p[73] << 8, 12);
  assert_memory_equal(p + 74, "skip_weights", 12);
  assert_int_equal(p[86], QUANT_F32);
  assert_int_equal(p[87], QUANT_DTYPE_F32);
  assert_int_equal(p[88], 2);
  assert_int_equal(p[89], 0);
  assert_int_equal(le32(p + 90), 1);
  assert_int_equal(le32(p + 94), 128);
  float v0;
  uint32_t u = le32(p + 98);
  memcpy(&v0, &u, 4);
  assert_true(v0 == f->flat[0]);
  /* tok_emb: per-row int8, restored as bf16 */
  size_t off = 98 + 128 * 4;
  assert_int_equal(p[off] | p[off + 1] << 8, 14);
  assert_memory_equal(p + off + 2, "tok_emb.weight", 14);
  assert_int_equal(p[off + 16], QUANT_INT8_ROW);
  assert_int_equal(p[off + 17], QUANT_DTYPE_BF16);
  /* the payload size is the sum of what the records need */
  size_t want = 72;
  for (int i = 0; i < f->m.n_tensors; i++) {
    const quant_tensor *t = &f->m.tensors[i];
    want += 14 + strlen(t->name);
    want += t->kind == QUANT_INT8_ROW ? 2 * t->rows + t->numel
            : t->kind == QUANT_INT8_TENSOR ? 4 + t->numel
            : t->kind == QUANT_F32 ? 4 * t->numel : 2 * t->numel;
  }
  assert_int_equal(f->raw_len, want);
}

static void assert_models_equal(const quant_model *a, const quant_model *b) {
  assert_int_equal(a->n_tensors, b->n_tensors);
  assert_int_equal(a->payload_bytes, b->payload_bytes);
  assert_int_equal(a->baseline_bytes, b->baseline_bytes);
  for (int i = 0; i < a->n_tensors; i++) {
    const quant_tensor *x = &a->tensors[i], *y = &b->tensors[i];
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->dtype, y->dtype);
    assert_int_equal(x->rows, y->rows);
    assert_int_equal(x->cols, y->cols);
    size_t n = (size_t)x->numel;
    if (x->q) assert_memory_equal(x->q, y->q, n);
    if (x->scale_f16) assert_memory_equal(x->scale_f16, y->scale_f16, 2 * x->rows);
    if (x->kind == QUANT_INT8_TENSOR) assert_memory_equal(&x->scale_f32, &y->scale_f32, 4);
    if (x->f32) assert_memory_equal(x->f32, y->f32, 4 * n);
    if (x->f16) assert_memory_equal(x->f16, y->f16, 2 * n);
  }
}

static void test_round_trip_through_file(void **state) {
  fixture *f = *state;
  char *dir = test_tmpdir();
  char path[1024];
  snprintf(path, sizeof path, "%s/final_model.int8.ptz", dir);
  artifact_info info;
  pg_error err;
  if (artifact_export(path, &f->l, f->flat, f->dt, 12345, &info, &err)) fail_msg("%s", err.msg);
  assert_int_equal(info.payload_bytes, f->m.payload_bytes);
  assert_int_equal(info.raw_bytes, f->raw_len);
  assert_int_equal(info.acct.code_bytes, 12345);
  assert_int_equal(info.acct.total_bytes, 12345 + info.acct.model_bytes);
  assert_true(info.acct.fits);
  assert_int_equal(strlen(info.sha256), 64);
  /* the file is exactly zlib level 9 of the payload */
  uint8_t *z;
  size_t zlen;
  assert_int_equal(artifact_compress(f->raw, f->raw_len, &z, &zlen, &err), 0);
  assert_int_equal(zlen, info.acct.model_bytes);
  uint8_t *disk;
  size_t dlen;
  assert_int_equal(file_read_all(path, 1 << 28, &disk, &dlen, &err), 0);
  assert_int_equal(dlen, zlen);
  assert_memory_equal(disk, z, zlen);
  assert_int_equal(disk[0], 0x78);
  assert_int_equal(disk[1], 0xda); /* zlib header for level 9 */
  free(disk);
  free(z);
  quant_model back;
  if (artifact_read(path, &f->l, &back, &err)) fail_msg("%s", err.msg);
  assert_models_equal(&f->m, &back);
  quant_model_free(&back);
  /* loading gives the dequantized parameters, bit for bit */
  float *a = malloc(f->l.n_params * 4), *b = malloc(f->l.n_params * 4);
  assert_int_equal(quant_model_dequantize(&f->m, &f->l, a, &err), 0);
  assert_int_equal(artifact_load(path, &f->l, b, &err), 0);
  assert_memory_equal(a, b, f->l.n_params * 4);
  /* the bf16 token embedding came back bf16-exact, the rest differs from
   * the originals only by quantization */
  const gpt_tensor *te = gpt_layout_find(&f->l, "tok_emb.weight");
  for (size_t i = 0; i < te->numel; i++) assert_true(bf16_is_exact(b[te->offset + i]));
  free(a), free(b);
  char line[256];
  artifact_log_serialized(&info, line, sizeof line);
  char want[128];
  snprintf(want, sizeof want, "Serialized model int8+zlib: %llu bytes (payload:%llu ",
           (unsigned long long)info.acct.model_bytes, (unsigned long long)info.payload_bytes);
  assert_memory_equal(line, want, strlen(want));
  artifact_log_total(&info, line, sizeof line);
  snprintf(want, sizeof want, "Total submission size int8+zlib: %llu bytes",
           (unsigned long long)(12345 + info.acct.model_bytes));
  assert_string_equal(line, want);
  test_rmdir(dir);
}

/* Compress raw and parse it; expect failure mentioning needle. */
static void expect_payload_error(fixture *f, const uint8_t *raw, size_t len, const char *needle) {
  uint8_t *z;
  size_t zlen;
  pg_error err;
  assert_int_equal(artifact_compress(raw, len, &z, &zlen, &err), 0);
  quant_model m;
  int rc = artifact_parse(z, zlen, "art.ptz", &f->l, &m, &err);
  free(z);
  if (rc == 0) {
    quant_model_free(&m);
    fail_msg("accepted; expected an error mentioning '%s'", needle);
  }
  assert_string_equal(err.file, "art.ptz");
  if (!strstr(err.msg, needle)) fail_msg("'%s' does not mention '%s'", err.msg, needle);
}

/* A copy of the payload with one field changed. */
static uint8_t *tampered(fixture *f) {
  uint8_t *p = malloc(f->raw_len + 64);
  memcpy(p, f->raw, f->raw_len);
  return p;
}

static void test_header_fields_checked(void **state) {
  fixture *f = *state;
  uint8_t *p = tampered(f);
  p[3] = 'X';
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 0: not a pgolf int8 artifact");
  memcpy(p, f->raw, 72);
  set32(p + 8, 2);
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 8: format version 2");
  memcpy(p, f->raw, 72);
  set32(p + 12, 80);
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 12: header size 80");
  memcpy(p, f->raw, 72);
  set32(p + 32, 512);
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 32: model_dim is 512, the model's is 128");
  memcpy(p, f->raw, 72);
  set32(p + 48, 128);
  expect_payload_error(f, p, f->raw_len, "seq_len is 128");
  memcpy(p, f->raw, 72);
  p[56] ^= 1; /* logit_softcap's lowest bit */
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 56: logit_softcap");
  memcpy(p, f->raw, 72);
  set32(p + 68, 21);
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 68: 21 tensors, the model has 22");
  /* promised size: too small, too large for the model, one short, one over */
  memcpy(p, f->raw, 72);
  set64(p + 16, 10);
  expect_payload_error(f, p, f->raw_len, "payload size 10 is outside");
  set64(p + 16, artifact_payload_bound(&f->l) + 1);
  expect_payload_error(f, p, f->raw_len, "is outside");
  set64(p + 16, f->raw_len - 1);
  expect_payload_error(f, p, f->raw_len, "yields more than the");
  set64(p + 16, f->raw_len + 1);
  expect_payload_error(f, p, f->raw_len, "the header promises");
  /* extra bytes after the last tensor, though promised */
  memcpy(p, f->raw, 72);
  set64(p + 16, f->raw_len + 3);
  memset(p + f->raw_len, 0, 3);
  expect_payload_error(f, p, f->raw_len + 3, "3 bytes after the last tensor");
  /* a payload cut inside the header */
  expect_payload_error(f, f->raw, 40, "inside the 72-byte header");
  free(p);
}

static void test_record_fields_checked(void **state) {
  fixture *f = *state;
  uint8_t *p = tampered(f);
  p[74] = 'S'; /* "Skip_weights" */
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 74: tensor 'Skip_weights' where the model has 'skip_weights'");
  memcpy(p, f->raw, f->raw_len);
  p[72] = 0;
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 72: tensor name length 0");
  p[72] = 48;
  expect_payload_error(f, p, f->raw_len, "name length 48");
  memcpy(p, f->raw, f->raw_len);
  p[86] = 4;
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 86: tensor skip_weights: unknown kind 4");
  memcpy(p, f->raw, f->raw_len);
  p[87] = 2;
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 87: tensor skip_weights: unknown dtype 2");
  memcpy(p, f->raw, f->raw_len);
  p[89] = 1;
  expect_payload_error(f, p, f->raw_len, "reserved byte is not 0");
  memcpy(p, f->raw, f->raw_len);
  set32(p + 94, 127);
  expect_payload_error(f, p, f->raw_len, "shape 2-D [1, 127], the model's is 2-D [1, 128]");
  memcpy(p, f->raw, f->raw_len);
  set32(p + 98 + 4 * 3, 0x7fc00000); /* NaN in skip_weights[3] */
  expect_payload_error(f, p, f->raw_len, "at decompressed byte 110: tensor skip_weights: value is not finite (value 3)");
  /* a NaN row scale in tok_emb (row 2) */
  memcpy(p, f->raw, f->raw_len);
  size_t te = 98 + 128 * 4, scales = te + 2 + 14 + 12;
  p[scales + 4] = 0x00, p[scales + 5] = 0x7e;
  expect_payload_error(f, p, f->raw_len, "tensor tok_emb.weight: scale is not finite (row 2)");
  /* an infinite fp16 passthrough value (c_q is kept in fp16) */
  memcpy(p, f->raw, f->raw_len);
  const char *nm = "blocks.0.attn.c_q.weight";
  uint8_t *at = memmem(p, f->raw_len, nm, strlen(nm));
  assert_non_null(at);
  at += strlen(nm);
  assert_int_equal(at[0], QUANT_F16);
  at[12 + 2 * 5] = 0x00, at[12 + 2 * 5 + 1] = 0x7c;
  expect_payload_error(f, p, f->raw_len, "tensor blocks.0.attn.c_q.weight: value is not finite (value 5)");
  /* switching a passthrough record's kind changes its size: the reader
   * notices at the next record or at the end */
  memcpy(p, f->raw, f->raw_len);
  p[86] = QUANT_F16;
  expect_payload_error(f, p, f->raw_len, "tensor");
  free(p);
}

static void test_zlib_damage_refused(void **state) {
  fixture *f = *state;
  uint8_t *z;
  size_t zlen;
  pg_error err;
  quant_model m;
  assert_int_equal(artifact_compress(f->raw, f->raw_len, &z, &zlen, &err), 0);
  /* truncated anywhere */
  const size_t cuts[] = {0, 1, 2, 10, zlen / 2, zlen - 4, zlen - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    assert_int_equal(artifact_parse(z, cuts[i], "t.ptz", &f->l, &m, &err), -1);
    assert_true(err.pos >= 0 && err.pos <= (long long)cuts[i]);
    if (!strstr(err.msg, "truncated") && !strstr(err.msg, "ends after"))
      fail_msg("cut at %zu: %s", cuts[i], err.msg);
  }
  /* a flipped bit in the middle: deflate or the Adler-32 check catches it */
  uint8_t *c = malloc(zlen + 8);
  memcpy(c, z, zlen);
  c[zlen / 2] ^= 0x10;
  assert_int_equal(artifact_parse(c, zlen, "c.ptz", &f->l, &m, &err), -1);
  assert_string_equal(err.file, "c.ptz");
  assert_true(err.pos >= 0);
  /* a wrong checksum alone */
  memcpy(c, z, zlen);
  c[zlen - 1] ^= 1;
  assert_int_equal(artifact_parse(c, zlen, "c.ptz", &f->l, &m, &err), -1);
  assert_non_null(strstr(err.msg, "corrupt zlib stream: incorrect data check"));
  /* not zlib at all */
  assert_int_equal(artifact_parse(f->raw, f->raw_len, "raw.bin", &f->l, &m, &err), -1);
  assert_true(err.pos >= 0 && err.pos <= 2); /* the 2-byte zlib header */
  assert_non_null(strstr(err.msg, "corrupt zlib stream"));
  /* trailing bytes after a complete stream */
  memcpy(c, z, zlen);
  memcpy(c + zlen, "JUNK", 4);
  assert_int_equal(artifact_parse(c, zlen + 4, "c.ptz", &f->l, &m, &err), -1);
  assert_int_equal(err.pos, zlen);
  assert_non_null(strstr(err.msg, "4 trailing bytes after the zlib stream"));
  /* the intact stream still parses */
  assert_int_equal(artifact_parse(z, zlen, "z.ptz", &f->l, &m, &err), 0);
  quant_model_free(&m);
  free(c);
  free(z);
}

/* A small file that inflates to far more than its header promises is
 * refused as soon as it passes the promise (plus one byte). */
static void test_decompression_bomb_refused(void **state) {
  fixture *f = *state;
  size_t big = 16u << 20;
  uint8_t *p = calloc(1, big);
  memcpy(p, f->raw, f->raw_len);
  uint8_t *z;
  size_t zlen;
  pg_error err;
  assert_int_equal(artifact_compress(p, big, &z, &zlen, &err), 0);
  free(p);
  assert_true(zlen < f->raw_len + big / 500); /* 16 MiB of output from a small file */
  quant_model m;
  assert_int_equal(artifact_parse(z, zlen, "bomb.ptz", &f->l, &m, &err), -1);
  assert_non_null(strstr(err.msg, "yields more than the"));
  /* the stream was abandoned early: far from all input was consumed */
  assert_true(err.pos < (long long)zlen);
  free(z);
  /* and a header promising the most this model can need still cannot make
   * the reader take more */
  uint64_t bound = artifact_payload_bound(&f->l);
  assert_true(bound < 8u << 20);
}

static void test_wrong_model_and_files(void **state) {
  fixture *f = *state;
  char *dir = test_tmpdir();
  char path[1024];
  snprintf(path, sizeof path, "%s/a.ptz", dir);
  artifact_info info;
  pg_error err;
  assert_int_equal(artifact_export(path, &f->l, f->flat, f->dt, 0, &info, &err), 0);
  gpt_config c = f->l.cfg;
  c.num_layers = 3;
  gpt_layout other;
  assert_int_equal(gpt_layout_init(&other, &c, NULL), 0);
  quant_model m;
  assert_int_equal(artifact_read(path, &other, &m, &err), -1);
  assert_non_null(strstr(err.file, "a.ptz"));
  assert_non_null(strstr(err.msg, "num_layers is 2, the model's is 3"));
  gpt_layout_free(&other);
  snprintf(path, sizeof path, "%s/missing.ptz", dir);
  assert_int_equal(artifact_read(path, &f->l, &m, &err), -1);
  assert_non_null(strstr(err.file, "missing.ptz"));
  test_rmdir(dir);
}

static void test_size_accounting(void **state) {
  (void)state;
  artifact_accounting a;
  artifact_account(58000, 15942000, &a);
  assert_int_equal(a.total_bytes, 16000000);
  assert_int_equal(a.limit, 16000000);
  assert_true(a.fits);
  artifact_account(58000, 15942001, &a);
  assert_int_equal(a.total_bytes, 16000001);
  assert_false(a.fits);
}

/* The baseline preset: every matrix and the embedding are int8 per row,
 * the control tensors fp32; payload and container sizes follow. */
static void test_baseline_payload_size(void **state) {
  (void)state;
  gpt_config c;
  gpt_layout l;
  assert_int_equal(gpt_config_preset("baseline", &c), 0);
  assert_int_equal(gpt_layout_init(&l, &c, NULL), 0);
  uint64_t payload = 0;
  for (int i = 0; i < l.n_tensors; i++) {
    const gpt_tensor *t = &l.tensors[i];
    quant_kind k = quant_kind_for(t);
    payload += k == QUANT_INT8_ROW ? t->numel + 2ull * (uint64_t)t->rows : 4 * t->numel;
  }
  /* 17,059,912 parameters; int8 plus fp16 scales plus fp32 control */
  assert_int_equal(l.n_params, 17059912);
  assert_int_equal(payload, 17178912);
  gpt_layout_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_bytes),
      cmocka_unit_test(test_round_trip_through_file),
      cmocka_unit_test(test_header_fields_checked),
      cmocka_unit_test(test_record_fields_checked),
      cmocka_unit_test(test_zlib_damage_refused),
      cmocka_unit_test(test_decompression_bomb_refused),
      cmocka_unit_test(test_wrong_model_and_files),
      cmocka_unit_test(test_size_accounting),
      cmocka_unit_test(test_baseline_payload_size),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
