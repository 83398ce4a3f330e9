"""F.linear_cross_entropy (nn/functional.py, linear_cross_entropy.py): cross_entropy of
linear(x, weight, bias) without the logits. Device "cpu" runs it as a kernel pair over
vocabulary chunks (csrc/linear_cross_entropy.c), which "cpu:lazy" records; the devices
without the kernels run the composite. Both against numpy in float64, gradients by central
differences, the kernel against the composite in float32 and float64 on every device with
it, with the vocabulary cut into several chunks and the rows into several tiles (the
backend's ``linear_cross_entropy_blocks``), and every bad argument refused before a kernel
runs. The op table (optable.py) has it too, on every engine. The SIMD levels, threads and
block sizes are device "cpu"'s."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F

from .engines import DEVICES, device_params, engine_params, engines_on
from .gradcheck import gradcheck

ENGINES_ = engine_params(engines_on(*DEVICES))
FUSED = device_params(kernel="linear_cross_entropy")
LANES = 16                      # the kernel's partial sums per row (linear_cross_entropy.c)


@pytest.fixture
def blocks(request, monkeypatch):
    """Device "cpu"'s (columns per chunk, rows per tile) for the test ("cpu:lazy" runs its
    kernels): small ones cut V = 300 into 128 + 128 + 44 columns and 64 rows into 4 tiles;
    (0, 0) is the kernel's own."""
    pytest.importorskip("stage3_native")
    be = tg.backend.get("cpu")
    monkeypatch.setattr(be, "linear_cross_entropy_blocks", request.param, raising=False)
    return request.param


def np_loss(x, w, b, target, ignore_index=-100, reduction="mean"):
    """numpy's answer in float64, and each row's bound on |z| terms (for float32 tolerances)."""
    z = x @ w.T + (0 if b is None else b)
    m = z.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))[:, 0]
    kept = target != ignore_index
    losses = np.where(kept, lse - z[np.arange(len(x)), np.where(kept, target, 0)], 0.0)
    terms = np.abs(x) @ np.abs(w).T + (0 if b is None else np.abs(b))   # sum_k |x_ik w_jk| + |b_j|
    if reduction == "none":
        return losses, terms.max(axis=1)
    total = losses.sum()
    return (total / kept.sum() if reduction == "mean" else total), terms.max()


def float32_bound(terms, c, v):
    """How far the float32 kernel's loss may be from float64's: each logit is a sum of c
    products, within c ulps of its terms' magnitude (twice: lse and the target's logit);
    e^(z - max) is within a few ulps, and the row's sum of v of them, kept in LANES float
    partial sums finished in double, within v / LANES ulps more; log and the final rounding
    a few more."""
    eps = np.finfo(np.float32).eps
    return eps * (2 * (c + 1) * terms + 16 + v / LANES)


def within(got, want, bound):
    """|got - want| <= bound element by element (bound: one per row, or one for all)."""
    err = np.abs(np.asarray(got, dtype=np.float64) - want)
    assert np.all(err <= bound), f"off by {err.max()}, more than the bound {np.min(bound)}"


def tensors(device, dtype, x, w, b, target, grad=False):
    make = [tg.tensor(a.tolist(), dtype=dtype, device=device, requires_grad=grad) for a in (x, w)]
    bias = None if b is None else tg.tensor(b.tolist(), dtype=dtype, device=device, requires_grad=grad)
    return make[0], make[1], bias, tg.tensor(target.tolist(), device=device)


def problem(n, c, v, seed=0, bias=True, scale=1.0):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(n, c)) * scale, rng.normal(size=(v, c))
    b = rng.normal(size=v) if bias else None
    target = rng.integers(0, v, size=n)
    target[1::3] = -100                               # every third row ignored
    if n > 2:
        target[2] = v - 1                             # the last class, at the last chunk's end
    return x, w, b, target


# ---- forward against numpy ------------------------------------------------------------------
@pytest.mark.parametrize("blocks", [(0, 0), (128, 16)], indirect=True, ids=["own_blocks", "small_blocks"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("c", [3, 32])
@pytest.mark.parametrize("v", [1, 7, 300])
@pytest.mark.parametrize("n", [1, 5, 64])
@pytest.mark.parametrize("device", FUSED)
def test_kernel_matches_numpy(device, n, v, c, dtype, blocks):
    """Every reduction, at sizes from one row and one class to several chunks and tiles (V =
    300 with 128-column chunks: the last holds 44). float64 to 1e-12; float32 within the
    bound of its roundings."""
    x, w, b, target = problem(n, c, v, seed=n * 1000 + v + c)
    if v == 1:
        target[target >= 0] = 0
    dt = getattr(tg, dtype)
    xt, wt, bt, tt = tensors(device, dt, x, w, b, target)
    for reduction in ("mean", "sum", "none"):
        got = F.linear_cross_entropy(xt, wt, tt, bias=bt, reduction=reduction)
        assert got.dtype is dt and got.shape == ((n,) if reduction == "none" else ())
        want, terms = np_loss(x, w, b, target, reduction=reduction)
        if dtype == "float64":
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
        else:
            within(got.numpy(), want, (n if reduction == "sum" else 1) * float32_bound(terms, c, v))


@pytest.mark.parametrize("engine", ENGINES_)
def test_every_device_matches_numpy(engine):
    """The composite (the devices without the kernels) and the kernels give numpy's loss."""
    x, w, b, target = problem(6, 4, 9, seed=5)
    xt, wt, bt = (engine.leaf(a) for a in (x, w, b))
    tt = tg.tensor(target.tolist(), device=xt.device)
    for reduction in ("mean", "sum", "none"):
        got = engine.value(F.linear_cross_entropy(xt, wt, tt, bias=bt, reduction=reduction))
        np.testing.assert_allclose(got, np_loss(x, w, b, target, reduction=reduction)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", FUSED)
def test_huge_logits_do_not_overflow_float32(device):
    """Logits of several thousand: e^z would overflow float32, e^(z - max) does not."""
    x, w, b, target = problem(40, 8, 300, seed=3, scale=400.0)
    xt, wt, bt, tt = tensors(device, tg.float32, x, w, b, target)
    got = F.linear_cross_entropy(xt, wt, tt, bias=bt, reduction="none").numpy()
    want, terms = np_loss(x, w, b, target, reduction="none")
    assert np.isfinite(got).all() and terms.max() > 1000
    within(got, want, float32_bound(terms, 8, 300))


# ---- gradients ------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES_)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradients_match_central_differences(engine, reduction):
    """dx, dweight and dbias in float64 on every device, ignored rows included."""
    x, w, b, target = problem(5, 3, 7, seed=11)
    t = tg.tensor(target.tolist(), device=engine.leaf(x).device)
    gradcheck(engine, lambda x, w, b: F.linear_cross_entropy(x, w, t, bias=b, reduction=reduction), [x, w, b])


@pytest.mark.parametrize("blocks", [(16, 8)], indirect=True)
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("device", FUSED)
def test_gradients_across_chunks_and_tiles(device, blocks, reduction):
    """The kernel's own chunking in the backward pass: V = 40 as 16 + 16 + 8 columns, N = 20
    as 8 + 8 + 4 rows, so dW is written by one tile and added to by the others, and dx sums
    over every chunk."""
    x, w, b, target = problem(20, 3, 40, seed=12)
    t = tg.tensor(target.tolist(), device=device)
    gradcheck(*engines_on(device), lambda x, w, b: F.linear_cross_entropy(x, w, t, bias=b, reduction=reduction), [x, w, b])


@pytest.mark.parametrize("blocks", [(0, 0), (128, 16)], indirect=True, ids=["own_blocks", "small_blocks"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("device", FUSED)
def test_kernel_equals_the_composite(device, dtype, bias, blocks):
    """The fused pair against linear + cross_entropy on the same device: the loss and every
    gradient. float64 to 1e-12; float32 within float32 noise (the two sum in different
    orders: the gradients' magnitudes times a few hundred ulps)."""
    x, w, b, target = problem(64, 32, 300, seed=4, bias=bias)
    dt = getattr(tg, dtype)
    results = []
    for fused in (True, False):
        xt, wt, bt, tt = tensors(device, dt, x, w, b, target, grad=True)
        if fused:
            loss = F.linear_cross_entropy(xt, wt, tt, bias=bt)
            assert type(loss.grad_fn).__name__ == "LinearCrossEntropy"
        else:
            loss = F.cross_entropy(F.linear(xt, wt, bt), tt)
        (loss * 3.0).backward()
        results.append([loss.detach().numpy()] + [p.grad.numpy() for p in (xt, wt, bt) if p is not None])
    tol = 1e-12 if dtype == "float64" else 300 * np.finfo(np.float32).eps
    for fused, plain in zip(*results):
        np.testing.assert_allclose(fused, plain, rtol=0, atol=tol * max(1.0, np.abs(plain).max()))


@pytest.mark.parametrize("blocks", [(128, 16)], indirect=True)
def test_float32_kernel_at_every_simd_level(blocks, simd_level):
    """The vectorized float rows (the logsumexp fold and the gradient's exponentials: a
    copy per SIMD level, csrc/simd.h) against numpy's loss, within the float32 bound, and
    against float64's gradients, within float32 noise; 300 columns make 16-wide bodies and
    tails in every chunk (128, 128, 44)."""
    x, w, b, target = problem(37, 32, 300, seed=13)
    xt, wt, bt, tt = tensors("cpu", tg.float32, x, w, b, target, grad=True)
    loss = F.linear_cross_entropy(xt, wt, tt, bias=bt, reduction="none")
    want, terms = np_loss(x, w, b, target, reduction="none")
    within(loss.detach().numpy(), want, float32_bound(terms, 32, 300))
    loss.sum().backward()
    exact = tensors("cpu", tg.float64, x, w, b, target, grad=True)
    F.cross_entropy(F.linear(exact[0], exact[1], exact[2]), exact[3], reduction="sum").backward()
    for got, ref in zip((xt, wt, bt), exact[:3]):
        ref = ref.grad.numpy()
        np.testing.assert_allclose(got.grad.numpy(), ref, rtol=0, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("device", FUSED)
def test_only_what_needs_a_gradient_gets_one(device):
    """A frozen weight gets none, and a frozen x none either (the kernel skips dx or dW)."""
    x, w, b, target = problem(6, 4, 9, seed=6)
    xt, wt, bt, tt = tensors(device, tg.float64, x, w, b, target)
    wt.requires_grad_()
    F.linear_cross_entropy(xt, wt, tt, bias=bt).backward()
    assert xt.grad is None and bt.grad is None and wt.grad is not None
    want = tensors(device, tg.float64, x, w, b, target, grad=True)
    F.linear_cross_entropy(want[0], want[1], tt, bias=want[2]).backward()
    np.testing.assert_allclose(wt.grad.numpy(), want[1].grad.numpy(), rtol=1e-13)


@pytest.mark.parametrize("blocks", [(0, 0), (128, 64)], indirect=True, ids=["own_blocks", "small_blocks"])
def test_threads_change_no_bit_of_the_loss_and_dweight(blocks):
    """The forward pass splits rows (each row's sums on one thread), the backward pass chunks
    (each chunk's dW rows on one thread): the same bits on 1 or 2 threads. dx sums the
    threads' copies, so only its rounding may differ. Both against the float64 composite
    (small blocks: 5 chunks, 2 and 3 per thread, 4 tiles of rows)."""
    stage3_native = pytest.importorskip("stage3_native")
    x, w, b, target = problem(256, 32, 600, seed=8)       # above the kernel's threading minimum
    saved, results = stage3_native.get_num_threads(), []
    try:
        for threads in (1, 2):
            stage3_native.set_num_threads(threads)
            xt, wt, bt, tt = tensors("cpu", tg.float32, x, w, b, target, grad=True)
            loss = F.linear_cross_entropy(xt, wt, tt, bias=bt)
            loss.backward()
            results.append([loss.detach().numpy(), wt.grad.numpy(), bt.grad.numpy(), xt.grad.numpy()])
    finally:
        stage3_native.set_num_threads(saved)
    for one, two in zip(results[0][:3], results[1][:3]):
        np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=0, atol=1e-6 * np.abs(results[0][3]).max())
    xt, wt, bt, tt = tensors("cpu", tg.float64, x, w, b, target, grad=True)
    loss = F.cross_entropy(F.linear(xt, wt, bt), tt)
    loss.backward()
    for got, want in zip(results[1], [loss.detach().numpy()] + [p.grad.numpy() for p in (wt, bt, xt)]):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * max(1.0, np.abs(want).max()))


# ---- ignored rows ---------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES_)
def test_all_rows_ignored(engine):
    """As cross_entropy and PyTorch: the mean is nan (0 / 0), the sum 0, every row 0, and
    the gradients 0."""
    x, w, b, _ = problem(4, 3, 5, seed=9)
    xt, wt, bt = (engine.leaf(a) for a in (x, w, b))
    t = tg.tensor([-100] * 4, device=xt.device)
    loss = F.linear_cross_entropy(xt, wt, t, bias=bt)
    assert np.isnan(engine.value(loss))
    engine.backward(loss, np.array(1.0))
    assert not any(engine.grad(p).any() for p in (xt, wt, bt))
    assert engine.value(F.linear_cross_entropy(xt, wt, t, bias=bt, reduction="sum")) == 0.0
    assert not engine.value(F.linear_cross_entropy(xt, wt, t, reduction="none")).any()


@pytest.mark.parametrize("device", FUSED)
def test_no_rows(device):
    """N = 0: the mean is nan, the sum 0, and W and b get zero gradients."""
    _, wt, bt, _ = tensors(device, tg.float32, np.zeros((1, 3)), np.ones((4, 3)), np.ones(4), np.zeros(1), grad=True)
    xt = tg.from_numpy(np.zeros((0, 3), dtype=np.float32)).to(device).requires_grad_()
    tt = tg.from_numpy(np.zeros(0, dtype=np.int64)).to(device)
    assert np.isnan(F.linear_cross_entropy(xt, wt, tt, bias=bt).item())
    F.linear_cross_entropy(xt, wt, tt, bias=bt, reduction="sum").backward()
    assert xt.grad.shape == (0, 3) and not wt.grad.numpy().any() and not bt.grad.numpy().any()


# ---- bad arguments, refused before any kernel --------------------------------------------------
def _args(device="cpu", **change):
    x, w, b, target = problem(4, 3, 5, seed=10)
    args = dict(zip(("x", "weight", "bias", "target"), tensors(device, tg.float32, x, w, b, target)))
    args.update(change)
    return args


BAD = [
    (dict(target=tg.tensor([0, 1, 5, 2], device="cpu")), IndexError,
     r"target 5 at position 2 is not a class index: the logits have 5 classes \(0 to 4\)"),
    (dict(target=tg.tensor([0, -3, 1, 2], device="cpu")), IndexError, "target -3 at position 1"),
    (dict(target=tg.tensor([0.0, 1.0, 2.0, 3.0], device="cpu")), TypeError,
     r"expected class indices \(an int64 tensor of shape \(4,\)\) as target, got a float32 tensor"),
    (dict(target=tg.tensor([[0, 1, 2, 3]], device="cpu")), ValueError,
     r"needs a target of shape \(4,\), one class per row, got \(1, 4\)"),
    (dict(x=tg.zeros(2, 2, 3, device="cpu")), ValueError, r"expected x of shape \(N, C\) and weight of shape \(V, C\)"),
    (dict(weight=tg.zeros(5, 4, device="cpu")), ValueError, r"weight of shape \(5, 4\)"),
    (dict(bias=tg.zeros(4, device="cpu")), ValueError, r"bias must have shape \(5,\), one per class, got \(4,\)"),
    (dict(weight=tg.zeros(5, 3, dtype=tg.float64, device="cpu")), TypeError, "x and weight need one dtype"),
    (dict(x=tg.zeros(4, 3, dtype=tg.int64, device="cpu")), TypeError, "expected a floating-point x, got int64"),
    (dict(target=[0, 1, 2, 3]), TypeError, "target must be a Tensor, got list"),
    (dict(target=tg.tensor([0, 1, 2, 3], device="python")), RuntimeError, "x is on device 'cpu' and target on 'python'"),
    (dict(reduction="average"), ValueError, "reduction must be 'mean', 'sum' or 'none', got 'average'"),
    (dict(ignore_index=True), TypeError, "ignore_index must be an int"),
    (dict(ignore_index=1.5), TypeError, "ignore_index must be an int"),
]


@pytest.mark.parametrize("change, error, message", BAD)
def test_bad_arguments_are_named_before_any_kernel_runs(change, error, message, monkeypatch):
    """Shapes, dtypes and devices are checked in Python; a target out of range by the
    kernel as it reads the targets, before it computes anything; and on the composite path
    by cross_entropy, with the same message."""
    from stage3_native.cpu import backend as cpu
    be = tg.backend.get("cpu")
    reached = []
    real = be.linear_cross_entropy
    monkeypatch.setattr(be, "linear_cross_entropy", lambda *a: reached.append(1) or real(*a))
    monkeypatch.setattr(be, "matmul", lambda *a: pytest.fail("a product ran before the checks"))
    calls = []
    monkeypatch.setattr(cpu, "kernel", lambda name, dtype, _k=cpu.kernel: calls.append(name) or _k(name, dtype))
    args = _args(**change)
    with pytest.raises(error, match=message):
        F.linear_cross_entropy(args.pop("x"), args.pop("weight"), args.pop("target"), **args)
    assert reached == ([1] if error is IndexError else [])    # only data errors reach the backend
    if error is IndexError:                                   # the composite refuses it too
        x, w, b, t = (_args(**change)[k] for k in ("x", "weight", "bias", "target"))
        with pytest.raises(IndexError, match=message):
            F.linear_cross_entropy(x.to("python"), w.to("python"), t.to("python"), bias=b.to("python"))


@pytest.mark.parametrize("device", FUSED)
def test_the_backend_contract_is_checked_too(device):
    """A backend method called directly with views that do not fit (contracts.py)."""
    be = tg.backend.get(device)
    x, w, b, t = (_args(device)[k] for k in ("x", "weight", "bias", "target"))
    with pytest.raises(ValueError, match=r"linear_cross_entropy: targets has shape \(4,\), expected \(3,\)"):
        be.linear_cross_entropy(x[:3].as_view(), w.as_view(), b.as_view(), t.as_view(), "mean", -100, tg.float32)
    with pytest.raises(ValueError, match=r"weight has shape \(5, 2\), expected \(V, 3\)"):
        be.linear_cross_entropy(x.as_view(), w[:, :2].as_view(), None, t.as_view(), "mean", -100, tg.float32)
