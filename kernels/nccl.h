/* NCCL for the GPU path, opened at run time (dlopen of libnccl.so.2, or
 * PGOLF_NCCL_LIBRARY): no link dependency, so ./pgolf runs where NCCL is
 * absent and says so.
 *
 * pgolf lets NCCL move bytes only: the communicator offers an all-gather
 * of float32 (ncclAllGather) and nothing that adds, so the gradient of a
 * GPU run is combined by pgolf in rank order exactly as on the CPU
 * (trainer/grad_sum.h), and neither NCCL's algorithm, protocol, channel
 * count nor NVLS can change a bit. What NCCL is and how it is configured
 * still belongs in a run's record: nccl_describe gives its version and
 * every NCCL_* environment variable.
 *
 * The GPU trainer that will call nccl_comm_init / nccl_allgather_f32 is
 * not there yet (`pgolf train --device cuda` refuses); the communicator is
 * tested on a GPU machine (tests/test_nccl.c, ci/gpu-check.sh). */
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
/* recv (device, nranks * count floats) = every rank's send (device, count
 * floats) in rank order, on `stream` (a cudaStream_t; NULL: the default
 * stream); waits for it to finish. */
int nccl_allgather_f32(nccl_comm *c, const float *send, float *recv, size_t count, void *stream, pg_error *err);
void nccl_comm_free(nccl_comm *c);

#endif
