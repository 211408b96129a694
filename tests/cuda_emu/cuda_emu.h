// A small host emulation of the CUDA thread model, enough to run the kernels
// cuda_backend generates on the CPU (tests only; no GPU needed).
//
// Every CUDA thread of a block is a fiber (ucontext) on one OS thread; the
// block's fibers run round-robin until each reaches a barrier or exits.
// __syncthreads() is a barrier over the whole block, __shfl_down_sync() a
// barrier over the warp's 32 lanes (write own value, wait, read lane+delta,
// wait). A barrier that not every thread of its block or warp reaches is
// reported as an error (deadlock / divergent barrier) instead of hanging, so
// the emulation also checks the generator's barrier discipline. Blocks run one
// after another, so a `__shared__` variable is a function-local static: one
// copy, reused by each block in turn (a final barrier separates blocks).
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include <functional>
#include <string>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

inline dim3 threadIdx, blockIdx, blockDim, gridDim;

inline double __longlong_as_double(long long b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}
inline long long __double_as_longlong(double d) {
  long long b;
  memcpy(&b, &d, sizeof b);
  return b;
}

namespace emu {

enum State { RUNNABLE, AT_BLOCK, AT_WARP, DONE };

struct Fiber {
  ucontext_t ctx;
  std::vector<char> stack;
  State state = DONE;
};

inline ucontext_t main_ctx;
inline std::vector<Fiber> fibers;
inline unsigned current = 0;
inline std::function<void()> body;
inline std::string error;
inline unsigned long long warp_buf[32][32];  // [warp][lane]
inline constexpr size_t kStack = 256 * 1024;

inline void yield(State s) {
  fibers[current].state = s;
  swapcontext(&fibers[current].ctx, &main_ctx);
}

inline void entry() {
  body();
  fibers[current].state = DONE;
  // returning resumes uc_link (main_ctx)
}

// Run one block; false (and `error` set) on a barrier not all threads reach.
inline bool run_block(unsigned nthreads) {
  for (unsigned t = 0; t < nthreads; ++t) {
    Fiber& f = fibers[t];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = &main_ctx;
    makecontext(&f.ctx, entry, 0);
    f.state = RUNNABLE;
  }
  for (;;) {
    bool any = false;
    for (unsigned t = 0; t < nthreads; ++t) {
      if (fibers[t].state != RUNNABLE) continue;
      any = true;
      current = t;
      threadIdx.x = t;
      swapcontext(&main_ctx, &fibers[t].ctx);
    }
    // everyone is now at a barrier or done: release complete barriers
    unsigned done = 0, at_block = 0;
    for (unsigned t = 0; t < nthreads; ++t) {
      done += fibers[t].state == DONE;
      at_block += fibers[t].state == AT_BLOCK;
    }
    if (done == nthreads) return true;
    bool released = false;
    if (at_block == nthreads) {
      for (unsigned t = 0; t < nthreads; ++t) fibers[t].state = RUNNABLE;
      released = true;
    }
    for (unsigned w = 0; w * 32 < nthreads; ++w) {
      unsigned lo = w * 32, hi = lo + 32 < nthreads ? lo + 32 : nthreads, n = 0;
      for (unsigned t = lo; t < hi; ++t) n += fibers[t].state == AT_WARP;
      if (n == 32) {
        for (unsigned t = lo; t < hi; ++t) fibers[t].state = RUNNABLE;
        released = true;
      }
    }
    if (!released) {  // nothing can run: a barrier some threads never reach
      error = "block " + std::to_string(blockIdx.x) + ": deadlock: " + std::to_string(done) +
              " threads exited, " + std::to_string(at_block) +
              " wait at __syncthreads, the rest at a warp barrier (divergent barrier)";
      return false;
    }
    (void)any;
  }
}

inline int launch(unsigned grid, unsigned block, std::function<void()> kernel) {
  if (block == 0 || block % 32 || block > 1024) {
    error = "block size must be a positive multiple of 32, at most 1024";
    return 1;
  }
  error.clear();
  if (fibers.size() < block) {
    fibers.resize(block);
    for (auto& f : fibers) f.stack.resize(kStack);
  }
  body = std::move(kernel);
  gridDim.x = grid;
  blockDim.x = block;
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx.x = b;
    if (!run_block(block)) return 2;
  }
  return error.empty() ? 0 : 3;
}

}  // namespace emu

inline void __syncthreads() { emu::yield(emu::AT_BLOCK); }

template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (mask != 0xffffffffu || width != 32) emu::error = "only full-warp shuffles are emulated";
  unsigned long long slot = 0;
  memcpy(&slot, &v, sizeof(T));
  emu::warp_buf[warp][lane] = slot;
  emu::yield(emu::AT_WARP);
  T r = v;
  if (lane + delta < 32) memcpy(&r, &emu::warp_buf[warp][lane + delta], sizeof(T));
  emu::yield(emu::AT_WARP);
  return r;
}
