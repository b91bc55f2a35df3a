/* What a replay ran on against what the run recorded
 * (predicate.environment.device, written by trainer/train_cuda.c; absent
 * for a CPU run). A GPU run's bits are a contract on the same GPU model
 * with the same cuBLASLt and the same algorithm per product: a replay that
 * runs anything else is told so here, one REPLAY_ENVIRONMENT warning per
 * difference, so that a chain that differs is explained rather than a
 * mystery. Warnings, because the replay's own comparison (the chain, the
 * artifact, the metric) decides; a difference here changes no verdict. */
#include <stdio.h>
#include <string.h>

#include "verifier/replay_run.h"

enum { MAX_PLAN_FINDINGS = 3 };

static const char *kind_of(const json_t *dev) {
  const char *k = json_string_value(json_object_get(dev, "kind"));
  return k ? k : "cpu";
}

static const char *text_of(const json_t *o, const char *key, char *buf, size_t cap) {
  const json_t *v = json_object_get(o, key);
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
  else snprintf(buf, cap, "(none)");
  return buf;
}

/* One scalar field of the device or of its cuBLASLt record. */
static void compare_field(const json_t *rec, const json_t *rep, const char *key, const char *what,
                          finding_list *f) {
  char a[64], b[64];
  const char *x = text_of(rec, key, a, sizeof a), *y = text_of(rep, key, b, sizeof b);
  if (strcmp(x, y))
    findings_add(f, "REPLAY_ENVIRONMENT", SEV_WARNING, NULL, 0, "%s: recorded %s, replay %s", what,
                 x, y);
}

/* A plan's key (kernels/matmul.h's plans): the product, its shape (with
 * its batch count when it is a batch of products), its types and its
 * operands' alignments (recorded since they choose the algorithm too; "?"
 * in an older record). */
static void plan_key(const json_t *p, char *buf, size_t cap) {
  const json_t *al = json_object_get(p, "align_bytes");
  char align[48] = "?";
  if (json_array_size(al) == 3)
    snprintf(align, sizeof align, "%lld/%lld/%lld",
             (long long)json_integer_value(json_array_get(al, 0)),
             (long long)json_integer_value(json_array_get(al, 1)),
             (long long)json_integer_value(json_array_get(al, 2)));
  const long long batch = json_integer_value(json_object_get(p, "batch"));
  char times[32] = "";
  if (batch > 1) snprintf(times, sizeof times, " x%lld", batch);
  snprintf(buf, cap, "%s n=%lld in=%lld out=%lld%s %s%s aligned %s",
           json_string_value(json_object_get(p, "op")) ? json_string_value(json_object_get(p, "op"))
                                                       : "?",
           (long long)json_integer_value(json_object_get(p, "n")),
           (long long)json_integer_value(json_object_get(p, "in")),
           (long long)json_integer_value(json_object_get(p, "out")), times,
           json_string_value(json_object_get(p, "dtype"))
               ? json_string_value(json_object_get(p, "dtype"))
               : "?",
           json_is_true(json_object_get(p, "accumulate")) ? " accumulate" : "", align);
}

static const json_t *find_plan(const json_t *plans, const char *key) {
  size_t i;
  const json_t *p;
  char k[256];
  json_array_foreach(plans, i, p) {
    plan_key(p, k, sizeof k);
    if (!strcmp(k, key)) return p;
  }
  return NULL;
}

/* Each product the replay ran against the recording's: another algorithm
 * (its first 16 hex digits shown) or a product the run never chose one
 * for. The first few are named, the rest counted. */
static void compare_plans(const json_t *rec, const json_t *rep, finding_list *f) {
  const json_t *rp = json_object_get(rec, "plans"), *pp = json_object_get(rep, "plans");
  size_t i, named = 0, more = 0;
  const json_t *p;
  json_array_foreach(pp, i, p) {
    char key[256];
    plan_key(p, key, sizeof key);
    const json_t *q = find_plan(rp, key);
    const char *a = q ? json_string_value(json_object_get(q, "algo")) : NULL;
    const char *b = json_string_value(json_object_get(p, "algo"));
    if (q && a && b && !strcmp(a, b)) continue;
    if (named == MAX_PLAN_FINDINGS) {
      more++;
      continue;
    }
    named++;
    if (!q)
      findings_add(f, "REPLAY_ENVIRONMENT", SEV_WARNING, NULL, 0,
                   "cuBLASLt plan %s: the run recorded no algorithm for it", key);
    else
      findings_add(f, "REPLAY_ENVIRONMENT", SEV_WARNING, NULL, 0,
                   "cuBLASLt plan %s: recorded algorithm %.16s..., replay %.16s...", key,
                   a ? a : "(none)", b ? b : "(none)");
  }
  if (more)
    findings_add(f, "REPLAY_ENVIRONMENT", SEV_WARNING, NULL, 0,
                 "cuBLASLt: %zu more plans differ from the recording", more);
}

int replay_compare_device(const json_t *rec, const json_t *rep, finding_list *f) {
  size_t before = f->n;
  const char *rk = kind_of(rec), *pk = kind_of(rep);
  if (strcmp(rk, pk)) {
    const char *rn = json_string_value(json_object_get(rec, "name"));
    const char *pn = json_string_value(json_object_get(rep, "name"));
    findings_add(f, "REPLAY_ENVIRONMENT", SEV_WARNING, NULL, 0,
                 "recorded on %s%s%s%s, replayed on %s%s%s%s: the loss chain's bits are the "
                 "contract only on the same device",
                 rk, rn ? " (" : "", rn ? rn : "", rn ? ")" : "", pk, pn ? " (" : "", pn ? pn : "",
                 pn ? ")" : "");
    return (int)(f->n - before);
  }
  if (strcmp(rk, "cuda")) return 0;
  compare_field(rec, rep, "name", "GPU", f);
  compare_field(rec, rep, "compute_capability", "compute capability", f);
  compare_field(rec, rep, "sm_count", "SM count", f);
  compare_field(rec, rep, "driver_version", "CUDA driver", f);
  compare_field(rec, rep, "runtime_version", "CUDA runtime", f);
  compare_field(rec, rep, "attention", "attention kernels", f);
  const json_t *rl = json_object_get(rec, "cublaslt"), *pl = json_object_get(rep, "cublaslt");
  compare_field(rl, pl, "cublaslt_version", "cuBLASLt version", f);
  compare_field(rl, pl, "workspace_bytes", "cuBLASLt workspace", f);
  compare_plans(rl, pl, f);
  return (int)(f->n - before);
}
