"""Hand-written LLVM functions with the kernels' ABI: the extern kernels'
code (scan.py, search.py, partition.py).

They take the generated kernels' arguments, `void f(i64* args, i8** ptrs,
i64* ctl, i8*)`: sizes and strides in `args`, the arrays' data pointers in
`ptrs`, and a chunk's control block in `ctl` (its ranges from ctl[1] on),
so the thread pool runs them by chunks exactly as it runs kernels. This
module holds what they share: the function's frame, the dtypes' LLVM
types, NumPy's sort order, and the launch.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from .dispatch import launch_record
from .launch import Launcher
from .threadpool import CTL_LEN

I64 = ir.IntType(64)
TYPES = {"bool": ir.IntType(8), "int32": ir.IntType(32), "int64": I64,
         "float32": ir.FloatType(), "float64": ir.DoubleType()}


def less(b: ir.IRBuilder, dtype: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """x < y in NumPy's sort order: a NaN is above everything, NaNs tie."""
    if dtype.startswith("float"):
        lt = b.fcmp_ordered("<", x, y)
        return b.or_(lt, b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x)))
    return b.icmp_unsigned("<", x, y) if dtype == "bool" else b.icmp_signed("<", x, y)


class Frame:
    """A function `name` with the kernels' ABI in a module of its own, and a
    builder at its entry. `fields` reads args or ctl; `pointers` reads ptrs
    as pointers to elements of the given LLVM types."""

    def __init__(self, name: str, triple: str, data_layout: str) -> None:
        self.module = ir.Module(name)
        self.module.triple, self.module.data_layout = triple, data_layout
        i8p, p64 = ir.IntType(8).as_pointer(), I64.as_pointer()
        self.function = ir.Function(self.module, ir.FunctionType(ir.VoidType(),
                                                                 [p64, i8p, p64, i8p]), name)
        self.args, self.ptrs, self.ctl, _ = self.function.args
        self.b = ir.IRBuilder(self.function.append_basic_block("entry"))

    def fields(self, base: ir.Value, indexes: range | tuple[int, ...]) -> list[ir.Value]:
        return [self.b.load(self.b.gep(base, [ir.Constant(I64, k)])) for k in indexes]

    def pointers(self, *types: ir.Type) -> list[ir.Value]:
        table = self.b.bitcast(self.ptrs, ir.IntType(8).as_pointer().as_pointer())
        return [self.b.bitcast(self.b.load(self.b.gep(table, [ir.Constant(I64, k)])),
                               t.as_pointer()) for k, t in enumerate(types)]

    def finish(self) -> str:
        self.b.ret_void()
        return str(self.module)


def chunk_table(ranges: list[tuple[int, ...]]) -> np.ndarray:
    """Control blocks, one per chunk, its ranges from field 1 on."""
    ctl = np.zeros((len(ranges), CTL_LEN), np.int64)
    if ranges:
        ctl[:, 1:1 + len(ranges[0])] = ranges
    return ctl


def launch(launcher: Launcher, addr: int, args: np.ndarray, ctl: np.ndarray,
           arrays: tuple) -> None:
    """Run function `addr` on every chunk of `ctl`, on the launcher's threads."""
    record = launch_record(args.ctypes.data, args.ctypes.data, ctl.ctypes.data, len(ctl), 0, [])
    launcher.pool.launch(addr, record, arrays)
