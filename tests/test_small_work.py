"""LAZY_SMALL_WORK=1: tiny kernels run through NumPy until compiling would have been cheaper."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from scheduler import realize, small_work

pytestmark = pytest.mark.usefixtures("fresh_log")


@pytest.fixture
def renting(monkeypatch):
    """Small work on, a fresh rent book, and compiling priced at 0.5 ms."""
    fresh = small_work.SmallWork()
    monkeypatch.setattr(small_work, "small_work", fresh)
    monkeypatch.setattr(realize, "small_work", fresh)
    monkeypatch.setattr(small_work, "PRIOR_COMPILE_MS", 0.5)
    monkeypatch.setenv("LAZY_SMALL_WORK", "1")
    return fresh


def run(step: int, n: int = 10, op: str = "cos") -> lazy.Tensor:
    """The same structure every call for one `op` (a new constant does not change
    it); each test uses its own op, so no test finds another's kernel compiled."""
    x = lazy.asarray(np.arange(n, dtype=np.float32))
    y = getattr(lazy, op)(x * 0.731 + step) - lazy.sqrt(x + 0.25) * x  # this file only
    lazy.sync(y)
    xn = np.arange(n, dtype=np.float32)
    expected = getattr(np, op)(xn * 0.731 + step) - np.sqrt(xn + 0.25) * xn
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    return y


def test_off_by_default_every_kernel_compiles():
    run(0, op="sin")
    assert [r.backend for r in lazy.log] == ["llvm"]


def test_rents_until_the_interpreter_has_cost_a_compile_then_buys(renting):
    for i in range(40):
        run(i)
        if lazy.log.counters.kernels and list(lazy.log)[-1].backend == "llvm":
            break
    records = list(lazy.log)
    backends = [r.backend for r in records]
    assert backends[0] == "numpy" and backends[-1] == "llvm"
    assert backends == ["numpy"] * (len(backends) - 1) + ["llvm"]  # once bought, compiled
    paid = sum(r.run_ms for r in records[:-1])
    assert paid < 0.5 + records[-2].run_ms  # stopped renting once the rent reached the price
    assert all(r.reason.startswith("small work: NumPy interpreter (est.") for r in records[:-1])
    assert lazy.log.counters.fallbacks == 0  # a choice, not a fallback (LAZY_FALLBACK=error is on)
    run(99)
    assert list(lazy.log)[-1].backend == "llvm" and list(lazy.log)[-1].cache == "hit"


def test_large_work_compiles_at_once(renting):
    run(0, n=200_000, op="tanh")  # the interpreter estimate alone exceeds the price
    assert [r.backend for r in lazy.log] == ["llvm"]


def test_estimate_grows_with_nodes_and_elements():
    from scheduler.realize import plan
    a = lazy.asarray(np.ones(1000, np.float32))
    small, big = lazy.exp(a), lazy.exp(lazy.sqrt(a) + a) * 2
    (s,), (b,) = plan([small._buf]).steps, plan([big._buf]).steps
    assert small_work.interpret_ms(b.kernel, b.launch) > small_work.interpret_ms(s.kernel, s.launch)
