"""The protocol every backend implements, what compiling reports, and the
per-object memo both backends keep their per-kernel and per-launch answers in.

Backends see kernel IR, `Launch` arguments and flat buffers, never a
`Tensor`. The scheduler asks `available()` and `supports()` (each with a
reason it can log), `compile()` (which reports cache hit or miss, what was
new, and milliseconds), then `run()`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from .dtypes import DType
from .kernel_ir import Kernel, Launch

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class CompileInfo:
    cache: str        # "hit", "miss" or "disk" (loaded from the disk cache)
    ms: float         # compile time spent now (0 on a hit)
    new: str = ""     # on a miss: what was new ("new structure", "new dtypes", ...)


class Backend(Protocol):
    name: str     # "llvm", "cuda", "numpy"
    device: str   # "cpu" or "cuda"

    def available(self) -> tuple[bool, str]: ...

    def supports(self, kernel: Kernel) -> tuple[bool, str]: ...

    def compile(self, kernel: Kernel) -> tuple[Any, CompileInfo]: ...

    def source(self, kernel: Kernel) -> str: ...

    def run(self, compiled: Any, kernel: Kernel, launch: Launch,
            inputs: list[np.ndarray | None], outputs: list[np.ndarray]) -> None: ...

    def allocate(self, size: int, dtype: DType) -> np.ndarray: ...


class PerObject(Generic[K, V]):
    """Values remembered per object (a Kernel, a Launch), for the last `size`
    objects. A reused schedule runs the same Kernel and Launch objects again,
    so a backend answers `supports` or prepares a launch once per object;
    keyed by id, with the object held so its id cannot be reused meanwhile."""

    def __init__(self, size: int):
        self.size = size
        self._map: dict[int, tuple[K, V]] = {}

    def get(self, obj: K) -> V | None:
        hit = self._map.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: K, value: V) -> V:
        if len(self._map) >= self.size:
            self._map.pop(next(iter(self._map)))
        self._map[id(obj)] = (obj, value)
        return value

    def clear(self) -> None:
        self._map.clear()

    def held(self) -> list[K]:
        """The objects remembered now (tests)."""
        return [obj for obj, _ in self._map.values()]
