/* A CPU stand-in for the CUDA execution model, enough to run pgolf's
 * kernels and GPU tests on a machine without a GPU (ci/cuda-emu.sh).
 * Force-included before a kernels/<op>.cu compiled as plain C++:
 *   - blocks run one after another; the threads of a block are pthreads,
 *     __syncthreads is a barrier over them, __ballot_sync a barrier over
 *     the 32 threads of a warp;
 *   - __shared__ becomes static (one block runs at a time);
 *   - a launch runs to completion before it returns (no streams);
 *   - device memory is host memory.
 * It checks the kernels' logic: indices, the reduction orders, barriers,
 * aliasing. It cannot check nvcc's code generation: the arithmetic here is
 * gcc's, which the PGOLF_HD code makes the same by construction. */
#ifndef PGOLF_CUDA_EMU_H
#define PGOLF_CUDA_EMU_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include <functional>

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
#define __syncthreads() emu_syncthreads()
#define __ballot_sync(mask, pred) emu_ballot(pred)
#define __popc(x) __builtin_popcount(x)

/* kernel<<<grid, block, shared, stream>>>(args) is rewritten by
 * ci/cuda_emu/launches.py into emu_launch(grid, block, [&] { kernel(args); }). */
void emu_launch(dim3 grid, dim3 block, const std::function<void()> &body);

#endif
