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
#define EMU_EXPORT extern "C" __attribute__((visibility("default")))
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

// Context switch. On x86-64 a few instructions save the callee-saved
// registers and swap stacks (no signal-mask syscall, unlike swapcontext,
// which keeps reductions with many barriers fast); elsewhere ucontext.
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
extern "C" void emu_switch(void** save_sp, void* load_sp);
asm(R"(
.text
.globl emu_switch
.hidden emu_switch
.type emu_switch,@function
emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size emu_switch, .-emu_switch
)");
struct Context {
  void* sp = nullptr;
};
inline void ctx_switch(Context& from, Context& to) { emu_switch(&from.sp, to.sp); }
inline void ctx_make(Context& c, std::vector<char>& stack, void (*fn)(), Context*) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack.data()) + stack.size()) & ~uintptr_t(15);
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                          // fake return address of fn (never returns)
  *--sp = reinterpret_cast<void*>(fn);      // emu_switch's `ret` jumps here
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12-r15
  c.sp = sp;
}
#else
struct Context {
  ucontext_t uc;
};
inline void ctx_switch(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
inline void ctx_make(Context& c, std::vector<char>& stack, void (*fn)(), Context* link) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack.data();
  c.uc.uc_stack.ss_size = stack.size();
  c.uc.uc_link = &link->uc;
  makecontext(&c.uc, fn, 0);
}
#endif

struct Fiber {
  Context ctx;
  std::vector<char> stack;
  State state = DONE;
};

inline Context main_ctx;
inline std::vector<Fiber> fibers;
inline unsigned current = 0;
inline std::function<void()> body;
inline std::string error;
// Shuffle exchange slots, two per warp used alternately: a lane can only reuse
// a slot after a later barrier every lane of its warp has passed, so one
// barrier per shuffle suffices.
inline unsigned long long warp_buf[32][2][32];  // [warp][parity][lane]
inline unsigned warp_parity[1024];               // per thread
inline constexpr size_t kStack = 128 * 1024;

inline void yield(State s) {
  fibers[current].state = s;
  ctx_switch(fibers[current].ctx, main_ctx);
}

[[noreturn]] inline void entry() {
  body();
  fibers[current].state = DONE;
  ctx_switch(fibers[current].ctx, main_ctx);
  __builtin_unreachable();
}

// Run one block; false (and `error` set) on a barrier not all threads reach.
inline bool run_block(unsigned nthreads) {
  for (unsigned t = 0; t < nthreads; ++t) {
    ctx_make(fibers[t].ctx, fibers[t].stack, entry, &main_ctx);
    fibers[t].state = RUNNABLE;
    warp_parity[t] = 0;
  }
  for (;;) {
    for (unsigned t = 0; t < nthreads; ++t) {
      if (fibers[t].state != RUNNABLE) continue;
      current = t;
      threadIdx.x = t;
      ctx_switch(main_ctx, fibers[t].ctx);
    }
    // everyone is now at a barrier or done: release complete barriers
    unsigned done = 0, at_block = 0, at_warp = 0;
    for (unsigned t = 0; t < nthreads; ++t) {
      done += fibers[t].state == DONE;
      at_block += fibers[t].state == AT_BLOCK;
      at_warp += fibers[t].state == AT_WARP;
    }
    if (done == nthreads) return true;
    bool released = false;
    if (at_block == nthreads) {
      for (unsigned t = 0; t < nthreads; ++t) fibers[t].state = RUNNABLE;
      released = true;
    }
    for (unsigned w = 0; w * 32 < nthreads; ++w) {
      unsigned n = 0;
      for (unsigned t = w * 32; t < w * 32 + 32; ++t) n += fibers[t].state == AT_WARP;
      if (n == 32) {
        for (unsigned t = w * 32; t < w * 32 + 32; ++t) fibers[t].state = RUNNABLE;
        released = true;
      }
    }
    if (!released) {  // nothing can run: a barrier some threads never reach
      error = "block " + std::to_string(blockIdx.x) + ": divergent barrier (deadlock): " +
              std::to_string(done) + " threads exited, " + std::to_string(at_block) +
              " wait at __syncthreads, " + std::to_string(at_warp) + " at a warp shuffle";
      return false;
    }
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
  unsigned& parity = emu::warp_parity[threadIdx.x];
  if (mask != 0xffffffffu || width != 32) emu::error = "only full-warp shuffles are emulated";
  unsigned long long slot = 0;
  memcpy(&slot, &v, sizeof(T));
  emu::warp_buf[warp][parity][lane] = slot;
  emu::yield(emu::AT_WARP);
  T r = v;
  if (lane + delta < 32) memcpy(&r, &emu::warp_buf[warp][parity][lane + delta], sizeof(T));
  parity ^= 1u;
  return r;
}
