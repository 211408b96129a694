"""Run time of lazyrt's code against another code generation, in one process.

    python benchmarks/codegen_ab.py [--rounds 21] [--b lsr|llvm-vectorizer|prefer-256|same]
                                    [--only W3,W4]

Every workload's kernels are compiled a second time, in a JIT that differs
in one choice (B), and each launch is sent to one or the other address,
alternating A-B and B-A per round, so that both see the same load. It
prints kernel-time medians and A/B (A: lazyrt's code; > 1: A is slower).
B is one of:

- `lsr`: LLVM's Loop Strength Reduction on (lazyrt turns it off:
  cpu_backend/jit.py, `without_lsr`);
- `llvm-vectorizer`: no simd.py vector loops, every loop left to LLVM's
  loop vectorizer as before;
- `no-page-prefetch`: float32 row sums do not prefetch across 4 KB pages
  (loops.prefetch_ahead); the "4 KB pages" workloads read memory without
  huge pages, where it matters;
- `prefer-256`: loops LLVM vectorizes use 256-bit vectors at most (LLVM's
  tuning for Intel server cores; lazyrt asks for 512-bit ones where the
  host has AVX-512: cpu_backend/jit.py, `_features`);
- `same`: lazyrt's code again, so every ratio should be 1.00 within noise,
  which checks the harness itself (a variant mapped to the wrong twin once
  made "B" look 20-45% slower).

docs/performance_history.md ("Compile latency without LSR", "The generator's own
vector loops", "Prefetching across 4 KB pages", "512-bit vector loops on
Intel") has results.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import mmap
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazy  # noqa: E402
from cpu_backend import jit as J, loops, simd  # noqa: E402
from scheduler.backends import _llvm  # noqa: E402
from workloads import rng_f32, w2_lazy  # noqa: E402


class WithLSR(J.JIT):
    """A JIT whose code generation runs LLVM's LSR (the default without lazyrt)."""

    def _build(self, kernel, key, variant):
        saved, J.without_lsr = J.without_lsr, contextlib.nullcontext
        try:
            return super()._build(kernel, key, variant)
        finally:
            J.without_lsr = saved


class LLVMVectorizer(J.JIT):
    """A JIT that writes no vector loops itself (simd.lanes is None): LLVM's
    loop vectorizer widens every loop, as before simd.py."""

    def _build(self, kernel, key, variant):
        saved, simd.lanes = simd.lanes, lambda k: None
        try:
            return super()._build(kernel, key, variant)
        finally:
            simd.lanes = saved


class NoPagePrefetch(J.JIT):
    """A JIT whose float32 row sums do not prefetch across 4 KB pages
    (loops.PAGE_PREFETCH = 0)."""

    def _build(self, kernel, key, variant):
        saved, loops.PAGE_PREFETCH = loops.PAGE_PREFETCH, 0
        try:
            return super()._build(kernel, key, variant)
        finally:
            loops.PAGE_PREFETCH = saved


class Prefer256(J.JIT):
    """A JIT whose loop vectorizer prefers 256-bit vectors, as LLVM's tuning
    for Intel's AVX-512 server cores does (lazyrt turns that off:
    jit._features, "-prefer-256-bit")."""

    def __init__(self, cache_dir=None):
        saved = J._features
        J._features = lambda: saved().replace("-prefer-256-bit", "+prefer-256-bit")
        try:
            super().__init__(cache_dir)
        finally:
            J._features = saved


B_JITS = {"lsr": WithLSR, "llvm-vectorizer": LLVMVectorizer, "no-page-prefetch": NoPagePrefetch,
          "prefer-256": Prefer256, "same": J.JIT}


def small_pages(a: np.ndarray) -> np.ndarray:
    """A copy of `a` in memory that the kernel backs with 4 KB pages only
    (MADV_NOHUGEPAGE before the first touch), as every array is on a system
    with transparent huge pages off; NumPy's large arrays here get huge
    pages. Elsewhere than Linux, a plain copy."""
    raw = np.empty(a.nbytes + mmap.PAGESIZE, np.uint8)
    start = -raw.ctypes.data % mmap.PAGESIZE
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.madvise(out.ctypes.data, a.nbytes, 15)  # MADV_NOHUGEPAGE
    out[...] = a
    return out


def workloads() -> dict:
    X, A, Y = (lazy.asarray(rng_f32(i, *s)) for i, s in
               enumerate([(10_000_000, 2), (4096, 4096), (100_000, 128)]))
    a, b, c, b20, c20 = (lazy.asarray(rng_f32(3 + i, n)) for i, n in
                         enumerate([10_000_000] * 3 + [20_000_000] * 2))
    rng = np.random.default_rng(8)
    P = lazy.asarray(rng.uniform(0.1, 10, 4_000_000).astype(np.float32))
    Q = lazy.asarray(rng.uniform(-3, 3, 4_000_000).astype(np.float32))
    D = lazy.asarray(rng.standard_normal(4_000_000))
    Z = lazy.asarray(rng_f32(9, 1_000_000, 20))
    S = lazy.asarray(small_pages(rng_f32(1, 4096, 4096)))
    return {
        "W1": lambda: X[:, 0] ** 2 + X[:, 1] ** 3,
        "W2": lambda: w2_lazy(a, b, c),
        "W3 row sum": lambda: A.sum(axis=1),
        "W3 full sum": lambda: A.sum(),
        "column sum": lambda: A.sum(axis=0),
        "W3 row sum, 4 KB pages": lambda: S.sum(axis=1),
        "W3 full sum, 4 KB pages": lambda: S.sum(),
        "W4 softmax, 4 KB pages": lambda: (lambda e: e / e.sum(axis=1, keepdims=True))(
            lazy.exp(S - S.max(axis=1, keepdims=True))),
        "W4 softmax": lambda: (lambda e: e / e.sum(axis=1, keepdims=True))(
            lazy.exp(A - A.max(axis=1, keepdims=True))),
        "W5 A + A.T": lambda: A + A.T,
        "W8 triad": lambda: b20 + 3.0 * c20,
        "argmax rows": lambda: A.argmax(axis=1),
        "reversed": lambda: A[::-1, ::-1] * 2,
        "stride 2": lambda: X[:, 0] * 2,
        "rows of 37": lambda: Y[:, 5:42] * 2 + 1,
        "rows of 20": lambda: Z * 2 + 1,
        "float pow": lambda: P ** Q,
        "float64 exp": lambda: lazy.exp(D) * 0.5,
        "float32 sin": lambda: lazy.sin(P),
    }


def twin_addresses(jit: J.JIT, other: J.JIT) -> dict[int, int]:
    """address in `jit` -> the same kernel's (and variant's) address in `other`.
    Variants are cache entries of their own; they are reached through their
    base entry, never mapped to the other JIT's base kernel."""
    variants = {id(v) for c in jit._cache.values() for v in c.variants.values()}
    twins = {}
    for c in list(jit._cache.values()):
        if id(c) in variants:
            continue
        t, _ = other.compile(c.kernel)
        twins[c.address] = t.address
        for variant, v in c.variants.items():
            twins[v.address] = other.variant(t, variant).address
    return twins


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--only", default="", help="comma-separated workload names (substrings) to run")
    p.add_argument("--b", choices=sorted(B_JITS), default="llvm-vectorizer",
                   help="what the second JIT changes (same: nothing, a harness check)")
    args = p.parse_args()
    backend = _llvm()[0]
    work = workloads()
    for f in work.values():  # compile, and make the variants each launch uses
        lazy.sync(f())
        lazy.sync(f())
    other = B_JITS[args.b](tempfile.mkdtemp(prefix="lazyrt-codegen-ab-"))
    twins = twin_addresses(backend.jit, other)
    pool, launch = backend.launcher.pool, backend.launcher.pool.launch
    use_twin, spent = [False], []

    def timed_launch(fn, record, buffers):
        t0 = time.perf_counter()
        launch(twins.get(fn, fn) if use_twin[0] else fn, record, buffers)
        spent.append(time.perf_counter() - t0)
    pool.launch = timed_launch
    print(f"kernel ms, medians of {args.rounds}; A: lazyrt, B: {args.b}")
    for name, f in work.items():
        if args.only and not any(w in name for w in args.only.split(",")):
            continue
        t: dict[bool, list[float]] = {False: [], True: []}
        for r in range(args.rounds):
            for twin in ((False, True) if r % 2 else (True, False)):
                use_twin[0] = twin
                spent.clear()
                lazy.sync(f())
                t[twin].append(sum(spent) * 1e3)
        a, b = statistics.median(t[False]), statistics.median(t[True])
        print(f"  {name:12s} A {a:7.2f}  B {b:7.2f}  A/B {a / b:5.3f}", flush=True)
    pool.launch = launch


if __name__ == "__main__":
    main()
