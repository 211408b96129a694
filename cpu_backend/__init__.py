"""LLVM-JIT CPU backend: kernel IR -> LLVM IR (llvmlite) -> MCJIT, thread-parallel.

Modules, in pipeline order:
  lowering.py      per-op emitters (the registration for scheduler.ops), casts
  vmath.py         vectorizable exp/log/tanh/sin/cos (libm calls would stop vectorization)
  sincos.py        sin/cos/tan as calls the vectorizer widens to our vector versions
  invtrig.py       vectorizable asin/acos/atan/atan2 (Cephes, computed in float64)
  reduction.py     accumulator rules for the reductions, one or several side by side
  codegen.py       the entry signature, row x innermost-axis flat-range loops, loop hints
  loops.py         location helpers, the elementwise body, blocked argmax
  reduce_loops.py  reduction nest: per-element or tiled-along-out loop order
  row_loops.py     one row's reduction loop: blocked sums, max/min, logsumexp, siblings
  keys.py          structural cache keys and "what was new" on a miss
  jit.py           host target machine, -O2 new pass manager, MCJIT, caches
  diskcache.py     fail-soft on-disk object cache
  pack.py          per-structure argument packing (pack_launch without arg_layout per call)
  launch.py        thread pool and work splitting (out range or reduce range); kernels
                   with Output.pos (indexed stores) run on one thread, in C order
  backend.py       CPUBackend, the scheduler.backend.Backend protocol
  bench.py         `python -m cpu_backend.bench`: timings vs NumPy / numexpr

Environment: LAZY_NUM_THREADS (worker threads, default os.cpu_count()),
LAZY_CACHE_DIR (object cache, default ~/.cache/lazyrt/llvm), LAZY_DISK_CACHE=0
(no object cache).
"""
from .backend import CPUBackend

__all__ = ["CPUBackend"]
