"""lazyrt: lazy tensors fused into LLVM (CPU) kernels at sync points.

    import lazy
    x = lazy.randn(1_000_000, 2)
    y = x[:, 0] ** 2 + x[:, 1] ** 3   # nothing runs yet
    lazy.sync()                        # one fused kernel runs here
    print(lazy.log.table())            # what ran, where, why
"""
from scheduler.config import config
from scheduler.dtypes import DType, bool_, float32, float64, int32, int64
from scheduler.realize import KernelError
from scheduler.backends import FallbackError
from scheduler.view import View

from .creation import (arange, asarray, empty, eye, full, full_like, linspace, manual_seed,
                       ones, ones_like, rand, randn, tensor, zeros, zeros_like)
from .explain import Plan, explain
from .functions import *  # noqa: F401,F403  (exp, where, sum, reshape, shares_memory, ...)
from .functions import shares_memory
from .interop import from_dlpack
from .logview import log  # after functions: lazy.log is the log, callable as ln(x)
from .runtime import ImplicitSyncError, sync
from .tensor import Tensor
from .elementwise import broadcast_shapes

bool = bool_  # noqa: A001  (lazy.bool, as torch.bool)

__version__ = "0.1.0"
