"""Device "cpu" (stage3's C kernels) against device "python" (stage2's), and its memory."""
import os

import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native
from stage2_tensor import backend

from .engines import ENGINES
from .gradcheck import gradcheck
from .optable import LAYOUTS, ops_for

pytestmark = pytest.mark.stage3

CPU = next(e for e in ENGINES if e.name == "stage3-cpu")
LAYOUTS_AND_CONTIGUOUS = {"contiguous": lambda x: x, **LAYOUTS}


@pytest.mark.parametrize("layout", LAYOUTS_AND_CONTIGUOUS)
@pytest.mark.parametrize("op", ops_for(CPU), ids=lambda op: op.name)
def test_cpu_agrees_with_python_in_float32(op, layout):
    rng = np.random.default_rng(7)
    shapes = op.shapes or [(2, 3)] * (3 if op.arity == -1 else op.arity)
    domains = op.domains * len(shapes) if op.arity == -1 else op.domains
    inputs = [d.sample(rng, s).astype(np.float32) for d, s in zip(domains, shapes)]
    results = {}
    for device in ("python", "cpu"):
        xs = [LAYOUTS_AND_CONTIGUOUS[layout](t) if t.ndim else t
              for t in (tg.tensor(a.tolist(), device=device) for a in inputs)]
        results[device] = op.apply(tg, *xs)
        assert results[device].device == device
    np.testing.assert_allclose(results["cpu"].numpy(), results["python"].numpy(), rtol=2e-6, atol=1e-6)


def test_registered_on_import_and_on_request():
    assert isinstance(backend.get("cpu"), stage3_native.CpuBackend)
    assert tg.ones(2, device="cpu").device == "cpu"


def test_to_and_from_python_device():
    x = tg.arange(6.0).reshape(2, 3)
    y = x.to("cpu")
    assert y.device == "cpu" and y.tolist() == x.tolist()
    assert y.T.to("python").tolist() == x.T.tolist()


@pytest.mark.parametrize("dtype", [tg.bool, tg.int32, tg.int64, tg.float32, tg.float64])
def test_every_dtype_round_trips_and_fills(dtype):
    values = [[0, 1, 1], [1, 0, 1]] if dtype is tg.bool else [[0, 1, -2], [3, -4, 5]]
    t = tg.tensor(values, dtype=dtype, device="cpu")
    assert t.tolist() == tg.tensor(values, dtype=dtype).tolist()
    assert tg.full((2, 2), 1, dtype=dtype, device="cpu").tolist() == [[dtype.cast(1)] * 2] * 2


def test_integer_matmul_falls_back_to_python_with_a_log_line(caplog):
    a = tg.tensor([[1, 2], [3, 4]], device="cpu")
    backend._fallbacks_logged.discard(("matmul for int64", "cpu"))     # logged once per process
    with caplog.at_level("WARNING", logger="tracegrad"):
        out = a @ a
    assert out.tolist() == [[7, 10], [15, 22]] and out.device == "cpu"
    assert "op matmul for int64 not found in backend cpu, falling back to python" in caplog.text


def rss_bytes():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc to read resident memory")
def test_memory_is_freed_when_tensors_die():
    one_mb = 1 << 18                                  # float32 elements
    for _ in range(100):                              # let the allocator settle first
        tg.ones(one_mb, device="cpu")
    before = rss_bytes()
    for _ in range(10_000):                           # 10 GB in total, 1 MB at a time
        t = tg.ones(one_mb, device="cpu")
        del t
    assert rss_bytes() - before < 64 << 20            # flat: not 10 GB, not even 64 MB


MATMUL_OPS = [op for op in ops_for(CPU) if op.name.startswith(("matmul", "matvec", "vecmat", "dot"))]
HAS_CBLAS = bool(stage3_native.cpu_backend.lib.tg_has_cblas())


@pytest.mark.parametrize("variant", ["naive", "reordered", "blocked", "tinyblas",
                                     pytest.param("blas", marks=pytest.mark.skipif(
                                         not HAS_CBLAS, reason="built without a system CBLAS"))])
@pytest.mark.parametrize("op", MATMUL_OPS, ids=lambda op: op.name)
def test_every_matmul_variant(op, variant, monkeypatch):
    monkeypatch.setattr(backend.get("cpu"), "matmul_variant", variant)
    rng = np.random.default_rng(8)
    inputs = [d.sample(rng, s) for d, s in zip(op.domains, op.shapes)]
    value = gradcheck(CPU, lambda *xs: op.apply(tg, *[LAYOUTS["transposed"](x) if x.ndim == 2 else x for x in xs]),
                      inputs, rng)
    np.testing.assert_allclose(value, op.reference(*inputs), rtol=1e-12, atol=1e-12)


def test_tinyblas_can_be_forced(monkeypatch):
    monkeypatch.setenv("TRACEGRAD_BLAS", "tinyblas")
    assert stage3_native.CpuBackend().matmul_variant == "tinyblas"
    monkeypatch.delenv("TRACEGRAD_BLAS")
    assert stage3_native.CpuBackend().matmul_variant == ("blas" if HAS_CBLAS else "tinyblas")


def test_demo_mlp_learns_on_cpu(tmp_path, monkeypatch, capsys):
    from stage3_native.examples import mlp
    monkeypatch.setenv("TRACEGRAD_FIGURES", str(tmp_path))
    monkeypatch.setenv("TRACEGRAD_LOGS", str(tmp_path))
    accuracy = mlp.main(["--steps", "60"])
    assert accuracy >= 0.95                                   # measured: 1.0 after 60 steps
    assert "on device 'cpu'" in capsys.readouterr().out
    assert (tmp_path / "cpu_mlp_loss.png").stat().st_size > 0


def test_numpy_interop_shares_memory_on_cpu():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tg.from_numpy(a, device="cpu")
    a[0, 0] = 100.0                                   # writes through numpy show in the tensor...
    assert t[0, 0].item() == 100.0
    view = t.T.numpy()
    view[1, 0] = -1.0                                 # ...and the other way round
    assert t[0, 1].item() == -1.0 and not view.flags.owndata
    assert view.shape == (3, 2)


def test_numpy_interop_copies_when_layout_forbids_sharing():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]         # not contiguous: copied
    t = tg.from_numpy(a, device="cpu")
    a[0, 0] = 7.0
    assert t.numpy().tolist() == [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_moving_between_devices_keeps_every_bit(dtype):
    a = (np.arange(-3, 3).reshape(2, 3) * 1.25).astype(dtype)
    t = tg.from_numpy(a).to("cpu")
    assert t.device == "cpu" and t.dtype.name == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.T.to("python").numpy(), a.T)


def test_fused_cross_entropy_on_cpu_matches_python_even_for_huge_logits():
    """The fused kernel (softmax.c) against the python device's, loss and gradient, with
    logits of 1000 in it, where a naive e^x would overflow float32."""
    import stage2_tensor.nn.functional as F
    rng = np.random.default_rng(3)
    logits = (rng.normal(size=(32, 10)) * 4).astype(np.float32)
    logits[0, 3], logits[1, :], logits[2, 7], logits[3, 0] = 1000, 1000, -1000, -1000
    target = rng.integers(0, 10, size=32)
    losses, grads = {}, {}
    for device in ("python", "cpu"):
        x = tg.tensor(logits.tolist(), device=device, requires_grad=True)
        loss = F.cross_entropy(x, tg.tensor(target.tolist(), device=device), reduction="none")
        loss.sum().backward()
        losses[device], grads[device] = loss.detach().numpy(), x.grad.numpy()
    assert np.isfinite(losses["cpu"]).all() and np.isfinite(grads["cpu"]).all()
    np.testing.assert_allclose(losses["cpu"], losses["python"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grads["cpu"], grads["python"], rtol=1e-6, atol=1e-6)
    assert grads["cpu"].dtype == np.float32


@pytest.mark.parametrize("make", [
    lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True),
    lambda ps: tg.optim.Adam(ps, lr=0.05, weight_decay=0.1),
    lambda ps: tg.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
], ids=["sgd", "sgd_nesterov", "adam", "adamw"])
def test_fused_optimizer_steps_on_cpu_match_python(make):
    """20 steps of the fused update kernels (optim.c) against the python device's, on a
    matrix and a vector parameter in float32."""
    rng = np.random.default_rng(5)
    w0, b0 = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32)
    x = rng.normal(size=(6, 4)).astype(np.float32)
    trajectories = {}
    for device in ("python", "cpu"):
        w = tg.tensor(w0.tolist(), device=device, requires_grad=True)
        b = tg.tensor(b0.tolist(), device=device, requires_grad=True)
        xs = tg.tensor(x.tolist(), device=device)
        opt = make([w, b])
        history = []
        for _ in range(20):
            opt.zero_grad()
            ((xs @ w + b).tanh() ** 2).sum().backward()
            opt.step()
            history.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()]))
        trajectories[device] = np.array(history)
    np.testing.assert_allclose(trajectories["cpu"], trajectories["python"], rtol=1e-6, atol=1e-6)


def test_a_backend_without_the_fused_kernels_falls_back_to_python(caplog, monkeypatch):
    """The same one path on a device lacking softmax, cross_entropy and the updates: the
    python kernels run instead (the in-place ones written back), with one log line each."""
    import stage2_tensor.nn.functional as F
    from stage3_native.cpu_backend import CpuBackend
    lean = CpuBackend()
    for name in ("softmax", "cross_entropy", "sgd_update", "adam_update"):
        setattr(lean, name, None)
    lean.name = "lean"
    monkeypatch.setitem(backend._BACKENDS, "lean", lean)
    results = {}
    for device in ("python", "lean"):
        w = tg.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], device=device, requires_grad=True)
        target = tg.tensor([2, 0], device=device)
        opts = [tg.optim.SGD([w], lr=0.1, momentum=0.9), tg.optim.Adam([w], lr=0.1)]
        for opt in opts:
            opt.zero_grad()
            (F.cross_entropy(w, target) + w.softmax(0).sum() * 0.5).backward()
            opt.step()
        results[device] = w.detach().numpy()
    np.testing.assert_allclose(results["lean"], results["python"], rtol=1e-6)
    for name in ("softmax", "cross_entropy", "sgd_update", "adam_update"):
        assert f"op {name} not found in backend lean, falling back to python" in caplog.text


def test_more_dimensions_than_the_kernels_hold():
    x = tg.zeros(*([1] * 16), device="cpu")
    with pytest.raises(ValueError, match=r"device 'cpu' supports tensors of at most 16 dimensions"):
        x.unsqueeze(0)
    assert tg.zeros(*([1] * 17)).ndim == 17           # the python device has no limit


def test_int64_stays_exact_beyond_two_to_the_53():
    big = 2**53 + 1                                   # not representable as a double
    for device in ("python", "cpu"):
        x = tg.tensor([big, -big, 3], device=device)
        assert (x + 0).tolist() == [big, -big, 3]
        assert (x * 1 - 0).tolist() == [big, -big, 3]
        assert (x == big).tolist() == [True, False, False]
        assert x.max().item() == big and x[:1].sum().item() == big
        assert tg.full((2,), big, device=device).tolist() == [big, big]
        assert (tg.tensor([3], device=device) ** 39).item() == 3 ** 39


def test_a_failing_compiler_shows_its_message(tmp_path, monkeypatch):
    fake = tmp_path / "cc"
    fake.write_text("#!/bin/sh\necho 'fakecc: error: this compiler always fails' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(ImportError, match=r"(?s)building the C library failed.*this compiler always fails"):
        stage3_native._build()
    assert tg.ones(3, device="cpu").sum().item() == 3          # the built library is untouched
