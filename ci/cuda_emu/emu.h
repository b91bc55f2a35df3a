/* A CPU stand-in for the CUDA execution model, enough to run pgolf's
 * kernels and GPU tests on a machine without a GPU (ci/cuda-emu.sh).
 * Force-included before a kernels/<op>.cu compiled as plain C++:
 *   - blocks run one after another; the threads of a block are
 *     coroutines on the calling thread (ci/cuda_emu/grid.cpp), a warp at a
 *     time in order (or the reverse, below), each lane until it finishes
 *     or reaches a barrier, the warp until its lanes wait at
 *     __syncthreads:
 *     __syncthreads waits for every thread of the block, __ballot_sync for
 *     the 32 threads of a warp; a barrier that a GPU would hang on (a
 *     thread finished while others wait, a warp split between the two)
 *     is reported and aborts;
 *   - __shared__ becomes static (one block runs at a time), filled with
 *     0x7f bytes (3.4e38 as a float; 0xff, NaNs, in reverse order) when a
 *     block's first thread declares it, as a GPU's shared memory starts as
 *     garbage (launches.py adds the call);
 *   - races in shared and global memory are reported, whatever the data
 *     (grid.cpp): between warps with no __syncthreads between, between
 *     lanes of a warp with no __syncwarp either, and (global memory)
 *     between blocks of one launch, for the kernels' plain loads and
 *     stores (the kernels are built with gcc's -fsanitize=thread
 *     instrumentation, grid.cpp its hooks; CUDA_EMU_PLAIN=shared leaves
 *     global memory out, =off both) and for cp.async and ldmatrix;
 *   - device memory is host memory.
 * It checks the kernels' logic: indices, the reduction orders, barriers,
 * aliasing. It cannot check nvcc's code generation: the arithmetic here is
 * gcc's, which the PGOLF_HD code makes the same by construction.
 *
 * Streams are modelled adversarially (emu.cpp), so that a missing event or
 * synchronisation gives wrong bits or a reported race instead of passing:
 *   - every stream (the legacy default stream 0 / cudaStreamLegacy,
 *     cudaStreamPerThread, and each created one) is a FIFO of deferred
 *     operations: launches, cudaMemcpyAsync, cudaMemsetAsync, event
 *     records and waits. Nothing runs when it is queued; work runs when
 *     the host forces it (cudaStreamSynchronize/Query, cudaEventSynchronize
 *     /Query, cudaDeviceSynchronize, cudaFree/cudaFreeHost, the
 *     synchronous copies that the runtime documents as host-synchronous)
 *     or when a forced operation waits for it;
 *   - a stream created without cudaStreamNonBlocking (and the per-thread
 *     stream) waits for the legacy stream's earlier work and the legacy
 *     stream waits for theirs; a non-blocking stream is ordered with the
 *     legacy stream only by events and host synchronisation;
 *   - cudaMemset and a device-to-device cudaMemcpy are queued on the legacy
 *     stream and not waited for (asynchronous to the host, as documented);
 *     a host-to-device cudaMemcpy from pageable memory returns once the
 *     source is staged, its copy still queued;
 *   - a copy from pageable host memory stages the source when it is
 *     queued; from pinned memory (cudaMallocHost, cudaHostAlloc) it reads
 *     the source when it runs, so a host write made before the copy ran
 *     is what the device gets; copies to the host write when they run;
 *   - a launch's arguments are evaluated and copied when it is queued
 *     (as CUDA copies them), its shape checked against the hardware's
 *     limits and the kernel's __launch_bounds__: a refused launch records
 *     cudaErrorInvalidValue (a grid too large, as the real runtime does),
 *     cudaErrorInvalidConfiguration (a bad block, an empty grid) or
 *     cudaErrorLaunchOutOfResources (past the bounds) for cudaGetLastError
 *     and queues nothing;
 *   - cudaMalloc and cudaMallocHost memory starts as 0xff bytes (float
 *     NaNs), as a GPU's starts as garbage;
 *   - a race check: each queued operation carries a vector clock (its
 *     stream's order, the events it waits for, the host's synchronisations
 *     before it was queued), and each access of an allocation (a launch's
 *     pointer arguments: written unless pointer-to-const; a copy's or a
 *     set's ranges) is compared with the allocation's last write and the
 *     reads since: two accesses, one a write, that no event or
 *     synchronisation orders are reported, whatever the schedule. At the
 *     granularity of allocations; host loads and stores are not seen.
 * The environment chooses when queued work runs:
 *   CUDA_EMU_SCHEDULE=lazy      (default) as late as the program allows:
 *                               only when forced;
 *   CUDA_EMU_SCHEDULE=eager     every operation runs when it is queued
 *                               (the stand-in's old behaviour: it hides
 *                               ordering bugs);
 *   CUDA_EMU_SCHEDULE=random:N  at each runtime call, a random prefix of
 *                               each of some random streams' queues runs
 *                               (seeded by N; dependencies first), and a
 *                               query may answer cudaErrorNotReady.
 *   CUDA_EMU_RACES=abort        (default) a race is printed and aborts;
 *   CUDA_EMU_RACES=warn         printed and counted (emu_races());
 *   CUDA_EMU_RACES=off          not checked.
 *   CUDA_EMU_ORDER=reverse      blocks and threads run last first, so a
 *                               missing barrier between two threads (or
 *                               blocks) shows in one order or the other
 *                               (grid.cpp); default forward.
 *   CUDA_EMU_MMA=wide           the tensor-core product's other adder
 *                               (emu_mma_bf16_m16n8k16, below);
 *   CUDA_EMU_CONTEXT=ucontext   the threads' switch is swapcontext, not
 *                               grid.cpp's assembly (x86-64's default;
 *                               elsewhere, or under a shadow stack,
 *                               swapcontext anyway).
 *   CUDA_EMU_TALLY=path         each operation queued counted by name,
 *                               written to path at exit (emu.cpp). */
#ifndef PGOLF_CUDA_EMU_H
#define PGOLF_CUDA_EMU_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#undef __global__
#undef __device__
#undef __shared__
#undef __launch_bounds__
#undef __forceinline__
#define __global__
#define __device__
#define __shared__ static
#define __launch_bounds__(...)
#define __forceinline__ inline

/* The calling thread's place in the launch. */
struct emu_place {
  uint3 thread, block;
  dim3 block_dim, grid_dim;
};
extern thread_local emu_place emu_here;
#define threadIdx (emu_here.thread)
#define blockIdx (emu_here.block)
#define blockDim (emu_here.block_dim)
#define gridDim (emu_here.grid_dim)

void emu_syncthreads();
unsigned emu_ballot(int pred);
void emu_syncwarp(void);
#define __syncthreads() emu_syncthreads()
#define __ballot_sync(mask, pred) emu_ballot(pred)
#define __syncwarp(...) emu_syncwarp()
#define __popc(x) __builtin_popcount(x)

/* __shfl_sync(mask, v, src) and __shfl_down_sync(mask, v, delta) over a
 * whole warp (a mask other than 0xffffffff is reported: pgolf's kernels
 * shuffle with every lane): each lane leaves v in the warp's slot, meets
 * the others at a ballot (which also reports a lane that finished or
 * waits elsewhere), then reads lane src's value (down: lane + delta's,
 * its own past lane 31), as the hardware's width-32 shuffle (grid.cpp). */
unsigned emu_shfl(unsigned v, unsigned mask, int k, int down);
static inline float emu_shfl_float(float v, unsigned mask, int k, int down) {
  unsigned u;
  memcpy(&u, &v, sizeof u);
  u = emu_shfl(u, mask, k, down);
  memcpy(&v, &u, sizeof v);
  return v;
}
static inline float __shfl_sync(unsigned mask, float v, int src) {
  return emu_shfl_float(v, mask, src, 0);
}
static inline float __shfl_down_sync(unsigned mask, float v, unsigned delta) {
  return emu_shfl_float(v, mask, (int)delta, 1);
}

/* Kernel code that must differ on the stand-in (an instruction written in
 * PTX, which g++ cannot run) tests this. */
#define PGOLF_CUDA_EMU 1

/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 with C = D: d += a b
 * over the warp, each lane passing its fragments in the PTX ISA's layout
 * for that shape (grid.cpp). Its arithmetic is the stand-in's, not the
 * tensor core's: each element of d adds its 16 products one fmaf at a
 * time, k ascending (the bf16 products are exact in float32), which is
 * the CPU's order for a sum taken 16 terms at a time. A tensor core adds
 * them another way, so on a GPU the result is only close to this.
 * CUDA_EMU_MMA=wide is another adder (the products and the accumulator
 * summed in double, truncated to float), for the tests of the tolerance a GPU
 * is held to; CUDA_EMU_MMA=fmaf (the default) is the chain above. */
void emu_mma_bf16_m16n8k16(float d[4], const unsigned a[4], const unsigned b[2]);

/* A __shared__ array of the running block, at its declaration (launches.py
 * adds the call): the block's first thread to get there fills it (0x7f
 * bytes, or 0xff in reverse order), so nothing is read that the block did
 * not write; name is how the stand-in's reports call it (grid.cpp). */
void emu_shared_fresh(void *p, size_t bytes, const char *name);

/* ldmatrix.sync.aligned.m8n8.x{num}.shared.b16 (num 1, 2 or 4): num 8 x 8
 * matrices of 16-bit elements loaded across the warp. Lane 8 m + i
 * passes row i's address (16 bytes, 16-byte aligned) of matrix m; lane
 * 4 g + t receives in r[m] the elements (row g, column 2 t) in the low
 * half and (row g, column 2 t + 1) in the high half of matrix m, as the
 * PTX ISA lays out ldmatrix's fragments (grid.cpp). */
void emu_ldmatrix(unsigned *r, int num, const void *row);

/* ldmatrix.sync.aligned.m8n8.x{num}.trans.shared.b16 (num 1, 2 or 4): num
 * 8 x 8 matrices of 16-bit elements loaded across the warp, transposed.
 * Lane 8 m + i passes row i's address (16 bytes) of matrix m; lane
 * 4 g + t receives in r[m] the elements (row 2 t, column g) in the low
 * half and (row 2 t + 1, column g) in the high half of matrix m, as the
 * PTX ISA lays out ldmatrix's fragments with .trans (grid.cpp). */
void emu_ldmatrix_trans(unsigned *r, int num, const void *row);

/* cp.async.cg.shared.global [dst], [src], 16, bytes (bytes read, the rest
 * of the 16 zeros), cp.async.commit_group and cp.async.wait_group n: the
 * copies are carried out at the wait that covers their group, not before
 * (grid.cpp). */
void emu_cp_async16(void *dst, const void *src, int bytes);
void emu_cp_async_commit(void);
void emu_cp_async_wait(int n);

/* For the stand-in's reports: where p is, as "N bytes into a device
 * allocation of M at 0x..." (emu.cpp). */
void emu_device_where(const void *p, char *buf, size_t n);

/* One access of a queued operation to memory at p, for the race check:
 * the whole allocation that holds p. */
struct emu_access {
  const void *p;
  bool write;
};

/* Queue fn on stream s; it runs when the schedule runs s this far. name
 * names it in a race report; acc are the memory it touches. */
void emu_enqueue(cudaStream_t s, const char *name, std::vector<emu_access> acc,
                 std::function<void()> fn);

/* Run a grid of blocks of `block` threads now, each thread calling body
 * (from a queued launch); name, the kernel's, is for reports. */
void emu_run_grid(dim3 grid, dim3 block, const std::function<void()> &body,
                  const char *name = nullptr);

/* Whether the hardware would launch this shape for a kernel of
 * __launch_bounds__(bounds); if not, the error cudaGetLastError returns
 * is recorded. Aborts on a shape the stand-in cannot run (blocks of other
 * than x, or not whole warps). */
bool emu_launch_ok(dim3 grid, dim3 block, unsigned bounds, const char *name);

/* For emu-only tests: choose the schedule (as CUDA_EMU_SCHEDULE), the
 * race reaction (as CUDA_EMU_RACES) and the blocks' and threads' order (as
 * CUDA_EMU_ORDER; grid.cpp); turn the race check within blocks (shared
 * and global memory, cp.async and ldmatrix) off (0) or on (1, the
 * default; it applies to the blocks that start after); the races
 * reported so far. */
void emu_set_schedule(const char *schedule);
void emu_set_races(const char *mode);
void emu_set_order(const char *mode);
void emu_set_plain_races(int on);
unsigned long emu_races(void);

/* Whether emu_arg_pointers(acc, const T &) is declared for T (found by
 * argument-dependent lookup where the launch is compiled). */
template <typename T, typename = void>
struct emu_lists_pointers : std::false_type {};
template <typename T>
struct emu_lists_pointers<
    T, std::void_t<decltype(emu_arg_pointers(std::declval<std::vector<emu_access> &>(),
                                             std::declval<const T &>()))>> : std::true_type {};

/* A pointer argument is an access: a write unless it points to const. A
 * struct passed by value (residual_norm_io) is the accesses of the
 * pointers it holds, which its emu_arg_pointers overload lists
 * (ci/cuda_emu/arg_pointers.h); a struct without one does not compile, so
 * no kernel argument can keep its buffers from the stream race check. */
template <typename T>
void emu_note_arg(std::vector<emu_access> &acc, const T &a) {
  if constexpr (std::is_pointer_v<T>) {
    acc.push_back({(const void *)a, !std::is_const_v<std::remove_pointer_t<T>>});
  } else if constexpr (std::is_class_v<T>) {
    static_assert(emu_lists_pointers<T>::value,
                  "a struct kernel argument needs emu_arg_pointers (ci/cuda_emu/arg_pointers.h)");
    emu_arg_pointers(acc, a);
  }
}

/* kernel<<<grid, block, shared, stream>>>(args) is rewritten by
 * ci/cuda_emu/launches.py into emu_launch(grid, block, shared, stream,
 * bounds, "kernel", kernel, args): the arguments are converted to the
 * kernel's parameter types and copied now, as a launch copies them (a
 * stack variable they were read from may be gone when the grid runs), and
 * the grid is queued on the stream. */
template <typename... P, typename... A>
void emu_launch(dim3 grid, dim3 block, size_t shared, cudaStream_t s, unsigned bounds,
                const char *name, void (*kernel)(P...), A &&...a) {
  (void)shared;
  if (!emu_launch_ok(grid, block, bounds, name)) return;
  auto args = std::tuple<std::decay_t<P>...>(std::forward<A>(a)...);
  std::vector<emu_access> acc;
  std::apply([&acc](const auto &...v) { (emu_note_arg(acc, v), ...); }, args);
  emu_enqueue(s, name, std::move(acc), [grid, block, name, kernel, args]() {
    emu_run_grid(
        grid, block, [&]() { std::apply(kernel, args); }, name);
  });
}

#endif
