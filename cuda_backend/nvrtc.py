"""Compile CUDA C with NVRTC through CuPy's bindings: no GPU or driver needed.

This is what lets CI (which has no GPU) prove every generated source
compiles: `compile_ptx(source, "compute_90")` runs the same compiler, with
the same options, that `compile_image` runs for a real device (backend.py).
A failure raises `NVRTCError` carrying the numbered source and NVRTC's
log, so a broken kernel is readable in a test report.

CuPy finds libnvrtc from the `nvidia-cuda-nvrtc` wheel by itself (via
cuda-pathfinder); where it does not, `_preload()` loads the library from
the wheel's folder with ctypes first.
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys
from functools import lru_cache

# The options every kernel compiles with, in CI and on a GPU alike. The backend
# calls NVRTC itself (not cupy.RawModule, which appends -ftz=true: flushing
# float32 subnormals to zero would differ from NumPy).
OPTIONS = ("--std=c++17", "--fmad=false", "--ftz=false")
ARCHS = ("compute_80", "compute_90")


class NVRTCError(RuntimeError):
    """NVRTC rejected a source; the message holds the log and the numbered source."""

    def __init__(self, name: str, arch: str, log: str, source: str):
        self.log, self.source = log, source
        super().__init__(f"NVRTC failed to compile {name} for {arch}:\n{log}\n"
                         f"--- source ---\n{numbered(source)}")


def numbered(source: str) -> str:
    return "\n".join(f"{n:5d}  {line}" for n, line in enumerate(source.splitlines(), 1))


def _preload() -> None:
    """Load libnvrtc from the nvidia wheel folders so CuPy's binding finds it."""
    for base in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cu12/lib"):
            for lib in sorted(glob.glob(os.path.join(base, sub, "libnvrtc.so*"))):
                try:
                    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                    return
                except OSError:
                    continue


@lru_cache(maxsize=None)
def bindings():
    """CuPy's NVRTC module, with libnvrtc loaded (raises ImportError if impossible)."""
    from cupy_backends.cuda.libs import nvrtc
    try:
        nvrtc.getVersion()
    except Exception:  # library not found by CuPy: preload from the wheel and retry
        _preload()
        nvrtc.getVersion()
    return nvrtc


def version() -> tuple[int, int]:
    return tuple(bindings().getVersion())


def _compile(source: str, arch_option: str, label: str, name: str,
             options: tuple[str, ...], cubin: bool) -> bytes:
    nv = bindings()
    prog = nv.createProgram(source, name, [], [])
    try:
        try:
            nv.compileProgram(prog, [arch_option, *options])
        except Exception as e:  # CuPy raises NVRTCError without the log
            try:
                log = nv.getProgramLog(prog)
            except Exception:
                log = ""
            raise NVRTCError(name, label, log or str(e), source) from None
        image = nv.getCUBIN(prog) if cubin else nv.getPTX(prog)
    finally:
        nv.destroyProgram(prog)
    return image if isinstance(image, bytes) else image.encode()


def compile_ptx(source: str, arch: str = "compute_80", name: str = "kernel.cu",
                options: tuple[str, ...] = OPTIONS) -> str:
    """PTX for `source` on virtual architecture `arch`; NVRTCError on failure."""
    ptx = _compile(source, f"--gpu-architecture={arch}", arch, name, options, cubin=False)
    return ptx.rstrip(b"\0").decode()


def target(capability: int) -> tuple[str, bool]:
    """(--gpu-architecture value, cubin?) for a device of compute capability
    `capability` (e.g. 90): a cubin for it when this NVRTC knows the arch,
    else PTX for the newest arch it knows below it (the driver JIT-compiles)."""
    archs = sorted(int(a) for a in bindings().getSupportedArchs())
    if capability in archs:
        return f"sm_{capability}", True
    lower = [a for a in archs if a <= capability] or archs[:1]
    return f"compute_{lower[-1]}", False


def compile_image(source: str, capability: int, name: str = "kernel.cu",
                  options: tuple[str, ...] = OPTIONS) -> tuple[bytes, str]:
    """(image, arch) for the device: what CUDABackend loads with cuModuleLoadData."""
    arch, cubin = target(capability)
    return _compile(source, f"--gpu-architecture={arch}", arch, name, options, cubin), arch
