"""Which NumPy each module sees under `python -m lazy`: the script and its own
module get lazy.numpy, an installed library keeps real NumPy."""
import hypothesis.extra.numpy as installed  # site-packages; it imports numpy itself
import numpy
import numpy as np
import numpy.linalg  # NumPy's own submodule: `numpy` must stay lazy.numpy

import local_helper

print("script", numpy.__name__, np.__name__, type(numpy.zeros(2)).__name__)
print("local module", local_helper.np.__name__, type(local_helper.double([1.0])).__name__)
print("installed library", installed.np.__name__)
