"""Creation functions, with PyTorch's float32 default for floating data.

Constants (`zeros`, `ones`, `full`) and ranges (`arange`, `linspace`,
`eye`) are pending nodes that fuse into whatever reads them, and so are
random tensors (`rand`, `randn`: a counter-based generator, Philox4x32-10,
evaluated inside the kernels that read them). `tensor` copies its data;
`asarray` shares a NumPy array's memory when it can.
"""
from __future__ import annotations

import math
import operator
import os

import numpy as np

from scheduler import backends
from scheduler.dtypes import DEFAULT_FLOAT, DType, as_dtype, bool_, float64, int64
from scheduler.graph import Buffer
from scheduler.log import log
from scheduler.ops import RANDOM_OPS
from scheduler.view import View

from . import elementwise, runtime
from .host import buffer_and_view, pending_shared_view, wrap_shared
from .tensor import Storage, Tensor


def resolve_device(device: object | None) -> str:
    """A device name, checked now: 'cpu', or 'cuda' when a usable GPU is there.

    With no device named: LAZY_DEVICE, else CUDA where a usable GPU is
    found, else CPU; the log notes which, and why.
    """
    if device is None:
        name, why = backends.default_device()
        log.note(f"default device: {name} ({why})")
    else:
        name = str(device)
    if name == "cpu":
        return "cpu"
    if name in ("cuda", "cuda:0"):
        ok, why = backends.device_status("cuda")
        if not ok:
            raise RuntimeError(f"device {name!r} is unavailable: {why}")
        return "cuda"
    if name.startswith("cuda:"):
        raise ValueError(f"device {name!r}: lazyrt drives one GPU, 'cuda' (= 'cuda:0')")
    raise ValueError(f"unknown device {name!r}: expected 'cpu' or 'cuda'")


def _placed(t: Tensor, device: str) -> Tensor:
    """`t` (host data) on `device`: a lazy transfer when that is not the CPU."""
    return t if device == "cpu" else t.to(device)


def _shape(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def _size(fn: str, name: str, value: object) -> int:
    """A count argument (eye's n and m, linspace's num), checked as NumPy does."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}") from None
    if v < 0:
        raise ValueError(f"{fn}: {name} must be non-negative, got {v}")
    return v


def dtype_of_value(value: object, dtype: object | None,
                   floating: DType = DEFAULT_FLOAT) -> DType:
    """The dtype a fill value gets: `dtype` if given, else a NumPy scalar's
    own (strong, as in NumPy: `np.full(3, np.int32(7))` is int32), else bool,
    int64 or `floating` (lazy's PyTorch-like float32; lazy.numpy passes float64)."""
    if dtype is not None:
        return as_dtype(dtype)
    if isinstance(value, np.generic):
        try:
            return as_dtype(value.dtype)
        except TypeError:  # uint8, float16, ...: lazyrt lacks it, so its kind's default
            pass
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return floating


def tensor(data: object, dtype: object = None, device: object = None) -> Tensor:
    """A new tensor holding a copy of `data` (a NumPy array, nested lists or a scalar)."""
    dev = resolve_device(device)
    if isinstance(data, Tensor):
        return elementwise.astype(data, dtype or data.dtype).to(dev)
    shared = pending_shared_view(data) if isinstance(data, np.ndarray) else None
    if shared is not None:  # its values after the pending write
        return tensor(Tensor._of(*shared), dtype, device)
    buf, view = buffer_and_view(data, dtype, copy=True)
    return _placed(Tensor._wrap(buf, view), dev)


def asarray(obj: object, dtype: object = None, device: object = None) -> Tensor:
    """Like `tensor`, but NumPy arrays are shared, not copied, when possible."""
    dev = resolve_device(device) if device is not None else None
    if isinstance(obj, Tensor):
        t = obj if dtype is None or as_dtype(dtype) == obj.dtype else elementwise.astype(obj, dtype)
        return t if dev is None else t.to(dev)
    if isinstance(obj, np.ndarray) and (dtype is None or as_dtype(dtype).np == obj.dtype):
        # memory a live storage holds gives a view of that storage
        return _placed(Tensor._of(*wrap_shared(obj, Storage)), dev or "cpu")
    buf, view = buffer_and_view(obj, dtype, copy=False)
    return _placed(Tensor._wrap(buf, view), dev or "cpu")


def full(shape, fill_value: object, dtype: object = None, device: object = None) -> Tensor:
    shape = _shape((shape,) if isinstance(shape, int) else tuple(shape))
    if fill_value is None:
        raise TypeError("full: fill_value must be a number or a bool, got None")
    d = dtype_of_value(fill_value, dtype)
    value = np.asarray(fill_value, dtype=d.np).item()
    return runtime.make("const", (), value, d, shape, resolve_device(device))


def zeros(*shape, dtype: object = None, device: object = None) -> Tensor:
    return full(_shape(shape), 0, as_dtype(dtype or DEFAULT_FLOAT), device)


def ones(*shape, dtype: object = None, device: object = None) -> Tensor:
    return full(_shape(shape), 1, as_dtype(dtype or DEFAULT_FLOAT), device)


def empty(*shape, dtype: object = None, device: object = None) -> Tensor:
    """Uninitialized memory, allocated now (there is nothing to compute)."""
    shape = _shape(shape)
    d = as_dtype(dtype or DEFAULT_FLOAT)
    dev = resolve_device(device)
    if dev != "cpu":
        return full(shape, 0, d, dev)  # device memory comes from a kernel
    flat = np.empty(math.prod(shape), d.np)
    return Tensor._wrap(Buffer.realized(flat, "cpu", d), View.contiguous(shape))


def zeros_like(t: Tensor, dtype: object = None) -> Tensor:
    return full(t.shape, 0, as_dtype(dtype or t.dtype), t.device)


def ones_like(t: Tensor, dtype: object = None) -> Tensor:
    return full(t.shape, 1, as_dtype(dtype or t.dtype), t.device)


def full_like(t: Tensor, fill_value: object, dtype: object = None) -> Tensor:
    return full(t.shape, fill_value, as_dtype(dtype or t.dtype), t.device)


def _iota(n: int, device: str) -> Tensor:
    return runtime.make("iota", (), None, int64, (n,), device)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: object = None,
           device: object = None) -> Tensor:
    """NumPy's arange for every dtype; float arguments give float32 unless
    dtype says otherwise. NumPy's rule, not PyTorch's (which truncates the
    arguments to an integer dtype first): the length comes from the
    arguments, then value i is first + i*delta computed in the result dtype,
    with first = dtype(start) and delta = dtype(start + step) - first. So
    arange(0, 5, 1.5, dtype=int64) is [0, 1, 2, 3] and float32 steps round
    as float32 (arange(0, 1, 0.1, dtype=float32)[-1] is 0.90000004)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    n = max(0, math.ceil((stop - start) / step))
    is_int = all(isinstance(x, (int, np.integer)) for x in (start, stop, step))
    d = as_dtype(dtype) if dtype is not None else (int64 if is_int else DEFAULT_FLOAT)
    i = _iota(n, resolve_device(device))
    if d.is_int and is_int:  # first and delta are start and step: exact in int64
        out = i if (start, step) == (0, 1) else i * step + start
        return elementwise.cast(out, d)
    if d.is_bool and n > 2:
        raise TypeError(f"arange() is only supported for booleans when the result has at "
                        f"most length 2, got length {n}")
    first, second = (np.asarray(v, dtype=d.np) for v in (start, start + step))
    values = first.item() if d.is_bool else \
        elementwise.cast(i, d) * np.subtract(second, first).item() + first.item()
    # value 1 is dtype(start + step) itself; first + delta can round away from it
    return elementwise.cast(elementwise.apply("where", i == 1, second.item(), values), d)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             dtype: object = None, device: object = None) -> Tensor:
    num = _size("linspace", "num", num)
    d = as_dtype(dtype or DEFAULT_FLOAT)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    i = elementwise.cast(_iota(num, resolve_device(device)), float64)
    y = i * float(step) + float(start)
    if endpoint and num > 1:
        y = elementwise.apply("where", i == float(num - 1), float(stop), y)
    return elementwise.cast(y, d)


def eye(n: int, m: int | None = None, k: int = 0, dtype: object = None,
        device: object = None) -> Tensor:
    n = _size("eye", "n", n)
    m = n if m is None else _size("eye", "m", m)
    dev = resolve_device(device)
    rows = _iota(n, dev).unsqueeze(1)
    cols = _iota(m, dev).unsqueeze(0)
    k = max(-n, min(m, operator.index(k)))  # a diagonal outside the matrix: all zeros
    return elementwise.cast((cols - rows) == k, as_dtype(dtype or DEFAULT_FLOAT))


# -- random numbers: counter-based, generated inside kernels --------------------------
# A random tensor is philox_<kind>_<dtype>(counter, seed) over `offset + flat
# index` (an iota): a pending elementwise node that fuses into its readers
# like `arange`. Seed and offset are `param` nodes, so a loop drawing new
# numbers each step reuses one schedule. The generator is (seed, offset); each call takes the next
# `size` counters, so consecutive calls differ and a seed replays the same
# sequence, whatever the thread count, backend or device (docs/semantics.md).
_seed: int | None = None  # int64 bit pattern of the 64-bit seed; None: not drawn yet
_offset = 0               # first counter of the next random tensor


def manual_seed(seed: int) -> None:
    """Seed `rand` and `randn` and restart their counter (any int; taken mod 2**64)."""
    global _seed, _offset
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}") from None
    seed &= (1 << 64) - 1
    _seed = seed - (1 << 64) if seed >= 1 << 63 else seed
    _offset = 0


def _next_counters(n: int) -> tuple[int, int]:
    """(seed, first counter) for `n` new numbers; an unseeded generator seeds from
    os.urandom on first use."""
    global _offset
    if _seed is None:
        manual_seed(int.from_bytes(os.urandom(8), "little"))
    first = _offset
    _offset = (_offset + n) % (1 << 63)  # counters are int64; wrapping takes 2**63 numbers
    return _seed, first


def _random(kind: str, shape: tuple, dtype: object, device: object) -> Tensor:
    shape = _shape(shape)
    d = as_dtype(dtype or DEFAULT_FLOAT)
    if not d.is_float:
        raise TypeError(f"random tensors must be floating, got dtype {d.name}")
    dev = resolve_device(device)
    n = math.prod(shape)
    seed, first = (_param(v, dev) for v in _next_counters(n))
    counter = _iota(n, dev) + first
    return elementwise.apply(RANDOM_OPS[kind][d.name], counter.reshape(shape), seed)


def _param(value: int, device: str) -> Tensor:
    """An int64 scalar read at run time: a new seed or counter reuses the plan."""
    return runtime.make("param", (), value, int64, (), device)


def rand(*shape, dtype: object = None, device: object = None) -> Tensor:
    """Uniform on [0, 1) (Philox4x32-10), generated inside the kernels that read it."""
    return _random("uniform", shape, dtype, device)


def randn(*shape, dtype: object = None, device: object = None) -> Tensor:
    """Standard normal (Box-Muller on Philox4x32-10), generated inside the kernels that read it."""
    return _random("normal", shape, dtype, device)
