"""logsumexp, softmax and log_softmax (scipy.special / torch names).

`logsumexp` is one reduction (an online running max and rescaled sum,
scheduler/ops.py). Softmax reads two parts of that same pass, the max and
the log of the rescaled sum: `exp((x - max) - log_sum)` reads x twice, one
reduction kernel, then one elementwise kernel, where the textbook
`e = exp(x - max); e / sum(e)` takes four passes and writes `e`.
"""
from __future__ import annotations

from scheduler.dtypes import float_result
from scheduler.passes import LSE_PARTS, lse_part_view

from . import elementwise, reductions, runtime
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
    """(t - max) - log_sum over `axis`, both parts of one logsumexp pass
    (scheduler/passes.py, which rewrites the softmax idiom the same way).
    NaN where the max is not finite: a row holding +inf or only -inf gives
    NaN, as `exp(x - max) / sum(...)` does in NumPy and torch.

    Not t - logsumexp(t): at |t| of about 1e16 (and rows of float32's min,
    a fully masked attention row) max + log_sum has rounded log_sum away.
    """
    axes = reductions.axes_of(t.shape, axis, "logsumexp")
    if not axes:  # nothing to reduce: log_softmax of one value is 0 (NaN if not finite)
        return t - t
    kshape = tuple(1 if d in axes else n for d, n in enumerate(t.shape))
    pair = runtime.make("reduce", ((t._buf, t._view),), ("logsumexp", axes, LSE_PARTS), t.dtype,
                        kshape + (len(LSE_PARTS),), t.device)
    return (t - pair._as(lse_part_view(kshape, kshape, 0))) \
        - pair._as(lse_part_view(kshape, kshape, 1))


def softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """exp(x) / sum(exp(x)) over `axis` (None: all elements, as scipy; torch's
    `dim` is accepted), computed as exp((x - max) - log_sum): two passes over
    x, as accurate as the textbook form at any magnitude (see `_log_softmax`)."""
    t = _float(x)
    return elementwise.apply("exp", _log_softmax(t, dim if dim is not None else axis))


def log_softmax(x: object, axis=None, *, dim=None) -> Tensor:
    """x - logsumexp(x) over `axis` (None: all elements; or torch's `dim`),
    computed as (x - max) - log_sum."""
    return _log_softmax(_float(x), dim if dim is not None else axis)
