"""Side-by-side timing of the CPU backend against NumPy and numexpr.

    python -m cpu_backend.bench [--n 10000000] [--repeat 10] [--threads N]

Prints medians (and minimums) of `repeat` runs after one warm-up; never
asserted anywhere. Candidates are interleaved round-robin so background
load hits them alike. Belongs with benchmarks/ once that folder has an owner
for it; it lives here because it drives the backend directly (kernel IR).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from scheduler.dtypes import float32, float64
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Op, Output, Reduce, Reduced
from scheduler.view import View

from .backend import CPUBackend


def _poly_kernel(inner: int | None) -> Kernel:
    """a*a + b*b*b over float32."""
    f = float32
    a, b = Load(0, f), Load(1, f)
    e = Op("add", (Op("mul", (a, a), f), Op("mul", (Op("mul", (b, b), f), b), f)), f)
    return Kernel(1, 0, (Input(f, inner=inner), Input(f, inner=inner)), (), None,
                  (Output(f, e, inner=1),))


def _time(cands: dict, repeat: int) -> dict[str, tuple[float, float]]:
    for fn in cands.values():
        fn()
    ts: dict[str, list[float]] = {k: [] for k in cands}
    for _ in range(repeat):
        for k, fn in cands.items():
            t = time.perf_counter()
            fn()
            ts[k].append((time.perf_counter() - t) * 1e3)
    return {k: (statistics.median(v), min(v)) for k, v in ts.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    n = args.n
    be = CPUBackend(num_threads=args.threads)
    x = np.random.default_rng(0).random((n, 2), dtype=np.float32)
    flat = x.ravel()
    a, b = x[:, 0], x[:, 1]
    ac, bc = np.ascontiguousarray(a), np.ascontiguousarray(b)
    out = np.empty(n, np.float32)
    ks, kc = _poly_kernel(None), _poly_kernel(1)
    cs, info_s = be.compile(ks)
    cc, info_c = be.compile(kc)
    ls = Launch((n,), [[View((n,), (2,), 0)], [View((n,), (2,), 1)]], [View.contiguous((n,))])
    lc = Launch((n,), [[View.contiguous((n,))]] * 2, [View.contiguous((n,))])
    fsum = Reduce("sum", Load(0, float32), float64, float32)
    ksum = Kernel(1, 1, (Input(float32, inner=1),), (), fsum, (Output(float32, Reduced(float32)),))
    csum, info_sum = be.compile(ksum)
    lsum = Launch((n,), [[View.contiguous((n,))]], [View.contiguous(())])
    osum = np.empty(1, np.float32)
    cands = {
        "lazy   a*a+b*b*b stride-2": lambda: be.run(cs, ks, ls, [flat, flat], [out]),
        "numpy  a*a+b*b*b stride-2": lambda: a * a + b * b * b,
        "lazy   a*a+b*b*b contiguous": lambda: be.run(cc, kc, lc, [ac, bc], [out]),
        "numpy  a*a+b*b*b contiguous": lambda: ac * ac + bc * bc * bc,
        "lazy   sum float32 (f64 acc)": lambda: be.run(csum, ksum, lsum, [ac], [osum]),
        "numpy  sum float32": lambda: ac.sum(),
    }
    try:
        import numexpr as ne
        cands["numexpr a*a+b*b*b stride-2"] = lambda: ne.evaluate("a*a+b*b*b", local_dict={"a": a, "b": b})
        cands["numexpr a*a+b*b*b contiguous"] = lambda: ne.evaluate("ac*ac+bc*bc*bc", local_dict={"ac": ac, "bc": bc})
        nt = ne.get_num_threads()
    except ImportError:
        nt = 0
    print(f"n={n} repeat={args.repeat} lazy threads={be.num_threads} numexpr threads={nt}")
    print(f"compile ms: stride-2 {info_s.ms:.1f}, contiguous {info_c.ms:.1f}, "
          f"sum {info_sum.ms:.1f}")
    res = _time(cands, args.repeat)
    for k in sorted(res, key=lambda s: (s.split()[1:], s)):
        med, lo = res[k]
        print(f"{k:34s} median {med:8.2f} ms   min {lo:8.2f} ms")


if __name__ == "__main__":
    main()
