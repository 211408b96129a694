"""Device functions every generated kernel shares, with NumPy's semantics.

The text is plain CUDA C++ that needs no header, so NVRTC compiles it
as is, and the host emulation in tests/cuda_emu compiles it with g++
(after defining `__device__` and friends). It is guarded, so several
kernels concatenated into one translation unit (batch compiles in the
tests) include it once.

Why each choice, where NumPy leaves it to the platform (x86-64 NumPy is
the reference, as in cpu_backend/lowering.py):
- integer add/sub/mul/neg wrap: done in unsigned arithmetic, because signed
  overflow is undefined behaviour in C++ and an optimizer may exploit it;
- integer `//` and `%` by 0 give 0; `x // -1` is `-x` (wrapping) and
  `x % -1` is 0, so INT_MIN // -1 never traps;
- float `//` and `%` follow npy_divmod exactly (floor quotient, remainder
  with the divisor's sign, the signed-zero cases);
- float -> int casts of NaN or out-of-range values give INT_MIN (cvtt*);
- maximum/minimum propagate NaN (np.maximum), not fmax's NaN-dropping;
- bool is `bool` in registers and one byte (0/1) in memory.
Kernels are compiled with --fmad=false so `a*b+c` is rounded twice, as
NumPy computes it.

Random numbers (`philox_*`, behind `rand`/`randn`): Philox4x32-10 on
(counter lo, hi, 0, 0) with the seed's halves as key, word to float exactly
as the NumPy reference in scheduler/ops.py (and cpu_backend/philox.py), so
uniforms are the same bits on every backend; normals are Box-Muller in
double with the same exact reduction of cos(2 pi u2), so they differ only by
the last-ulp errors of log/sin/cos. The 32x32 high product is `__umulhi`
under NVRTC and a 64-bit product in the host emulation.
"""

PRELUDE = r"""
#ifndef LAZY_CUDA_PRELUDE
#define LAZY_CUDA_PRELUDE
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
#define LZ_D __device__ __forceinline__
#define LZ_FULL 0xffffffffu

/* q / n and q % n: 32-bit division when both fit (64-bit division is a long
   software sequence on GPUs; index arithmetic almost always fits) */
LZ_D u64 lz_udivmod(u64 q, u64 n, u64* rem) {
  if (((q | n) >> 32) == 0) {
    unsigned a = (unsigned)q, b = (unsigned)n;
    *rem = a % b;
    return a / b;
  }
  *rem = q % n;
  return q / n;
}

LZ_D double lz_f64_bits(i64 b) { return __longlong_as_double(b); }
LZ_D double lz_inf() { return __longlong_as_double(0x7ff0000000000000LL); }
LZ_D double lz_nan() { return __longlong_as_double(0x7ff8000000000000LL); }

/* wrapping integer arithmetic; bool add/mul are or/and (NumPy) */
LZ_D bool lz_add(bool x, bool y) { return x || y; }
LZ_D int lz_add(int x, int y) { return (int)((unsigned)x + (unsigned)y); }
LZ_D i64 lz_add(i64 x, i64 y) { return (i64)((u64)x + (u64)y); }
LZ_D float lz_add(float x, float y) { return x + y; }
LZ_D double lz_add(double x, double y) { return x + y; }
LZ_D int lz_sub(int x, int y) { return (int)((unsigned)x - (unsigned)y); }
LZ_D i64 lz_sub(i64 x, i64 y) { return (i64)((u64)x - (u64)y); }
LZ_D float lz_sub(float x, float y) { return x - y; }
LZ_D double lz_sub(double x, double y) { return x - y; }
LZ_D bool lz_mul(bool x, bool y) { return x && y; }
LZ_D int lz_mul(int x, int y) { return (int)((unsigned)x * (unsigned)y); }
LZ_D i64 lz_mul(i64 x, i64 y) { return (i64)((u64)x * (u64)y); }
LZ_D float lz_mul(float x, float y) { return x * y; }
LZ_D double lz_mul(double x, double y) { return x * y; }
LZ_D int lz_neg(int x) { return (int)(0u - (unsigned)x); }
LZ_D i64 lz_neg(i64 x) { return (i64)(0ull - (u64)x); }
LZ_D float lz_neg(float x) { return -x; }
LZ_D double lz_neg(double x) { return -x; }
LZ_D bool lz_abs(bool x) { return x; }
LZ_D int lz_abs(int x) { return x < 0 ? lz_neg(x) : x; }
LZ_D i64 lz_abs(i64 x) { return x < 0 ? lz_neg(x) : x; }
LZ_D float lz_abs(float x) { return fabsf(x); }
LZ_D double lz_abs(double x) { return fabs(x); }

/* transcendental functions: the float overloads call the f-suffixed ones */
LZ_D float lz_exp(float x) { return expf(x); }
LZ_D double lz_exp(double x) { return exp(x); }
LZ_D float lz_log(float x) { return logf(x); }
LZ_D double lz_log(double x) { return log(x); }
/* log2 and log10 are exact at exact powers, as NumPy's (the C library's):
   CUDA's log2/log10 are log(x) times 1/ln b in double-double, which misses
   by an ulp there (log2(8.0) = 2.9999999999999996, log10(0.1) =
   -0.9999999999999999, log10f(1e9f) = 9.000001f), so floor(log10(x)) and
   int(log2(x)) come out one too small. A power of two is seen in its
   frexp mantissa; log10 near an integer k checks x against 10**k, exact for
   |k| <= 22 (10**-k: the division rounds it as the literal is rounded); float
   log10 rounds the float64 one once. */
LZ_D float lz_log2(float x) { return log2f(x); }
LZ_D double lz_log2(double x) {
  int e;
  return frexp(x, &e) == 0.5 ? (double)(e - 1) : log2(x);
}
LZ_D double lz_pow10i(int n) {  /* 10**n, exact for 0 <= n <= 22 */
  double r = 1.0, b = 10.0;
  for (; n; n >>= 1, b *= b) if (n & 1) r *= b;
  return r;
}
LZ_D double lz_log10(double x) {
  const double r = log10(x), k = rint(r);
  if (k != r && fabs(k) <= 22.0) {
    const double p = lz_pow10i((int)fabs(k));
    if (x == (k < 0.0 ? 1.0 / p : p)) return k;
  }
  return r;
}
LZ_D float lz_log10(float x) { return (float)lz_log10((double)x); }
LZ_D float lz_sqrt(float x) { return sqrtf(x); }
LZ_D double lz_sqrt(double x) { return sqrt(x); }
LZ_D float lz_sin(float x) { return sinf(x); }
LZ_D double lz_sin(double x) { return sin(x); }
LZ_D float lz_cos(float x) { return cosf(x); }
LZ_D double lz_cos(double x) { return cos(x); }
LZ_D float lz_tan(float x) { return tanf(x); }
LZ_D double lz_tan(double x) { return tan(x); }
LZ_D float lz_expm1(float x) { return expm1f(x); }
LZ_D double lz_expm1(double x) { return expm1(x); }
LZ_D float lz_tanh(float x) { return tanhf(x); }
LZ_D double lz_tanh(double x) { return tanh(x); }
LZ_D float lz_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
LZ_D double lz_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
LZ_D float lz_pow(float x, float y) { return powf(x, y); }
LZ_D double lz_pow(double x, double y) { return pow(x, y); }
LZ_D float lz_asin(float x) { return asinf(x); }
LZ_D double lz_asin(double x) { return asin(x); }
LZ_D float lz_acos(float x) { return acosf(x); }
LZ_D double lz_acos(double x) { return acos(x); }
LZ_D float lz_atan(float x) { return atanf(x); }
LZ_D double lz_atan(double x) { return atan(x); }
LZ_D float lz_atan2(float y, float x) { return atan2f(y, x); }
LZ_D double lz_atan2(double y, double x) { return atan2(y, x); }
/* exact roundings (rint: to nearest, ties to even, the default mode) */
LZ_D float lz_floor(float x) { return floorf(x); }
LZ_D double lz_floor(double x) { return floor(x); }
LZ_D float lz_ceil(float x) { return ceilf(x); }
LZ_D double lz_ceil(double x) { return ceil(x); }
LZ_D float lz_trunc(float x) { return truncf(x); }
LZ_D double lz_trunc(double x) { return trunc(x); }
LZ_D float lz_rint(float x) { return rintf(x); }
LZ_D double lz_rint(double x) { return rint(x); }
/* exact: the next representable value, the sign bit, a sign transplant */
LZ_D float lz_nextafter(float x, float y) { return nextafterf(x, y); }
LZ_D double lz_nextafter(double x, double y) { return nextafter(x, y); }
LZ_D float lz_copysign(float x, float y) { return copysignf(x, y); }
LZ_D double lz_copysign(double x, double y) { return copysign(x, y); }
LZ_D bool lz_signbit(float x) { return signbit(x) != 0; }
LZ_D bool lz_signbit(double x) { return signbit(x) != 0; }

/* NaN-propagating maximum/minimum (np.maximum); bool: or/and */
LZ_D bool lz_max(bool x, bool y) { return x || y; }
LZ_D bool lz_min(bool x, bool y) { return x && y; }
LZ_D int lz_max(int x, int y) { return x > y ? x : y; }
LZ_D int lz_min(int x, int y) { return x < y ? x : y; }
LZ_D i64 lz_max(i64 x, i64 y) { return x > y ? x : y; }
LZ_D i64 lz_min(i64 x, i64 y) { return x < y ? x : y; }
LZ_D float lz_max(float x, float y) { return x != x ? x : (y != y ? y : (x > y ? x : y)); }
LZ_D float lz_min(float x, float y) { return x != x ? x : (y != y ? y : (x < y ? x : y)); }
LZ_D double lz_max(double x, double y) { return x != x ? x : (y != y ? y : (x > y ? x : y)); }
LZ_D double lz_min(double x, double y) { return x != x ? x : (y != y ? y : (x < y ? x : y)); }
// nanmax/nanmin: IEEE maxNum/minNum, NaN only when both are
LZ_D float lz_fmax(float x, float y) { return fmaxf(x, y); }
LZ_D float lz_fmin(float x, float y) { return fminf(x, y); }
LZ_D double lz_fmax(double x, double y) { return fmax(x, y); }
LZ_D double lz_fmin(double x, double y) { return fmin(x, y); }

/* integer floor division and modulo (NumPy): by 0 -> 0; by -1 never traps */
template <class T> LZ_D T lz_floordiv(T x, T y) {
  if (y == 0) return 0;
  if (y == -1) return lz_neg(x);
  T q = x / y, r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) q -= 1;
  return q;
}
template <class T> LZ_D T lz_mod(T x, T y) {
  if (y == 0 || y == -1) return 0;
  T r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
/* integer power by squaring (wraps); negative exponents: truncated result */
template <class T, class U> LZ_D T lz_ipow(T x, T n) {
  if (n < 0) return x == 1 ? (T)1 : (x == -1 ? ((n & 1) ? (T)-1 : (T)1) : (T)0);
  U r = 1, b = (U)x;
  while (n > 0) { if (n & 1) r *= b; b *= b; n >>= 1; }
  return (T)r;
}
LZ_D int lz_pow(int x, int n) { return lz_ipow<int, unsigned>(x, n); }
LZ_D i64 lz_pow(i64 x, i64 n) { return lz_ipow<i64, u64>(x, n); }

/* npy_divmod: floor quotient and remainder with the divisor's sign */
#define LZ_DIVMOD(F, FMOD, FLOOR, COPYSIGN)                                   \
  LZ_D F lz_divmod(F a, F b, F* m) {                                          \
    F mod = FMOD(a, b);                                                       \
    if (b == 0) { *m = mod; return a / b; }                                   \
    F div = (a - mod) / b;                                                    \
    if (mod != 0) {                                                           \
      if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }                       \
    } else {                                                                  \
      mod = COPYSIGN((F)0, b);                                                \
    }                                                                         \
    F fl;                                                                     \
    if (div != 0) { fl = FLOOR(div); if (div - fl > (F)0.5) fl += 1; }        \
    else { fl = COPYSIGN((F)0, a / b); }                                      \
    *m = mod;                                                                 \
    return fl;                                                                \
  }                                                                           \
  LZ_D F lz_floordiv(F a, F b) { F m; return lz_divmod(a, b, &m); }           \
  LZ_D F lz_mod(F a, F b) { F m; lz_divmod(a, b, &m); return m; }
LZ_DIVMOD(float, fmodf, floorf, copysignf)
LZ_DIVMOD(double, fmod, floor, copysign)

/* float -> int: NaN and out of range give INT_MIN, as x86 cvtt* (NumPy) */
LZ_D int lz_f2i32(double x) {
  return (x >= -2147483648.0 && x < 2147483648.0) ? (int)x : (int)(-2147483647 - 1);
}
LZ_D i64 lz_f2i64(double x) {
  return (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
      ? (i64)x : (i64)(-9223372036854775807LL - 1);
}

/* counter-based random numbers: Philox4x32-10 (Random123's philox4x32_10) */
LZ_D unsigned lz_umulhi(unsigned a, unsigned b) {
#ifdef __CUDACC__
  return __umulhi(a, b);
#else
  return (unsigned)(((u64)a * b) >> 32);
#endif
}
LZ_D void lz_philox(i64 counter, i64 seed, unsigned* w) {
  unsigned c0 = (unsigned)(u64)counter, c1 = (unsigned)((u64)counter >> 32), c2 = 0u, c3 = 0u;
  unsigned k0 = (unsigned)(u64)seed, k1 = (unsigned)((u64)seed >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    unsigned hi0 = lz_umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned hi1 = lz_umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}
/* the top 53 bits of (hi << 32 | lo), exactly */
LZ_D double lz_bits53(unsigned hi, unsigned lo) {
  return (double)(i64)(((u64)hi << 21) | (u64)(lo >> 11));
}
/* cos(2 pi u), u in [0, 1): exact quadrant reduction, t = r * 2pi in [0, pi/4] */
LZ_D double lz_cos_2pi(double u) {
  double q = floor(u * 4.0);
  double r = u - q * 0.25;
  bool swap = r > 0.125;
  double t = (swap ? 0.25 - r : r) * 6.283185307179586;
  int qi = (int)q;
  double v = (((qi & 1) != 0) == swap) ? cos(t) : sin(t);
  return (qi == 1 || qi == 2) ? -v : v;
}
LZ_D double lz_box_muller(double u1, double u2) {
  return sqrt(-2.0 * log(u1)) * lz_cos_2pi(u2);
}
LZ_D float lz_philox_uniform_f32(i64 c, i64 s) {
  unsigned w[4]; lz_philox(c, s, w);
  return (float)(w[0] >> 8) * 5.9604644775390625e-08f;  /* 2**-24 */
}
LZ_D double lz_philox_uniform_f64(i64 c, i64 s) {
  unsigned w[4]; lz_philox(c, s, w);
  return lz_bits53(w[1], w[0]) * 1.1102230246251565404236316680908203125e-16;  /* 2**-53 */
}
LZ_D float lz_philox_normal_f32(i64 c, i64 s) {
  unsigned w[4]; lz_philox(c, s, w);
  const double k = 2.3283064365386962890625e-10;  /* 2**-32 */
  return (float)lz_box_muller(((double)w[0] + 1.0) * k, (double)w[1] * k);
}
LZ_D double lz_philox_normal_f64(i64 c, i64 s) {
  unsigned w[4]; lz_philox(c, s, w);
  const double k = 1.1102230246251565404236316680908203125e-16;  /* 2**-53 */
  return lz_box_muller((lz_bits53(w[1], w[0]) + 1.0) * k, lz_bits53(w[3], w[2]) * k);
}

/* warp shuffles for the reduction combine (bool travels as int) */
LZ_D bool lz_shfl(bool v, int d) { return __shfl_down_sync(LZ_FULL, (int)v, d) != 0; }
LZ_D int lz_shfl(int v, int d) { return __shfl_down_sync(LZ_FULL, v, d); }
LZ_D i64 lz_shfl(i64 v, int d) { return __shfl_down_sync(LZ_FULL, v, d); }
LZ_D float lz_shfl(float v, int d) { return __shfl_down_sync(LZ_FULL, v, d); }
LZ_D double lz_shfl(double v, int d) { return __shfl_down_sync(LZ_FULL, v, d); }
#endif
"""
