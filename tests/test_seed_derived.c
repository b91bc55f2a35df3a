/* seed_derived_key (verifier/seed_derived.h): a printed setting whose
 * value the script computes from the seed, directly or through other
 * names, and the cases that are not: another name's value, an attribute
 * of a seed-built object, a keyword argument's name, a string, a longer
 * key that ends like this one. */
#include "tests/test_util.h"

#include "verifier/seed_derived.h"

static int derived(const char *text, const char *key) {
  py_src src;
  pg_error err;
  assert_int_equal(pysrc_parse(text, strlen(text), "t.py", &src, &err), 0);
  const int r = seed_derived_key(&src, key);
  pysrc_free(&src);
  return r;
}

/* The Rascal loader (PR #1120), shortened. */
static const char *rascal =
    "class Loader:\n"
    "    def __init__(self, num_shards, seed):\n"
    "        self.batch_shard_stride = choose_coprime_stride(self.num_shards, seed * 41 + 3)\n"
    "        print(\n"
    "            f\"cache:{self.max_loaded_shards} batch_stride:{self.batch_shard_stride} \"\n"
    "        )\n";

static void test_direct_and_through_names(void **st) {
  (void)st;
  assert_int_equal(derived(rascal, "batch_stride"), 1);
  assert_int_equal(derived(rascal, "cache"), 0);  /* max_loaded_shards: not from the seed */
  assert_int_equal(derived(rascal, "stride"), 0); /* printed as batch_stride, not stride */
  assert_int_equal(derived(rascal, "batch"), 0);
  /* Through two names, and args.seed; a format spec after the name. */
  assert_int_equal(derived("salt = args.seed * 7\n"
                           "offset: int = salt % 13\n"
                           "print(f'offset:{offset:d}')\n",
                           "offset"),
                   1);
  /* A key that ends like another is not it. */
  assert_int_equal(derived("s = seed + 1\nprint(f'my_stride:{s}')\n", "stride"), 0);
}

static void test_not_from_the_seed(void **st) {
  (void)st;
  /* The attribute of an object built with the seed reads another name. */
  assert_int_equal(derived("h = Hyperparameters(seed=seed)\n"
                           "layers = h.num_layers\n"
                           "print(f'num_layers:{layers}')\n",
                           "num_layers"),
                   0);
  /* A keyword argument named seed passes another value. */
  assert_int_equal(derived("w = make(seed=3)\nprint(f'width:{w}')\n", "width"), 0);
  /* "seed" inside a string is text. */
  assert_int_equal(derived("w = int(os.environ.get('seed', 5))\nprint(f'width:{w}')\n", "width"),
                   0);
  /* A comparison is no assignment. */
  assert_int_equal(derived("w == seed\nprint(f'width:{w}')\n", "width"), 0);
  /* Not printed at all, or printed from an expression. */
  assert_int_equal(derived("w = seed\n", "width"), 0);
  assert_int_equal(derived("w = seed\nprint(f'width:{w + 1}')\n", "width"), 0);
  assert_int_equal(derived("", "width"), 0);
  assert_int_equal(derived(rascal, ""), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_direct_and_through_names),
      cmocka_unit_test(test_not_from_the_seed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
