"""Shuffling a 2-D array in place, seeded, three ways: NumPy swaps the rows of
anything but an ndarray as a sequence, which would duplicate a tensor's rows."""
import numpy as np

X = np.arange(12.0).reshape(6, 2)
np.random.seed(0)
np.random.shuffle(X)
print(X)
rng = np.random.default_rng(1)
rng.shuffle(X)
rng.shuffle(X, axis=1)
print(X, X.sum(axis=0))
v = np.arange(5)
np.random.RandomState(2).shuffle(v[1:])
print(v)
