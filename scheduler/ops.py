"""The op table: every elementwise and reduction primitive, declared once.

Each entry carries its arity, its dtype rule (what operands are cast to,
what comes out) and its NumPy reference, which constant folding, the NumPy
fallback and the tests use. Backends register their own lowering for each
name (`cpu_backend/lowering.py`); a name a backend lacks is reported by its
`supports()`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .dtypes import DType, bool_, float32, float64, float_result, int64, sum_result


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


@dataclass(frozen=True)
class Primitive:
    name: str
    arity: int
    numpy: Callable[..., np.ndarray]
    kinds: str = "bif"   # operand kinds accepted: b bool, i int, f float
    floating: bool = False  # computes in float_result(dtype): exp, /, ...
    predicate: bool = False  # result is bool: comparisons
    bool_as_int: bool = False  # bool operands compute in int64 (NumPy uses int8)

    def compute_dtype(self, dtype: DType) -> DType:
        """Dtype the operands are cast to, given their promoted dtype."""
        if dtype.kind not in self.kinds:
            kinds = {"b": "bool", "i": "integer", "f": "floating"}
            allowed = ", ".join(kinds[k] for k in self.kinds)
            raise TypeError(f"{self.name} is not supported for {dtype.name} "
                            f"operands (it takes {allowed} tensors)")
        if self.floating:
            return float_result(dtype)
        if self.bool_as_int and dtype.is_bool:
            return int64
        return dtype

    def result_dtype(self, compute: DType) -> DType:
        return bool_ if self.predicate else compute


def _p(name, arity, fn, **kw) -> Primitive:
    return Primitive(name, arity, fn, **kw)


ELEMENTWISE: dict[str, Primitive] = {p.name: p for p in [
    _p("copy", 1, np.copy),
    _p("neg", 1, np.negative, kinds="if"),
    _p("abs", 1, np.abs),
    _p("exp", 1, np.exp, floating=True),
    _p("log", 1, np.log, floating=True),
    _p("sqrt", 1, np.sqrt, floating=True),
    _p("sin", 1, np.sin, floating=True),
    _p("cos", 1, np.cos, floating=True),
    _p("tanh", 1, np.tanh, floating=True),
    _p("sigmoid", 1, _sigmoid, floating=True),
    _p("invert", 1, np.invert, kinds="bi"),
    _p("add", 2, np.add),
    _p("sub", 2, np.subtract, kinds="if"),
    _p("mul", 2, np.multiply),
    _p("truediv", 2, np.true_divide, floating=True),
    _p("floordiv", 2, np.floor_divide, bool_as_int=True),
    _p("mod", 2, np.remainder, bool_as_int=True),
    _p("pow", 2, np.power, bool_as_int=True),
    _p("maximum", 2, np.maximum),
    _p("minimum", 2, np.minimum),
    _p("eq", 2, np.equal, predicate=True),
    _p("ne", 2, np.not_equal, predicate=True),
    _p("lt", 2, np.less, predicate=True),
    _p("le", 2, np.less_equal, predicate=True),
    _p("gt", 2, np.greater, predicate=True),
    _p("ge", 2, np.greater_equal, predicate=True),
    _p("and", 2, np.bitwise_and, kinds="bi"),
    _p("or", 2, np.bitwise_or, kinds="bi"),
    _p("xor", 2, np.bitwise_xor, kinds="bi"),
    _p("where", 3, np.where),  # where(cond: bool, a, b); compute dtype is a/b's
]}


@dataclass(frozen=True)
class Reduction:
    name: str
    numpy: Callable[..., np.ndarray]
    identity: object | None  # value of an empty reduction; None: empty is an error

    def result_dtype(self, dtype: DType) -> DType:
        if self.name in ("sum", "prod"):
            return sum_result(dtype)
        if self.name in ("argmax", "argmin"):
            return int64
        if self.name in ("any", "all"):
            return bool_
        return dtype

    def acc_dtype(self, dtype: DType) -> DType:
        """Accumulator: float32 sums and products accumulate in float64.

        That beats NumPy's pairwise float32 summation (the accuracy bar)
        and still vectorizes; the result is rounded once at the end.
        """
        out = self.result_dtype(dtype)
        if self.name in ("sum", "prod") and out.is_float:
            return float64 if out == float32 else out
        if self.name in ("argmax", "argmin"):
            return dtype
        return out


REDUCTIONS: dict[str, Reduction] = {r.name: r for r in [
    Reduction("sum", np.sum, 0),
    Reduction("prod", np.prod, 1),
    Reduction("max", np.max, None),
    Reduction("min", np.min, None),
    Reduction("argmax", np.argmax, None),
    Reduction("argmin", np.argmin, None),
    Reduction("any", np.any, False),
    Reduction("all", np.all, True),
]}
