"""Short rows with a row-broadcast operand, run k rows at a time.

`P - c` with P of 1M x 3 and c of 3 lowers to 1M rows of 3 elements:
c's strides (0, 1) keep the lowering from merging the two axes, and each
row pays the loop's setup (its operands' row pointers, the stride-version
checks, a vector loop that never runs) for three elements of scalar
work: 3.5 ms where a flat loop over the same 3M elements takes 0.36.
Rows up to a few dozen elements pay for it too (3M float32 as rows of
16: 1.27 ms; of 33: 0.62), and more when the rows are too short for the
output's streaming stores (loops.py's blocks of 256 bytes).

The sizes were measured (3M float32 `p + c`, kernel medians, one process
per setting, 2026-11-22 22:57 UTC): merged rows of 256 elements gave
0.49-0.59 ms for rows of 3 to 33, of 1024 0.46-0.48, of 4096 0.41-0.43
(a flat loop: 0.35); rows of 64 and more gained little or lost (256:
0.37 unmerged, 0.41 merged), so they are left alone.

At launch, such a kernel runs over rows of k * n elements instead.
Operands contiguous across the two axes (row stride = n * element
stride: P, the output) are viewed as (R // k, k * n), and each
row-broadcast input (row stride 0: c) is replaced by a small array
holding its row k times, read from its memory at every run (4096
elements or so: 16 KB of float32, in L1 or L2 while the rows stream by). The R % k rows left over run as a second launch with the
original views, shifted. It is the same compiled kernel either way: only
run-time sizes and strides change, and each merged view keeps its inner
stride, which the kernel may have fixed at compile time. An iota input's
value is its view's position, so its views are merged like the others.

Not covered: a column-broadcast input (`P * w[:, None]`, strides (1, 0)),
whose values along a merged row repeat each element n times, which no
strides say; those kernels keep their short rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduler.kernel_ir import Kernel, Launch
from scheduler.view import View

SHORT_ROW = 64     # rows shorter than this (elements) are merged
MERGED_ROW = 4096  # elements per merged row to aim for: k = MERGED_ROW // n


@dataclass(frozen=True)
class Merge:
    """A launch split into the merged rows and the rows left over."""
    main: Launch
    tail: Launch | None
    repeated: tuple[tuple[int, View], ...]  # (input, its view): its row repeated k times
    k: int

    def main_inputs(self, inputs: list) -> list:
        """The main launch's input arrays: each repeated input's row, k times."""
        out = list(inputs)
        for i, v in self.repeated:
            n = v.shape[-1]
            row = inputs[i][v.offset + v.strides[-1] * np.arange(n)]
            tiled = np.tile(row, self.k)
            out[i] = tiled[::-1].copy() if self.main.inputs[i][0].strides[-1] < 0 else tiled
        return out


def merge(kernel: Kernel, launch: Launch) -> Merge | None:
    """How to run `launch` k rows at a time, or None when it gains nothing or
    its views do not allow it (see the module docstring)."""
    if kernel.reduce is not None or kernel.ndim != 2:
        return None
    rows, n = (int(x) for x in launch.shape)
    k = MERGED_ROW // max(n, 1)
    if not 1 < n < SHORT_ROW or rows < 2 * k:
        return None
    repeated = []
    for i, (inp, views) in enumerate(zip(kernel.inputs, launch.inputs)):
        if inp.indirect or len(views) != 1:
            return None
        row_stride, step = views[0].strides
        if row_stride == 0 and step != 0 and not inp.iota:
            repeated.append((i, views[0]))
        elif row_stride != n * step:
            return None
    if not repeated or any(v.strides[0] != n * v.strides[1] for v in launch.outputs):
        return None
    whole = rows // k * k
    wide = (rows // k, k * n)
    rep = {i for i, _ in repeated}
    main_in = [[_repeated(v, wide) if i in rep else _merged(v, wide)]
               for i, (v,) in enumerate(launch.inputs)]
    main = Launch(wide, main_in, [_merged(v, wide) for v in launch.outputs], launch.scalars)
    tail = None
    if whole < rows:
        tail = Launch((rows - whole, n), [[_shifted(v, whole)] for (v,) in launch.inputs],
                      [_shifted(v, whole) for v in launch.outputs], launch.scalars)
    return Merge(main, tail, tuple(repeated), k)


def _merged(v: View, wide: tuple[int, int]) -> View:
    step = v.strides[1]
    return View(wide, (wide[1] * step, step), v.offset)


def _repeated(v: View, wide: tuple[int, int]) -> View:
    """The view of a repeated row's array, with v's inner stride's sign (the
    kernel may have fixed a stride of -1 at compile time)."""
    return View(wide, (0, -1), wide[1] - 1) if v.strides[1] < 0 else View(wide, (0, 1), 0)


def _shifted(v: View, rows: int) -> View:
    return View((v.shape[0] - rows, v.shape[1]), v.strides, v.offset + rows * v.strides[0])
