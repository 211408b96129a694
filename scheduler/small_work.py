"""Small work: run a not-yet-compiled tiny kernel through NumPy while that is cheaper.

Compiling a kernel costs tens of milliseconds once; interpreting it with
NumPy costs microseconds per run for small tensors. Neither answer is
right in general, because whether a kernel will run once or a million
times is unknown when it first runs. So this is the ski-rental rule: keep
interpreting ("renting") a kernel structure while its interpreter time so
far, plus this run's, stays below what compiling it would cost; then
compile ("buy"). Whatever happens, the total is at most twice the best
choice made in hindsight. Opt-in (`LAZY_SMALL_WORK=1`): by default every
kernel compiles, which keeps what the log shows simple and testable.
"""
from __future__ import annotations

import math
import statistics
import threading
from collections import deque

from .kernel_ir import Kernel, Launch, postorder

# Measured with scheduler.interpret on this project's machines: about 3.5 us
# of NumPy call overhead per expression node, plus 4.6 ns per element and node.
NODE_US = 3.5
ELEMENT_NODE_NS = 4.6
PRIOR_COMPILE_MS = 30.0  # until this process has compiled something itself


def interpret_ms(kernel: Kernel, launch: Launch) -> float:
    """Estimated NumPy interpreter time of one run."""
    roots = [o.expr for o in kernel.outputs] + [r.expr for r in kernel.reductions]
    nodes = len(postorder(roots))
    return nodes * (NODE_US + math.prod(launch.shape) * ELEMENT_NODE_NS / 1e3) / 1e3


class SmallWork:
    """The rent paid so far per kernel structure, and what compiling costs here."""

    def __init__(self) -> None:
        self._rent: dict[Kernel, float] = {}
        self._compiles: deque[float] = deque(maxlen=32)
        self._lock = threading.Lock()

    def compile_ms(self) -> float:
        with self._lock:
            return statistics.median(self._compiles) if self._compiles else PRIOR_COMPILE_MS

    def observe_compile(self, ms: float) -> None:
        with self._lock:
            self._compiles.append(ms)

    def interpret(self, kernel: Kernel, launch: Launch) -> str | None:
        """The log's reason to interpret this run, or None: compile it."""
        run = interpret_ms(kernel, launch)
        buy = self.compile_ms()
        with self._lock:
            paid = self._rent.get(kernel, 0.0)
            if paid + run >= buy:
                self._rent.pop(kernel, None)
                return None
        return (f"small work: NumPy interpreter (est. {run:.3f} ms this run + {paid:.3f} ms "
                f"paid so far < compile est. {buy:.1f} ms)")

    def pay(self, kernel: Kernel, ms: float) -> None:
        """What an interpreted run really took (the estimate only opens the door)."""
        with self._lock:
            self._rent[kernel] = self._rent.get(kernel, 0.0) + ms
            if len(self._rent) > 4096:
                self._rent.pop(next(iter(self._rent)))


small_work = SmallWork()
