"""logsumexp, softmax and log_softmax (scipy.special / torch names).

`logsumexp` is one reduction (an online running max and rescaled sum,
scheduler/ops.py), so `softmax(x) = exp(x - logsumexp(x))` reads x twice:
one reduction kernel, then one elementwise kernel, where the textbook
`e = exp(x - max); e / sum(e)` takes four passes and writes `e`.
"""
from __future__ import annotations

from scheduler.dtypes import float_result
from scheduler.ops import REDUCTIONS

from . import elementwise, reductions
from .tensor import Tensor, asarray_like


def _float(x: object) -> Tensor:
    t = x if isinstance(x, Tensor) else asarray_like(x, "cpu")
    return elementwise.cast(t, float_result(t.dtype))


def logsumexp(x: object, axis=None, keepdims: bool = False, *, dim=None,
              keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `axis` without overflow, as scipy.special.logsumexp:
    -inf for an empty or all -inf reduction, +inf when a +inf is present."""
    return reductions.reduce(_float(x), "logsumexp", axis, keepdims, dim=dim, keepdim=keepdim)


def _shift(t: Tensor, axis) -> Tensor:
    """logsumexp(t, axis, keepdims) made NaN where it is not finite (lse + (lse -
    lse)): a row holding +inf or only -inf gives NaN, as `exp(x - max) / sum(...)`
    does in NumPy and torch."""
    lse = logsumexp(t, axis, keepdims=True)
    return lse + (lse - lse)


def softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """exp(x) / sum(exp(x)) over `axis` (None: all elements, as scipy; torch's
    `dim` is accepted), computed as exp(x - logsumexp(x)): two passes over x.

    logsumexp is rounded to x's dtype, so the relative error is about
    |logsumexp| * eps (float32: 5e-7 for logits up to 10, 5e-4 at 1e4); the
    same as the softmax rewrite (docs/fusion.md)."""
    t = _float(x)
    return elementwise.apply("exp", t - _shift(t, dim if dim is not None else axis))


def log_softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """x - logsumexp(x) over `axis` (None: all elements; or torch's `dim`).

    For float32, logsumexp is kept in float64 and split into float32 hi + lo,
    x - lse computed as (x - hi) - lo: float32 accuracy even for large x
    (there is no exp in this pass, so the float64 reads per row cost little)."""
    t = _float(x)
    axis = dim if dim is not None else axis
    acc = REDUCTIONS["logsumexp"].acc_dtype(t.dtype)
    if acc == t.dtype:
        return t - _shift(t, axis)
    lse = reductions.reduce(t, "logsumexp", axis, keepdims=True, dtype=acc)
    shift = lse + (lse - lse)
    hi = elementwise.cast(shift, t.dtype)
    return (t - hi) - elementwise.cast(shift - elementwise.cast(hi, acc), t.dtype)
