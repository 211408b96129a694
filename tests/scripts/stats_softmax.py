"""A small NumPy program: statistics, a softmax and a matmul, printed rounded.

tests/test_run_script.py runs it under plain NumPy and under `python -m lazy`
and expects the same output.
"""
import sys

import numpy as np
from numpy import linspace


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def rounded(a, digits=6):
    return np.round(a, digits).tolist()


x = linspace(-2.0, 3.0, 12).reshape(3, 4)
w = np.arange(8, dtype=np.float64).reshape(4, 2) / 10
print("mean", round(float(np.mean(x)), 6), "std", round(float(np.std(x)), 6))
print("min", float(x.min()), "max", float(np.max(x)))
print("column sums", rounded(x.sum(axis=0)))
p = softmax(x)
print("softmax", rounded(p))
print("rows sum to one", bool(np.all(np.abs(p.sum(axis=1) - 1) < 1e-9)))
y = x @ w
print("matmul", rounded(y, 4), "argmax", int(np.argmax(y)))
print("where", rounded(np.where(x > 0, x, 0.0).sum(axis=1)))
print("median", float(np.median(x)), "nanmedian", float(np.nanmedian(x)), "ptp", float(np.ptp(x)))
print("args", sys.argv[1:])
