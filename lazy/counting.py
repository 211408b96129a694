"""`bincount` as a deferred extern kernel (NumPy's and PyTorch's), and
NumPy's `histogram` with equal bins on top of it.

Its length is max(x) + 1, and NumPy refuses negative values: both need
the values, so building it syncs once (cause `implicit: bincount`), for
x's min and max. The count itself is then an extern node like the sorts
(lazy/sorting.py): it runs at the next sync, after the kernels that make
x, as a histogram per thread on the CPU (cpu_backend/histogram.py) and
CuPy's bincount on a GPU. It was a NumPy fallback, which synced x, ran on
one thread and handed back a host copy.
"""
from __future__ import annotations

import operator

import numpy as np

from scheduler.dtypes import float64, int64

from . import elementwise, indexing, reductions, runtime
from .creation import _size
from .tensor import Tensor, asarray_like


def bincount(x: Tensor, weights: object = None, minlength: object = 0) -> Tensor:
    """How many times each of 0, 1, ..., max(x) occurs in 1-D `x` (bool or
    integers, none negative): int64; with `weights` (one per value), the
    sum of each value's weights instead: float64, as NumPy's (int64 zeros
    for an empty x, as NumPy's too). At least `minlength` long."""
    minlength = _size("bincount", "minlength", minlength)
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {x.shape}")
    if x.dtype.is_float:
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype.name}') to "
                        f"dtype('int64') according to the rule 'safe'")
    w = _weights(weights, x, "The weights and list don't have the same length")
    if x.size == 0:  # NumPy's, weights or not
        return elementwise.filled(0, int64, (minlength,), x.device)
    low, high = _bounds(x, "bincount")
    if int(low) < 0:
        raise ValueError("'list' argument must have no negative elements")
    return _counts(x, None if w is None else elementwise.cast(w, float64),
                   max(int(high) + 1, minlength))


def _weights(weights: object, x: Tensor, mismatch: str) -> Tensor | None:
    """`weights` as a tensor on x's device, shaped as x (NumPy's `mismatch`
    message otherwise), or None."""
    if weights is None:
        return None
    w = weights if isinstance(weights, Tensor) else asarray_like(weights, x.device)
    if w.shape != x.shape:
        raise ValueError(f"{mismatch}: weights of shape {w.shape}, x of shape {x.shape}")
    if w.device != x.device:
        raise ValueError(f"weights on {w.device}, x on {x.device}")
    return w


def _bounds(x: Tensor, what: str) -> tuple[np.generic, np.generic]:
    """x's min and max, as NumPy scalars of x's dtype: one implicit sync."""
    low, high = reductions.reduce(x, "min"), reductions.reduce(x, "max")
    runtime.implicit_sync(high, what, also=(low,))
    return low.numpy()[()], high.numpy()[()]


def _counts(values: Tensor, weights: Tensor | None, bins: int) -> Tensor:
    """bincount of `values` known to lie in [0, bins), weighted by float64
    `weights` or not: the extern node, no sync."""
    srcs = [(values._buf, values._view)] + ([] if weights is None else
                                           [(weights._buf, weights._view)])
    return runtime.make("bincount", tuple(srcs), bins, int64 if weights is None else float64,
                        (bins,), values.device)


def histogram(a: Tensor, bins: int, range_: tuple | None, weights: object,
              density: bool | None) -> tuple[Tensor, Tensor]:
    """NumPy's histogram with `bins` equal bins: (counts, edges). NumPy's
    steps, lazily: the edges are NumPy's own linspace (computed on the
    host, bins + 1 values), each element's bin is NumPy's index arithmetic
    with its two corrections against the edges (a fused kernel), elements
    outside the range go to one more bin that is dropped, and the counts
    are a bincount with no sync of its own. Without `range`, a's min and
    max are read in one sync, as NumPy reads them."""
    n = operator.index(bins)
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    flat = a.reshape(-1)
    w = _weights(weights, a, "weights should have the same shape as a.")
    first, last = _outer_edges(flat, range_)
    bin_type = np.result_type(first, last, a.dtype.np)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges_np = np.linspace(first, last, n + 1, endpoint=True, dtype=bin_type)
    if np.any(edges_np[:-1] >= edges_np[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
    edges = _on(edges_np, a.device)
    x = elementwise.astype(flat, edges.dtype)  # NumPy: tmp_a.astype(bin_edges.dtype)
    keep = (flat >= first) & (flat <= last)
    scaled = ((x - first) / _unsigned_subtract(last, first)) * n
    at = elementwise.astype(elementwise.apply("where", keep, scaled, 0), int64)
    at = elementwise.apply("where", at == n, n - 1, at)
    at = at - elementwise.astype(x < indexing.gather(edges, at), int64)
    up = (x >= indexing.gather(edges, at + 1)) & (at != n - 1)
    at = elementwise.apply("where", keep, at + elementwise.astype(up, int64), n)
    counts = _counts(at, None if w is None else elementwise.cast(w.reshape(-1), float64),
                     n + 1)[:n]
    if w is not None and w.dtype != float64:
        counts = elementwise.astype(counts, w.dtype)  # NumPy: .astype(weights' dtype)
    if density:
        widths = np.diff(edges_np).astype(float)
        counts = counts / _on(widths, a.device) / counts.sum()
    return counts, edges


def _on(values: np.ndarray, device: str) -> Tensor:
    """A small host array as a tensor on `device` (a logged transfer there)."""
    t = asarray_like(values, "cpu")
    return t if device == "cpu" else t.to(device)


def _outer_edges(flat: Tensor, range_: tuple | None) -> tuple[object, object]:
    """NumPy's _get_outer_edges: the range given, or a's min and max (0 and
    1 when a is empty), widened by 0.5 each way when they are equal."""
    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif flat.size == 0:
        first, last = 0, 1
    else:
        first, last = _bounds(flat, "histogram")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _unsigned_subtract(a: object, b: object) -> object:
    """NumPy's a - b for the range's width: in the unsigned type of the same
    size when both are signed integers (no overflow), else as it promotes."""
    dt = np.result_type(a, b)
    if dt.kind == "i":  # Python ints may be negative: as arrays of dt first (NEP 50)
        return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), casting="unsafe",
                           dtype=np.dtype(f"u{dt.itemsize}"))
    return np.subtract(a, b, dtype=dt)
