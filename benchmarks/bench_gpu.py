"""GPU benchmarks: achieved bandwidth of lazyrt's CUDA kernels against the device's
copy bandwidth, and against CuPy running the same expression, in one run.

    python benchmarks/bench_gpu.py [--n N] [--repeat R]

Each case builds a lazy expression over host arrays only to get the kernel the
scheduler plans (Kernel IR + Launch), then times `CUDABackend.run` on device
arrays with CUDA events (compile excluded; reported separately). Bytes moved
count each input buffer and each output once (what a perfect kernel must
move); GB/s = bytes / median time. The reference is a device-to-device copy of
a buffer of the same size (`dst[...] = src`, 2 bytes moved per byte copied),
measured in the same run. Ratios: copy-bandwidth fraction (1.0 = as fast as
a copy), and CuPy's median / lazyrt's median (> 1: lazyrt faster).

Prints numbers and asserts nothing. Without a GPU it says why and exits 0.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lazy  # noqa: E402
from cuda_backend import CUDABackend, probe  # noqa: E402
from scheduler.realize import plan  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    """Milliseconds per call, each call bracketed by CUDA events."""
    import cupy
    fn()  # warm-up
    cupy.cuda.get_current_stream().synchronize()
    out = []
    for _ in range(repeat):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(cupy.cuda.get_elapsed_time(start, end))
    return out


def copy_bandwidth(nbytes: int, repeat: int) -> float:
    """GB/s of a device-to-device copy (read + write) of `nbytes`."""
    import cupy
    src = cupy.ones(nbytes // 4, np.float32)
    dst = cupy.empty_like(src)
    ms = statistics.median(timed(lambda: dst.__setitem__(Ellipsis, src), repeat))
    return 2 * src.nbytes / ms / 1e6


def cases(n: int, rng: np.random.Generator):
    """(name, lazy tensors builder over host arrays, CuPy version of the same)."""
    x2 = rng.random((n, 2), dtype=np.float32)
    a, b, c = (rng.random(n, dtype=np.float32) - 0.5 for _ in range(3))
    rows = rng.random((n // 1024, 1024), dtype=np.float32)
    cols = rng.random((1024, n // 1024), dtype=np.float32)

    def cp_chain(a, b, c):
        import cupy
        return cupy.where(a > 0, cupy.sqrt(cupy.abs(a)) * b, cupy.exp(-c) / (1 + b * b))
    return [
        ("scale a*2+1", lambda: [lazy.asarray(a) * 2 + 1], [a], lambda a: a * 2 + 1),
        ("seed x[:,0]**2+x[:,1]**3", lambda: [(lambda t: t[:, 0] ** 2 + t[:, 1] ** 3)(lazy.asarray(x2))],
         [x2], lambda x: x[:, 0] ** 2 + x[:, 1] ** 3),
        ("chain (10 ops)", lambda: [lazy.where(lazy.asarray(a) > 0,
                                               lazy.sqrt(abs(lazy.asarray(a))) * lazy.asarray(b),
                                               lazy.exp(-lazy.asarray(c)) / (1 + lazy.asarray(b) ** 2))],
         [a, b, c], cp_chain),
        ("sum all", lambda: [lazy.asarray(a).sum()], [a], lambda a: a.sum(dtype=np.float64)),
        ("argmax all", lambda: [lazy.asarray(a).argmax()], [a], lambda a: a.argmax()),
        ("row sums (n/1024 x 1024)", lambda: [lazy.asarray(rows).sum(axis=1)], [rows],
         lambda r: r.sum(axis=1)),
        ("column sums (1024 x n/1024)", lambda: [lazy.asarray(cols).sum(axis=0)], [cols],
         lambda r: r.sum(axis=0)),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 26, help="elements per input (default 2**26)")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    ok, why = probe()
    if not ok:
        print(f"bench_gpu: {why}; nothing to measure")
        return 0
    import cupy
    be = CUDABackend()
    print(f"device: {why}")
    copy_gbs = copy_bandwidth(args.n * 4, args.repeat)
    print(f"device copy bandwidth: {copy_gbs:.0f} GB/s ({args.n * 4 / 2**20:.0f} MiB buffer)")
    print(f"{'case':30s} {'compile ms':>10s} {'lazy ms':>9s} {'GB/s':>7s} {'of copy':>8s} "
          f"{'cupy ms':>9s} {'vs cupy':>8s}")
    rng = np.random.default_rng(0)
    for name, build, host_inputs, cupy_fn in cases(args.n, rng):
        steps = [s for s in plan([t._buf for t in build()]).steps if s.kernel is not None]
        if len(steps) != 1:
            print(f"{name:30s} skipped: planned {len(steps)} kernels")
            continue
        step = steps[0]
        compiled, info = be.compile(step.kernel)
        ins = [None if bf is None else cupy.asarray(bf.array) for bf in step.inputs]
        outs = [be.allocate(bf.size, bf.dtype) for bf in step.outputs]
        ms = statistics.median(timed(
            lambda: be.run(compiled, step.kernel, step.launch, ins, outs), args.repeat))
        nbytes = sum(x.nbytes for x in ins if x is not None) + sum(o.nbytes for o in outs)
        gbs = nbytes / ms / 1e6
        dev = [cupy.asarray(h) for h in host_inputs]
        cp_ms = statistics.median(timed(lambda: cupy_fn(*dev), args.repeat))
        print(f"{name:30s} {info.ms:10.1f} {ms:9.3f} {gbs:7.0f} {gbs / copy_gbs:8.2f} "
              f"{cp_ms:9.3f} {cp_ms / ms:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
