"""The CPU backend's disk cache of object code: a second process loads what the first
compiled, and anything wrong with the cache (corrupt, foreign, unwritable, turned
off) costs a recompile, never a failure or stale code."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from cpu_backend import CPUBackend
from cpu_backend.jit import JIT
from scheduler.dtypes import float64

from cpu_backend_helpers import contiguous_kernel, run_flat
from ir_strategies import unop


def test_disk_cache_roundtrip_and_fail_soft(tmp_path, monkeypatch):
    k = contiguous_kernel(lambda x: unop("sqrt", x), [float64], float64)
    x = np.arange(50, dtype=np.float64)
    first = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert first.compile(k)[1].cache == "miss"
    files = list(tmp_path.glob("*.o"))
    assert len(files) == 1
    again = CPUBackend(jit=JIT(cache_dir=tmp_path))  # a "new process"
    c, info = again.compile(k)
    assert info.cache == "disk"
    ours, ref = run_flat(k, [x], again)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert "define void" in again.source(k)
    # corrupt entry: ignored, recompiled, rewritten
    files[0].write_bytes(files[0].read_bytes()[:-7] + b"garbage")
    fresh = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert fresh.compile(k)[1].cache == "miss"
    ours, ref = run_flat(k, [x], fresh)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert CPUBackend(jit=JIT(cache_dir=tmp_path)).compile(k)[1].cache == "disk"
    # a cache "directory" that is a file, and a disabled cache: runs still work
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    for jit in (JIT(cache_dir=blocker / "sub"), None):
        if jit is None:
            monkeypatch.setenv("LAZY_DISK_CACHE", "0")
            jit = JIT(cache_dir=tmp_path)
        assert jit.disk.dir is None and jit.disk.status.startswith("off")
        be = CPUBackend(jit=jit)
        assert be.compile(k)[1].cache == "miss"
        ours, ref = run_flat(k, [x], be)
        np.testing.assert_array_equal(ours[0], ref[0])


def test_disk_cache_problems_are_said_in_the_compile_record(tmp_path, monkeypatch):
    """The cache fails soft, and the log says so: a corrupt file, an unwritable
    directory and a cache turned off each show in the `new` part of the kernel's
    compile record (the log's cache column), once per problem."""
    k = contiguous_kernel(lambda x: unop("sqrt", x), [float64], float64)
    JIT(cache_dir=tmp_path).compile(k)
    (obj,) = tmp_path.glob("*.o")
    obj.write_bytes(obj.read_bytes()[:-7] + b"garbage")
    jit = JIT(cache_dir=tmp_path)
    info = jit.compile(k)[1]
    assert info.cache == "miss" and "disk cache: file failed its check" in info.new
    obj.write_bytes(b"short")
    info = JIT(cache_dir=tmp_path).compile(k)[1]
    assert "disk cache: file failed its check (truncated" in info.new
    gone = tmp_path / "gone"
    jit = JIT(cache_dir=gone)
    gone.rmdir()
    gone.write_text("x")  # unwritable after start (even for root): not written, said so
    assert "disk cache: not written (NotADirectoryError" in jit.compile(k)[1].new
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    assert "disk cache: off (NotADirectoryError" in \
        JIT(cache_dir=blocker / "sub").compile(k)[1].new
    monkeypatch.setenv("LAZY_DISK_CACHE", "0")
    jit = JIT(cache_dir=tmp_path)
    k2 = contiguous_kernel(lambda x: unop("exp", x), [float64], float64)
    first, second = jit.compile(k)[1], jit.compile(k2)[1]
    assert first.new == "new structure (first kernel); disk cache: off (LAZY_DISK_CACHE=0)"
    assert second.new == "new structure"  # said once


def test_disk_cache_refuses_another_kernels_intact_object(tmp_path):
    """An intact entry of another kernel under this kernel's name (copied or renamed
    into place) is not loaded (it used to fail with "JIT produced no address", or
    crash); the kernel is recompiled."""
    sq = contiguous_kernel(lambda x: unop("sqrt", x), [float64], float64)
    ex = contiguous_kernel(lambda x: unop("exp", x), [float64], float64)
    first = JIT(cache_dir=tmp_path)
    first.compile(sq)
    (sq_file,) = tmp_path.glob("*.o")
    first.compile(ex)
    (ex_file,) = set(tmp_path.glob("*.o")) - {sq_file}
    ex_file.write_bytes(sq_file.read_bytes())
    be = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert be.compile(ex)[1].cache == "miss"
    x = np.linspace(0, 2, 50)
    ours, ref = run_flat(ex, [x], be)
    np.testing.assert_allclose(ours[0], np.exp(x), rtol=1e-13)


def test_disk_cache_key_covers_the_scheduler_code_generation_reads(monkeypatch):
    """Generated code depends on scheduler modules (Philox constants in ops.py, the
    kernel IR, dtype rules): a change there must not load old objects."""
    from cpu_backend import diskcache
    before = diskcache._source_hash()
    real = Path.read_bytes

    def edited(self):
        data = real(self)
        return data + b"\n# edited" if self.name == "ops.py" and self.parent.name == "scheduler" \
            else data
    monkeypatch.setattr(Path, "read_bytes", edited)
    assert diskcache._source_hash() != before
