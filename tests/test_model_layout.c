/* The parameter layout: the official state_dict order, shapes, optimizer
 * groups and offsets (checked against the official model's state_dict). */
#include "tests/test_util.h"

#include "trainer/model.h"

static void test_tiny_layout_matches_official_order(void **state) {
  (void)state;
  gpt_config c;
  assert_int_equal(gpt_config_preset("tiny", &c), 0);
  gpt_layout l;
  assert_int_equal(gpt_layout_init(&l, &c, NULL), 0);
  assert_int_equal(l.n_tensors, 2 + 10 * c.num_layers);
  /* First entries as the official state_dict lists them (PyTorch 2.15). */
  const char *want[] = {"skip_weights", "tok_emb.weight", "blocks.0.attn_scale",
                        "blocks.0.mlp_scale", "blocks.0.resid_mix", "blocks.0.attn.q_gain",
                        "blocks.0.attn.c_q.weight", "blocks.0.attn.c_k.weight",
                        "blocks.0.attn.c_v.weight", "blocks.0.attn.proj.weight",
                        "blocks.0.mlp.fc.weight", "blocks.0.mlp.proj.weight",
                        "blocks.1.attn_scale"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    assert_string_equal(l.tensors[i].name, want[i]);
  const gpt_tensor *k = gpt_layout_find(&l, "blocks.3.attn.c_k.weight");
  assert_non_null(k);
  assert_int_equal(k->rows, 32);
  assert_int_equal(k->cols, 64);
  assert_int_equal(k->group, GPT_GROUP_MATRIX);
  assert_int_equal(gpt_layout_find(&l, "blocks.0.resid_mix")->group, GPT_GROUP_SCALAR);
  assert_true(gpt_layout_find(&l, "blocks.0.resid_mix")->is_control);
  assert_int_equal(gpt_layout_find(&l, "tok_emb.weight")->group, GPT_GROUP_EMBED);
  assert_int_equal(gpt_layout_find(&l, "skip_weights")->rows, 2);
  assert_null(gpt_layout_find(&l, "lm_head.weight"));
  /* Offsets are contiguous and cover the flat buffer exactly. */
  size_t off = 0;
  for (int i = 0; i < l.n_tensors; i++) {
    assert_int_equal(l.tensors[i].offset, off);
    off += l.tensors[i].numel;
  }
  assert_int_equal(off, l.n_params);
  gpt_layout_free(&l);
}

static void test_baseline_parameter_count(void **state) {
  (void)state;
  gpt_config c;
  assert_int_equal(gpt_config_preset("baseline", &c), 0);
  gpt_layout l;
  assert_int_equal(gpt_layout_init(&l, &c, NULL), 0);
  /* The official baseline logs model_params:17059912. */
  assert_int_equal(l.n_params, 17059912);
  gpt_layout_free(&l);
}

static void test_bind_addresses_the_flat_buffer(void **state) {
  (void)state;
  gpt_config c;
  gpt_config_preset("tiny", &c);
  gpt_layout l;
  assert_int_equal(gpt_layout_init(&l, &c, NULL), 0);
  float *flat = calloc(l.n_params, sizeof *flat);
  gpt_params p;
  gpt_params_bind(&p, &l, flat);
  assert_ptr_equal(p.tok_emb, flat + gpt_layout_find(&l, "tok_emb.weight")->offset);
  assert_ptr_equal(p.blocks[2].fc, flat + gpt_layout_find(&l, "blocks.2.mlp.fc.weight")->offset);
  assert_ptr_equal(p.blocks[3].mlp_proj + 64 * 128, flat + l.n_params);
  gpt_params_free(&p);
  free(flat);
  gpt_layout_free(&l);
}

static void test_bad_configs_are_named(void **state) {
  (void)state;
  gpt_config c;
  gpt_config_preset("tiny", &c);
  gpt_layout l;
  pg_error err;
  c.num_kv_heads = 3;
  assert_int_equal(gpt_layout_init(&l, &c, &err), -1);
  assert_non_null(strstr(err.msg, "num_kv_heads"));
  gpt_config_preset("tiny", &c);
  c.model_dim = 68; /* head_dim 17: odd */
  assert_int_equal(gpt_layout_init(&l, &c, &err), -1);
  assert_non_null(strstr(err.msg, "even"));
  assert_int_equal(gpt_config_preset("huge", &c), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiny_layout_matches_official_order),
      cmocka_unit_test(test_baseline_parameter_count),
      cmocka_unit_test(test_bind_addresses_the_flat_buffer),
      cmocka_unit_test(test_bad_configs_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
