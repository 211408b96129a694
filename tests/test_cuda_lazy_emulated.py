"""The whole lazy pipeline on device "cuda", on a machine without a GPU:
the device, creation and transfers, elementwise ops, reductions, matmul.

Only CuPy is faked (tests/cuda_lazy_helpers.py says how); NVRTC compiles
every kernel, and the host emulation of the CUDA thread model runs it.
Every test compares with NumPy and reads `lazy.log` to check which
backend ran each kernel. Writes and indexing: test_cuda_lazy_emulated_writes.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import lazy
import lazy.numpy as lnp
from conftest import DTYPE_NAMES, sample
from cuda_emu import fake_cupy
from cuda_lazy_helpers import (GPU, assert_ran_on_cuda, backends_of, check, check_all, copies, host,
                               on_cuda, records)
from cuda_backend.launch import plan_launch
from scheduler import backends
from scheduler.realize import plan


# -- the device ------------------------------------------------------------------------------
def test_cuda_is_usable_under_the_fake(cuda):
    assert backends.device_status("cuda") == (True, GPU)
    assert lazy.zeros(2, device="cuda").device == "cuda"
    assert lazy.zeros(2, device="cuda:0").device == "cuda"


def test_default_device_is_cuda_when_usable_and_the_log_says_so(cuda):
    t = lazy.zeros(2)
    assert t.device == "cuda"
    note = f"default device: cuda ({GPU})"
    assert [n for n in lazy.log.notes if n.startswith("default device:")][-1] == note
    assert note in lazy.log.table() and note in lazy.log.to_json()
    np.testing.assert_array_equal(host(t), np.zeros(2, np.float32))
    assert backends_of() == ["cuda", "copy"]
    assert lazy.arange(3).device == "cuda" and lazy.tensor([1.5]).device == "cuda"


def test_lazy_device_env_still_wins(cuda, monkeypatch):
    monkeypatch.setenv("LAZY_DEVICE", "cpu")
    assert lazy.ones(2).device == "cpu"
    monkeypatch.setenv("LAZY_DEVICE", "cuda")
    assert lazy.ones(2).device == "cuda"


# -- creation and transfers ------------------------------------------------------------------
def test_constant_and_range_creation_runs_cuda_kernels(cuda):
    cases = [
        (lazy.zeros(2, 3, device="cuda"), np.zeros((2, 3), np.float32)),
        (lazy.ones(4, dtype="int32", device="cuda"), np.ones(4, np.int32)),
        (lazy.full((2, 2), 2.5, dtype="float64", device="cuda"), np.full((2, 2), 2.5)),
        (lazy.full(3, True, device="cuda"), np.full(3, True)),
        (lazy.arange(10, device="cuda"), np.arange(10)),
        (lazy.arange(2, 11, 3, device="cuda"), np.arange(2, 11, 3)),
        (lazy.arange(0.5, 3, 0.5, device="cuda"), np.arange(0.5, 3, 0.5, dtype=np.float32)),
        (lazy.linspace(-1, 1, 7, device="cuda"), np.linspace(-1, 1, 7, dtype=np.float32)),
        (lazy.linspace(0, 1, 5, endpoint=False, dtype="float64", device="cuda"),
         np.linspace(0, 1, 5, endpoint=False)),
        (lazy.eye(3, 4, k=1, device="cuda"), np.eye(3, 4, k=1, dtype=np.float32)),
        (lazy.empty(3, device="cuda") * 0, np.zeros(3, np.float32)),
    ]
    for t, _ in cases:
        assert t.device == "cuda" and t._buf.pending
    assert len(lazy.log) == 0  # nothing runs at creation
    lazy.sync()
    assert_ran_on_cuda()  # (a shared cast(iota) may be a kernel of its own)
    assert len(records("cuda")) >= len(cases)
    assert not records("copy")  # computed on the device: nothing moved
    for t, want in cases:
        assert isinstance(t._buf.array, fake_cupy.DeviceArray)
        check(t, want)
    assert copies() == [("cuda->cpu", 2 * want.nbytes) for _, want in cases]


def test_host_data_creation_is_a_logged_transfer(cuda):
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = lazy.tensor(data, device="cuda")
    a = lazy.asarray(data, device="cuda")
    lst = lazy.tensor([[1.5, 2.0]], device="cuda")
    f64 = lazy.asarray(np.linspace(0, 1, 5), device="cuda")
    made = [t, a, lst, f64]
    assert all(x.device == "cuda" and x._buf.pending for x in made)
    lazy.sync()
    assert backends_of() == ["copy"] * 4
    sizes = [24, 24, 8, 40]
    assert copies() == [("cpu->cuda", 2 * b) for b in sizes]  # read + written (docs/log.md)
    assert lazy.log.counters.transfers == 4
    assert lazy.log.counters.transfer_bytes == 2 * sum(sizes)
    assert cuda.h2d_bytes == sum(sizes)  # each payload crossed to the device once
    data[0, 0] = 100  # tensor() and asarray(device="cuda") hold device copies
    check(t, np.arange(6, dtype=np.int32).reshape(2, 3))
    check(a, np.arange(6, dtype=np.int32).reshape(2, 3))
    check(lst, np.array([[1.5, 2.0]], np.float32))
    check(f64, np.linspace(0, 1, 5))


def test_random_creation_on_cuda(cuda):
    """rand/randn on cuda give the numbers the same seed gives on the CPU."""
    lazy.manual_seed(3)
    r, n = lazy.rand(3, 4, device="cuda"), lazy.randn(5, dtype="float64", device="cuda")
    assert len(lazy.log) == 0  # pending until something needs them
    y = n * 2  # n is kept and read once by y's kernel: one kernel writes both
    lazy.sync()
    assert [(rec.device, rec.backend) for rec in lazy.log] == [("cuda", "cuda")] * 2
    lazy.manual_seed(3)
    r_cpu, n_cpu = lazy.rand(3, 4, device="cpu"), lazy.randn(5, dtype="float64", device="cpu")
    assert r.device == n.device == "cuda" and r_cpu.device == "cpu"
    assert r.dtype.name == "float32" and n.dtype.name == "float64"
    check(r, r_cpu.numpy())
    check(n, n_cpu.numpy())
    check(y, n_cpu.numpy() * 2)
    assert ((host(r) >= 0) & (host(r) < 1)).all()


def test_random_read_through_two_views_stays_in_its_reader_on_cuda(cuda):
    """The CPU's random_read_twice rule (docs/fusion.md) is not applied on CUDA."""
    lazy.manual_seed(4)
    X = lazy.randn(100, 2, device="cuda")
    y = X[:, 0] ** 2 + X[:, 1] ** 3
    del X
    lazy.sync()
    assert [rec.device for rec in lazy.log] == ["cuda"]
    lazy.manual_seed(4)
    x = lazy.randn(100, 2, device="cpu").numpy()
    check(y, x[:, 0] ** 2 + x[:, 1] ** 3, rtol=1e-5, atol=1e-5)


def test_to_cuda_cpu_and_numpy_roundtrip(cuda):
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    x = lazy.asarray(a)
    y = x.to("cuda")
    assert y.device == "cuda" and y._buf.pending and y.cuda() is y and y.to("cuda:0") is y
    z = x.cuda()
    back = (y * 2).cpu()
    assert back.device == "cpu" and back.cpu() is back
    got = back.numpy()
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, a * 2)
    assert [(r.device, r.backend) for r in lazy.log] == \
        [("cuda", "copy"), ("cuda", "cuda"), ("cpu", "copy")]
    assert copies() == [("cpu->cuda", 2 * a.nbytes), ("cuda->cpu", 2 * a.nbytes)]
    assert lazy.log.counters.transfers == 2
    assert lazy.log.counters.transfer_bytes == 4 * a.nbytes
    # numpy() of a cuda tensor: a host copy, its own memory, one more transfer
    lazy.log.clear()
    h = host(z)
    np.testing.assert_array_equal(h, a)
    assert copies() == [("cpu->cuda", 2 * a.nbytes), ("cuda->cpu", 2 * a.nbytes)]
    assert not np.shares_memory(h, a)
    a[0, 0] = -1.0  # the device copy does not see host writes
    assert host(z)[0, 0] == 0.0 and z.tolist()[0][:2] == [0.0, 1.0]
    assert z[1, 2].item() == 8.0 and float(z[3, 5]) == 23.0
    assert "tensor(" in repr(z[0])
    assert cuda.syncs >= 1  # CUDA run times are taken after synchronizing the stream


def test_transfer_of_views(cuda):
    """to("cuda") and cpu() of strided views copy the elements the view selects."""
    a = np.arange(40, dtype=np.float32).reshape(5, 8)
    x = lazy.asarray(a)
    v = x[::-2, 1::3].to("cuda")  # 3 x 3 elements of a 40-element storage
    check(v, a[::-2, 1::3])
    w = on_cuda(a)
    check(w.T[::3, ::-1].cpu().to("cuda") + 1, a.T[::3, ::-1] + 1)
    check(w[None, 1:4, ::2].expand(2, 3, 4).cpu().to("cuda"),
          np.broadcast_to(a[None, 1:4, ::2], (2, 3, 4)))
    assert cuda.launches  # the elementwise add ran under the emulation
    b = w[2]
    assert b.cpu().numpy().tolist() == a[2].tolist()
    assert {d for d, _ in copies()} == {"cpu->cuda", "cuda->cpu"}
    assert lazy.log.counters.transfers == len(copies())
    assert lazy.log.counters.transfer_bytes == sum(n for _, n in copies())


class _HostCapsule:
    """Hands a capsule already made to np.from_dlpack as host memory (which the
    fake's device memory is), so the test can read what was exported."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        return self.capsule


def test_dlpack_export_of_a_cuda_tensor(cuda):
    """`__dlpack__` of a pending cuda tensor syncs it (logged as implicit), then
    exports CuPy's view of the device buffer with the tensor's strides and offset,
    no copy; asked for on the CPU it is a logged host copy, refused under
    copy=False. (tests/test_interop.py does the same with a GPU, through CuPy.)"""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = (on_cuda(a) * 2)[1:, ::-2]
    lazy.log.clear()
    cap = t.__dlpack__(stream=None, max_version=(1, 0))
    assert [(r.cause, r.backend) for r in lazy.log] == [("implicit: __dlpack__", "cuda")]
    assert fake_cupy.exports == [dict(stream=None, max_version=(1, 0), dl_device=None,
                                      copy=None)]
    assert t.__dlpack_device__() == (2, 0)
    got = np.from_dlpack(_HostCapsule(cap))
    np.testing.assert_array_equal(got, (a * 2)[1:, ::-2])
    storage = t._buf.array._a
    assert got.strides == (24, -8) and np.shares_memory(got, storage)
    assert got.__array_interface__["data"][0] == storage[6 + 5:].__array_interface__["data"][0]
    lazy.log.clear()
    on_host = np.from_dlpack(_HostCapsule(t.__dlpack__(dl_device=(1, 0), max_version=(1, 0))))
    np.testing.assert_array_equal(on_host, (a * 2)[1:, ::-2])
    assert not np.shares_memory(on_host, storage) and len(fake_cupy.exports) == 1
    assert [r.backend for r in lazy.log] == ["copy"]
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(1, 0), copy=False)


def test_transfer_nbytes_of_a_view_counts_the_view(cuda):
    """The log's nbytes is bytes read plus bytes written (docs/log.md): a transfer of a
    view reads the view's elements, not its whole storage (as elementwise kernels count)."""
    a = np.arange(40, dtype=np.float32)
    x = lazy.asarray(a)
    check(x[::4].to("cuda"), a[::4])  # 10 elements of a 40-element storage
    assert copies() == [("cpu->cuda", 2 * 10 * 4), ("cuda->cpu", 2 * 10 * 4)]
    w = on_cuda(a)
    lazy.log.clear()
    np.testing.assert_array_equal(w[5:9].cpu().numpy(), a[5:9])
    assert copies() == [("cuda->cpu", 2 * 4 * 4)]


# -- elementwise -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_elementwise_through_views_every_dtype(cuda, dtype):
    rng = np.random.default_rng(1)
    a, b = sample((4, 6), dtype, rng), sample((3,), dtype, rng)
    x, y = on_cuda(a), on_cuda(b)
    lazy.log.clear()
    # a negative-step slice, a transposed strided view and a broadcast row, fused
    z = x[::-1, ::2] * x.T[1::2].T + y[None, ::-1]
    w = z - 1
    want = a[::-1, ::2] * a.T[1::2].T + b[None, ::-1]
    check_all([(z, want), (w, want - 1)])
    assert_ran_on_cuda()
    assert {r.device for r in lazy.log if r.backend == "cuda"} == {"cuda"}


def test_dtype_promotion_on_cuda(cuda):
    rng = np.random.default_rng(2)
    arrays = {d: sample((5,), d, rng) for d in DTYPE_NAMES}
    ts = {d: on_cuda(a) for d, a in arrays.items()}
    lazy.log.clear()
    pairs = [("int32", "float32"), ("int32", "int64"), ("bool", "float32"), ("bool", "int32"),
             ("float32", "float64"), ("int64", "float32")]
    cases = []
    for p, q in pairs:
        cases.append((ts[p] + ts[q], arrays[p] + arrays[q]))
        cases.append((ts[p] * ts[q] - ts[q], arrays[p] * arrays[q] - arrays[q]))
    cases += [  # Python scalars are weak (NEP 50)
        (ts["float32"] * 2.5, arrays["float32"] * 2.5),
        (ts["int32"] * 3, arrays["int32"] * 3),
        (ts["int32"] * 2.5, arrays["int32"] * 2.5),
        (ts["bool"] + 1, arrays["bool"] + 1),
        (ts["int64"].astype("float32").to("float64"), arrays["int64"].astype(np.float64)),
        (ts["float64"].int(), arrays["float64"].astype(np.int32)),
        ((ts["int32"] > 0) & ts["bool"], (arrays["int32"] > 0) & arrays["bool"]),
        # NumPy scalars are strong: constants of their dtype, on the device
        (ts["float32"] * np.float64(2.5), arrays["float32"] * np.float64(2.5)),
        (ts["int32"] + np.int64(3), arrays["int32"] + np.int64(3)),
        (ts["float32"] / np.uint64(3), arrays["float32"] / np.uint64(3)),
        (ts["float32"] - np.float32(1), arrays["float32"] - np.float32(1)),
    ]
    check_all(cases)
    assert_ran_on_cuda()


def test_unary_compare_divide_and_where(cuda):
    rng = np.random.default_rng(3)
    f = sample((3, 4), "float32", rng, positive=True)
    i = sample((3, 4), "int64", rng)
    d = sample((3, 4), "int64", rng, positive=True)
    x, n, m = on_cuda(f), on_cuda(i), on_cuda(d)
    lazy.log.clear()
    check_all([(lazy.exp(x) + lazy.sqrt(x) * x.sin() - x.tanh() / x.cos(),
                np.exp(f) + np.sqrt(f) * np.sin(f) - np.tanh(f) / np.cos(f)),
               (x.sigmoid(), 1 / (1 + np.exp(-f))),
               (lazy.log(x) ** 2, np.log(f) ** 2)], f32_rtol=2e-5, f32_atol=2e-5)
    check_all([(n // m, i // d), (n % m, i % d), (-n // 3 + abs(n), -i // 3 + np.abs(i)),
               (x / 3, f / 3), (n / m, i / d), (lazy.where(n > 0, x, -x), np.where(i > 0, f, -f)),
               ((n == 1) | (n >= 3), (i == 1) | (i >= 3)), (x.clip(0.5, 2.0), np.clip(f, 0.5, 2.0)),
               (lazy.maximum(x, n), np.maximum(f, i))])
    assert_ran_on_cuda()


def test_one_fused_kernel_per_chain(cuda):
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    x = on_cuda(a)
    lazy.log.clear()
    y = ((x * 2 + 1)[:, ::-1].T ** 2 - x.T) * 0.5
    y.sync()
    assert_ran_on_cuda(1)
    check(y, ((a * 2 + 1)[:, ::-1].T ** 2 - a.T) * np.float32(0.5))


# -- reductions ------------------------------------------------------------------------------
REDUCTIONS = [  # (op, dtype, axis, keepdims)
    ("sum", "float32", 1, False), ("sum", "int32", 0, True), ("sum", "float64", None, False),
    ("mean", "float32", 0, False), ("mean", "int64", (0, 2), True),
    ("max", "float64", 2, False), ("min", "int32", (1, 2), False),
    ("argmax", "float32", 1, False), ("argmax", "int64", None, False),
    ("argmin", "float64", 0, True),
    ("prod", "int64", 2, False), ("prod", "float32", (0, 1), False),
    ("any", "bool", 1, False), ("all", "bool", None, True), ("any", "float32", 0, False),
]


def test_reductions_over_axes(cuda):
    rng = np.random.default_rng(4)
    data = {d: sample((3, 5, 4), d, rng) for d in ("bool", "int32", "int64", "float32",
                                                   "float64")}
    xs = {d: on_cuda(a) for d, a in data.items()}
    lazy.log.clear()
    cases = []
    for op, dtype, axis, keepdims in REDUCTIONS:
        a, x = data[dtype], xs[dtype]
        if op in ("argmax", "argmin"):
            got = getattr(x, op)(axis=axis, keepdims=keepdims) if axis is not None \
                else getattr(x, op)()
            want = getattr(np, op)(a, axis=axis, keepdims=keepdims) if axis is not None \
                else np.asarray(getattr(np, op)(a))
        else:
            got = getattr(x, op)(axis=axis, keepdims=keepdims)
            want = np.asarray(getattr(np, op)(a, axis=axis, keepdims=keepdims))
            if op == "mean" and dtype == "int64":
                want = want.astype(np.float64)
        cases.append((got, want))
    # views into a reduction: negative steps, a transpose, a broadcast operand
    a, x = data["float32"], xs["float32"]
    cases += [(x[::-1, 1:, ::2].transpose(2, 0, 1).sum(axis=(1, 2)),
               a[::-1, 1:, ::2].transpose(2, 0, 1).sum(axis=(1, 2))),
              ((x * x[0]).max(axis=0), (a * a[0]).max(axis=0))]
    check_all(cases, f32_rtol=1e-5)
    assert_ran_on_cuda()
    assert any(r.kernel.startswith("r") for r in records("cuda"))


def test_large_reductions_use_every_strategy(cuda):
    """Shapes that pick each launch strategy on the (2-SM) device: two-pass partials,
    block per output, column tiles, warp per output, thread per output."""
    rng = np.random.default_rng(5)
    big = rng.standard_normal(20000).astype(np.float64)
    rows = rng.integers(-3, 4, (64, 300)).astype(np.int64)
    many = rng.integers(-3, 4, (130, 40)).astype(np.int32)
    x, r, m = on_cuda(big), on_cuda(rows), on_cuda(many)
    q = on_cuda(rows)  # a copy: a max of r beside r's sum would share its loop (siblings)
    lazy.log.clear()
    cases = [(x.sum(), np.asarray(big.sum()), [2, 3]),
             (x.argmin(), np.asarray(big.argmin()), [2, 3]),
             (r.sum(axis=1), rows.sum(axis=1), [0]),
             (r.sum(axis=0), rows.sum(axis=0), [5]),
             (q.max(axis=1, keepdims=True), rows.max(axis=1, keepdims=True), [0]),
             (m.sum(axis=1), many.sum(axis=1), [4]),
             (m[:, :20].min(axis=1), many[:, :20].min(axis=1), [1])]
    for t, _, modes in cases:
        [step] = plan([t._buf]).steps
        assert [c.mode for c in plan_launch(step.kernel, step.launch, fake_cupy.SMS).calls] \
            == modes
    check_all([(t, want) for t, want, _ in cases])
    assert_ran_on_cuda(len(cases))


def test_cheap_shared_value_is_recomputed_in_each_cuda_kernel(cuda):
    """Fusion's `recompute` is the same on CUDA: `a * b` read by the mean and
    by the kernel after it is computed in both, and never written."""
    rng = np.random.default_rng(6)
    an, bn = (rng.standard_normal((20, 70)).astype(np.float32) for _ in range(2))
    y = on_cuda(an) * on_cuda(bn)
    r = y - y.mean(axis=1, keepdims=True)
    assert all(k.recomputed for k in lazy.explain(r).kernels)
    lazy.log.clear()
    check(r, an * bn - (an * bn).mean(axis=1, keepdims=True), atol=1e-6)
    assert_ran_on_cuda(2)


def test_fused_prologue_and_epilogue(cuda):
    rng = np.random.default_rng(6)
    a = sample((6, 7), "float32", rng)
    x = on_cuda(a)
    lazy.log.clear()
    y = ((x * 2 + 1)[::-1] ** 2).sum(axis=1) / 7 - 1  # prologue, reduction, epilogue
    y.sync()
    assert_ran_on_cuda(1)
    assert records("cuda")[0].kernel.startswith("r")
    check(y, ((a * 2 + 1)[::-1] ** 2).sum(axis=1) / np.float32(7) - 1, rtol=1e-5)
    lazy.log.clear()
    m = x.mean(axis=0, keepdims=True)
    c = (x - m).abs().max(axis=0)  # centred: the mean is read through a broadcast
    check(c, np.abs(a - a.mean(axis=0, keepdims=True)).max(axis=0), rtol=1e-5)
    assert_ran_on_cuda()


def test_softmax_reads_two_parts_of_one_reduction_on_cuda(cuda):
    """The softmax idiom and lazy.log_softmax of the same x share their graph
    (the reduction and x - max - log_sum), so both run in two CUDA kernels.
    The reduction writes the max and the log-sum: tied logits of 1e16 are 0.5
    and a row of float32's min (a fully masked attention row) is 1/3 each."""
    a = np.array([[1e16, 1e16, 0.0], [np.finfo(np.float32).min] * 3, [3.0, 1.0, 2.0]],
                 np.float32)
    x = on_cuda(a)
    lazy.log.clear()
    e = lazy.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    del e
    z = lazy.log_softmax(x, axis=1)
    d = a.astype(np.float64) - a.max(1, keepdims=True)
    want = np.exp(d) / np.exp(d).sum(1, keepdims=True)
    check_all([(y, want.astype(np.float32)),
               (z, (d - np.log(np.exp(d).sum(1, keepdims=True))).astype(np.float32))],
              f32_rtol=1e-6, f32_atol=1e-6)
    assert_ran_on_cuda(2)
    assert [r.kernel for r in records("cuda")] == ["r0_logsumexp", "e1_sub_exp"]


# -- sibling reductions ----------------------------------------------------------------------
def test_sibling_reductions_share_one_cuda_kernel(cuda):
    """Reductions over one domain that read one source run in one loop on the device, as
    on the CPU (docs/fusion.md): each group below is one CUDA kernel (its St holds a value
    per reduction), under the strategy the launcher picks for its shape on the 2-SM
    device, and gives NumPy's values and dtypes."""
    rng = np.random.default_rng(9)
    big = rng.standard_normal(20000).astype(np.float32)
    rows = (rng.integers(-8, 9, (64, 300)) / 4).astype(np.float32)
    rows[3] = 0  # no positive: the mean of the positives is 0 / 0
    cols = (rng.integers(-8, 9, (1200, 5)) / 4).astype(np.float32)  # exact sums in any order
    cols[::7, 2], cols[:, 4] = np.nan, np.nan  # nanmax skips NaN; NaN where all are
    many = rng.integers(1, 10, (130, 40)).astype(np.int32)
    many[::5, 3], many[::3, 7] = -1, 0
    short = rng.standard_normal((130, 20))
    x, r, c, m, s = map(on_cuda, (big, rows, cols, many, short))
    lazy.log.clear()
    with np.errstate(invalid="ignore"):
        mean_pos = rows.sum(axis=1) / (rows > 0).sum(axis=1)
    groups = [  # (tensors, NumPy's results, launch modes)
        ((x.min(), x.max()), (big.min(), big.max()), [2, 3]),
        ((r.sum(axis=1) / (r > 0).sum(axis=1),), (mean_pos,), [0]),
        ((r.sum(axis=0), (r > 0).sum(axis=0)), (rows.sum(axis=0), (rows > 0).sum(axis=0)), [5]),
        ((lnp.nanmax(c, axis=0), c.sum(axis=0)),
         (np.fmax.reduce(cols, axis=0), cols.sum(axis=0)), [5, 3]),
        (((m < 0).any(axis=1), (m != 0).all(axis=1)),
         ((many < 0).any(axis=1), (many != 0).all(axis=1)), [4]),
        ((s.min(axis=1), s.max(axis=1)), (short.min(axis=1), short.max(axis=1)), [1]),
    ]
    for ts, _, modes in groups:
        [step] = plan([t._buf for t in ts]).steps
        assert len(step.kernel.reductions) == 2, step.kernel.describe()
        assert [c.mode for c in plan_launch(step.kernel, step.launch, fake_cupy.SMS).calls] \
            == modes
    check_all([(t, np.asarray(w)) for ts, ws, _ in groups for t, w in zip(ts, ws)])
    assert_ran_on_cuda(len(groups))
    assert [k.name for k in plan([x.min()._buf, x.max()._buf]).steps] == ["r0_min_max"]


# -- matmul ----------------------------------------------------------------------------------
def test_matmul_runs_on_cublas(cuda):
    rng = np.random.default_rng(7)
    a = sample((4, 5), "float32", rng)
    b = sample((3, 5), "float32", rng)
    batch = sample((2, 4, 5), "float64", rng)
    v = sample((5,), "float64", rng)
    ia, ib = sample((3, 4), "int64", rng), sample((4, 2), "int64", rng)
    x, y, bt, vv, i, j = map(on_cuda, (a, b, batch, v, ia, ib))
    lazy.log.clear()
    check(x @ y.T, a @ b.T, rtol=1e-5)  # a transposed operand: a strided view to cuBLAS
    check(x[::-1, 1:] @ y[:, 1:].T, a[::-1, 1:] @ b[:, 1:].T, rtol=1e-5)
    check(bt @ y.T.double(), batch @ b.T.astype(np.float64))  # batch broadcast, cast operand
    check(bt @ vv, batch @ v)  # 1-D operand
    check(vv @ vv, np.asarray(v @ v))
    check(i @ j, ia @ ib)
    check((x @ y.T + 1).sum(axis=1), (a @ b.T + 1).sum(axis=1), rtol=1e-5)  # then a kernel
    mm = records("cublas")
    assert len(mm) == 7
    for r in mm:
        assert r.device == "cuda" and r.kernel.startswith("matmul")
        assert r.reason == "extern matmul: cuBLAS via CuPy fake (CUDA 13.0)", r.reason
        assert r.cache == "-"
    assert_ran_on_cuda()
    assert set(backends_of()) == {"cublas", "cuda", "copy"}


# -- scans ------------------------------------------------------------------------------------
def test_cumsum_and_cumprod_run_on_cupy_between_cuda_kernels(cuda):
    """A scan is an extern kernel on the device too (CuPy's): its input is computed
    by a CUDA kernel first, and what reads it fuses into the next CUDA kernel."""
    rng = np.random.default_rng(8)
    a = sample((3, 5), "float32", rng)
    i = sample((4,), "int64", rng)
    x, j = on_cuda(a), on_cuda(i)
    lazy.log.clear()
    y = lnp.cumsum(x * 2, axis=1) + 1
    z = lnp.cumprod(j)
    w = x.T.cumsum(0)  # a transposed view goes to CuPy as a strided device array
    assert len(lazy.log) == 0  # nothing runs before the sync
    check_all([(y, np.cumsum(a * 2, axis=1) + 1), (z, np.cumprod(i)), (w, a.T.cumsum(0))],
              f32_rtol=1e-5)
    scans = records("cupy")
    assert sorted(r.kernel.split("_")[0] for r in scans) == ["cumprod", "cumsum", "cumsum"]
    for r in scans:
        assert r.device == "cuda" and r.cache == "-"
        op = r.kernel.split("_")[0]
        assert r.reason == f"extern {op}: CuPy's {op} (the kernel IR has no scan)", r.reason
    assert_ran_on_cuda(2)  # x * 2 before the scan, + 1 after it
    assert set(backends_of()) == {"cupy", "cuda", "copy"}
    assert {d for d, _ in copies()} == {"cuda->cpu"}  # only the checks' reads come back


# -- sorting ---------------------------------------------------------------------------------
def test_sort_argsort_and_searchsorted_run_on_cupy_between_cuda_kernels(cuda):
    """The sorts are extern kernels on the device too (CuPy's, always stable, so
    any NumPy kind gives the stable result); descending is views and one kernel."""
    a = np.array([[3.0, -0.0, 1, 0, 3], [2, 2, np.nan, -1, 2]], np.float32)
    keys = np.array([[0.5, 3], [np.nan, -2]], np.float32)
    x, k = on_cuda(a), on_cuda(keys)
    lazy.log.clear()
    s = lnp.sort(x * 2, axis=1, kind="quicksort") + 1
    i = lnp.argsort(x, axis=0, descending=True)
    p = lnp.searchsorted(lnp.sort(x.reshape(-1)), k, side="right")
    assert len(lazy.log) == 0  # nothing runs before the sync
    flat = np.sort(a.reshape(-1), kind="stable")
    check_all([(s, np.sort(a * 2, axis=1, kind="stable") + 1),
               (i, np.array([[0, 1, 1, 0, 0], [1, 0, 0, 1, 1]])),
               (p, np.searchsorted(flat, keys, side="right"))])
    assert np.signbit(host(lnp.sort(x, axis=1))[0, 0])  # -0.0 stays before 0.0: stable
    externs = records("cupy")
    assert sorted(r.kernel.split("_")[0] for r in externs) == \
        ["argsort", "searchsorted", "sort", "sort", "sort"]
    for r in externs:
        op = r.kernel.split("_")[0]
        assert r.device == "cuda" and r.reason == \
            f"extern {op}: CuPy's {op}, a stable sort (the kernel IR has no sort)", r.reason
    assert set(backends_of()) == {"cupy", "cuda", "copy"}


def test_median_quantile_and_partition_run_on_the_device(cuda):
    """The order statistics are the sort (CuPy's) and CUDA kernels around it."""
    a = sample((5, 8), "float32", np.random.default_rng(3))
    a[1, 2] = np.nan
    x = on_cuda(a)
    lazy.log.clear()
    m, q = lnp.median(x, axis=1), lnp.quantile(x, [0.25, 0.9], axis=0)
    p = lnp.partition(x, 3, axis=1)
    assert len(lazy.log) == 0
    check_all([(m, np.median(a, axis=1)), (q, np.quantile(a, [0.25, 0.9], axis=0))])
    np.testing.assert_array_equal(host(p)[:, 3], np.partition(a, 3, axis=1)[:, 3])
    assert {r.kernel.split("_")[0] for r in records("cupy")} == {"sort"}
    assert set(backends_of()) == {"cupy", "cuda", "copy"}


def test_searchsorted_across_devices_raises_at_the_call(cuda):
    with pytest.raises(ValueError, match="expected all tensors on the same device, but found "
                                         "cuda and cpu"):
        lnp.searchsorted(on_cuda(np.arange(3.0)), lazy.asarray(np.ones(2), device="cpu"))
