"""The peers of the benchmark suite: which import, and each one's calling idiom."""
from __future__ import annotations

import os

import numpy as np

import lazy
from common import torch_from_numpy


# ------------------------------------------------------------------ peers

def _try_import(name):
    try:
        return __import__(name)
    except Exception:  # noqa: BLE001  (optional peer; any import failure means absent)
        return None


ne = numba = torch = jax = jnp = None


def load_peers():
    """Import the optional peers (not in the --child subprocesses, which need only lazy)."""
    global ne, numba, torch, jax, jnp
    ne = _try_import("numexpr")
    numba = _try_import("numba")
    torch = _try_import("torch")
    jax = _try_import("jax")
    if jax is not None:
        import jax.numpy as jnp


PEERS = ["lazyrt", "numpy", "numexpr", "numba", "torch", "torch.compile", "jax"]


def peer_available(p: str) -> bool:
    return {"lazyrt": True, "numpy": True, "numexpr": ne is not None, "numba": numba is not None,
            "torch": torch is not None, "torch.compile": torch is not None,
            "jax": jax is not None}[p]


def versions() -> dict:
    import llvmlite
    jaxlib = _try_import("jaxlib")
    return {"lazyrt": lazy.__version__, "numpy": np.__version__, "llvmlite": llvmlite.__version__,
            "numexpr": ne and ne.__version__, "numba": numba and numba.__version__,
            "torch": torch and torch.__version__,
            "jax": jax and f"{jax.__version__} (jaxlib {jaxlib.__version__ if jaxlib else '?'})"}


def threads_line() -> str:
    parts = ["LAZY_NUM_THREADS=" + os.environ.get("LAZY_NUM_THREADS", "(unset: all cores)")]
    if ne:
        parts.append(f"numexpr {ne.nthreads}")
    if numba:
        parts.append(f"numba {numba.get_num_threads()}")
    if torch:
        parts.append(f"torch {torch.get_num_threads()}")
    if jax:
        parts.append("jax (XLA CPU, its own pool)")
    return ", ".join(parts)


def tc(x):
    return torch_from_numpy(torch, x)


def jput(x):
    return jax.device_put(x)


def jready(f):
    """A jitted JAX function whose call waits for the result."""
    jf = jax.jit(f)
    return lambda *a: jf(*a).block_until_ready()


def tcompile(f):
    return torch.compile(f, dynamic=False)


_NB = None


def nb_kernels():
    """numba kernels, defined once (compiled at their first call)."""
    global _NB
    if _NB is not None:
        return _NB
    nj = numba.njit
    pr = numba.prange
    f32 = np.float32

    @nj(parallel=True, cache=False)
    def w1(x):
        out = np.empty(x.shape[0], dtype=f32)
        for i in pr(x.shape[0]):
            out[i] = x[i, 0] ** 2 + x[i, 1] ** 3
        return out

    @nj(parallel=True, cache=False)
    def w2(a, b, c):
        out = np.empty(a.shape[0], dtype=f32)
        for i in pr(a.shape[0]):
            if a[i] > 0:
                v = np.sqrt(np.abs(a[i])) * b[i]
            else:
                v = np.exp(-c[i]) / (f32(1) + b[i] * b[i])
            out[i] = max(v, c[i])
        return out

    # fastmath for the reductions: without it LLVM may not reorder (vectorize) a sum
    @nj(parallel=True, fastmath=True, cache=False)
    def w3_rows(A):
        out = np.empty(A.shape[0], dtype=f32)
        for i in pr(A.shape[0]):
            s = f32(0)
            for j in range(A.shape[1]):
                s += A[i, j]
            out[i] = s
        return out

    @nj(parallel=True, fastmath=True, cache=False)
    def w3_all(x):
        s = 0.0
        for i in pr(x.shape[0]):
            s += x[i]
        return s

    @nj(parallel=True, fastmath=True, cache=False)
    def w4(x):
        out = np.empty_like(x)
        for i in pr(x.shape[0]):
            m = x[i, 0]
            for j in range(x.shape[1]):
                m = max(m, x[i, j])
            s = f32(0)
            for j in range(x.shape[1]):
                e = np.exp(x[i, j] - m)
                out[i, j] = e
                s += e
            for j in range(x.shape[1]):
                out[i, j] = out[i, j] / s
        return out

    @nj(parallel=True, cache=False)
    def w5(A):
        n = A.shape[0]
        out = np.empty_like(A)
        for i in pr(n):
            for j in range(n):
                out[i, j] = A[i, j] + A[j, i]
        return out

    @nj(parallel=True, cache=False)
    def w8(b, s, c):
        out = np.empty_like(b)
        for i in pr(b.shape[0]):
            out[i] = b[i] + s * c[i]
        return out

    _NB = dict(w1=w1, w2=w2, w3_rows=w3_rows, w3_all=w3_all, w4=w4, w5=w5, w8=w8)
    return _NB


def lazy_sync(fn):
    def run():
        y = fn()
        lazy.sync(y)
        return y
    return run


