"""Scan benchmarks (cumsum, cumprod): lazyrt against NumPy and torch eager, in one run.

    python benchmarks/bench_scan.py [--repeat R] [--budget S]

Cases (float32; x of 10M, A of 4096 x 4096):

  chain      cumsum(x)              one dependency chain, one thread
  rows       cumsum(A, axis=1)      4096 chains, split across threads
  columns    cumsum(A, axis=0)      lanes across rows (vectorized), split across threads
  prod_T     cumprod(A.T, axis=1)   a transposed view read in place
  fused      cumsum(tanh(x) * 0.5) + x  the scan between two fused kernels

For lazyrt the timed call is "build + lazy.sync". Every result is checked
against NumPy's within float32 rounding (`close`: torch accumulates in
float64; lazyrt's scan is NumPy's to the bit, which tests/test_scan.py
checks). This prints
numbers; it asserts nothing about time.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # run from a checkout without installing
import lazy  # noqa: E402
import lazy.numpy as lnp  # noqa: E402
from common import case_bench_main, optional  # noqa: E402

torch = optional("torch")


def cases() -> dict:
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(10_000_000, dtype=np.float32)
    an = rng.standard_normal((4096, 4096), dtype=np.float32) * np.float32(0.01) + 1
    x, a = lazy.asarray(xn), lazy.asarray(an)
    out = {
        "chain": (lambda: lnp.cumsum(x), lambda: np.cumsum(xn)),
        "rows": (lambda: lnp.cumsum(a, axis=1), lambda: np.cumsum(an, axis=1)),
        "columns": (lambda: lnp.cumsum(a, axis=0), lambda: np.cumsum(an, axis=0)),
        "prod_T": (lambda: lnp.cumprod(a.T, axis=1), lambda: np.cumprod(an.T, axis=1)),
        "fused": (lambda: lnp.cumsum(lnp.tanh(x) * 0.5) + x,
                  lambda: np.cumsum(np.tanh(xn) * 0.5) + xn),
    }
    if torch is None:
        return {k: (lz, npf, None, close) for k, (lz, npf) in out.items()}
    xt, at = torch.from_numpy(xn), torch.from_numpy(an)
    peers = {"chain": lambda: torch.cumsum(xt, 0), "rows": lambda: torch.cumsum(at, 1),
             "columns": lambda: torch.cumsum(at, 0), "prod_T": lambda: torch.cumprod(at.T, 1),
             "fused": lambda: torch.cumsum(torch.tanh(xt) * 0.5, 0) + xt}
    return {k: (lz, npf, peers[k], close) for k, (lz, npf) in out.items()}


def close(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """Within float32 rounding of NumPy's: torch accumulates in float64, and the
    fused case's tanh is an ulp from NumPy's here and there, which a float32
    running sum carries on (lazyrt's scan itself is NumPy's to the bit:
    tests/test_scan.py)."""
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    err = float(np.max(np.abs(r - ref))) / scale if scale else 0.0
    return bool(np.allclose(r, ref, rtol=1e-3, atol=1e-3 * scale)), f"{err:.1e} of max |ref|"


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
