"""Statistical reductions: sum, prod, max, min, mean, var, std (native) and the
cumulative ones (deferred extern kernels: lazy/scan.py).

Native reductions fuse their elementwise producers; `var` is two
reductions (the mean, then the sum of squared deviations).
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from scheduler.dtypes import DType, as_dtype, bool_, float64, float_result, int64

from .. import counting, elementwise, reductions, views
from ..fallback import numpy_fallback
from ..scan import scan
from ..tensor import Tensor
from ._helpers import store_out, tensor
from ._manipulation import numpy_axes


def _input(x: object, dtype: object) -> Tensor:
    t = tensor(x)
    return t if dtype is None else elementwise.cast(t, as_dtype(dtype))


def _reduce(op: str, x: object, axis: object, keepdims: bool, dtype: object = None,
            initial: object = None, where: object = True) -> Tensor:
    """One reduction with NumPy's `initial` (the start value, in the result
    dtype) and `where` (a bool mask, broadcast to x; the elements it leaves
    out count as the op's identity: 0, 1, or for max/min the dtype's lowest
    or highest value, which then needs an `initial`, as NumPy says)."""
    t = _input(x, dtype)
    axes = numpy_axes(axis, t.ndim, scalar_int=True)
    if where is not True:
        t = elementwise.apply("where", _mask(where, t.shape), t, _identity(op, t.dtype, initial))
    if initial is not None and op in ("max", "min") and \
            _count(t, range(t.ndim) if axes is None else axes) == 0:  # nothing but initial
        return elementwise.filled(initial, t.dtype,
                                  _kept_shape(t.shape, axes, keepdims), t.device)
    out = reductions.reduce(t, op, axes, keepdims)
    if dtype is not None and out.dtype != as_dtype(dtype):
        out = elementwise.cast(out, as_dtype(dtype))
    if initial is not None:
        combine = {"sum": "add", "prod": "mul", "max": "maximum", "min": "minimum"}[op]
        # initial as the result dtype holds it, as NumPy casts it: sum(ints, initial=0.5)
        out = elementwise.apply(combine, out, elementwise.const(initial, out.dtype, (),
                                                                out.device))
    return out


def _mask(where: object, shape: tuple[int, ...]) -> Tensor:
    """`where` as a bool tensor that broadcasts to `shape` (NumPy's checks)."""
    m = tensor(where)
    if m.dtype != bool_:
        raise TypeError(f"Cannot cast array data from dtype('{m.dtype.np}') to dtype('bool') "
                        f"according to the rule 'safe'")
    if elementwise.broadcast_shapes(m.shape, shape) != shape:
        raise ValueError(f"where= of shape {m.shape} does not broadcast to the input's "
                         f"shape {shape}")
    return m


def _identity(op: str, dtype: DType, initial: object) -> object:
    """The value a masked-out element takes: the op's identity."""
    if op in ("sum", "prod"):
        return 0 if op == "sum" else 1
    if initial is None:
        name = "maximum" if op == "max" else "minimum"
        raise ValueError(f"reduction operation '{name}' does not have an identity, so to use "
                         f"a where mask one has to specify 'initial'")
    if dtype.is_bool:
        return op == "min"
    if dtype.is_float:
        return -math.inf if op == "max" else math.inf
    info = np.iinfo(dtype.np)
    return int(info.min if op == "max" else info.max)


def _kept_shape(shape: tuple[int, ...], axes: object, keepdims: bool) -> tuple[int, ...]:
    axes = range(len(shape)) if axes is None else axes
    return tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes)


# Arguments keep NumPy's positional order (np.sum(x, 0) works); `out=` is a lazy write.
def sum(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        keepdims: bool = False, initial: object = None, where: object = True) -> Tensor:
    """Sum; bool and int32 give int64 (NumPy); float32 accumulates in float64."""
    return store_out(_reduce("sum", x, axis, keepdims, dtype, initial, where), out)


def prod(x: object, /, axis: object = None, dtype: object = None, out: object = None,
         keepdims: bool = False, initial: object = None, where: object = True) -> Tensor:
    return store_out(_reduce("prod", x, axis, keepdims, dtype, initial, where), out)


def max(x: object, /, axis: object = None, out: object = None, keepdims: bool = False,
        initial: object = None, where: object = True) -> Tensor:
    """Maximum (NaN propagates); an empty reduction raises ValueError unless
    it has an `initial`, as NumPy."""
    return store_out(_reduce("max", x, axis, keepdims, None, initial, where), out)


def min(x: object, /, axis: object = None, out: object = None, keepdims: bool = False,
        initial: object = None, where: object = True) -> Tensor:
    return store_out(_reduce("min", x, axis, keepdims, None, initial, where), out)


def _count(t: Tensor, axes: tuple[int, ...]) -> int:
    return math.prod(t.shape[a] for a in axes)


def _floating(x: object) -> Tensor:
    """Input for var/std: bool and integers compute in float64, as NumPy."""
    t = tensor(x)
    return t if t.dtype.is_float else elementwise.cast(t, float64)


def mean(x: object, /, axis: object = None, dtype: object = None, out: object = None,
         keepdims: bool = False, *, where: object = True) -> Tensor:
    """Arithmetic mean in the floating dtype (float64 for bool and integers);
    an integer `dtype` gives NumPy's truncated integer mean. With `where`,
    the mean of the elements it keeps (NaN where it keeps none, as NumPy)."""
    t = tensor(x)
    axes = numpy_axes(axis, t.ndim)
    if where is True:
        return store_out(reductions.mean(t, axes, keepdims, dtype=dtype), out)
    return store_out(_masked_mean(t, axes, keepdims, dtype, _mask(where, t.shape)), out)


def _masked_mean(t: Tensor, axes: tuple[int, ...], keepdims: bool, dtype: object,
                 m: Tensor) -> Tensor:
    """The sum of the elements `m` keeps over how many it keeps, the sum in
    the dtype `reductions.mean` adds in and the count cast to it."""
    want = None if dtype is None else as_dtype(dtype)
    acc = want or float_result(int64 if t.dtype.is_bool else t.dtype)
    kept = elementwise.apply("where", m, elementwise.cast(t, acc), 0)
    sums = reductions.reduce(kept, "sum", axes, keepdims)
    quotient = elementwise.apply("truediv", sums, _kept(m, t.shape, axes, keepdims, sums.dtype))
    return quotient if acc.is_float else elementwise.cast(quotient, acc)


def _kept(m: Tensor, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool,
          dtype: DType) -> Tensor:
    """How many elements the mask `m` keeps along `axes`, as `dtype`."""
    ones = elementwise.cast(views.broadcast_to(m, shape), int64)
    return elementwise.cast(reductions.reduce(ones, "sum", axes, keepdims), dtype)


def _correction(ddof: float | None, correction: float | None) -> float:
    """NumPy's rule for its two names of one argument: `correction` (the
    array API's) replaces `ddof` (NumPy's), and a nonzero `ddof` beside it
    raises; a None `ddof` is 0."""
    if correction is None:
        return 0 if ddof is None else ddof
    if ddof is not None and ddof != 0:
        raise ValueError(f"ddof and correction can't be provided simultaneously "
                         f"(got ddof={ddof!r} and correction={correction!r})")
    return correction


def var(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        ddof: float | None = 0, keepdims: bool = False, *, where: object = True,
        mean: object = None, correction: float | None = None) -> Tensor:
    """Variance: mean squared deviation over N - correction (`ddof` is NumPy's
    name). `where` keeps some elements (N counts those); `mean` is NumPy's
    precomputed mean, shaped as by keepdims=True."""
    correction = _correction(ddof, correction)
    if dtype is not None and not as_dtype(dtype).is_float:
        if where is not True or mean is not None:
            return numpy_fallback("var", np.var, (tensor(x),),
                                  {"axis": axis, "dtype": as_dtype(dtype).np, "ddof": correction,
                                   "keepdims": keepdims, "where": where, "mean": mean})
        return store_out(_integer_var(tensor(x), axis, as_dtype(dtype), correction, keepdims),
                         out)
    # NumPy's order: the mean and the final sum in `dtype`, the deviations in
    # the promoted dtype, so float64 data keeps its precision under dtype=float32.
    t = _floating(x)
    axes = numpy_axes(axis, t.ndim)
    m = None if where is True else _mask(where, t.shape)
    if mean is None:
        mean = reductions.mean(t, axes, True, dtype=dtype) if m is None else \
            _masked_mean(t, axes, True, dtype, m)
    dev = elementwise.apply("sub", t, mean)
    total = _reduce("sum", elementwise.apply("mul", dev, dev), axes, keepdims, dtype,
                    where=where)
    if m is None:
        n = float(builtins.max(_count(t, axes) - correction, 0))
    else:
        n = elementwise.apply("maximum", elementwise.apply(
            "sub", _kept(m, t.shape, axes, keepdims, total.dtype), correction), 0)
    return store_out(elementwise.apply("truediv", total, n), out)


def _integer_var(t: Tensor, axis: object, want: DType, correction: float,
                 keepdims: bool) -> Tensor:
    """NumPy's variance with an integer or bool `dtype`: the mean truncated
    into `want`, the input's deviations from it squared and summed in `want`
    (wrapping as NumPy's do), and the quotient truncated into `want` too."""
    axes = numpy_axes(axis, t.ndim)
    dev = elementwise.apply("sub", t, reductions.mean(t, axes, True, dtype=want))
    total = _reduce("sum", elementwise.apply("mul", dev, dev), axes, keepdims, want)
    n = _count(t, axes)
    return elementwise.cast(elementwise.apply("truediv", total,
                                              float(builtins.max(n - correction, 0))), want)


def std(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        ddof: float | None = 0, keepdims: bool = False, *, where: object = True,
        mean: object = None, correction: float | None = None) -> Tensor:
    """Square root of `var`. With an integer `dtype`, NumPy truncates a
    single (0-d) result into it and refuses any other, because sqrt's
    float64 output cannot be stored into an integer array: so does this."""
    v = var(x, axis, dtype, None, ddof, keepdims, where=where, mean=mean, correction=correction)
    if v.dtype.is_float:  # no dtype, or a floating one; sqrt's out= is same_kind in NumPy
        return store_out(elementwise.apply("sqrt", v), out, "same_kind", "ufunc 'sqrt'")
    if v.ndim:
        raise TypeError(f"std with dtype={v.dtype.name} and a result of shape {v.shape}: "
                        f"sqrt's float64 output cannot be cast to {v.dtype.name} "
                        f"(casting='same_kind'), as in NumPy; pass a floating dtype")
    return store_out(elementwise.cast(elementwise.apply("sqrt", v), v.dtype), out)


def cumulative_sum(x: object, /, *, axis: int | None = None, dtype: object = None,
                   include_initial: bool = False) -> Tensor:
    """The array API's running sum: `axis` is required above one dimension."""
    return _cumulative("cumsum", x, axis, dtype, include_initial)


def cumulative_prod(x: object, /, *, axis: int | None = None, dtype: object = None,
                    include_initial: bool = False) -> Tensor:
    return _cumulative("cumprod", x, axis, dtype, include_initial)


def _cumulative(op: str, x: object, axis: int | None, dtype: object,
                include_initial: bool) -> Tensor:
    t = tensor(x)
    if axis is None and t.ndim > 1:
        raise ValueError(f"cumulative_{op[3:]}: an input of {t.ndim} dimensions (shape "
                         f"{t.shape}) needs an axis, got None")
    return scan(t, op, axis, dtype, include_initial=include_initial)


def histogram(a: object, bins: object = 10, range: object = None,  # noqa: A002 (NumPy's)
              density: object = None, weights: object = None) -> tuple[Tensor, Tensor]:
    """NumPy's histogram: with an int `bins`, lazy (lazy/counting.py; one
    sync for the range when none is given); bins as edges or a rule name
    ('auto', ...), and bool data, run as a logged NumPy fallback."""
    t = tensor(a)
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)) or \
            t.dtype.is_bool:
        return numpy_fallback("histogram", np.histogram, (t,),
                              {"bins": bins, "range": range, "density": density,
                               "weights": weights})
    return counting.histogram(t, bins, range, weights, density)


def cumsum(a: object, axis: int | None = None, dtype: object = None) -> Tensor:
    """NumPy's cumsum (flattens when axis is None)."""
    return scan(tensor(a), "cumsum", axis, dtype)


def cumprod(a: object, axis: int | None = None, dtype: object = None) -> Tensor:
    return scan(tensor(a), "cumprod", axis, dtype)


__all__ = ["cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "histogram", "max", "mean",
           "min",
           "prod", "std", "sum", "var"]
