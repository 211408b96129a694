"""The issue's workloads (W1-W8) end to end on device "cuda", beside the GPU peers.

    python benchmarks/bench_gpu_workloads.py [--repeat R] [--no-compile] [--device cpu]

bench_gpu.py times one planned kernel; this times what a user's line costs:
lazyrt builds the graph, syncs (schedule-cache hit, kernel-cache hit) and
launches, with the inputs already on the device and the result left there.
The peers run the same expression on the same device: CuPy, PyTorch eager,
torch.compile (Inductor's Triton kernels) and JAX's jit, each where
installed. Every call ends with the device synchronized, so a time is
wall-clock from the call to the finished result; the median of `--repeat`
calls after two warm-ups is printed, with GB/s (each input and output
counted once) and each peer's time over lazyrt's (> 1: lazyrt faster).
Every result is checked against NumPy on the host.

`--device cpu` runs the same script on the CPU (NumPy for CuPy, torch on
the CPU) to check it without a GPU. Prints numbers and asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave memory to the others
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lazy  # noqa: E402
from common import optional  # noqa: E402


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def softmax(m, x):
    e = m.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def torch_softmax(torch, x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


def chain(m, a, b, c):
    return m.maximum(m.where(a > 0, m.sqrt(m.abs(a)) * b, m.exp(-c) / (1 + b * b)), c)


# (key, title, host inputs, f(module, *inputs), bytes moved, rtol, atol); the module is
# lazy, cupy/numpy, torch or jax.numpy, and every one spells these expressions alike
# except torch's softmax (amax, keepdim).
def cases() -> list[tuple]:
    X, A, B = rand(1, 10_000_000, 2), rand(5, 4096, 4096), rand(13, 20_000_000)
    a, b, c = rand(2, 10_000_000), rand(3, 10_000_000), rand(4, 10_000_000)
    M, N = rand(8, 2048, 2048), rand(9, 2048, 2048)
    mb = 4096 * 4096 * 4
    return [
        ("W1", "X[:,0]**2 + X[:,1]**3, X 10M x 2", [X],
         lambda m, X: X[:, 0] ** 2 + X[:, 1] ** 3, 120e6, 1e-4, 1e-4),
        ("W2", "11-op chain on 3 x 10M", [a, b, c], chain, 160e6, 1e-4, 1e-5),
        ("W3r", "sum(axis=1) of 4096x4096", [A],
         lambda m, A: A.sum(1), mb, 1e-4, 1e-3),
        ("W3f", "full sum of 16.8M", [A], lambda m, A: A.sum(), mb, 1e-4, 1e-1),
        ("W4", "row softmax of 4096x4096", [A], softmax, 2 * mb, 1e-4, 1e-8),
        ("W5", "A + A.T, 4096x4096", [A], lambda m, A: A + A.T, 2 * mb, 1e-6, 1e-6),
        ("W6", "matmul 2048 (float32)", [M, N], lambda m, M, N: M @ N, None, 1e-3, 5e-2),
        ("W8", "triad b + 3*c, 20M", [B, B[::-1].copy()], lambda m, b, c: b + 3.0 * c,
         240e6, 1e-5, 1e-5),
    ]


def torch_form(f):
    return torch_softmax if f is softmax else f


def lazy_run(f, xs):
    y = f(lazy, *xs)
    lazy.sync(y)
    return y


def peers(device: str, compile_: bool) -> dict:
    """name -> (to_device, run(f, inputs) -> result, synchronize, to_host)."""
    out = {}
    if device == "cuda":
        import cupy
        out["cupy"] = (cupy.asarray, lambda f, xs: f(cupy, *xs),
                       cupy.cuda.Device().synchronize, cupy.asnumpy)
        sync = cupy.cuda.Device().synchronize
    else:
        out["numpy"] = (np.asarray, lambda f, xs: f(np, *xs), lambda: None, np.asarray)
        sync = lambda: None  # noqa: E731
    out = {"lazyrt": (lambda x: lazy.tensor(x, device=device).sync(),
                      lazy_run, sync, lambda t: t.numpy()), **out}
    torch = optional("torch")
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        tsync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        put = lambda x: torch.from_numpy(x).to(device)  # noqa: E731
        back = lambda t: t.cpu().numpy()  # noqa: E731
        out["torch"] = (put, lambda f, xs: torch_form(f)(torch, *xs), tsync, back)
        if compile_:
            compiled: dict = {}

            def run_compiled(f, xs):
                if f not in compiled:
                    g = torch_form(f)
                    compiled[f] = torch.compile(lambda *ys: g(torch, *ys))
                return compiled[f](*xs)
            out["torch.compile"] = (put, run_compiled, tsync, back)
    jax = optional("jax")
    if jax is not None and any(d.platform == ("gpu" if device == "cuda" else "cpu")
                               for d in jax.devices()):
        import jax.numpy as jnp
        jitted: dict = {}

        def run_jax(f, xs):
            if f not in jitted:
                jitted[f] = jax.jit(lambda *ys: f(jnp, *ys))
            return jitted[f](*xs).block_until_ready()
        out["jax"] = (jax.device_put, run_jax, lambda: None, np.asarray)
    return out


def bench(run, sync, f, xs, repeat: int) -> tuple[float, float, object]:
    """(first call s, median s of the next `repeat` after a second warm-up, result)."""
    t0 = time.perf_counter()
    r = run(f, xs)
    sync()
    first = time.perf_counter() - t0
    run(f, xs)
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = run(f, xs)
        sync()
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times), r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args()
    if args.device == "cuda":
        from cuda_backend import probe
        ok, why = probe()
        if not ok:
            print(f"bench_gpu_workloads: {why}; nothing to measure")
            return 0
        print(f"device: {why}")
    ps = peers(args.device, not args.no_compile)
    names = list(ps)
    print("peers: " + ", ".join(names))
    print(f"{'case':5s} {'what':34s} " + " ".join(f"{n + ' ms':>16s}" for n in names)
          + "   lazyrt GB/s  first call ms (lazyrt)")
    for key, title, host, f, nbytes, rtol, atol in cases():
        want = f(np, *host)
        cells, ms = [], {}
        first_lazy = float("nan")
        for name in names:
            put, run, sync, back = ps[name]
            xs = [put(x) for x in host]
            sync()
            try:
                first, med, r = bench(run, sync, f, xs, args.repeat)
            except Exception as e:  # a peer that cannot run a case says so and the rest go on
                cells.append(f"{'error':>16s}")
                print(f"  {name} on {key}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
                continue
            got = np.asarray(back(r))
            ok = got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)
            ms[name] = med * 1e3
            ratio = "" if name == "lazyrt" or "lazyrt" not in ms else \
                f"({ms[name] / ms['lazyrt']:.2f}x)"
            cells.append(f"{ms[name]:9.3f}{ratio:>7s}" + ("" if ok else " WRONG"))
            if name == "lazyrt":
                first_lazy = first * 1e3
        gbs = f"{nbytes / ms['lazyrt'] / 1e6:10.0f}" if nbytes and "lazyrt" in ms else f"{'-':>10s}"
        print(f"{key:5s} {title:34s} " + " ".join(cells) + f"   {gbs}  {first_lazy:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
