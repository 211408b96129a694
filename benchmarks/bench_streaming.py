"""Where streaming stores start to pay: `b + 3 * c` and reading its result back.

    python benchmarks/bench_streaming.py [--rounds 15] [--sizes-mb 1,2,4,8,16,32,64]

For each output size, in one process, every round runs the triad twice,
once with its output written by streaming (non-temporal) stores and once
by normal stores (the launcher's threshold switched in between, the order
alternating per round), each followed by a sync that reads the result
back (`(y * 2).sum()`, as a next step would). It prints kernel-time
medians from the log, and the threshold lazyrt picks on this machine
(cpu_backend/launch.py, `stream_min_bytes`). docs/performance_history.md,
"Streaming threshold from the private caches", has results.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazy  # noqa: E402
from common import machine_lines  # noqa: E402
from cpu_backend import launch  # noqa: E402
from scheduler.backends import _llvm  # noqa: E402


def one_round(b, c, stream: bool, backend) -> tuple[float, float]:
    """Kernel ms of the triad and of the read-back, with or without streaming."""
    saved = launch.stream_min_bytes
    launch.stream_min_bytes = (lambda threads: 1) if stream else (lambda threads: 1 << 62)
    backend._prepared.clear()  # the loop order is decided once per launch object
    try:
        y = b + 3.0 * c
        lazy.sync(y)
        made = list(lazy.log)[-1].run_ms
        s = (y * 2.0).sum()
        lazy.sync(s)
        return made, list(lazy.log)[-1].run_ms
    finally:
        launch.stream_min_bytes = saved
        backend._prepared.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sizes-mb", default="1,2,4,8,16,32,64")
    args = ap.parse_args()
    backend, why = _llvm()
    if backend is None:
        sys.exit(why)
    print("\n".join(machine_lines({"lazyrt": lazy.__version__, "numpy": np.__version__})))
    print(f"threshold here: {launch.stream_min_bytes(backend.num_threads) / 2**20:g} MB "
          f"({backend.num_threads} threads x {launch.private_cache_bytes() / 2**20:g} MB private cache)\n")
    print(f"{'output':>8} {'triad normal':>13} {'streamed':>9} {'read back normal':>17} "
          f"{'streamed':>9} {'sum normal':>11} {'streamed':>9}  (kernel ms, medians)")
    rng = np.random.default_rng(0)
    for mb in (float(x) for x in args.sizes_mb.split(",")):
        n = int(mb * 2**20) // 4
        b = lazy.asarray(rng.standard_normal(n, dtype=np.float32))
        c = lazy.asarray(rng.standard_normal(n, dtype=np.float32))
        times = {True: [], False: []}
        for r in range(args.rounds + 2):
            for stream in ((True, False) if r % 2 else (False, True)):
                if r >= 2:  # the first two rounds compile and warm up
                    times[stream].append(one_round(b, c, stream, backend))
                else:
                    one_round(b, c, stream, backend)
        med = {s: [statistics.median(t[i] for t in times[s]) for i in (0, 1)] for s in times}
        tot = {s: med[s][0] + med[s][1] for s in med}
        print(f"{mb:>6g}MB {med[False][0]:>13.3f} {med[True][0]:>9.3f} {med[False][1]:>17.3f} "
              f"{med[True][1]:>9.3f} {tot[False]:>11.3f} {tot[True]:>9.3f}")


if __name__ == "__main__":
    main()
