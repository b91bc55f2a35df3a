/* A stand-in for libnccl on ci/cuda-emu.sh's CPU stand-in of CUDA, loaded
 * through PGOLF_NCCL_LIBRARY: the entry points pgolf's kernels/nccl.c
 * opens, moving the same bytes over MPI (the stand-in's device memory is
 * host memory). It checks pgolf's use of NCCL (the bootstrap, the grouped
 * all-to-all, the all-gather, the counts and offsets, the ordering with
 * the stream it names), not NCCL. Several ranks need the MPI that pgolf
 * initialised under mpirun; one rank needs none.
 * An NCCL call is an operation of its stream: it reads and writes the
 * buffers after the work queued there before it. Here every call first
 * runs that work (cudaStreamSynchronize of the CUDA stand-in, ci/cuda_emu/
 * emu.cpp: a legal schedule, in which the call's own work then completes
 * at once), so a buffer made on another stream without an event is read
 * before it is made. The symbol is the executable's (linked -rdynamic):
 * without it the library does not load.
 *   cc -shared -fPIC $(pkg-config --cflags ompi-c) -o libnccl-standin.so \
 *      nccl_standin.c $(pkg-config --libs ompi-c) */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  OK = 0,
  UNHANDLED_CUDA = 1,
  SYSTEM_ERROR = 2,
  INTERNAL = 3,
  INVALID_ARGUMENT = 4,
  INVALID_USAGE = 5
};
enum { ID_BYTES = 128, TAG = 7201, MAX_PENDING = 256 };

typedef struct {
  char internal[ID_BYTES];
} ncclUniqueId;

/* The CUDA stand-in's (cudaError_t cudaStreamSynchronize(cudaStream_t)). */
extern int cudaStreamSynchronize(void *stream);

/* The work queued on stream before this call has run. */
static int after_stream(void *stream) {
  return cudaStreamSynchronize(stream) ? UNHANDLED_CUDA : OK;
}

typedef struct standin_comm {
  int nranks, rank;
  MPI_Comm mpi; /* a duplicate of MPI_COMM_WORLD; MPI_COMM_NULL for one rank */
} standin_comm;

/* The open group (ncclGroupStart .. ncclGroupEnd): MPI requests, and the
 * sends and receives to this rank itself, matched in order at the end. */
static int depth;
static MPI_Request pending[MAX_PENDING];
static int n_pending;
static struct {
  const void *src;
  void *dst;
  size_t bytes;
} self_send[MAX_PENDING], self_recv[MAX_PENDING];
static int n_self_send, n_self_recv;

/* ncclDataType_t sizes: int8, uint8, int32, uint32, int64, uint64, half,
 * float, double, bfloat16. */
static size_t type_bytes(int t) {
  static const size_t sz[10] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return t >= 0 && t < 10 ? sz[t] : 0;
}

int ncclGetVersion(int *v) { return *v = 0, OK; } /* "0.0.0": not an NCCL */

const char *ncclGetErrorString(int rc) {
  static const char *names[] = {"no error (stand-in)",         "unhandled cuda error (stand-in)",
                                "system error (stand-in)",     "internal error (stand-in)",
                                "invalid argument (stand-in)", "invalid usage (stand-in)"};
  return rc >= 0 && rc <= 5 ? names[rc] : "unknown (stand-in)";
}

int ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  snprintf(id->internal, sizeof id->internal, "pgolf-nccl-standin pid %ld t %ld", (long)getpid(),
           (long)time(NULL));
  return OK;
}

/* Every rank must pass the same id (pgolf hands process 0's to all): the
 * ids are gathered and compared, so a broken bootstrap fails here. */
int ncclCommInitRank(void **out, int nranks, ncclUniqueId id, int rank) {
  *out = NULL;
  standin_comm *c = calloc(1, sizeof *c);
  if (!c) return SYSTEM_ERROR;
  c->nranks = nranks, c->rank = rank, c->mpi = MPI_COMM_NULL;
  if (nranks > 1) {
    int init = 0, size = 0, me = -1;
    MPI_Initialized(&init);
    if (!init) return free(c), INVALID_USAGE;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (size != nranks || me != rank) return free(c), INVALID_ARGUMENT;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi) != MPI_SUCCESS) return free(c), SYSTEM_ERROR;
    char *all = malloc((size_t)nranks * ID_BYTES);
    if (!all) return free(c), SYSTEM_ERROR;
    MPI_Allgather(id.internal, ID_BYTES, MPI_BYTE, all, ID_BYTES, MPI_BYTE, c->mpi);
    int same = 1;
    for (int r = 0; r < nranks; r++)
      same &= memcmp(all + (size_t)r * ID_BYTES, id.internal, ID_BYTES) == 0;
    free(all);
    if (!same) {
      MPI_Comm_free(&c->mpi);
      free(c);
      return INVALID_ARGUMENT;
    }
  }
  *out = c;
  return OK;
}

int ncclCommDestroy(void *comm) {
  standin_comm *c = comm;
  if (c && c->mpi != MPI_COMM_NULL) MPI_Comm_free(&c->mpi);
  free(c);
  return OK;
}

int ncclCommGetAsyncError(void *comm, int *async) { return (void)comm, *async = OK, OK; }

int ncclAllGather(const void *send, void *recv, size_t count, int type, void *comm, void *stream) {
  standin_comm *c = comm;
  size_t bytes = count * type_bytes(type);
  if (!type_bytes(type) || bytes > INT_MAX) return INVALID_ARGUMENT;
  if (after_stream(stream) != OK) return UNHANDLED_CUDA;
  if (c->nranks == 1) {
    memmove(recv, send, bytes);
    return OK;
  }
  return MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, c->mpi) ==
                 MPI_SUCCESS
             ? OK
             : SYSTEM_ERROR;
}

/* Close the group: wait for its MPI transfers, copy the self-transfers. */
static int finish_group(void) {
  int rc = OK;
  if (n_pending && MPI_Waitall(n_pending, pending, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = SYSTEM_ERROR;
  if (n_self_send != n_self_recv) rc = INVALID_USAGE;
  for (int i = 0; rc == OK && i < n_self_send; i++) {
    if (self_send[i].bytes != self_recv[i].bytes)
      rc = INVALID_USAGE;
    else
      memmove(self_recv[i].dst, self_send[i].src, self_send[i].bytes);
  }
  n_pending = n_self_send = n_self_recv = 0;
  return rc;
}

int ncclGroupStart(void) { return depth++, OK; }

int ncclGroupEnd(void) {
  if (depth == 0) return INVALID_USAGE;
  return --depth == 0 ? finish_group() : OK;
}

/* One send or receive, after the work queued on its stream: to this rank
 * itself, kept for the group's end; otherwise a non-blocking MPI transfer
 * waited for there. Outside a group the call is a group of one. */
static int post(int is_send, const void *src, void *dst, size_t count, int type, int peer,
                standin_comm *c, void *stream) {
  size_t bytes = count * type_bytes(type);
  if (!type_bytes(type) || bytes > INT_MAX || peer < 0 || peer >= c->nranks)
    return INVALID_ARGUMENT;
  if (after_stream(stream) != OK) return UNHANDLED_CUDA;
  if (n_pending >= MAX_PENDING || n_self_send >= MAX_PENDING || n_self_recv >= MAX_PENDING)
    return INTERNAL;
  ncclGroupStart();
  int rc = OK;
  if (peer == c->rank && is_send) {
    self_send[n_self_send].src = src, self_send[n_self_send].bytes = bytes, n_self_send++;
  } else if (peer == c->rank) {
    self_recv[n_self_recv].dst = dst, self_recv[n_self_recv].bytes = bytes, n_self_recv++;
  } else {
    int m = is_send ? MPI_Isend(src, (int)bytes, MPI_BYTE, peer, TAG, c->mpi, &pending[n_pending])
                    : MPI_Irecv(dst, (int)bytes, MPI_BYTE, peer, TAG, c->mpi, &pending[n_pending]);
    if (m != MPI_SUCCESS)
      rc = SYSTEM_ERROR;
    else
      n_pending++;
  }
  int end = ncclGroupEnd();
  return rc != OK ? rc : end;
}

int ncclSend(const void *send, size_t count, int type, int peer, void *comm, void *stream) {
  return post(1, send, NULL, count, type, peer, comm, stream);
}

int ncclRecv(void *recv, size_t count, int type, int peer, void *comm, void *stream) {
  return post(0, NULL, recv, count, type, peer, comm, stream);
}
