"""Checks shared by the CUDA tests: NVRTC over many sources, output comparison."""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cuda_backend.codegen import CudaSource

from .corpus import Case

def nvrtc_check(sources: list[CudaSource], arch: str, threads: int = 2) -> int:
    """Compile every source for `arch`; raise the first NVRTCError (source + log)."""
    from cuda_backend.nvrtc import NVRTCError, compile_ptx
    unique = {hashlib.sha1(s.source.encode()).hexdigest(): s for s in sources}

    def one(s: CudaSource) -> NVRTCError | None:
        try:
            ptx = compile_ptx(s.source, arch, name=f"{s.name}.cu")
        except NVRTCError as e:
            return e
        assert f".entry {s.name}" in ptx, f"{s.name} missing from the PTX"
        return None

    with ThreadPoolExecutor(threads) as pool:
        errors = [e for e in pool.map(one, unique.values()) if e is not None]
    if errors:
        raise AssertionError(f"{len(errors)} of {len(unique)} sources failed NVRTC for "
                             f"{arch}; the first:\n{errors[0]}")
    return len(unique)


def assert_outputs(case: Case, outs: list[np.ndarray], what: str = "",
                   f32_tol: float = 2e-6) -> None:
    """Exact for ints and bools (and floats of exact ops); a tolerance for transcendentals
    (glibc's and NumPy's float32 functions differ by an ulp or so; CUDA's by a few)."""
    for n, (got, want) in enumerate(zip(outs, case.expected)):
        msg = f"{case.name} {what} output {n}\n{case.kernel.describe()}"
        assert got.dtype == want.dtype, msg
        if case.inexact and got.dtype.kind == "f":
            tol = f32_tol if got.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=msg)
        else:
            np.testing.assert_array_equal(got, want, err_msg=msg)
