"""lazyrt-only measurements: overheads, compile latency, caches, threads."""
from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import lazy
from common import median, time_calls
from workloads import rng_f32, w2_lazy
from peers import lazy_sync


# ------------------------------------------------------------------ lazyrt-only measurements

class _Small:
    """The calibration baseline: building a tiny object with two fields."""
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


# One op per statement; the result is dropped at once, as in `c = a + b` in a loop.
BUILD_CASES = {
    "a + b": "c = a + b",
    "a * 2.0": "c = a * 2.0",
    "lazy.exp(a)": "c = lazy.exp(a)",
    "a[1:] (view)": "c = a[1:]",
    "baseline: a small Python object": "c = _Small(1, 2)",
}


def measure_build(a, b, batch, rounds):
    """Per-op build cost of each case in microseconds: min and median over
    `rounds` batches of `batch` ops, the cases interleaved in every round.

    CPU time of this thread (`time.thread_time_ns`) is the main figure: on a
    shared machine wall time also counts the time other processes hold the
    core, while CPU time moves by a few percent from run to run. Wall time
    (`perf_counter_ns`) is reported too.
    """
    loops = {}
    for name, stmt in BUILD_CASES.items():
        ns = {"a": a, "b": b, "lazy": lazy, "_Small": _Small}
        exec(f"def loop():\n    for _ in range({batch}):\n        {stmt}\n", ns)
        loops[name] = ns["loop"]
    cpu = {name: [] for name in loops}
    wall = {name: [] for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
            loop()
            w1, c1 = time.perf_counter_ns(), time.thread_time_ns()
            cpu[name].append((c1 - c0) / batch / 1e3)
            wall[name].append((w1 - w0) / batch / 1e3)
        lazy.sync()
    return {name: {"min_us": min(cpu[name]), "median_us": statistics.median(cpu[name]),
                   "wall_min_us": min(wall[name]), "wall_median_us": statistics.median(wall[name])}
            for name in loops}


def measure_w1_share(q) -> dict:
    """W1 and the triad (W8's `b + 3 * c` over 20M), both lazyrt, called in
    turn: W1's bandwidth as a share of the triad's with both timed in the
    same seconds. W1's and W8's own rounds run a minute or more apart, and
    what the neighbours leave of this machine's bandwidth can move by a
    third from one minute to the next (docs/performance.md)."""
    Xn = rng_f32(1, 10_000_000, 2)
    X, b, c = lazy.asarray(Xn), lazy.asarray(rng_f32(13, 20_000_000)), \
        lazy.asarray(rng_f32(14, 20_000_000))
    fns = {"W1": lazy_sync(lambda: X[:, 0] ** 2 + X[:, 1] ** 3),
           "triad": lazy_sync(lambda: b + 3.0 * c)}
    nbytes = {"W1": 120_000_000, "triad": 240_000_000}
    times: dict[str, list] = {k: [] for k in fns}
    results = {k: f() for k, f in fns.items()}  # first calls
    for r in range(10 if q else 30):
        for k in fns if r % 2 == 0 else reversed(fns):
            t0 = time.perf_counter()
            results[k] = fns[k]()
            times[k].append(time.perf_counter() - t0)
    ok = bool(np.allclose(results["W1"].numpy(), Xn[:, 0] ** 2 + Xn[:, 1] ** 3,
                          rtol=1e-4, atol=1e-4))
    out = {k: {"median_ms": median(t) * 1e3, "gb_s": nbytes[k] / median(t) / 1e9}
           for k, t in times.items()}
    out.update(calls=len(times["W1"]), ok=ok)
    return out


def measure_overheads(q):
    out = {}
    a, b = lazy.randn(1000), lazy.randn(1000)
    lazy.sync()
    # building one op (1,000-element float32 operands, result dropped at once)
    build = measure_build(a, b, batch=2000, rounds=20 if q else 100)
    out["build"] = build
    out["build_us_per_op"] = build["a + b"]["min_us"]
    out["build_us_per_op_median"] = build["a + b"]["median_us"]

    # repeated sync of a 10-op graph on 1,000-element tensors (same shape synced before)
    c = lazy.randn(1000)
    lazy.sync()

    def build():
        return lazy.where(a > 0, lazy.sqrt(lazy.abs(a)) * b, lazy.exp(-c) / (1 + b * b))
    y = build()
    lazy.sync()
    an, bn, cn = a.numpy(), b.numpy(), c.numpy()
    ref = np.where(an > 0, np.sqrt(np.abs(an)) * bn, np.exp(-cn) / (1 + bn * bn))
    lazy.log.clear()
    builds, syncs = [], []
    for _ in range(200 if q else 1000):
        t0 = time.perf_counter()
        y = build()
        t1 = time.perf_counter()
        lazy.sync()
        t2 = time.perf_counter()
        builds.append(t1 - t0)
        syncs.append(t2 - t1)
    recs = list(lazy.log)
    ok = bool(np.allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5))
    kern_ms = statistics.median([r.run_ms for r in recs]) if recs else float("nan")
    sync_ms = statistics.median([s.ms for s in lazy.log.syncs]) if lazy.log.syncs else float("nan")
    out["sync10"] = {"sync_us": statistics.median(syncs) * 1e6, "sync_min_us": min(syncs) * 1e6,
                     "build_us": statistics.median(builds) * 1e6,
                     "kernels_per_sync": len(recs) / max(1, len(syncs)),
                     "kernel_run_us": kern_ms * 1e3, "log_sync_us": sync_ms * 1e3,
                     "caches": sorted({r.cache for r in recs}), "ok": ok}
    return out


def measure_chain(q, n_ops):
    """A chain of n_ops elementwise ops (y = y*0.9999 + 0.0001, repeated) on 1,000
    elements, one sync. max_pending_nodes raised so no auto-sync cuts it."""
    old = lazy.config.max_pending_nodes
    lazy.config.max_pending_nodes = 1_000_000
    try:
        xn = rng_f32(20, 1000)
        x = lazy.asarray(xn)
        lazy.log.clear()
        gc_s = [0.0, 0.0]  # seconds in the cyclic GC while building: all, full collections
        started = [0.0]

        def gc_timer(phase, info):
            if phase == "start":
                started[0] = time.perf_counter()
                return
            dt = time.perf_counter() - started[0]
            gc_s[0] += dt
            if info["generation"] == 2:
                gc_s[1] += dt
        gc.callbacks.append(gc_timer)
        try:
            t0 = time.perf_counter()
            y = x
            for _ in range(n_ops // 2):
                y = y * 0.9999 + 0.0001
            t1 = time.perf_counter()
        finally:
            gc.callbacks.remove(gc_timer)
        lazy.sync(y)
        t2 = time.perf_counter()
        recs = list(lazy.log)
        syncs = lazy.log.syncs
        ref = xn.copy()
        for _ in range(n_ops // 2):
            ref = ref * np.float32(0.9999) + np.float32(0.0001)
        ok = bool(np.allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4))
        compile_ms = sum(r.compile_ms for r in recs)
        run_ms = sum(r.run_ms for r in recs)
        return {"ops": n_ops, "build_s": t1 - t0, "build_gc_s": gc_s[0], "build_gc_full_s": gc_s[1],
                "sync_s": t2 - t1, "kernels": len(recs),
                "syncs": len(syncs), "compile_ms": compile_ms, "run_ms": run_ms,
                "caches": sorted({r.cache.split(" ")[0] for r in recs}), "ok": ok}
    finally:
        lazy.config.max_pending_nodes = old


def child_compile():
    """Run in a subprocess with a fresh LAZY_CACHE_DIR: compile each workload's
    kernel structure at a small size, then the same structures at new shapes."""
    import lazy as lz

    def structures(n, m):
        X = lz.randn(n, 2)
        a, b, c = lz.randn(n), lz.randn(n), lz.randn(n)
        A = lz.randn(m, m)
        return [
            ("W1", lambda: X[:, 0] ** 2 + X[:, 1] ** 3),
            ("W2", lambda: w2_lazy(a, b, c)),
            ("W3r", lambda: A.sum(axis=1)),
            ("W3f", lambda: A.sum()),
            ("W4", lambda: (lambda e: e / e.sum(axis=1, keepdims=True))(
                lz.exp(A - A.max(axis=1, keepdims=True)))),
            ("W5", lambda: A + A.T),
            ("W8", lambda: b + 3.0 * c),
        ]

    res = {"first": [], "newshape": []}
    for phase, (n, m) in (("first", (1000, 64)), ("newshape", (1500, 96))):
        for name, fn in structures(n, m):
            lz.sync()
            lz.log.clear()
            t0 = time.perf_counter()
            y = fn()
            lz.sync(y)
            wall = (time.perf_counter() - t0) * 1e3
            recs = list(lz.log)
            res[phase].append({"name": name, "wall_ms": wall,
                               "kernels": [(r.kernel, r.cache, r.compile_ms) for r in recs]})
    print("JSON:" + json.dumps(res))


def child_w2(repeat, start_at=0.0, seconds=0.0, solo=False):
    """W2 at 10M in this process (LAZY_NUM_THREADS set by the parent).

    With `start_at` (a `time.time()`): calls are timed from `start_at +
    seconds` for `seconds`, so two such children run side by side; with
    `solo` also in the `seconds` before, while the other one waits."""
    n = 10_000_000
    an, bn, cn = rng_f32(2, n), rng_f32(3, n), rng_f32(4, n)
    a, b, c = lazy.asarray(an), lazy.asarray(bn), lazy.asarray(cn)
    fn = lazy_sync(lambda: w2_lazy(a, b, c))
    out = {}
    if start_at:
        y = fn()  # compiled (or loaded) before the common start
        out["late_s"] = max(0.0, time.time() - start_at)
        phases = (("solo_ms", start_at), ("side_ms", start_at + seconds)) if solo else \
            (("side_ms", start_at + seconds),)
        for name, at in phases:
            time.sleep(max(0.0, at - time.time()))
            steady = []
            while time.time() < at + seconds or len(steady) < 3:
                t0 = time.perf_counter()
                y = fn()
                steady.append(time.perf_counter() - t0)
            out[name] = median(steady) * 1e3
    else:
        first, steady, y = time_calls(fn, repeat, 8.0)
        out.update(median_ms=median(steady) * 1e3, min_ms=min(steady) * 1e3)
    ref = np.maximum(np.where(an > 0, np.sqrt(np.abs(an)) * bn, np.exp(-cn) / (1 + bn * bn)), cn)
    out["ok"] = bool(np.allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5))
    out["kernel_ms"] = median([r.run_ms for r in lazy.log][1:])
    print("JSON:" + json.dumps(out))


def run_child(args, env_extra):
    return _child_json(_start_child(args, env_extra), args)


def _start_child(args, env_extra) -> subprocess.Popen:
    env = dict(os.environ)
    env.update(env_extra)
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_suite.py")
    return subprocess.Popen([sys.executable, runner] + args, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _child_json(p: subprocess.Popen, args) -> dict:
    try:
        out, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    for line in out.splitlines():
        if line.startswith("JSON:"):
            return json.loads(line[5:])
    raise RuntimeError(f"child {args} failed (rc {p.returncode}): {err[-800:]}")


def measure_threads(q) -> dict:
    """W2 in subprocesses with 1 and 2 threads, alone and with a busy-loop
    process competing for a core ("1+busy", "2+busy").

    One subprocess per setting was at the mercy of one burst of the
    neighbours' load (a 0.75x "busy" reading that three alternating pairs
    right after put at 1.05-1.19x), so each setting runs `rounds` times,
    1 and 2 threads alternating in order (1 2, 2 1, ...); a setting's
    median is the median of its runs' medians, its min the best run's."""
    rep, rounds = ("3", 1) if q else ("8", 3)

    def pairs(busy: str) -> dict:
        runs: dict[str, list] = {"1": [], "2": []}
        for r in range(rounds):
            for n in ("1", "2") if r % 2 == 0 else ("2", "1"):
                runs[n].append(run_child(["--child", "w2", "--repeat", rep], {"LAZY_NUM_THREADS": n}))
        return {n + busy: {"median_ms": median(x["median_ms"] for x in rs),
                           "min_ms": min(x["min_ms"] for x in rs),
                           "kernel_ms": median(x["kernel_ms"] for x in rs),
                           "ok": all(x["ok"] for x in rs),
                           "runs_ms": [x["median_ms"] for x in rs]} for n, rs in runs.items()}

    th = pairs("")
    th["side by side"] = side_by_side(2.0 if q else 4.0)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        th.update(pairs("+busy"))
    finally:
        busy.kill()
        busy.wait()
    return th


def side_by_side(seconds: float) -> dict:
    """How much two busy cores of this machine give against one, with no
    thread pool and no shared data involved: W2 in a 1-thread process
    alone for `seconds`, then beside a second such process for `seconds`.
    Where two vCPUs share a physical core (or a neighbour's load), this
    bounds any 2-thread speedup of W2."""
    start_at = time.time() + 6.0  # both children import, load and compile before it
    args = ["--child", "w2", "--start-at", repr(start_at), "--seconds", repr(seconds)]
    env = {"LAZY_NUM_THREADS": "1"}
    procs = [_start_child(args + ["--solo"], env), _start_child(args, env)]
    a, b = (_child_json(p, args) for p in procs)
    return {"solo_ms": a["solo_ms"], "side_ms": [a["side_ms"], b["side_ms"]],
            "gain": a["solo_ms"] / a["side_ms"] + a["solo_ms"] / b["side_ms"],
            "ok": a["ok"] and b["ok"], "late_s": max(a["late_s"], b["late_s"])}


def measure_compile():
    d = tempfile.mkdtemp(prefix="lazyrt-bench-cache-")
    try:
        env = {"LAZY_CACHE_DIR": d, "LAZY_DISK_CACHE": "1"}
        t0 = time.perf_counter()
        p1 = run_child(["--child", "compile"], env)
        t1 = time.perf_counter()
        p2 = run_child(["--child", "compile"], env)
        t2 = time.perf_counter()
        return {"p1": p1, "p2": p2, "p1_s": t1 - t0, "p2_s": t2 - t1}
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    # Just the op-build and sync overheads (and a chain), without the whole suite:
    #   python benchmarks/lazy_only.py [--quick] [--chain N]
    import argparse
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer rounds")
    p.add_argument("--chain", type=int, default=0, help="also build and sync an N-op chain")
    args = p.parse_args()
    print(json.dumps(measure_overheads(args.quick), indent=1))
    if args.chain:
        print(json.dumps(measure_chain(args.quick, args.chain), indent=1))
