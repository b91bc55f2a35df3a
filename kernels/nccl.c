/* NCCL, opened at run time (see nccl.h). */
#include "kernels/nccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

extern char **environ;

enum { NCCL_FLOAT32 = 7 }; /* ncclFloat32 in nccl.h's ncclDataType_t */

typedef struct { char internal[NCCL_ID_BYTES]; } nccl_id;

typedef struct nccl_lib {
  void *so;
  const char *path;
  int (*get_version)(int *);
  const char *(*error_string)(int);
  int (*get_unique_id)(nccl_id *);
  int (*comm_init_rank)(void **, int, nccl_id, int);
  int (*all_gather)(const void *, void *, size_t, int, void *, void *);
  int (*send)(const void *, size_t, int, int, void *, void *);
  int (*recv)(void *, size_t, int, int, void *, void *);
  int (*group_start)(void);
  int (*group_end)(void);
  int (*async_error)(void *, int *); /* ncclCommGetAsyncError */
  int (*comm_destroy)(void *);
  const char *(*last_error)(void *); /* ncclGetLastError, 2.13 and later; may be NULL */
} nccl_lib;

struct nccl_comm {
  const nccl_lib *lib;
  void *comm;
  int nranks, rank;
};

static void sym(void *so, const char *name, void *slot) {
  void *f = dlsym(so, name);
  memcpy(slot, &f, sizeof f);
}

/* Open and bind the library into *l (not yet published). */
static int lib_load(nccl_lib *l, pg_error *err) {
  memset(l, 0, sizeof *l);
  l->path = getenv("PGOLF_NCCL_LIBRARY");
  if (!l->path || !*l->path) l->path = "libnccl.so.2";
  if (!(l->so = dlopen(l->path, RTLD_NOW | RTLD_LOCAL)))
    return pg_fail(err, l->path, -1, "NCCL not available: %s", dlerror());
  sym(l->so, "ncclGetVersion", &l->get_version);
  sym(l->so, "ncclGetErrorString", &l->error_string);
  sym(l->so, "ncclGetUniqueId", &l->get_unique_id);
  sym(l->so, "ncclCommInitRank", &l->comm_init_rank);
  sym(l->so, "ncclAllGather", &l->all_gather);
  sym(l->so, "ncclSend", &l->send);
  sym(l->so, "ncclRecv", &l->recv);
  sym(l->so, "ncclGroupStart", &l->group_start);
  sym(l->so, "ncclGroupEnd", &l->group_end);
  sym(l->so, "ncclCommGetAsyncError", &l->async_error);
  sym(l->so, "ncclCommDestroy", &l->comm_destroy);
  sym(l->so, "ncclGetLastError", &l->last_error);
  if (!l->get_version || !l->get_unique_id || !l->comm_init_rank || !l->all_gather || !l->send ||
      !l->recv || !l->group_start || !l->group_end || !l->async_error || !l->comm_destroy) {
    dlclose(l->so);
    l->so = NULL;
    return pg_fail(
        err, l->path, -1,
        "not an NCCL library of 2.7 or later (ncclGetVersion/ncclAllGather/ncclSend/... missing)");
  }
  return 0;
}

/* The process's one NCCL, opened at first use and never closed: NCCL keeps
 * threads of its own (ncclGetUniqueId starts the bootstrap root that the
 * ranks connect to, each communicator a proxy thread), and unloading the
 * library under them, or running its destructors while the CUDA runtime
 * is in use, is not something it supports. (On an H200, with a dlopen
 * and dlclose per call, ncclCommInitRank failed after ncclGetUniqueId and
 * the CUDA runtime then said "driver shutting down".) A failed open is
 * not remembered, so a later call tries again. */
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static nccl_lib lib_once;
static int lib_ready;

static int lib_open(const nccl_lib **out, pg_error *err) {
  pthread_mutex_lock(&lib_lock);
  int rc = lib_ready ? 0 : lib_load(&lib_once, err);
  if (rc == 0) lib_ready = 1;
  pthread_mutex_unlock(&lib_lock);
  *out = rc == 0 ? &lib_once : NULL;
  return rc;
}

/* NCCL's code, its name for it, and its own last message (the reason, such
 * as a bootstrap that found no socket interface) where it keeps one. */
static int nccl_fail(const nccl_lib *l, void *comm, int rc, const char *what, pg_error *err) {
  const char *last = l->last_error ? l->last_error(comm) : NULL;
  return pg_fail(err, "", -1, "%s: NCCL error %d (%s)%s%s", what, rc,
                 l->error_string ? l->error_string(rc) : "?", last && *last ? ": " : "",
                 last && *last ? last : "");
}

/* NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after. */
static void version_text(int code, char *buf, size_t cap) {
  if (code >= 10000) snprintf(buf, cap, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
  else snprintf(buf, cap, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

int nccl_version(char *buf, size_t cap, pg_error *err) {
  const nccl_lib *l;
  if (lib_open(&l, err) != 0) return -1;
  int code = 0, rc = l->get_version(&code);
  if (rc != 0) return nccl_fail(l, NULL, rc, "ncclGetVersion", err);
  version_text(code, buf, cap);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every NCCL_* variable (they choose algorithms, protocols, channels, NVLS,
 * transports): sorted, so two runs' records compare. */
static json_t *nccl_env(void) {
  size_t n = 0;
  for (char **e = environ; e && *e; e++) n += strncmp(*e, "NCCL_", 5) == 0;
  char **v = calloc(n + 1, sizeof *v);
  json_t *o = json_object();
  if (!v || !o) {
    free(v);
    json_decref(o);
    return json_null();
  }
  n = 0;
  for (char **e = environ; e && *e; e++)
    if (strncmp(*e, "NCCL_", 5) == 0) v[n++] = *e;
  qsort(v, n, sizeof *v, by_name);
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(v[i], '=');
    if (!eq) continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - v[i]), v[i]);
    json_t *s = json_string(eq + 1);
    if (s) json_object_set_new(o, name, s); /* a value that is not UTF-8 is left out */
  }
  free(v);
  return o;
}

json_t *nccl_describe(void) {
  char ver[32];
  pg_error err;
  int ok = nccl_version(ver, sizeof ver, &err) == 0;
  const char *path = getenv("PGOLF_NCCL_LIBRARY");
  if (ok) path = lib_once.path; /* the one this process opened (nccl_version did, or before) */
  return json_pack("{s:o, s:s, s:o, s:o}", "version", ok ? json_string(ver) : json_null(), "library",
                   path && *path ? path : "libnccl.so.2", "why", ok ? json_null() : json_string(err.msg), "env",
                   nccl_env());
}

int nccl_unique_id(unsigned char id[NCCL_ID_BYTES], pg_error *err) {
  const nccl_lib *l;
  if (lib_open(&l, err) != 0) return -1;
  nccl_id u;
  int rc = l->get_unique_id(&u);
  if (rc != 0) return nccl_fail(l, NULL, rc, "ncclGetUniqueId", err);
  memcpy(id, u.internal, NCCL_ID_BYTES);
  return 0;
}

int nccl_comm_init(nccl_comm **out, const unsigned char id[NCCL_ID_BYTES], int nranks, int rank, pg_error *err) {
  *out = NULL;
  nccl_comm *c = calloc(1, sizeof *c);
  if (!c) return pg_fail(err, "", -1, "out of memory");
  if (lib_open(&c->lib, err) != 0) {
    free(c);
    return -1;
  }
  nccl_id u;
  memcpy(u.internal, id, NCCL_ID_BYTES);
  int rc = c->lib->comm_init_rank(&c->comm, nranks, u, rank);
  if (rc != 0) {
    nccl_fail(c->lib, NULL, rc, "ncclCommInitRank", err);
    free(c);
    return -1;
  }
  c->nranks = nranks;
  c->rank = rank;
  *out = c;
  return 0;
}

int nccl_allgather_f32(nccl_comm *c, const float *send, float *recv, size_t count, void *stream, pg_error *err) {
  int rc = c->lib->all_gather(send, recv, count, NCCL_FLOAT32, c->comm, stream);
  return rc == 0 ? 0 : nccl_fail(c->lib, c->comm, rc, "ncclAllGather", err);
}

/* Every send and receive in one group, so NCCL runs them together (no
 * rank waits on a peer's send that is queued behind its own). */
int nccl_alltoall_f32(nccl_comm *c, const float *send, float *recv, size_t count, void *stream,
                      pg_error *err) {
  int rc = c->lib->group_start();
  if (rc != 0) return nccl_fail(c->lib, c->comm, rc, "ncclGroupStart", err);
  int first = 0;
  const char *what = "ncclSend";
  for (int q = 0; q < c->nranks && first == 0; q++) {
    first = c->lib->send(send + (size_t)q * count, count, NCCL_FLOAT32, q, c->comm, stream);
    if (first == 0) {
      first = c->lib->recv(recv + (size_t)q * count, count, NCCL_FLOAT32, q, c->comm, stream);
      if (first != 0) what = "ncclRecv";
    }
  }
  rc = c->lib->group_end(); /* closes the group even after a failed call */
  if (first != 0) return nccl_fail(c->lib, c->comm, first, what, err);
  return rc == 0 ? 0 : nccl_fail(c->lib, c->comm, rc, "ncclGroupEnd", err);
}

#ifdef PGOLF_HAVE_CUDA
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
#endif

int nccl_wait(nccl_comm *c, void *stream, double timeout_s, const char *what, pg_error *err) {
#ifdef PGOLF_HAVE_CUDA
  double t0 = now_s();
  for (;;) {
    cudaError_t ce = cudaStreamQuery((cudaStream_t)stream);
    if (ce == cudaSuccess) return 0;
    if (ce != cudaErrorNotReady)
      return pg_fail(err, "", -1, "%s: %s", what, cudaGetErrorString(ce));
    int async = 0, rc = c->lib->async_error(c->comm, &async);
    if (rc != 0 || async != 0) return nccl_fail(c->lib, c->comm, rc != 0 ? rc : async, what, err);
    if (now_s() - t0 > timeout_s)
      return pg_fail(err, "", -1, "%s did not complete within %g s (a process stopped or hangs)",
                     what, timeout_s);
    struct timespec ts = {0, 100000}; /* 0.1 ms between polls */
    nanosleep(&ts, NULL);
  }
#else
  (void)c, (void)stream, (void)timeout_s;
  return pg_fail(err, "", -1, "%s: this pgolf was built without CUDA", what);
#endif
}

void nccl_comm_free(nccl_comm *c) {
  if (!c) return;
  if (c->comm) c->lib->comm_destroy(c->comm);
  free(c);
}
