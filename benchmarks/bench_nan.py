"""NaN-ignoring reductions: lazyrt against NumPy and torch eager, in one run.

    python benchmarks/bench_nan.py [--repeat R] [--budget S]

Cases (float32, A of 4096 x 4096 with 10% NaN):

  nansum        nansum(A)                one kernel; NumPy copies A to replace NaNs
  nansum_rows   nansum(A, axis=1)
  nanmean_rows  nanmean(A, axis=1)       one kernel: the sum and the count are siblings
  nanmax_rows   nanmax(A, axis=1)        one pass (the nanmax reduction); NumPy's fmax.reduce
  nanmax        nanmax(A)
  nanmin_cols   nanmin(A, axis=0)        the tiled column order
  nanstd_rows   nanstd(A, axis=1)
  nanargmax     nanargmax(A, axis=1)     a sync for NumPy's all-NaN check
  nanmedian     nanmedian(A, axis=1)     rows sorted, counted, read by a gather;
                                         torch: nanmedian (the lower middle value)
  nanpct        nanpercentile(A, [5, 95], axis=1)

torch has nansum and nanmean (its amax propagates NaN, and its nanmedian
gives the lower middle value, not NumPy's mean of the two), so the other
cases have no torch column. For lazyrt the timed call is "build +
lazy.sync". Every result is checked against NumPy's (float32 rounding).
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
from common import case_bench_main, optional  # noqa: E402

torch = optional("torch")


def cases() -> dict:
    rng = np.random.default_rng(0)
    an = rng.standard_normal((4096, 4096), dtype=np.float32)
    an[rng.random(an.shape) < 0.1] = np.nan
    a = lazy.asarray(an)
    at = torch.from_numpy(an) if torch is not None else None
    out = {
        "nansum": (lambda: lnp.nansum(a), lambda: np.nansum(an),
                   at is not None and (lambda: torch.nansum(at))),
        "nansum_rows": (lambda: lnp.nansum(a, axis=1), lambda: np.nansum(an, axis=1),
                        at is not None and (lambda: torch.nansum(at, 1))),
        "nanmean_rows": (lambda: lnp.nanmean(a, axis=1), lambda: np.nanmean(an, axis=1),
                         at is not None and (lambda: torch.nanmean(at, 1))),
        "nanmax_rows": (lambda: lnp.nanmax(a, axis=1), lambda: np.nanmax(an, axis=1), None),
        "nanmax": (lambda: lnp.nanmax(a), lambda: np.nanmax(an), None),
        "nanmin_cols": (lambda: lnp.nanmin(a, axis=0), lambda: np.nanmin(an, axis=0), None),
        "nanstd_rows": (lambda: lnp.nanstd(a, axis=1), lambda: np.nanstd(an, axis=1), None),
        "nanargmax": (lambda: lnp.nanargmax(a, axis=1), lambda: np.nanargmax(an, axis=1), None),
        "nanmedian": (lambda: lnp.nanmedian(a, axis=1), lambda: np.nanmedian(an, axis=1),
                      None),
        "nanpct": (lambda: lnp.nanpercentile(a, [5, 95], axis=1),
                   lambda: np.nanpercentile(an, [5, 95], axis=1), None),
    }
    return {k: (lz, npf, peer or None, close) for k, (lz, npf, peer) in out.items()}


def close(r: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """Within float32 rounding of NumPy's (whose float32 sums are pairwise;
    lazyrt adds float32 in float64); indices exactly."""
    if ref.dtype.kind != "f":
        return bool(np.array_equal(r, ref)), "exact" if np.array_equal(r, ref) else "differ"
    scale = float(np.nanmax(np.abs(ref))) if ref.size else 0.0
    err = float(np.nanmax(np.abs(r - ref))) / scale if scale else 0.0
    ok = np.allclose(r, ref, rtol=1e-4, atol=1e-5 * scale, equal_nan=True)
    return bool(ok), f"{err:.1e} of max |ref|"


def main(argv=None) -> int:
    return case_bench_main(__doc__, cases, argv)


if __name__ == "__main__":
    sys.exit(main())
