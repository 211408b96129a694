"""LLVM JIT: optimize for the host CPU, compile with MCJIT, cache by Kernel.

An optional on-disk object cache (diskcache.py) serves new processes. The
in-memory cache is keyed by the Kernel's structure: a Kernel holds no sizes,
so a new shape with the same structure is a hit. The key is
`keys.structural_key(kernel)` (equal exactly when the Kernels are `==`)
rather than the Kernel object, whose recursive hash/repr fail on deep
expressions; the same Kernel object is found by identity first. On a
miss the report says what was new against the kernels already compiled
(the smallest set among dtypes / rank / contiguity that, once ignored,
matches a cached kernel; otherwise "new structure"), because the log has
to explain every recompile. Kernels are called by address, from native
code (dispatch.py's `lazy_launch`, and the pool's workers).
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

import llvmlite
import llvmlite.binding as llvm

from scheduler.backend import CompileInfo
from scheduler.kernel_ir import Kernel

from .codegen import generate
from .diskcache import DiskCache
from .loops import alias_candidate
from .keys import NewnessTracker, key_digest, structural_key, variant_key

@dataclass
class Compiled:
    kernel: Kernel
    name: str
    address: int
    ir: str             # generated (unoptimized) LLVM IR; "" until asked when from disk
    ms: float
    in_order: bool = False  # some output stores at Output.pos: run single-threaded
    alias_inputs: tuple = ()  # inputs an in-place variant could serve (loops.alias_candidate)
    variants: dict = field(default_factory=dict)  # keys.variant_key's variant -> compiled
    plan: object = None  # pack.LaunchPlan, made on first run (backend.py)


def _features() -> str:
    """Host features, plus "prefer no gather/scatter": 64-bit-index gathers are
    slow on current x86 cores (30 ms vs 6 ms scalar for a stride-2 10M-element
    kernel on Zen 4), and without them a constant-stride access vectorizes
    with wide loads and shuffles instead.

    And not "prefer 256-bit": LLVM's tuning for Intel's AVX-512 server cores
    (Sapphire/Emerald Rapids, ...) has its loop vectorizer stop at 256-bit
    vectors, so a reduction's loop read 32 floats per iteration there
    instead of 64. On an Emerald Rapids VM the 512-bit loops ran the W3
    sums 4-12% faster, the softmax's logsumexp 8%, argmax rows 15%, and
    nothing slower (docs/performance_history.md, "512-bit vector loops on Intel").
    simd.py's loops name their vector types and were 512-bit already. A
    host without AVX-512 still gets its widest registers."""
    feats = llvm.get_host_cpu_features().flatten()
    return ",".join(f for f in (feats, "+prefer-no-gather", "+prefer-no-scatter",
                                "-prefer-256-bit") if f)


def _target_machine() -> llvm.TargetMachine:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=_features(),
                                        opt=3, codemodel="jitdefault", jit=True)


_OPTIONS_LOCK = threading.Lock()  # LLVM's options are per process, not per JIT


@contextmanager
def without_lsr(keep_cmov: bool = False) -> Iterator[None]:
    """Code generation without Loop Strength Reduction.

    LSR was a third to a half of code generation and, on our loops, buys
    nothing measurable: with it off, W1-W5, W8 and about 35 other workloads
    (reductions of every kind; strided, reversed, short-row, int, cast and
    pow loops; in and out of cache) ran from 15% faster to 7% slower, most
    within 3%, and compiles took 5-33% less. What LSR would fix, addresses
    recomputed from a loop counter, the generator avoids by carrying them
    (loops._streamed_rows's block offset).

    LLVM only has the switch process-wide (`-disable-lsr`), so it is set
    for the duration of our code generation, under a lock, and set back to
    LLVM's default afterwards. Another llvmlite user (numba) generating code
    in another thread at that moment would also skip LSR: its code stays
    correct, and may be slower. docs/performance.md has the measurements.

    `keep_cmov` also turns off x86's cmov converter for this code
    generation. It rewrites a cmov whose operand is loaded in a loop as a
    branch, betting that the branch predicts well; in a branchless binary
    search (search.py) that branch is a coin flip: 10M int64 keys into
    100K values took 676 ms with it and 69 without (float keys, whose
    selects it leaves alone, 92). Only on x86-64, where the option exists.
    """
    cmov = keep_cmov and llvm.get_process_triple().startswith("x86_64")
    with _OPTIONS_LOCK:
        llvm.set_option("lazyrt", "-disable-lsr=true")
        if cmov:
            llvm.set_option("lazyrt", "-x86-cmov-converter=false")
        try:
            yield
        finally:
            llvm.set_option("lazyrt", "-disable-lsr=false")
            if cmov:
                llvm.set_option("lazyrt", "-x86-cmov-converter=true")


class JIT:
    """One MCJIT engine; thread-safe compile; in-memory cache keyed by Kernel."""

    def __init__(self, cache_dir: str | os.PathLike | None = None) -> None:
        """`cache_dir` overrides LAZY_CACHE_DIR for the on-disk object cache."""
        self._lock = threading.RLock()
        self.tm = _target_machine()
        self.triple = self.tm.triple
        self.data_layout = str(self.tm.target_data)
        salt = "|".join([llvmlite.__version__, str(llvm.llvm_version_info), self.triple,
                         llvm.get_host_cpu_name(), _features()])
        self.disk = DiskCache(cache_dir, salt)
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        self._cache: dict[str, Compiled] = {}  # structural key -> compiled
        self._functions: dict[str, int] = {}   # compile_function's key -> address
        self._by_id: dict[int, tuple[weakref.ref, Compiled]] = {}  # same object: no key
        self._newness = NewnessTracker()

    def ir(self, kernel: Kernel) -> str:
        """The generated LLVM IR for `kernel` (what `lazy.explain` shows)."""
        hit = self.lookup(kernel)
        if hit is not None and hit.ir:
            return hit.ir
        text = str(generate(kernel, self.triple, self.data_layout))
        if hit is not None:
            hit.ir = text
        return text

    def optimize(self, text: str) -> llvm.ModuleRef:
        """Parse and run the new pass manager's -O2 pipeline, with loop and SLP
        vectorization, interleaving and unrolling on.

        Not -O3: its extra passes (non-trivial loop unswitching above all,
        which copied every reduction's loop nest once per loop-invariant
        branch on ctl.mode/ctl.tile) doubled the optimizer's time on
        reductions and made no measured difference to run time. Which loops
        LLVM may vectorize or unroll is said per loop (codegen.LOOP_HINTS).
        """
        mod = llvm.parse_assembly(text)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=2)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pto.loop_interleaving = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)
        return mod

    def optimized_ir(self, kernel: Kernel) -> str:
        """The IR after optimization (vectorized loops visible): for explain/debugging."""
        with self._lock:
            return str(self.optimize(self.ir(kernel)))

    def assembly(self, kernel: Kernel) -> str:
        """The machine code the kernel runs, as text (same code generation options)."""
        with self._lock:
            mod = self.optimize(self.ir(kernel))
            with without_lsr():
                return self.tm.emit_assembly(mod)

    def lookup(self, kernel: Kernel) -> Compiled | None:
        """A compiled kernel for this Kernel object, or an equal one."""
        ref = self._by_id.get(id(kernel))
        if ref is not None and ref[0]() is kernel:
            return ref[1]
        hit = self._cache.get(structural_key(kernel))
        if hit is not None:
            self._remember(kernel, hit)
        return hit

    def _remember(self, kernel: Kernel, c: Compiled) -> None:
        kid = id(kernel)
        self._by_id[kid] = (weakref.ref(kernel, lambda _: self._by_id.pop(kid, None)), c)

    def compile(self, kernel: Kernel) -> tuple[Compiled, CompileInfo]:
        hit = self.lookup(kernel)
        if hit is not None:
            return hit, CompileInfo("hit", 0.0)
        with self._lock:
            key = structural_key(kernel)
            hit = self._cache.get(key)
            if hit is not None:
                self._remember(kernel, hit)
                return hit, CompileInfo("hit", 0.0)
            c, source, ms = self._build(kernel, key, None)
            new = self._newness.describe(key)  # also learns disk-loaded kernels
            new = self._note(new if source == "miss" else "")
            self._cache[key] = c
            self._remember(kernel, c)
            return c, CompileInfo(source, ms, new)

    def variant(self, base: Compiled, variant: int | str) -> Compiled:
        """`base`'s kernel compiled as `variant` (codegen.generate: an input
        index for the in-place loop copy, keys.STREAM for streaming stores),
        once per structure (and on disk); kept on `base`. Compiled when a
        run first needs it, so its compile time counts in that run's time."""
        v = base.variants.get(variant)
        if v is not None:
            return v
        with self._lock:
            key = variant_key(structural_key(base.kernel), variant)
            v = self._cache.get(key)
            if v is None:
                v, _, _ = self._build(base.kernel, key, variant)
                self._cache[key] = v
            base.variants[variant] = v
            return v

    def _build(self, kernel: Kernel, key: str, variant: int | str | None
               ) -> tuple[Compiled, str, float]:
        """Compile (or load from disk) under the lock: (compiled, "miss"/"disk", ms)."""
        t0 = time.perf_counter()
        name = f"lazy_{key_digest(key)}"
        addr, source, text = self._add(
            self.disk.key(key), name,
            lambda: str(generate(kernel, self.triple, self.data_layout, variant)))
        ms = (time.perf_counter() - t0) * 1e3
        alias_inputs = () if variant is not None else \
            tuple(i for i in range(len(kernel.inputs)) if alias_candidate(kernel, i))
        c = Compiled(kernel, name, addr, text, ms,
                     any(o.pos is not None for o in kernel.outputs), alias_inputs)
        return c, source, ms

    def _note(self, new: str) -> str:
        """A miss's "what was new", then any disk-cache problem met since the last note."""
        return "; ".join(n for n in (new, self.disk.note()) if n)

    def _add(self, dkey: str, name: str, make_ir: Callable[[], str], keep_cmov: bool = False
             ) -> tuple[int, str, str]:
        """(address of `name`, "miss" or "disk", the IR made or "") once the
        object code, from the disk cache or from `make_ir()`, is in the engine."""
        obj = self.disk.load(dkey)
        source = "disk" if obj is not None else "miss"
        text = ""
        if obj is None:
            text = make_ir()
            mod = self.optimize(text)
            with without_lsr(keep_cmov):
                obj = self.tm.emit_object(mod)
            self.disk.store(dkey, obj)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        addr = self._engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"JIT produced no address for {name}")
        return addr, source, text

    def compile_function(self, key: str, name: str, make_ir: Callable[[str, str], str],
                         keep_cmov: bool = False) -> tuple[int, CompileInfo]:
        """(address, how it was found) of function `name` in the module that
        `make_ir(triple, data_layout)` gives: code that is not a Kernel (the
        scans of scan.py), optimized, cached in memory and on disk the same
        way, under `key`; `keep_cmov` as in `without_lsr`."""
        with self._lock:
            addr = self._functions.get(key)
            if addr is not None:
                return addr, CompileInfo("hit", 0.0)
            t0 = time.perf_counter()
            addr, source, _ = self._add(self.disk.key("function:" + key), name,
                                        lambda: make_ir(self.triple, self.data_layout),
                                        keep_cmov)
            self._functions[key] = addr
            new = self._note("new function" if source == "miss" else "")
            return addr, CompileInfo(source, (time.perf_counter() - t0) * 1e3, new)

    def __len__(self) -> int:
        return len(self._cache)
