"""Elementwise benchmarks: lazyrt against NumPy and its peers, in one run.

    python benchmarks/bench_elementwise.py [--n N] [--repeat R] [--budget S] [--keep]

Cases (float32 everywhere, inputs created before timing):

  seed   y = X[:, 0]**2 + X[:, 1]**3          X is N x 2; 4 ops (mul, mul, mul, add)
  chain  where(a > 0, sqrt(abs(a)) * b,
               exp(-c) / (1 + b*b))          a, b, c are length N; 10 ops
                                              (gt, abs, sqrt, mul, neg, exp, mul,
                                               add, truediv, where)
  trig   sin(a) * 2 + cos(b)                  a, b uniform on [0, 100), length N; 4 ops

Each peer evaluates the same expression in its own idiom. For lazyrt the timed
call is "build the expression + lazy.sync(y)", the cost a user sees. The
first call (which compiles, for lazyrt, numba) is reported on its own; the
median and min are over the calls after it. Ratios are speedups: NumPy's
median / the peer's median (and likewise for numexpr); > 1 means faster.

Peers: NumPy (always), numexpr, torch (eager, CPU) and numba (njit parallel)
when importable. Every result is checked against NumPy with
np.allclose(rtol=1e-4, atol=1e-4): the atol is there because x**2 + y**3
cancels to ~1e-6 for some elements, where float32 rounding (of NumPy's own
result too) exceeds any relative tolerance.

This prints numbers; it asserts nothing about time.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import warnings

import numpy as np

# Run from a checkout without installing; a normalized path (no "..") keeps
# the log's user file:line pointing at this script.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lazy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu_model, time_calls  # noqa: E402,F401  (shared with bench_suite.py)

try:
    import numexpr as ne
except ImportError:  # optional peer
    ne = None
try:
    import torch
except ImportError:  # optional peer
    torch = None
try:
    import numba
except ImportError:  # optional peer
    numba = None

RTOL = 1e-4
ATOL = 1e-4


def machine_info() -> list[str]:
    import llvmlite
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    lines = [
        f"date:     {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine:  {cpu_model()}, {os.cpu_count()} logical cores ({affinity} usable), "
        f"{platform.system()} {platform.release()}",
        f"load:     {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15-min load average; "
        "other processes on the machine skew the numbers)",
        f"python:   {platform.python_version()}",
        f"versions: lazyrt {lazy.__version__}, numpy {np.__version__}, llvmlite {llvmlite.__version__}, "
        f"numexpr {ne.__version__ if ne else 'not installed'}, "
        f"torch {torch.__version__ if torch else 'not installed'}, "
        f"numba {numba.__version__ if numba else 'not installed'}",
        "threads:  LAZY_NUM_THREADS=" + os.environ.get("LAZY_NUM_THREADS", "(unset: all cores)")
        + (f", numexpr {ne.nthreads}" if ne else "")
        + (f", torch {torch.get_num_threads()}" if torch else "")
        + (f", numba {numba.get_num_threads()}" if numba else ""),
        "command:  python " + " ".join(sys.argv),
    ]
    return lines


# ----------------------------------------------------------------- cases

def torch_from_numpy(a: np.ndarray):
    """Zero-copy, read-only input (lazy's numpy() views are read-only; the
    benchmark never writes to them, so torch's warning about it is noise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)


def seed_case(n: int):
    lazy.manual_seed(0)
    X = lazy.randn(n, 2)
    Xn = X.numpy()
    peers = {}

    def run_lazy():
        y = X[:, 0] ** 2 + X[:, 1] ** 3
        lazy.sync(y)
        return y

    peers["lazyrt"] = run_lazy
    peers["numpy"] = lambda: Xn[:, 0] ** 2 + Xn[:, 1] ** 3
    if ne is not None:
        x0, x1 = Xn[:, 0], Xn[:, 1]
        peers["numexpr"] = lambda: ne.evaluate("x0**2 + x1**3", local_dict={"x0": x0, "x1": x1})
    if torch is not None:
        Xt = torch_from_numpy(Xn)
        peers["torch"] = lambda: Xt[:, 0] ** 2 + Xt[:, 1] ** 3
    if numba is not None:
        @numba.njit(parallel=True, cache=False)
        def seed_nb(x):
            out = np.empty(x.shape[0], dtype=np.float32)
            for i in numba.prange(x.shape[0]):
                out[i] = x[i, 0] ** 2 + x[i, 1] ** 3
            return out
        peers["numba"] = lambda: seed_nb(Xn)
    return ("seed", "X[:,0]**2 + X[:,1]**3", "X: N x 2 float32", 4), peers


def chain_case(n: int):
    lazy.manual_seed(1)
    a, b, c = lazy.randn(n), lazy.randn(n), lazy.randn(n)
    an, bn, cn = a.numpy(), b.numpy(), c.numpy()
    peers = {}

    def run_lazy():
        y = lazy.where(a > 0, lazy.sqrt(lazy.abs(a)) * b, lazy.exp(-c) / (1 + b * b))
        lazy.sync(y)
        return y

    peers["lazyrt"] = run_lazy
    peers["numpy"] = lambda: np.where(an > 0, np.sqrt(np.abs(an)) * bn, np.exp(-cn) / (1 + bn * bn))
    if ne is not None:
        peers["numexpr"] = lambda: ne.evaluate(
            "where(a > 0, sqrt(abs(a)) * b, exp(-c) / (1 + b*b))",
            local_dict={"a": an, "b": bn, "c": cn})
    if torch is not None:
        at, bt, ct = torch_from_numpy(an), torch_from_numpy(bn), torch_from_numpy(cn)
        peers["torch"] = lambda: torch.where(at > 0, torch.sqrt(torch.abs(at)) * bt,
                                             torch.exp(-ct) / (1 + bt * bt))
    if numba is not None:
        @numba.njit(parallel=True, cache=False)
        def chain_nb(a, b, c):
            out = np.empty(a.shape[0], dtype=np.float32)
            for i in numba.prange(a.shape[0]):
                if a[i] > 0:
                    out[i] = np.sqrt(np.abs(a[i])) * b[i]
                else:
                    out[i] = np.exp(-c[i]) / (np.float32(1) + b[i] * b[i])
            return out
        peers["numba"] = lambda: chain_nb(an, bn, cn)
    return ("chain", "where(a>0, sqrt(abs(a))*b, exp(-c)/(1+b*b))", "a, b, c: N float32", 10), peers


def trig_case(n: int):
    rng = np.random.default_rng(2)
    an, bn = (rng.random(n, dtype=np.float32) * 100 for _ in range(2))
    a, b = lazy.asarray(an), lazy.asarray(bn)
    peers = {}

    def run_lazy():
        y = lazy.sin(a) * 2 + lazy.cos(b)
        lazy.sync(y)
        return y

    peers["lazyrt"] = run_lazy
    peers["numpy"] = lambda: np.sin(an) * 2 + np.cos(bn)
    if ne is not None:
        peers["numexpr"] = lambda: ne.evaluate("sin(a) * 2 + cos(b)", local_dict={"a": an, "b": bn})
    if torch is not None:
        at, bt = torch_from_numpy(an), torch_from_numpy(bn)
        peers["torch"] = lambda: torch.sin(at) * 2 + torch.cos(bt)
    if numba is not None:
        @numba.njit(parallel=True, cache=False)
        def trig_nb(a, b):
            out = np.empty(a.shape[0], dtype=np.float32)
            for i in numba.prange(a.shape[0]):
                out[i] = np.sin(a[i]) * np.float32(2) + np.cos(b[i])
            return out
        peers["numba"] = lambda: trig_nb(an, bn)
    return ("trig", "sin(a)*2 + cos(b)", "a, b: N float32 in [0, 100)", 4), peers


def to_numpy(r) -> np.ndarray:
    if isinstance(r, lazy.Tensor):
        return r.numpy()
    if torch is not None and isinstance(r, torch.Tensor):
        return r.numpy()
    return np.asarray(r)


# ----------------------------------------------------------------- main

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000_000, help="elements per input (default 10M)")
    p.add_argument("--repeat", type=int, default=10, help="timed calls after the first (default 10)")
    p.add_argument("--budget", type=float, default=4.0,
                   help="seconds per peer and case after which timing stops early, "
                        "keeping at least 3 calls (default 4)")
    p.add_argument("--keep", action="store_true",
                   help="keep every result alive, so each call writes to fresh memory "
                        "(as when a user stores results) instead of reusing the freed one")
    args = p.parse_args(argv)

    print("lazyrt elementwise benchmark")
    for line in machine_info():
        print(line)
    print(f"N = {args.n:,}, repeat = {args.repeat}, budget = {args.budget:g} s per peer, "
          f"results {'kept alive' if args.keep else 'freed after each call'}\n")

    header = (f"{'case':<6} {'peer':<8} {'first ms':>9} {'median ms':>10} {'min ms':>8} {'calls':>5} "
              f"{'x NumPy':>8} {'x numexpr':>9}  check")
    rows: list[str] = []
    all_ok = True
    lazy_notes: list[str] = []
    for make in (seed_case, chain_case, trig_case):
        (name, expr, inputs, nops), peers = make(args.n)
        print(f"[{name}] {expr}   ({inputs}; {nops} ops)")
        results = {}
        for peer, fn in peers.items():
            if peer == "lazyrt":
                lazy.log.clear()
            first, steady, result = time_calls(fn, args.repeat, args.budget, args.keep)
            results[peer] = (first, steady, to_numpy(result))
            if peer == "lazyrt":
                recs = list(lazy.log)
                if recs:
                    r0 = recs[0]
                    lazy_notes.append(
                        f"  {name}: {len({r.kernel for r in recs})} kernel(s) per call "
                        f"({len(recs)} records over {1 + len(steady)} calls); first call: cache {r0.cache}, "
                        f"compile {r0.compile_ms:.1f} ms; backend {r0.backend}")
        ref = results["numpy"][2]
        t_np = statistics.median(results["numpy"][1])
        t_ne = statistics.median(results["numexpr"][1]) if "numexpr" in results else None
        for peer, (first, steady, res) in results.items():
            med = statistics.median(steady)
            ok = (res.shape == ref.shape and np.allclose(res, ref, rtol=RTOL, atol=ATOL))
            all_ok &= ok
            err = float(np.max(np.abs(res.astype(np.float64) - ref))) if res.shape == ref.shape else float("nan")
            check = ("PASS" if ok else "FAIL") + f" (max |diff| {err:.1e}, {res.dtype})"
            x_ne = f"{t_ne / med:9.2f}" if t_ne is not None else f"{'-':>9}"
            rows.append(f"{name:<6} {peer:<8} {first * 1e3:9.1f} {med * 1e3:10.1f} {min(steady) * 1e3:8.1f} "
                        f"{len(steady):5d} {t_np / med:8.2f} {x_ne}  {check}")
        rows.append("")

    print()
    print(header)
    print("-" * len(header))
    for r in rows[:-1]:
        print(r)
    print("\nlazyrt, from lazy.log:")
    for note in lazy_notes:
        print(note)
    print("\nx NumPy / x numexpr: that peer's median time / this row's median time (> 1: this row is faster).")
    print("ALL PASS" if all_ok else "SOME CHECKS FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
