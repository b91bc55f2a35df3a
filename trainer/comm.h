/* The processes of one training run and the bytes they exchange.
 *
 * pgolf is built with MPI when libopenmpi-dev is there (PGOLF_HAVE_MPI),
 * but initialises it only when mpirun started more than one process
 * (OMPI_COMM_WORLD_SIZE in the environment, above 1): a plain `pgolf
 * train`, and `mpirun -np 1 pgolf train`, is one process and never
 * touches MPI. The library only moves bytes here (an
 * all-to-all, an all-gather, point-to-point words): no MPI reduction ever
 * adds a float, so the arithmetic, and with it every bit, stays pgolf's
 * (trainer/grad_sum.h).
 *
 * Every wait is non-blocking with a deadline (comm.timeout_s, the
 * --comm-timeout option): a process that died or hangs stops the others
 * within a bounded time instead of blocking them forever. Before each
 * gradient exchange every process sends the step it reached to process 0
 * (comm_heartbeat), so process 0 can name the one that did not arrive; the
 * others name process 0 when its answer does not come within twice the
 * timeout (process 0 names a missing process after one). */
#ifndef PGOLF_COMM_H
#define PGOLF_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "kernels/nccl.h"

#define COMM_DEFAULT_TIMEOUT_S 60.0

typedef struct comm {
  int size, rank;   /* processes and this one's index; 1, 0 without mpirun */
  int local_rank, local_size; /* the same among the processes on this node (a GPU run's device) */
  int mpi;          /* MPI is initialised (and must be finalised) */
  double timeout_s; /* how long a wait may last before naming who is missing */
  char library[256]; /* the MPI library's version string, "" without MPI */
  double wait_ms;   /* time spent in exchanges so far (communication share) */
} comm;

/* One process (no MPI) when not started by mpirun or started alone; MPI
 * otherwise (an error when this build has no MPI). */
int comm_init(comm *c, double timeout_s, pg_error *err);
/* Wait (without a deadline) until every process is here, then finalise
 * MPI. A no-op for one process. */
void comm_finalize(comm *c);
/* Stop every process of the run (MPI_Abort) with this exit code; for one
 * process, exit. */
_Noreturn void comm_abort(comm *c, int code);

/* Process 0 collects every process's `step` and answers each with `word`
 * (process 0's value; the others receive it in *word). A process that does
 * not arrive within the timeout is named in err ("process 3 (ranks 6-7)
 * did not reach step 5 within 60 s"); ranks_per_process names its ranks. */
int comm_heartbeat(comm *c, uint64_t step, uint32_t *word, int ranks_per_process, pg_error *err);

/* All-to-all of float32 shards: send[sdispl[q] .. + scount[q]) goes to
 * process q, recv[rdispl[p] .. + rcount[p]) comes from process p. Counts
 * in floats. */
int comm_alltoallv_f32(comm *c, const float *send, const int *scount, const int *sdispl, float *recv,
                       const int *rcount, const int *rdispl, pg_error *err);
/* All-gather of float32 slices: process p's send (count[p] floats) lands at
 * recv + displ[p] everywhere. */
int comm_allgatherv_f32(comm *c, const float *send, float *recv, const int *count, const int *displ,
                        pg_error *err);
/* All-gather of n bytes per process: recv holds size * n bytes, process p's
 * at p * n. */
int comm_allgather_bytes(comm *c, const void *send, size_t n, void *recv, pg_error *err);

/* The NCCL communicator of these processes (one GPU each, the current
 * CUDA device): process 0 makes the unique id, every process receives it
 * over MPI (an all-gather of process 0's bytes), then each joins as its
 * rank. */
int comm_nccl_open(comm *c, nccl_comm **out, pg_error *err);

/* Test hooks, for the fault tests only (tests/e2e/train_mpi.sh):
 * PGOLF_TEST_DIE=P:S makes process P exit (status 3) when it reaches the
 * exchange of step S, PGOLF_TEST_HANG=P:S makes it sleep there forever.
 * Called at each heartbeat; documented as test-only in README. */
void comm_test_hooks(const comm *c, uint64_t step);

#endif
