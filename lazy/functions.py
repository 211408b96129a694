"""The functional forms: `lazy.exp(x)`, `lazy.where(c, a, b)`, `lazy.sum(x, axis=0)`.

This module defines `sum`, `any`, `max`, ... as NumPy does, so it uses
`builtins.` for Python's own.
"""
from __future__ import annotations

import builtins

import numpy as np

from scheduler.interpret import positions

from . import counting, elementwise, indexing, linalg, reductions, sets, sorting, views
from .einsum import einsum as contract
from .scan import scan
from .sorting import SortResult
from .tensor import Tensor, asarray_like


def _t(x: object) -> Tensor:
    return x if isinstance(x, Tensor) else asarray_like(x, "cpu")


def _unary(op: str):
    def f(x: object) -> Tensor:
        return elementwise.apply(op, _t(x))
    f.__name__ = op
    f.__doc__ = f"Elementwise {op}."
    return f


abs = _unary("abs")
negative = _unary("neg")
exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
invert = bitwise_not = _unary("invert")


def _operands(a: object, b: object) -> tuple[object, object]:
    """`a` and `b` with at least one a tensor. A Python number stays weak
    beside an array (NEP 50: `lazy.subtract(0.1, x)` has x's dtype, as
    `0.1 - x` does); of two numbers, the first becomes a tensor."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return a, b
    if elementwise.is_weak_scalar(a) and not elementwise.is_weak_scalar(b):
        return a, _t(b)
    return _t(a), b


def _binary(op: str):
    def f(a: object, b: object) -> Tensor:
        return elementwise.apply(op, *_operands(a, b))
    f.__name__ = op
    f.__doc__ = f"Elementwise {op} with NumPy broadcasting and promotion."
    return f


add, subtract, multiply, divide = _binary("add"), _binary("sub"), _binary("mul"), _binary("truediv")
floor_divide, remainder = _binary("floordiv"), _binary("mod")
maximum, minimum = _binary("maximum"), _binary("minimum")
equal, not_equal = _binary("eq"), _binary("ne")
less, less_equal, greater, greater_equal = _binary("lt"), _binary("le"), _binary("gt"), _binary("ge")
bitwise_and, bitwise_or, bitwise_xor = _binary("and"), _binary("or"), _binary("xor")


def pow(a: object, b: object) -> Tensor:
    return elementwise.power(*_operands(a, b))


power = pow


def where(condition: object, x: object, y: object) -> Tensor:
    if not builtins.any(isinstance(v, Tensor) for v in (condition, x, y)):
        condition = _t(condition)
    return elementwise.apply("where", condition, x, y)


def clip(x: object, min: object = None, max: object = None) -> Tensor:
    return elementwise.clip(_t(x), min, max)


clamp = clip


def astype(x: Tensor, dtype: object) -> Tensor:
    return elementwise.astype(_t(x), dtype)


def matmul(a: object, b: object) -> Tensor:
    return linalg.matmul(a, b)


def _reduction(op: str):
    def f(x: object, axis=None, keepdims: bool = False, *, dim=None, keepdim: bool = False):
        return reductions.reduce(_t(x), op, axis, keepdims, dim=dim, keepdim=keepdim)
    f.__name__ = op
    f.__doc__ = f"{op} over `axis` (or `dim`): an int, a tuple of ints, or None for all."
    return f


sum, prod, max, min = _reduction("sum"), _reduction("prod"), _reduction("max"), _reduction("min")
argmax, argmin, any, all = (_reduction("argmax"), _reduction("argmin"), _reduction("any"),
                            _reduction("all"))


def aminmax(x: object, *, dim: int | None = None, keepdim: bool = False
            ) -> reductions.MinMax:
    """PyTorch's aminmax: (min, max) over `dim`, read in one pass."""
    return reductions.aminmax(_t(x), dim=dim, keepdim=keepdim)


def cumsum(x: object, axis=None, dtype=None, *, dim=None):
    """Running sum along `axis` (or `dim`); None flattens, as NumPy's does."""
    return scan(_t(x), "cumsum", axis, dtype, dim=dim)


def cumprod(x: object, axis=None, dtype=None, *, dim=None):
    """Running product along `axis` (or `dim`); None flattens, as NumPy's does."""
    return scan(_t(x), "cumprod", axis, dtype, dim=dim)


def sort(x: object, dim: int = -1, descending: bool = False, *, stable: bool = False
         ) -> SortResult:
    """PyTorch's sort: (values, int64 indices), NaNs last (first descending).
    Both are stable sorts' results, whatever `stable` says (PyTorch leaves the
    order of equal elements open then), so values == x[indices] bit for bit."""
    t = _t(x)
    return SortResult(sorting.sort(t, dim, "stable", descending),
                      sorting.argsort(t, dim, "stable", descending))


def argsort(x: object, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """PyTorch's argsort (stable when asked, NumPy's quicksort otherwise)."""
    return sorting.argsort(_t(x), dim, sorting.sort_kind(None, stable), descending)


def unique(x: object, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """PyTorch's unique (lazy/sets.py): one sync, then lazy results."""
    return sets.torch_unique(_t(x), sorted, return_inverse, return_counts, dim)


def isin(elements: object, test_elements: object, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """PyTorch's isin (lazy/sets.py): lazy, no sync; `assume_unique` changes
    nothing here."""
    return sets.isin(_t(elements), _t(test_elements), invert)


def bincount(input: object, weights: object = None, minlength: int = 0) -> Tensor:
    """PyTorch's bincount (lazy/counting.py): one sync for the length; with
    weights the sums are float64, as NumPy's (PyTorch keeps float32 weights'
    dtype)."""
    return counting.bincount(_t(input), weights, minlength)


def einsum(equation: str, *operands: object) -> Tensor:
    """PyTorch's einsum, operands given one by one or as one list (lazy/einsum.py)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return contract(equation, [_t(o) for o in operands])


def searchsorted(sorted_sequence: object, input: object, *, right: bool = False,
                 side: str | None = None, sorter: object = None) -> Tensor:
    """PyTorch's searchsorted for a 1-D `sorted_sequence`; `side` wins over `right`."""
    return sorting.searchsorted(_t(sorted_sequence), input,
                                side or ("right" if right else "left"), sorter)


from .softmax import log_softmax, logsumexp, softmax  # noqa: E402,F401  (lazy.softmax, ...)


def mean(x: object, axis=None, keepdims: bool = False, *, dim=None, keepdim: bool = False):
    return reductions.mean(_t(x), axis, keepdims, dim=dim, keepdim=keepdim)


def reshape(x: Tensor, shape) -> Tensor:
    return views.reshape(_t(x), (shape,) if isinstance(shape, int) else tuple(shape))


def permute(x: Tensor, dims) -> Tensor:
    return views.permute(_t(x), tuple(dims))


def transpose(x: Tensor, *dims) -> Tensor:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return views.transpose(_t(x), dims)


def broadcast_to(x: Tensor, shape) -> Tensor:
    return views.broadcast_to(_t(x), shape)


def squeeze(x: Tensor, dim=None) -> Tensor:
    return views.squeeze(_t(x), dim)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    return views.unsqueeze(_t(x), dim)


expand_dims = unsqueeze


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return views.flatten(_t(x), start_dim, end_dim)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    return views.narrow(_t(x), dim, start, length)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    return views.select(_t(x), dim, index)


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return views.diagonal(_t(x), offset, dim1, dim2)


def as_strided(x: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    return views.as_strided(_t(x), size, stride, storage_offset)


def shares_memory(a: Tensor, b: Tensor) -> bool:
    """True when some element of `a` and of `b` is the same memory (exact, as NumPy's)."""
    if a.size == 0 or b.size == 0:
        return False
    if a._buf is not b._buf:
        if a._buf.pending or b._buf.pending or a.device != "cpu" or b.device != "cpu":
            return False
        return bool(np.shares_memory(a._buf.array, b._buf.array)) and bool(
            np.shares_memory(a.numpy(), b.numpy()))
    (lo1, hi1), (lo2, hi2) = a._view.span(), b._view.span()
    if hi1 < lo2 or hi2 < lo1:
        return False
    pa = positions(a._view, [], a.shape).reshape(-1)
    pb = positions(b._view, [], b.shape).reshape(-1)
    return bool(np.intersect1d(pa, pb).size)


def take(x: Tensor, indices: object, axis: int | None = None) -> Tensor:
    return indexing.take(_t(x), indices, axis)


def take_along_axis(x: Tensor, indices: object, axis: int | None) -> Tensor:
    return indexing.take_along_axis(_t(x), indices, axis)


def gather(x: Tensor, dim: int, index: object) -> Tensor:
    """PyTorch's gather (NumPy's take_along_axis with PyTorch's argument order)."""
    return indexing.gather_dim(_t(x), dim, index)


def index_select(x: Tensor, dim: int, index: object) -> Tensor:
    return indexing.index_select(_t(x), dim, index)


def masked_fill(x: Tensor, mask: object, value: object) -> Tensor:
    return indexing.masked_fill(_t(x), mask, value)


def nonzero(x: Tensor) -> tuple[Tensor, ...]:
    return indexing.nonzero(_t(x))
