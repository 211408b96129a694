"""Real ndarrays (from np.random) inside a script run by `python -m lazy`: NumPy's own
methods import numpy._core modules with the script's globals."""
import numpy as np

r = np.random.default_rng(0).random(3)
print(r)
print(r.sum(), r.mean(), r.max(), r.std(), r.astype(np.float32).dtype, str(np.dtype("f4")))
labels = np.array([0, 2, 1, 2])
print(np.arange(labels.max() + 1), np.double(2.5), np.sort(np.array([[3, 1], [2, 0]]), axis=None))
