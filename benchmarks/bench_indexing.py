"""Advanced-indexing benchmarks: lazyrt against NumPy and torch eager, in one run.

    python benchmarks/bench_indexing.py [--repeat R] [--budget S]

Cases (float32 M of 10000 x 1000, x of 10M; keys made before timing):

  rows      M[idx]            2000 random rows (negative indices too)
  cols      M[:, cols]        500 random columns
  row_mask  M[m0]             the rows where M[:, 0] > 0
  mask      M[M > 0]          a full mask (about 5M elements)
  mask_T    M.T[M.T > 0]      the same through a transposed view
  take_1d   x[idx1]           1M random elements of x
  mask_1d   x[x > 0]

For lazyrt the timed call is "index + lazy.sync", with the mask already
realized (a mask is a sync point: its values decide the result's shape).
Every result is checked against NumPy's, exactly. This prints numbers; it
asserts nothing about time.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # run from a checkout without installing
import lazy  # noqa: E402
from common import case_bench_main, optional  # noqa: E402

torch = optional("torch")


def cases() -> dict:
    rng = np.random.default_rng(0)
    mn = rng.standard_normal((10_000, 1_000), dtype=np.float32)
    xn = rng.standard_normal(10_000_000, dtype=np.float32)
    idx = rng.integers(-10_000, 10_000, 2_000)
    cols = rng.integers(0, 1_000, 500)
    idx1 = rng.integers(0, 10_000_000, 1_000_000)
    m0, mask, xmask = mn[:, 0] > 0, mn > 0, xn > 0
    m, x = lazy.asarray(mn), lazy.asarray(xn)
    lmask, lmask_t, lxmask = lazy.asarray(mask), lazy.asarray(mask).T, lazy.asarray(xmask)
    out = {
        "rows": (lambda: m[idx], lambda: mn[idx]),
        "cols": (lambda: m[:, cols], lambda: mn[:, cols]),
        "row_mask": (lambda: m[m0], lambda: mn[m0]),
        "mask": (lambda: m[lmask], lambda: mn[mask]),
        "mask_T": (lambda: m.T[lmask_t], lambda: mn.T[mask.T]),
        "take_1d": (lambda: x[idx1], lambda: xn[idx1]),
        "mask_1d": (lambda: x[lxmask], lambda: xn[xmask]),
    }
    if torch is None:
        return {k: (lz, npf, None) for k, (lz, npf) in out.items()}
    mt, xt = torch.from_numpy(mn), torch.from_numpy(xn)
    ti, tc, t1 = (torch.from_numpy(a) for a in (idx, cols, idx1))
    tm0, tmask, txmask = (torch.from_numpy(a) for a in (m0, mask, xmask))
    tmask_t = tmask.T
    peers = {"rows": lambda: mt[ti], "cols": lambda: mt[:, tc], "row_mask": lambda: mt[tm0],
             "mask": lambda: mt[tmask], "mask_T": lambda: mt.T[tmask_t],
             "take_1d": lambda: xt[t1], "mask_1d": lambda: xt[txmask]}
    return {k: (lz, npf, peers[k]) for k, (lz, npf) in out.items()}


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
