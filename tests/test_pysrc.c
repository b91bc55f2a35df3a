/* The Python statement lexer: joining, splitting, normalizing, depth and
 * the enclosing header, string literals, and hostile input. */
#include "tests/test_util.h"

#include "verifier/pysrc.h"

static void lex(const char *text, py_src *s) {
  pg_error e;
  assert_int_equal(pysrc_parse(text, strlen(text), "t.py", s, &e), 0);
}

static void test_statements_and_normalizing(void **st) {
  (void)st;
  py_src s;
  lex("import os ,  sys # a comment\n"
      "\n"
      "x = ( 1 +\n"
      "      2 )  ;  y = 'a  b'\n"
      "z = 3 \\\n"
      "  + 4\n",
      &s);
  assert_int_equal(s.n, 4);
  assert_string_equal(s.v[0].text, "import os,sys");
  assert_int_equal(s.v[0].line, 1);
  assert_string_equal(s.v[1].text, "x=(1+2)");
  assert_int_equal(s.v[1].line, 3);
  assert_string_equal(s.v[2].text, "y='a  b'");
  assert_int_equal(s.v[2].line, 4);
  assert_string_equal(s.v[3].text, "z=3+4");
  assert_int_equal(s.v[3].line, 5);
  assert_string_equal(pysrc_keyword(&s.v[0]), "import");
  assert_string_equal(pysrc_keyword(&s.v[1]), "");
  pysrc_free(&s);
}

/* A call's trailing comma (black's, when it splits a call) and the
 * parentheses of `from m import (...)` are layout; a tuple's, a
 * subscript's and a literal's comma are kept. */
static void test_trailing_commas(void **st) {
  (void)st;
  py_src s;
  lex("def f(\n    a,\n    b,\n):\n"
      "    return g(a, b,)(c,)\n"
      "x = (1,)\n"
      "y = foo[1,]\n"
      "if (x,):\n"
      "    z = {1: 2,}\n"
      "print(\"a,)\",)\n"
      "s = h(\"(\", (x,),)\n"
      "t = not (x,)\n"
      "u = [f(x,) for x in (a,)]\n"
      "from m import (\n    a,\n    b as c,\n)\n"
      "from m import (a)\n",
      &s);
  const char *want[] = {"def f(a,b)",
                        "return g(a,b)(c)",
                        "x=(1,)",
                        "y=foo[1,]",
                        "if(x,)",
                        "z={1:2,}",
                        "print(\"a,)\")",
                        "s=h(\"(\",(x,))",
                        "t=not(x,)",
                        "u=[f(x)for x in(a,)]",
                        "from m import a,b as c",
                        "from m import a"};
  assert_int_equal(s.n, sizeof want / sizeof *want);
  for (size_t i = 0; i < s.n; i++) assert_string_equal(s.v[i].text, want[i]);
  pysrc_free(&s);
}

static void test_blocks_and_inline_bodies(void **st) {
  (void)st;
  py_src s;
  lex("class H:\n"
      "    a = 1\n"
      "   def f(self, x: int) -> int:\n" /* 3 spaces: the same depth as 4 */
      "        if x: from m import y; return y\n"
      "        lam = lambda q: q\n"
      "else_ = 2\n",
      &s);
  assert_int_equal(s.n, 8);
  assert_string_equal(s.v[0].text, "class H");
  assert_true(s.v[0].header);
  assert_int_equal(s.v[1].depth, 1);
  assert_int_equal(s.v[1].parent, 0);
  assert_string_equal(s.v[2].text, "def f(self,x:int)->int");
  assert_int_equal(s.v[2].depth, 1);
  assert_int_equal(s.v[2].parent, 0);
  assert_string_equal(s.v[3].text, "if x");
  assert_int_equal(s.v[3].parent, 2);
  assert_string_equal(s.v[4].text, "from m import y");
  assert_int_equal(s.v[4].parent, 3);
  assert_int_equal(s.v[4].depth, 3);
  assert_string_equal(s.v[5].text, "return y");
  assert_int_equal(s.v[5].parent, 3);
  assert_string_equal(s.v[6].text, "lam=lambda q:q");
  assert_int_equal(s.v[6].parent, 2);
  assert_string_equal(s.v[7].text, "else_=2");
  assert_int_equal(s.v[7].depth, 0);
  assert_int_equal(s.v[7].parent, -1);
  pysrc_free(&s);
}

static void test_strings_and_docstrings(void **st) {
  (void)st;
  py_src s;
  lex("\"\"\"Doc # not a comment\n"
      "second line\"\"\"\n"
      "p = r'a\\'b' + \"c#d\" + f'{x}'\n"
      "q = ('aa'\n"
      "     'bb')\n",
      &s);
  assert_int_equal(s.n, 3);
  assert_true(s.v[0].docstring);
  assert_int_equal(s.v[1].line, 3);
  assert_false(s.v[1].docstring);
  py_str x;
  size_t pos = 0;
  assert_true(pysrc_next_string(s.v[1].text, s.v[1].len, &pos, &x));
  assert_int_equal(x.len, 4);
  assert_memory_equal(x.body, "a\\'b", 4);
  assert_true(pysrc_next_string(s.v[1].text, s.v[1].len, &pos, &x));
  assert_memory_equal(x.body, "c#d", 3);
  assert_true(pysrc_next_string(s.v[1].text, s.v[1].len, &pos, &x));
  assert_memory_equal(x.body, "{x}", 3);
  assert_false(pysrc_next_string(s.v[1].text, s.v[1].len, &pos, &x));
  assert_string_equal(s.v[2].text, "q=('aa''bb')");
  pysrc_free(&s);
}

/* The shared readers of a statement's text: a dotted name, an
 * assignment's target and value, a copy without the string literals. */
static void test_names_assignments_blanks(void **st) {
  (void)st;
  size_t last;
  assert_int_equal(pysrc_dotted_name("self.b.c(x)", 11, &last), 8);
  assert_int_equal(last, 7);
  assert_int_equal(pysrc_dotted_name("x", 1, &last), 1);
  assert_int_equal(last, 0);
  assert_int_equal(pysrc_dotted_name("9x", 2, &last), 0);
  assert_int_equal(pysrc_dotted_name("a.", 2, &last), 0);
  assert_int_equal(pysrc_dotted_name("", 0, &last), 0);

  py_src s;
  lex("self.stride = f(seed)\n"
      "x: dict[str, int] = {}\n"
      "a == b\n"
      "a += 1\n"
      "a, b = 1, 2\n"
      "os.environ['X'] = '1'\n"
      "if x:\n"
      "    pass\n",
      &s);
  size_t len, value;
  assert_true(pysrc_assignment(&s.v[0], &len, &last, &value));
  assert_int_equal(len, 11);
  assert_int_equal(last, 5);
  assert_string_equal(s.v[0].text + value, "f(seed)");
  assert_true(pysrc_assignment(&s.v[1], &len, &last, &value));
  assert_int_equal(len, 1);
  assert_string_equal(s.v[1].text + value, "{}");
  for (size_t i = 2; i < s.n; i++) assert_false(pysrc_assignment(&s.v[i], &len, &last, &value));

  const char *t = "log0(f\"a {x}\", 'b', rb'c')";
  char *b = pysrc_blank_strings(t, strlen(t));
  assert_non_null(b);
  assert_string_equal(b, "log0(        ,    ,      )");
  free(b);
  pysrc_free(&s);
}

static void test_hostile_input(void **st) {
  (void)st;
  py_src s;
  lex("x = (\n'unterminated\n\"\"\"open triple\n", &s);
  assert_true(s.n >= 1);
  pysrc_free(&s);
  lex("", &s);
  assert_int_equal(s.n, 0);
  pysrc_free(&s);
  /* Nesting beyond the stack limit is clamped, not overflowed. */
  size_t depth = PYSRC_MAX_DEPTH + 50, cap = depth * (depth + 8) + 16, k = 0;
  char *deep = malloc(cap);
  for (size_t d = 0; d < depth; d++) {
    memset(deep + k, ' ', d);
    k += d;
    memcpy(deep + k, "if x:\n", 6);
    k += 6;
  }
  deep[k] = 0;
  lex(deep, &s);
  assert_int_equal(s.n, depth);
  assert_true(s.v[depth - 1].depth <= PYSRC_MAX_DEPTH);
  pysrc_free(&s);
  free(deep);
  pg_error e;
  assert_int_equal(pysrc_parse("x", (size_t)PYSRC_MAX_BYTES + 1, "big.py", &s, &e), -1);
  assert_non_null(strstr(e.msg, "over the limit"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_statements_and_normalizing),
      cmocka_unit_test(test_trailing_commas),
      cmocka_unit_test(test_blocks_and_inline_bodies),
      cmocka_unit_test(test_strings_and_docstrings),
      cmocka_unit_test(test_names_assignments_blanks),
      cmocka_unit_test(test_hostile_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
