"""The CUDA backend against NumPy at edge inputs, bit for bit where NumPy is exact.

Two kinds of check:

- The prelude's functions under CUDA's own math library. The host emulation
  (tests/cuda_emu) links the C library's log2/log10, which are exact at exact
  powers, so it cannot show where CUDA's differ. CUDA's libdevice computes
  them as log(x) times 1/ln b (a double-double constant for float64, a float
  for float32): `__nv_log2`, `__nv_log10` and `__nv_log10f` in
  libdevice.10.bc (CUDA 13) are exactly the `cuda_*` formulas below, with
  q = log(x). Run on the host with those formulas in place of the C
  library's, the prelude must still give NumPy's exact answers.
- The whole lazy pipeline on device "cuda" under the emulation (the `cuda`
  fixture, tests/cuda_lazy_helpers.py), at the edge inputs where NumPy's result is
  a choice: signed zeros, NaN, inf, zero divisors, INT_MIN, out-of-range casts.
"""
from __future__ import annotations

import numpy as np

import lazy
from cuda_backend.prelude import PRELUDE
from cuda_emu import emulator
from cuda_lazy_helpers import on_cuda

# -- the prelude under CUDA's log2/log10 -------------------------------------------------------
_CUDA_LOGS = r"""
/* libdevice (CUDA 13): __nv_log2, __nv_log10 = log(x) * 1/ln b in double-double;
   __nv_log10f = logf(x) * (float)(1/ln 10). */
static double cuda_log2(double x) {
  const double q = log(x);
  return fma(q, __longlong_as_double(0x3FF71547652B82FELL),
             q * __longlong_as_double(0x3C7777D0FFDA0D24LL));
}
static double cuda_log10(double x) {
  const double q = log(x);
  return fma(q, __longlong_as_double(0x3FDBCB7B1526E50ELL),
             q * __longlong_as_double(0x3C695355BAAAFAD3LL));
}
static float cuda_log10f(float x) { return 0.4342944920063018798828125f * logf(x); }
#define log2(x) cuda_log2(x)
#define log10(x) cuda_log10(x)
#define log10f(x) cuda_log10f(x)
"""
_KERNEL = r"""
extern "C" __global__ void parity_logs(const double* x, double* l2, double* l10, const float* xf,
                                       float* l2f, float* l10f, long long n) {
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n;
       t += (long long)blockDim.x * gridDim.x) {
    l2[t] = lz_log2(x[t]); l10[t] = lz_log10(x[t]);
    l2f[t] = lz_log2(xf[t]); l10f[t] = lz_log10(xf[t]);
  }
}
"""


def _under_cuda_logs(x: np.ndarray):
    """lz_log2/lz_log10 of x (float64) and of x as float32, with CUDA's formulas."""
    lib = emulator.build([_CUDA_LOGS + PRELUDE + _KERNEL])
    x = np.ascontiguousarray(x, np.float64)
    with np.errstate(over="ignore"):
        xf = x.astype(np.float32)
    outs = [np.empty_like(x), np.empty_like(x), np.empty_like(xf), np.empty_like(xf)]
    emulator.launch_raw(lib, "parity_logs", 2, 64, [x, outs[0], outs[1], xf, outs[2], outs[3],
                                                   np.int64(x.size)])
    return outs


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (same-signed finite values)."""
    it = np.int64 if a.dtype == np.float64 else np.int32
    return np.abs(a.view(it).astype(np.int64) - b.view(it).astype(np.int64))


def test_cuda_formulas_are_the_ones_that_miss():
    """The model is faithful to what it claims: these are CUDA's known misses."""
    lib = emulator.build([_CUDA_LOGS + "\n" + r"""
extern "C" __global__ void raw_logs(const double* x, double* o, long long n) {
  if (threadIdx.x != 0) return;
  o[0] = log2(x[0]); o[1] = log10(x[1]); o[2] = (double)log10f((float)x[2]);
}
"""])
    o = np.zeros(3)
    emulator.launch_raw(lib, "raw_logs", 1, 32, [np.array([8.0, 0.1, 1e9]), o, np.int64(3)])
    assert o[0] == 2.9999999999999996 and o[1] == -0.9999999999999999
    assert np.float32(o[2]) == np.float32(9.000001)


def test_log2_log10_exact_at_powers_under_cuda_math():
    """float64 log2(8.0) was 2.9999999999999996 on CUDA (NumPy 3.0), log10(0.1)
    -0.9999999999999999 (NumPy -1.0), log10(1e-4) -3.9999999999999996; float32
    log10(1e9) 9.000001 (NumPy's C library: 9.0): floor() of them was one too small."""
    k2 = np.arange(-1074, 1024)
    k10 = np.arange(-22, 23)
    x = np.concatenate([np.ldexp(1.0, k2), [float(f"1e{k}") for k in k10]])
    l2, l10, l2f, l10f = _under_cuda_logs(x)
    n2 = k2.size
    np.testing.assert_array_equal(l2[:n2], k2.astype(np.float64))
    np.testing.assert_array_equal(l10[n2:], k10.astype(np.float64))
    f32_pow2 = (k2 >= -149) & (k2 <= 127)
    np.testing.assert_array_equal(l2f[:n2][f32_pow2], k2[f32_pow2].astype(np.float32))
    kf = np.arange(-38, 39)  # every float32 power of ten: float32(1e-38) .. float32(1e38)
    _, _, _, l10f = _under_cuda_logs(np.array([float(np.float32(f"1e{k}")) for k in kf]))
    np.testing.assert_array_equal(l10f, kf.astype(np.float32))


def test_log2_log10_elsewhere_and_special_values_under_cuda_math():
    """Away from the powers the prelude stays within 1 ulp of NumPy's float64 results
    (CUDA's own accuracy; float32: of them rounded once, which NumPy's float32 loops
    miss by up to 2 ulp on x86), and 0, negatives, inf, NaN and subnormals give
    NumPy's values."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(0, 50, 3000), 10.0 ** rng.uniform(-300, 300, 3000),
                        np.nextafter(np.array([1e3, 1e-3, 8.0, 0.125, 1e22]), np.inf),
                        np.nextafter(np.array([1e3, 1e-3, 8.0, 0.125, 1e22]), 0),
                        [1e23, 1e-23, 1e300, 3.0, 5e-324, 1e-310]])
    l2, l10, l2f, l10f = _under_cuda_logs(x)
    with np.errstate(over="ignore"):
        xf = x.astype(np.float32)
    ok = (xf > 0) & np.isfinite(xf)
    assert _ulps(l2, np.log2(x)).max() <= 1
    assert _ulps(l10, np.log10(x)).max() <= 1
    x32 = xf[ok].astype(np.float64)
    assert _ulps(l2f[ok], np.log2(x32).astype(np.float32)).max() <= 1
    assert _ulps(l10f[ok], np.log10(x32).astype(np.float32)).max() <= 1
    assert _ulps(l10f[ok], np.log10(xf[ok])).max() <= 2
    special = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan])
    l2, l10, l2f, l10f = _under_cuda_logs(special)
    with np.errstate(all="ignore"):
        for got, ref, dt in [(l2, np.log2, np.float64), (l10, np.log10, np.float64),
                             (l2f, np.log2, np.float32), (l10f, np.log10, np.float32)]:
            np.testing.assert_array_equal(got, ref(special.astype(dt)))


def test_log2_log10_exact_at_powers_on_device(cuda):
    """The same edge end to end: lazy.numpy.log2/log10 on device "cuda"."""
    import lazy.numpy as lnp
    k10 = np.arange(-22, 23)
    k2, k10 = np.arange(-1074, 1024, 7), np.arange(-22, 23)
    k2f, k10f = np.arange(-149, 128, 3), np.arange(-38, 39)
    t2, t10 = on_cuda(np.ldexp(1.0, k2)), on_cuda(np.array([float(f"1e{k}") for k in k10]))
    t2f = on_cuda(np.ldexp(np.float32(1), k2f).astype(np.float32))
    t10f = on_cuda(np.array([np.float32(f"1e{k}") for k in k10f], np.float32))
    outs = [lnp.log2(t2), lnp.log10(t10), lnp.log2(t2f), lnp.log10(t10f)]
    lazy.sync(*outs)
    for t, k, dt in zip(outs, [k2, k10, k2f, k10f], [np.float64] * 2 + [np.float32] * 2):
        np.testing.assert_array_equal(t.numpy(), k.astype(dt))  # NumPy's float64 too
