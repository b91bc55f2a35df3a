/* The CPU stand-in's launches and the runtime calls pgolf uses (see
 * emu.h). A launch's shape is checked here; its grid runs in grid.cpp
 * (blocks in turn, the threads of a block coroutines on the calling
 * thread). Launches, copies, sets and events are queued on streams and
 * run when the schedule (emu.h) says. */
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

/* ---- grids (run by ci/cuda_emu/grid.cpp) ---- */

enum { WARP = 32 };

/* The error of the last refused launch, for cudaGetLastError. */
static cudaError_t last_error = cudaSuccess;

/* The limits of every GPU since compute capability 3.0 (H100's included):
 * at most 1024 threads a block (x, y <= 1024, z <= 64), grid.x < 2^31,
 * grid.y and grid.z <= 65535, no zero extent; and the kernel's own
 * __launch_bounds__, which the driver reports as too many resources. A
 * grid past its limits is cudaErrorInvalidValue, as the CUDA 13 runtime
 * said on an H200 (2026-11-27, grid.y = 65536); a bad block or an empty
 * grid cudaErrorInvalidConfiguration. */
bool emu_launch_ok(dim3 grid, dim3 block, unsigned bounds, const char *name) {
  unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) {
    last_error = cudaErrorInvalidValue;
    return false;
  }
  if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z || block.x > 1024 ||
      block.y > 1024 || block.z > 64 || threads > 1024) {
    last_error = cudaErrorInvalidConfiguration;
    return false;
  }
  if (threads > bounds) {
    last_error = cudaErrorLaunchOutOfResources;
    return false;
  }
  if (block.y != 1 || block.z != 1 || block.x % WARP) {
    fprintf(stderr, "cuda-emu: %s: a block of %ux%ux%u threads, which the stand-in cannot run\n",
            name, block.x, block.y, block.z);
    abort();
  }
  return true;
}

/* ---- streams ---- */

typedef std::vector<uint64_t> vclock; /* per stream id: its operations ordered before */

static void join(vclock &a, const vclock &b) {
  if (a.size() < b.size()) a.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); i++)
    if (b[i] > a[i]) a[i] = b[i];
}

static uint64_t at(const vclock &v, int i) { return (size_t)i < v.size() ? v[(size_t)i] : 0; }

struct emu_stream;

/* A queued operation: work, or a wait for another stream to have run its
 * first wait_pos operations. */
struct emu_op {
  std::function<void()> fn;
  emu_stream *wait_on;
  uint64_t wait_pos;
};

struct emu_stream {
  int id;        /* its component of the clocks */
  bool legacy;   /* the legacy default stream */
  bool blocking; /* synchronises with the legacy stream (not cudaStreamNonBlocking) */
  std::deque<emu_op> q;
  uint64_t queued = 0, done = 0; /* operations queued and run, ever */
  vclock vc;                     /* the clock of its last queued operation */
  uint64_t legacy_seen = 0;      /* blocking: the legacy operations already waited for */
  std::map<int, uint64_t> seen;  /* legacy: each blocking stream's, the same */
  bool running = false;          /* one of its operations is running */
  std::string label;
};

struct emu_event {
  emu_stream *s = nullptr; /* of the last record; none: complete */
  uint64_t pos = 0;        /* complete once s has run this many */
  vclock vc;
};

/* Every stream ever created (destroyed ones are drained and kept: a wait
 * may still name them), the legacy and per-thread ones first. */
static std::vector<emu_stream *> streams;
static std::set<emu_stream *> live;
static vclock host_vc; /* what the host has seen complete */
static std::recursive_mutex lock_;

static emu_stream *new_stream(bool legacy, bool blocking, const char *label) {
  emu_stream *s = new emu_stream;
  s->id = (int)streams.size(), s->legacy = legacy, s->blocking = blocking, s->label = label;
  if (!legacy) s->label += " " + std::to_string(s->id);
  streams.push_back(s);
  live.insert(s);
  return s;
}

static void setup_streams(void) {
  if (!streams.empty()) return;
  new_stream(true, true, "the legacy default stream");
  new_stream(false, true, "cudaStreamPerThread");
}

/* A handle's stream: 0 and cudaStreamLegacy are the legacy stream,
 * cudaStreamPerThread one blocking stream (pgolf calls the runtime from
 * one host thread). An unknown handle aborts. */
static emu_stream *stream_of(cudaStream_t h) {
  setup_streams();
  if (h == 0 || h == cudaStreamLegacy) return streams[0];
  if (h == cudaStreamPerThread) return streams[1];
  emu_stream *s = (emu_stream *)(void *)h;
  if (!live.count(s)) {
    fprintf(stderr, "cuda-emu: %p is not a live stream\n", (void *)h);
    abort();
  }
  return s;
}

/* Run s's operations until it has run pos of them; a wait runs the
 * stream it waits for first. No cycle: a wait names operations queued
 * before it, so a stream is never asked for more while one of its own
 * operations is running. */
static void run_until(emu_stream *s, uint64_t pos) {
  while (s->done < pos) {
    if (s->running) {
      fprintf(stderr, "cuda-emu: %s waits for itself\n", s->label.c_str());
      abort();
    }
    emu_op op = std::move(s->q.front());
    s->q.pop_front();
    s->running = true;
    if (op.wait_on)
      run_until(op.wait_on, op.wait_pos);
    else
      op.fn();
    s->running = false;
    s->done++;
  }
}

static void drain(emu_stream *s) { run_until(s, s->queued); }

static void drain_all(void) {
  for (emu_stream *s : streams) drain(s);
  for (emu_stream *s : streams) join(host_vc, s->vc);
}

/* ---- the schedule ---- */

enum schedule_kind { LAZY, EAGER, RANDOM };
static schedule_kind schedule = LAZY;
static uint64_t rng;
static bool schedule_read;

void emu_set_schedule(const char *v) {
  std::lock_guard<std::recursive_mutex> hold(lock_);
  schedule_read = true;
  if (!v || !*v || !strcmp(v, "lazy"))
    schedule = LAZY;
  else if (!strcmp(v, "eager"))
    schedule = EAGER;
  else if (!strncmp(v, "random:", 7))
    schedule = RANDOM, rng = strtoull(v + 7, NULL, 10) * 2 + 1;
  else {
    fprintf(stderr, "cuda-emu: CUDA_EMU_SCHEDULE=%s: lazy, eager or random:SEED\n", v);
    abort();
  }
}

static uint64_t next_random(void) { /* xorshift64* */
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}

/* Under random:N, a random prefix of some streams' queues. */
static void run_some(void) {
  for (emu_stream *s : streams) {
    uint64_t left = s->queued - s->done;
    if (left && next_random() % 2) run_until(s, s->done + 1 + next_random() % left);
  }
}

/* At every runtime call: the schedule read once, then random work. */
static void tick(void) {
  setup_streams();
  if (!schedule_read) emu_set_schedule(getenv("CUDA_EMU_SCHEDULE"));
  if (schedule == RANDOM) run_some();
}

#define ENTER()                                       \
  std::lock_guard<std::recursive_mutex> hold_(lock_); \
  tick()

/* ---- allocations and the race check ---- */

/* One access in an allocation's history: the operation's stream, its
 * place there, and its name. */
struct use {
  int stream;
  uint64_t seq;
  std::string what;
};

struct emu_alloc {
  size_t bytes = 0;
  bool pinned = false;
  bool written = false;
  use write;
  std::vector<use> reads; /* since the write, the latest of each stream */
};

static std::map<uintptr_t, emu_alloc> allocs;
enum race_mode { RACE_ABORT, RACE_WARN, RACE_OFF };
static race_mode races_mode = RACE_ABORT;
static bool races_read;
static unsigned long races_seen;

void emu_set_races(const char *v) {
  std::lock_guard<std::recursive_mutex> hold(lock_);
  races_read = true;
  if (!v || !*v || !strcmp(v, "abort"))
    races_mode = RACE_ABORT;
  else if (!strcmp(v, "warn"))
    races_mode = RACE_WARN;
  else if (!strcmp(v, "off"))
    races_mode = RACE_OFF;
  else {
    fprintf(stderr, "cuda-emu: CUDA_EMU_RACES=%s: abort, warn or off\n", v);
    abort();
  }
}

unsigned long emu_races(void) { return races_seen; }

/* The allocation holding p, or null (pageable host memory). */
static emu_alloc *alloc_of(const void *p, uintptr_t *base = nullptr) {
  auto it = allocs.upper_bound((uintptr_t)p);
  if (it == allocs.begin()) return nullptr;
  --it;
  if ((uintptr_t)p >= it->first + (it->second.bytes ? it->second.bytes : 1)) return nullptr;
  if (base) *base = it->first;
  return &it->second;
}

void emu_device_where(const void *p, char *buf, size_t n) {
  uintptr_t base = 0;
  const emu_alloc *a = alloc_of(p, &base);
  if (a)
    snprintf(buf, n, "%zu bytes into %s allocation of %zu at %#zx", (size_t)((uintptr_t)p - base),
             a->pinned ? "a pinned host" : "a device", a->bytes, (size_t)base);
  else
    snprintf(buf, n, "%p, in no allocation", p);
}

static void report(const use &before, const char *kind, const emu_stream *s, const char *name,
                   uintptr_t base, const emu_alloc *a) {
  races_seen++;
  fprintf(stderr,
          "cuda-emu: race: %s on %s and %s on %s %s the %zu bytes at %p with no event or "
          "synchronisation between them\n",
          before.what.c_str(), streams[(size_t)before.stream]->label.c_str(), name,
          s->label.c_str(), kind, a->bytes, (void *)base);
  if (races_mode == RACE_ABORT) abort();
}

/* s's newest operation (clock s->vc) makes the accesses acc: each must be
 * ordered after the last write of its allocation, and a write after the
 * reads since. */
static void check(emu_stream *s, const char *name, const std::vector<emu_access> &acc) {
  if (!races_read) emu_set_races(getenv("CUDA_EMU_RACES"));
  if (races_mode == RACE_OFF) return;
  uint64_t seq = s->queued;
  for (const emu_access &x : acc) {
    uintptr_t base;
    emu_alloc *a = alloc_of(x.p, &base);
    if (!a) continue;
    if (a->written && at(s->vc, a->write.stream) < a->write.seq)
      report(a->write, x.write ? "both write" : "write then read", s, name, base, a);
    if (x.write) {
      for (const use &r : a->reads)
        if (at(s->vc, r.stream) < r.seq) report(r, "read then write", s, name, base, a);
      a->written = true, a->write = {s->id, seq, name};
      a->reads.clear();
      continue;
    }
    bool found = false;
    for (use &r : a->reads)
      if (r.stream == s->id) r.seq = seq, r.what = name, found = true;
    if (!found) a->reads.push_back({s->id, seq, name});
  }
}

/* ---- queueing ---- */

/* Append op to s: the clock of s's previous operation, the host's, and
 * extra (an event waited for) ordered before it. */
static void push(emu_stream *s, emu_op op, const vclock *extra = nullptr) {
  join(s->vc, host_vc);
  if (extra) join(s->vc, *extra);
  s->q.push_back(std::move(op));
  s->queued++;
  if (s->vc.size() <= (size_t)s->id) s->vc.resize((size_t)s->id + 1, 0);
  s->vc[(size_t)s->id] = s->queued;
}

/* The legacy stream's implicit synchronisation: an operation on a
 * blocking stream waits for the legacy stream's earlier work, one on the
 * legacy stream for every blocking stream's. */
static void implicit_waits(emu_stream *s) {
  if (s->legacy) {
    for (emu_stream *b : streams)
      if (b != s && b->blocking && live.count(b) && b->queued > s->seen[b->id]) {
        s->seen[b->id] = b->queued;
        push(s, {nullptr, b, b->queued}, &b->vc);
      }
  } else if (s->blocking) {
    emu_stream *l = streams[0];
    if (l->queued > s->legacy_seen) {
      s->legacy_seen = l->queued;
      push(s, {nullptr, l, l->queued}, &l->vc);
    }
  }
}

/* CUDA_EMU_TALLY=path: every operation queued (a launch by its kernel's
 * name, a GEMM, a copy, a set) counted by name and written to path at
 * exit, "count name" a line, most first: how many launches a program
 * makes, a figure that does not depend on the hardware. */
static std::map<std::string, unsigned long> *tally;
static const char *tally_path;

static void tally_write(void) {
  std::vector<std::pair<unsigned long, std::string>> rows;
  for (const auto &kv : *tally) rows.push_back({kv.second, kv.first});
  std::sort(rows.begin(), rows.end(),
            [](const auto &x, const auto &y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  FILE *f = fopen(tally_path, "w");
  if (!f) {
    fprintf(stderr, "cuda-emu: CUDA_EMU_TALLY: cannot write %s\n", tally_path);
    return;
  }
  for (const auto &r : rows) fprintf(f, "%lu %s\n", r.first, r.second.c_str());
  fclose(f);
}

static void tally_count(const char *name) {
  static bool read;
  if (!read) {
    read = true;
    tally_path = getenv("CUDA_EMU_TALLY");
    if (tally_path && *tally_path) {
      tally = new std::map<std::string, unsigned long>;
      atexit(tally_write);
    }
  }
  if (tally) (*tally)[name ? name : "(unnamed)"]++;
}

/* Queue work on s (its accesses checked), run at once under eager. */
static void queue_work(emu_stream *s, const char *name, const std::vector<emu_access> &acc,
                       std::function<void()> fn) {
  tally_count(name);
  implicit_waits(s);
  push(s, {std::move(fn), nullptr, 0});
  check(s, name, acc);
  if (schedule == EAGER) drain(s);
}

void emu_enqueue(cudaStream_t h, const char *name, std::vector<emu_access> acc,
                 std::function<void()> fn) {
  ENTER();
  queue_work(stream_of(h), name, acc, std::move(fn));
}

/* The host synchronised with s: what s has queued is seen done. */
static void host_saw(emu_stream *s) { join(host_vc, s->vc); }

/* A copy of n bytes from src to dst queued on s. A pageable host source is
 * staged now (the runtime copies it into its own pinned buffer before the
 * call returns); device and pinned sources are read when the copy runs. */
static void queue_copy(emu_stream *s, void *dst, const void *src, size_t n, const char *name) {
  std::function<void()> fn;
  if (alloc_of(src) || n == 0) {
    fn = [dst, src, n]() { memmove(dst, src, n); };
  } else {
    auto staged = std::make_shared<std::vector<char>>((const char *)src, (const char *)src + n);
    fn = [dst, staged, n]() { memcpy(dst, staged->data(), n); };
  }
  queue_work(s, name, {{src, false}, {dst, true}}, std::move(fn));
}

/* ---- the runtime ---- */

/* One device, or CUDA_EMU_DEVICES (for the multi-GPU runs, whose processes
 * each take one: every "device" is this host). */
static int emu_devices(void) {
  const char *v = getenv("CUDA_EMU_DEVICES");
  int n = v ? atoi(v) : 1;
  return n >= 1 && n <= 64 ? n : 1;
}
static int emu_current;

/* Fresh memory of n bytes, set to 0xff (float NaNs) as a GPU's is garbage. */
static void *new_memory(size_t n, bool pinned) {
  void *p = malloc(n ? n : 1);
  if (!p) return nullptr;
  memset(p, 0xff, n ? n : 1);
  emu_alloc &a = allocs[(uintptr_t)p];
  a.bytes = n, a.pinned = pinned;
  return p;
}

/* Free after the whole device has finished (cudaFree synchronises). */
static cudaError_t free_memory(void *p, bool pinned) {
  if (!p) return cudaSuccess;
  drain_all();
  auto it = allocs.find((uintptr_t)p);
  if (it == allocs.end() || it->second.pinned != pinned) return cudaErrorInvalidValue;
  allocs.erase(it);
  free(p);
  return cudaSuccess;
}

extern "C" {
/* CUDA_VISIBLE_DEVICES set but naming no device (empty, or starting with
 * a negative index) hides them all, as the real runtime does. */
static bool emu_hidden(void) {
  const char *v = getenv("CUDA_VISIBLE_DEVICES");
  return v && (*v == 0 || *v == '-');
}
cudaError_t cudaGetDeviceCount(int *n) {
  if (emu_hidden()) return *n = 0, cudaErrorNoDevice;
  return *n = emu_devices(), cudaSuccess;
}
cudaError_t cudaSetDevice(int i) {
  if (i < 0 || i >= emu_devices()) return cudaErrorInvalidDevice;
  return emu_current = i, cudaSuccess;
}
cudaError_t cudaGetDevice(int *i) { return *i = emu_current, cudaSuccess; }
cudaError_t cudaGetLastError(void) {
  ENTER();
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }

cudaError_t cudaMalloc(void **p, size_t n) {
  ENTER();
  return (*p = new_memory(n, false)) ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocHost(void **p, size_t n) {
  ENTER();
  return (*p = new_memory(n, true)) ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  return cudaMallocHost(p, n);
}
cudaError_t cudaFree(void *p) {
  ENTER();
  return free_memory(p, false);
}
cudaError_t cudaFreeHost(void *p) {
  ENTER();
  return free_memory(p, true);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t s) {
  ENTER();
  (void)kind;
  queue_copy(stream_of(s), dst, src, n, "cudaMemcpyAsync");
  return cudaSuccess;
}

/* On the legacy stream, host-synchronous as the runtime documents it: a
 * copy to the host, or from pinned memory, or host to host, has finished
 * when it returns; one from pageable memory to the device has only staged
 * its source; one from device to device has only been queued. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  ENTER();
  (void)kind;
  emu_stream *l = streams[0];
  emu_alloc *from = alloc_of(src), *to = alloc_of(dst);
  bool d2d = from && !from->pinned && to && !to->pinned;
  bool h2d_pageable = !from && to && !to->pinned;
  queue_copy(l, dst, src, n, "cudaMemcpy");
  if (d2d) return cudaSuccess;
  if (h2d_pageable) { /* the copies before it have run ("a stream sync") */
    run_until(l, l->queued - 1);
    return cudaSuccess;
  }
  drain(l);
  host_saw(l);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
  ENTER();
  queue_work(stream_of(s), "cudaMemsetAsync", {{p, true}}, [p, v, n]() { memset(p, v, n); });
  return cudaSuccess;
}

/* On the legacy stream; asynchronous to the host unless p is pinned. */
cudaError_t cudaMemset(void *p, int v, size_t n) {
  ENTER();
  emu_stream *l = streams[0];
  queue_work(l, "cudaMemset", {{p, true}}, [p, v, n]() { memset(p, v, n); });
  emu_alloc *a = alloc_of(p);
  if (a && a->pinned) drain(l), host_saw(l);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  ENTER();
  drain_all();
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  ENTER();
  emu_stream *s = stream_of(h);
  drain(s);
  host_saw(s);
  return cudaSuccess;
}

/* Lazy and eager: the stream is run to its end (a legal schedule: the
 * work could have finished by now). Random: a random part of it. */
cudaError_t cudaStreamQuery(cudaStream_t h) {
  ENTER();
  emu_stream *s = stream_of(h);
  if (schedule == RANDOM && s->done < s->queued)
    run_until(s, s->done + next_random() % (s->queued - s->done + 1));
  else
    drain(s);
  if (s->done < s->queued) return cudaErrorNotReady;
  host_saw(s);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *h, unsigned flags) {
  ENTER();
  bool blocking = !(flags & cudaStreamNonBlocking);
  *h = (cudaStream_t)(void *)new_stream(false, blocking,
                                        blocking ? "blocking stream" : "non-blocking stream");
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *h) {
  return cudaStreamCreateWithFlags(h, cudaStreamDefault);
}

/* Work still queued completes anyway (the runtime releases the stream
 * when it is done): run it now, and keep the record, which waits may
 * still name. */
cudaError_t cudaStreamDestroy(cudaStream_t h) {
  ENTER();
  emu_stream *s = stream_of(h);
  if (s->id < 2) return cudaErrorInvalidResourceHandle;
  drain(s);
  live.erase(s);
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  *e = (cudaEvent_t)(void *)new emu_event;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  ENTER();
  delete (emu_event *)(void *)e;
  return cudaSuccess;
}

/* The event completes when s has run everything queued on it so far (a
 * record is an operation of s, after the legacy stream's implicit waits). */
cudaError_t cudaEventRecord(cudaEvent_t h, cudaStream_t st) {
  ENTER();
  emu_event *e = (emu_event *)(void *)h;
  emu_stream *s = stream_of(st);
  queue_work(s, "cudaEventRecord", {}, []() {});
  e->s = s, e->pos = s->queued, e->vc = s->vc;
  return cudaSuccess;
}

/* Work queued on s after this waits for the event's record as it is now;
 * an event never recorded is complete. */
cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t h, unsigned flags) {
  ENTER();
  (void)flags;
  emu_event *e = (emu_event *)(void *)h;
  emu_stream *s = stream_of(st);
  if (!e->s) return cudaSuccess;
  implicit_waits(s);
  push(s, {nullptr, e->s, e->pos}, &e->vc);
  if (schedule == EAGER) drain(s);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t h) {
  ENTER();
  emu_event *e = (emu_event *)(void *)h;
  if (!e->s) return cudaSuccess;
  run_until(e->s, e->pos);
  join(host_vc, e->vc);
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t h) {
  ENTER();
  emu_event *e = (emu_event *)(void *)h;
  if (!e->s) return cudaSuccess;
  if (schedule == RANDOM && e->s->done < e->pos)
    run_until(e->s, e->s->done + next_random() % (e->pos - e->s->done + 1));
  else
    run_until(e->s, e->pos);
  if (e->s->done < e->pos) return cudaErrorNotReady;
  join(host_vc, e->vc);
  return cudaSuccess;
}

/* The names of the errors the stand-in returns. */
const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  case cudaErrorNotReady: return "cudaErrorNotReady";
  case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
  case cudaErrorNoDevice: return "cudaErrorNoDevice";
  default: return "cudaErrorUnknown";
  }
}
const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument (emulated)";
  case cudaErrorLaunchOutOfResources: return "too many resources requested for launch (emulated)";
  case cudaErrorNotReady: return "device not ready (emulated)";
  case cudaErrorInvalidValue: return "invalid argument (emulated)";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected (emulated)";
  default: return "emulated error";
  }
}
cudaError_t cudaRuntimeGetVersion(int *v) { return *v = CUDART_VERSION, cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { return *v = 0, cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int i) {
  if (i < 0 || i >= emu_devices()) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "cuda-emu (CPU)");
  p->pciDeviceID = i; /* tells the stand-in's devices apart in a record */
  return cudaSuccess;
}
}
