"""Helpers for the CPU backend tests: inputs, running a kernel on both the
backend and the reference interpreter, and comparing them."""

from __future__ import annotations

import math

import numpy as np

from cpu_backend import CPUBackend
from scheduler import interpret
from scheduler.dtypes import DType
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Output, Reduce, Reduced
from scheduler.ops import REDUCTIONS
from scheduler.view import View

BE = CPUBackend()
BE_TILED = CPUBackend(loop_order="tiled")


def jit_address(mod, name: str) -> tuple[int, object]:
    """(address, engine) of `name` in the llvmlite IR module `mod`, compiled
    for this machine: hand-written test kernels with the kernels' C signature.
    Keep the engine alive while the address is used."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(jit=True)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), tm)
    engine.finalize_object()
    return engine.get_function_address(name), engine


def values(rng: np.random.Generator, d: DType, n: int, special: bool = True) -> np.ndarray:
    """Quarter-integers (sums are exact in any order), small ints, a few extremes."""
    if d.is_bool:
        return rng.random(n) < 0.5
    if d.is_int:
        x = rng.integers(-20, 21, n).astype(d.np)
        if special and n:
            info = np.iinfo(d.np)
            x[rng.random(n) < 0.05] = info.min
            x[rng.random(n) < 0.05] = info.max
        return x
    x = (rng.integers(-32, 33, n) / 4).astype(d.np)
    if special and n:
        for v in (np.nan, np.inf, -np.inf, -0.0):
            x[rng.random(n) < 0.03] = v
    return x


def run_both(k: Kernel, launch: Launch, inputs, out_sizes, backend: CPUBackend = BE):
    """(ours, reference) output buffers, both pre-filled with the same junk."""
    ours = [np.full(n, 7, o.dtype.np) for n, o in zip(out_sizes, k.outputs)]
    ref = [x.copy() for x in ours]
    ok, why = backend.supports(k)
    assert ok, why
    c, _ = backend.compile(k)
    backend.run(c, k, launch, inputs, ours)
    interpret.run(k, launch, inputs, ref)
    return ours, ref


def assert_same(ours, ref, exact: bool = True) -> None:
    for a, b in zip(ours, ref):
        if a.dtype.kind == "f" and not exact:
            scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(b), 0, b)), initial=0)))
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


def contiguous_kernel(expr_fn, in_dtypes, out_dtype, ndim=1):
    loads = [Load(i, d) for i, d in enumerate(in_dtypes)]
    e = expr_fn(*loads)
    return Kernel(ndim, 0, tuple(Input(d, inner=1) for d in in_dtypes), (), None,
                  (Output(out_dtype, e, inner=1),))


def run_flat(k: Kernel, arrays, backend: CPUBackend = BE):
    n = len(arrays[0])
    launch = Launch((n,), [[View.contiguous((n,))] for _ in arrays], [View.contiguous((n,))])
    return run_both(k, launch, list(arrays), [n], backend)


def reduce_kernel(op, d, n_reduce=1, ndim=2, epilogue=None, inner=1):
    r = REDUCTIONS[op]
    red = Reduce(op, Load(0, d), r.acc_dtype(d), r.result_dtype(d))
    e = epilogue(Reduced(red.dtype)) if epilogue else Reduced(red.dtype)
    return Kernel(ndim, n_reduce, (Input(d, inner=inner),), (), red, (Output(e.dtype, e, 1),))


def run_reduce(k, shape, data, backend=BE):
    n_out = len(shape) - k.n_reduce
    out_shape = shape[:n_out]
    launch = Launch(shape, [[View.contiguous(shape)]], [View.contiguous(out_shape)])
    return run_both(k, launch, [data], [math.prod(out_shape)], backend)
