"""Sibling reductions: several reductions of the same data in one pass
(docs/fusion.md, rule 8), lazyrt against NumPy and torch eager, in one run.

    python benchmarks/bench_siblings.py [--repeat R] [--budget S]

Cases (float32, A of 4096 x 4096; An: A with 10% NaN):

  range         A.max() - A.min()          one kernel, A read once; NumPy np.ptp(A),
                                           torch aminmax
  range_rows    A.max(1) - A.min(1)        the same per row
  normalize     (A - A.min()) / (A.max() - A.min())
                                           two kernels: the range, then the scaling
  pos_mean      A.sum(1) / (A > 0).sum(1)  a sum and a count in one loop
  nanmean_rows  nanmean(An, axis=1)        nanmean's sum and count in one loop

For lazyrt the timed call is "build + lazy.sync". Every result is checked
against NumPy's (float32 rounding). This prints numbers; it asserts
nothing about time.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # run from a checkout without installing
import lazy  # noqa: E402
import lazy.numpy as lnp  # noqa: E402
from bench_nan import close  # noqa: E402
from common import case_bench_main, optional  # noqa: E402

torch = optional("torch")


def cases() -> dict:
    rng = np.random.default_rng(0)
    an = rng.standard_normal((4096, 4096), dtype=np.float32)
    nn = an.copy()
    nn[rng.random(nn.shape) < 0.1] = np.nan
    a, n = lazy.asarray(an), lazy.asarray(nn)
    at = torch.from_numpy(an) if torch is not None else None
    nt = torch.from_numpy(nn) if torch is not None else None

    def t_range(dim=None):
        r = torch.aminmax(at) if dim is None else torch.aminmax(at, dim=dim)
        return r.max - r.min

    def t_normalize():
        r = torch.aminmax(at)
        return (at - r.min) / (r.max - r.min)

    out = {
        "range": (lambda: a.max() - a.min(), lambda: np.ptp(an), at is not None and t_range),
        "range_rows": (lambda: a.max(1) - a.min(1), lambda: np.ptp(an, axis=1),
                       at is not None and (lambda: t_range(1))),
        "normalize": (lambda: (a - a.min()) / (a.max() - a.min()),
                      lambda: (an - an.min()) / (an.max() - an.min()),
                      at is not None and t_normalize),
        "pos_mean": (lambda: a.sum(1) / (a > 0).sum(1),
                     lambda: an.sum(1) / (an > 0).sum(1),
                     at is not None and (lambda: at.sum(1) / (at > 0).sum(1))),
        "nanmean_rows": (lambda: lnp.nanmean(n, axis=1), lambda: np.nanmean(nn, axis=1),
                         nt is not None and (lambda: torch.nanmean(nt, 1))),
    }
    return {k: (lz, npf, peer or None, close) for k, (lz, npf, peer) in out.items()}


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
