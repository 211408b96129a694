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

from .dtypes import DType, bool_, float32, float64, float_result, int64, result_type, sum_result


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.power, except that an integer to a negative integer power is the
    truncated answer the kernels give (1 for x == 1, +-1 for x == -1, else
    0) where NumPy raises: a lazy graph's exponents are known only when it
    runs, and the fold, the fallback and the kernels must agree."""
    x, y = np.asarray(x), np.asarray(y)
    neg = y < 0
    if x.dtype.kind not in "iu" or y.dtype.kind not in "iu" or not neg.any():
        return np.power(x, y)
    whole = np.power(x, np.where(neg, 0, y))
    odd = (y % 2).astype(bool)
    cut = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, cut, whole).astype(whole.dtype)


@dataclass(frozen=True)
class Primitive:
    name: str
    arity: int
    numpy: Callable[..., np.ndarray]
    kinds: str = "bif"   # operand kinds accepted: b bool, i int, f float
    floating: bool = False  # computes in float_result(dtype): exp, /, ...
    predicate: bool = False  # result is bool: comparisons
    bool_as_int: bool = False  # bool operands count as int64 (NumPy: int8; bool / bool is float64)
    result: DType | None = None  # fixed result dtype; operands compute in int64
                                 # (the counter-based random ops: philox_*)

    def compute_dtype(self, dtype: DType) -> DType:
        """Dtype the operands are cast to, given their promoted dtype."""
        if dtype.kind not in self.kinds:
            kinds = {"b": "bool", "i": "integer", "f": "floating"}
            allowed = ", ".join(kinds[k] for k in self.kinds)
            raise TypeError(f"{self.name} is not supported for {dtype.name} "
                            f"operands (it takes {allowed} tensors)")
        if self.result is not None:
            return int64
        if self.bool_as_int and dtype.is_bool:
            dtype = int64
        return float_result(dtype) if self.floating else dtype

    def result_dtype(self, compute: DType) -> DType:
        if self.result is not None:
            return self.result
        return bool_ if self.predicate else compute


# -- counter-based random numbers: Philox4x32-10 --------------------------------------
# Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11); the
# constants and round structure of Random123's philox4x32_10. `rand`/`randn`
# build philox_<kind>_<dtype>(counter, seed) over an iota, so every element's
# value depends only on (seed, counter): the same on any thread count and on
# any backend. Counter (lo, hi, 0, 0) is the int64 counter's two 32-bit
# halves; the key is the int64 seed's. Words are 32-bit values held in uint64.
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_M32 = np.uint64(0xFFFFFFFF)


def philox4x32(c0, c1, c2, c3, k0, k1, rounds: int = 10):
    """Random123's philox4x32_R, vectorized: every argument an array of 32-bit
    values (any unsigned/int dtype, broadcast together); four uint64 arrays."""
    c0, c1, c2, c3, k0, k1 = (np.asarray(x).astype(np.uint64) & _M32
                              for x in np.broadcast_arrays(c0, c1, c2, c3, k0, k1))
    m0, m1 = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1])
    w0, w1 = np.uint64(PHILOX_W[0]), np.uint64(PHILOX_W[1])
    s32 = np.uint64(32)
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + w0) & _M32, (k1 + w1) & _M32
        p0, p1 = m0 * c0, m1 * c2  # < 2**64: exact
        c0, c1, c2, c3 = (p1 >> s32) ^ c1 ^ k0, p1 & _M32, (p0 >> s32) ^ c3 ^ k1, p0 & _M32
    return c0, c1, c2, c3


def philox_words(counter, seed):
    """The four output words for int64 `counter` and int64 `seed` (two's complement)."""
    c = np.asarray(counter).astype(np.int64).astype(np.uint64)
    k = np.asarray(seed).astype(np.int64).astype(np.uint64)
    s32, zero = np.uint64(32), np.uint64(0)
    return philox4x32(c & _M32, c >> s32, zero, zero, k & _M32, k >> s32)


_TWO_PI = 6.283185307179586  # float64(2 pi)


def _bits53(hi, lo):
    """53 bits from two words: the top 53 of (hi << 32 | lo), as float64 (exact)."""
    return ((hi << np.uint64(21)) | (lo >> np.uint64(11))).astype(np.float64)


def _uniform32(counter, seed):
    """float32 in [0, 1): word 0's top 24 bits * 2**-24."""
    x0 = philox_words(counter, seed)[0]
    return ((x0 >> np.uint64(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def _uniform64(counter, seed):
    """float64 in [0, 1): 53 bits of words 1:0 * 2**-53."""
    x0, x1, _, _ = philox_words(counter, seed)
    return _bits53(x1, x0) * 2.0 ** -53


def cos_2pi(u):
    """cos(2 pi u) for u in [0, 1), float64, reduced exactly: quadrant q = floor(4u),
    r = u - q/4 in [0, 1/4), reflected to [0, 1/8] (swapping sin/cos), then
    sin/cos of t = r * 2pi in [0, pi/4] (the one rounding every backend shares)."""
    q = np.floor(u * 4.0)
    r = u - q * 0.25
    swap = r > 0.125
    t = np.where(swap, 0.25 - r, r) * _TWO_PI
    odd = (q == 1) | (q == 3)
    v = np.where(odd == swap, np.cos(t), np.sin(t))
    return np.where((q == 1) | (q == 2), -v, v)


def box_muller(u1, u2):
    """sqrt(-2 ln u1) * cos(2 pi u2) in float64; u1 in (0, 1], u2 in [0, 1)."""
    return np.sqrt(-2.0 * np.log(u1)) * cos_2pi(u2)


def _normal32(counter, seed):
    """Box-Muller on words 0 (u1 = (w+1) 2**-32) and 1 (u2 = w 2**-32) in float64,
    rounded once to float32."""
    x0, x1, _, _ = philox_words(counter, seed)
    u1 = (x0.astype(np.float64) + 1.0) * 2.0 ** -32
    u2 = x1.astype(np.float64) * 2.0 ** -32
    return box_muller(u1, u2).astype(np.float32)


def _normal64(counter, seed):
    """Box-Muller on 53-bit u1 (words 1:0, plus one: (0, 1]) and u2 (words 3:2)."""
    x0, x1, x2, x3 = philox_words(counter, seed)
    u1 = (_bits53(x1, x0) + 1.0) * 2.0 ** -53
    u2 = _bits53(x3, x2) * 2.0 ** -53
    return box_muller(u1, u2)


def _p(name, arity, fn, **kw) -> Primitive:
    return Primitive(name, arity, fn, **kw)


ELEMENTWISE: dict[str, Primitive] = {p.name: p for p in [
    _p("copy", 1, np.copy),
    _p("neg", 1, np.negative, kinds="if"),
    _p("abs", 1, np.abs),
    _p("exp", 1, np.exp, floating=True),
    _p("expm1", 1, np.expm1, floating=True),
    _p("log", 1, np.log, floating=True),
    _p("log2", 1, np.log2, floating=True),
    _p("log10", 1, np.log10, floating=True),
    _p("sqrt", 1, np.sqrt, floating=True),
    _p("sin", 1, np.sin, floating=True),
    _p("cos", 1, np.cos, floating=True),
    _p("tan", 1, np.tan, floating=True),
    _p("tanh", 1, np.tanh, floating=True),
    _p("sigmoid", 1, _sigmoid, floating=True),
    _p("asin", 1, np.arcsin, floating=True),
    _p("acos", 1, np.arccos, floating=True),
    _p("atan", 1, np.arctan, floating=True),
    _p("floor", 1, np.floor, kinds="f"),  # IEEE roundings: the sign of zero and inf/NaN kept
    _p("ceil", 1, np.ceil, kinds="f"),
    _p("trunc", 1, np.trunc, kinds="f"),
    _p("rint", 1, np.rint, kinds="f"),    # to nearest, ties to even
    _p("signbit", 1, np.signbit, kinds="f", predicate=True),  # -0.0 and -nan too
    _p("invert", 1, np.invert, kinds="bi"),
    _p("add", 2, np.add),
    _p("sub", 2, np.subtract, kinds="if"),
    _p("mul", 2, np.multiply),
    _p("truediv", 2, np.true_divide, floating=True, bool_as_int=True),
    _p("floordiv", 2, np.floor_divide, bool_as_int=True),
    _p("mod", 2, np.remainder, bool_as_int=True),
    _p("pow", 2, _power, bool_as_int=True),
    _p("maximum", 2, np.maximum),
    _p("minimum", 2, np.minimum),
    _p("atan2", 2, np.arctan2, floating=True),
    _p("copysign", 2, np.copysign, floating=True),
    _p("nextafter", 2, np.nextafter, floating=True),
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
    # (counter, seed) -> a random number; operands are cast to int64
    _p("philox_uniform_f32", 2, _uniform32, kinds="i", result=float32),
    _p("philox_uniform_f64", 2, _uniform64, kinds="i", result=float64),
    _p("philox_normal_f32", 2, _normal32, kinds="i", result=float32),
    _p("philox_normal_f64", 2, _normal64, kinds="i", result=float64),
]}

def op_compute_dtype(name: str, dtypes: list[DType]) -> DType:
    """The dtype op `name` computes in, given its operands' dtypes (which
    backends cast them to); `where`'s first operand is the bool condition
    and takes no part in promotion. TypeError if no dtype fits."""
    data = dtypes[1:] if name == "where" else dtypes
    return ELEMENTWISE[name].compute_dtype(result_type(*data))


def operand_error(name: str, dtypes: list[DType]) -> str | None:
    """Why op `name` cannot take operands of these dtypes, or None if it can:
    the one rule every backend checks before lowering an Op node."""
    try:
        op_compute_dtype(name, dtypes)
    except TypeError as e:
        return str(e)
    return None


RANDOM_OPS = {"uniform": {"float32": "philox_uniform_f32", "float64": "philox_uniform_f64"},
              "normal": {"float32": "philox_normal_f32", "float64": "philox_normal_f64"}}


def logsumexp(x, axis=None, keepdims: bool = False) -> np.ndarray:
    """log(sum(exp(x))) as scipy.special.logsumexp, computed in float64.

    Shifted by the max so large values do not overflow; where the max is not
    finite the shift is 0, so an empty or all -inf reduction gives -inf, a
    +inf gives +inf and a NaN gives NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        shift = np.where(np.isfinite(m), m, 0.0)
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


def logsumexp_part(part: str, x, axis=None) -> np.ndarray:
    """One part of logsumexp's accumulator, computed in float64: "max" is the
    max m, "log_sum" is log(sum(exp(x - m))) for a finite m, else NaN.

    Softmax reads the two parts, not m + log_sum: once |m| is about 1e16 a
    float64 sum has rounded log_sum away, while (x - m) - log_sum keeps it.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        if part == "max":
            return np.squeeze(m, axis=axis)
        finite = np.isfinite(m)
        s = np.sum(np.exp(x - np.where(finite, m, 0.0)), axis=axis, keepdims=True)
        return np.squeeze(np.where(finite, np.log(s), np.nan), axis=axis)


@dataclass(frozen=True)
class Reduction:
    name: str
    numpy: Callable[..., np.ndarray]
    identity: object | None  # value of an empty reduction; None: empty is an error
    parts: tuple[str, ...] = ()  # what else its accumulator can give (kernel_ir.Reduced.part)

    def result_dtype(self, dtype: DType) -> DType:
        if self.name in ("sum", "prod"):
            return sum_result(dtype)
        if self.name in ("argmax", "argmin"):
            return int64
        if self.name in ("any", "all"):
            return bool_
        if self.name == "logsumexp":
            return float_result(dtype)
        return dtype

    def acc_dtype(self, dtype: DType) -> DType:
        """Accumulator: float32 sums, products and logsumexp accumulate in float64.

        (logsumexp's accumulator is the pair (running max, sum of exp(x - max)).)
        The result is rounded once at the end. A float32 sum along
        contiguous memory adds blocks of 1,024 elements in float32 first
        (cpu_backend/row_loops.blocked_sum32): about as accurate as
        NumPy's pairwise float32 sum on ordinary data, with its bound of
        float32 rounding per block when values cancel.
        """
        out = self.result_dtype(dtype)
        if self.name in ("sum", "prod", "logsumexp") and out.is_float:
            return float64 if out == float32 else out
        if self.name in ("argmax", "argmin"):
            return dtype
        return out


REDUCTIONS: dict[str, Reduction] = {r.name: r for r in [
    Reduction("sum", np.sum, 0),
    Reduction("prod", np.prod, 1),
    Reduction("max", np.max, None),
    Reduction("min", np.min, None),
    # NaN-ignoring: NumPy's fmax/fmin folded along the axis, NaN only where every
    # element is (nanmax, nanmin); max and min for bool and integers
    Reduction("nanmax", np.fmax.reduce, None),
    Reduction("nanmin", np.fmin.reduce, None),
    Reduction("argmax", np.argmax, None),
    Reduction("argmin", np.argmin, None),
    Reduction("any", np.any, False),
    Reduction("all", np.all, True),
    Reduction("logsumexp", logsumexp, float("-inf"), parts=("max", "log_sum")),
]}

# Reductions that may share a loop with others over the same domain
# (kernel_ir.Kernel.siblings: `x.min()` and `x.max()` read x once): one
# carry each, updated element by element. Not argmax/argmin (an index beside
# the value, with a blocked row loop of their own) nor logsumexp (a pair, its
# parts written interleaved).
SIBLING_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "nanmax", "nanmin", "any", "all"})

# Scans: the running sum and product along axis `arg` (the node's), NumPy's
# cumsum and cumprod. The kernel IR has no scan, so they run as extern kernels.
SCANS: dict[str, Callable[..., np.ndarray]] = {"cumsum": np.cumsum, "cumprod": np.cumprod}

# Sorting and searching: `sort` and `argsort` along axis `arg[0]` with NumPy's
# sort kind `arg[1]` ("stable" when the result must be a stable sort's, "any"
# when any sorted order will do: the order statistics' values), and
# `searchsorted` of its second operand into its first (1-D, sorted), on side
# `arg`. No kernel IR either: NumPy's functions, rows over threads
# (scheduler/sorting.py); CuPy's on CUDA.
SORTS = frozenset({"sort", "argsort", "searchsorted"})

# Counting: `bincount` of a 1-D operand of integers known to lie in [0, arg)
# (lazy/counting.py checks them first), with a float64 second operand of
# weights or none: the count, or sum of weights, of each value. No kernel IR
# either (no scatter-add): a histogram per thread (cpu_backend/histogram.py),
# CuPy's bincount on CUDA.
COUNTS = frozenset({"bincount"})

# Nodes no kernel computes: each is a step of its own, and what it reads is
# materialized first. matmul runs on BLAS (cuBLAS), a device transfer is a
# copy, the scans run a loop of the CPU backend's own (CuPy's on CUDA), the
# sorts NumPy's (CuPy's).
EXTERN_OPS = frozenset({"matmul", "to_device", *SCANS, *SORTS, *COUNTS})


def part_error(op: str, part: str) -> str | None:
    """Why a `Reduced` of reduction `op` cannot read `part`, or None if it
    can: the rule every backend checks (as `operand_error` for ops)."""
    if part and part not in REDUCTIONS[op].parts:
        return f"{op} has no part {part!r}"
    return None
