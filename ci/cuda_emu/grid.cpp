/* The CPU stand-in's grid executor (see emu.h): the blocks of a grid run
 * one after another on the calling thread, and the threads of a block are
 * coroutines there, each with its own stack. A block runs a warp at a
 * time, in order (or the reverse, CUDA_EMU_ORDER): its lanes in turn, each
 * until it finishes or reaches __syncthreads or __ballot_sync, again while
 * a ballot released them, until all wait at __syncthreads or have
 * finished; then the next warp, and after a __syncthreads the first
 * warp again. __syncthreads
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

#include <cxxabi.h>
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

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
  unsigned phase; /* __syncthreads releases so far in the block */
  unsigned warp_sync[MAX_WARPS], warp_ballot[MAX_WARPS], warp_done[MAX_WARPS];
  unsigned warp_syncwarp[MAX_WARPS]; /* of warp_ballot: lanes at __syncwarp */
  unsigned warp_epoch[MAX_WARPS];    /* __syncwarp releases of each warp in the block */
  unsigned launch, blk;              /* launches so far (this one's number); the block, linear */
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

/* Under AddressSanitizer each switch between stacks is announced, as its
 * interface asks of fibers (sanitizer/common_interface_defs.h): the
 * stack being entered before, and the switch finished after, so that it
 * checks each thread's frames against its own stack. The scheduler's
 * stack is whatever the first switch into a coroutine reports. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
static const void *sched_bottom;
static size_t sched_size;
static void *co_fake[MAX_THREADS]; /* each coroutine's fake stack, between its switches */
#define ASAN_ENTER(bottom, size, fake) __sanitizer_start_switch_fiber(fake, bottom, size)
#define ASAN_ENTERED(fake, bottom, size) __sanitizer_finish_switch_fiber(fake, bottom, size)
#else
#define ASAN_ENTER(bottom, size, fake) ((void)0)
#define ASAN_ENTERED(fake, bottom, size) ((void)0)
#endif

/* The lowest address of thread t's stack (below it, its guard page). */
static char *stack_lo(unsigned t) { return stacks + t * slot + (slot - STACK); }

/* Back to the scheduler; a finished coroutine's fake stack is dropped. */
static void yield(coro *c) {
  c->place = emu_here;
  ASAN_ENTER(sched_bottom, sched_size, c->state == DONE ? nullptr : &co_fake[c - cos]);
#if defined(__x86_64__)
  if (use_asm) {
    emu_ctx_switch(&c->sp, sched_sp);
    ASAN_ENTERED(co_fake[c - cos], &sched_bottom, &sched_size);
    return;
  }
#endif
  if (swapcontext(&ucs[c - cos], &sched_uc)) abort();
  ASAN_ENTERED(co_fake[c - cos], &sched_bottom, &sched_size);
}

/* From the scheduler to c. */
static void resume(coro *c) {
  g.cur = c;
  emu_here = c->place;
#if defined(__SANITIZE_ADDRESS__)
  void *fake = nullptr;
#endif
  ASAN_ENTER(stack_lo((unsigned)(c - cos)), STACK, &fake);
#if defined(__x86_64__)
  if (use_asm) {
    emu_ctx_switch(&sched_sp, c->sp);
    ASAN_ENTERED(fake, nullptr, nullptr);
    g.cur = nullptr;
    return;
  }
#endif
  if (swapcontext(&sched_uc, &ucs[c - cos])) abort();
  ASAN_ENTERED(fake, nullptr, nullptr);
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
    g.phase++;
    memset(g.warp_sync, 0, sizeof g.warp_sync);
  }
  yield(c);
}

/* A warp's lanes meet (__ballot_sync, and the shuffles, products and
 * ldmatrix built on it; sync: __syncwarp). A release of __syncwarp
 * starts the warp's next epoch, which orders the lanes' shared-memory
 * accesses before it with those after (the race check below); the other
 * meetings order no memory, as the PTX memory model has it. Lanes meeting
 * at __syncwarp and at another of these are reported. */
static unsigned warp_meet(const char *what, int pred, bool sync) {
  coro *c = current(what);
  unsigned t = (unsigned)(c - cos), w = t / WARP, lane0 = w * WARP;
  if (g.warp_done[w])
    fail(t, "waits at %s, but thread %u of its warp has finished", what,
         first_in(lane0, lane0 + WARP, DONE));
  if (g.warp_sync[w])
    fail(t, "waits at %s, but thread %u of its warp waits at __syncthreads", what,
         first_in(lane0, lane0 + WARP, AT_SYNC));
  c->state = AT_BALLOT;
  c->vote = pred != 0;
  g.warp_syncwarp[w] += sync;
  if (++g.warp_ballot[w] == WARP) {
    if (g.warp_syncwarp[w] % WARP)
      fail(t, "%u lanes of its warp meet at __syncwarp, the others at another warp instruction",
           g.warp_syncwarp[w]);
    unsigned mask = 0;
    for (unsigned i = 0; i < WARP; i++) mask |= cos[lane0 + i].vote << i;
    for (unsigned i = 0; i < WARP; i++) cos[lane0 + i].mask = mask, cos[lane0 + i].state = RUNNABLE;
    g.warp_ballot[w] = 0;
    g.warp_epoch[w] += g.warp_syncwarp[w] != 0;
    g.warp_syncwarp[w] = 0;
  }
  yield(c);
  return c->mask;
}

unsigned emu_ballot(int pred) { return warp_meet("__ballot_sync", pred, false); }
void emu_syncwarp(void) { (void)warp_meet("__syncwarp", 1, true); }

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

/* CUDA_EMU_ORDER: "forward" (the default) or "reverse", read at the
 * first launch unless emu_set_order chose. Reversed, the blocks of a grid
 * run from the last to the first, and so do a block's warps between two
 * barriers and a warp's lanes. Between two barriers a thread runs
 * before every higher one in one order and after it in the other, so a
 * read that a missing barrier leaves unordered with another thread's
 * write (or a write with another's read) sees the other value in one of
 * the two orders: run both, and such a race gives wrong bits in one, as a
 * GPU's scheduling may. Likewise a block that reads what another block of
 * the same grid writes. */
static int order_rev = -1;

void emu_set_order(const char *v) {
  if (!v || !*v || !strcmp(v, "forward"))
    order_rev = 0;
  else if (!strcmp(v, "reverse"))
    order_rev = 1;
  else {
    fprintf(stderr, "cuda-emu: CUDA_EMU_ORDER=%s: forward or reverse\n", v);
    abort();
  }
}

static bool order_reverse(void) {
  if (order_rev < 0) emu_set_order(getenv("CUDA_EMU_ORDER"));
  return order_rev;
}

/* emu.h's fresh shared memory: the arrays the running block has filled,
 * with 0x7f bytes in forward order (3.4e38 as a float or bf16, 1.4e306 as
 * a double: a maximum cannot ignore them, a sum or product overflows)
 * and 0xff bytes in reverse (NaNs, which every arithmetic carries on, as
 * the global memory of cudaMalloc). */
enum { FRESH_MAX = 64 };
static struct {
  struct {
    const char *p, *name;
    size_t bytes;
    struct byte_use *shadow; /* its records for the plain race check */
  } a[FRESH_MAX];
  unsigned n;
} fresh;

static void plain_array(unsigned i);

void emu_shared_fresh(void *p, size_t bytes, const char *name) {
  const unsigned t = (unsigned)(current("__shared__") - cos);
  for (unsigned i = 0; i < fresh.n; i++)
    if (fresh.a[i].p == p) return;
  if (fresh.n == FRESH_MAX)
    fail(t, "declares more than %d __shared__ arrays (the stand-in's limit)", FRESH_MAX);
  memset(p, order_reverse() ? 0xff : 0x7f, bytes);
  fresh.a[fresh.n] = {(const char *)p, name, bytes, nullptr};
  plain_array(fresh.n++);
}

/* Where p is, for a report: "name + offset" in a fresh array, else p. */
static const char *shared_name(const void *p) {
  static char buf[160];
  for (unsigned i = 0; i < fresh.n; i++)
    if ((const char *)p >= fresh.a[i].p && (const char *)p < fresh.a[i].p + fresh.a[i].bytes) {
      snprintf(buf, sizeof buf, "%s + %zu bytes", fresh.a[i].name,
               (size_t)((const char *)p - fresh.a[i].p));
      return buf;
    }
  snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

/* Races through plain loads and stores of shared memory, whatever the
 * data. The kernels are compiled for the stand-in with gcc's
 * -fsanitize=thread instrumentation (ci/cuda_emu/build.sh) and no
 * ThreadSanitizer runtime: each load and store calls the __tsan_* hooks
 * below with its address, and the stand-in keeps, for each 2 bytes (a
 * bf16, the smallest element the kernels store) of the running block's
 * __shared__ arrays, its last write and its reads since the last
 * __syncthreads. Two accesses by different threads, at least one a
 * store, race unless a __syncthreads lies between them or, for two lanes
 * of one warp, a __syncwarp; each race is reported with the array, the
 * offset, the other thread or warp and the code (its .cu line), and
 * aborts. The accesses the stand-in makes itself count too: an ldmatrix
 * reads its rows, and a cp.async writes its 16 bytes at any moment from
 * its issue to the wait_group that lands it, so it races at its issue
 * with what was read or stored before (or is in flight from another
 * thread), is recorded as a store when it lands, and any read of its
 * bytes in between is reported. A
 * block's records go stale at its start (the phase advances), so none is
 * cleared. Global memory is checked likewise, and between the blocks of
 * a launch (global_access below). Not checked: a build with ASan, which
 * cannot be combined with the instrumentation (the orders of
 * CUDA_EMU_ORDER still run there). */
struct byte_use {
  unsigned wphase, wepoch; /* the last write: its phase, its warp's epoch */
  unsigned rphase, repoch; /* reads in rphase; rthr's warp's in repoch */
  unsigned rwarps;         /* warps (bit w) that read it in rphase */
  unsigned short wthr;     /* the last write's thread */
  unsigned short rthr[2];  /* two threads that read it (warp rthr[0] / 32, repoch) */
  unsigned short inflight; /* cp.async copies to it issued and not landed */
  unsigned short ithr;     /* the thread of the latest of those */
};
enum { GRAIN = 2 }; /* bytes a record covers */
static std::unordered_map<const void *, std::vector<byte_use>> shadows;
static std::atomic<uintptr_t> plain_lo, plain_span; /* the arrays' hull; 0: none */
static bool plain_off;                              /* emu_set_plain_races(0) */

void emu_set_plain_races(int on) { plain_off = !on; }
static int plain_global = -1; /* CUDA_EMU_PLAIN: global memory too; -1: not read yet */

/* CUDA_EMU_PLAIN: "all" (the default: shared and global memory),
 * "shared" (global memory unchecked: the check is the same in every
 * order, and global memory's is most of its cost, so a second run in
 * another order may leave it out) or "off" (no race check in a block at
 * all, cp.async's and ldmatrix's included); read at the first launch. */
static void plain_mode(void) {
  const char *v = getenv("CUDA_EMU_PLAIN");
  plain_global = 1;
  if (!v || !*v || !strcmp(v, "all")) return;
  if (!strcmp(v, "shared"))
    plain_global = 0;
  else if (!strcmp(v, "off"))
    plain_global = 0, plain_off = true;
  else {
    fprintf(stderr, "cuda-emu: CUDA_EMU_PLAIN=%s: all, shared or off\n", v);
    abort();
  }
}

/* Shared array i of the running block, declared: its records (none while
 * the check is off). In-flight counts left by an aborted block's copies
 * cannot be: a thread finishing with copies is reported. */
static void plain_array(unsigned i) {
  if (plain_off) return;
  std::vector<byte_use> &v = shadows[fresh.a[i].p];
  const size_t n = (fresh.a[i].bytes + GRAIN - 1) / GRAIN;
  if (v.size() < n) v.resize(n, byte_use{0, 0, 0, 0, 0, 0, {0, 0}, 0, 0});
  fresh.a[i].shadow = v.data();
  uintptr_t lo = (uintptr_t)fresh.a[i].p, hi = lo + fresh.a[i].bytes;
  if (plain_span.load(std::memory_order_relaxed)) {
    uintptr_t olo = plain_lo.load(std::memory_order_relaxed);
    uintptr_t ohi = olo + plain_span.load(std::memory_order_relaxed);
    lo = lo < olo ? lo : olo, hi = hi > ohi ? hi : ohi;
  }
  plain_lo.store(lo, std::memory_order_relaxed);
  plain_span.store(hi - lo, std::memory_order_relaxed);
}

/* The code at pc (a return address), for a report: "symbol+0xoffset"
 * where the executable exports it (-rdynamic), else the address, then
 * the source lines addr2line finds for it (the .cu file's, through the
 * generated source's #line; its inlined callers after " in "), where
 * there is line information (-g1). */
static const char *code_name(const void *pc) {
  static char buf[1024];
  Dl_info di;
  if (!dladdr(pc, &di) || !di.dli_fname) {
    snprintf(buf, sizeof buf, "%p", pc);
    return buf;
  }
  size_t k = 0;
  if (di.dli_sname) {
    int st = 1;
    char *dm = abi::__cxa_demangle(di.dli_sname, nullptr, nullptr, &st);
    k = (size_t)snprintf(buf, sizeof buf, "%s+%#zx", st == 0 && dm ? dm : di.dli_sname,
                         (size_t)((const char *)pc - (const char *)di.dli_saddr));
    free(dm);
  } else {
    k = (size_t)snprintf(buf, sizeof buf, "%p", pc);
  }
  /* addr2line takes a position-independent file's addresses from its
   * base, another's as they are (ELF's e_type, 3 for ET_DYN). */
  unsigned char ehdr[18] = {0};
  FILE *f = fopen(di.dli_fname, "rb");
  if (f) {
    if (fread(ehdr, 1, sizeof ehdr, f) != sizeof ehdr) ehdr[16] = 0;
    fclose(f);
  }
  const uintptr_t at = (uintptr_t)pc - 1 - (ehdr[16] == 3 ? (uintptr_t)di.dli_fbase : 0);
  char cmd[600], line[400];
  snprintf(cmd, sizeof cmd, "addr2line -i -e '%s' %#zx 2>/dev/null", di.dli_fname, (size_t)at);
  FILE *p = strchr(di.dli_fname, '\'') ? nullptr : popen(cmd, "r");
  const char *sep = "; ";
  while (p && fgets(line, sizeof line, p) && k < sizeof buf) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "??", 2)) break;
    char *disc = strstr(line, " (discriminator");
    if (disc) *disc = 0;
    const char *slash = strrchr(line, '/');
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", sep, slash ? slash + 1 : line);
    sep = " in ";
  }
  if (p) pclose(p);
  return buf;
}

/* Where p is, for a report: "shared memory (name + offset)", or for
 * global memory the allocation and offset (emu.cpp). */
static const char *space_name(const char *p, bool global) {
  static char buf[240];
  if (global) {
    char dev[200];
    emu_device_where(p, dev, sizeof dev);
    snprintf(buf, sizeof buf, "global memory (%s)", dev);
  } else {
    snprintf(buf, sizeof buf, "shared memory (%s)", shared_name(p));
  }
  return buf;
}

/* The race at p (record u) that thread t's access meets, reported:
 * another thread's store (kind 0), a copy in flight (1: another thread's,
 * or for a read any), or (write) another thread's or warp's read (2).
 * Off the hot path. */
static void __attribute__((noinline, noreturn))
plain_race(unsigned t, const char *p, bool global, const byte_use &u, int kind, const char *verb,
           const void *pc) {
  const unsigned w = t / WARP;
  char where[240], who[64];
  snprintf(where, sizeof where, "%s", space_name(p, global));
  if (kind == 0)
    fail(t, "%s %s that thread %u (warp %u) stored to, with no %s between (at %s)", verb, where,
         u.wthr, u.wthr / WARP,
         u.wthr / WARP == w ? "__syncwarp or __syncthreads" : "__syncthreads", code_name(pc));
  if (kind == 1)
    fail(t, "%s %s while a cp.async of thread %u (warp %u) to it is in flight (at %s)", verb, where,
         u.ithr, u.ithr / WARP, code_name(pc));
  const unsigned others = u.rwarps & ~(1u << w);
  if (others && u.rthr[0] / WARP != w)
    snprintf(who, sizeof who, "thread %u (warp %u)", u.rthr[0], u.rthr[0] / WARP);
  else if (others) /* its thread is not kept */
    snprintf(who, sizeof who, "warp %u", (unsigned)__builtin_ctz(others));
  else {
    const unsigned o = u.rthr[0] != t ? u.rthr[0] : u.rthr[1];
    snprintf(who, sizeof who, "thread %u (warp %u)", o, o / WARP);
  }
  fail(t, "%s %s that %s read, with no %s between (at %s)", verb, where, who,
       others ? "__syncthreads" : "__syncwarp or __syncthreads", code_name(pc));
}

/* Thread t's access of the record u (of the bytes at at) within its
 * block, checked and recorded (check_only: a cp.async's issue, checked
 * as a store and not recorded: it lands later). Records of other blocks
 * are stale here: their phases are earlier. */
static inline void plain_check(unsigned t, const char *at, bool global, byte_use &u, bool write,
                               bool check_only, const char *verb, const void *pc) {
  const unsigned w = t / WARP, e = g.warp_epoch[w], ph = g.phase;
  /* another thread's store with nothing between: another warp's in this
   * phase, or its own warp's in this epoch */
  if (u.wphase == ph && u.wthr != t && (u.wthr / WARP != w || u.wepoch == e))
    plain_race(t, at, global, u, 0, verb, pc);
  if (!write) {
    if (u.inflight) plain_race(t, at, global, u, 1, verb, pc);
    if (u.rphase != ph) u.rphase = ph, u.rwarps = 0, u.repoch = e - 1;
    u.rwarps |= 1u << w;
    /* rthr: readers of warp rthr[0] / 32's latest epoch (two of them);
     * another warp's read starts them again, as any store by a third
     * warp races anyway and one by either is told by rwarps */
    if (u.repoch != e || u.rthr[0] / WARP != w)
      u.repoch = e, u.rthr[0] = u.rthr[1] = (unsigned short)t;
    else if (u.rthr[0] == u.rthr[1] && u.rthr[0] != t)
      u.rthr[1] = (unsigned short)t;
    return;
  }
  /* another warp's read in this phase, or another lane's in this epoch
   * (rthr's warp is w when no other warp read) */
  if (u.rphase == ph &&
      ((u.rwarps & ~(1u << w)) || (u.repoch == e && (u.rthr[0] != t || u.rthr[1] != t))))
    plain_race(t, at, global, u, 2, verb, pc);
  if (u.inflight && u.ithr != t) plain_race(t, at, global, u, 1, verb, pc);
  if (!check_only) u.wphase = ph, u.wepoch = e, u.wthr = (unsigned short)t;
}

/* Thread t's access of the bytes [p, p + n) of shared array i; verb
 * names it in a report. */
static void plain_records(unsigned t, unsigned i, const char *p, size_t n, bool write,
                          bool check_only, const char *verb, const void *pc) {
  const char *a = fresh.a[i].p, *end = p + n < a + fresh.a[i].bytes ? p + n : a + fresh.a[i].bytes;
  for (size_t k = (size_t)(p - a) / GRAIN; a + k * GRAIN < end; k++)
    plain_check(t, a + k * GRAIN > p ? a + k * GRAIN : p, false, fresh.a[i].shadow[k], write,
                check_only, verb, pc);
}

/* Thread t's access of n bytes at p, a shared array's or not (verb
 * names it in a report: by default "stores to" or "reads"); or (delta)
 * a cp.async's issue (+1) or landing (-1) on the 16 bytes at p. */
static void plain_access(unsigned t, const void *p, size_t n, bool write, bool check_only,
                         const void *pc, int delta = 0, const char *verb = nullptr) {
  const char *b = (const char *)p;
  for (unsigned i = 0; i < fresh.n; i++) {
    const char *a = fresh.a[i].p;
    if (b < a || b >= a + fresh.a[i].bytes) continue;
    if (!fresh.a[i].shadow) return; /* declared while the check was off */
    if (delta)
      for (size_t k = (size_t)(b - a) / GRAIN;
           k * GRAIN < (size_t)(b - a) + n && k * GRAIN < fresh.a[i].bytes; k++) {
        byte_use &u = fresh.a[i].shadow[k];
        u.inflight = (unsigned short)(u.inflight + delta);
        if (delta > 0) u.ithr = (unsigned short)t;
      }
    else
      plain_records(t, i, b, n, write, check_only, verb ? verb : write ? "stores to" : "reads", pc);
    return;
  }
}

/* Global memory, likewise: within a block as shared memory (a
 * __syncthreads orders a block's global accesses too), and between the
 * blocks of one launch, which nothing orders (pgolf's kernels use no
 * atomics and no fences), any two accesses of the same bytes, one a
 * store, race. The records are a table indexed by address, each tagged
 * with its 2 bytes (a colliding access takes the slot, and what it held
 * is forgotten: a race may go unseen, none is made up); each carries the
 * launch it is of, so nothing is cleared. */
struct global_use {
  uintptr_t tag;   /* the granule's number + 1; 0: empty */
  unsigned launch; /* the launch wblk, rblk and rmulti are of */
  unsigned wblk;   /* the block of the last store (linear), or NONE */
  unsigned rblk;   /* a block that read it, or NONE */
  unsigned rmulti; /* a second block read it */
  byte_use in;     /* within the block: as shared memory's */
};
enum : unsigned { NONE = ~0u };
enum : size_t { GLOBAL_SLOTS = (size_t)1 << 22 };
static global_use *gtab; /* GLOBAL_SLOTS, mapped at the first use */

/* Block blk of the running launch's grid as "(x,y,z)". */
static const char *block_name(unsigned blk) {
  static char buf[48];
  const dim3 gd = emu_here.grid_dim;
  snprintf(buf, sizeof buf, "(%u,%u,%u)", blk % gd.x, blk / gd.x % gd.y, blk / gd.x / gd.y);
  return buf;
}

/* Thread t's access of n bytes of global memory at p. */
static void global_access(unsigned t, const char *p, size_t n, bool write, const void *pc) {
  if (!gtab) {
    void *m = mmap(NULL, GLOBAL_SLOTS * sizeof *gtab, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      perror("cuda-emu: the global race check's table");
      abort();
    }
    gtab = (global_use *)m;
  }
  const char *verb = write ? "stores to" : "reads";
  const unsigned blk = g.blk;
  for (uintptr_t k = (uintptr_t)p / GRAIN; k * GRAIN < (uintptr_t)p + n; k++) {
    global_use &r = gtab[k % GLOBAL_SLOTS];
    if (r.tag != k + 1) r = global_use{k + 1, 0, NONE, NONE, 0, byte_use{}};
    const char *at = (const char *)(k * GRAIN) > p ? (const char *)(k * GRAIN) : p;
    if (r.launch != g.launch) r.launch = g.launch, r.wblk = r.rblk = NONE, r.rmulti = 0;
    if (r.wblk != NONE && r.wblk != blk) {
      char where[240];
      snprintf(where, sizeof where, "%s", space_name(at, true));
      fail(t, "%s %s that block %s stored to in the same launch (nothing orders two blocks; at %s)",
           verb, where, block_name(r.wblk), code_name(pc));
    }
    if (write && (r.rmulti || (r.rblk != NONE && r.rblk != blk))) {
      char where[240], who[64];
      snprintf(where, sizeof where, "%s", space_name(at, true));
      if (r.rblk != blk)
        snprintf(who, sizeof who, "block %s", block_name(r.rblk));
      else
        snprintf(who, sizeof who, "another block");
      fail(t, "%s %s that %s read in the same launch (nothing orders two blocks; at %s)", verb,
           where, who, code_name(pc));
    }
    if (write)
      r.wblk = blk;
    else if (r.rblk == NONE)
      r.rblk = blk;
    else if (r.rblk != blk)
      r.rmulti = 1;
    plain_check(t, at, true, r.in, write, false, verb, pc);
  }
}

/* The instrumentation's entry: a kernel's access, by the running thread
 * (one not in a kernel, or of its own stack, returns at the first tests). */
static inline __attribute__((always_inline)) void plain_hook(const void *p, size_t n, bool write,
                                                             const void *pc) {
  if (!in_grid || !g.cur) return;
  const uintptr_t a = (uintptr_t)p;
  if (a - (uintptr_t)stacks < slot * MAX_THREADS) return;
  if (a - plain_lo.load(std::memory_order_relaxed) < plain_span.load(std::memory_order_relaxed)) {
    plain_access((unsigned)(g.cur - cos), p, n, write, false, pc);
    return;
  }
  if (!plain_off && plain_global)
    global_access((unsigned)(g.cur - cos), (const char *)p, n, write, pc);
}

extern "C" {
void __tsan_init(void) {}
#define PLAIN_HOOKS(n)                                                                             \
  void __tsan_read##n(void *p) { plain_hook(p, n, false, __builtin_return_address(0)); }           \
  void __tsan_write##n(void *p) { plain_hook(p, n, true, __builtin_return_address(0)); }           \
  void __tsan_unaligned_read##n(void *p) { plain_hook(p, n, false, __builtin_return_address(0)); } \
  void __tsan_unaligned_write##n(void *p) { plain_hook(p, n, true, __builtin_return_address(0)); }
PLAIN_HOOKS(1)
PLAIN_HOOKS(2)
PLAIN_HOOKS(4)
PLAIN_HOOKS(8)
PLAIN_HOOKS(16)
#undef PLAIN_HOOKS
void __tsan_read_range(void *p, unsigned long n) {
  plain_hook(p, n, false, __builtin_return_address(0));
}
void __tsan_write_range(void *p, unsigned long n) {
  plain_hook(p, n, true, __builtin_return_address(0));
}
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
static const void *const *ldsm_rows(coro *c, const void *row, int num, unsigned *lane0, unsigned *l,
                                    const void *pc) {
  const unsigned t = (unsigned)(c - cos);
  *lane0 = t / WARP * WARP, *l = t - *lane0;
  if ((uintptr_t)row % 16) fail(t, "passes ldmatrix a row address %p not 16-byte aligned", row);
  if (*l < 8 * (unsigned)num) /* the lanes whose rows are read */
    plain_access(t, row, 16, false, false, pc, 0, "ldmatrix reads");
  const unsigned slot = ldsm.calls[t]++ % 2;
  ldsm.row[slot][t] = row;
  emu_ballot(1);
  return ldsm.row[slot];
}

void emu_ldmatrix(unsigned *r, int num, const void *row) {
  unsigned lane0, l;
  const void *const *rows =
      ldsm_rows(current("ldmatrix"), row, num, &lane0, &l, __builtin_return_address(0));
  for (int m = 0; m < num; m++) {
    const uint16_t *p = (const uint16_t *)rows[lane0 + 8 * m + l / 4];
    r[m] = (unsigned)p[l % 4 * 2] | (unsigned)p[l % 4 * 2 + 1] << 16;
  }
}

void emu_ldmatrix_trans(unsigned *r, int num, const void *row) {
  unsigned lane0, l;
  const void *const *rows =
      ldsm_rows(current("ldmatrix"), row, num, &lane0, &l, __builtin_return_address(0));
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
  if ((uintptr_t)dst % 16 || (uintptr_t)src % 16)
    fail(t, "cp.async of 16 bytes from %p to %p: both must be 16-byte aligned", src, dst);
  if (cpa.n[t] == CP_MAX)
    fail(t, "has %d cp.async copies in flight (the stand-in's limit)", CP_MAX);
  plain_access(t, dst, 16, true, true, __builtin_return_address(0), 0, "cp.async writes");
  plain_access(t, dst, 16, true, false, nullptr, +1);
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
      plain_access(t, e.dst, 16, true, false, nullptr, -1);
      plain_access(t, e.dst, 16, true, false, __builtin_return_address(0));
    } else {
      cpa.q[t][keep++] = e;
    }
  }
  cpa.n[t] = keep;
}

/* A coroutine: the kernel's body, then finished; never resumed after. */
static void co_main() {
  ASAN_ENTERED(nullptr, &sched_bottom, &sched_size);
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
  char *lo = stack_lo(t);
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
  fresh.n = 0;
  /* a new phase: the plain race check's records of earlier blocks go
   * stale (and none is of phase 0, which its fresh records carry) */
  g.phase++;
  memset(g.warp_epoch, 0, sizeof g.warp_epoch);
  memset(g.warp_syncwarp, 0, sizeof g.warp_syncwarp);
  plain_span.store(0, std::memory_order_relaxed);
  memset(g.warp_sync, 0, sizeof g.warp_sync);
  memset(g.warp_ballot, 0, sizeof g.warp_ballot);
  memset(g.warp_done, 0, sizeof g.warp_done);
  for (unsigned t = 0; t < g.n; t++) {
    p.thread.x = t;
    start(t, p);
  }
  /* A warp runs until every lane of it waits at __syncthreads or has
   * finished (its lanes in turn, again while a ballot released them), then
   * the next warp does; after a __syncthreads releases the block, the first
   * warp again. So between two barriers the warps run one after another in
   * the order chosen: a warp reads what another warp stored there only if
   * the other comes first in that order, not because the scheduler passed
   * over every thread at each ballot. */
  const bool rev = order_reverse();
  const unsigned warps = (g.n + WARP - 1) / WARP;
  unsigned idle = 0; /* warps in a row that had no lane to run */
  for (unsigned k = 0; g.done < g.n; k++) {
    const unsigned w = rev ? warps - 1 - k % warps : k % warps;
    const unsigned lo = w * WARP, hi = lo + WARP < g.n ? lo + WARP : g.n, phase = g.phase;
    bool ran = false, again = true;
    while (again && g.phase == phase) {
      again = false;
      for (unsigned i = lo; i < hi && g.phase == phase; i++) {
        const unsigned t = rev ? hi - 1 - (i - lo) : i;
        if (cos[t].state == RUNNABLE) resume(&cos[t]), ran = again = true;
      }
    }
    if (g.phase != phase) k = (unsigned)-1; /* released: the first warp next */
    idle = ran ? 0 : idle + 1;
    if (idle > warps) { /* not reached: each way to get here is reported above */
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
  const bool rev = order_reverse();
  g.launch++;
  if (plain_global < 0) plain_mode();
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        emu_here.block =
            rev ? dim3(grid.x - 1 - bx, grid.y - 1 - by, grid.z - 1 - bz) : dim3(bx, by, bz);
        g.blk = emu_here.block.x + grid.x * (emu_here.block.y + grid.y * emu_here.block.z);
        run_block();
      }
  emu_here = host;
#if defined(__x86_64__)
  __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
  __asm__ volatile("fldcw %0" : : "m"(fpucw));
#endif
  in_grid = false;
  plain_span.store(0, std::memory_order_relaxed);
}
