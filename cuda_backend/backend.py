"""CUDABackend: the scheduler's Backend protocol over NVRTC and CuPy.

Glue only: code generation (codegen.py), launch geometry (launch.py),
NVRTC through CuPy's bindings (nvrtc.py: a cubin for the device's own
arch, with exactly the options CI compiles with), an on-disk image cache
(diskcache.py) plus an in-memory map from kernel structure to the loaded
function, and CuPy for loading (cuModuleLoadData), memory and launching.
Not `cupy.RawModule`: it appends `-ftz=true`, which would flush float32
subnormals to zero where NumPy keeps them.
CuPy is imported lazily, so `source()` and `supports()` work on machines
without CuPy or a GPU (that is what `lazy.explain(device="cuda")` needs),
and `available()` says why CUDA cannot run instead of raising.
"""
from __future__ import annotations

import threading
import time
from functools import lru_cache
from typing import Any

from scheduler.backend import CompileInfo, PerObject
from scheduler.dtypes import DType
from scheduler.kernel_ir import Kernel, Launch, Load, Op, Reduced, pack_launch, postorder
from scheduler.ops import REDUCTIONS, SIBLING_REDUCTIONS, operand_error, part_error

from .codegen import SUPPORTED_OPS, CudaSource, generate
from .launch import bind, plan_launch
from .reduce import second_partial
from . import diskcache, nvrtc
from .nvrtc import OPTIONS

PREPARED = 256  # launches whose plan and packed arguments CUDABackend.run keeps


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    if "InsufficientDriver" in text or "NoDevice" in text or "libcuda" in text:
        kind = "no CUDA device" if "NoDevice" in text else "no usable CUDA driver"
        return f"{kind} ({text})"
    return f"{type(e).__name__}: {text}"


@lru_cache(maxsize=1)
def probe() -> tuple[bool, str]:
    """(usable, description or reason), computed once per process."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means "no CUDA"
        return False, f"cuda unavailable: CuPy is not installed ({type(e).__name__}: {e}); " \
                      f"install lazyrt[cuda]"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return False, f"cuda unavailable: {_why(e)}"
    if n == 0:
        return False, "cuda unavailable: no CUDA device"
    try:
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        sms = props["multiProcessorCount"]
        return True, f"{name} (sm_{props['major']}{props['minor']}, {sms} SMs), " \
                     f"CuPy {cupy.__version__}"
    except Exception as e:  # noqa: BLE001
        return False, f"cuda unavailable: {_why(e)}"


@lru_cache(maxsize=None)
def _sm_count(device_id: int) -> int:
    import cupy
    return int(cupy.cuda.Device(device_id).attributes["MultiProcessorCount"])


def load_function(image: bytes, name: str) -> tuple[Any, Any]:
    """Load a cubin/PTX image into the current context (cuModuleLoadData)."""
    from cupy.cuda.function import Module
    module = Module()
    module.load(image)
    return module, module.get_function(name)


class Compiled:
    """A loaded kernel function and the source it came from."""
    __slots__ = ("src", "module", "function")

    def __init__(self, src: CudaSource, module: Any, function: Any):
        self.src, self.module, self.function = src, module, function


class CUDABackend:
    name = "cuda"
    device = "cuda"

    def __init__(self, mode: int | None = None, nparts: int | None = None) -> None:
        """`mode`/`nparts` force a reduction strategy (launch.py); for tests."""
        self.mode, self.nparts = mode, nparts
        self._sources: dict[str, CudaSource] = {}
        self._compiled: dict[tuple[int, str], Compiled] = {}
        self._supported: PerObject[Kernel, tuple[bool, str]] = PerObject(4096)
        self._plans: PerObject[Launch, tuple] = PerObject(PREPARED)  # _prepared's
        self._lock = threading.Lock()

    def available(self) -> tuple[bool, str]:
        return probe()

    def supports(self, kernel: Kernel) -> tuple[bool, str]:
        """Remembered per kernel object, as the CPU backend's: the scheduler asks
        before every run, and it walks the whole kernel."""
        answer = self._supported.get(kernel)
        return answer if answer is not None else self._supported.put(kernel, _check(kernel))

    def generated(self, kernel: Kernel) -> CudaSource:
        """The CudaSource for `kernel` (cached by structure; no GPU needed)."""
        key = kernel.digest()
        src = self._sources.get(key)
        if src is None:
            src = self._sources[key] = generate(kernel)
        return src

    def source(self, kernel: Kernel) -> str:
        return self.generated(kernel).source

    def compile(self, kernel: Kernel) -> tuple[Compiled, CompileInfo]:
        import cupy
        dev = cupy.cuda.Device()
        src = self.generated(kernel)
        key = (dev.id, src.name)
        hit = self._compiled.get(key)
        if hit is not None:
            return hit, CompileInfo("hit", 0.0)
        t = time.perf_counter()
        with self._lock:
            hit = self._compiled.get(key)
            if hit is not None:
                return hit, CompileInfo("hit", 0.0)
            cap = int(dev.compute_capability)
            dkey = diskcache.key(src.source, OPTIONS, cap, nvrtc.version())
            image = diskcache.load(dkey)
            cache = "disk" if image is not None else "miss"
            if image is None:
                image, _ = nvrtc.compile_image(src.source, cap, f"{src.name}.cu")
                diskcache.store(dkey, image)
            module, function = load_function(image, src.name)
            compiled = self._compiled[key] = Compiled(src, module, function)
        ms = (time.perf_counter() - t) * 1e3
        return compiled, CompileInfo(cache, ms, "" if cache == "disk" else "new structure")

    def run(self, compiled: Any, kernel: Kernel, launch: Launch,
            inputs: list, outputs: list) -> None:
        import cupy
        if not isinstance(compiled, Compiled):
            compiled, _ = self.compile(kernel)
        src = compiled.src
        plan, a, s, packed = self._prepared(kernel, launch, src.packed)
        if plan.n_out and not plan.n_red:
            for r in kernel.reductions:
                if REDUCTIONS[r.op].identity is None:
                    raise ValueError(f"zero-size reduction with {r.op}, which has no identity")
        if plan.n_out == 0:
            return
        bufs: dict[tuple[str, int], Any] = {}
        for i, (inp, x) in enumerate(zip(kernel.inputs, inputs)):
            if not inp.iota:
                bufs[("in", i)] = _device_array(x, inp.dtype, f"input {i}")
        for i, (o, y) in enumerate(zip(kernel.outputs, outputs)):
            if not isinstance(y, cupy.ndarray) or y.dtype != o.dtype.np \
                    or not y.flags.c_contiguous:
                raise TypeError(f"output {i} must be a contiguous {o.dtype.name} CuPy array")
            bufs[("out", i)] = y
        if kernel.reduce is not None:
            n = max(plan.partials, 1)
            for i, r in enumerate(kernel.reductions):
                bufs[("pv", i)] = cupy.empty(n, r.acc.np)
            second = second_partial(kernel.reduce.op, kernel.reduce.acc)
            # an unused `pi` (no second field) is never read or written: any pointer will do
            bufs[("pi", 0)] = bufs[("pv", 0)] if second is None else cupy.empty(n, second.np)
        if packed is not None:
            bufs[("A", 0)], bufs[("S", 0)] = packed
        for call in plan.calls:
            compiled.function((call.grid,), (call.block,), tuple(bind(src.params, call, a, s, bufs)))

    def _prepared(self, kernel: Kernel, launch: Launch, packed: bool) -> tuple:
        """(launch plan, packed sizes, scalar bits, their device copies or None) for
        one launch. A replayed schedule runs the same Launch object every time, so
        these are kept per Launch object for the last PREPARED launches: 20-40 us
        of Python a kernel."""
        import cupy
        dev = cupy.cuda.Device().id
        hit = self._plans.get(launch)
        if hit is None or hit[0] is not kernel or hit[1] != dev:
            plan = plan_launch(kernel, launch, _sm_count(dev),
                               mode=self.mode if kernel.reduce is not None else None,
                               nparts=self.nparts)
            a, s = pack_launch(kernel, launch)
            on_device = (cupy.asarray(a), cupy.asarray(s)) if packed else None
            hit = self._plans.put(launch, (kernel, dev, plan, a, s, on_device))
        return hit[2:]

    def allocate(self, size: int, dtype: DType) -> Any:
        """Device memory for `size` elements; NumPy's words where no size_t can hold
        the bytes (CuPy's allocator would say "can't convert negative value")."""
        import cupy
        if size * dtype.itemsize >= 1 << 63:
            raise ValueError(f"array is too big: {size} elements of {dtype.name} are "
                             f"{size * dtype.itemsize} bytes, more than device cuda can address")
        return cupy.empty(size, dtype.np)


def _check(kernel: Kernel) -> tuple[bool, str]:
    """Whether every op of `kernel` has a CUDA lowering, and why not."""
    red, reds = kernel.reduce, kernel.reductions
    if red is None and kernel.siblings:
        return False, "sibling reductions without Kernel.reduce"
    for r in reds:
        if r.op not in REDUCTIONS:
            return False, f"no CUDA lowering for reduction {r.op!r}"
        if kernel.siblings and r.op not in SIBLING_REDUCTIONS:
            return False, f"reduction {r.op!r} cannot share a loop: siblings are " \
                          f"{', '.join(sorted(SIBLING_REDUCTIONS))}"
    roots = [r.expr for r in reds] + [o.expr for o in kernel.outputs]
    for e in postorder(roots):
        if isinstance(e, Op):
            if e.name not in SUPPORTED_OPS:
                return False, f"no CUDA lowering for op {e.name!r}"
            why = operand_error(e.name, [a.dtype for a in e.args])
            if why:
                return False, why
    for e in postorder([r.expr for r in reds]):
        if isinstance(e, Load) and kernel.inputs[e.input].space != "full":
            return False, f"reduction prologue reads out-space input {e.input}"
        if isinstance(e, Reduced):
            return False, "Reduced inside its own reduction"
    for o in kernel.outputs:
        if o.pos is not None and red is not None:
            return False, "stores at computed positions in a reduction kernel"
    for e in postorder(roots):
        if type(e).__name__ == "Gather" and kernel.inputs[e.input].iota:
            return False, f"Gather from iota input {e.input} (no memory to read)"
    for o in kernel.outputs:
        for e in postorder([o.expr]):
            if isinstance(e, Load) and red is not None \
                    and kernel.inputs[e.input].space == "full":
                return False, f"output reads full-space input {e.input} after a reduction"
            if isinstance(e, Reduced) and red is None:
                return False, "Reduced without a reduction"
            if isinstance(e, Reduced) and not 0 <= e.index < len(reds):
                return False, f"Reduced index {e.index} out of range: the kernel has " \
                              f"{len(reds)} reduction{'s' if len(reds) > 1 else ''}"
            if isinstance(e, Reduced) and part_error(reds[e.index].op, e.part):
                return False, part_error(reds[e.index].op, e.part)
    return True, "all ops lowered to CUDA C"


def _device_array(x: Any, dtype: DType, what: str) -> Any:
    """A flat contiguous CuPy array of `dtype` (host arrays are copied over)."""
    import cupy
    if type(x) is cupy.ndarray and x.ndim == 1 and x.dtype == dtype.np \
            and x.flags.c_contiguous:
        return x  # a buffer's own array: the common case, three CuPy calls saved
    x = cupy.asarray(x)
    if x.dtype != dtype.np:
        raise TypeError(f"{what} is {x.dtype}, kernel expects {dtype.name}")
    return cupy.ascontiguousarray(x.reshape(-1))
