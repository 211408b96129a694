"""NumPy's protocols on `Tensor`, DLPack export and import, and `complex(t)`.

`ArrayProtocols` is a base of `Tensor`, so NumPy's own functions stay lazy
on tensors: a ufunc lazyrt has (`np.exp(t)`, `np.add(a, t)`,
`np.maximum.reduce`) builds the same graph node as the method would, and a
NumPy function (`np.sum`, `np.concatenate`, `np.linalg.norm`) runs the
function of the same name in `lazy.numpy`. Everything else goes through
`lazy.fallback.numpy_fallback`: synced, run by NumPy, logged as a fallback
(an error under LAZY_FALLBACK=error), never silently.

DLPack shares memory both ways without copying: `__dlpack__` exports the
synced storage through NumPy's (CPU) or CuPy's (CUDA) exporter, with the
view's strides and offset; `from_dlpack` wraps what another library
exports as a realized tensor over the same memory.
"""
from __future__ import annotations

import importlib
import inspect
from functools import cache
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from scheduler.dtypes import as_dtype, bool_
from scheduler.graph import Buffer
from scheduler.view import View

if TYPE_CHECKING:
    from .tensor import Tensor

_DL_CPU, _DL_CUDA = 1, 2  # DLDeviceType values (dlpack.h)
_UNSET = object()


def check_where_mask(mask: Any) -> None:
    """NumPy casts an array `where=` to bool under the "safe" rule: a bool
    array only (Python data such as `[1, 0]` or `1` is converted)."""
    dtype = getattr(mask, "dtype", None)
    if isinstance(mask, (ArrayProtocols, np.ndarray)) and np.dtype(dtype) != np.bool_:
        raise TypeError(f"Cannot cast array data from dtype('{np.dtype(dtype)}') to "
                        f"dtype('bool') according to the rule 'safe' (the where= mask)")


_UNSAFE_METHODS = ("reduce", "accumulate", "reduceat")
# NumPy functions whose out= goes to a ufunc call, so the inputs broadcast to
# out's shape; every other function's out= must have the result's shape
_UFUNC_OUT = frozenset({"clip", "fix", "isneginf", "isposinf", "outer"})


# out= casting of NumPy functions whose rule is not same_kind: the cumulative
# ones cast unsafely (their accumulate does)
_OUT_CASTING = {"cumsum": "unsafe", "cumprod": "unsafe", "nancumsum": "unsafe",
                "nancumprod": "unsafe"}


def _check_function_out(name: str, result: Any, outs: tuple) -> None:
    """NumPy's own out= check of dot: exactly the result's dtype."""
    for o in outs:
        o_dtype = o.dtype.np if isinstance(o, ArrayProtocols) else o.dtype
        if name in ("dot", "vdot") and o_dtype != result.dtype.np:
            raise ValueError(f"output array is not acceptable (must have the right datatype, "
                             f"number of dimensions, and be a C-Array): {name} gives "
                             f"{result.dtype.np}, out is {o_dtype}")


def _ufunc_at(ufunc: np.ufunc, name: str, a: Any, indices: Any, *b: Any) -> None:
    """`np.<ufunc>.at(tensor, indices[, b])`: NumPy's unbuffered update (a
    repeated index is updated once per occurrence, in order), as a logged
    NumPy fallback. It runs on a host copy of `a`, which is then written
    back as a lazy write (`a[...] = copy`), so every view of `a` sees it in
    program order. If NumPy raises (an index out of bounds), nothing is
    written."""
    from .fallback import numpy_fallback

    def at(out: np.ndarray, indices: Any, operands: tuple) -> None:
        ufunc.at(out, indices, *operands)
    numpy_fallback(name, at, (), {"out": a, "indices": indices, "operands": b})


class ArrayProtocols:
    """NumPy's dispatch protocols, DLPack and `complex()` for `Tensor`."""
    __slots__ = ()

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if any(_foreign(x) for x in (*inputs, *(out or ()))):
            return NotImplemented
        for o in out or ():
            if o is not None and not isinstance(o, (ArrayProtocols, np.ndarray)):
                raise TypeError(f"return arrays must be of ArrayType, got {type(o).__name__}")
        # NumPy's rule for out=: unsafe for the reducing methods, which take no
        # casting= (np.add.reduce into an int array truncates), else same_kind
        casting = kwargs.get("casting", "unsafe" if method in _UNSAFE_METHODS else "same_kind")
        check_where_mask(kwargs.get("where", True))
        # With out=, where= keeps out's old values where the mask is False: computed
        # whole, then selected (NumPy would leave them untouched, the same values).
        # A reduction's where= picks the elements it reads: that is NumPy's to do.
        mask = kwargs.pop("where", True) if out is not None and method == "__call__" else True
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        if method == "at" and isinstance(inputs[0], ArrayProtocols):
            return _ufunc_at(ufunc, name, *inputs, **kwargs)
        lowered = {k: v for k, v in kwargs.items() if k != "casting"}
        if method in ("__call__", "outer") and not lowered and "casting" in kwargs:
            check_input_casting(ufunc, method, inputs, casting)  # else a fallback: NumPy checks
        result = _lazy_ufunc(ufunc, method, inputs, lowered)
        if result is None:
            from .fallback import numpy_fallback
            func = ufunc if method == "__call__" else getattr(ufunc, method)
            result = numpy_fallback(name, func, inputs, kwargs)
        if out is None:
            return result
        if mask is not True:
            from .numpy import where
            results = result if isinstance(result, tuple) else (result,)
            result = tuple(r if o is None else where(mask, r, o) for r, o in zip(results, out))
        return store_into(result, out, name, casting, exact=method != "__call__")

    def __array_function__(self, func: Callable, types: tuple, args: tuple,
                           kwargs: dict) -> Any:
        if not all(issubclass(t, (ArrayProtocols, np.ndarray)) for t in types):
            return NotImplemented
        impl = _namespace_function(func)
        out = _UNSET
        if impl is not None and "out" in kwargs and not _accepts(impl, "out"):
            kwargs = dict(kwargs)
            out = kwargs.pop("out")
        call = None if impl is None else _arguments(func, impl, args, kwargs)
        if call is not None:
            result = impl(*call[0], **call[1])
        else:
            from .fallback import numpy_fallback
            result = numpy_fallback(func.__name__, func, args, kwargs)
        if out is _UNSET or out is None:
            return result
        outs = out if isinstance(out, tuple) else (out,)
        _check_function_out(func.__name__, result, outs)
        return store_into(result, outs, func.__name__, _OUT_CASTING.get(func.__name__, "same_kind"),
                          exact=func.__name__ not in _UFUNC_OUT)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule over the synced storage, with this view's strides.

        CPU tensors export read-only (as `numpy()`): lazyrt's writes are
        versioned, and a write behind its back would corrupt results built
        from the old version. Consumers that predate DLPack 1.0 cannot be
        told "read-only"; NumPy refuses them unless `copy=True`.
        """
        target = dl_device[0] if dl_device is not None else None
        if self.device == "cuda" and target != _DL_CPU:
            from . import runtime
            runtime.implicit_sync(self, "__dlpack__")
            from cuda_backend import device_view
            array = device_view(self._buf.array, self._view)
        else:  # a CUDA tensor asked for on the CPU is a host copy (a logged transfer)
            if self.device == "cuda" and copy is False:
                raise BufferError("__dlpack__: a CUDA tensor exported to the CPU needs a copy, "
                                  "and copy=False")
            array = self._host("__dlpack__")
        return array.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device,
                                copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        if self.device == "cpu":
            return _DL_CPU, 0
        return _DL_CUDA, (0 if self._buf.pending else self._buf.array.device.id)

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))


def from_dlpack(x: Any, *, device: object = None, copy: bool | None = None) -> Tensor:
    """A realized tensor over the memory `x` exports through DLPack (NumPy, PyTorch,
    CuPy, JAX, ...): zero-copy unless `copy=True` or `device` names another device,
    which copies (refused under `copy=False`)."""
    from .creation import asarray, resolve_device
    from .tensor import Tensor
    if isinstance(x, Tensor):
        t = x.clone() if copy else x
        return t if device is None else t.to(resolve_device(device))
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    kind, _ = x.__dlpack_device__()
    source = {_DL_CPU: "cpu", _DL_CUDA: "cuda"}.get(kind)
    if source is None:
        raise BufferError(f"from_dlpack: DLPack device type {kind} is not supported "
                          f"(lazyrt has cpu and cuda)")
    target = source if device is None else resolve_device(device)
    if target != source and copy is False:
        raise BufferError(f"from_dlpack: moving from {source} to {target} needs a copy, "
                          f"and copy=False")
    if source == "cpu":
        t = asarray(np.from_dlpack(x, copy=copy))
    else:
        resolve_device("cuda")
        import cupy
        flat, view = _cuda_storage(cupy.from_dlpack(x, copy=copy))
        t = Tensor._wrap(Buffer.realized(flat, "cuda", as_dtype(flat.dtype)), view)
    return t if target == source else t.to(target)


# -- ufuncs ---------------------------------------------------------------------------

def _foreign(x: object) -> bool:
    """Another library's array that has its own say in NumPy's dispatch."""
    return (not isinstance(x, (ArrayProtocols, np.ndarray))
            and getattr(type(x), "__array_ufunc__", None) is not None
            and not isinstance(x, np.generic))


def check_input_casting(ufunc: np.ufunc, method: str, inputs: tuple, casting: str) -> None:
    """NumPy's `casting=` rule on a call's inputs, checked when the op is built:
    each input must cast to the loop NumPy picks (`np.add(int32, 1.5,
    casting="no")` runs in float64, so input 0 may not). NumPy decides, on
    empty arrays of the inputs' dtypes and ranks (Python numbers as they are:
    weak, NEP 50), and raises its UFuncTypeError, a TypeError. Not
    `ufunc.resolve_dtypes`: it crashes on weak scalars (numpy issue 31734).
    `outer` converts Python numbers to arrays itself, as NumPy's does."""
    call = ufunc if method == "__call__" else getattr(ufunc, method)
    call(*(x if type(x) in (bool, int, float, complex) else
           np.empty((0,) * max(np.ndim(x), 1), _dtype_of(x)) for x in inputs), casting=casting)


def _dtype_of(x: object) -> np.dtype:
    return x.dtype.np if isinstance(x, ArrayProtocols) else np.asarray(x).dtype


def has_dtype(dtype: np.dtype) -> bool:
    """Is `dtype` one of lazyrt's five?"""
    try:
        as_dtype(dtype)
    except TypeError:
        return False
    return True


def _odd_scalar(x: object, inputs: tuple) -> bool:
    """A NumPy number of a dtype lazyrt lacks (`np.uint8(3)`) beside tensors
    whose promotion with it lazyrt has: `elementwise` casts it exactly to that
    dtype, as it does on the right (`t * np.uint8(3)`)."""
    if not isinstance(x, np.generic) or x.dtype.kind not in "biuf" or has_dtype(x.dtype):
        return False
    dtypes = [t.dtype.np for t in inputs if isinstance(t, ArrayProtocols)]
    return bool(dtypes) and has_dtype(np.result_type(*dtypes, x.dtype))


def _lowerable(x: object) -> bool:
    """Can lazyrt take `x` as an operand (a tensor, a Python number, a supported array)?"""
    return isinstance(x, (ArrayProtocols, bool, int, float)) or has_dtype(np.asarray(x).dtype)


def _operand(x: object) -> Any:
    """Python numbers stay weak (NEP 50); anything else array-like converts as NumPy does."""
    if isinstance(x, (ArrayProtocols, bool, int, float, np.generic)):
        return x
    return np.asarray(x)


def _as_tensor(x: object) -> Any:
    from .tensor import Tensor, asarray_like
    return x if isinstance(x, Tensor) else asarray_like(np.asarray(x), "cpu")


def _check_python_ints(xs: tuple) -> None:
    """NumPy's logical ufuncs convert a Python int to int64 before taking its
    truth value, whatever the other operand: one past int64 is OverflowError."""
    for x in xs:
        if type(x) is int:
            np.asarray(x, dtype=np.int64)


def _as_bool(x: object) -> Any:
    from . import elementwise
    if isinstance(x, (bool, int, float, np.generic)):  # np.uint8(3): lazyrt lacks its dtype
        return bool(x)
    return elementwise.cast(_as_tensor(x), bool_)


@cache
def _ufuncs() -> dict[str, Callable[..., Any]]:
    """NumPy ufunc name -> how lazyrt builds it (others: lazy.numpy's, or the fallback)."""
    from . import elementwise as ew
    from .numpy._elementwise import positive  # TypeError for bool, as NumPy's loop

    def op(name: str) -> Callable[..., Any]:
        return lambda *xs: ew.apply(name, *xs)

    def logical(name: str) -> Callable[..., Any]:
        def build(*xs: object) -> Any:
            _check_python_ints(xs)
            return ew.apply(name, *(_as_bool(x) for x in xs))
        return build

    table = {"add": op("add"), "subtract": op("sub"), "multiply": op("mul"),
             "divide": op("truediv"), "floor_divide": op("floordiv"), "remainder": op("mod"),
             "power": ew.power, "maximum": op("maximum"), "minimum": op("minimum"),
             "equal": op("eq"), "not_equal": op("ne"), "less": op("lt"),
             "less_equal": op("le"), "greater": op("gt"), "greater_equal": op("ge"),
             "bitwise_and": op("and"), "bitwise_or": op("or"), "bitwise_xor": op("xor"),
             "invert": op("invert"), "logical_and": logical("and"),
             "logical_or": logical("or"), "logical_xor": logical("xor"),
             "logical_not": logical("invert"), "negative": op("neg"), "positive": positive,
             "absolute": op("abs"), "exp": op("exp"), "log": op("log"), "sqrt": op("sqrt"),
             "sin": op("sin"), "cos": op("cos"), "tanh": op("tanh"),
             "square": lambda x: ew.power(_as_tensor(x), 2),
             "isnan": lambda x: ew.apply("ne", x, x)}
    return table


_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_or": "any", "logical_and": "all"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}  # NumPy's dtype rule is cumsum's too


def _lazy_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """The lazy result of `ufunc.method(*inputs, **kwargs)`, or None when not lowered."""
    if not all(_lowerable(x) or _odd_scalar(x, inputs) for x in inputs):
        return None
    xs = [_operand(x) for x in inputs]
    if not any(isinstance(x, ArrayProtocols) for x in xs):  # only `out=` was a tensor
        i = first_array(xs)
        xs[i] = _as_tensor(xs[i])
    build = _ufuncs().get(ufunc.__name__)
    if method == "__call__" and not kwargs:
        build = build or _namespace_function(ufunc)  # np.arctan(t) -> lazy.numpy.arctan
        return build(*xs) if build is not None and _binds(build, tuple(xs), {}) else None
    if build is None:
        return None
    if method == "outer" and not kwargs and ufunc.nin == 2:
        # outer converts its operands to arrays first: a Python number is strong here
        a, b = (np.asarray(x) if isinstance(x, (bool, int, float)) else x for x in xs)
        if not (_lowerable(a) and _lowerable(b)):
            return None  # an int too large for int64 (an object array)
        a = _as_tensor(a)
        b = b if isinstance(b, ArrayProtocols) else b[()]  # a NumPy scalar: strong
        return build(a.reshape(a.shape + (1,) * np.ndim(b)), b)
    if method == "reduce" and ufunc.__name__ in _REDUCE \
            and set(kwargs) <= {"axis", "keepdims", "dtype"} and kwargs.get("dtype") is None:
        from . import reductions
        x = _as_tensor(xs[0])
        return reductions.reduce(x, _REDUCE[ufunc.__name__], kwargs.get("axis", 0),
                                 bool(kwargs.get("keepdims", False)))
    axis = kwargs.get("axis", 0)
    if method == "accumulate" and ufunc.__name__ in _ACCUMULATE and \
            set(kwargs) <= {"axis", "dtype"} and axis is not None and \
            getattr(xs[0], "ndim", 0) >= 1:  # else NumPy's own error, from the fallback
        from .scan import scan
        return scan(_as_tensor(xs[0]), _ACCUMULATE[ufunc.__name__], axis, kwargs.get("dtype"))
    return None


def first_array(xs: list | tuple) -> int:
    """Which operand to make the tensor when none is: the first that is not a
    Python number, so numbers stay weak (NEP 50: `2 * float32 array` is float32)."""
    return next((i for i, x in enumerate(xs) if not isinstance(x, (bool, int, float))), 0)


def store_into(result: Any, out: tuple, name: str, casting: str = "same_kind",
               exact: bool = False) -> Any:
    """Write results into `out=` targets under NumPy's `casting` rule: tensors
    get a (lazy) write, NumPy arrays a copy. The result broadcasts to `out`
    only where NumPy's ufunc call would (to out's full shape; `exact`: methods
    such as reduce, and reductions, never)."""
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(out):
        raise ValueError(f"{name}: {len(out)} out= arrays for {len(results)} results")
    stored = []
    for r, o in zip(results, out):
        if o is None:
            stored.append(r)
            continue
        r_dtype = r.dtype.np if isinstance(r, ArrayProtocols) else np.asarray(r).dtype
        o_dtype = o.dtype.np if isinstance(o, ArrayProtocols) else o.dtype
        if not np.can_cast(r_dtype, o_dtype, casting=casting):
            raise TypeError(f"Cannot cast {name} output from {r_dtype!r} to {o_dtype!r} with "
                            f"casting rule {casting!r}")
        r_shape = tuple(np.shape(r))
        if r_shape != tuple(o.shape) and (exact or _broadcast(r_shape, o.shape) != o.shape):
            raise ValueError(f"{name}: non-broadcastable output operand with shape "
                             f"{tuple(o.shape)} doesn't match the result shape {r_shape}")
        if isinstance(o, ArrayProtocols):
            o[...] = r
        else:
            np.copyto(o, r._host("out=") if isinstance(r, ArrayProtocols) else r,
                      casting="unsafe")  # the rule was checked above
        stored.append(o)
    return stored[0] if len(stored) == 1 else tuple(stored)


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


# -- NumPy functions ----------------------------------------------------------------

_namespaces: dict[Callable, Callable | None] = {}


def _namespace_function(func: Callable) -> Callable | None:
    """`lazy.numpy`'s function of the same name and submodule, or None."""
    try:
        return _namespaces[func]
    except KeyError:
        pass
    module = getattr(func, "__module__", None) or ""
    impl = None
    if module == "numpy" or module.startswith("numpy."):
        try:
            namespace = importlib.import_module(f"lazy.{module}")
        except ImportError:
            namespace = None
        impl = getattr(namespace, func.__name__, None)
        if impl is func or (getattr(impl, "__module__", None) or "").split(".")[0] == "numpy":
            impl = None  # NumPy's own function re-exported: calling it would dispatch here again
    _namespaces[func] = impl
    return impl


@cache
def _signature(impl: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(impl)
    except (TypeError, ValueError):
        return None


def _accepts(impl: Callable, name: str) -> bool:
    sig = _signature(impl)
    return sig is None or name in sig.parameters or any(
        p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _binds(impl: Callable, args: tuple, kwargs: dict) -> bool:
    """Does the lazy function take these arguments as they are?"""
    sig = _signature(impl)
    if sig is None:
        return True
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


_RENAMED = {"a_min": "min", "a_max": "max"}  # NumPy keyword -> the array API's


def _arguments(func: Callable, impl: Callable, args: tuple,
               kwargs: dict) -> tuple[tuple, dict] | None:
    """NumPy's call `func(*args, **kwargs)` as arguments `impl` takes, or None.

    The array API makes the array arguments positional-only and most
    options keyword-only (`sum(x, /, *, axis)` where NumPy has `sum(a,
    axis)`), so a call that does not bind as it is is matched by NumPy's
    own signature: positional-only parameters by position, the others by
    name. None (a fallback) when `impl` lacks an option given a value other
    than NumPy's default.
    """
    if _binds(impl, args, kwargs):
        return args, kwargs
    np_sig, sig = _signature(func), _signature(impl)
    if np_sig is None or sig is None:
        return None
    try:
        given = dict(np_sig.bind(*args, **kwargs).arguments)
    except TypeError:
        return None
    np_params = list(np_sig.parameters.values())
    call_args: list = []
    call_kwargs: dict = {}
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is p.POSITIONAL_ONLY:
            name = np_params[i].name if i < len(np_params) else None
            if name in given:
                call_args.append(given.pop(name))
            elif p.default is not p.empty:
                call_args.append(p.default)
            else:
                return None
        elif p.kind is p.VAR_POSITIONAL:
            star = [q.name for q in np_params if q.kind is q.VAR_POSITIONAL]
            call_args.extend(given.pop(star[0], ()) if star else ())
        elif p.kind is not p.VAR_KEYWORD:
            names = [p.name] + [n for n, renamed in _RENAMED.items() if renamed == p.name]
            for name in names:
                if name in given:
                    call_kwargs[p.name] = given.pop(name)
    for name, value in given.items():
        default = np_sig.parameters[name].default
        if not (value is default or (type(value) is type(default) and value == default)):
            return None
    return tuple(call_args), call_kwargs


# -- CUDA memory (CuPy) -----------------------------------------------------------------

def _cuda_storage(a: Any) -> tuple[Any, View]:
    """(flat CuPy array over a's memory, a's view into it), without copying."""
    import cupy
    item = a.dtype.itemsize
    if a.size == 0:
        return cupy.empty(0, a.dtype), View.contiguous(a.shape)
    if a.flags.c_contiguous:
        return a.reshape(-1), View.contiguous(a.shape)
    if any(s % item for s in a.strides):
        return cupy.ascontiguousarray(a).reshape(-1), View.contiguous(a.shape)
    strides = tuple(s // item for s in a.strides)
    low = sum(s * (n - 1) for n, s in zip(a.shape, strides) if s < 0)
    span = 1 + sum(abs(s) * (n - 1) for n, s in zip(a.shape, strides))
    flat = cupy.ndarray((span,), a.dtype, memptr=a.data + low * item)
    return flat, View(a.shape, strides, -low)
