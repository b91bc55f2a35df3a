/* Writing the training log, line by line, in the official formats. */
#include "trainer/train_log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static int keep(train_log *L, const char *s, size_t n) {
  if (PG_GROW(L->text, L->cap, L->len + n + 1, 4096)) return -1;
  memcpy(L->text + L->len, s, n);
  L->len += n;
  L->text[L->len] = 0;
  return 0;
}

static void emit(train_log *L, const char *s, size_t n) {
  if (keep(L, s, n) != 0) L->failed = 1;
  if (L->f && (fwrite(s, 1, n, L->f) != n || fflush(L->f) != 0)) L->failed = 1;
  if (L->echo) {
    fwrite(s, 1, n, L->echo);
    fflush(L->echo);
  }
}

int train_log_open(train_log *L, const char *path, const char *prior, size_t prior_len, FILE *echo,
                   pg_error *err) {
  memset(L, 0, sizeof *L);
  if (path) {
    snprintf(L->path, sizeof L->path, "%s", path);
    if (!(L->f = fopen(path, "w"))) return pg_fail_errno(err, path, "cannot create the log");
  }
  if (prior_len) emit(L, prior, prior_len); /* not echoed: it was printed before */
  L->echo = echo;
  if (L->failed) {
    train_log_close(L, err);
    return pg_fail(err, path ? path : "", -1, "cannot write the log");
  }
  return 0;
}

int train_log_close(train_log *L, pg_error *err) {
  int bad = L->failed;
  if (L->f && fclose(L->f) != 0) bad = 1;
  free(L->text);
  char path[sizeof L->path];
  memcpy(path, L->path, sizeof path);
  memset(L, 0, sizeof *L);
  return bad ? pg_fail(err, path, -1, "writing the log failed") : 0;
}

void train_log_printf(train_log *L, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof buf - 2) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  emit(L, buf, (size_t)n);
}

/* A float as Python's repr prints it: the shortest digits that read back
 * to the same double, and integral values with ".0". */
static void py_float(double v, char *buf, size_t cap) {
  if (v == (double)(long long)v && v > -1e16 && v < 1e16) {
    snprintf(buf, cap, "%.1f", v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, cap, "%.*g", p, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* `  key: value`, values as Python prints them (strings unquoted, None,
 * floats in repr form). */
void train_log_hparams(train_log *L, const json_t *config) {
  const char *key;
  json_t *v;
  train_log_printf(L, "Hyperparameters:");
  json_object_foreach((json_t *)config, key, v) {
    if (json_is_string(v)) {
      train_log_printf(L, "  %s: %s", key, json_string_value(v));
    } else if (json_is_null(v)) {
      train_log_printf(L, "  %s: None", key);
    } else if (json_is_real(v)) {
      char num[40];
      py_float(json_real_value(v), num, sizeof num);
      train_log_printf(L, "  %s: %s", key, num);
    } else {
      char *s = json_dumps(v, JSON_ENCODE_ANY);
      if (s) train_log_printf(L, "  %s: %s", key, s);
      free(s);
    }
  }
}

void train_log_train_step(train_log *L, int64_t step, int64_t total, float loss, double train_ms) {
  train_log_printf(L, "step:%lld/%lld train_loss:%.4f train_time:%.0fms step_avg:%.2fms",
                   (long long)step, (long long)total, (double)loss, train_ms,
                   train_ms / (double)(step > 0 ? step : 1));
}

void train_log_val_step(train_log *L, int64_t step, int64_t total, double val_loss, double val_bpb,
                        double train_ms) {
  train_log_printf(L, "step:%lld/%lld val_loss:%.4f val_bpb:%.4f train_time:%.0fms step_avg:%.2fms",
                   (long long)step, (long long)total, val_loss, val_bpb, train_ms,
                   train_ms / (double)(step > 0 ? step : 1));
}

void train_log_sizes(train_log *L, uint64_t model_bytes, uint64_t payload_bytes, uint64_t raw_bytes,
                     uint64_t baseline_bytes, uint64_t code_bytes) {
  double ratio = (double)baseline_bytes / (double)(payload_bytes ? payload_bytes : 1);
  train_log_printf(L, "Serialized model int8+zlib: %llu bytes (payload:%llu raw:%llu payload_ratio:%.2fx)",
                   (unsigned long long)model_bytes, (unsigned long long)payload_bytes,
                   (unsigned long long)raw_bytes, ratio);
  train_log_printf(L, "Code size: %llu bytes", (unsigned long long)code_bytes);
  train_log_printf(L, "Total submission size int8+zlib: %llu bytes",
                   (unsigned long long)(model_bytes + code_bytes));
}

void train_log_final(train_log *L, double val_loss, double val_bpb, double eval_ms) {
  train_log_printf(L, "final_int8_zlib_roundtrip val_loss:%.4f val_bpb:%.4f eval_time:%.0fms", val_loss,
                   val_bpb, eval_ms);
  train_log_printf(L, "final_int8_zlib_roundtrip_exact val_loss:%.8f val_bpb:%.8f", val_loss, val_bpb);
}
