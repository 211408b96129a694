"""Reduction kernels launched directly, under each block size and chunk count.

    python benchmarks/bench_gpu_launch.py

bench_gpu.py times `CUDABackend.run`, host work before the launch included;
this times the compiled kernels alone (the launches and argument binding
that `run` does, nothing else) for a full sum, a full argmax, row sums and
column sums of 2**26 float32, under the default plan (launch.plan_launch)
and under forced strategies, block sizes and chunk counts, each result
checked against NumPy. It is how the defaults in cuda_backend/launch.py
were checked on a GPU (docs/gpu.md, run 7). Without a GPU it says why and
exits 0.
"""
from __future__ import annotations

import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lazy  # noqa: E402
from bench_gpu import timed  # noqa: E402
from cuda_backend import CUDABackend, probe  # noqa: E402
from cuda_backend.launch import (BLOCK_PER_OUT, COLUMNS, PARTIALS, WARP_PER_OUT, bind,  # noqa: E402
                                 plan_launch)
from cuda_backend.reduce import second_partial  # noqa: E402
from scheduler.kernel_ir import pack_launch  # noqa: E402
from scheduler.realize import plan  # noqa: E402

BLOCKS = (128, 256, 512, 1024)
PARTS_PER_SM = (4, 16, 32, 64)  # forced chunk counts: this many per SM, over the output tiles


def cases(n: int):
    a = np.random.default_rng(0).random(n, dtype=np.float32) - 0.5
    rows, cols = a.reshape(n // 1024, 1024), a.reshape(1024, n // 1024)
    return [("sum all", lazy.asarray(a).sum(), a, a.sum(dtype=np.float64), [PARTIALS]),
            ("argmax all", lazy.asarray(a).argmax(), a, a.argmax(), [PARTIALS]),
            ("row sums", lazy.asarray(rows).sum(axis=1), a, rows.sum(axis=1, dtype=np.float64),
             [BLOCK_PER_OUT, WARP_PER_OUT]),
            ("column sums", lazy.asarray(cols).sum(axis=0), a, cols.sum(axis=0, dtype=np.float64),
             [COLUMNS])]


def main() -> int:
    ok, why = probe()
    if not ok:
        print(f"bench_gpu_launch: {why}; nothing to measure")
        return 0
    import cupy
    print(f"device: {why}")
    be = CUDABackend()
    sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    for name, t, host, want, modes in cases(1 << 26):
        [step] = [s for s in plan([t._buf]).steps if s.kernel is not None]
        k, launch = step.kernel, step.launch
        compiled, _ = be.compile(k)
        a, s = pack_launch(k, launch)
        bufs = {("in", 0): cupy.asarray(host), ("out", 0): be.allocate(step.outputs[0].size,
                                                                         step.outputs[0].dtype)}
        default = plan_launch(k, launch, sms)
        first = default.calls[0]
        print(f"{name}: default mode {first.mode}, block {first.block}, {first.nparts} chunks")
        # chunks are per output (partials) or per 32-output tile (columns)
        units = {PARTIALS: default.n_out, COLUMNS: -(-default.n_out // 32)}
        configs = [(None, b, None) for b in BLOCKS] + \
            [(m, b, None) for m in modes for b in BLOCKS] + \
            [(m, b, max(1, sms * p // units[m])) for m in modes if m in units
             for b in BLOCKS for p in PARTS_PER_SM]
        for mode, block, nparts in configs:
            p = plan_launch(k, launch, sms, mode=mode, block=block, nparts=nparts)
            size = max(p.partials, 1)
            bufs[("pv", 0)] = cupy.empty(size, k.reduce.acc.np)
            second = second_partial(k.reduce.op, k.reduce.acc)
            bufs[("pi", 0)] = bufs[("pv", 0)] if second is None else cupy.empty(size, second.np)

            def launch_all(p=p):
                for c in p.calls:
                    compiled.function((c.grid,), (c.block,),
                                      tuple(bind(compiled.src.params, c, a, s, bufs)))
            ms = statistics.median(timed(launch_all, 30))
            got = bufs[("out", 0)].get().reshape(np.shape(want))
            right = np.allclose(got, want, rtol=1e-5, atol=1e-3)
            c = p.calls[0]
            print(f"  {'default' if mode is None else f'mode {c.mode}':8s} block {c.block:4d} "
                  f"chunks {c.nparts:5d} grid {c.grid:5d}: {ms:7.4f} ms"
                  + ("" if right else "  WRONG"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
