"""LLVM-JIT CPU backend: kernel IR -> LLVM IR (llvmlite) -> MCJIT, thread-parallel."""
from .backend import CPUBackend

__all__ = ["CPUBackend"]
