"""A module next to which_numpy.py: its `import numpy` is redirected too."""
import numpy as np


def double(values):
    return np.asarray(values) * 2
