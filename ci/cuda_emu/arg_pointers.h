/* The pointers inside the structs kernels take by value, for the CPU
 * stand-in's stream race check (emu.h's emu_note_arg): each one is an
 * access, a write unless it points to const; NULL ones match no
 * allocation and are passed over. -included after emu.h into every
 * kernel's stand-in build (build.sh's emu_kernel), so the overloads are
 * there wherever a launch is compiled. A kernel argument of a struct type
 * not listed here does not compile on the stand-in. */
#ifndef PGOLF_CUDA_EMU_ARG_POINTERS_H
#define PGOLF_CUDA_EMU_ARG_POINTERS_H

#include <vector>

#include "ci/cuda_emu/emu.h"
#include "kernels/optim_step.h"
#include "kernels/residual_norm.h"

/* Structs of numbers only: no accesses. */
static inline void emu_arg_pointers(std::vector<emu_access> &, const adam_coeffs &) {}

static inline void emu_arg_pointers(std::vector<emu_access> &acc, const residual_norm_io &io) {
  emu_note_arg(acc, io.x);
  emu_note_arg(acc, io.s);
  emu_note_arg(acc, io.y);
  emu_note_arg(acc, io.y16);
  emu_note_arg(acc, io.u);
  emu_note_arg(acc, io.x0);
  emu_note_arg(acc, io.mix);
  emu_note_arg(acc, io.v);
  emu_note_arg(acc, io.n);
  emu_note_arg(acc, io.n16);
  emu_note_arg(acc, io.rstd);
}

#endif
