"""Helpers shared by the benchmark scripts: machine description, timing,
peer conversion. Nothing here asserts anything about time."""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_lines(versions: dict[str, str | None], threads: str = "") -> list[str]:
    """The header every benchmark prints: date, machine, load, python,
    versions (None: not installed), threads, command."""
    vers = ", ".join(f"{k} {v if v else 'not installed'}" for k, v in versions.items())
    lines = [
        f"date:     {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine:  {cpu_model()}, {os.cpu_count()} logical cores ({usable_cores()} usable), "
        f"{platform.system()} {platform.release()}",
        f"load:     {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15-min load average; "
        "other processes on the machine skew the numbers)",
        f"python:   {platform.python_version()}",
        f"versions: {vers}",
    ]
    if threads:
        lines.append(f"threads:  {threads}")
    lines.append("command:  python " + " ".join(sys.argv))
    return lines


def time_calls(fn, repeat: int, budget_s: float, keep: bool = False):
    """First call, then up to `repeat` more, stopping early (after at least 3)
    once `budget_s` seconds have gone by. Returns (first_s, [steady_s], result).
    With `keep`, every result stays alive until the end, so each call writes
    into freshly allocated (not yet touched) memory."""
    kept = []
    t0 = time.perf_counter()
    result = fn()
    first = time.perf_counter() - t0
    steady: list[float] = []
    spent = first
    for i in range(repeat):
        if keep:
            kept.append(result)
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        steady.append(dt)
        spent += dt
        if i >= 2 and spent > budget_s:
            break
    return first, steady, result


def median(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def torch_from_numpy(torch, a: np.ndarray):
    """Zero-copy input; lazy's numpy() views are read-only and nothing here
    writes to them, so torch's warning about that is noise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)


def to_numpy(r) -> np.ndarray:
    """A peer's result as a NumPy array (lazy, torch, JAX, NumPy, scalars)."""
    if hasattr(r, "numpy") and not isinstance(r, np.ndarray):
        try:
            return np.asarray(r.numpy())
        except Exception:  # e.g. a torch tensor that requires grad
            pass
    return np.asarray(r)


def sum_check(scale):
    """float32 sums in different orders: tolerance relative to sum(|x|) over the reduced axis."""
    def check(res, ref):
        if res.shape != ref.shape:
            return False, f"shape {res.shape} != {ref.shape}"
        err = np.abs(res.astype(np.float64) - ref.astype(np.float64))
        return bool(np.all(err <= 1e-5 * scale + 1e-6 * np.abs(ref))), \
            f"max |diff| {float(err.max()):.1e}"
    return check


def compare_cases(cases: dict, repeat: int, budget_s: float, sync) -> bool:
    """Time each case's (lazyrt, NumPy, torch or None[, check]) calls one after
    another, print a row of medians and ratios, and check every result against
    NumPy's: exactly, or by `check(result, reference) -> (ok, detail)` where
    given (float sums, whose order differs: `sum_check`). `sync(result)` finishes a lazyrt call. Returns
    whether all match."""
    print(f"\n{'case':<14} {'lazyrt ms':>10} {'numpy ms':>9} {'torch ms':>9} {'x NumPy':>8} "
          f"{'x torch':>8}  check")
    ok = True
    for name, (lz, npf, tf, *check) in cases.items():
        def same_as(r, ref) -> bool:
            r = to_numpy(r)
            return check[0](r, ref)[0] if check else np.array_equal(r, ref)

        def lazy_call():
            r = lz()
            sync(r)
            return r
        _, t_l, r_l = time_calls(lazy_call, repeat, budget_s)
        _, t_n, r_n = time_calls(npf, repeat, budget_s)
        same = same_as(r_l, r_n)
        t_t = time_calls(tf, repeat, budget_s)[1] if tf else []
        if tf:
            same = same and same_as(tf(), r_n)
        ok &= same
        ml, mn, mt = median(t_l) * 1e3, median(t_n) * 1e3, median(t_t) * 1e3
        print(f"{name:<14} {ml:>10.2f} {mn:>9.2f} {mt:>9.2f} {mn / ml:>8.2f} {mt / ml:>8.2f}  "
              f"{'PASS' if same else 'FAIL'}")
    print("\nx NumPy / x torch: that peer's median / lazyrt's (> 1: lazyrt faster).")
    print("ALL CHECKS PASS" if ok else "SOME CHECKS FAILED")
    return ok


def optional(name: str):
    """A peer module, or None when it is not installed."""
    try:
        return __import__(name)
    except ImportError:
        return None


def case_bench_main(doc: str, make_cases, argv=None) -> int:
    """The command line of a case benchmark (bench_indexing.py, bench_layout.py):
    --repeat/--budget, the machine lines, then `compare_cases`."""
    import lazy
    torch = optional("torch")
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--budget", type=float, default=3.0, help="seconds of calls per peer and case")
    args = p.parse_args(argv)
    print("\n".join(machine_lines({"lazyrt": lazy.__version__, "numpy": np.__version__,
                                    "torch": torch.__version__ if torch else None})))
    return 0 if compare_cases(make_cases(), args.repeat, args.budget, lazy.sync) else 1
