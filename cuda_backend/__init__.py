"""CUDA backend: kernel IR -> CUDA C -> NVRTC cubin -> CuPy module launch; cuBLAS for matmul.

`CUDABackend().source(kernel)` needs neither CuPy nor a GPU; running needs
both (`CUDABackend().available()` says why not). See docs/cuda.md.
"""
from .backend import CUDABackend, probe
from .codegen import CudaSource, generate
from .extern import cublas_reason, device_view, extern_backend, matmul, run_extern
from .memory import is_device_array, synchronize, to_device, to_host

__all__ = ["CUDABackend", "CudaSource", "generate", "matmul", "run_extern", "extern_backend",
           "device_view", "cublas_reason", "probe", "to_device", "to_host", "is_device_array",
           "synchronize"]
