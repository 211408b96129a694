"""The CPU backend's math: vmath.py (exp, tanh, sigmoid, log, sin, cos, tan),
sincos.py's vectorized sin/cos/tan, invtrig.py and integer floor division,
each against NumPy (or the float64 result) over the whole range, special
values included, counted in ulps."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.dtypes import float32, float64, int32, int64

from cpu_backend_helpers import BE, contiguous_kernel, run_flat
from ir_strategies import binop, unop  # noqa: E402

# NumPy warns about NaN/overflow casts inside the reference; that is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["exp", "expm1", "tanh", "sigmoid", "log"])
def test_vector_math_accuracy(name, d):
    """vmath.py's exp/tanh: within a few ulp of NumPy over the whole range,
    with NaN, +-inf, -0.0, overflow and subnormal results right."""
    lim = 110 if d == float32 else 760
    x = np.concatenate([np.linspace(-lim, lim, 200_001), np.linspace(-1, 1, 20_001),
                        np.geomspace(1e-30, 1, 1000), -np.geomspace(1e-30, 1, 1000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283935546875, 88.7228470,
                         -103.97208, -87.5, -100.0, 709.78, 709.79, -745.13, -740.0]]).astype(d.np)
    if name == "log":
        info = np.finfo(d.np)
        x = np.concatenate([np.abs(x), np.geomspace(info.smallest_subnormal, info.max / 2, 100_000),
                            np.linspace(0.5, 2, 100_001), [-1.0, info.smallest_subnormal,
                                                           info.tiny, info.max]]).astype(d.np)
    k = contiguous_kernel(lambda a: unop(name, a), [d], d)
    (ours,), (ref,) = run_flat(k, [x])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.signbit(ours[ours == 0]), np.signbit(ref[ours == 0]))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    ulps = np.abs(ours[finite].astype(np.float64) - ref[finite]) / np.spacing(np.abs(ref[finite]))
    assert ulps.max() <= 6  # NumPy's own float32 log is up to 3.8 ulp off; ours < 2


def test_float64_log10_accuracy():
    """vmath.log10_64 (double-double steps, vectorized): within 1 ulp of NumPy
    over random bit patterns, the whole range and near 1, where log(x) times
    1/ln 10 was 3-5 ulp off; special values are NumPy's."""
    rng = np.random.default_rng(5)
    pattern = rng.integers(0, 0x7FF0000000000000, 300_000, dtype=np.uint64).view(np.float64)
    x = np.concatenate([pattern, np.geomspace(5e-324, 1.7e308, 100_000),
                        np.linspace(0.5, 2, 200_001), 1 + rng.uniform(-1e-6, 1e-6, 20_000),
                        [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1.0]])
    k = contiguous_kernel(lambda a: unop("log10", a), [float64], float64)
    (ours,), _ = run_flat(k, [x])
    ref = np.log10(x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(ours[~np.isfinite(ref)], ref[~np.isfinite(ref)])
    fin = np.isfinite(ref) & (ref != 0)
    assert np.all(ours[ref == 0] == 0)
    ulps = np.abs(ours[fin] - ref[fin]) / np.spacing(np.abs(ref[fin]))
    assert ulps.max() <= 1


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
def test_expm1_accuracy(d):
    """vmath.expm1: float32 (reduced by ln 2, a short series in float64)
    within 1 ulp of the float64 result, float64 (a Taylor series near 0,
    exp(x) - 1 beyond) within 3 ulp of NumPy's, over random bit patterns,
    tiny arguments (no cancellation: expm1(1e-20) is 1e-20) and the switch
    points; -0.0, infinities, NaN and overflow right."""
    rng = np.random.default_rng(21)
    bits = np.uint32 if d == float32 else np.uint64
    pattern = rng.integers(0, np.iinfo(bits).max, 300_000, dtype=np.uint64).astype(bits).view(d.np)
    x = np.concatenate([pattern, np.linspace(-4, 4, 200_001), rng.uniform(-1e-4, 1e-4, 20_000),
                        np.geomspace(1e-300, 1e-3, 2000), -np.geomspace(1e-300, 1e-3, 2000),
                        np.nextafter(np.array([-0.5, 2.0]), 0), [-0.5, 2.0],
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.7, 88.8, -120.0, 709.7, 709.8,
                         -800.0]]).astype(d.np)
    k = contiguous_kernel(lambda a: unop("expm1", a), [d], d)
    (ours,), _ = run_flat(k, [x])
    ref = np.expm1(x.astype(np.float64))
    want = ref.astype(d.np)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(want))
    np.testing.assert_array_equal(ours[np.isinf(want)], want[np.isinf(want)])
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(want[zero]))
    fin = np.isfinite(want) & ~zero
    ulps = np.abs(ours[fin].astype(np.float64) - ref[fin]) / np.spacing(np.abs(want[fin]))
    assert ulps.max() <= (1 if d == float32 else 3)


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_accuracy(name, d):
    """vmath.py's sin/cos: within 1 ulp of NumPy for random bit patterns (every
    exponent, so the Payne-Hanek reduction up to 1e308 / 3e38), dense small
    arguments and multiples of pi/2; NaN for inf/NaN, -0.0 kept by sin."""
    rng = np.random.default_rng(16)
    ibits = np.uint32 if d == float32 else np.uint64
    pattern = rng.integers(0, np.iinfo(ibits).max, 100_000, dtype=np.uint64).astype(ibits).view(d.np)
    halfpi = np.arange(-2000, 2001) * (np.pi / 2)
    x = np.concatenate([pattern, np.linspace(-1e4, 1e4, 100_001), halfpi, np.nextafter(halfpi, 0),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e22, np.pi / 4,
                         np.nextafter(np.pi / 4, 1)]]).astype(d.np)
    k = contiguous_kernel(lambda a: unop(name, a), [d], d)
    assert "@llvm.sin" not in BE.source(k) and "@llvm.cos" not in BE.source(k)
    vector = f"@lazy_{name}{'f' if d == float32 else 'd'}_v"  # sincos.py's, called
    assert vector in BE.jit.optimized_ir(k).split("define", 1)[1]
    (ours,), (ref,) = run_flat(k, [x])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    zero = ref == 0
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))
    fin = np.isfinite(ref)
    ulps = np.abs(ours[fin].astype(np.float64) - ref[fin]) / np.spacing(np.abs(ref[fin]))
    assert ulps.max() <= 1
    if d == float64:  # glibc is 8 ulp off here (mpmath, 2000 bits: -4.687165924254628e-19)
        hard = np.array([5.319372648326541e+255])
        if name == "cos":
            (got,), _ = run_flat(k, [hard])
            assert got[0] == -4.687165924254628e-19


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_sin_cos_short_and_exact_paths(name):
    """sincos.py: a float32 sin/cos loop calls our vector versions; a vector
    whose lanes are all below FAST_LIMIT takes the short reduction, one with a
    large or NaN lane takes the exact path on every lane, and both round
    correctly (within half an ulp of float64's result, rounded)."""
    from cpu_backend import sincos
    k = contiguous_kernel(lambda a: unop(name, a), [float32], float32)
    assert f"@lazy_{name}f_v16" in BE.jit.optimized_ir(k).split("define", 1)[1]
    near = (np.arange(1, 90_000) * (np.pi / 2)).astype(np.float32)  # up past FAST_LIMIT
    lim = np.float32(sincos.FAST_LIMIT["float32"])
    edge = np.array([lim, -lim, np.nextafter(lim, 0), np.nextafter(lim, np.inf), -0.0, 1e-40],
                    np.float32)
    mixed = near.copy()
    mixed[::37], mixed[5::41], mixed[9::43] = 3e30, np.nan, -np.inf  # a slow lane per vector
    for x in (np.concatenate([near, np.nextafter(near, np.inf), np.nextafter(near, 0), edge]),
              mixed):
        (ours,), _ = run_flat(k, [x])
        ref = getattr(np, name)(x.astype(np.float64))
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
        fin = np.isfinite(ref)
        ulp = np.spacing(np.abs(ref[fin]).astype(np.float32)).astype(np.float64)
        assert (np.abs(ours[fin] - ref[fin]) / ulp).max() <= 0.5 + 1e-6
        zero = fin & (ref == 0)
        np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["asin", "acos", "atan"])
def test_inverse_trig_accuracy(name, d):
    """invtrig.py (vectorizable, no libm call): within 1 ulp (float32) or 2 ulp
    (float64) of the float64 reference, over random bit patterns, a dense range
    and each branch's edges; NaN outside the domain, -0.0 kept by asin/atan."""
    rng = np.random.default_rng(21)
    ibits = np.uint32 if d == float32 else np.uint64
    pattern = rng.integers(0, np.iinfo(ibits).max, 100_000, dtype=np.uint64).astype(ibits).view(d.np)
    edges = np.array([0.0, -0.0, 0.5, 0.625, 0.66, 2.414213562373095, 1.0, -1.0, np.inf, -np.inf,
                      np.nan, 1e-300, 5e-324, 1e300])
    x = np.concatenate([pattern, np.linspace(-1.2, 1.2, 100_001), np.linspace(-50, 50, 10_001),
                        edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    x = x.astype(d.np)
    k = contiguous_kernel(lambda a: unop(name, a), [d], d)
    assert f"@{name}" not in BE.source(k)  # no libm call
    (ours,), _ = run_flat(k, [x])
    with np.errstate(invalid="ignore"):
        ref = getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}[name])(
            x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    fin = np.isfinite(ref)
    ulp = np.spacing(np.abs(ref[fin]).astype(d.np)).astype(np.float64)
    assert (np.abs(ours[fin].astype(np.float64) - ref[fin]) / ulp).max() <= (1 if d == float32 else 2)
    zero = fin & (ref == 0)
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
def test_atan2_accuracy_and_special_cases(d):
    """C's atan2 for every pair of signed zeros, infinities, NaN and finite
    values (bit for bit, signs of zero included), and within 2 ulp elsewhere."""
    special = np.array([0.0, -0.0, 1.0, -1.0, 3.5, -3.5, np.inf, -np.inf, np.nan], d.np)
    ys, xs = (a.ravel() for a in np.meshgrid(special, special))
    rng = np.random.default_rng(22)
    ibits = np.uint32 if d == float32 else np.uint64
    ry, rx = (rng.integers(0, np.iinfo(ibits).max, 100_000, dtype=np.uint64).astype(ibits)
              .view(d.np) for _ in range(2))
    dense = rng.standard_normal((2, 100_000)).astype(d.np)
    y = np.concatenate([ys, ry, dense[0]])
    x = np.concatenate([xs, rx, dense[1]])
    k = contiguous_kernel(lambda a, b: binop("atan2", a, b), [d, d], d)
    assert "@atan2" not in BE.source(k)
    (ours,), _ = run_flat(k, [y, x])
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    n = len(ys)
    np.testing.assert_array_equal(ours[:n], ref[:n].astype(d.np))  # specials: exact
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    fin = np.isfinite(ref) & (ref != 0)
    ulp = np.spacing(np.abs(ref[fin]).astype(d.np)).astype(np.float64)
    assert (np.abs(ours[fin].astype(np.float64) - ref[fin]) / ulp).max() <= 2


def test_float64_tan_accuracy():
    """vmath's tan: sin/cos kernels of one exact reduction, divided: within 2
    ulp of NumPy's (libm) over random bit patterns, dense small arguments and
    multiples of pi/2; -0.0 kept, NaN for inf/NaN."""
    rng = np.random.default_rng(17)
    pattern = rng.integers(0, 2**64 - 1, 100_000, dtype=np.uint64).view(np.float64)
    halfpi = np.arange(-2000, 2001) * (np.pi / 2)
    x = np.concatenate([pattern, np.linspace(-1e4, 1e4, 100_001), halfpi,
                        np.nextafter(halfpi, 0), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e22]])
    k = contiguous_kernel(lambda a: unop("tan", a), [float64], float64)
    (ours,), _ = run_flat(k, [x])
    ref = np.tan(x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    fin = np.isfinite(ref)
    assert (np.abs(ours[fin] - ref[fin]) / np.spacing(np.abs(ref[fin]))).max() <= 2
    zero = ref == 0
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))


@pytest.mark.parametrize("d", [int32, int64], ids=lambda d: d.name)
def test_integer_floor_division_is_exact(d):
    """Integer // and % without the division instruction (a float64 estimate,
    refined from the exact remainder): bit for bit NumPy's, for every pair of
    extremes (INT_MIN, INT_MAX, +-1, 0, around 2**53) and random operands of
    the whole range, with small and with full-range divisors."""
    info = np.iinfo(d.np)
    special = np.array(sorted({0, 1, -1, 2, -2, 3, -7, info.max, info.min, info.max - 1,
                               info.min + 1, 2**20, -(2**20)} |
                              ({2**53 + 1, -(2**53) - 1, 2**62, -(2**62)} if d == int64 else
                               set())), d.np)
    ys, xs = (a.ravel() for a in np.meshgrid(special, special))
    rng = np.random.default_rng(23)
    rx = rng.integers(info.min, info.max, 100_000, dtype=d.np, endpoint=True)
    ry = rng.integers(info.min, info.max, 100_000, dtype=d.np, endpoint=True)
    small = rng.integers(-1000, 1000, 100_000).astype(d.np)
    x, y = np.concatenate([xs, rx, rx, rx >> 12]), np.concatenate([ys, ry, small, small])
    for op, ref in (("floordiv", np.floor_divide), ("mod", np.remainder)):
        k = contiguous_kernel(lambda a, b: binop(op, a, b), [d, d], d)
        (ours,), _ = run_flat(k, [x, y])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(ours, ref(x, y))


def _pow_inputs(d, rng):
    """(x, y) pairs for pow: random bit patterns of both, both signs of x with
    integer, moderate and huge exponents (results near the overflow and
    underflow edges), x near 1 with large exponents and x near sqrt(2) and
    sqrt(1/2) with y ln x near +-700 (where ln x's error is multiplied
    most), and integer powers whose results are exact (last)."""
    ibits = np.uint32 if d == float32 else np.uint64
    n = 60_000

    def pattern():
        return rng.integers(0, np.iinfo(ibits).max, n, dtype=np.uint64).astype(ibits).view(d.np)
    xs = [pattern(), rng.uniform(0, 10, n), -rng.uniform(0, 10, n), rng.uniform(0.9, 1.1, n),
          np.geomspace(np.finfo(d.np).smallest_subnormal, np.finfo(d.np).max, n)]
    ys = [pattern(), rng.uniform(-40, 40, n), rng.integers(-60, 60, n), rng.uniform(-1000, 1000, n)]
    x = [np.asarray(a, d.np) for a in xs for _ in ys]
    y = [np.asarray(b, d.np) for _ in xs for b in ys]
    lim = 85.0 if d == float32 else 700.0  # |y ln x| up to the edge of the range
    for centre in (np.sqrt(2.0), np.sqrt(0.5)):
        near = (centre * (1 + rng.uniform(-1e-4, 1e-4, n))).astype(d.np)
        x.append(near)
        y.append((rng.uniform(-lim, lim, n) / np.log(near.astype(np.float64))).astype(d.np))
    eps = np.finfo(d.np).eps
    x.append((1 + rng.integers(-1000, 1000, n) * eps).astype(d.np))
    y.append(rng.uniform(-1e13, 1e13, n).astype(d.np))
    ints = np.meshgrid(np.arange(1, 40), np.arange(0, 40))
    return (np.concatenate(x + [ints[0].ravel().astype(d.np)]),
            np.concatenate(y + [ints[1].ravel().astype(d.np)]))


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
def test_pow_accuracy(d):
    """vpow.py: float32 (computed in float64, rounded once) within 0.52 ulp of
    the exact result, float64 (double-double ln and exponent) within 0.9 ulp;
    exact where the result is representable (3.0**20); NaN, infinities and
    signed zeros where NumPy has them. The exact result is float64 pow for
    float32 and extended precision (longdouble, 64-bit mantissa on x86)
    for float64; where longdouble is no wider than float64, NumPy's float64
    result stands in with 2 ulp allowed."""
    rng = np.random.default_rng(24)
    x, y = _pow_inputs(d, rng)
    k = contiguous_kernel(lambda a, b: binop("pow", a, b), [d, d], d)
    assert "@llvm.pow" not in BE.source(k) and "@pow" not in BE.source(k)
    (ours,), _ = run_flat(k, [x, y])
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
        wide = np.float64 if d == float32 else np.longdouble
        extended = d == float32 or np.finfo(np.longdouble).nmant > 52
        exact = np.power(x.astype(wide), y.astype(wide)) if extended else ref
    want = exact.astype(d.np)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    inf = np.isinf(ref) | np.isinf(want)
    np.testing.assert_array_equal(ours[inf], want[inf])
    zero = want == 0
    np.testing.assert_array_equal(ours[zero], want[zero])
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))
    fin = np.isfinite(want) & ~zero
    spacing = np.spacing(np.abs(want[fin])).astype(exact.dtype)
    ulps = np.abs(ours[fin].astype(exact.dtype) - exact[fin]) / spacing
    assert float(ulps.max()) <= (0.52 if d == float32 else 0.9 if extended else 2.0)
    n = 39 * 40  # the integer powers: bit for bit where the result is representable
    small = np.abs(want[-n:]) < 2.0 ** np.finfo(d.np).nmant
    np.testing.assert_array_equal(ours[-n:][small], want[-n:][small])


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
def test_pow_special_cases(d):
    """C99's pow special cases as NumPy gives them (NaN where NumPy has NaN,
    signs of zero and infinity included): pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN,
    pow(-1, +-inf) = 1, odd integer powers of -0.0 and -inf keep the sign,
    a negative base with a non-integer exponent is NaN, overflow is inf."""
    odd = 2.0 ** (np.finfo(d.np).nmant + 1) - 1  # the largest odd integer the dtype has
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                        np.inf, -np.inf, np.nan, np.finfo(d.np).max, -np.finfo(d.np).max,
                        np.finfo(d.np).tiny, np.finfo(d.np).smallest_subnormal, odd, -odd,
                        odd + 1, 1e-3, -1e3], d.np)
    x, y = (a.ravel() for a in np.meshgrid(special, special))
    k = contiguous_kernel(lambda a, b: binop("pow", a, b), [d, d], d)
    (ours,), _ = run_flat(k, [x, y])
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    edge = np.isin(np.abs(x), [0.0, 1.0, np.inf]) | np.isnan(x) | \
        np.isin(np.abs(y), [0.0, np.inf]) | np.isnan(y) | (x < 0) & (np.trunc(y) != y)
    assert edge.sum() > len(x) // 2
    np.testing.assert_array_equal(ours[edge], ref[edge])  # NaN where NumPy has NaN
    np.testing.assert_array_equal(np.signbit(ours[edge & ~np.isnan(ref)]),
                                  np.signbit(ref[edge & ~np.isnan(ref)]))
    rest = ~edge  # ordinary values (2.0**0.5): signs, overflow and underflow as NumPy's
    np.testing.assert_array_equal(np.signbit(ours[rest]), np.signbit(ref[rest]))
    np.testing.assert_array_equal(np.isinf(ours[rest]), np.isinf(ref[rest]))
    np.testing.assert_array_equal(ours[rest] == 0, ref[rest] == 0)
    fin = rest & np.isfinite(ref) & (ref != 0)
    assert (np.abs(ours[fin] - ref[fin]) / np.spacing(np.abs(ref[fin]))).max() <= 1
