"""Layout benchmarks: reversed rows, short rows, argmax and column sums,
lazyrt against NumPy and torch eager, in one run.

    python benchmarks/bench_layout.py [--repeat R] [--budget S]

Cases (float32; x of 4M, M of 4000 x 1000, P of 1M x 3, w of 1M, c of 3,
A of 262144 x 64, v of 262144):

  flip_mul      flip(x) * 2          a reversed row (inner stride -1)
  flip_copy     flip(x).copy()
  argmax        argmax(x)
  argmax_rows   argmax(M, axis=1)
  argmin        argmin(x)
  short_rows    P - c                rows of 3, c broadcast along them
  short_bcast   P * w[:, None]       rows of 3, w[i] repeated along each
  rows64_bcast  A * v[:, None]       rows of 64 (a 64 MB output, streamed a row at a time)
  repeat        repeat(w, 3)
  rev_columns   P[:, ::-1] + 1       short reversed rows
  col_sum       S.sum(axis=0)        S of 2000 x 2000
  col_sum_wide  W.sum(axis=0)        W of 200 x 20000

For lazyrt the timed call is "build + lazy.sync". Every result is checked
against NumPy's, exactly, but for the column sums: within 1e-5 of each
column's sum of |x| (torch has no negative strides: it flips by copying).
This prints numbers; it asserts nothing about time.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # run from a checkout without installing
import lazy  # noqa: E402
import lazy.numpy as lnp  # noqa: E402
from common import case_bench_main, optional, sum_check  # noqa: E402

torch = optional("torch")


def cases() -> dict:
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(4_000_000, dtype=np.float32)
    mn = rng.standard_normal((4_000, 1_000), dtype=np.float32)
    pn = rng.standard_normal((1_000_000, 3), dtype=np.float32)
    wn = rng.standard_normal(1_000_000, dtype=np.float32)
    cn = np.array([1, 2, 3], np.float32)
    sn = rng.standard_normal((2_000, 2_000), dtype=np.float32)
    wide = rng.standard_normal((200, 20_000), dtype=np.float32)
    an = rng.standard_normal((262_144, 64), dtype=np.float32)
    vn = rng.standard_normal(262_144, dtype=np.float32)
    x, m, p, w, c, sq, wd, a, v = (lazy.asarray(t) for t in (xn, mn, pn, wn, cn, sn, wide, an, vn))
    out = {
        "flip_mul": (lambda: lnp.flip(x) * 2, lambda: np.flip(xn) * 2),
        "flip_copy": (lambda: lnp.flip(x).copy(), lambda: np.flip(xn).copy()),
        "argmax": (lambda: lnp.argmax(x), lambda: np.argmax(xn)),
        "argmax_rows": (lambda: lnp.argmax(m, axis=1), lambda: np.argmax(mn, axis=1)),
        "argmin": (lambda: lnp.argmin(x), lambda: np.argmin(xn)),
        "short_rows": (lambda: p - c, lambda: pn - cn),
        "short_bcast": (lambda: p * w[:, None], lambda: pn * wn[:, None]),
        "rows64_bcast": (lambda: a * v[:, None], lambda: an * vn[:, None]),
        "repeat": (lambda: lnp.repeat(w, 3), lambda: np.repeat(wn, 3)),
        "rev_columns": (lambda: p[:, ::-1] + 1, lambda: pn[:, ::-1] + 1),
        "col_sum": (lambda: sq.sum(axis=0), lambda: sn.sum(axis=0)),
        "col_sum_wide": (lambda: wd.sum(axis=0), lambda: wide.sum(axis=0)),
    }
    checks = {k: (sum_check(np.abs(a.astype(np.float64)).sum(axis=0)),)
              for k, a in (("col_sum", sn), ("col_sum_wide", wide))}
    peers = {}
    if torch is not None:
        xt, mt, pt, wt, ct, st, wdt, at, vt = (torch.from_numpy(t) for t in
                                               (xn, mn, pn, wn, cn, sn, wide, an, vn))
        peers = {"flip_mul": lambda: torch.flip(xt, [0]) * 2,
                 "flip_copy": lambda: torch.flip(xt, [0]),
                 "argmax": lambda: torch.argmax(xt), "argmax_rows": lambda: torch.argmax(mt, dim=1),
                 "argmin": lambda: torch.argmin(xt), "short_rows": lambda: pt - ct,
                 "short_bcast": lambda: pt * wt[:, None],
                 "rows64_bcast": lambda: at * vt[:, None],
                 "repeat": lambda: torch.repeat_interleave(wt, 3),
                 "rev_columns": lambda: torch.flip(pt, [1]) + 1,
                 "col_sum": lambda: st.sum(dim=0), "col_sum_wide": lambda: wdt.sum(dim=0)}
    return {k: (lz, npf, peers.get(k), *checks.get(k, ())) for k, (lz, npf) in out.items()}


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
