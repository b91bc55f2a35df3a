/* NCCL for the GPU path, opened at run time (dlopen of libnccl.so.2, or
 * PGOLF_NCCL_LIBRARY): no link dependency, so ./pgolf runs where NCCL is
 * absent and says so.
 *
 * pgolf lets NCCL move bytes only: the communicator offers an all-to-all
 * (grouped ncclSend/ncclRecv) and an all-gather (ncclAllGather) of float32
 * and nothing that adds, so the gradient of a GPU run is combined by pgolf
 * in rank order exactly as on the CPU (trainer/grad_sum.h, kernels/
 * ordered_sum.h), and neither NCCL's algorithm, protocol, channel count
 * nor NVLS can change a bit. What NCCL is and how it is configured still
 * belongs in a run's record: nccl_describe gives its version and every
 * NCCL_* variable.
 *
 * The GPU trainer (trainer/train_cuda.c) uses it with one process per GPU;
 * the communicator is tested on a GPU machine (tests/test_cuda_nccl.c,
 * ci/gpu-check.sh) and, without one, against the MPI stand-in of ci/
 * cuda_emu/nccl_standin.c (PGOLF_NCCL_LIBRARY) on the CUDA stand-in. */
#ifndef PGOLF_NCCL_H
#define PGOLF_NCCL_H

#include <jansson.h>
#include <stddef.h>

#include "common/error.h"

#define NCCL_ID_BYTES 128 /* ncclUniqueId */

/* {"version": "2.28.9" | null, "library": PATH, "why": null | reason,
 *  "env": {"NCCL_...": value, ...}} (env sorted by name). */
json_t *nccl_describe(void);

/* The loaded library's version as "MAJOR.MINOR.PATCH" into buf; -1 (err)
 * when NCCL cannot be opened. */
int nccl_version(char *buf, size_t cap, pg_error *err);

typedef struct nccl_comm nccl_comm;

/* Process 0 makes the id (every process of the run must receive the same
 * bytes: trainer/comm.h moves them over MPI). */
int nccl_unique_id(unsigned char id[NCCL_ID_BYTES], pg_error *err);
/* This process's communicator: rank of nranks, on the current CUDA device. */
int nccl_comm_init(nccl_comm **out, const unsigned char id[NCCL_ID_BYTES], int nranks, int rank, pg_error *err);
/* The collectives below are queued on `stream` (a cudaStream_t; NULL: the
 * default stream) and return without waiting: nccl_wait waits, with a
 * deadline. Counts are in floats, buffers device memory. */

/* recv (nranks * count) = every rank's send (count) in rank order. */
int nccl_allgather_f32(nccl_comm *c, const float *send, float *recv, size_t count, void *stream, pg_error *err);
/* send[q*count .. +count) goes to rank q, recv[p*count .. +count) comes
 * from rank p (itself included): one group of ncclSend/ncclRecv. send and
 * recv must not overlap. */
int nccl_alltoall_f32(nccl_comm *c, const float *send, float *recv, size_t count, void *stream,
                      pg_error *err);
/* Wait until everything queued on stream is done; fails naming `what`
 * when NCCL reports an asynchronous error (a peer gone) or timeout_s
 * passes first, so a dead or hung process stops the run in bounded time. */
int nccl_wait(nccl_comm *c, void *stream, double timeout_s, const char *what, pg_error *err);
void nccl_comm_free(nccl_comm *c);

#endif
