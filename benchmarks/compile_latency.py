"""First-call compile latency of the CPU backend, per kernel: thread CPU and wall.

    python benchmarks/compile_latency.py [--runs 7] [--root DIR ...]

Each run is a fresh process with a fresh LAZY_CACHE_DIR that compiles the
structures of `lazy_only.child_compile` (W1, W2, W3 row and full sums,
W4 softmax, W5 A + A.T, W8 triad) once. The log's compile time is wall
time, which on a shared machine mostly measures the other processes;
`time.thread_time()` of the compiling thread is what the compile itself
costs. Several `--root`s (other checkouts of this repository) are run
alternately, so that they see the same load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child() -> None:
    """Compile each structure once; print per-kernel (name, cpu ms, wall ms)."""
    from cpu_backend import jit as J
    rec: list[tuple[float, float]] = []
    build = J.JIT._build

    def timed(self, kernel, key, alias):
        c0, w0 = time.thread_time(), time.perf_counter()
        r = build(self, kernel, key, alias)
        rec.append(((time.thread_time() - c0) * 1e3, (time.perf_counter() - w0) * 1e3))
        return r
    J.JIT._build = timed
    import lazy as lz
    from workloads import w2_lazy
    X, A = lz.randn(1000, 2), lz.randn(64, 64)
    a, b, c = lz.randn(1000), lz.randn(1000), lz.randn(1000)
    lz.sync()
    rec.clear()
    out = []
    for name, fn in [("W1", lambda: X[:, 0] ** 2 + X[:, 1] ** 3), ("W2", lambda: w2_lazy(a, b, c)),
                     ("W3r", lambda: A.sum(axis=1)), ("W3f", lambda: A.sum()),
                     ("W4", lambda: (lambda e: e / e.sum(axis=1, keepdims=True))(
                         lz.exp(A - A.max(axis=1, keepdims=True)))),
                     ("W5", lambda: A + A.T), ("W8", lambda: b + 3.0 * c)]:
        k0 = len(rec)
        lz.sync(fn())
        out += [(f"{name}.{i}", *r) for i, r in enumerate(rec[k0:])]
    print("JSON:" + json.dumps(out))


def run(root: str) -> list:
    env = dict(os.environ, LAZY_CACHE_DIR=tempfile.mkdtemp(prefix="lazyrt-compile-"),
               PYTHONPATH=os.pathsep.join([root, os.path.join(root, "benchmarks")]))
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("JSON:"):
            return json.loads(line[5:])
    raise RuntimeError(f"child in {root} failed: {p.stderr[-800:]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--root", action="append", help="checkout to measure (default: this one)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child()
        return
    roots = args.root or [os.path.dirname(HERE)]
    runs: dict[str, list] = {r: [] for r in roots}
    for _ in range(args.runs):
        for r in roots:
            runs[r].append(run(r))
    print(f"load {os.getloadavg()[0]:.1f}; {args.runs} fresh processes per root; ms")
    for r in roots:
        print(f"{r}\n  {'kernel':7s} {'cpu min':>8s} {'cpu med':>8s} {'wall min':>8s} {'wall med':>8s}")
        per = list(zip(*runs[r]))
        meds = []
        for ks in per:
            cpu, wall = [k[1] for k in ks], [k[2] for k in ks]
            meds.append((min(cpu), statistics.median(cpu), min(wall), statistics.median(wall)))
            print(f"  {ks[0][0]:7s} " + " ".join(f"{v:8.1f}" for v in meds[-1]))
        print(f"  {'median':7s} " + " ".join(f"{statistics.median(m[i] for m in meds):8.1f}"
                                               for i in range(4)))


if __name__ == "__main__":
    main()
