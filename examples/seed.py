"""The seed example: build an expression lazily, sync once, read the log.

    python examples/seed.py

Nothing runs while `X` and `y` are built; `lazy.sync()` runs two LLVM
kernels: randn's Philox generator writes X (the program keeps it, and y
reads it through two column views, which would cost two Philox streams per
row in one kernel: docs/fusion.md), then the four user ops (x0*x0, x1*x1,
*x1, +) run fused in one kernel that writes y. The log then says
which kernel ran, on which backend and why, whether it was a compile-cache
hit, and how long compiling and running took. Printing a tensor syncs
implicitly; the log records that too, with its cause and file:line.
"""
import os
import sys
import time

import numpy as np

# Run from a checkout without installing; a normalized path (no "..") keeps
# the log's user file:line pointing at this script.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lazy  # noqa: E402

N = 10_000_000

lazy.manual_seed(0)
X = lazy.randn(N, 2)                       # float32, pending: generated inside the kernel
t0 = time.perf_counter()
y = X[:, 0] ** 2 + X[:, 1] ** 3            # nothing runs: y is pending
t_build = time.perf_counter() - t0
print(f"built y = X[:, 0]**2 + X[:, 1]**3 for X {tuple(X.shape)} {X.dtype} "
      f"in {t_build * 1e3:.2f} ms; kernels run by building it: {lazy.log.counters.kernels}")

t0 = time.perf_counter()
lazy.sync()                                # Philox writes X; one fused kernel writes y
t_sync = time.perf_counter() - t0
print(f"lazy.sync() took {t_sync * 1e3:.1f} ms (first call: includes the JIT compile)")

times = []
for _ in range(5):                         # same structure: compile cache hits
    t0 = time.perf_counter()
    y2 = X[:, 0] ** 2 + X[:, 1] ** 3
    lazy.sync(y2)
    times.append((time.perf_counter() - t0) * 1e3)
    del y2                                 # frees the 40 MB result for the next call
print("the same expression again (cache hits), ms:", " ".join(f"{t:.1f}" for t in times))

Xn = X.numpy()
ref = Xn[:, 0] ** 2 + Xn[:, 1] ** 3
ok = np.allclose(y.numpy(), ref, rtol=1e-4, atol=1e-4)
print(f"matches NumPy: {ok}")
print("y[:5] =", y[:5])                    # str of a realized view: nothing pending, no sync
print((y * 2)[:5])                         # implicit sync via str (print), logged with its cause

print()
print("backend-selection log:")
print(lazy.log.table())

print()
print("plan for a small pending expression (lazy.explain runs nothing):")
z = lazy.where(X[:4, 0] > 0, lazy.exp(-X[:4, 1]), X[:4, 0] * 0.5)
print(lazy.explain(z))
sys.exit(0 if ok else 1)
