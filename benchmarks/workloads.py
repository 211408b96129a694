"""The issue's workloads W1-W8: inputs, each peer's version, and the NumPy check."""
from __future__ import annotations

import numpy as np

import lazy
import peers as P  # optional peers, bound at run time by P.load_peers()
from common import sum_check
from peers import jput, jready, lazy_sync, nb_kernels, tc, tcompile


# ------------------------------------------------------------------ checks

def close(rtol, atol):
    def check(res, ref):
        if res.shape != ref.shape:
            return False, f"shape {res.shape} != {ref.shape}"
        err = float(np.max(np.abs(res.astype(np.float64) - ref.astype(np.float64)))) if res.size else 0.0
        return bool(np.allclose(res, ref, rtol=rtol, atol=atol)), f"max |diff| {err:.1e}"
    return check


# ------------------------------------------------------------------ workloads
# Each builder returns (key, title, {peer: fn}, check, nbytes, notes); fn() returns a result.

def rng_f32(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def w1(q):
    Xn = rng_f32(1, 10_000_000, 2)
    X = lazy.asarray(Xn)
    x0, x1 = Xn[:, 0], Xn[:, 1]
    f = {"lazyrt": lazy_sync(lambda: X[:, 0] ** 2 + X[:, 1] ** 3),
         "numpy": lambda: Xn[:, 0] ** 2 + Xn[:, 1] ** 3}
    if P.ne:
        f["numexpr"] = lambda: P.ne.evaluate("x0**2 + x1**3", local_dict={"x0": x0, "x1": x1})
    if P.numba:
        f["numba"] = lambda: nb_kernels()["w1"](Xn)
    if P.torch:
        Xt = tc(Xn)
        g = lambda X: X[:, 0] ** 2 + X[:, 1] ** 3  # noqa: E731
        f["torch"] = lambda: g(Xt)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(Xt)
    if P.jax:
        Xj = jput(Xn)
        jg = jready(lambda X: X[:, 0] ** 2 + X[:, 1] ** 3)
        f["jax"] = lambda: jg(Xj)
    return ("W1", "X[:,0]**2 + X[:,1]**3, X 10M x 2", f, close(1e-4, 1e-4), 120_000_000)


def normal_stats_check(res, ref):
    """Peers draw different random numbers: check y = x0**2 + x1**3 of standard
    normals by its moments (mean 1, variance 3 - 1 + 15 = 17), not element-wise."""
    del ref
    if res.shape != (10_000_000,):
        return False, f"shape {res.shape}"
    y = res.astype(np.float64)
    mean, var = float(y.mean()), float(y.var())
    return abs(mean - 1) < 0.02 and abs(var - 17) < 1.0, f"mean {mean:.4f}, var {var:.3f}"


def w1r(q):
    """W1 including randn(10M, 2): X is kept, so it is written as well as y."""
    shape = (10_000_000, 2)

    def lz():
        X = lazy.randn(*shape)
        y = X[:, 0] ** 2 + X[:, 1] ** 3
        lazy.sync(X, y)
        return y
    rng = np.random.default_rng(1)

    def npf():
        X = rng.standard_normal(shape, dtype=np.float32)
        return X[:, 0] ** 2 + X[:, 1] ** 3
    f = {"lazyrt": lz, "numpy": npf}
    if P.torch:
        def tf():
            X = P.torch.randn(*shape)
            return X[:, 0] ** 2 + X[:, 1] ** 3
        f["torch"] = tf
    if P.jax:
        def jf(key):
            X = P.jax.random.normal(key, shape, dtype=np.float32)
            return X, X[:, 0] ** 2 + X[:, 1] ** 3
        jg = P.jax.jit(jf)
        keys = iter(P.jax.random.split(P.jax.random.PRNGKey(1), 100_000))
        f["jax"] = lambda: jg(next(keys))[1].block_until_ready()
    return ("W1r", "randn(10M, 2) + W1 (X kept)", f, normal_stats_check, 120_000_000)


def w2(q):
    an, bn, cn = rng_f32(2, 10_000_000), rng_f32(3, 10_000_000), rng_f32(4, 10_000_000)
    a, b, c = lazy.asarray(an), lazy.asarray(bn), lazy.asarray(cn)
    f = {"lazyrt": lazy_sync(lambda: w2_lazy(a, b, c)),
         "numpy": lambda: np.maximum(np.where(an > 0, np.sqrt(np.abs(an)) * bn,
                                              np.exp(-cn) / (1 + bn * bn)), cn)}
    if P.ne:
        # numexpr has no maximum(): the where() chain, then a where() on its result
        def nef():
            v = P.ne.evaluate("where(a > 0, sqrt(abs(a)) * b, exp(-c) / (1 + b*b))",
                            local_dict={"a": an, "b": bn, "c": cn})
            return P.ne.evaluate("where(v > c, v, c)", local_dict={"v": v, "c": cn})
        f["numexpr"] = nef
    if P.numba:
        f["numba"] = lambda: nb_kernels()["w2"](an, bn, cn)
    if P.torch:
        at, bt, ct = tc(an), tc(bn), tc(cn)

        def g(a, b, c):
            return P.torch.maximum(P.torch.where(a > 0, P.torch.sqrt(P.torch.abs(a)) * b,
                                             P.torch.exp(-c) / (1 + b * b)), c)
        f["torch"] = lambda: g(at, bt, ct)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(at, bt, ct)
    if P.jax:
        aj, bj, cj = jput(an), jput(bn), jput(cn)
        jg = jready(lambda a, b, c: P.jnp.maximum(P.jnp.where(a > 0, P.jnp.sqrt(P.jnp.abs(a)) * b,
                                                          P.jnp.exp(-c) / (1 + b * b)), c))
        f["jax"] = lambda: jg(aj, bj, cj)
    return ("W2", "11-op chain (where, sqrt, abs, exp, divide, maximum), 3 x 10M", f,
            close(1e-4, 1e-5), 160_000_000)


def w2_lazy(a, b, c):
    return lazy.maximum(lazy.where(a > 0, lazy.sqrt(lazy.abs(a)) * b,
                                   lazy.exp(-c) / (1 + b * b)), c)


def w3(q, axis):
    An = rng_f32(5, 4096, 4096)
    A = lazy.asarray(An)
    ax = 1 if axis == "rows" else None
    check = sum_check(np.abs(An.astype(np.float64)).sum(axis=ax))
    if axis == "rows":
        f = {"lazyrt": lazy_sync(lambda: A.sum(axis=1)), "numpy": lambda: An.sum(axis=1)}
    else:
        flat = An.reshape(-1)
        f = {"lazyrt": lazy_sync(lambda: A.sum()), "numpy": lambda: An.sum()}
    if P.ne:
        f["numexpr"] = (lambda: P.ne.evaluate("sum(A, axis=1)", local_dict={"A": An})) if ax \
            else (lambda: P.ne.evaluate("sum(A)", local_dict={"A": flat}))
    if P.numba:
        f["numba"] = (lambda: nb_kernels()["w3_rows"](An)) if ax else \
            (lambda: nb_kernels()["w3_all"](flat))
    if P.torch:
        At = tc(An)
        g = (lambda A: A.sum(dim=1)) if ax else (lambda A: A.sum())
        f["torch"] = lambda: g(At)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(At)
    if P.jax:
        Aj = jput(An)
        jg = jready((lambda A: A.sum(axis=1)) if ax else (lambda A: A.sum()))
        f["jax"] = lambda: jg(Aj)
    key, title = ("W3r", "sum(axis=1) of 4096x4096") if ax else ("W3f", "full sum of 16.8M")
    return (key, title, f, check, 4096 * 4096 * 4)


def w4(q):
    xn = rng_f32(6, 4096, 4096)
    x = lazy.asarray(xn)

    def lz():
        e = lazy.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def npf():
        e = np.exp(xn - xn.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    f = {"lazyrt": lazy_sync(lz), "numpy": npf}
    if P.ne:
        def nef():
            m = xn.max(axis=1, keepdims=True)
            e = P.ne.evaluate("exp(x - m)", local_dict={"x": xn, "m": m})
            s = P.ne.evaluate("sum(e, axis=1)", local_dict={"e": e})[:, None]
            return P.ne.evaluate("e / s", local_dict={"e": e, "s": s})
        f["numexpr"] = nef
    if P.numba:
        f["numba"] = lambda: nb_kernels()["w4"](xn)
    if P.torch:
        xt = tc(xn)

        def g(x):
            e = P.torch.exp(x - x.amax(dim=1, keepdim=True))
            return e / e.sum(dim=1, keepdim=True)
        f["torch"] = lambda: g(xt)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(xt)
    if P.jax:
        xj = jput(xn)

        def jgf(x):
            e = P.jnp.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        jg = jready(jgf)
        f["jax"] = lambda: jg(xj)
    return ("W4", "row softmax of 4096x4096", f, close(1e-4, 1e-8), 2 * 4096 * 4096 * 4)


def w5(q):
    An = rng_f32(7, 4096, 4096)
    A = lazy.asarray(An)
    f = {"lazyrt": lazy_sync(lambda: A + A.T), "numpy": lambda: An + An.T}
    if P.ne:
        f["numexpr"] = lambda: P.ne.evaluate("A + B", local_dict={"A": An, "B": An.T})
    if P.numba:
        f["numba"] = lambda: nb_kernels()["w5"](An)
    if P.torch:
        At = tc(An)
        g = lambda A: A + A.T  # noqa: E731
        f["torch"] = lambda: g(At)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(At)
    if P.jax:
        Aj = jput(An)
        jg = jready(lambda A: A + A.T)
        f["jax"] = lambda: jg(Aj)
    return ("W5", "A + A.T, 4096x4096", f, close(1e-6, 1e-6), 2 * 4096 * 4096 * 4)


def w6(q, n):
    an, bn = rng_f32(8, n, n), rng_f32(9, n, n)
    a, b = lazy.asarray(an), lazy.asarray(bn)
    f = {"lazyrt": lazy_sync(lambda: a @ b), "numpy": lambda: an @ bn}
    if P.torch:
        at, bt = tc(an), tc(bn)
        g = lambda a, b: a @ b  # noqa: E731
        f["torch"] = lambda: g(at, bt)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(at, bt)
    if P.jax:
        aj, bj = jput(an), jput(bn)
        jg = jready(lambda a, b: a @ b)
        f["jax"] = lambda: jg(aj, bj)
    return (f"W6.{n}", f"matmul {n}x{n}", f, close(1e-3, 1e-3 * np.sqrt(n)), None)


def w6e(q):
    n = 1024
    an, bn, biasn = rng_f32(10, n, n), rng_f32(11, n, n), rng_f32(12, n)
    a, b, bias = lazy.asarray(an), lazy.asarray(bn), lazy.asarray(biasn)
    f = {"lazyrt": lazy_sync(lambda: lazy.maximum((2 * a) @ b + bias, 0)),
         "numpy": lambda: np.maximum((2 * an) @ bn + biasn, 0)}
    if P.torch:
        at, bt, biast = tc(an), tc(bn), tc(biasn)
        g = lambda a, b, c: P.torch.relu((2 * a) @ b + c)  # noqa: E731
        f["torch"] = lambda: g(at, bt, biast)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(at, bt, biast)
    if P.jax:
        aj, bj, cj = jput(an), jput(bn), jput(biasn)
        jg = jready(lambda a, b, c: P.jnp.maximum((2 * a) @ b + c, 0))
        f["jax"] = lambda: jg(aj, bj, cj)
    return ("W6.epi", "maximum((2*a) @ b + bias, 0), 1024", f, close(1e-3, 0.1), None)


def w8(q):
    bn, cn = rng_f32(13, 20_000_000), rng_f32(14, 20_000_000)
    b, c = lazy.asarray(bn), lazy.asarray(cn)
    s = 3.0
    s32 = np.float32(s)
    f = {"lazyrt": lazy_sync(lambda: b + s * c), "numpy": lambda: bn + s32 * cn}
    if P.ne:
        f["numexpr"] = lambda: P.ne.evaluate("b + s*c", local_dict={"b": bn, "c": cn, "s": s32})
    if P.numba:
        f["numba"] = lambda: nb_kernels()["w8"](bn, s32, cn)
    if P.torch:
        bt, ct = tc(bn), tc(cn)
        g = lambda b, c: b + s * c  # noqa: E731
        f["torch"] = lambda: g(bt, ct)
        cg = tcompile(g)
        f["torch.compile"] = lambda: cg(bt, ct)
    if P.jax:
        bj, cj = jput(bn), jput(cn)
        jg = jready(lambda b, c: b + s * c)
        f["jax"] = lambda: jg(bj, cj)
    return ("W8", "triad b + s*c, 20M", f, close(1e-5, 1e-5), 240_000_000)


WORKLOADS = [
    ("W1", [w1, w1r]), ("W2", [w2]), ("W3", [lambda q: w3(q, "rows"), lambda q: w3(q, "all")]),
    ("W4", [w4]), ("W5", [w5]),
    ("W6", [lambda q: w6(q, 1024), lambda q: w6(q, 2048), w6e]), ("W8", [w8]),
]


