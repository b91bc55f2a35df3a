/* The byte-table builders as verifier/byte_luts.c reads them: the
 * official builder, the shapes real submissions shipped (the GDN-Hybrid
 * line's space in the base bytes, a test for the space that never holds),
 * the forms it must read (one-line bodies, aliases, lstrip, replace) and
 * the ones it must leave unknown rather than guess. */
#include "tests/test_util.h"

#include "verifier/byte_luts.h"

/* The official train_gpt.py's builder and evaluation, cut to what the
 * reader sees. */
static const char *official =
    "import numpy as np\n"
    "def build_sentencepiece_luts(sp, vocab_size, device):\n"
    "    sp_vocab_size = int(sp.vocab_size())\n"
    "    table_size = max(sp_vocab_size, vocab_size)\n"
    "    base_bytes_np = np.zeros((table_size,), dtype=np.int16)\n"
    "    has_leading_space_np = np.zeros((table_size,), dtype=np.bool_)\n"
    "    is_boundary_token_np = np.ones((table_size,), dtype=np.bool_)\n"
    "    for token_id in range(sp_vocab_size):\n"
    "        if sp.is_control(token_id) or sp.is_unknown(token_id) or sp.is_unused(token_id):\n"
    "            continue\n"
    "        is_boundary_token_np[token_id] = False\n"
    "        if sp.is_byte(token_id):\n"
    "            base_bytes_np[token_id] = 1\n"
    "            continue\n"
    "        piece = sp.id_to_piece(token_id)\n"
    "        if piece.startswith(\"\xe2\x96\x81\"):\n"
    "            has_leading_space_np[token_id] = True\n"
    "            piece = piece[1:]\n"
    "        base_bytes_np[token_id] = len(piece.encode(\"utf-8\"))\n"
    "    return (\n"
    "        torch.tensor(base_bytes_np, dtype=torch.int16, device=device),\n"
    "        torch.tensor(has_leading_space_np, dtype=torch.bool, device=device),\n"
    "        torch.tensor(is_boundary_token_np, dtype=torch.bool, device=device),\n"
    "    )\n"
    "def eval_val(base_bytes_lut, has_leading_space_lut, is_boundary_token_lut, x, y):\n"
    "    token_bytes = base_bytes_lut[y].to(dtype=torch.int16)\n"
    "    token_bytes += (has_leading_space_lut[y] & "
    "~is_boundary_token_lut[x]).to(dtype=torch.int16)\n"
    "    return token_bytes\n"
    "base_bytes_lut, has_leading_space_lut, is_boundary_token_lut = build_sentencepiece_luts(\n"
    "    sp, args.vocab_size, device)\n";

/* PR #1545's builder (GDN-Hybrid), whose evaluation adds the space too. */
static const char *gdn =
    "def build_sentencepiece_luts(sp, vocab_size, device):\n"
    "    base_bytes = torch.zeros(vocab_size, dtype=torch.float32, device=device)\n"
    "    has_space = torch.zeros(vocab_size, dtype=torch.bool, device=device)\n"
    "    is_boundary = torch.zeros(vocab_size, dtype=torch.bool, device=device)\n"
    "    for i in range(vocab_size):\n"
    "        piece = sp.id_to_piece(i)\n"
    "        raw = piece.encode(\"utf-8\")\n"
    "        base_bytes[i] = len(raw)\n"
    "        if piece.startswith(\"\\u2581\"):\n"
    "            has_space[i] = True\n"
    "            base_bytes[i] = len(piece[1:].encode(\"utf-8\")) + 1   # +1 is the space byte\n"
    "        if sp.is_control(i) or sp.is_unknown(i):\n"
    "            is_boundary[i] = True\n"
    "    return base_bytes, has_space, is_boundary\n"
    "\n"
    "def eval_val(base_bytes_lut, has_leading_space_lut, is_boundary_token_lut):\n"
    "    tb = base_bytes_lut[tgt].to(torch.float64)\n"
    "    tb += (has_leading_space_lut[tgt] & ~is_boundary_token_lut[prev]).to(torch.float64)\n"
    "base_bytes_lut, has_leading_space_lut, is_boundary_token_lut = build_sentencepiece_luts(\n"
    "    sp, args.vocab_size, device)\n";

typedef struct scanned {
  py_src src;
  byte_luts luts;
} scanned;

static void scan(const char *text, scanned *s) {
  pg_error err;
  OK(pysrc_parse(text, strlen(text), "t.py", &s->src, &err), err);
  byte_luts_scan(&s->src, &s->luts);
}

static void expect_bases(const byte_lut_fn *fn, int64_t plain, int64_t space, int64_t byte,
                         int64_t control, int64_t unknown) {
  int64_t want[BL_KINDS] = {plain, space, byte, control, unknown};
  for (int k = 0; k < BL_KINDS; k++)
    if (fn->base[k] != want[k])
      fail_msg("%s: kind %s: %lld, expected %lld", fn->name, byte_luts_kind_text[k],
               (long long)fn->base[k], (long long)want[k]);
}

/* The space names and the statement that adds them, in one source. */
static long added(scanned *s, const byte_lut_fn *fn) {
  char names[8][BL_MAX_NAME];
  size_t n = byte_luts_space_names(&s->src, fn, names, 0, 8);
  return byte_luts_space_added(&s->src, names, n, fn);
}

static void test_official(void **st) {
  (void)st;
  scanned s;
  scan(official, &s);
  assert_int_equal(s.luts.n, 1);
  const byte_lut_fn *fn = &s.luts.fn[0];
  assert_string_equal(fn->name, "build_sentencepiece_luts");
  assert_string_equal(fn->base_table, "base_bytes_np");
  assert_string_equal(fn->space_table, "has_leading_space_np");
  assert_int_equal(fn->line, 2);
  assert_int_equal(fn->space_pos, 1);
  expect_bases(fn, 3, 3, 1, 0, 0);
  assert_int_equal(fn->base_line[BL_SPACE], 19);
  assert_int_equal(fn->base_line[BL_BYTE], 13);
  assert_int_equal(fn->base_line[BL_CONTROL], 0); /* the zeros it started with */
  char names[8][BL_MAX_NAME];
  size_t n = byte_luts_space_names(&s.src, fn, names, 0, 8);
  assert_int_equal(n, 2);
  assert_string_equal(names[0], "has_leading_space_np");
  assert_string_equal(names[1], "has_leading_space_lut");
  long j = byte_luts_space_added(&s.src, names, n, fn);
  assert_true(j >= 0);
  assert_int_equal(s.src.v[j].line, 27);
  pysrc_free(&s.src);
}

static void test_gdn_space_twice(void **st) {
  (void)st;
  scanned s;
  scan(gdn, &s);
  assert_int_equal(s.luts.n, 1);
  const byte_lut_fn *fn = &s.luts.fn[0];
  assert_string_equal(fn->base_table, "base_bytes");
  assert_string_equal(fn->space_table, "has_space");
  /* `<0x41>`, `<s>` and `<unk>` are counted as their text. */
  expect_bases(fn, 3, 4, 6, 3, 5);
  assert_int_equal(fn->base_line[BL_SPACE], 11);
  assert_non_null(strstr(fn->base_stmt[BL_SPACE], "+1"));
  long j = added(&s, fn);
  assert_true(j >= 0);
  assert_int_equal(s.src.v[j].line, 18);
  pysrc_free(&s.src);
}

/* A test for the space that never holds: a plain space, mojibake, or a
 * str literal of the UTF-8 bytes (three Latin-1 characters in Python 3). */
static void test_space_never_seen(void **st) {
  (void)st;
  static const char *tests[] = {"\" \"",       "\"?\"",          "\"\\xe2\\x96\\x81\"",
                                "\"\\u2581\"", "'\xe2\x96\x81'", "b\"\\xe2\\x96\\x81\".decode()"};
  static const int64_t want[] = {6, 6, 6, 3, 3, 3};
  for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
    char text[4096];
    const char *at = strstr(official, "startswith(") + strlen("startswith(");
    const char *end = strchr(at, ')');
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - official), official, tests[i], end);
    scanned s;
    scan(text, &s);
    assert_int_equal(s.luts.n, 1);
    if (s.luts.fn[0].base[BL_SPACE] != want[i])
      fail_msg("startswith(%s): %lld", tests[i], (long long)s.luts.fn[0].base[BL_SPACE]);
    /* Nothing is marked, so no space table is found. */
    assert_true((want[i] == 6) == (s.luts.fn[0].space_table[0] == 0));
    assert_int_equal(s.luts.fn[0].test_line, 16);
    pysrc_free(&s.src);
  }
}

/* Forms the reader must follow: one-line bodies, an alias of a table, a
 * list table, lstrip and replace, PascalCase SentencePiece calls, a
 * conditional expression, elif/else. */
static void test_forms(void **st) {
  (void)st;
  static const struct {
    const char *text;
    int64_t plain, space, byte, control, unknown;
  } c[] = {
      {"def build_sentencepiece_luts(sp,vocab_size,device):\n"
       "\tsp_vocab_size=int(sp.vocab_size());table_size=max(sp_vocab_size,vocab_size);"
       "base_bytes_np=np.zeros((table_size,),dtype=np.int16);has_leading_space_np=np.zeros("
       "(table_size,),dtype=np.bool_);is_boundary_token_np=np.ones((table_size,),dtype=np.bool_)\n"
       "\tfor token_id in range(sp_vocab_size):\n"
       "\t\tif sp.is_control(token_id)or sp.is_unknown(token_id)or "
       "sp.is_unused(token_id):continue\n"
       "\t\tis_boundary_token_np[token_id]=False\n"
       "\t\tif sp.is_byte(token_id):base_bytes_np[token_id]=1;continue\n"
       "\t\tpiece=sp.id_to_piece(token_id)\n"
       "\t\tif "
       "piece.startswith('\xe2\x96\x81'):has_leading_space_np[token_id]=True;piece=piece[1:]\n"
       "\t\tbase_bytes_np[token_id]=len(piece.encode('utf-8'))\n"
       "\treturn torch.tensor(base_bytes_np),torch.tensor(has_leading_space_np),"
       "torch.tensor(is_boundary_token_np)\n",
       3, 3, 1, 0, 0},
      {"def luts(sp, V):\n"
       "    base = [0] * V\n"
       "    space = [False] * V\n"
       "    lut = base\n"
       "    for t in range(V):\n"
       "        if sp.IsControl(t) or sp.IsUnknown(t):\n"
       "            continue\n"
       "        elif sp.IsByte(t):\n"
       "            lut[t] = 1\n"
       "        else:\n"
       "            p = sp.IdToPiece(t)\n"
       "            space[t] = p[0] == '\xe2\x96\x81'\n"
       "            lut[t] = len(p.lstrip('\xe2\x96\x81').encode())\n"
       "    return base, space\n",
       3, 3, 1, 0, 0},
      {"def luts(sp, V):\n"
       "    base = np.full(V, 0)\n"
       "    for t in range(V):\n"
       "        p = sp.id_to_piece(t)\n"
       "        base[t] = 1 if sp.is_byte(t) else (0 if sp.is_control(t) or sp.is_unknown(t) "
       "else len(p.replace('\xe2\x96\x81', ' ').encode('utf-8')))\n"
       "    return base\n",
       3, 4, 1, 0, 0},
      /* PR #1661's minified builder: builtins and module constants renamed */
      {"import numpy as O\nM=range\nQ=len\nE=int\nG=False\nF=True\nn='utf-8'\n"
       "def B0(sp,vocab_size,device):\n"
       "\tH=device;C=sp;K=E(C.vocab_size());I=R(K,vocab_size);J=O.zeros((I,),dtype=O.int16);"
       "L=O.zeros((I,),dtype=O.bool_);N=O.ones((I,),dtype=O.bool_)\n"
       "\tfor B in M(K):\n"
       "\t\tif C.is_control(B)or C.is_unknown(B)or C.is_unused(B):continue\n"
       "\t\tN[B]=G\n"
       "\t\tif C.is_byte(B):J[B]=1;continue\n"
       "\t\tD=C.id_to_piece(B)\n"
       "\t\tif D.startswith('\xe2\x96\x81'):L[B]=F;D=D[1:]\n"
       "\t\tJ[B]=Q(D.encode(n))\n"
       "\treturn A.tensor(J),A.tensor(L),A.tensor(N)\n",
       3, 3, 1, 0, 0},
      /* the token cast to int before it is asked for (PR #522) */
      {"def luts(tokenizer, V):\n"
       "    base = np.zeros(V)\n"
       "    for tid in range(V):\n"
       "        if tokenizer.is_control(int(tid)) or tokenizer.is_unknown(int(tid)): continue\n"
       "        if tokenizer.is_byte(int(tid)): base[tid] = 1; continue\n"
       "        piece = tokenizer.id_to_piece(int(tid))\n"
       "        base[tid] = len(piece.replace('\xe2\x96\x81', '').encode())\n"
       "    return base\n",
       3, 3, 1, 0, 0},
      /* tuple assignments, chr(0x2581), max(), a check that raises, and a
       * loop after the token loop that touches no table */
      {"def luts(sp, V):\n"
       "    bb, hs = np.zeros(V), np.zeros(V)\n"
       "    if sp.vocab_size() != V:\n"
       "        raise ValueError('size')\n"
       "    SPACE = chr(0x2581)\n"
       "    for i in range(V):\n"
       "        if sp.is_control(i) or sp.is_unknown(i): continue\n"
       "        if sp.is_byte(i): bb[i] = 1; continue\n"
       "        p = sp.id_to_piece(i)\n"
       "        if p.startswith(SPACE): hs[i], p = True, p[1:]\n"
       "        bb[i] = max(0, len(p.encode('utf-8')))\n"
       "    for name in names:\n"
       "        log(name)\n"
       "    return bb, hs\n",
       3, 3, 1, 0, 0},
  };
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    scanned s;
    scan(c[i].text, &s);
    if (s.luts.n != 1) fail_msg("case %zu: %zu builders", i, s.luts.n);
    expect_bases(&s.luts.fn[0], c[i].plain, c[i].space, c[i].byte, c[i].control, c[i].unknown);
    pysrc_free(&s.src);
  }
}

/* What the reader cannot evaluate stays unknown: no builder, or the
 * kinds it could not run. */
static void test_unknown_is_not_guessed(void **st) {
  (void)st;
  /* A comprehension and a loop over pieces: no token loop. */
  static const char *none[] = {
      "def luts(sp, V):\n"
      "    pieces = [sp.id_to_piece(i) for i in range(V)]\n"
      "    base = np.zeros(V)\n"
      "    for i, p in enumerate(pieces):\n"
      "        base[i] = len(p.encode())\n"
      "    return base\n",
      /* a condition on something it does not know */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    for i in range(V):\n"
      "        p = sp.id_to_piece(i)\n"
      "        if i in SPECIAL:\n"
      "            continue\n"
      "        base[i] = len(p.encode())\n"
      "    return base\n",
      /* a factor it does not know */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    for i in range(V):\n"
      "        base[i] = len(sp.id_to_piece(i).encode()) * scale\n"
      "    return base\n",
      /* a while loop */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    i = 0\n"
      "    while i < V:\n"
      "        base[i] = len(sp.id_to_piece(i).encode())\n"
      "        i += 1\n"
      "    return base\n",
      /* a later loop stores into the table by other indices */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    for i in range(V):\n"
      "        base[i] = len(sp.id_to_piece(i).encode())\n"
      "    for j in SPECIAL:\n"
      "        base[j] = 0\n"
      "    return base\n",
      /* a check whose body does more than raise */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    if FLAG:\n"
      "        base = np.ones(V)\n"
      "    for i in range(V):\n"
      "        base[i] = len(sp.id_to_piece(i).encode())\n"
      "    return base\n",
      /* stored at an index that is not the token */
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    for i in range(V):\n"
      "        base[i + 1] = len(sp.id_to_piece(i).encode())\n"
      "    return base\n",
  };
  for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
    scanned s;
    scan(none[i], &s);
    if (s.luts.n != 0) fail_msg("case %zu: a builder was read", i);
    pysrc_free(&s.src);
  }
  /* The byte branch asks something unknown: that kind alone is unknown. */
  scanned s;
  scan(
      "def luts(sp, V):\n"
      "    base = np.zeros(V)\n"
      "    for i in range(V):\n"
      "        if sp.is_byte(i):\n"
      "            base[i] = BYTE_WIDTH\n"
      "            continue\n"
      "        p = sp.id_to_piece(i)\n"
      "        base[i] = len(p.encode())\n"
      "    return base\n",
      &s);
  assert_int_equal(s.luts.n, 1);
  expect_bases(&s.luts.fn[0], 3, 6, BL_UNSET, 3, 5);
  pysrc_free(&s.src);
}

/* A statement that indexes the space table without adding, or the
 * builder's own lines, is not the evaluation adding the space. */
static void test_space_added_needs_an_addition(void **st) {
  (void)st;
  char text[4096];
  const char *at = strstr(gdn, "    tb += (");
  snprintf(text, sizeof text,
           "%.*s    mask = has_leading_space_lut[tgt] & ~is_boundary_token_lut[prev]\n"
           "    label = \"has_leading_space_lut[tgt] + 1\"\n%s",
           (int)(at - gdn), gdn, strstr(at, "base_bytes_lut, has"));
  scanned s;
  scan(text, &s);
  assert_int_equal(s.luts.n, 1);
  assert_int_equal(added(&s, &s.luts.fn[0]), -1);
  pysrc_free(&s.src);
  /* Renamed at the call: the caller's name is the one added. */
  snprintf(text, sizeof text,
           "%s    n += sp_mask[tgt].sum()\nbb, sp_mask, bd = build_sentencepiece_luts(sp)\n", gdn);
  scan(text, &s);
  char names[8][BL_MAX_NAME];
  size_t n = byte_luts_space_names(&s.src, &s.luts.fn[0], names, 0, 8);
  assert_int_equal(n, 3);
  assert_string_equal(names[2], "sp_mask");
  pysrc_free(&s.src);
}

/* Bits per byte from a constant ratio (PR #875's 3.5, PR #1254's named
 * 3.67), and the forms that are not: the official computation, an
 * estimate, log(2.0)'s own literal. */
static void test_constant_ratio(void **st) {
  (void)st;
  static const struct {
    const char *text;
    double bpt; /* 0: none */
    uint32_t line;
  } c[] = {
      {"val_loss = t_loss / n\nval_bpb = val_loss / (math.log(2) * 3.5)\n", 3.5, 2},
      {"BYTES_PER_TOKEN = 3.67  # measured\ndef f(avg_loss):\n"
       "    bpb = (avg_loss / math.log(2)) * (1.0 / BYTES_PER_TOKEN)\n    return bpb\n",
       3.67, 3},
      {"raw_bpb = raw_val_loss / math.log(2.0) * 0.4\n", 2.5, 1},
      {"bits_per_token = val_loss.item() / math.log(2)\n"
       "tokens_per_byte = val_token_count.item() / val_byte_count.item()\n"
       "val_bpb = float(bits_per_token * tokens_per_byte)\n",
       0, 0},
      {"est_comp_bpb = vm['val_loss'] / (math.log(2) * 2.44)\n", 0, 0},
      {"val_bpb = nats / math.log(2.0) / total_bytes\n", 0, 0},
      {"scale = 3.5\nval_bpb = val_loss / math.log(2) / scale\n", 0, 0}, /* not a byte/token name */
  };
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    scanned s;
    scan(c[i].text, &s);
    double bpt = 0;
    long j = byte_luts_constant_ratio(&s.src, &bpt);
    if (!c[i].bpt) {
      if (j >= 0) fail_msg("case %zu: a constant ratio at line %u", i, s.src.v[j].line);
    } else {
      if (j < 0) fail_msg("case %zu: none found", i);
      assert_int_equal(s.src.v[j].line, c[i].line);
      assert_true(bpt > c[i].bpt - 1e-9 && bpt < c[i].bpt + 1e-9);
    }
    pysrc_free(&s.src);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_official),
      cmocka_unit_test(test_gdn_space_twice),
      cmocka_unit_test(test_space_never_seen),
      cmocka_unit_test(test_forms),
      cmocka_unit_test(test_unknown_is_not_guessed),
      cmocka_unit_test(test_space_added_needs_an_addition),
      cmocka_unit_test(test_constant_ratio),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
