"""Launch geometry: grid, block and reduction strategy for one kernel run.

Pure arithmetic on the Kernel, the Launch and the device's SM count, so
the CuPy backend and the host emulation in tests/cuda_emu run exactly the
same plan (the emulation just passes a small `max_grid`).

Why the grid is capped: every generated loop is grid-stride (elementwise
over elements, reductions over outputs or chunks), so a grid of a few
waves of the device (`sms * BLOCKS_PER_SM` blocks) fills it, and any grid
size is correct. Reduction strategy (the compiled kernel holds all of
them; `mode` picks one per launch, so no shape recompiles):
- thread per output (1): tiny reduce extents;
- column tiles (5): outputs adjacent in memory and the reduce axis strided
  (a column sum): the lanes of a warp take 32 neighbouring outputs, so
  loads coalesce, and the warps (and, for few outputs, blocks) split the
  reduce range;
- warp per output (4): many outputs, moderate reduce extent;
- block per output (0): enough outputs to fill the device;
- partials + finalize (2, 3): few outputs with a large reduce extent
  (a full sum), split into `nparts` chunks per output.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduler.kernel_ir import Kernel, Launch

BLOCK = 256
BLOCKS_PER_SM = 32
ELEMENTWISE, BLOCK_PER_OUT, THREAD_PER_OUT, PARTIALS, FINALIZE, WARP_PER_OUT, COLUMNS = \
    -1, 0, 1, 2, 3, 4, 5
MODES = {"block": BLOCK_PER_OUT, "thread": THREAD_PER_OUT, "partials": PARTIALS,
         "warp": WARP_PER_OUT, "columns": COLUMNS}
CHUNK = 4096      # reduce elements per partial chunk, at least
COL_CHUNK = 512   # reduce rows per column-tile chunk, at least
COL_BLOCK = 256   # most threads per block in column tiles (reduce.py sizes its tile so)


@dataclass(frozen=True)
class Call:
    mode: int    # ELEMENTWISE or a reduction mode
    grid: int
    block: int
    nparts: int = 1


@dataclass(frozen=True)
class LaunchPlan:
    calls: tuple[Call, ...]
    partials: int = 0  # elements of the partial buffers (mode 2), 0 when unused
    n_out: int = 0
    n_red: int = 0


def _coalesced_outputs(kernel: Kernel, launch: Launch) -> bool:
    """Do neighbouring outputs read neighbouring addresses (a column reduction)?"""
    for inp, views in zip(kernel.inputs, launch.inputs):
        if inp.space == "full" and not inp.iota and kernel.n_out:
            s = views[0].strides
            return abs(s[kernel.n_out - 1]) == 1 and abs(s[-1]) != 1
    return False


def choose_mode(kernel: Kernel, launch: Launch, sms: int) -> int:
    shape = tuple(int(n) for n in launch.shape)
    n_out, n_red = math.prod(shape[: kernel.n_out]), math.prod(shape[kernel.n_out:])
    if n_red <= 32:
        return THREAD_PER_OUT
    if _coalesced_outputs(kernel, launch):
        return COLUMNS
    if n_out >= sms * 64 and n_red <= 2048:
        return WARP_PER_OUT
    if n_out >= sms * 4 or n_red < 2 * CHUNK:
        return BLOCK_PER_OUT
    return PARTIALS


def plan_launch(kernel: Kernel, launch: Launch, sms: int, mode: int | None = None,
                block: int = BLOCK, max_grid: int | None = None,
                nparts: int | None = None) -> LaunchPlan:
    """The kernel calls for one run; `mode` and `nparts` force a strategy (tests)."""
    if block % 32 or not 32 <= block <= 1024:
        raise ValueError(f"block size {block} is not a multiple of 32 in [32, 1024]")
    cap = max(1, max_grid if max_grid is not None else sms * BLOCKS_PER_SM)
    shape = tuple(int(n) for n in launch.shape)
    n_out, n_red = math.prod(shape[: kernel.n_out]), math.prod(shape[kernel.n_out:])

    def grid(units: int) -> int:
        return max(1, min(units, cap))

    if kernel.reduce is None:
        if any(o.pos is not None for o in kernel.outputs):  # one thread, in order
            return LaunchPlan((Call(ELEMENTWISE, 1, block),), 0, n_out, 0)
        return LaunchPlan((Call(ELEMENTWISE, grid(-(-n_out // block)), block),), 0, n_out, 0)
    if mode is None:
        mode = choose_mode(kernel, launch, sms)
    if mode == THREAD_PER_OUT:
        calls = (Call(mode, grid(-(-n_out // block)), block),)
    elif mode == WARP_PER_OUT:
        calls = (Call(mode, grid(-(-n_out // (block // 32))), block),)
    elif mode == BLOCK_PER_OUT:
        calls = (Call(mode, grid(n_out), block),)
    elif mode == PARTIALS:
        parts = nparts or max(1, min(-(-n_red // CHUNK), -(-sms * 8 // max(n_out, 1))))
        calls = (Call(PARTIALS, grid(n_out * parts), block, parts),
                 Call(FINALIZE, grid(n_out), block, parts))
        return LaunchPlan(calls, n_out * parts, n_out, n_red)
    elif mode == COLUMNS:
        tiles = -(-n_out // 32)
        parts = nparts or max(1, min(-(-n_red // COL_CHUNK), -(-sms * 8 // max(tiles, 1))))
        first = Call(COLUMNS, grid(tiles * parts), min(block, COL_BLOCK), parts)
        if parts == 1:
            return LaunchPlan((first,), 0, n_out, n_red)
        return LaunchPlan((first, Call(FINALIZE, grid(n_out), block, parts)),
                          n_out * parts, n_out, n_red)
    else:
        raise ValueError(f"unknown reduction mode {mode}")
    return LaunchPlan(calls, 0, n_out, n_red)


def bind(params, call: Call, args: np.ndarray, scalars: np.ndarray, bufs: dict) -> list:
    """Argument values in parameter order (codegen.Param): int64 sizes and scalar bits
    as NumPy scalars, `mode` as int32, buffers from `bufs[(kind, index)]`."""
    out: list = []
    for p in params:
        if p.kind == "arg":
            out.append(args[p.index])
        elif p.kind == "scalar":
            out.append(scalars[p.index])
        elif p.kind == "mode":
            out.append(np.int32(call.mode))
        elif p.kind == "nparts":
            out.append(np.int64(call.nparts))
        else:
            out.append(bufs[(p.kind, p.index)])
    return out
