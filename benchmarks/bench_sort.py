"""Sorting benchmarks (sort, argsort, searchsorted): lazyrt against NumPy and
torch eager, in one run.

    python benchmarks/bench_sort.py [--repeat R] [--budget S]

Cases (float32; x of 10M, A of 4096 x 4096):

  rows        sort(A, axis=1)           4096 rows, split across threads
  columns     sort(A, axis=0)           rows that lie across memory
  argsort     argsort(A, axis=1)        stable, as the array API's default
  flat        sort(x)                   one row: buckets by value, one per thread
  argsort1d   argsort(x)                stable; int64 keys, buckets by value
  argsort64   argsort(y)                stable; y: 10M float64, two 32-bit digits
  argsort_i64 argsort(j)                stable; j: 10M int64 in [-2**62, 2**62), two digits
  search      searchsorted(sort(x), k)  1M keys, split across threads
  top8        sort(exp(A) * 0.5, axis=1)[:, -8:].sum(1)  between two fused kernels
  median      median(A, axis=1)         NumPy partitions each row; torch: quantile(0.5)
  partition   partition(A, 2048, axis=1)  lazyrt sorts (a valid partition); torch: kthvalue
  quantiles   quantile(x, [0.1, 0.5, 0.9])
  unique      unique(i)                 i: 10M int64 in [0, 100000)
  valuecount  c[inv] of unique(round(x, 2), return_inverse, return_counts):
              how often each element's value occurs
  isin        isin(round(x, 2), t); t: 1000 values rounded to 0.01 (no sync)
  unique_rows unique(R, axis=0, return_inverse, return_counts), the three
              concatenated; R: 1M x 3 int64 in [0, 20); torch: unique(dim=0)
  bincount    bincount(i)               i: 10M int64 in [0, 100000); one sync for
              the length (min and max), then a histogram per thread
  bincount_w  bincount(i, y)            weights y: 10M float64
  histogram   histogram(y, 100)         y: 10M float64; one sync for the range;
              torch: histc(y, 100, min, max) (the range given)
  interp      interp(y, gp, gf)         10M float64 points into 1000 samples; no torch peer

lazyrt's sorts are stable by default (the array API's rule), so the peers
are asked for a stable result where it shows (argsort: `kind="stable"`,
`stable=True`); a sort's values are the same either way, so NumPy's and
torch's default sorts are timed there. torch.median gives the lower of
the middle pair, so its peer for NumPy's median is torch.quantile(0.5).
For lazyrt the timed call is "build + lazy.sync". Every result is checked
against NumPy's, exactly but for `top8`, torch's quantiles and the
weighted bincount (within rounding) and torch's histogram (a few elements
on bin edges may land in the next bin). This prints numbers; it asserts nothing about time.
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
    an = rng.standard_normal((4096, 4096), dtype=np.float32)
    sn, kn = np.sort(xn), rng.standard_normal(1_000_000, dtype=np.float32)
    gp, gf = np.sort(rng.standard_normal(1000) * 2), rng.standard_normal(1000)
    x, a, s, k = lazy.asarray(xn), lazy.asarray(an), lazy.asarray(sn), lazy.asarray(kn)
    iin, rn = rng.integers(0, 100_000, 10_000_000), np.round(xn, 2)
    i, r = lazy.asarray(iin), lazy.asarray(rn)
    yn, jn = rng.standard_normal(10_000_000), rng.integers(-2 ** 62, 2 ** 62, 10_000_000)
    y, j = lazy.asarray(yn), lazy.asarray(jn)
    rrn = rng.integers(0, 20, (1_000_000, 3))
    rr = lazy.asarray(rrn)
    tn = np.round(rng.standard_normal(1000, dtype=np.float32), 2)
    t = lazy.asarray(tn)
    out = {
        "rows": (lambda: lnp.sort(a, axis=1), lambda: np.sort(an, axis=1)),
        "columns": (lambda: lnp.sort(a, axis=0), lambda: np.sort(an, axis=0)),
        "argsort": (lambda: lnp.argsort(a, axis=1),
                    lambda: np.argsort(an, axis=1, kind="stable")),
        "flat": (lambda: lnp.sort(x), lambda: np.sort(xn)),
        "argsort1d": (lambda: lnp.argsort(x), lambda: np.argsort(xn, kind="stable")),
        "argsort64": (lambda: lnp.argsort(y), lambda: np.argsort(yn, kind="stable")),
        "argsort_i64": (lambda: lnp.argsort(j), lambda: np.argsort(jn, kind="stable")),
        "search": (lambda: lnp.searchsorted(s, k), lambda: np.searchsorted(sn, kn)),
        "top8": (lambda: lnp.sort(lnp.exp(a) * 0.5, axis=1)[:, -8:].sum(axis=1),
                 lambda: np.sort(np.exp(an) * 0.5, axis=1)[:, -8:].sum(axis=1)),
        "median": (lambda: lnp.median(a, axis=1), lambda: np.median(an, axis=1)),
        "partition": (lambda: lnp.partition(a, 2048, axis=1),
                      lambda: np.partition(an, 2048, axis=1)),
        "quantiles": (lambda: lnp.quantile(x, [0.1, 0.5, 0.9]),
                      lambda: np.quantile(xn, [0.1, 0.5, 0.9])),
        "unique": (lambda: lnp.unique(i), lambda: np.unique(iin)),
        "valuecount": (lambda: value_counts(lnp, r), lambda: value_counts(np, rn)),
        "isin": (lambda: lnp.isin(r, t), lambda: np.isin(rn, tn)),
        "unique_rows": (lambda: unique_rows(lnp, rr), lambda: unique_rows(np, rrn)),
        "bincount": (lambda: lnp.bincount(i), lambda: np.bincount(iin)),
        "bincount_w": (lambda: lnp.bincount(i, y), lambda: np.bincount(iin, yn)),
        "histogram": (lambda: lnp.histogram(y, 100)[0], lambda: np.histogram(yn, 100)[0]),
        "interp": (lambda: lnp.interp(y, gp, gf), lambda: np.interp(yn, gp, gf)),
    }
    checks = {"top8": close, "median": close, "quantiles": close, "partition": kth_column,
              "bincount_w": close, "histogram": counts_close}
    if torch is None:
        return {n: (lz, npf, None, *([checks[n]] if n in checks else []))
                for n, (lz, npf) in out.items()}
    xt, at, st, kt, it, rt, yt, jt, rrt, tt = (torch.from_numpy(v) for v in
                                               (xn, an, sn, kn, iin, rn, yn, jn, rrn, tn))
    peers = {"rows": lambda: torch.sort(at, 1).values, "columns": lambda: torch.sort(at, 0).values,
             "argsort": lambda: torch.argsort(at, dim=1, stable=True),
             "flat": lambda: torch.sort(xt).values, "search": lambda: torch.searchsorted(st, kt),
             "argsort1d": lambda: torch.argsort(xt, stable=True),
             "argsort64": lambda: torch.argsort(yt, stable=True),
             "argsort_i64": lambda: torch.argsort(jt, stable=True),
             "top8": lambda: (torch.sort(torch.exp(at) * 0.5, 1).values[:, -8:]).sum(1),
             "median": lambda: torch.quantile(at, 0.5, dim=1),
             "partition": lambda: torch.kthvalue(at, 2049, dim=1).values,
             "quantiles": lambda: torch.quantile(xt, torch.tensor([0.1, 0.5, 0.9],
                                                                  dtype=torch.float64).float()),
             "unique": lambda: torch.unique(it),
             "valuecount": lambda: torch_value_counts(rt),
             "isin": lambda: torch.isin(rt, tt),
             "unique_rows": lambda: torch.cat([r.reshape(-1) for r in torch.unique(
                 rrt, dim=0, return_inverse=True, return_counts=True)]),
             "bincount": lambda: torch.bincount(it),
             "bincount_w": lambda: torch.bincount(it, torch.from_numpy(yn)),
             "histogram": lambda: torch.histc(yt, 100, float(yn.min()), float(yn.max()))}
    return {n: (lz, npf, peers.get(n), *([checks[n]] if n in checks else []))
            for n, (lz, npf) in out.items()}


def value_counts(xp, x):
    """How often each element's value occurs in x: NumPy's and lazyrt's spelling."""
    _, inverse, counts = xp.unique(x, return_inverse=True, return_counts=True)
    return counts[inverse]


def unique_rows(xp, x):
    """The distinct rows, each row's place among them and their counts, as one array."""
    values, inverse, counts = xp.unique(x, axis=0, return_inverse=True, return_counts=True)
    return xp.concatenate([values.reshape(-1), inverse, counts])


def torch_value_counts(x):
    _, inverse, counts = torch.unique(x, return_inverse=True, return_counts=True)
    return counts[inverse]


def close(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """exp is within an ulp of NumPy's, the sums of 8 add in another order, and
    torch interpolates quantiles by another formula (lazyrt's are NumPy's to the
    bit: tests/test_quantiles.py)."""
    return bool(np.allclose(r, ref, rtol=1e-5)), "rtol 1e-5"


def counts_close(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """torch's histc places an element on a bin edge by its own arithmetic
    (lazyrt's counts are NumPy's exactly: tests/test_counting.py)."""
    moved = float(np.abs(r - ref).sum())
    return moved <= 1e-5 * float(ref.sum()), f"{moved:.0f} elements in other bins"


def kth_column(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """A partition fixes only the kth place (torch's kthvalue gives just that)."""
    col = r if r.ndim == 1 else r[:, 2048]
    return bool(np.array_equal(col, ref[:, 2048])), "the kth column"


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
