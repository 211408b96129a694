"""The backend-selection log: fields, table, JSON, counters, outputs."""
import json
import logging
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lazy

FIELDS = ("sync_id", "cause", "where", "kernel", "ops", "device", "backend", "reason",
          "cache", "compile_ms", "run_ms", "nbytes")


pytestmark = pytest.mark.usefixtures("fresh_log")


def test_kernel_record_fields_and_user_location():
    x = lazy.asarray(np.random.default_rng(0).random(1000, dtype=np.float32))
    y = lazy.sin(x) * 2  # noqa: this line is the op's `where`
    op_line = sys._getframe().f_lineno - 1
    lazy.sync()
    sync_line = sys._getframe().f_lineno - 1
    (rec,) = list(lazy.log)
    for f in FIELDS:
        assert hasattr(rec, f)
    assert rec.where == f"test_log.py:{sync_line}"
    assert rec.ops == (f"sin@test_log.py:{op_line}", f"mul@test_log.py:{op_line}")
    assert rec.device == "cpu" and rec.backend == "llvm"
    assert "LLVM" in rec.reason
    assert rec.cache.startswith(("miss", "hit"))
    assert rec.run_ms >= 0 and rec.compile_ms >= 0
    assert rec.nbytes == 1000 * 4 * 2  # one float32 input read, one output written
    (s,) = lazy.log.syncs
    assert (s.id, s.cause, s.where, s.kernels) == (rec.sync_id, "sync()", rec.where, 1)
    assert s.nodes == 3 and s.ms >= 0
    np.testing.assert_allclose(y.numpy(), np.sin(x.numpy()) * 2, rtol=1e-6)


def test_counters_table_json_and_clear():
    x = lazy.asarray(np.linspace(0, 1, 10, dtype=np.float32))
    lazy.sync(x + 1)
    lazy.sync(x + 1)          # same structure: cache hit
    (x * 3).tolist()          # implicit
    c = lazy.log.counters
    assert (c.syncs, c.kernels, c.implicit_syncs, c.fallbacks) == (3, 3, 1, 0)
    assert c.cache_hits >= 1 and c.cache_hits + c.cache_misses == 3
    table = lazy.log.table()
    assert "backend" in table and "cpu/llvm" in table and "implicit: tolist()" in table
    data = json.loads(lazy.log.to_json())
    assert len(data["kernels"]) == 3 and len(data["syncs"]) == 3
    assert set(FIELDS) <= set(data["kernels"][0])
    assert data["counters"]["implicit_syncs"] == 1
    lazy.log.clear()
    assert len(lazy.log) == 0 and lazy.log.syncs == [] and lazy.log.counters.syncs == 0


def test_log_is_callable_as_natural_logarithm():
    x = lazy.asarray(np.array([1.0, np.e, 10.0]))
    np.testing.assert_allclose(lazy.log(x).numpy(), np.log([1.0, np.e, 10.0]))


KERNEL_LINE = re.compile(
    r"\[lazy\] sync (\d+) (e\d+_\w+) on cpu/llvm \((.+)\); cache (hit|miss.*|disk); "
    r"compile \d+\.\d\d ms, run \d+\.\d\d ms, (\d+) B; ops (.+)$")
SYNC_LINE = re.compile(
    r"\[lazy\] sync (\d+) \((.+)\) at (\S+): (\d+) nodes, (\d+) merged, (\d+) folded"
    r"(, \d+ rewritten)? -> (\d+) kernels in \d+\.\d\d ms \(schedule (hit|miss)\)$")


def test_records_go_to_python_logging(caplog, monkeypatch):
    """Each record is one line to the `lazy` logger, in the documented format
    (docs/log.md); a note such as the default device is printed once."""
    from scheduler.log import log as the_log
    monkeypatch.setattr(the_log, "notes", [])
    with caplog.at_level(logging.INFO, logger="lazy"):
        for _ in range(2):
            lazy.sync(lazy.rand(3) * 2)  # a creation with no device named: the note
            line = sys._getframe().f_lineno - 1
    lines = [r.getMessage() for r in caplog.records if r.name == "lazy"]
    notes = [ln for ln in lines if ln.startswith("[lazy] default device: cpu (")]
    assert len(notes) == 1 and the_log.notes == [notes[0][len("[lazy] "):]]
    kernels = [KERNEL_LINE.match(ln) for ln in lines if " on cpu/" in ln]
    syncs = [SYNC_LINE.match(ln) for ln in lines if ") at " in ln]
    assert len(lines) == 1 + len(kernels) + len(syncs) and len(syncs) == 2
    assert all(kernels) and all(syncs), lines
    recs, srecs = list(lazy.log), lazy.log.syncs
    assert [m.group(1, 2, 4, 5) for m in kernels] == \
        [(str(r.sync_id), r.kernel, r.cache, str(r.nbytes)) for r in recs]
    assert [m.group(1, 2, 3, 8, 9) for m in syncs] == \
        [(str(r.id), r.cause, r.where, str(r.kernels), r.schedule) for r in srecs]
    assert srecs[0].where == f"test_log.py:{line}"


def test_lazy_log_env_prints_records_to_stderr(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import lazy
        x = lazy.arange(10) * 2
        print(x.sum().item())
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**__import__("os").environ, "LAZY_LOG": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "90"
    assert "[lazy] sync 1 (implicit: item()) at prog.py:4" in out.stderr
    assert "llvm" in out.stderr


def test_log_to_stderr_is_read_once_and_settable(monkeypatch, capsys):
    """LAZY_LOG is checked on every sync, so it is read at first use; code
    turns it on or off, and None reads the variable again."""
    import lazy
    from scheduler.config import config
    monkeypatch.setattr(config, "_log_to_stderr", None)
    monkeypatch.setenv("LAZY_LOG", "1")
    assert config.log_to_stderr
    monkeypatch.setenv("LAZY_LOG", "0")
    assert config.log_to_stderr  # still the value read first
    config.log_to_stderr = None
    assert not config.log_to_stderr
    lazy.sync(lazy.arange(4) + 1)
    assert "[lazy]" not in capsys.readouterr().err
    config.log_to_stderr = True
    lazy.sync(lazy.arange(4) + 2)
    assert "[lazy] sync" in capsys.readouterr().err


def test_log_is_bounded_and_thread_safe():
    import threading
    from scheduler.log import Log, KernelRecord
    small = Log(maxlen=50)
    rec = KernelRecord(1, "sync()", "x:1", "k", (), "cpu", "llvm", "r", "hit", 0, 0, 0)

    def add():
        for _ in range(200):
            small.add_kernel(rec)

    threads = [threading.Thread(target=add) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(small) == 50 and small.counters.kernels == 800


def test_fallback_is_logged_and_can_be_an_error(monkeypatch):
    import scheduler.backends as backends
    monkeypatch.setattr(backends, "_llvm", lambda: (None, "llvm unavailable: test"))
    monkeypatch.setenv("LAZY_FALLBACK", "allow")
    y = lazy.arange(5) * 2
    np.testing.assert_array_equal(y.numpy(), np.arange(5) * 2)
    (rec,) = list(lazy.log)
    assert rec.backend == "numpy" and rec.reason.startswith("fallback: llvm unavailable")
    assert lazy.log.counters.fallbacks == 1
    monkeypatch.setenv("LAZY_FALLBACK", "error")
    z = lazy.arange(5) * 3
    with pytest.raises(lazy.FallbackError, match="LAZY_FALLBACK=error"):
        z.numpy()
    assert z._buf.pending
