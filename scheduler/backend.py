"""The protocol every backend implements, and what compiling reports.

Backends see kernel IR, `Launch` arguments and flat buffers, never a
`Tensor`. The scheduler asks `available()` and `supports()` (each with a
reason it can log), `compile()` (which reports cache hit or miss, what was
new, and milliseconds), then `run()`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .dtypes import DType
from .kernel_ir import Kernel, Launch


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
