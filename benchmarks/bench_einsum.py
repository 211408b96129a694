"""einsum benchmarks: lazyrt against NumPy's einsum and torch.einsum, in one run.

    python benchmarks/bench_einsum.py [--repeat R] [--budget S]

Cases (float32):

  matmul      ij,jk->ik         1024 x 1024 each: one matmul (BLAS)
  batched     bij,bjk->bik      64 x 256 x 256: one batched matmul
  rowdot      ij,ij->i          4096 x 4096: a fused multiply-sum
  trace       ii                4096 x 4096: a diagonal view, summed
  bilinear    i,ij,j->          x^T A y, A 4096 x 4096: two fused multiply-sums
  outer       i,j->ij           4096 each: one broadcast product
  chain       ij,jk,kl->il      512 x 512 each: two matmuls (NumPy with optimize=True,
                                as its default would loop over all four letters at once)

NumPy's einsum is called as a user would (`optimize=False`, its default,
but for `chain`). For lazyrt the timed call is "build + lazy.sync". Every
result is checked against NumPy's, within float32 rounding (sums in
another order). This prints numbers; it asserts nothing about time.
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

CASES = {  # name: (subscripts, shapes, NumPy's optimize)
    "matmul": ("ij,jk->ik", [(1024, 1024), (1024, 1024)], False),
    "batched": ("bij,bjk->bik", [(64, 256, 256), (64, 256, 256)], False),
    "rowdot": ("ij,ij->i", [(4096, 4096), (4096, 4096)], False),
    "trace": ("ii", [(4096, 4096)], False),
    "bilinear": ("i,ij,j->", [(4096,), (4096, 4096), (4096,)], False),
    "outer": ("i,j->ij", [(4096,), (4096,)], False),
    "chain": ("ij,jk,kl->il", [(512, 512)] * 3, True),
}


def cases() -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for name, (subscripts, shapes, optimize) in CASES.items():
        arrays = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
        tensors = [lazy.asarray(a) for a in arrays]
        peer = None
        if torch is not None:
            ts = [torch.from_numpy(a) for a in arrays]
            peer = (lambda s, ts: lambda: torch.einsum(s, *ts))(subscripts, ts)
        out[name] = ((lambda s, ts: lambda: lnp.einsum(s, *ts))(subscripts, tensors),
                     (lambda s, a, o: lambda: np.einsum(s, *a, optimize=o))(subscripts, arrays,
                                                                          optimize),
                     peer, close)
    return out


def close(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """Float32 sums in another order (lazyrt's in float64 blocks, BLAS's in its own)."""
    scale = max(1.0, float(np.max(np.abs(ref))))
    return bool(np.allclose(r, ref, rtol=1e-3, atol=1e-4 * scale)), "rtol 1e-3"


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
