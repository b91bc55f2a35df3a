/* The processes of one run (see comm.h). Everything MPI is in this file. */
#include "trainer/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PGOLF_HAVE_MPI
#include <mpi.h>
#endif

enum { TAG_HEARTBEAT = 7101, TAG_ANSWER = 7102 };

int comm_init(comm *c, double timeout_s, pg_error *err) {
  memset(c, 0, sizeof *c);
  c->size = c->local_size = 1;
  c->timeout_s = timeout_s;
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  /* A world of one process has no bytes to exchange, so `mpirun -np 1`
   * runs as a plain process and never starts MPI. That also keeps it clear
   * of a known Open MPI/PMIx fault: the PMIx progress thread of a
   * one-process job rarely dereferences a stale event range and kills the
   * process (open-mpi/ompi#10117, openpmix/openpmix#2508); our CI met it
   * in `mpirun -np 1` under ASan. */
  if (!world || strcmp(world, "1") == 0) return 0;
#ifndef PGOLF_HAVE_MPI
  return pg_fail(err, "", -1, "started by mpirun, but this pgolf was built without MPI "
                              "(install libopenmpi-dev and rebuild)");
#else
  int provided = 0, len = 0;
  /* OpenMP threads compute; only the main thread calls MPI. */
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return pg_fail(err, "", -1, "MPI_Init_thread failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  /* The processes that share this node's memory are the ones sharing its
   * GPUs: a GPU run takes its device by its place among them. */
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) !=
      MPI_SUCCESS)
    return pg_fail(err, "", -1, "MPI_Comm_split_type failed");
  MPI_Comm_size(node, &c->local_size);
  MPI_Comm_rank(node, &c->local_rank);
  MPI_Comm_free(&node);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Get_library_version(lib, &len);
  lib[strcspn(lib, ",\n")] = 0; /* "Open MPI v4.1.4" */
  snprintf(c->library, sizeof c->library, "%s", lib);
  c->mpi = 1;
  return 0;
#endif
}

#ifdef PGOLF_HAVE_MPI
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "process 3 (ranks 6-7)" / "process 3 (rank 3)" into buf. */
static const char *process_name(int p, int per, char *buf, size_t cap) {
  if (per <= 1) snprintf(buf, cap, "process %d (rank %d)", p, p);
  else snprintf(buf, cap, "process %d (ranks %d-%d)", p, p * per, p * per + per - 1);
  return buf;
}

static void pause_briefly(void) {
  struct timespec ts = {0, 100000}; /* 0.1 ms: polling must not eat the cores the others compute on */
  nanosleep(&ts, NULL);
}

/* Poll n requests until all complete or the deadline passes (timeout_s < 0:
 * no deadline). Returns 1 done, 0 timed out, -1 an MPI error (in err). */
static int wait_requests(comm *c, int n, MPI_Request *r, double timeout_s, pg_error *err) {
  double t0 = now_s();
  for (int spins = 0;; spins++) {
    int flag = 0;
    if (MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return pg_fail(err, "", -1, "MPI: a request failed");
    if (flag) break;
    if (timeout_s >= 0 && now_s() - t0 > timeout_s) return 0;
    if (spins > 64) pause_briefly();
  }
  c->wait_ms += (now_s() - t0) * 1e3;
  return 1;
}

static int wait_or_fail(comm *c, int n, MPI_Request *r, const char *what, pg_error *err) {
  int w = wait_requests(c, n, r, c->timeout_s, err);
  if (w == 0) return pg_fail(err, "", -1, "%s did not complete within %g s", what, c->timeout_s);
  return w < 0 ? -1 : 0;
}

/* Process 0's side: every other process's step, then the answer. */
static int heartbeat_root(comm *c, uint64_t step, uint32_t word, int per, pg_error *err) {
  int n = c->size - 1, rc = -1;
  uint64_t *got = calloc((size_t)n, sizeof *got), answer[2] = {step, word};
  MPI_Request *rq = calloc((size_t)n, sizeof *rq);
  if (!got || !rq) {
    pg_fail(err, "", -1, "out of memory");
    goto out;
  }
  for (int p = 1; p <= n; p++) MPI_Irecv(&got[p - 1], 1, MPI_UINT64_T, p, TAG_HEARTBEAT, MPI_COMM_WORLD, &rq[p - 1]);
  int w = wait_requests(c, n, rq, c->timeout_s, err);
  if (w < 0) goto out;
  char name[64];
  for (int p = 1; p <= n; p++) {
    int flag = 1;
    if (w == 0) MPI_Test(&rq[p - 1], &flag, MPI_STATUS_IGNORE);
    if (!flag) {
      pg_fail(err, "", -1, "%s did not reach the exchange of step %llu within %g s",
              process_name(p, per, name, sizeof name), (unsigned long long)step + 1, c->timeout_s);
      goto out;
    }
    if (got[p - 1] != step) {
      pg_fail(err, "", -1, "%s is at step %llu, process 0 at step %llu", process_name(p, per, name, sizeof name),
              (unsigned long long)got[p - 1] + 1, (unsigned long long)step + 1);
      goto out;
    }
  }
  for (int p = 1; p <= n; p++) MPI_Isend(answer, 2, MPI_UINT64_T, p, TAG_ANSWER, MPI_COMM_WORLD, &rq[p - 1]);
  rc = wait_or_fail(c, n, rq, "sending process 0's answer", err);
out:
  free(got);
  free(rq);
  return rc;
}

/* Another process's side: its step to process 0, process 0's answer back,
 * waiting twice the timeout so that process 0, which waits once, names a
 * missing process first. */
static int heartbeat_other(comm *c, uint64_t step, uint32_t *word, int per, pg_error *err) {
  uint64_t answer[2] = {0, 0};
  MPI_Request rq[2];
  MPI_Isend(&step, 1, MPI_UINT64_T, 0, TAG_HEARTBEAT, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(answer, 2, MPI_UINT64_T, 0, TAG_ANSWER, MPI_COMM_WORLD, &rq[1]);
  int w = wait_requests(c, 2, rq, 2 * c->timeout_s, err);
  char name[64];
  if (w == 0)
    return pg_fail(err, "", -1, "%s did not answer at the exchange of step %llu within %g s",
                   process_name(0, per, name, sizeof name), (unsigned long long)step + 1, 2 * c->timeout_s);
  if (w < 0) return -1;
  if (answer[0] != step)
    return pg_fail(err, "", -1, "process 0 is at step %llu, process %d at step %llu",
                   (unsigned long long)answer[0] + 1, c->rank, (unsigned long long)step + 1);
  *word = (uint32_t)answer[1];
  return 0;
}
#endif

int comm_heartbeat(comm *c, uint64_t step, uint32_t *word, int ranks_per_process, pg_error *err) {
  comm_test_hooks(c, step);
  if (c->size == 1) return 0;
#ifdef PGOLF_HAVE_MPI
  return c->rank == 0 ? heartbeat_root(c, step, *word, ranks_per_process, err)
                      : heartbeat_other(c, step, word, ranks_per_process, err);
#else
  (void)word;
  (void)ranks_per_process;
  return pg_fail(err, "", -1, "no MPI in this build");
#endif
}

int comm_alltoallv_f32(comm *c, const float *send, const int *scount, const int *sdispl, float *recv,
                       const int *rcount, const int *rdispl, pg_error *err) {
#ifdef PGOLF_HAVE_MPI
  MPI_Request rq;
  if (MPI_Ialltoallv(send, scount, sdispl, MPI_FLOAT, recv, rcount, rdispl, MPI_FLOAT, MPI_COMM_WORLD, &rq) !=
      MPI_SUCCESS)
    return pg_fail(err, "", -1, "MPI_Ialltoallv failed");
  return wait_or_fail(c, 1, &rq, "the gradient all-to-all", err);
#else
  (void)c, (void)send, (void)scount, (void)sdispl, (void)recv, (void)rcount, (void)rdispl;
  return pg_fail(err, "", -1, "no MPI in this build");
#endif
}

int comm_allgatherv_f32(comm *c, const float *send, float *recv, const int *count, const int *displ,
                        pg_error *err) {
#ifdef PGOLF_HAVE_MPI
  MPI_Request rq;
  if (MPI_Iallgatherv(send, count[c->rank], MPI_FLOAT, recv, count, displ, MPI_FLOAT, MPI_COMM_WORLD, &rq) !=
      MPI_SUCCESS)
    return pg_fail(err, "", -1, "MPI_Iallgatherv failed");
  return wait_or_fail(c, 1, &rq, "the gradient all-gather", err);
#else
  (void)c, (void)send, (void)recv, (void)count, (void)displ;
  return pg_fail(err, "", -1, "no MPI in this build");
#endif
}

int comm_allgather_bytes(comm *c, const void *send, size_t n, void *recv, pg_error *err) {
  if (c->size == 1) {
    memmove(recv, send, n);
    return 0;
  }
#ifdef PGOLF_HAVE_MPI
  MPI_Request rq;
  if (n > (size_t)2147483647 ||
      MPI_Iallgather(send, (int)n, MPI_BYTE, recv, (int)n, MPI_BYTE, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
    return pg_fail(err, "", -1, "MPI_Iallgather failed");
  return wait_or_fail(c, 1, &rq, "an all-gather", err);
#else
  return pg_fail(err, "", -1, "no MPI in this build");
#endif
}

int comm_nccl_open(comm *c, nccl_comm **out, pg_error *err) {
  unsigned char id[NCCL_ID_BYTES] = {0};
  unsigned char *all = malloc((size_t)c->size * NCCL_ID_BYTES);
  if (!all) return pg_fail(err, "", -1, "out of memory");
  int rc = c->rank == 0 ? nccl_unique_id(id, err) : 0;
  /* Every process takes part in the gather even when process 0 failed, so
   * none waits for it; process 0 then reports its own error. */
  if (comm_allgather_bytes(c, id, NCCL_ID_BYTES, all, err) != 0) rc = -1;
  if (rc == 0) rc = nccl_comm_init(out, all, c->size, c->rank, err);
  free(all);
  return rc;
}

void comm_finalize(comm *c) {
#ifdef PGOLF_HAVE_MPI
  if (!c->mpi) return;
  /* Process 0 may still be exporting and evaluating: wait for it without
   * a deadline, sleeping rather than spinning on its cores. */
  MPI_Request rq;
  pg_error ignore;
  if (MPI_Ibarrier(MPI_COMM_WORLD, &rq) == MPI_SUCCESS) wait_requests(c, 1, &rq, -1.0, &ignore);
  MPI_Finalize();
  c->mpi = 0;
#else
  (void)c;
#endif
}

_Noreturn void comm_abort(comm *c, int code) {
  fflush(stdout);
  fflush(stderr);
#ifdef PGOLF_HAVE_MPI
  if (c->mpi) MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)c;
#endif
  _exit(code);
}

/* "P:S" from the environment variable, or 0. */
static int hook_at(const char *var, const comm *c, uint64_t step) {
  const char *v = getenv(var);
  int p;
  unsigned long long s;
  if (!v || sscanf(v, "%d:%llu", &p, &s) != 2) return 0;
  return p == c->rank && s == step + 1;
}

void comm_test_hooks(const comm *c, uint64_t step) {
  if (hook_at("PGOLF_TEST_DIE", c, step)) {
    fprintf(stderr, "pgolf: train: process %d exits at step %llu (PGOLF_TEST_DIE, a test hook)\n", c->rank,
            (unsigned long long)step + 1);
    _exit(3);
  }
  if (hook_at("PGOLF_TEST_HANG", c, step)) {
    fprintf(stderr, "pgolf: train: process %d hangs at step %llu (PGOLF_TEST_HANG, a test hook)\n", c->rank,
            (unsigned long long)step + 1);
    for (;;) sleep(1000);
  }
}
