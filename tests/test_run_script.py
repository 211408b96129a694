"""`python -m lazy script.py`: an unchanged NumPy program, run lazily in a subprocess."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).parent / "scripts"


def python(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def same_output(script: str, *args: str):
    """Run SCRIPTS/script under python and under `python -m lazy`; both must
    succeed and print the same. Returns the lazy run."""
    plain = python(SCRIPTS / script, *args)
    lazily = python("-m", "lazy", SCRIPTS / script, *args)
    assert plain.returncode == 0 and lazily.returncode == 0, lazily.stderr
    assert lazily.stdout == plain.stdout
    return lazily


def test_numpy_program_prints_the_same_under_lazy():
    lazily = same_output("stats_softmax.py", "x", "--flag")
    assert "args ['x', '--flag']" in lazily.stdout
    summary = lazily.stderr.splitlines()
    assert summary[0].startswith("[lazy] ") and "kernels (" in summary[0]
    assert "/blas" in summary[0]  # the matmul
    assert summary[1] == "[lazy] NumPy fallbacks (1): ptp"


def test_real_ndarrays_in_a_script_keep_numpys_methods():
    """NumPy's C code imports numpy._core._methods with the script's globals; lazy.numpy
    has no such module, so the real one is used (it used to raise ModuleNotFoundError)."""
    same_output("real_ndarrays.py")


def test_shuffling_a_tensor_in_place_matches_numpy():
    """np.random.shuffle / Generator.shuffle / RandomState.shuffle of a tensor
    (rows, columns, a 1-D view) give NumPy's order for the same seed; NumPy's
    own shuffle duplicated rows of a tensor (its rows are views)."""
    same_output("shuffle_rows.py")


def test_only_the_scripts_own_modules_get_lazy_numpy():
    run = python("-m", "lazy", SCRIPTS / "which_numpy.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["script lazy.numpy lazy.numpy Tensor",
                                       "local module lazy.numpy Tensor",
                                       "installed library numpy"]


def test_exit_status_passes_through():
    run = python("-m", "lazy", SCRIPTS / "exit_with.py", 3)
    assert run.returncode == 3 and run.stdout == "running ['3']\n"
    assert run.stderr.startswith("[lazy] ")


def test_an_exception_prints_the_scripts_traceback_and_exits_1():
    run = python("-m", "lazy", SCRIPTS / "exit_with.py", "raise")
    assert run.returncode == 1
    err = run.stderr
    assert err.startswith("Traceback (most recent call last):\n")
    assert f'File "{SCRIPTS / "exit_with.py"}", line 6' in err
    assert "ValueError: boom from the script" in err and "runpy" not in err


def test_usage():
    run = python("-m", "lazy")
    assert run.returncode == 2 and run.stderr.startswith("usage: python -m lazy script.py")
    run = python("-m", "lazy", SCRIPTS / "no_such_script.py")
    assert run.returncode == 2 and "can't open file" in run.stderr
