/* The CPU stand-in's grid executor (see emu.h): the blocks of a grid run
 * one after another on the calling thread, and the threads of a block are
 * coroutines there, each with its own stack. A block runs its coroutines
 * in thread order; each runs until it finishes or reaches __syncthreads or
 * __ballot_sync, then the next one that can run does. __syncthreads
 * releases when every thread of the block has arrived; __ballot_sync
 * releases a warp when its 32 lanes have arrived, each getting the mask of
 * their votes (lane i's in bit i). What a GPU would hang on or run as
 * undefined behaviour is reported, naming the kernel, block and thread,
 * and aborts: a thread that finishes while others of its block wait at
 * __syncthreads (or arriving there after one has finished), lanes of a
 * warp waiting at different barriers (__ballot_sync and __syncthreads), a
 * lane that finishes while its warp waits at __ballot_sync, and, should
 * anything else leave no thread able to run, that.
 *
 * A switch is a few instructions of assembly on x86-64 (the callee-saved
 * registers and the stack pointer); on other machines, in a process with
 * a shadow stack (which the assembly's return to another stack would
 * break), or under CUDA_EMU_CONTEXT=ucontext, it is swapcontext (a system
 * call each). The stacks, 256 KiB each with a guard page below, are one
 * mapping made at the first launch and reused, so a stack's pages fault
 * in once. */
#include "emu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <mutex>

thread_local emu_place emu_here;

enum { WARP = 32, MAX_THREADS = 1024, MAX_WARPS = MAX_THREADS / WARP };
static const size_t STACK = 256 << 10;

enum co_state : unsigned char { RUNNABLE, AT_SYNC, AT_BALLOT, DONE };

/* One CUDA thread of the running block. */
struct coro {
  void *sp; /* the assembly switch: its saved stack pointer */
  emu_place place;
  co_state state;
  unsigned vote, mask; /* at a ballot: its vote, then the warp's mask */
};

static coro cos[MAX_THREADS];
static ucontext_t ucs[MAX_THREADS], sched_uc; /* the ucontext switch */
[[maybe_unused]] static void *sched_sp;
static char *stacks; /* MAX_THREADS slots of a guard page and a stack */
static size_t slot;
[[maybe_unused]] static bool use_asm;

/* The launch and block running, and who waits where: threads at
 * __syncthreads (of the block, of each warp), at __ballot_sync and
 * finished (of each warp). */
static struct {
  const std::function<void()> *body;
  const char *name;
  unsigned n;
  coro *cur; /* the coroutine running; null: the scheduler */
  unsigned sync, done;
  unsigned warp_sync[MAX_WARPS], warp_ballot[MAX_WARPS], warp_done[MAX_WARPS];
} g;

static std::mutex grid_lock;
static thread_local bool in_grid;

#if defined(__x86_64__)
/* emu_ctx_switch(save, load): push the callee-saved registers, store the
 * stack pointer in *save, take load's, pop its and return there. A new
 * coroutine's stack is made to look the same (start). The SSE and x87
 * control words are not switched (storing and loading them was most of
 * a switch's time): the block's threads share the calling thread's, as
 * no kernel sets them, and emu_run_grid restores them after the grid. */
extern "C" void emu_ctx_switch(void **save, void *load);
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".type emu_ctx_switch,@function\n"
    "emu_ctx_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size emu_ctx_switch, .-emu_ctx_switch\n");

/* Whether this process runs with a shadow stack (rdssp is a no-op, leaving
 * 0, without one or on a CPU without CET). */
static bool shadow_stack(void) {
  unsigned long long ssp = 0;
  __asm__ volatile("rdsspq %0" : "+r"(ssp));
  return ssp != 0;
}
#endif

static void fail(unsigned t, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Report what thread t of the running block did, and abort. */
static void fail(unsigned t, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "cuda-emu: %s, block (%u,%u,%u), thread %u: ", g.name ? g.name : "a kernel",
          emu_here.block.x, emu_here.block.y, emu_here.block.z, t);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (a GPU would hang or misbehave here)\n");
  abort();
}

/* The first thread of [from, to) in state s. */
static unsigned first_in(unsigned from, unsigned to, co_state s) {
  for (unsigned t = from; t < to; t++)
    if (cos[t].state == s) return t;
  return to;
}

/* The running coroutine, which called `what`; none aborts. */
static coro *current(const char *what) {
  if (!in_grid || !g.cur) {
    fprintf(stderr, "cuda-emu: %s outside a kernel\n", what);
    abort();
  }
  return g.cur;
}

/* Back to the scheduler. */
static void yield(coro *c) {
  c->place = emu_here;
#if defined(__x86_64__)
  if (use_asm) {
    emu_ctx_switch(&c->sp, sched_sp);
    return;
  }
#endif
  if (swapcontext(&ucs[c - cos], &sched_uc)) abort();
}

/* From the scheduler to c. */
static void resume(coro *c) {
  g.cur = c;
  emu_here = c->place;
#if defined(__x86_64__)
  if (use_asm) {
    emu_ctx_switch(&sched_sp, c->sp);
    g.cur = nullptr;
    return;
  }
#endif
  if (swapcontext(&sched_uc, &ucs[c - cos])) abort();
  g.cur = nullptr;
}

void emu_syncthreads() {
  coro *c = current("__syncthreads");
  unsigned t = (unsigned)(c - cos), w = t / WARP;
  if (g.done)
    fail(t, "waits at __syncthreads, but thread %u of the block has finished",
         first_in(0, g.n, DONE));
  if (g.warp_ballot[w])
    fail(t, "waits at __syncthreads, but thread %u of its warp waits at __ballot_sync",
         first_in(w * WARP, w * WARP + WARP, AT_BALLOT));
  c->state = AT_SYNC;
  g.warp_sync[w]++;
  if (++g.sync == g.n) {
    for (unsigned i = 0; i < g.n; i++) cos[i].state = RUNNABLE;
    g.sync = 0;
    memset(g.warp_sync, 0, sizeof g.warp_sync);
  }
  yield(c);
}

unsigned emu_ballot(int pred) {
  coro *c = current("__ballot_sync");
  unsigned t = (unsigned)(c - cos), w = t / WARP, lane0 = w * WARP;
  if (g.warp_done[w])
    fail(t, "waits at __ballot_sync, but thread %u of its warp has finished",
         first_in(lane0, lane0 + WARP, DONE));
  if (g.warp_sync[w])
    fail(t, "waits at __ballot_sync, but thread %u of its warp waits at __syncthreads",
         first_in(lane0, lane0 + WARP, AT_SYNC));
  c->state = AT_BALLOT;
  c->vote = pred != 0;
  if (++g.warp_ballot[w] == WARP) {
    unsigned mask = 0;
    for (unsigned i = 0; i < WARP; i++) mask |= cos[lane0 + i].vote << i;
    for (unsigned i = 0; i < WARP; i++) cos[lane0 + i].mask = mask, cos[lane0 + i].state = RUNNABLE;
    g.warp_ballot[w] = 0;
  }
  yield(c);
  return c->mask;
}

/* emu.h's tensor-core product. The lanes of a warp leave their fragments
 * in the warp's slot, meet at a ballot (which also reports a lane that
 * finished or waits elsewhere, as for __ballot_sync), then each computes
 * its four results from everyone's fragments. Two slots are used in turn
 * (each lane counts its calls), so a lane already at its next product
 * cannot overwrite fragments another lane still reads: it would need the
 * whole warp at the ballot after, which comes only when every lane has
 * finished this one.
 * The layout, from the PTX ISA's "Matrix Fragments for mma.m16n8k16"
 * (floating point types), for lane l, group g = l / 4 and t = l % 4:
 *   A (16 x 16, row): a[i] holds two bf16s, (row g + 8 (i % 2), columns
 *     2t + 8 (i / 2) and the next), the lower column in the low half;
 *   B (16 x 8, col): b[i] holds (rows 2t + 8 i and the next, column g);
 *   C, D (16 x 8): d[i] is (row g + 8 (i / 2), column 2t + i % 2). */
static struct {
  unsigned a[2][MAX_THREADS][4], b[2][MAX_THREADS][2];
  unsigned calls[MAX_THREADS];
} mma;

static float mma_bf16(unsigned word, int high) {
  uint32_t bits = (high ? word >> 16 : word & 0xffffu) << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Element (r, k) of the warp's A and (k, n) of its B, from the slot. */
static float mma_a(unsigned slot, unsigned lane0, unsigned r, unsigned k) {
  unsigned lane = lane0 + r % 8 * 4 + k % 8 / 2, reg = r / 8 + 2 * (k / 8);
  return mma_bf16(mma.a[slot][lane][reg], k % 2);
}
static float mma_b(unsigned slot, unsigned lane0, unsigned k, unsigned n) {
  unsigned lane = lane0 + n * 4 + k % 8 / 2, reg = k / 8;
  return mma_bf16(mma.b[slot][lane][reg], k % 2);
}

/* CUDA_EMU_MMA: "fmaf" (the default) or "wide", read once. */
static bool mma_wide(void) {
  static int wide = -1;
  if (wide < 0) {
    const char *m = getenv("CUDA_EMU_MMA");
    if (!m || !strcmp(m, "fmaf")) wide = 0;
    else if (!strcmp(m, "wide")) wide = 1;
    else {
      fprintf(stderr, "cuda-emu: CUDA_EMU_MMA=%s: not fmaf or wide\n", m);
      abort();
    }
  }
  return wide;
}

void emu_mma_bf16_m16n8k16(float d[4], const unsigned a[4], const unsigned b[2]) {
  coro *c = current("mma");
  const unsigned t = (unsigned)(c - cos), lane0 = t / WARP * WARP, l = t - lane0;
  const unsigned slot = mma.calls[t]++ % 2;
  memcpy(mma.a[slot][t], a, sizeof mma.a[slot][t]);
  memcpy(mma.b[slot][t], b, sizeof mma.b[slot][t]);
  emu_ballot(1);
  for (unsigned i = 0; i < 4; i++) {
    const unsigned r = l / 4 + 8 * (i / 2), n = l % 4 * 2 + i % 2;
    if (mma_wide()) {
      /* The 16 exact products and the accumulator summed in double, k
       * ascending, then truncated (rounded toward zero) to float: another
       * adder than the CPU's, as a tensor core's is (measurements of
       * recent tensor cores report a wide sum and truncation). */
      double acc = d[i];
      for (unsigned k = 0; k < 16; k++)
        acc += (double)mma_a(slot, lane0, r, k) * (double)mma_b(slot, lane0, k, n);
      float f = (float)acc;
      if (__builtin_fabs((double)f) > __builtin_fabs(acc)) f = __builtin_nextafterf(f, 0.0f);
      d[i] = f;
      continue;
    }
    float acc = d[i];
    /* (__builtin_fmaf: math.h's cos() would clash with the threads'
     * array here) */
    for (unsigned k = 0; k < 16; k++) acc = __builtin_fmaf(mma_a(slot, lane0, r, k), mma_b(slot, lane0, k, n), acc);
    d[i] = acc;
  }
}

/* emu.h's shuffles: the lanes leave their values in the warp's slot (two
 * in turn, as the tensor-core product's fragments), meet at a ballot,
 * then each reads the value of the lane it names. */
static struct {
  unsigned v[2][MAX_THREADS];
  unsigned calls[MAX_THREADS];
} shfl;

unsigned emu_shfl(unsigned v, unsigned mask, int k, int down) {
  coro *c = current("__shfl_sync");
  const unsigned t = (unsigned)(c - cos), lane0 = t / WARP * WARP, l = t - lane0;
  if (mask != 0xffffffffu)
    fail(t, "shuffles with mask %#x (the stand-in models whole warps)", mask);
  const unsigned slot = shfl.calls[t]++ % 2;
  shfl.v[slot][t] = v;
  emu_ballot(1);
  const unsigned src = down ? (l + (unsigned)k < WARP ? l + (unsigned)k : l) : (unsigned)k % WARP;
  return shfl.v[slot][lane0 + src];
}

/* emu.h's ldmatrix, plain and .trans: the lanes leave their row
 * addresses in the warp's slot (two in turn, as the tensor-core product's
 * fragments), meet at a ballot, then each reads its elements from the
 * rows the others named. A row address that is not 16-byte aligned is
 * reported (the PTX ISA requires it; a GPU would read other bytes). */
static struct {
  const void *row[2][MAX_THREADS];
  unsigned calls[MAX_THREADS];
} ldsm;

/* The rows named for this call (lane0's warp), after the ballot. */
static const void *const *ldsm_rows(coro *c, const void *row, unsigned *lane0, unsigned *l) {
  const unsigned t = (unsigned)(c - cos);
  *lane0 = t / WARP * WARP, *l = t - *lane0;
  if ((uintptr_t)row % 16) fail(t, "passes ldmatrix a row address %p not 16-byte aligned", row);
  const unsigned slot = ldsm.calls[t]++ % 2;
  ldsm.row[slot][t] = row;
  emu_ballot(1);
  return ldsm.row[slot];
}

void emu_ldmatrix(unsigned *r, int num, const void *row) {
  unsigned lane0, l;
  const void *const *rows = ldsm_rows(current("ldmatrix"), row, &lane0, &l);
  for (int m = 0; m < num; m++) {
    const uint16_t *p = (const uint16_t *)rows[lane0 + 8 * m + l / 4];
    r[m] = (unsigned)p[l % 4 * 2] | (unsigned)p[l % 4 * 2 + 1] << 16;
  }
}

void emu_ldmatrix_trans(unsigned *r, int num, const void *row) {
  unsigned lane0, l;
  const void *const *rows = ldsm_rows(current("ldmatrix"), row, &lane0, &l);
  for (int m = 0; m < num; m++) {
    const uint16_t *r0 = (const uint16_t *)rows[lane0 + 8 * m + l % 4 * 2];
    const uint16_t *r1 = (const uint16_t *)rows[lane0 + 8 * m + l % 4 * 2 + 1];
    r[m] = (unsigned)r0[l / 4] | (unsigned)r1[l / 4] << 16;
  }
}

/* emu.h's cp.async: a thread's copies wait in its list, each with the
 * group it belongs to (the groups committed before it), and are carried
 * out only when a wait_group lets the thread count on them. So a read of
 * the destination before the wait (or, by another thread, before the
 * barrier after it) sees the old bytes, as it may on a GPU, and the
 * results show it. A thread that finishes with copies never waited for
 * is reported. */
enum { CP_MAX = 64 };
static struct {
  struct {
    void *dst;
    const void *src;
    int bytes;
    unsigned group;
  } q[MAX_THREADS][CP_MAX];
  unsigned n[MAX_THREADS], committed[MAX_THREADS];
} cpa;

void emu_cp_async16(void *dst, const void *src, int bytes) {
  coro *c = current("cp.async");
  const unsigned t = (unsigned)(c - cos);
  if (bytes < 0 || bytes > 16) fail(t, "cp.async of %d source bytes (0 to 16)", bytes);
  if (cpa.n[t] == CP_MAX)
    fail(t, "has %d cp.async copies in flight (the stand-in's limit)", CP_MAX);
  cpa.q[t][cpa.n[t]++] = {dst, src, bytes, cpa.committed[t]};
}

void emu_cp_async_commit(void) {
  coro *c = current("cp.async.commit_group");
  cpa.committed[(unsigned)(c - cos)]++;
}

void emu_cp_async_wait(int n) {
  coro *c = current("cp.async.wait_group");
  const unsigned t = (unsigned)(c - cos);
  if (cpa.committed[t] <= (unsigned)n) return;          /* no group old enough to wait for */
  const unsigned done = cpa.committed[t] - (unsigned)n; /* groups below this one complete */
  unsigned keep = 0;
  for (unsigned i = 0; i < cpa.n[t]; i++) {
    auto &e = cpa.q[t][i];
    if (e.group < done) {
      memcpy(e.dst, e.src, (size_t)e.bytes);
      memset((char *)e.dst + e.bytes, 0, (size_t)(16 - e.bytes));
    } else {
      cpa.q[t][keep++] = e;
    }
  }
  cpa.n[t] = keep;
}

/* A coroutine: the kernel's body, then finished; never resumed after. */
static void co_main() {
  coro *c = g.cur;
  (*g.body)();
  unsigned t = (unsigned)(c - cos), w = t / WARP;
  if (cpa.n[t]) fail(t, "has finished with %u cp.async copies never waited for", cpa.n[t]);
  if (g.sync)
    fail(t, "has finished, but thread %u of the block waits at __syncthreads",
         first_in(0, g.n, AT_SYNC));
  if (g.warp_ballot[w])
    fail(t, "has finished, but thread %u of its warp waits at __ballot_sync",
         first_in(w * WARP, w * WARP + WARP, AT_BALLOT));
  c->state = DONE;
  g.done++;
  g.warp_done[w]++;
  yield(c);
  abort(); /* not reached */
}

/* The stacks and the switch, once. */
static void setup(void) {
  if (stacks) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  slot = page + STACK;
  void *m = mmap(NULL, slot * MAX_THREADS, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) {
    perror("cuda-emu: the threads' stacks");
    abort();
  }
  stacks = (char *)m;
  for (unsigned t = 0; t < MAX_THREADS; t++)
    if (mprotect(stacks + t * slot, page, PROT_NONE)) {
      perror("cuda-emu: a stack's guard page");
      abort();
    }
  const char *v = getenv("CUDA_EMU_CONTEXT");
  bool want_ucontext = v && !strcmp(v, "ucontext");
  if (v && *v && !want_ucontext && strcmp(v, "asm")) {
    fprintf(stderr, "cuda-emu: CUDA_EMU_CONTEXT=%s: asm or ucontext\n", v);
    abort();
  }
#if defined(__x86_64__)
  use_asm = !want_ucontext && !shadow_stack();
#endif
}

/* Thread t's coroutine, ready to start co_main at place p. */
static void start(unsigned t, const emu_place &p) {
  coro *c = &cos[t];
  c->place = p;
  c->state = RUNNABLE;
  mma.calls[t] = 0;
  cpa.n[t] = cpa.committed[t] = 0;
  char *lo = stacks + t * slot + (slot - STACK);
#if defined(__x86_64__)
  if (use_asm) {
    /* What emu_ctx_switch pops (r15..r12, rbx, rbp), then co_main as
     * the return address, entered as if called (the stack 16-byte
     * aligned before the call) from a null return address, where an
     * unwinder stops. The tops of the stacks are staggered by cache
     * lines, so that the threads' frames do not all fall in the same
     * cache sets. */
    void **f = (void **)(((uintptr_t)(lo + STACK) - t % 32 * 64) & ~(uintptr_t)15) - 8;
    memset(f, 0, 8 * sizeof *f);
    f[6] = (void *)co_main;
    c->sp = f;
    return;
  }
#endif
  ucontext_t *u = &ucs[t];
  if (getcontext(u)) abort();
  u->uc_stack.ss_sp = lo;
  u->uc_stack.ss_size = STACK;
  u->uc_link = nullptr;
  makecontext(u, co_main, 0);
}

/* Every thread of the block at emu_here.block, to the end. */
static void run_block(void) {
  emu_place p = emu_here;
  g.sync = g.done = 0;
  memset(g.warp_sync, 0, sizeof g.warp_sync);
  memset(g.warp_ballot, 0, sizeof g.warp_ballot);
  memset(g.warp_done, 0, sizeof g.warp_done);
  for (unsigned t = 0; t < g.n; t++) {
    p.thread.x = t;
    start(t, p);
  }
  while (g.done < g.n) {
    bool ran = false;
    for (unsigned t = 0; t < g.n; t++)
      if (cos[t].state == RUNNABLE) resume(&cos[t]), ran = true;
    if (!ran) { /* not reached: each way to get here is reported above */
      unsigned t = 0;
      while (cos[t].state == DONE) t++;
      fail(t,
           "waits at a barrier, and no thread of the block can run (%u at __syncthreads, %u "
           "finished)",
           g.sync, g.done);
    }
  }
}

void emu_run_grid(dim3 grid, dim3 block, const std::function<void()> &body, const char *name) {
  if (in_grid) {
    fprintf(stderr, "cuda-emu: %s launched from a kernel\n", name ? name : "a grid");
    abort();
  }
  std::lock_guard<std::mutex> hold(grid_lock);
  /* emu_launch_ok (emu.cpp), before the launch was queued, refused or
   * reported any other block: here it is 1-D, whole warps, at most
   * MAX_THREADS. */
  unsigned n = block.x;
  setup();
#if defined(__x86_64__)
  unsigned mxcsr;
  unsigned short fpucw;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(fpucw));
#endif
  in_grid = true;
  g.body = &body, g.name = name, g.n = n, g.cur = nullptr;
  emu_place host = emu_here;
  emu_here.thread = {0, 0, 0};
  emu_here.block_dim = block, emu_here.grid_dim = grid;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        emu_here.block = {bx, by, bz};
        run_block();
      }
  emu_here = host;
#if defined(__x86_64__)
  __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
  __asm__ volatile("fldcw %0" : : "m"(fpucw));
#endif
  in_grid = false;
}
