"""Device placement: checks when built, the default device, explain on CUDA.

This machine may or may not have a usable GPU: each test asserts what must
happen in either case (the real-GPU runs are in tests/gpu/).
"""
import numpy as np
import pytest

import lazy
from scheduler import backends

CUDA_OK, CUDA_WHY = backends.device_status("cuda")
pytestmark = pytest.mark.usefixtures("fresh_log")


def test_default_device_is_noted_in_the_log_with_the_reason(monkeypatch):
    monkeypatch.delenv("LAZY_DEVICE", raising=False)
    t = lazy.zeros(3)
    assert t.device == ("cuda" if CUDA_OK else "cpu")
    note = [n for n in lazy.log.notes if n.startswith("default device:")][-1]
    assert note == f"default device: {t.device} ({CUDA_WHY})"
    assert note in lazy.log.table() and note in lazy.log.to_json()


def test_lazy_device_env_chooses_the_default(monkeypatch):
    monkeypatch.setenv("LAZY_DEVICE", "cpu")
    assert lazy.ones(2).device == "cpu"


def test_cuda_tensors_need_a_usable_gpu_and_say_why_not():
    if CUDA_OK:
        t = lazy.arange(4, device="cuda") * 2
        assert t.device == "cuda"
        np.testing.assert_array_equal(t.numpy(), np.arange(4) * 2)
        return
    assert CUDA_WHY.startswith("cuda unavailable: ")
    for make in (lambda: lazy.zeros(3, device="cuda"), lambda: lazy.tensor([1, 2], device="cuda"),
                 lambda: lazy.arange(3).to("cuda"), lambda: lazy.ones(2).cuda()):
        with pytest.raises(RuntimeError, match=r"device 'cuda' is unavailable: cuda unavailable"):
            make()


def test_bad_device_names_are_rejected_at_build_time():
    with pytest.raises(ValueError, match=r"unknown device 'tpu'"):
        lazy.zeros(2, device="tpu")
    with pytest.raises(ValueError, match=r"'cuda:1'.*one GPU"):
        lazy.zeros(2, device="cuda:1")


def test_to_same_device_is_free():
    t = lazy.arange(3) + 1
    assert t.to("cpu") is t and t.cpu() is t
    assert t.to(lazy.float64).dtype == lazy.float64


def test_explain_on_cuda_shows_cuda_c_without_running_anything():
    x = lazy.asarray(np.random.default_rng(0).random((64, 32), dtype=np.float32))
    y = (lazy.exp(x) * 2).sum(axis=1) + 1
    z = (x @ x.T)[0]
    plan = lazy.explain(y, z, device="cuda")
    assert len(lazy.log) == 0 and y._buf.pending and z._buf.pending
    backends_used = [k.backend for k in plan.kernels]
    assert "cuda" in backends_used and "cublas" in backends_used
    for k in plan.kernels:
        if k.backend == "cuda":
            assert '__global__' in k.source and 'extern "C"' in k.source
            assert k.reason.startswith("supported")
    reduction = [k for k in plan.kernels if k.name.startswith("r")]
    assert reduction
    assert "__shared__" in reduction[0].source or "__shfl" in reduction[0].source
    # the CPU plan for the same graph is unchanged, and then it still runs on CPU
    cpu_plan = lazy.explain(y, z)
    assert [k.name for k in cpu_plan.kernels] == [k.name for k in plan.kernels]
    xn = x.numpy()
    np.testing.assert_allclose(y.numpy(), (np.exp(xn) * 2).sum(1) + 1, rtol=1e-5)


def test_without_cupy_lazyrt_runs_on_cpu_and_says_why(tmp_path):
    """What a user without the `cuda` extra gets: CPU, and the reason in the log."""
    import os
    import subprocess
    import sys
    import textwrap
    blocker = tmp_path / "no_cupy"
    blocker.mkdir()
    (blocker / "cupy.py").write_text("raise ImportError('No module named cupy (test)')\n")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import lazy
        x = lazy.arange(6) * 2
        print(x.device, x.sum().item())
        print(lazy.log.notes[0])
    """))
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("LAZY_DEVICE", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    first, note = out.stdout.strip().splitlines()
    assert first == "cpu 30"
    assert note.startswith("default device: cpu (cuda unavailable: CuPy is not installed")
