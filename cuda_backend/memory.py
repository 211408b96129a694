"""Device memory and host transfers, for `lazy` (through the scheduler) to call.

Buffers on CUDA are flat CuPy arrays, as buffers on CPU are flat NumPy arrays;
these helpers keep CuPy imports inside the backend.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from scheduler.dtypes import DType


def is_device_array(x: Any) -> bool:
    """Is `x` a CuPy array (without importing CuPy when it is not loaded)?"""
    return type(x).__module__.startswith("cupy")


def to_device(host: np.ndarray) -> Any:
    """A flat contiguous device copy of a host array (synchronous)."""
    import cupy
    return cupy.asarray(np.ascontiguousarray(host).reshape(-1))


def to_host(dev: Any) -> np.ndarray:
    """A flat host copy of a device array (synchronizes the stream)."""
    return dev.reshape(-1).get()


def empty(size: int, dtype: DType) -> Any:
    import cupy
    return cupy.empty(size, dtype.np)


def synchronize() -> None:
    """Wait for the current stream: call before timing or reading results."""
    import cupy
    cupy.cuda.get_current_stream().synchronize()
