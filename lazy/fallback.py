"""The visible NumPy fallback: run a function lazyrt has not lowered in NumPy.

Some NumPy functions have no kernel (`ptp`, `trapezoid`, `histogram` with
edges as bins, any NumPy function lazyrt does not name). Rather than hide that,
`numpy_fallback` syncs the tensor arguments (a sync with
cause `fallback: <name>`), calls real NumPy on host arrays, wraps the
results back as tensors on the inputs' device, and logs one kernel record
with backend `numpy` and reason `fallback: <name> not lowered`, which
`lazy.log.counters.fallbacks` counts. Under `LAZY_FALLBACK=error` it
raises `lazy.FallbackError` naming the function, before anything runs.
"""
from __future__ import annotations

import inspect
import time
from typing import Any, Callable

import numpy as np

from scheduler.backends import FallbackError
from scheduler.config import config
from scheduler.graph import user_location
from scheduler.log import KernelRecord, SyncRecord, log

from . import runtime
from .tensor import Tensor, asarray_like


def _tensors(x: object, out: list[Tensor]) -> None:
    """Collect the tensors in `x`, looking inside lists, tuples and dicts."""
    if isinstance(x, Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _tensors(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _tensors(v, out)


def _to_host(x: object, hosts: dict[int, np.ndarray]) -> object:
    if isinstance(x, Tensor):
        return hosts[id(x)]
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
        return type(x)(*(_to_host(v, hosts) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_host(v, hosts) for v in x)
    if isinstance(x, dict):
        return {k: _to_host(v, hosts) for k, v in x.items()}
    return x


def _out_tensors(func: Callable[..., Any], args: tuple, kwargs: dict) -> list[Tensor]:
    """The tensors in func's `out` argument (by keyword, or by position where
    NumPy's signature says so): NumPy writes those."""
    out = kwargs.get("out")
    if out is None and args:
        try:
            out = inspect.signature(func).bind_partial(*args, **kwargs).arguments.get("out")
        except (TypeError, ValueError):  # no signature (a ufunc), or not NumPy's call
            out = None
    found: list[Tensor] = []
    _tensors(out, found)
    return list({id(t): t for t in found}.values())


def _wrap(x: object, device: str, inputs: list[np.ndarray], outs: dict[int, Tensor]) -> object:
    """ndarrays (and NumPy scalars) become tensors on `device`, an `out=` array
    the tensor it stands for; containers keep their type."""
    if id(x) in outs:
        return outs[id(x)]
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        if any(np.shares_memory(a, i) for i in inputs):  # a view of a read-only input
            a = a.copy()
        t = asarray_like(a, "cpu", copy=False)  # the fallback's own result
        return t if device == "cpu" else t.to(device)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple (unique_all, ...)
        return type(x)(*(_wrap(v, device, inputs, outs) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_wrap(v, device, inputs, outs) for v in x)
    return x


def _nbytes(x: object) -> int:
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(v) for v in x)
    return 0


def numpy_fallback(name: str, func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Run `func(*args, **kwargs)` in NumPy on synced host copies of the tensor arguments.

    Results that are arrays come back as tensors on the inputs' device (CPU
    when no tensor was given); other results (bools, ints, ...) as they are.
    A tensor `out=` is given to NumPy as a writable copy of its values (so
    NumPy checks shape and casting itself), then gets a lazy write of that
    copy, as ufuncs' out= (`out[...] = result`), and is returned.
    """
    if config.fallback == "error":
        raise FallbackError(f"{name} is not lowered: it would run as a NumPy fallback, "
                            f"and LAZY_FALLBACK=error")
    tensors: list[Tensor] = []
    _tensors((args, kwargs), tensors)
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"{name}: expected all tensors on the same device, but found "
                         f"{' and '.join(sorted(devices))}")
    device = devices.pop() if devices else "cpu"
    where = user_location()
    on_host = [t if t.device == "cpu" else t.to("cpu") for t in tensors]
    pending = [t for t in on_host if t._buf.pending]
    if pending:
        runtime.sync(*pending, _cause=f"fallback: {name}")
    hosts = {id(t): h.numpy() for t, h in zip(tensors, on_host)}
    outs = _out_tensors(func, args, kwargs)
    for t in outs:
        hosts[id(t)] = hosts[id(t)].copy()
    t0 = time.perf_counter()
    result = func(*_to_host(args, hosts), **_to_host(kwargs, hosts))
    run_ms = (time.perf_counter() - t0) * 1e3
    inputs = list(hosts.values())
    sync_id = log.new_sync_id()
    cause = f"fallback: {name}"
    log.add_kernel(KernelRecord(sync_id, cause, where, f"fallback_{name}",
                                (f"{name}@{where}",), device, "numpy",
                                f"fallback: {name} not lowered", "-", 0.0, run_ms,
                                sum(a.nbytes for a in inputs) + _nbytes(result)))
    log.add_sync(SyncRecord(sync_id, cause, where, 0, 1, run_ms))
    for t in outs:  # a device tensor takes its values back through a transfer
        value = hosts[id(t)]
        t[...] = value if t.device == "cpu" else asarray_like(value, "cpu", copy=False).to(t.device)
    return _wrap(result, device, inputs, {id(hosts[id(t)]): t for t in outs})
