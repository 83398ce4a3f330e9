"""Device "cpu" (stage3's C kernels) against device "python" (stage2's), its memory, and
the checks of make sanitize's build of it."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native
from stage2_tensor import backend
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides

from .engines import CUDA, ENGINES, device_params
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


def test_register_is_the_installed_entry_point_and_registers_once():
    """stage2 finds this package through its entry point (pyproject.toml), and calling
    register again, as the entry point does after the import has, keeps the backend."""
    from importlib.metadata import entry_points
    entries = [e for e in entry_points(group=backend.PLUGIN_GROUP) if e.value == "stage3_native:register"]
    assert len(entries) == 1 and entries[0].load() is stage3_native.register
    cpu = backend.get("cpu")
    stage3_native.register()
    assert backend.get("cpu") is cpu


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


@pytest.mark.parametrize("device", device_params("cpu", *CUDA))      # cpu:lazy runs (and logs as) cpu
def test_fused_kernels_run_integers_on_python_with_a_log_line(device, caplog):
    """The fused kernels cover float32 and float64 (native_backend.float_only): asked for
    int64, each native device runs the python backend's kernel, says so once, and its
    result is the python device's."""
    from stage2_tensor import dtypes
    values = [[1, 2, 3], [4, 5, 6]]
    calls = {"softmax": lambda v: (v, 1, False, dtypes.int64),
             "mse_loss": lambda v: (v, v, "none", dtypes.int64),
             "dropout": lambda v: (v, 3, 0.5, dtypes.int64)}
    for name, args in calls.items():
        results = {}
        for dev in ("python", device):
            be = backend.get(dev)
            backend._fallbacks_logged.discard((f"{name} for int64", dev))     # logged once per process
            view = tg.tensor(values, device=dev).as_view()
            with caplog.at_level("WARNING", logger="tracegrad"):
                out = getattr(be, name)(*args(view))
            out = out[0] if isinstance(out, tuple) else out
            results[dev] = be.to_flat(View(out, view.shape, view.strides, 0, dtypes.int64))
        assert results[device] == results["python"], name
        assert f"op {name} for int64 not found in backend {device}, falling back to python" in caplog.text

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
HAS_CBLAS = bool(stage3_native.cpu.backend.lib.tg_has_cblas())


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


def softmax_reference(x, dim, log):
    """Softmax (log-softmax) of x along dim, in float64, and how far a kernel in x's dtype may
    be from it. With m the max and s = x - m, each e^s is within a few ulps, and |s| ulps
    more (s is rounded, and exp's condition number is |s|): 8 (1 + |s|) ulps, as
    test_stage3_elementwise.py's error_bound counts; so their sum S is within E = 8 (1 +
    max |s|) + n ulps (n additions), and log S within E ulps of 1. Softmax e^s / S is then
    within 8 (1 + |s|) + E ulps of itself, log-softmax s - log S within 8 (|s| + |log S|) + E
    ulps of 1."""
    s = x.astype(np.float64) - x.max(dim, keepdims=True)
    total = np.exp(s).sum(dim, keepdims=True)
    eps = np.finfo(x.dtype).eps
    sum_ulps = 8 * (1 + np.abs(s).max(dim, keepdims=True)) + x.shape[dim]
    if log:
        return s - np.log(total), eps * (8 * (np.abs(s) + np.abs(np.log(total))) + sum_ulps)
    y = np.exp(s) / total
    return y, eps * y * (8 * (1 + np.abs(s)) + sum_ulps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_fused_softmax_backward_matches_numpy_and_python(log, dtype, simd_level):
    """softmax and softmax_backward (softmax.c): the vectorized float rows (37 values: a
    body of whole lane groups and a tail, and 10), the general rows along a dimension that
    is not the last, an expanded (stride 0) upstream gradient; against numpy (the softmax,
    the Jacobian-vector product) and the python device's kernel, on every SIMD level."""
    rng = np.random.default_rng(4)
    for shape, dim in [((5, 37), 1), ((32, 10), 1), ((4, 6, 3), 1), ((7, 3), 0)]:
        x0 = (rng.normal(size=shape) * 3).astype(dtype)
        g0 = rng.normal(size=shape).astype(dtype)
        e = np.exp(x0.astype(np.float64) - x0.max(dim, keepdims=True))
        y = e / e.sum(dim, keepdims=True)
        expected = (g0 - y * g0.sum(dim, keepdims=True) if log
                    else y * (g0 - (g0 * y).sum(dim, keepdims=True)))
        want, bound = softmax_reference(x0, dim, log)
        for device in ("python", "cpu"):
            x = tg.from_numpy(x0, device=device).requires_grad_()
            out = x.log_softmax(dim) if log else x.softmax(dim)
            assert (np.abs(out.detach().numpy() - want) <= bound).all(), device
            out.backward(tg.from_numpy(g0, device=device))
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5 if dtype is np.float32 else 1e-12,
                                       atol=1e-6 if dtype is np.float32 else 1e-14)
            assert x.grad.numpy().dtype == dtype
        for device in ("python", "cpu"):                    # a stride-0 gradient (from a sum)
            x = tg.from_numpy(x0, device=device).requires_grad_()
            (x.log_softmax(dim) if log else x.softmax(dim)).sum().backward()
            ones = np.ones(shape)
            expected = ones - y * ones.sum(dim, keepdims=True) if log else y * (ones - y.sum(dim, keepdims=True))
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5 if dtype is np.float32 else 1e-12,
                                       atol=1e-6 if dtype is np.float32 else 1e-13)


@pytest.mark.parametrize("make", [
    lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True),
    lambda ps: tg.optim.Adam(ps, lr=0.05, weight_decay=0.1),
    lambda ps: tg.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
], ids=["sgd", "sgd_nesterov", "adam", "adamw"])
def test_fused_optimizer_steps_on_cpu_match_python(make, simd_level):
    """20 steps of the fused update kernels (optim.c) against the python device's, on a
    matrix and a vector parameter in float32, on every SIMD level: 259 and 7 elements, whole
    vectors of any width and a tail."""
    rng = np.random.default_rng(5)
    w0, b0 = rng.normal(size=(37, 7)).astype(np.float32), rng.normal(size=7).astype(np.float32)
    x = rng.normal(size=(6, 37)).astype(np.float32) / 6
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
    """The same one path on a device lacking softmax (and its backward), cross_entropy and
    the updates: the python kernels run instead (the in-place ones written back), with one
    log line each, but for cross_entropy, a composite, whose definition runs on the device
    itself (stage2_tensor/composites.py)."""
    import stage2_tensor.nn.functional as F
    from stage3_native.cpu.backend import CpuBackend
    lean = CpuBackend()
    for name in ("softmax", "softmax_backward", "cross_entropy", "sgd_update", "adam_update"):
        setattr(lean, name, None)
    lean.name = "lean"
    monkeypatch.setitem(backend._BACKENDS, "lean", lean)
    results = {}
    for device in ("python", "lean"):
        w = tg.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], device=device, requires_grad=True)
        target = tg.tensor([2, -100], device=device)         # -100: ignored, by the composite too
        opts = [tg.optim.SGD([w], lr=0.1, momentum=0.9), tg.optim.Adam([w], lr=0.1)]
        for opt in opts:
            opt.zero_grad()
            (F.cross_entropy(w, target) + w.softmax(0).sum() * 0.5).backward()
            opt.step()
        results[device] = w.detach().numpy()
    np.testing.assert_allclose(results["lean"], results["python"], rtol=1e-6)
    for name in ("softmax", "softmax_backward", "sgd_update", "adam_update"):
        assert f"op {name} not found in backend lean, falling back to python" in caplog.text
    assert "cross_entropy" not in caplog.text


def test_more_dimensions_than_the_kernels_hold():
    x = tg.zeros(*([1] * 16), device="cpu")
    with pytest.raises(ValueError, match=r"device 'cpu' supports tensors of at most 16 dimensions"):
        x.unsqueeze(0)
    assert tg.zeros(*([1] * 17), device="python").ndim == 17         # the python device has no limit


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


def test_integer_powers_wrap_around_as_pytorchs_do():
    """An int64 power beyond int64 is the result modulo 2^64, as PyTorch's and numpy's are:
    the kernel multiplies in uint64_t, since a signed overflow is undefined behaviour (make
    sanitize stops at one), even the square left over after the last bit of 3 ** 39."""
    bases = np.array([3, -3, 2, 7, -2**62], dtype=np.int64)
    x = tg.from_numpy(bases, device="cpu")
    for exponent in (39, 41, 64):
        with np.errstate(over="ignore"):
            assert (x ** exponent).tolist() == (bases ** exponent).tolist()


def test_a_failing_compiler_shows_its_message(tmp_path, monkeypatch):
    fake = tmp_path / "cc"
    fake.write_text("#!/bin/sh\necho 'fakecc: error: this compiler always fails' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(ImportError, match=r"(?s)building the C library failed.*this compiler always fails"):
        stage3_native._build()
    assert tg.ones(3, device="cpu").sum().item() == 3          # the built library is untouched


def test_openmp_can_be_turned_off(monkeypatch):
    """TRACEGRAD_OPENMP=0 builds without OpenMP whatever the compiler accepts, as Apple's
    clang builds (make clang-check)."""
    from stage3_native import build
    monkeypatch.setenv("TRACEGRAD_OPENMP", "0")
    assert build.openmp_flags() == []


@pytest.mark.parametrize("make, kernel", [(lambda ps: tg.optim.SGD(ps, lr=0.1, momentum=0.9), "sgd_update"),
                                          (lambda ps: tg.optim.AdamW(ps, lr=0.1), "adam_update")],
                         ids=["sgd", "adamw"])
def test_one_update_call_per_parameter_group_and_dtype(make, kernel, monkeypatch):
    """A group's parameters are updated by one kernel call per (device, dtype), with the
    same result as the python device's per-parameter loops."""
    results, calls = {}, []
    for device in ("python", "cpu"):
        be = backend.get(device)
        original = getattr(be, kernel)
        monkeypatch.setattr(be, kernel, lambda *args, _f=original: calls.append(device) or _f(*args))
        params = [tg.tensor([[1.0, -2.0], [0.5, 3.0]], device=device, requires_grad=True),
                  tg.tensor([0.25, -1.0, 2.0], device=device, requires_grad=True),
                  tg.tensor([1.5, -0.5], dtype=tg.float64, device=device, requires_grad=True),
                  tg.tensor([9.0], device=device, requires_grad=True)]     # gets no gradient
        opt = make(params)
        for _ in range(3):
            opt.zero_grad()
            ((params[0] ** 2).sum() + (params[1] * 3).sum() + params[2].exp().sum()).backward()
            opt.step()
        results[device] = [p.detach().numpy() for p in params]
    assert calls.count("cpu") == 3 * 2                # per step: one float32 call, one float64
    for cpu, python in zip(results["cpu"], results["python"]):
        np.testing.assert_allclose(cpu, python, rtol=1e-6)
    assert results["cpu"][3].tolist() == [9.0]        # no gradient, no update


def test_cross_entropy_rejects_a_target_out_of_range_on_cpu():
    import stage2_tensor.nn.functional as F
    logits = tg.zeros(4, 3, device="cpu")
    for bad, position in (([0, 1, 2, 3], 3), ([-1, 1, 2, 0], 0)):
        with pytest.raises(IndexError, match=f"target {bad[position]} at position {position} "
                                             r"is not a class index: the logits have 3 classes"):
            F.cross_entropy(logits, tg.tensor(bad, device="cpu"))


# ---- fused layer norm (layernorm.c) and the index path (index.c) --------------------------
def _layer_norm_f64(x, w, b, eps=1e-5):
    """numpy's layer norm over the last axis, with its gradients for an upstream g."""
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    return (x - mean) * rstd * w + b, (x - mean) * rstd, rstd


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_fused_layer_norm_on_cpu_matches_python_and_numpy(affine):
    """Kernel against kernel on a transposed (non-contiguous) float32 input of 1000 rows of
    67, large enough for the C kernel's threads (TG_PARALLEL_MIN) and its partial sums over
    chunks of rows; and both against numpy in float64: forward, and the gradients of x,
    weight and bias."""
    import stage2_tensor.nn.functional as F
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(67, 1000)) * 3 + 1).astype(np.float32)     # used as x.T: (1000, 67)
    w, b = rng.normal(size=67).astype(np.float32), rng.normal(size=67).astype(np.float32)
    g = rng.normal(size=(1000, 67)).astype(np.float32)
    results = {}
    for device in ("python", "cpu"):
        xt = tg.tensor(x.tolist(), device=device, requires_grad=True)
        wt, bt = (tg.tensor(a.tolist(), device=device, requires_grad=True) for a in (w, b))
        view = xt.T
        assert not view.is_contiguous()
        out = F.layer_norm(view, 67, wt, bt) if affine else F.layer_norm(view, (67,))
        out.backward(tg.tensor(g.tolist(), device=device))
        results[device] = [out.detach().numpy(), xt.grad.numpy().T] + (
            [wt.grad.numpy(), bt.grad.numpy()] if affine else [])
        assert all(r.dtype == np.float32 for r in results[device])
    for cpu, python in zip(results["cpu"], results["python"]):
        np.testing.assert_allclose(cpu, python, rtol=1e-5, atol=1e-5)
    # float64 reference: dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))
    x64, w64, b64, g64 = (a.astype(np.float64) for a in (x.T, w, b, g))
    if not affine:
        w64, b64 = np.ones(67), np.zeros(67)
    out, xhat, rstd = _layer_norm_f64(x64, w64, b64)
    gw = g64 * w64
    dx = rstd * (gw - gw.mean(-1, keepdims=True) - xhat * (gw * xhat).mean(-1, keepdims=True))
    expected = [out, dx] + ([(g64 * xhat).sum(0), g64.sum(0)] if affine else [])
    for device in ("python", "cpu"):
        for got, want in zip(results[device], expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_layer_norm_is_one_kernel_call_each_way(monkeypatch):
    """F.layer_norm over the last dimension launches layer_norm once forward and
    layer_norm_backward once backward (not ~11 and ~25 tensor operations); over two
    dimensions it stays the composition."""
    import stage2_tensor.nn as nn
    calls = []
    original, original_method = backend.launch, tg.Tensor.launch

    def counting(device, name, *args, **kwargs):
        calls.append(name)
        return original(device, name, *args, **kwargs)

    def counting_method(self, name, *args, **kwargs):    # Tensor.launch: the usual way in
        calls.append(name)
        return original_method(self, name, *args, **kwargs)
    ln, two = nn.LayerNorm(8, device="cpu"), nn.LayerNorm((3, 8), device="cpu")
    x = tg.randn(4, 3, 8, device="cpu", requires_grad=True)
    upstream = tg.ones(4, 3, 8, device="cpu")
    monkeypatch.setattr(backend, "launch", counting)
    monkeypatch.setattr(tg.Tensor, "launch", counting_method)
    out = ln(x)
    assert calls == ["layer_norm"]
    calls.clear()
    out.backward(upstream)
    assert calls == ["layer_norm_backward"]
    assert x.grad.shape == x.shape and ln.weight.grad.shape == ln.bias.grad.shape == (8,)
    calls.clear()
    two(x)
    assert "layer_norm" not in calls and len(calls) > 3


def test_embedding_is_one_kernel_call_each_way(monkeypatch):
    """weight[indices] with a (B, T) index tensor: index_select forward, index_add
    backward, the indices never turned into Python ints."""
    import stage2_tensor.nn as nn
    emb = nn.Embedding(65, 16, device="cpu")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, size=(4, 32)).tolist(), device="cpu")
    calls = []
    cpu = backend.get("cpu")
    for name in ("index_select", "index_add", "to_flat"):
        original = getattr(cpu, name)
        monkeypatch.setattr(cpu, name, lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
    monkeypatch.setattr(tg.Tensor, "tolist", lambda self: pytest.fail("indices went through tolist"))
    out = emb(idx)
    out.sum().backward()
    assert calls == ["index_select", "index_add"]
    assert out.shape == (4, 32, 16)


@pytest.mark.parametrize("device", device_params("python", "cpu"))
def test_index_out_of_range_names_it_on_every_device(device):
    """The kernels check the indices: the first one out of -size..size-1 is named, for
    x[idx] (one tensor), for x[i, j] (flattened first), and for the kernels themselves."""
    x = tg.arange(12, device=device).reshape(4, 3).float()
    for bad, value in (([0, 4, 1], 4), ([2, -5], -5), ([[1, 2], [7, 0]], 7)):
        with pytest.raises(IndexError, match=f"^index {value} is out of bounds for dimension 0 with size 4$"):
            x[tg.tensor(bad, device=device)]
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 1 with size 3$"):
        x[tg.tensor([0, 1], device=device), tg.tensor([2, 3], device=device)]
    be = backend.get(device)
    index = tg.tensor([0, 2, 3], device=device).as_view()
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 1 with size 3$"):
        be.index_select(x.as_view(), 1, index)
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 0 with size 3$"):
        be.index_add((3, 2), 0, index, tg.ones(3, 2, device=device).as_view())
    # negative indices count from the end, as in Python; an int32 index works too
    assert x[tg.tensor([-1, 0], device=device)].tolist() == [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]
    assert x[tg.tensor([3], dtype=tg.int32, device=device)].tolist() == [[9.0, 10.0, 11.0]]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("device", device_params("python", "cpu"))
def test_repeated_indices_add_up_in_the_gradient(device, layout):
    """index_add accumulates: a row picked k times gets the sum of its k gradients (and the
    strided index_select path, on a transposed view, picks the same rows)."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 5))
    idx = np.array([[3, 1, 3], [-3, 0, 3]])                    # row 3 four times (-3 is 3)
    upstream = rng.normal(size=(2, 3, 5))
    w = tg.tensor(a.tolist() if layout == "contiguous" else a.T.tolist(), dtype=tg.float64,
                  device=device, requires_grad=True)
    rows = w if layout == "contiguous" else w.T
    out = rows[tg.tensor(idx.tolist(), device=device)]
    np.testing.assert_array_equal(out.detach().numpy(), a[idx])
    out.backward(tg.tensor(upstream.tolist(), dtype=tg.float64, device=device))
    expected = np.zeros((6, 5))
    np.add.at(expected, idx, upstream)
    grad = w.grad.numpy() if layout == "contiguous" else w.grad.numpy().T
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)
    assert grad[2].tolist() == [0.0] * 5 and grad[3].tolist() != [0.0] * 5


@pytest.mark.parametrize("threads", [1, 3])
def test_large_gathers_check_every_index_on_any_thread_count(threads):
    """index_select of single elements checks each index as it copies it (one pass over
    the indices): above TG_PARALLEL_MIN, on several threads, for each element size and
    several outer rows, the values are numpy's and the first bad index is named wherever
    it lies; rows of several elements and index_add check theirs first."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 5000))
    idx = rng.integers(-5000, 5000, size=30001)
    bad = idx.copy()
    bad[[25000, 29999]] = 5000, -5001

    def on_cpu(a):
        return tg.from_numpy(a).to("cpu")

    saved = stage3_native.get_num_threads()
    try:
        stage3_native.set_num_threads(threads)
        for cast in (np.float64, np.float32, np.float16, np.bool_):
            t = on_cpu(x.astype(cast))
            np.testing.assert_array_equal(t.index_select(1, on_cpu(idx)).numpy(), np.take(x.astype(cast), idx, axis=1))
            with pytest.raises(IndexError, match="^index 5000 is out of bounds for dimension 1 with size 5000$"):
                t.index_select(1, on_cpu(bad))
        rows = on_cpu(np.ascontiguousarray(x.T))                 # (5000, 3): rows of 3
        np.testing.assert_array_equal(rows.index_select(0, on_cpu(idx)).numpy(), x.T[idx])
        with pytest.raises(IndexError, match="^index -5001 is out of bounds for dimension 0 with size 5000$"):
            rows.index_select(0, on_cpu(bad[26000:]))
        with pytest.raises(IndexError, match="^index 5000 is out of bounds for dimension 0 with size 5000$"):
            backend.get("cpu").index_add((5000,), 0, on_cpu(bad).as_view(), tg.ones(30001, device="cpu").as_view())
    finally:
        stage3_native.set_num_threads(saved)


def test_index_add_on_cpu_is_deterministic_with_threads():
    """A large scatter-add (above TG_PARALLEL_MIN, every thread owning rows of the output)
    gives the same bits as the python device's sequential loop, in float64."""
    rng = np.random.default_rng(9)
    idx = rng.integers(-65, 65, size=4096)
    src = rng.normal(size=(4096, 24))
    results = {}
    for device in ("python", "cpu"):
        be = backend.get(device)
        view = tg.tensor(src.tolist(), dtype=tg.float64, device=device).as_view()
        out = be.index_add((65, 24), 0, tg.tensor(idx.tolist(), device=device).as_view(), view)
        results[device] = np.array(be.to_flat(View(out, (65, 24), (24, 1), 0, tg.float64)))
    expected = np.zeros((65, 24))
    np.add.at(expected, idx, src)
    np.testing.assert_array_equal(results["cpu"], results["python"])
    np.testing.assert_allclose(results["cpu"].reshape(65, 24), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, dim, n_index", [((64, 1500), 1, 1200),     # threads take outer positions
                                                  ((2000, 24), 0, 4096),     # long rows: threads own rows
                                                  ((20000, 4), 0, 20000)])   # short rows: one thread
def test_index_add_adds_in_index_order_however_threads_share_it(shape, dim, n_index):
    """Each element's contributions add up in index order on any thread count: the bits of
    numpy's add.at, which adds one after the other."""
    rng = np.random.default_rng(1)
    idx = rng.integers(-shape[dim], shape[dim], size=n_index)
    src_shape = shape[:dim] + (n_index,) + shape[dim + 1:]
    src = rng.normal(size=src_shape)
    expected = np.zeros(shape)
    np.add.at(expected, (slice(None),) * dim + (idx,), src)
    saved = stage3_native.get_num_threads()
    try:
        for threads in (1, 3):
            stage3_native.set_num_threads(threads)
            out = backend.get("cpu").index_add(shape, dim, tg.tensor(idx.tolist(), device="cpu").as_view(),
                                               tg.from_numpy(src).to("cpu").as_view())
            got = np.array(backend.get("cpu").to_flat(View(out, shape, make_strides(shape), 0, tg.float64)))
            np.testing.assert_array_equal(got.reshape(shape), expected)
    finally:
        stage3_native.set_num_threads(saved)


def test_fused_layer_norm_gives_the_same_bits_on_any_thread_count():
    """dweight and dbias are summed per fixed chunk of rows, then chunk by chunk: threads
    change who computes a chunk, not the order of the additions."""
    import stage2_tensor.nn.functional as F
    rng = np.random.default_rng(12)
    x0, w0, b0 = rng.normal(size=(2048, 48)), rng.normal(size=48), rng.normal(size=48)
    saved = stage3_native.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            stage3_native.set_num_threads(threads)
            x, w, b = (tg.from_numpy(a.astype(np.float32)).to("cpu").requires_grad_() for a in (x0, w0, b0))
            out = F.layer_norm(x, 48, w, b)
            (out * out).sum().backward()
            results.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    finally:
        stage3_native.set_num_threads(saved)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_a_backend_without_layer_norm_falls_back_to_python(caplog, monkeypatch):
    """layer_norm and its backward on the python backend, with and without weight (the
    backward's dweight and dbias then come back as None)."""
    import stage2_tensor.nn.functional as F
    from stage3_native.cpu.backend import CpuBackend
    lean = CpuBackend()
    lean.layer_norm = lean.layer_norm_backward = None
    lean.name = "lean"
    monkeypatch.setitem(backend._BACKENDS, "lean", lean)
    rng = np.random.default_rng(13)
    x0, w0, b0 = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=4)
    results = {}
    for device in ("python", "lean"):
        x, w, b = (tg.tensor(a.tolist(), device=device, requires_grad=True) for a in (x0, w0, b0))
        (F.layer_norm(x, 4, w, b) ** 2 + F.layer_norm(x, 4, None, b)).sum().backward()
        results[device] = [t.grad.numpy() for t in (x, w, b)]
    for lean_grad, python_grad in zip(results["lean"], results["python"]):
        np.testing.assert_allclose(lean_grad, python_grad, rtol=1e-6, atol=1e-6)
    assert "op layer_norm_backward not found in backend lean, falling back to python" in caplog.text


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16"])
def test_strided_copies_of_contiguous_rows_are_exact(dtype):
    """tg_copy of one dtype to itself where both sides' rows are contiguous (a slice of
    rows, a write into one, a broadcast row) copies a row at a time (copy.c's copy_rows):
    every element lands where numpy's own copy puts it, the others untouched, bit for bit,
    including shapes with a zero extent and rows broadcast from one."""
    rng = np.random.default_rng(5)
    a = (rng.normal(size=(3, 4, 5, 6)) * 100).astype(dtype)
    if dtype == "int64":
        a += 2**60                                 # not held exactly by a double
    t = tg.from_numpy(a.copy(), device="cpu")
    for index in [(slice(None), slice(None), slice(1, 4)), (slice(None), slice(1, 3), slice(None), slice(2, 5)),
                  (1, slice(None), slice(0, 5, 2)), (slice(None), slice(None), slice(2, 2))]:
        np.testing.assert_array_equal(t[index].contiguous().numpy(), a[index])
        dst = tg.zeros(*a.shape, dtype=t.dtype, device="cpu")
        dst[index] = t[index]
        want = np.zeros_like(a)
        want[index] = a[index]
        np.testing.assert_array_equal(dst.numpy(), want)
    row = tg.from_numpy(a[0, 0, 0].copy(), device="cpu")
    np.testing.assert_array_equal(row.expand(3, 4, 5, 6).contiguous().numpy(), np.broadcast_to(a[0, 0, 0], a.shape))


# ---- make sanitize's build (TRACEGRAD_SANITIZE=1) ------------------------------------------

sanitized = pytest.mark.skipif(os.environ.get("TRACEGRAD_SANITIZE") != "1",
                               reason="checks the library make sanitize builds (TRACEGRAD_SANITIZE=1)")


@sanitized
def test_the_sanitizers_stop_a_signed_overflow(tmp_path):
    """A signed overflow in C stops make sanitize's run, though Python's own compile flags
    say -fwrapv (an overflow then wraps by definition, and UBSan checks none): a function
    compiled as the kernels are, adding 1 to INT_MAX, ends its process with UBSan's report."""
    script = (
        "from stage3_native.lazy import jit\n"
        "kernel = jit.compile_source('const int *tg_simd_current;', 'int tg_add_one(int x) { return x + 1; }',\n"
        "                            'int tg_add_one(int x)', None)\n"
        "print(kernel.fn(2**31 - 1))\n")
    env = dict(os.environ, TRACEGRAD_KERNEL_CACHE=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0 and "signed integer overflow" in result.stderr, result.stdout + result.stderr


@sanitized
@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_the_compiler_planted_no_use_after_scope_report():
    """Where gcc (12) sees a stack variable written after its scope ended, it plants an
    unconditional call of one of ASan's recovering reports, __asan_report_*_noabort, which
    the library's checks never call otherwise (-fno-sanitize-recover). A loop that leaves
    the block of its vector locals before their declarations makes one (attention_kernel_t.h
    says how), which would stop make sanitize on AVX-512 machines only, where that copy
    runs: the library's imports show it on any CPU."""
    from stage3_native import _native
    result = subprocess.run(["nm", "-D", "--undefined-only", _native.__file__], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if "_noabort" in line] == []
