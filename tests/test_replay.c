/* Replay building blocks: the sandbox command line (what is bound, in what
 * order, which environment), line stamping across chunk boundaries, and
 * inotify file stamps. The sandbox itself runs in tests/e2e/replay.sh. */
#include "tests/test_util.h"

#include <math.h>
#include <sys/stat.h>

#include "verifier/replay_clock.h"
#include "verifier/sandbox.h"

/* Index of the first argument equal to a (from `from`), -1 if none. */
static int arg_at(const sandbox_argv *a, const char *s, int from) {
  for (int i = from; i < (int)a->n; i++)
    if (!strcmp(a->v[i], s)) return i;
  return -1;
}

/* The triple OPT SRC DST appears somewhere before `--`. */
static int has_triple(const sandbox_argv *a, const char *opt, const char *src, const char *dst) {
  int dash = arg_at(a, "--", 0);
  for (int i = 0; i + 2 < dash; i++)
    if (!strcmp(a->v[i], opt) && !strcmp(a->v[i + 1], src) && !strcmp(a->v[i + 2], dst)) return 1;
  return 0;
}

static void test_sandbox_argv(void **state) {
  (void)state;
  char *cmd[] = {"python3", "train_gpt.py", "--", NULL};
  sandbox_spec s = {.scratch = "/host/out/scratch", .data_dir = "/host/data",
                    .tokenizer = "/host/tok/fineweb_1024_bpe.model", .seed = "42",
                    .run_id = "r1", .cmd = cmd};
  s.ro_extra[s.n_ro_extra++] = "/opt/venv";
  sandbox_argv a;
  pg_error err;
  assert_int_equal(sandbox_build(&s, "/usr/bin/bwrap", &a, &err), 0);
  assert_string_equal(a.v[0], "/usr/bin/bwrap");
  assert_null(a.v[a.n]);
  assert_true(arg_at(&a, "--unshare-all", 0) > 0);
  assert_true(arg_at(&a, "--die-with-parent", 0) > 0);
  assert_int_equal(arg_at(&a, "--new-session", 0), -1); /* the replay's setsid instead */
  assert_int_equal(arg_at(&a, "--share-net", 0), -1);
  assert_true(has_triple(&a, "--ro-bind", "/usr", "/usr"));
  assert_true(has_triple(&a, "--ro-bind", "/host/data", SANDBOX_DATA));
  assert_true(has_triple(&a, "--ro-bind", "/host/tok/fineweb_1024_bpe.model",
                         "/tokenizer/fineweb_1024_bpe.model"));
  assert_true(has_triple(&a, "--ro-bind", "/opt/venv", "/opt/venv"));
  assert_true(has_triple(&a, "--bind", "/host/out/scratch", SANDBOX_WORK));
  /* The scratch copy is the only read-write bind. */
  int n_rw = 0;
  for (size_t i = 0; i < a.n; i++) n_rw += !strcmp(a.v[i], "--bind") || !strcmp(a.v[i], "--bind-try");
  assert_int_equal(n_rw, 1);
  /* The root is made read-only after every mount, before the command. */
  int ro = arg_at(&a, "--remount-ro", 0), dash = arg_at(&a, "--", 0);
  assert_true(ro > arg_at(&a, "--bind", 0) && ro > arg_at(&a, "--tmpfs", 0) && ro < dash);
  assert_string_equal(a.v[ro + 1], "/");
  /* Environment: cleared, then exactly these. */
  int clear = arg_at(&a, "--clearenv", 0);
  assert_true(clear > 0 && clear < dash);
  const char *want[] = {"PATH", "HOME", "SEED", "RUN_ID", "DATA_PATH", "TOKENIZER_PATH"};
  size_t n_env = 0;
  for (int i = arg_at(&a, "--setenv", 0); i >= 0 && i < dash; i = arg_at(&a, "--setenv", i + 1)) {
    assert_true(i > clear);
    assert_string_equal(a.v[i + 1], want[n_env]);
    n_env++;
  }
  assert_int_equal(n_env, 6);
  assert_true(has_triple(&a, "--setenv", "TOKENIZER_PATH", "/tokenizer/fineweb_1024_bpe.model"));
  assert_true(has_triple(&a, "--setenv", "HOME", SANDBOX_WORK));
  /* The command follows the first `--` unchanged, its own `--` included. */
  assert_string_equal(a.v[dash + 1], "python3");
  assert_string_equal(a.v[dash + 2], "train_gpt.py");
  assert_string_equal(a.v[dash + 3], "--");
  assert_int_equal((int)a.n, dash + 4);
  sandbox_argv_free(&a);
}

static void test_sandbox_argv_minimal(void **state) {
  (void)state;
  char *cmd[] = {"true", NULL};
  sandbox_spec s = {.scratch = "/s", .cmd = cmd};
  sandbox_argv a;
  pg_error err;
  assert_int_equal(sandbox_build(&s, "bwrap", &a, &err), 0);
  assert_int_equal(arg_at(&a, "DATA_PATH", 0), -1);
  assert_int_equal(arg_at(&a, "TOKENIZER_PATH", 0), -1);
  assert_int_equal(arg_at(&a, SANDBOX_DATA, 0), -1);
  sandbox_argv_free(&a);
  char *none[] = {NULL};
  s.cmd = none;
  assert_int_equal(sandbox_build(&s, "bwrap", &a, &err), -1);
}

/* GPUs in the sandbox, against a fake device folder: every node by
 * default; with --gpus 3 the control nodes and nvidia0..2 only, and
 * CUDA_VISIBLE_DEVICES=0,1,2; with no GPU, no node at all. */
static void test_sandbox_gpus(void **state) {
  (void)state;
  char *dev = test_tmpdir();
  const char *nodes[] = {"nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia10", "nvidiactl",
                         "nvidia-uvm", "nvidia-modeset"};
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dev, nodes[i]);
    test_write_file(p, "", 0);
  }
  char *cmd[] = {"true", NULL};
  sandbox_spec s = {.scratch = "/s", .cmd = cmd, .dev_root = dev};
  sandbox_argv a;
  pg_error err;
  char src[1024];
  assert_int_equal(sandbox_build(&s, "bwrap", &a, &err), 0);
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
    char dst[64];
    snprintf(src, sizeof src, "%s/%s", dev, nodes[i]);
    snprintf(dst, sizeof dst, "/dev/%s", nodes[i]);
    assert_true(has_triple(&a, "--dev-bind", src, dst));
  }
  assert_int_equal(arg_at(&a, "CUDA_VISIBLE_DEVICES", 0), -1);
  sandbox_argv_free(&a);

  s.gpus = 3;
  assert_int_equal(sandbox_build(&s, "bwrap", &a, &err), 0);
  int binds = 0;
  for (int i = arg_at(&a, "--dev-bind", 0); i >= 0; i = arg_at(&a, "--dev-bind", i + 1)) binds++;
  assert_int_equal(binds, 6); /* nvidia0-2, ctl, uvm, modeset */
  snprintf(src, sizeof src, "%s/nvidia3", dev);
  assert_int_equal(arg_at(&a, src, 0), -1);
  snprintf(src, sizeof src, "%s/nvidia10", dev);
  assert_int_equal(arg_at(&a, src, 0), -1);
  snprintf(src, sizeof src, "%s/nvidiactl", dev);
  assert_true(has_triple(&a, "--dev-bind", src, "/dev/nvidiactl"));
  assert_true(has_triple(&a, "--setenv", "CUDA_VISIBLE_DEVICES", "0,1,2"));
  sandbox_argv_free(&a);

  s.gpus = SANDBOX_NO_GPU;
  assert_int_equal(sandbox_build(&s, "bwrap", &a, &err), 0);
  assert_int_equal(arg_at(&a, "--dev-bind", 0), -1);
  sandbox_argv_free(&a);
  test_rmdir(dev);
}

static void test_stream_lines(void **state) {
  (void)state;
  replay_stream s;
  replay_stream_init(&s, 1 << 20);
  /* A line split across chunks is stamped when its newline arrives. */
  assert_int_equal(replay_stream_feed(&s, "step:1/2 tra", 12, 10.0), 0);
  assert_int_equal(s.n_lines, 0);
  assert_int_equal(replay_stream_feed(&s, "in_loss:1\nstep:2", 16, 20.0), 0);
  assert_int_equal(s.n_lines, 1);
  assert_int_equal(replay_stream_feed(&s, "\n\n", 2, 30.0), 0);
  assert_int_equal(replay_stream_feed(&s, "tail", 4, 40.0), 0);
  assert_int_equal(replay_stream_finish(&s, 50.0), 0);
  assert_int_equal(s.n_lines, 4);
  assert_true(replay_stream_line_ms(&s, 1) == 20.0);
  assert_true(replay_stream_line_ms(&s, 2) == 30.0);
  assert_true(replay_stream_line_ms(&s, 3) == 30.0);
  assert_true(replay_stream_line_ms(&s, 4) == 50.0);
  assert_true(isnan(replay_stream_line_ms(&s, 0)));
  assert_true(isnan(replay_stream_line_ms(&s, 5)));
  assert_string_equal(s.text, "step:1/2 train_loss:1\nstep:2\n\ntail");
  replay_stream_free(&s);
}

static void test_stream_bound(void **state) {
  (void)state;
  replay_stream s;
  replay_stream_init(&s, 8);
  assert_int_equal(replay_stream_feed(&s, "abc\ndefgh\nij\n", 13, 1.0), 0);
  assert_int_equal(s.len, 8);
  assert_int_equal(s.dropped, 5);
  assert_int_equal(s.n_lines, 1); /* the newline after "defgh" was dropped */
  replay_stream_free(&s);
}

static void test_watch_files(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  replay_watch w;
  pg_error err;
  assert_int_equal(replay_watch_open(&w, dir, &err), 0);
  char p[1024];
  snprintf(p, sizeof p, "%s/a.ptz", dir);
  test_write_file(p, "xyz", 3);
  assert_true(replay_watch_drain(&w, 5.0) > 0);
  snprintf(p, sizeof p, "%s/logs", dir);
  assert_int_equal(mkdir(p, 0755), 0);
  replay_watch_drain(&w, 6.0);
  snprintf(p, sizeof p, "%s/logs/r.txt", dir);
  test_write_file(p, "x\n", 2);
  replay_watch_drain(&w, 7.0);
  const replay_file_event *a = replay_watch_find(&w, "a.ptz");
  assert_non_null(a);
  assert_true(a->created_ms == 5.0 && a->written_ms == 5.0);
  const replay_file_event *l = replay_watch_find(&w, "logs/r.txt");
  assert_non_null(l);
  assert_true(l->created_ms == 7.0);
  assert_null(replay_watch_find(&w, "logs"));
  assert_int_equal(w.overflowed, 0);
  replay_watch_close(&w);
  test_rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sandbox_argv), cmocka_unit_test(test_sandbox_argv_minimal),
      cmocka_unit_test(test_sandbox_gpus),
      cmocka_unit_test(test_stream_lines), cmocka_unit_test(test_stream_bound),
      cmocka_unit_test(test_watch_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
