"""Device "cuda"'s reductions, softmax, cross-entropy and layer norm (cuda/reduce.cu,
softmax.cu, layernorm.cu) against numpy and device "cpu", on every device (the kernels of
each; "cuda" where there is a GPU). What the shared op table does not reach:
every dtype, views that are transposed, stepped or broadcast, sizes that cross the 256
threads of a block and the grid-stride loops, both kernel shapes (a block per row, a
thread per row) and the split into parts, NaN and infinities, ties, empty dimensions, bad
targets. Float kernels must run natively: a fallback to the python backend fails the test."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage3_native  # noqa: F401  (registers "cuda" and "cuda-emu")
from stage2_tensor import backend, dtypes
from stage2_tensor.tensor import Tensor

from .engines import device_params

pytestmark = pytest.mark.stage3

DEVICES = device_params()
DTYPES = {np.float32: dtypes.float32, np.float64: dtypes.float64, np.int32: dtypes.int32,
          np.int64: dtypes.int64, np.bool_: dtypes.bool_}
TOLERANCE = {np.float32: {"rtol": 2e-6, "atol": 1e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-12}}


def float32_lanes(device):
    """Whether `device` adds float32 sums in float lanes: device "cpu" (and "cpu:lazy", which
    runs its kernels) adds blocks of TG_SUM_BLOCK elements so, then the blocks in double
    (csrc/reduce.c); python and the CUDA kernels add every element in double."""
    return device.split(":")[0] == "cpu"


@pytest.fixture(autouse=True)
def natively(monkeypatch):
    """Every kernel these tests call runs on the device itself, never on the python backend."""
    def fallback(be, name, args, out_dtype):
        raise AssertionError(f"{name} fell back to the python backend on {be.name}")
    monkeypatch.setattr(backend, "on_python", fallback)


def ran(device, result):
    """`result` once it has run: device "cpu:lazy" runs a recorded call when a value is
    read, and raises an error of the data then."""
    if device == "cpu:lazy":
        from stage3_native import lazy
        lazy.realize_all(backend.get("cpu"))
    return result


def on(device, array):
    """A contiguous tensor of the array's values on device (through "cpu", as bytes; a 0-d
    array stays 0-d, where np.ascontiguousarray would make it 1-d)."""
    return tg.from_numpy(np.array(array, order="C"), device="cpu").to(device)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        return rng.random(shape) < 0.3
    if dtype in (np.int32, np.int64):
        return rng.integers(-50, 50, shape).astype(dtype)       # ties are frequent
    return rng.standard_normal(shape).astype(dtype)


# ---- layouts: the same values as a view of another shape of memory -------------------------
def contiguous(device, a):
    return on(device, a)


def transposed(device, a):
    """Every dimension reversed in memory: strides increase from the first dimension."""
    order = tuple(reversed(range(a.ndim)))
    return on(device, a.transpose(order)).permute(*order)


def stepped(device, a):
    """Every other element of a tensor twice as long in its last dimension."""
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    wide[..., ::2] = a
    return on(device, wide)[..., ::2]


LAYOUTS = [contiguous, transposed, stepped]


# ---- reductions ---------------------------------------------------------------------------
def kernel_reduce(device, op, t, dims, dtype):
    """backend.reduce of the tensor's view, as numpy: the kernel's own dtype handling."""
    out = backend.get(device).reduce(op, t.as_view(), dims, dtype)
    shape = tuple(s for d, s in enumerate(t.shape) if d not in dims)
    return Tensor.from_buffer(out, shape, dtype, device).numpy()


def numpy_reduce(op, a, dims):
    """The reference: the reduced dims moved last and flattened (argmax: the row-major index
    within them, the first on ties, the first NaN)."""
    kept = [d for d in range(a.ndim) if d not in dims]
    rows = a.transpose(kept + list(dims)).reshape([a.shape[d] for d in kept] + [-1])
    if op == "sum":
        return rows.sum(-1, dtype=np.float64 if a.dtype.kind == "f" else np.int64)
    return getattr(rows, op)(-1)


def result_dtype(op, dtype):
    if op.startswith("arg") or (op == "sum" and not dtype.is_floating_point):
        return dtypes.int64
    return dtype


# (shape, dims): each picks a path of reduce.cu (its header explains them)
REDUCTIONS = [
    ((5, 300), (1,)),          # a block per output, rows longer than a block
    ((5000,), (0,)),           # one output: split into parts, then finish
    ((600, 40), (0,)),         # a thread per output down columns, in parts, grid-stride loop
    ((300, 7), (1,)),          # short rows: a thread per output
    ((4, 50, 30), (0, 2)),     # two reduced dimensions, not adjacent
    ((4, 50, 30), (1, 2)),
    ((3, 4, 5), ()),           # no dimension reduced: each output is one element
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("np_dtype", list(DTYPES), ids=lambda d: d.__name__)
@pytest.mark.parametrize("device", DEVICES)
def test_reductions_match_numpy_for_every_dtype_layout_and_path(device, np_dtype, layout):
    dtype = DTYPES[np_dtype]
    for shape, dims in REDUCTIONS:
        a = sample(shape, np_dtype, seed=len(shape))
        t = layout(device, a)
        for op in backend.REDUCE_OPS:
            got = kernel_reduce(device, op, t, dims, result_dtype(op, dtype))
            want = numpy_reduce(op, a, dims)
            assert got.shape == want.shape, (op, shape, dims)
            if op == "sum" and dtype.is_floating_point:            # another order of additions
                tolerance = dict(TOLERANCE[np_dtype])
                if np_dtype is np.float32 and float32_lanes(device):   # each float addition rounds
                    tolerance["atol"] = np.finfo(np.float32).eps * np.abs(a).sum()
                np.testing.assert_allclose(got, want, **tolerance, err_msg=f"{op} {shape} {dims}")
            else:
                np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{op} {shape} {dims}")


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_of_a_broadcast_view(device):
    """A stride-0 dimension, reduced and kept."""
    row = sample((1, 300), np.float64)
    t = on(device, row).expand(4, 300)
    a = np.broadcast_to(row, (4, 300))
    np.testing.assert_allclose(t.sum(0).numpy(), a.sum(0), rtol=1e-15)
    np.testing.assert_allclose(t.sum(1).numpy(), a.sum(1), rtol=1e-13)
    np.testing.assert_array_equal(t.argmax(0).numpy(), np.zeros(300))     # all tie: the first
    np.testing.assert_array_equal(t.argmin(1).numpy(), a.argmin(1))


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("device", DEVICES)
def test_extremes_take_the_first_index_and_nan_wins(device, np_dtype):
    """Ties across threads and parts go to the first index; NaN propagates through max and
    min, and argmax/argmin point at the first NaN, as numpy (and the CPU) do."""
    n = 5000                                      # parts of one output, and threads within each
    a = np.zeros((3, n), np_dtype)
    a[0, [4000, 7, 300]] = 2.0                    # a tie: the first (7) wins
    a[1, [4100, 2500]] = np.nan                   # NaN beats everything: the first NaN
    a[1, 3] = 5.0
    a[2, :] = -1.0                                # all equal: index 0
    for layout in LAYOUTS:
        t = layout(device, a)
        np.testing.assert_array_equal(t.argmax(1).numpy(), [7, 2500, 0])
        np.testing.assert_array_equal(t.argmin(1).numpy(), np.argmin(a, 1))
        np.testing.assert_array_equal(t.max(1).values.numpy(), [2.0, np.nan, -1.0])
        np.testing.assert_array_equal(t.min(1).values.numpy(), [0.0, np.nan, -1.0])
        assert math.isnan(t.sum().item()) and math.isnan(t.max().item())
        assert t.T.argmax(0).numpy().tolist() == [7, 2500, 0]      # the same, down columns


@pytest.mark.parametrize("device", DEVICES)
def test_sums_of_integers_are_exact_beyond_float_precision(device):
    a = np.full(2000, 2**52 + 1, np.int64)                       # the sum below 2^63: no overflow
    assert on(device, a).sum().item() == int(a.sum())
    b = np.arange(2000, dtype=np.int32).reshape(40, 50)
    assert on(device, b).sum(0).dtype is tg.int64                 # int32 sums give int64
    np.testing.assert_array_equal(on(device, b).T.sum(1).numpy(), b.sum(0))
    flags = sample((70, 300), np.bool_)
    np.testing.assert_array_equal(on(device, flags).sum(1).numpy(), flags.sum(1))


@pytest.mark.parametrize("device", DEVICES)
def test_empty_dimensions(device):
    """A sum over nothing is 0; a max over nothing raises the CPU's error."""
    t = on(device, np.zeros((3, 0)))
    np.testing.assert_array_equal(t.sum(1).numpy(), [0.0, 0.0, 0.0])
    assert t.sum(0).shape == (0,)
    for op in ("max", "argmin"):
        with pytest.raises(RuntimeError) as on_device:
            ran(device, backend.get(device).reduce(op, t.as_view(), (1,), dtypes.float64))
        with pytest.raises(RuntimeError) as on_cpu:
            backend.get("cpu").reduce(op, t.to("cpu").as_view(), (1,), dtypes.float64)
        assert str(on_device.value) == str(on_cpu.value)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_sums_do_not_stop_at_2_to_the_24(device):
    """2^24 + 1 + 1 + ... : a float accumulator would stop at 2^24. In float lanes only the
    ones of the block that holds 2^24 may be lost (at most TG_SUM_BLOCK, 1024)."""
    a = np.ones(3001, np.float32)
    a[0] = 2.0**24
    got = on(device, a).sum().item()
    if float32_lanes(device):
        assert 2.0**24 + 3000 - 1024 <= got <= 2.0**24 + 3000
    else:
        assert got == 2.0**24 + 3000


# ---- softmax --------------------------------------------------------------------------------
def numpy_softmax(a, dim, log):
    a = a.astype(np.float64)
    shifted = a - a.max(dim, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(dim, keepdims=True))
    return shifted - log_sum if log else np.exp(shifted - log_sum)


# (shape, dim): a block per row (long rows, also strided), a thread per row (short rows, and
# rows whose elements are a warp or more apart)
SOFTMAXES = [((4, 300), 1), ((300, 7), 1), ((3, 40, 33), 1), ((5, 300, 3), 1), ((700, 3), 0), ((2, 3, 600), 2)]


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("device", DEVICES)
def test_softmax_and_its_backward_match_numpy(device, np_dtype, log):
    be = backend.get(device)
    for shape, dim in SOFTMAXES:
        a = sample(shape, np_dtype) * 3
        for layout in (contiguous, transposed):
            x = layout(device, a)
            y = x.log_softmax(dim) if log else x.softmax(dim)
            want = numpy_softmax(a, dim, log)
            np.testing.assert_allclose(y.numpy(), want, **TOLERANCE[np_dtype], err_msg=f"{shape} {dim}")
        g = sample(shape, np_dtype, seed=1)
        y = want.astype(np_dtype)
        s = g.sum(dim, keepdims=True) if log else (g * y).sum(dim, keepdims=True, dtype=np.float64)
        want_dx = g - np.exp(y.astype(np.float64)) * s if log else y * (g - s)
        grad = transposed(device, g)                              # a non-contiguous upstream gradient
        dx = be.softmax_backward(grad.as_view(), on(device, y).as_view(), dim, log, DTYPES[np_dtype])
        got = Tensor.from_buffer(dx, shape, DTYPES[np_dtype], device).numpy()
        np.testing.assert_allclose(got, want_dx, **TOLERANCE[np_dtype], err_msg=f"backward {shape} {dim}")


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("size", [5, 300], ids=["thread_rows", "block_rows"])
@pytest.mark.parametrize("device", DEVICES)
def test_softmax_of_huge_infinite_and_nan_logits_agrees_with_cpu(device, size, log):
    """Huge logits do not overflow; -inf is probability 0; a row of -inf, or one holding NaN
    or +inf, is all NaN, on every device alike (and the other rows are untouched)."""
    a = sample((6, size), np.float64) * 1e4
    a[1, 2] = -np.inf
    a[2, :] = -np.inf
    a[3, 1] = np.nan
    a[4, 3] = np.inf
    want = on("cpu", a).softmax(1) if not log else on("cpu", a).log_softmax(1)
    got = on(device, a).softmax(1) if not log else on(device, a).log_softmax(1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-300)
    assert np.isnan(got.numpy()[2:5]).all() and not np.isnan(got.numpy()[[0, 1, 5]]).any()
    assert got.numpy()[1, 2] == (-np.inf if log else 0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_of_empty_dimensions(device):
    assert on(device, np.zeros((3, 0))).softmax(1).shape == (3, 0)
    assert on(device, np.zeros((0, 4))).softmax(1).shape == (0, 4)


# ---- cross-entropy ---------------------------------------------------------------------------
@pytest.mark.parametrize("ignored", [None, -100, 3], ids=["none_ignored", "ignore_default", "ignore_a_class"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(300, 10), (70, 300)], ids=["thread_rows", "block_rows"])
@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_and_its_gradient_match_numpy(device, shape, np_dtype, reduction, ignored):
    """Rows whose target is ignore_index (-100, or a class) have loss and gradient 0, and the
    mean is over the others: the kernels skip them, as numpy's mask does here."""
    n, c = shape
    a = sample(shape, np_dtype) * 4
    targets = np.random.default_rng(5).integers(0, c, n)
    if ignored is not None:
        targets[1::4] = ignored
    kept = targets != ignored
    x = transposed(device, a).requires_grad_()
    loss = F.cross_entropy(x, on(device, targets), reduction=reduction, ignore_index=ignored)
    log_p = numpy_softmax(a, 1, log=True)
    losses = np.where(kept, -log_p[np.arange(n), np.where(kept, targets, 0)], 0.0)
    want = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / kept.sum()}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), want, **TOLERANCE[np_dtype])
    upstream = sample((n,), np_dtype, seed=2) if reduction == "none" else np.array(1.5, np_dtype)
    loss.backward(on(device, upstream))
    onehot = np.eye(c)[np.where(kept, targets, 0)]
    scale = upstream[:, None] if reduction == "none" else upstream / (kept.sum() if reduction == "mean" else 1)
    want_grad = (np.exp(log_p) - onehot) * scale * kept[:, None]
    np.testing.assert_allclose(x.grad.numpy(), want_grad, **TOLERANCE[np_dtype])
    if ignored is not None:
        assert 0 < kept.sum() < n and not x.grad.numpy()[~kept].any()     # exactly 0, not tiny


@pytest.mark.parametrize("c", [10, 300], ids=["thread_rows", "block_rows"])
@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_rejects_the_first_bad_target_as_the_cpu_does(device, c):
    logits = sample((40, c), np.float32)
    for bad in ([(9, c), (5, -1)], [(30, c + 7)], [(0, -2), (39, c)]):
        targets = np.random.default_rng(0).integers(0, c, 40)
        for position, value in bad:
            targets[position] = value
        messages = []
        for where in (device, "cpu"):
            with pytest.raises(IndexError) as err:
                F.cross_entropy(on(where, logits), on(where, targets), reduction="sum").item()
            messages.append(str(err.value))
        assert messages[0] == messages[1]
        first = min(bad)
        assert f"target {first[1]} at position {first[0]} " in messages[0]
    ok = F.cross_entropy(on(device, logits), on(device, np.full(40, c - 1)))    # still usable afterwards
    assert math.isfinite(ok.item())


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_with_ignore_index_and_huge_logits(device):
    a = sample((50, 40), np.float64) * 1e4                      # e^(1e4) would overflow
    targets = np.random.default_rng(1).integers(0, 40, 50)
    targets[::3] = -100
    got = F.cross_entropy(on(device, a), on(device, targets), ignore_index=-100)
    want = F.cross_entropy(on("cpu", a), on("cpu", targets), ignore_index=-100)
    assert math.isfinite(got.item())
    assert got.item() == pytest.approx(want.item(), rel=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_of_no_rows(device):
    """The mean of no losses is NaN and their sum 0, as on the CPU."""
    logits, targets = on(device, np.zeros((0, 5))), on(device, np.zeros(0, np.int64))
    assert math.isnan(F.cross_entropy(logits, targets).item())
    assert F.cross_entropy(logits, targets, reduction="sum").item() == 0.0
    assert F.cross_entropy(logits, targets, reduction="none").shape == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_of_only_ignored_rows(device):
    """Every target ignored: the mean is NaN (0 / 0, as PyTorch's), the sum 0, and the
    gradient 0 either way."""
    x = on(device, sample((6, 40), np.float32)).requires_grad_()
    targets = on(device, np.full(6, -100))
    loss = F.cross_entropy(x, targets)
    assert math.isnan(loss.item())
    loss.backward()
    assert not x.grad.numpy().any()
    assert F.cross_entropy(x, targets, reduction="sum").item() == 0.0


# ---- layer norm -------------------------------------------------------------------------------
def numpy_layer_norm(x, w, b, g, eps=1e-5):
    """out, and the gradients (dx, dw, db) of sum(out * g), in float64."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    n = x.shape[-1]
    w = np.ones(n) if w is None else w.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    out = xhat * w + (0 if b is None else b)
    gw = g * w
    dx = rstd * (gw - gw.mean(-1, keepdims=True) - xhat * (gw * xhat).mean(-1, keepdims=True))
    rows = tuple(range(x.ndim - 1))
    return out, dx, (g * xhat).sum(rows), g.sum(rows)


@pytest.mark.parametrize("affine", ["weight_bias", "none", "bias_only", "weight_only"])
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(70, 300), (300, 20), (3, 25, 40)], ids=["block_rows", "thread_rows", "3d"])
@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_and_its_gradients_match_numpy(device, shape, np_dtype, affine):
    n = shape[-1]
    a = (sample(shape, np_dtype) * 3 + 1).astype(np_dtype)
    w = sample((n,), np_dtype, seed=1) if "weight" in affine else None
    b = sample((n,), np_dtype, seed=2) if "bias" in affine else None
    g = sample(shape, np_dtype, seed=3)
    x = transposed(device, a).requires_grad_()
    params = [None if p is None else on(device, p).requires_grad_() for p in (w, b)]
    out = F.layer_norm(x, n, *params)
    (out * on(device, g)).sum().backward()
    want_out, want_dx, want_dw, want_db = numpy_layer_norm(a, w, b, g)
    tol = {"rtol": 2e-5, "atol": 2e-5} if np_dtype is np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    np.testing.assert_allclose(out.detach().numpy(), want_out, **tol)
    np.testing.assert_allclose(x.grad.numpy(), want_dx, **tol)
    if w is not None:
        np.testing.assert_allclose(params[0].grad.numpy(), want_dw, **tol)
    if b is not None:
        np.testing.assert_allclose(params[1].grad.numpy(), want_db, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_statistics_and_parameter_gradients_agree_with_cpu(device):
    """mean and rstd per row, and dweight/dbias summed over many rows in chunks: float32
    within a few ulps of the CPU's, and the same bits on a second run (no atomics)."""
    rows, n = 200, 48
    a = sample((rows, n), np.float32) * 2 + 3
    w, b, g = sample((n,), np.float32, 1), sample((n,), np.float32, 2), sample((rows, n), np.float32, 3)
    results = {}
    for where in (device, "cpu", device):
        be = backend.get(where)
        x, weight, bias, grad = (on(where, v).as_view() for v in (a, w, b, g))
        out, mean, rstd = be.layer_norm(x, weight, bias, 1e-5, dtypes.float32)
        stats = [backend.View(buffer, (rows,), (1,), 0, dtypes.float32) for buffer in (mean, rstd)]
        dx, dw, db = be.layer_norm_backward(grad, x, *stats, weight, dtypes.float32)
        shapes = ((rows, n), (rows,), (rows,), (rows, n), (n,), (n,))
        got = [Tensor.from_buffer(buffer, shape, dtypes.float32, where).numpy()
               for buffer, shape in zip((out, mean, rstd, dx, dw, db), shapes)]
        if where in results:
            for first, second in zip(results[where], got):
                np.testing.assert_array_equal(first, second)       # the same bits, run to run
        results[where] = got
    for mine, cpu in zip(results[device], results["cpu"]):
        np.testing.assert_allclose(mine, cpu, rtol=1e-5, atol=1e-5)
