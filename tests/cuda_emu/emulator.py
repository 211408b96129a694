"""Run generated CUDA sources on the CPU under cuda_emu.h (tests only).

`build(sources)` compiles any number of `CudaSource`s into one shared
library with g++ (`-std=c++20 -O1`), one `launch_<name>` entry per kernel
that binds the packed arrays and buffers to the kernel's parameters
exactly as the CuPy backend does. Libraries are cached by a hash of their
text (and the header) in a temp folder, so reruns cost nothing; builds go
to a temporary name and are renamed, so parallel test runs never see a
half-written file.

`run(kernel, launch, inputs, outputs)` then mirrors CUDABackend.run: the
same `plan_launch` geometry (with a small grid and block so the fibers
stay few), partial buffers for two-pass reductions, and guard zones
around every output to catch writes out of bounds.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

from cuda_backend.codegen import CudaSource, generate, mtype
from cuda_backend.launch import bind, plan_launch
from cuda_backend.reduce import second_partial
from scheduler.kernel_ir import Kernel, Launch, pack_launch

HERE = Path(__file__).resolve().parent
HEADER = HERE / "cuda_emu.h"
CACHE = Path(os.environ.get("LAZY_CUDA_EMU_CACHE",
                            Path(tempfile.gettempdir()) / f"lazyrt-cuda-emu-{os.getuid()}"))
CXX = os.environ.get("CXX", "g++")
FLAGS = ["-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-pthread", "-w",
         "-fvisibility=hidden"]
GUARD = 16  # elements of guard zone on each side of every output
_NP = {"bool": np.uint8, "int": np.int32, "i64": np.int64, "float": np.float32,
       "double": np.float64, "u8": np.uint8}
_lock = threading.Lock()
_libs: dict[str, ctypes.CDLL] = {}


class EmulationError(RuntimeError):
    pass


_SIGNATURE = re.compile(r'extern "C" __global__ void (\w+)\(\s*(.*?)\)\s*\{', re.S)


def signature(source: str) -> tuple[str, list[str]]:
    """(kernel name, C parameter types) from a generated source."""
    m = _SIGNATURE.search(source)
    if m is None:
        raise EmulationError("no extern \"C\" __global__ function in the source")
    params = [p.strip() for p in m.group(2).split(",") if p.strip()]
    return m.group(1), [p.rsplit(" ", 1)[0].replace("__restrict__", "").strip() for p in params]


def _launcher(source: str) -> str:
    """EMU_EXPORT int launch_<name>(grid, block, void** params): like cuLaunchKernel,
    params[k] points at the value of parameter k."""
    name, types = signature(source)
    args = ", ".join(f"*({t}*)params[{k}]" for k, t in enumerate(types))
    return (f"EMU_EXPORT int launch_{name}(unsigned grid, unsigned block, void** params) {{\n"
            f"  (void)params;\n  return emu::launch(grid, block, [&] {{ {name}({args}); }});\n}}\n")


def translation_unit(sources: list[CudaSource | str]) -> str:
    parts = ['#include "cuda_emu.h"\n']
    seen = set()
    for s in sources:
        text = s if isinstance(s, str) else s.source
        name = signature(text)[0]
        if name in seen:
            continue
        seen.add(name)
        parts += [text, _launcher(text)]
    parts.append('EMU_EXPORT const char* emu_error() { return emu::error.c_str(); }\n')
    return "\n".join(parts)


def _pch_dir() -> Path | None:
    """A folder holding cuda_emu.h and its precompiled form (built once, cached by
    the header's text and the flags); None when the compiler cannot make one.
    g++ uses the .gch when the flags match and the plain header otherwise, so the
    result is the same library either way, only faster to build (~0.4 s, not 0.7 s)."""
    text = HEADER.read_text()
    key = hashlib.sha256((text + CXX + " ".join(FLAGS)).encode()).hexdigest()[:16]
    d = CACHE / f"pch-{key}"
    gch = d / "cuda_emu.h.gch"
    if gch.exists():
        return d
    with _lock:
        if gch.exists():
            return d
        d.mkdir(parents=True, exist_ok=True)
        tag = f"{os.getpid()}.{threading.get_ident()}"
        tmp_h = d / f"cuda_emu.h.{tag}.tmp"
        tmp_h.write_text(text)
        os.replace(tmp_h, d / "cuda_emu.h")
        tmp = d / f"cuda_emu.h.gch.{tag}.tmp"
        flags = [f for f in FLAGS if f != "-shared"]
        r = subprocess.run([CXX, *flags, "-x", "c++-header", str(d / "cuda_emu.h"), "-o",
                            str(tmp)], capture_output=True, text=True)
        if r.returncode:
            tmp.unlink(missing_ok=True)
            return None
        os.replace(tmp, gch)
    return d


def build(sources: list[CudaSource | str], pch: bool = False) -> ctypes.CDLL:
    """One shared library running all `sources` (cached by content). `pch`: parse
    cuda_emu.h from a precompiled header (for callers building one kernel at a time)."""
    text = translation_unit(sources)
    key = hashlib.sha256((text + HEADER.read_text() + " ".join(FLAGS)).encode()).hexdigest()[:24]
    with _lock:
        if key in _libs:
            return _libs[key]
    CACHE.mkdir(parents=True, exist_ok=True)
    so = CACHE / f"{key}.so"
    if not so.exists():
        cpp = CACHE / f"{key}.{os.getpid()}.{threading.get_ident()}.cpp"
        cpp.write_text(text)
        tmp = so.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        if shutil.which(CXX) is None:  # a test dependency, like NVRTC: fail, never skip
            raise EmulationError(f"the CUDA emulation checks need a C++20 compiler: {CXX!r} "
                                 "is not on PATH (set CXX)")
        pre = _pch_dir() if pch else None
        inc = ([f"-I{pre}"] if pre is not None else []) + [f"-I{HERE}"]
        r = subprocess.run([CXX, *FLAGS, *inc, str(cpp), "-o", str(tmp)],
                           capture_output=True, text=True)
        if r.returncode:
            numbered = "\n".join(f"{n:5d}  {line}" for n, line in enumerate(text.splitlines(), 1))
            raise EmulationError(f"g++ failed:\n{r.stderr[-8000:]}\n--- source ---\n{numbered}")
        os.replace(tmp, so)
        cpp.unlink(missing_ok=True)
    lib = ctypes.CDLL(str(so))
    lib.emu_error.restype = ctypes.c_char_p
    with _lock:
        _libs[key] = lib
    return lib


def run(kernel: Kernel, launch: Launch, inputs: list, outputs: list[np.ndarray], *,
        lib: ctypes.CDLL | None = None, src: CudaSource | None = None, mode: int | None = None,
        nparts: int | None = None, block: int = 64, max_grid: int = 3, sms: int = 2) -> None:
    """Run `kernel` under the emulation; outputs (flat arrays) are written in place."""
    src = src or generate(kernel)
    lib = lib or build([src])
    plan = plan_launch(kernel, launch, sms, mode=mode, block=block, max_grid=max_grid,
                       nparts=nparts)
    if plan.n_out and not plan.n_red:
        from scheduler.ops import REDUCTIONS
        for r in kernel.reductions:
            if REDUCTIONS[r.op].identity is None:
                raise ValueError(f"zero-size reduction with {r.op}, which has no identity")
    if plan.n_out == 0:
        return
    a, s = pack_launch(kernel, launch)
    arrays: dict = {}
    for i, (inp, x) in enumerate(zip(kernel.inputs, inputs)):
        if not inp.iota:
            x = np.ascontiguousarray(x, dtype=inp.dtype.np)
            arrays[("in", i)] = x.view(np.uint8) if inp.dtype.is_bool else x
    guarded: dict[int, tuple] = {}  # by id(y): outputs writing one array share its copy
    for i, (o, y) in enumerate(zip(kernel.outputs, outputs)):
        if id(y) not in guarded:
            dt = np.dtype(np.uint8 if o.dtype.is_bool else o.dtype.np)
            raw = np.full((len(y) + 2 * GUARD) * dt.itemsize, 0x5A, np.uint8)
            g = raw.view(dt)
            g[GUARD:GUARD + len(y)] = y.view(np.uint8) if o.dtype.is_bool else y
            guarded[id(y)] = (raw, y, o, g[GUARD:])
        arrays[("out", i)] = guarded[id(y)][3]
    if kernel.reduce is not None:
        for i, r in enumerate(kernel.reductions):
            arrays[("pv", i)] = np.zeros(max(plan.partials, 1), _NP[mtype(r.acc)])
        acc = kernel.reduce.acc
        second = second_partial(kernel.reduce.op, acc)
        arrays[("pi", 0)] = np.zeros(max(plan.partials, 1),
                                     second.np if second is not None else np.int64)
    if src.packed:
        arrays[("A", 0)], arrays[("S", 0)] = a, s
    for call in plan.calls:
        launch_raw(lib, src.name, call.grid, call.block, bind(src.params, call, a, s, arrays))
    for i, (raw, y, o, g) in enumerate(guarded.values()):
        nb = GUARD * (1 if o.dtype.is_bool else o.dtype.itemsize)
        if (raw[:nb] != 0x5A).any() or (raw[len(raw) - nb:] != 0x5A).any():
            raise EmulationError(f"{src.name}: output array {i} written out of bounds")
        body = g[:len(y)]
        y[...] = body.view(np.bool_) if o.dtype.is_bool else body


def launch_raw(lib: ctypes.CDLL, name: str, grid: int, block: int, args: list) -> None:
    """Launch with argument values (NumPy scalars and arrays), as CuPy's RawKernel takes."""
    keep, ptrs = [], []
    for v in args:
        if isinstance(v, np.ndarray):
            cell = ctypes.c_void_p(v.ctypes.data)
            keep.append(cell)
            ptrs.append(ctypes.addressof(cell))
        else:
            cell = np.array([v])  # keeps the scalar's own dtype (int64, int32)
            keep.append(cell)
            ptrs.append(cell.ctypes.data)
    params = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
    fn = getattr(lib, f"launch_{name}")
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
    rc = fn(int(grid), int(block), params)
    if rc:
        raise EmulationError(f"{name}: {lib.emu_error().decode()}")
