"""Property-based differential tests (hypothesis): random view chains, elementwise op
chains over broadcasting mixed-dtype operands, and reductions, all against NumPy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazy
from conftest import DTYPE_NAMES, assert_close, lazy_dtype_name, np_offset, np_strides

pytestmark = pytest.mark.usefixtures("strict_fallback")

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)


# -- view chains ------------------------------------------------------------------------------
def _np_index(a, key):
    """a[key] as an array view (NumPy returns a scalar copy for a 0-d result)."""
    out = a[key]
    return out if isinstance(out, np.ndarray) else a[key + (Ellipsis,)]


def _draw_view_op(data, shape):
    """One view op valid for `shape`: (description, op on lazy tensor, op on ndarray)."""
    nd = len(shape)
    kinds = ["slice", "permute", "unsqueeze", "reshape", "expand"]
    if nd:
        kinds += ["transpose", "narrow", "flip"]
    if any(n == 1 for n in shape):
        kinds += ["squeeze"]
    if nd and any(n > 0 for n in shape):
        kinds += ["select"]
    if nd >= 2:
        kinds += ["diagonal"]
    kind = data.draw(st.sampled_from(kinds), label="op")
    if kind == "slice":
        key = []
        for n in shape[:data.draw(st.integers(0, nd), label="nkeys")]:
            step = data.draw(st.sampled_from([1, 2, 3, -1, -2, -3]), label="step")
            start = data.draw(st.none() | st.integers(-n - 2, n + 2), label="start")
            stop = data.draw(st.none() | st.integers(-n - 2, n + 2), label="stop")
            key.append(slice(start, stop, step))
        if data.draw(st.booleans(), label="ellipsis+None"):
            key = key + [Ellipsis, None]
        key = tuple(key) or (Ellipsis,)  # t[()] of a 0-d t is NumPy's scalar, a copy
        return f"[{key}]", (lambda t: t[key]), (lambda a: _np_index(a, key))
    if kind == "flip":
        d = data.draw(st.integers(0, nd - 1), label="dim")
        key = (slice(None),) * d + (slice(None, None, -1),)
        return f"[{key}]", (lambda t: t[key]), (lambda a: a[key])
    if kind == "permute":
        perm = tuple(data.draw(st.permutations(range(nd)), label="perm"))
        return f".permute{perm}", (lambda t: t.permute(*perm)), (lambda a: a.transpose(perm))
    if kind == "transpose":
        d0 = data.draw(st.integers(-nd, nd - 1), label="d0")
        d1 = data.draw(st.integers(-nd, nd - 1), label="d1")
        return (f".transpose({d0}, {d1})", (lambda t: t.transpose(d0, d1)),
                (lambda a: a.swapaxes(d0, d1)))
    if kind == "unsqueeze":
        d = data.draw(st.integers(-nd - 1, nd), label="dim")
        return f".unsqueeze({d})", (lambda t: t.unsqueeze(d)), (lambda a: np.expand_dims(a, d))
    if kind == "squeeze":
        ones = [d for d, n in enumerate(shape) if n == 1]
        if data.draw(st.booleans(), label="all"):
            return ".squeeze()", (lambda t: t.squeeze()), (lambda a: a.squeeze())
        d = data.draw(st.sampled_from(ones), label="dim")
        return f".squeeze({d})", (lambda t: t.squeeze(d)), (lambda a: a.squeeze(d))
    if kind == "expand":
        lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="lead")
        new = tuple(lead) + tuple(data.draw(st.integers(0, 3), label="size") if n == 1
                                  else n for n in shape)
        return (f".expand{new}", (lambda t: t.expand(*new)),
                (lambda a: np.broadcast_to(a, new)))
    if kind == "narrow":
        d = data.draw(st.integers(0, nd - 1), label="dim")
        start = data.draw(st.integers(0, shape[d]), label="start")
        length = data.draw(st.integers(0, shape[d] - start), label="length")
        return (f".narrow({d}, {start}, {length})", (lambda t: t.narrow(d, start, length)),
                (lambda a: a[(slice(None),) * d + (slice(start, start + length),)]))
    if kind == "select":
        d = data.draw(st.sampled_from([d for d, n in enumerate(shape) if n > 0]), label="dim")
        i = data.draw(st.integers(-shape[d], shape[d] - 1), label="index")
        return (f".select({d}, {i})", (lambda t: t.select(d, i)),
                (lambda a: a[(slice(None),) * d + (i, Ellipsis)]))
    if kind == "diagonal":
        d1, d2 = data.draw(st.permutations(range(nd)), label="dims")[:2]
        off = data.draw(st.integers(-3, 3), label="offset")
        return (f".diagonal({off}, {d1}, {d2})", (lambda t: t.diagonal(off, d1, d2)),
                (lambda a: a.diagonal(off, d1, d2)))
    # reshape: merge or split axes, or flatten
    size = math.prod(shape)
    mode = data.draw(st.sampled_from(["flatten", "merge", "split", "minus1"]), label="mode")
    if mode == "merge" and nd >= 2:
        d = data.draw(st.integers(0, nd - 2), label="dim")
        new = shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2:]
    elif mode == "split" and nd >= 1:
        d = data.draw(st.integers(0, nd - 1), label="dim")
        divs = [k for k in range(1, shape[d] + 1) if shape[d] % k == 0] or [1]
        k = data.draw(st.sampled_from(divs), label="factor")
        new = shape[:d] + (k, shape[d] // k if k else 0) + shape[d + 1:]
    elif mode == "minus1" and size > 0:
        new = (-1,) + shape[1:] if nd else (-1,)
    else:
        new = (size,)
    return f".reshape{new}", (lambda t: t.reshape(*new)), (lambda a: a.reshape(new))


def _run_view_chain(data, base_t, base_a):
    t, a = base_t, base_a
    trail = []
    for _ in range(data.draw(st.integers(1, 5), label="chain length")):
        name, f_t, f_a = _draw_view_op(data, a.shape)
        trail.append(name)
        a = f_a(a)
        t = f_t(t)
        where = "x" + "".join(trail)
        assert t.shape == a.shape, where
        view = a.size == 0 or np.shares_memory(a, base_a)
        if a.size and view:
            assert t._buf is base_t._buf, f"{where}: NumPy gives a view, lazyrt copied"
        if t._buf is base_t._buf and a.size:
            for d, n in enumerate(a.shape):
                if n > 1:
                    assert t.stride()[d] == np_strides(a)[d], (where, t.stride(), a.strides)
            assert t.storage_offset() == np_offset(a, base_a), where
    lazy.sync(t, base_t)
    got = t.numpy()
    np.testing.assert_array_equal(got, a, err_msg="x" + "".join(trail))
    assert got.dtype == a.dtype
    if t._buf is base_t._buf and a.size:
        assert np.shares_memory(got, base_t.numpy())
        assert lazy.shares_memory(t, base_t)
        for d, n in enumerate(a.shape):
            if n > 1:
                assert got.strides[d] == a.strides[d]
    elif a.size:
        assert not lazy.shares_memory(t, base_t) or np.shares_memory(a, base_a)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_view_chain_numpy_backed(shape, data):
    base_a = (np.arange(math.prod(shape), dtype=np.int64) * 3 - 7).reshape(shape)
    _run_view_chain(data, lazy.asarray(base_a), base_a)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_view_chain_pending(shape, data):
    n = math.prod(shape)
    base_a = (np.arange(n, dtype=np.float32) * 0.5).reshape(shape)
    base_t = (lazy.arange(n, dtype=lazy.float32) * 0.5).reshape(shape)
    assert base_t._buf.pending or n == 0
    _run_view_chain(data, base_t, base_a)


# -- elementwise chains ----------------------------------------------------------------------
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "maximum": np.maximum,
    "minimum": np.minimum, "lt": np.less, "ge": np.greater_equal, "eq": np.equal,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
LAZY_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "maximum": lazy.maximum, "minimum": lazy.minimum, "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "and": lambda a, b: a & b,
    "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
}
UNARY = {"exp": np.exp, "sin": np.sin, "tanh": np.tanh, "abs": np.abs, "neg": np.negative,
         "sqrt_abs": None, "sigmoid": None, "invert": np.invert, "astype": None,
         "where": None, "clip": None}


def _sub_shape(data, shape):
    """A shape that broadcasts to `shape` (dropped leading axes, some axes 1)."""
    drop = data.draw(st.integers(0, len(shape)), label="drop")
    return tuple(1 if data.draw(st.booleans(), label="one") else n for n in shape[drop:])


def _operand(data, shape, rng):
    kind = data.draw(st.sampled_from(["tensor", "tensor", "scalar"]), label="operand")
    if kind == "scalar":
        return data.draw(st.sampled_from([2, -1, 0.5, -2.25, True, 3]), label="scalar")
    dt = data.draw(st.sampled_from(DTYPE_NAMES), label="dtype")
    s = _sub_shape(data, shape)
    if dt == "bool":
        return rng.random(s) < 0.5
    return (rng.integers(-12, 13, s) / (4 if dt.startswith("float") else 1)).astype(dt)


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), data=st.data())
def test_elementwise_chain(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    first = _operand(data, shape, rng)
    if not isinstance(first, np.ndarray):
        first = np.asarray(first, dtype="float32" if isinstance(first, float) else None)
        first = first.astype("int64") if first.dtype.kind == "i" else first
    a, t = first, lazy.asarray(first)
    trail = [f"x:{a.dtype}{a.shape}"]
    for _ in range(data.draw(st.integers(1, 4), label="ops")):
        if data.draw(st.booleans(), label="binary?"):
            op = data.draw(st.sampled_from(sorted(BINARY)), label="binop")
            b = _operand(data, shape, rng)
            b_t = lazy.asarray(b) if isinstance(b, np.ndarray) else b
            swap = data.draw(st.booleans(), label="swap")
            x, y = (b, a) if swap else (a, b)
            xt, yt = (b_t, t) if swap else (t, b_t)
            trail.append(f"{op}({'b,x' if swap else 'x,b'}) b={getattr(b, 'dtype', b)}"
                         f"{getattr(b, 'shape', '')}")
            try:
                with np.errstate(all="ignore"):
                    ref = _np_ref_binary(op, x, y)
            except TypeError:
                with pytest.raises(TypeError):
                    LAZY_BINARY[op](xt, yt)
                continue
            new_t = LAZY_BINARY[op](xt, yt)
        else:
            op = data.draw(st.sampled_from(sorted(UNARY)), label="unop")
            trail.append(op)
            try:
                with np.errstate(all="ignore"):
                    ref, new_t = _unary(op, a, t, data)
            except _NoResult:
                continue
        a, t = ref, new_t
        assert t.shape == a.shape, trail
        assert t.dtype.name == a.dtype.name, (trail, t.dtype.name, a.dtype.name)
    got = t.numpy()
    if a.dtype.kind == "f":
        np.testing.assert_allclose(got, a, rtol=1e-4, atol=1e-4, equal_nan=True,
                                   err_msg=" -> ".join(trail))
    else:
        np.testing.assert_array_equal(got, a, err_msg=" -> ".join(trail))


def _np_ref_binary(op, x, y):
    """NumPy's result for lazyrt's op with lazyrt's documented dtype deviations."""
    want = lazy_dtype_name(op, x, y)
    promoted = np.result_type(*[v.dtype if isinstance(v, np.ndarray) else v for v in (x, y)])
    if op in ("and", "or", "xor") and promoted.kind == "f":
        raise TypeError(op)
    if op == "sub" and promoted == np.bool_:
        raise TypeError(op)
    if op in ("truediv", "floordiv", "mod") and promoted == np.bool_:
        x, y = np.asarray(x).astype(want), np.asarray(y).astype(want)
    out = np.asarray(BINARY[op](x, y))
    assert out.dtype.name == want, (op, out.dtype, want)
    return out


class _NoResult(Exception):
    """The op has no result to compare: lazyrt refused it as NumPy does (checked),
    or NumPy leaves the values undefined. lazyrt's own errors are not caught."""


def _unary(op, a, t, data):
    if op in ("exp", "sin", "tanh", "sigmoid", "sqrt_abs"):
        want = lazy_dtype_name("exp", a)
        x = a.astype(want)
        ref = {"exp": np.exp, "sin": np.sin, "tanh": np.tanh,
               "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
               "sqrt_abs": lambda v: np.sqrt(np.abs(v))}[op](x)
        new_t = {"exp": lazy.exp, "sin": lazy.sin, "tanh": lazy.tanh, "sigmoid": lazy.sigmoid,
                 "sqrt_abs": lambda v: lazy.sqrt(abs(v))}[op](t)
        return np.asarray(ref, dtype=want), new_t
    if op in ("neg", "invert"):
        if (op == "neg" and a.dtype == np.bool_) or (op == "invert" and a.dtype.kind == "f"):
            with pytest.raises(TypeError):
                -t if op == "neg" else ~t
            raise _NoResult(op)
        return np.asarray(UNARY[op](a)), (-t if op == "neg" else ~t)
    if op == "abs":
        return np.abs(a), abs(t)
    if op == "astype":
        dt = data.draw(st.sampled_from(DTYPE_NAMES), label="astype")
        if a.dtype.kind == "f" and dt.startswith("int"):
            # float -> int of inf/nan/out-of-range values is undefined in NumPy too
            if not np.all(np.isfinite(a)) or np.any(np.abs(a) > 2**31 - 1):
                raise _NoResult("float -> int of an unrepresentable value")
        return a.astype(dt), t.astype(dt)
    if op == "where":
        c = a > 0 if a.dtype != np.bool_ else a
        return np.asarray(np.where(c, a, 0)), lazy.where(t > 0 if a.dtype != np.bool_ else t,
                                                         t, 0)
    # clip (of bool too: NumPy gives int64)
    return np.asarray(np.clip(a, -2, 2)), t.clip(-2, 2)


# -- reductions --------------------------------------------------------------------------------
def _np_reduce(op, a, axis, keepdims):
    if op in ("argmax", "argmin"):
        return np.asarray(getattr(np, op)(a, axis=axis, keepdims=keepdims)).astype(np.int64)
    if op == "mean":  # of bools and integers: float64, as NumPy's
        with np.errstate(all="ignore"):
            return np.asarray(np.mean(a, axis=axis, keepdims=keepdims))
    return np.asarray(getattr(np, op)(a, axis=axis, keepdims=keepdims))


@settings(SETTINGS, max_examples=35)  # reduction kernels compile slowest (~0.1-0.2 s)
@given(shape=shapes, data=st.data())
def test_reduction(shape, data):
    dt = data.draw(st.sampled_from(DTYPE_NAMES), label="dtype")
    op = data.draw(st.sampled_from(["sum", "mean", "max", "min", "prod", "argmax", "argmin",
                                    "any", "all"]), label="op")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    a = (rng.random(shape) < 0.5) if dt == "bool" else \
        (rng.integers(-8, 9, shape) / (4 if dt.startswith("float") else 1)).astype(dt)
    nd = len(shape)
    if op in ("argmax", "argmin"):
        axis = data.draw(st.none() | st.integers(-nd, nd - 1), label="axis") if nd else None
    else:
        axis = data.draw(st.none() | st.integers(-nd, nd - 1) |
                         st.lists(st.integers(0, nd - 1), unique=True).map(tuple),
                         label="axis") if nd else None
    keep = data.draw(st.booleans(), label="keepdims")
    view = data.draw(st.sampled_from(["plain", "reversed", "pending"]), label="input")
    t = lazy.asarray(a)
    if view == "reversed" and nd:
        a = a[::-1]
        t = t[::-1]
    elif view == "pending":
        t = t.astype(dt)
    try:
        ref = _np_reduce(op, a, axis, keep)
    except ValueError:  # zero-size reduction without identity
        with pytest.raises(ValueError):
            getattr(t, op)(axis, keep)
        return
    out = getattr(t, op)(axis=axis, keepdims=keep)
    try:
        assert_close(out, ref, rtol=1e-4 if op == "prod" else None)
    finally:
        del out  # never leave a failed pending tensor alive for later global syncs
