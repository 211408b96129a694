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


def _log_softmax(t: Tensor, axis) -> Tensor:
    """t - logsumexp(t, axis), made NaN where logsumexp is not finite (lse +
    (lse - lse)): a row holding +inf or only -inf gives NaN, as `exp(x - max)
    / sum(...)` does in NumPy and torch.

    For float32, logsumexp is kept in float64 and split into float32 hi + lo,
    and t - lse computed as (t - hi) - lo: float32 accuracy for |t| up to
    about 1e10 (rounded to float32, lse would put |lse| * eps into every
    exponent). Beyond, the float64 lse loses log(sum) itself: at 1e15 and
    above, and for rows of float32's min, results are wrong (docs/fusion.md).
    The split is one value per row, so the elementwise pass stays float32
    (simd.lanes)."""
    acc = REDUCTIONS["logsumexp"].acc_dtype(t.dtype)
    lse = reductions.reduce(t, "logsumexp", axis, keepdims=True, dtype=acc)
    shift = lse + (lse - lse)
    if acc == t.dtype:
        return t - shift
    hi = elementwise.cast(shift, t.dtype)
    return (t - hi) - elementwise.cast(shift - elementwise.cast(hi, acc), t.dtype)


def softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """exp(x) / sum(exp(x)) over `axis` (None: all elements, as scipy; torch's
    `dim` is accepted), computed as exp(x - logsumexp(x)): two passes over x,
    as accurate as the textbook form for logits up to about 1e10 (see
    `_log_softmax`)."""
    t = _float(x)
    return elementwise.apply("exp", _log_softmax(t, dim if dim is not None else axis))


def log_softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """x - logsumexp(x) over `axis` (None: all elements; or torch's `dim`)."""
    return _log_softmax(_float(x), dim if dim is not None else axis)
