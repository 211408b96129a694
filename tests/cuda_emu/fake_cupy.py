"""A stand-in for the slice of CuPy that CUDABackend uses, backed by NumPy
arrays and the host emulation, so CI (no GPU) runs CUDABackend.compile and
.run end to end: NVRTC to a cubin for sm_80 and the disk cache (real),
argument binding by parameter, partial buffers and every launch strategy
(emulated). Install with `install(monkeypatch, libs)`.

`install_device(monkeypatch)` goes further, for the whole lazy pipeline on
device "cuda" (tests/cuda_lazy_helpers.py): device arrays are
`DeviceArray`s, which hold a NumPy array but, like CuPy's, refuse implicit
conversion to NumPy (`np.asarray(d)` raises; `.get()` copies to the host),
so a host code path reading device memory fails here as it would on a GPU;
kernels are built for the emulation on demand the first time they load
(the source comes from `CUDABackend.generated`); `cuda.runtime` answers as
one sm_80 device; `matmul`, `lib.stride_tricks.as_strided` and
`get_current_stream().synchronize()` exist; host<->device copies are counted
(`h2d_bytes`, `d2h_bytes`).
"""
from __future__ import annotations

import sys
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import emulator

SMS = 2
ndarray = np.ndarray  # DeviceArray while install_device is in effect
STRICT = False        # install_device: device arrays are DeviceArrays
LIBS: dict = {}  # kernel name -> emulation library holding it
SOURCES: dict = {}  # kernel name -> CUDA source (install_device: built on first load)
compiled: list[str] = []  # kernel names loaded
launches: list[str] = []  # kernel names launched (install_device)
h2d_bytes = 0  # bytes copied host -> device (asarray of host data)
d2h_bytes = 0  # bytes copied device -> host (.get())
exports: list[dict] = []  # the arguments of each DeviceArray.__dlpack__ call


class DeviceArray:
    """Device memory as CuPy shows it: NumPy-like metadata and views, but no
    implicit conversion to a host array (`__array__` raises, as CuPy's does)."""
    __slots__ = ("_a",)
    __array_priority__ = 100

    def __init__(self, a: np.ndarray):
        assert isinstance(a, np.ndarray) and not isinstance(a, DeviceArray)
        self._a = a

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)

    @property
    def flags(self):  # CuPy's flags: no `writeable` (device memory always is)
        f = self._a.flags
        return types.SimpleNamespace(c_contiguous=f.c_contiguous, f_contiguous=f.f_contiguous,
                                     owndata=f.owndata)

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __len__(self):
        return len(self._a)

    def __getitem__(self, key):
        return DeviceArray(np.asarray(self._a[key]))

    def __setitem__(self, key, value):
        self._a[key] = _device(value)._a if isinstance(value, np.ndarray) else _unwrap(value)

    def reshape(self, *shape, order="C"):
        return DeviceArray(self._a.reshape(*shape, order=order))

    def ravel(self):
        return DeviceArray(self._a.ravel())

    def copy(self, order="C"):
        return DeviceArray(self._a.copy(order))

    def astype(self, dtype, copy=True):
        return DeviceArray(self._a.astype(dtype, copy=copy))

    def view(self, dtype):
        return DeviceArray(self._a.view(dtype))

    def fill(self, value):
        self._a.fill(value)

    def get(self, stream=None):
        global d2h_bytes
        d2h_bytes += self._a.nbytes
        return np.array(self._a, copy=True)

    def item(self):
        return self._a.item()

    @property
    def device(self):  # CuPy's Device: only its id is read
        return types.SimpleNamespace(id=0)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """CuPy's export. The emulated device memory is host memory, so the capsule
        is NumPy's over the same memory, and the arguments are kept in `exports`."""
        exports.append(dict(stream=stream, max_version=max_version, dl_device=dl_device,
                            copy=copy))
        return self._a.__dlpack__(max_version=max_version, copy=copy)

    def __repr__(self):
        return f"DeviceArray({self._a!r})"


def _unwrap(x):
    return x._a if isinstance(x, DeviceArray) else x


def _wrap(a):
    return DeviceArray(a) if STRICT else a


def _device(x, dtype=None) -> DeviceArray:
    """A device copy of host data (counted in h2d_bytes)."""
    global h2d_bytes
    a = np.array(x, dtype=dtype, copy=True)
    h2d_bytes += a.nbytes
    return DeviceArray(a)


def empty(n, dtype=np.float64):
    return _wrap(np.empty(n, dtype))


def full(n, value, dtype=None):
    return _wrap(np.full(n, value, dtype))


def zeros(n, dtype=np.float64):
    return _wrap(np.zeros(n, dtype))


def asarray(x, dtype=None):
    if not STRICT:
        return np.asarray(x, dtype)
    if isinstance(x, DeviceArray):
        return x if dtype is None or np.dtype(dtype) == x.dtype else x.astype(dtype)
    return _device(x, dtype)


def ascontiguousarray(x):
    if not STRICT:
        return np.ascontiguousarray(x)
    if isinstance(x, DeviceArray):
        return x if x.flags.c_contiguous else DeviceArray(np.ascontiguousarray(x._a))
    return _device(np.ascontiguousarray(x))


def matmul(a, b, out=None):
    """cuBLAS through CuPy: every operand must already be on the device."""
    for what, x in (("a", a), ("b", b), ("out", out)):
        if STRICT and x is not None and not isinstance(x, DeviceArray):
            raise TypeError(f"Unsupported type {type(x)} for matmul operand {what}")
    r = np.matmul(_unwrap(a), _unwrap(b), out=_unwrap(out))
    return out if out is not None else _wrap(r)


def _scan(name: str):
    def scan(a, axis=None, dtype=None, out=None):
        """CuPy's cumsum/cumprod: every operand must already be on the device."""
        for what, x in (("a", a), ("out", out)):
            if STRICT and x is not None and not isinstance(x, DeviceArray):
                raise TypeError(f"Unsupported type {type(x)} for {name} operand {what}")
        r = getattr(np, name)(_unwrap(a), axis=axis, dtype=dtype, out=_unwrap(out))
        return out if out is not None else _wrap(r)
    scan.__name__ = name
    return scan


cumsum, cumprod = _scan("cumsum"), _scan("cumprod")


def _on_device(name: str, *xs) -> None:
    for x in xs:
        if STRICT and not isinstance(x, DeviceArray):
            raise TypeError(f"Unsupported type {type(x)} for {name}")


def _stable(name: str):
    def sort(a, axis=-1, kind=None):
        """CuPy's sort/argsort: stable, and no other kind is accepted."""
        _on_device(name, a)
        if kind is not None:
            raise NotImplementedError(f"{name} kind {kind!r} is not supported")
        return _wrap(getattr(np, name)(_unwrap(a), axis=axis, kind="stable"))
    sort.__name__ = name
    return sort


sort, argsort = _stable("sort"), _stable("argsort")


def bincount(x, weights=None, minlength=0):
    _on_device("bincount", x, *(() if weights is None else (weights,)))
    return _wrap(np.bincount(_unwrap(x), None if weights is None else _unwrap(weights),
                             minlength=minlength))


def searchsorted(a, v, side="left", sorter=None):
    _on_device("searchsorted", a, v)
    return _wrap(np.asarray(np.searchsorted(_unwrap(a), _unwrap(v), side=side)))


def _as_strided(x, shape=None, strides=None):
    if STRICT and not isinstance(x, DeviceArray):
        raise TypeError(f"cupy as_strided of {type(x)}")
    return _wrap(np.lib.stride_tricks.as_strided(_unwrap(x), shape=shape, strides=strides))


stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
stride_tricks.as_strided = _as_strided
lib = types.ModuleType("cupy.lib")
lib.stride_tricks = stride_tricks


def _library(name: str):
    got = LIBS.get(name)
    if got is None:
        src = SOURCES.get(name)
        assert src is not None, f"no emulation library or source for kernel {name}"
        got = LIBS[name] = emulator.build([src], pch=True)
    return got


def prebuild(sources, workers: int = 2) -> None:
    """Build the emulation libraries of kernels not built yet, a few per library and
    libraries in parallel (g++ runs outside the GIL): a sync's kernels at once."""
    missing = list({s.name: s for s in sources if s.name not in LIBS}.values())
    if len(missing) < 2:
        return  # one kernel: built when it loads
    chunks = [missing[i::workers] for i in range(workers) if missing[i::workers]]
    with ThreadPoolExecutor(len(chunks)) as pool:
        for chunk, built in zip(chunks, pool.map(lambda c: emulator.build(c, pch=True),
                                                 chunks)):
            for src in chunk:
                LIBS[src.name] = built


def load_function(image: bytes, name: str):
    """Stands in for backend.load_function: the NVRTC image is real (compiled in
    CI), the launch runs the same kernel's source under the emulation."""
    assert image, "empty image"
    compiled.append(name)
    lib_ = _library(name)

    def launch(grid, block, args):
        if STRICT:
            for k, v in enumerate(args):
                if isinstance(v, np.ndarray):  # CuPy takes no host arrays as kernel arguments
                    raise TypeError(f"{name}: argument {k} is a host array ({v.dtype}, "
                                    f"{v.shape}); kernels take device arrays")
                if isinstance(v, DeviceArray) and not v.flags.c_contiguous:
                    raise TypeError(f"{name}: argument {k} is not contiguous")
            launches.append(name)
        emulator.launch_raw(lib_, name, grid[0], block[0], [_unwrap(v) for v in args])
    return None, launch


class _Device:
    def __init__(self, i: int = 0):
        self.id = i
        self.compute_capability = "80"
        self.attributes = {"MultiProcessorCount": SMS}


syncs = 0  # get_current_stream().synchronize() calls


def _synchronize() -> None:
    global syncs
    syncs += 1


_runtime = types.SimpleNamespace(
    getDeviceCount=lambda: 1,
    getDeviceProperties=lambda i: {"name": b"Emulated GPU", "major": 8, "minor": 0,
                                   "multiProcessorCount": SMS},
    runtimeGetVersion=lambda: 13000)

cuda = types.SimpleNamespace(
    Device=_Device,
    runtime=_runtime,
    get_current_stream=lambda: types.SimpleNamespace(synchronize=_synchronize))
__version__ = "fake"


def install(monkeypatch, libs: dict | None = None) -> types.ModuleType:
    from cuda_backend import backend
    LIBS.clear()
    LIBS.update(libs or {})
    compiled.clear()
    monkeypatch.setitem(sys.modules, "cupy", sys.modules[__name__])
    backend._sm_count.cache_clear()
    monkeypatch.setattr(backend, "_sm_count", lambda i: SMS)
    monkeypatch.setattr(backend, "load_function", load_function)
    return sys.modules[__name__]


def install_device(monkeypatch) -> types.ModuleType:
    """`install`, plus what the lazy pipeline on device "cuda" needs: strict device
    arrays (DeviceArray) and kernels built for the emulation when first loaded
    (every CUDABackend's `generated` registers its source by kernel name)."""
    from cuda_backend import backend
    global h2d_bytes, d2h_bytes, syncs
    mod = install(monkeypatch, None)
    # `from cupy.lib.stride_tricks import as_strided` finds the real submodule in
    # sys.modules when the real CuPy was imported (NVRTC's binding imports it)
    monkeypatch.setitem(sys.modules, "cupy.lib", lib)
    monkeypatch.setitem(sys.modules, "cupy.lib.stride_tricks", stride_tricks)
    monkeypatch.setattr(mod, "STRICT", True)
    monkeypatch.setattr(mod, "ndarray", DeviceArray)
    launches.clear()
    exports.clear()
    h2d_bytes = d2h_bytes = syncs = 0
    generated = backend.CUDABackend.generated

    def registering(self, kernel):
        src = generated(self, kernel)
        SOURCES.setdefault(src.name, src)
        return src
    monkeypatch.setattr(backend.CUDABackend, "generated", registering)

    from scheduler import realize
    plan = realize.plan

    def planning(targets):
        """realize's plan, then every CUDA kernel of the sync built for the emulation
        in one go (the same sources CUDABackend will generate and load)."""
        from cuda_backend.codegen import generate
        sched = plan(targets)
        sources = []
        for step in sched.steps:
            if step.kernel is not None and step.group.root.device == "cuda":
                try:
                    sources.append(generate(step.kernel))
                except Exception:  # noqa: BLE001 - the real path reports it when it runs
                    pass
        prebuild(sources)
        return sched
    monkeypatch.setattr(realize, "plan", planning)
    return mod
