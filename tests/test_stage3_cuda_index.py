"""Device "cuda"'s gather and scatter-add (cuda/index.cu) and its fused kernels for the
squared-error loss, dropout and the optimizer updates (cuda/mse.cu, dropout.cu, optim.cu),
each against device "cpu": the same values, the same errors with the same messages, and no
fallback to the python kernels. Every device has these kernels and runs these tests ("cuda"
where a GPU is present; the CUDA devices' in make test-slow)."""
import logging

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage3_native  # noqa: F401  (registers "cuda" and "cuda-emu")
from stage2_tensor import backend

from .engines import device_params
from .optable import dropout_keep, dropout_seed

pytestmark = pytest.mark.stage3


DEVICES = device_params()
DTYPES = {"bool": tg.bool, "int32": tg.int32, "int64": tg.int64, "float32": tg.float32, "float64": tg.float64}
FLOATS = {"float32": (tg.float32, np.float32), "float64": (tg.float64, np.float64)}
# Views of a (4, 6, 5) tensor: every one reads other elements than its memory order
LAYOUTS = {
    "contiguous": lambda x: x,
    "permuted": lambda x: x.permute(2, 0, 1),                  # (5, 4, 6)
    "sliced": lambda x: x[1:, ::2, 1:4],                       # an offset and a step
    "broadcast": lambda x: x[:, :1, :].expand(4, 3, 5),        # stride 0 along dim 1
}


@pytest.fixture
def no_fallback(caplog, monkeypatch):
    """Fails the test if one of this file's kernels fell back to the python backend (each
    fallback is logged once per process: the record of those logged is emptied first)."""
    monkeypatch.setattr(backend, "_fallbacks_logged", set())
    with caplog.at_level(logging.WARNING, logger="tracegrad"):
        yield
    fallbacks = [r.getMessage() for r in caplog.get_records("call") if "falling back" in r.getMessage()]
    mine = [m for m in fallbacks if any(k in m for k in ("index_select", "index_add", "mse_loss", "dropout",
                                                           "sgd_update", "adam_update"))]
    assert not mine, mine


def values(array, dtype):
    """Values of a dtype from a float array: bools, exact large integers, floats."""
    if dtype is tg.bool:
        return array > 0
    if dtype is tg.int64:
        return (array * 1000).astype(np.int64) + 2 ** 53 + 1      # beyond double precision
    if dtype is tg.int32:
        return (array * 1000).astype(np.int32)
    return array


def ran(device, result):
    """`result` once it has run: device "cpu:lazy" runs a recorded call when a value is
    read, and raises an error of the data (an index out of range) then."""
    if device == "cpu:lazy":
        from stage3_native import lazy
        lazy.realize_all(backend.get("cpu"))
    return result


def on(device, array, dtype=tg.float64, requires_grad=False):
    return tg.tensor(np.asarray(array).tolist(), dtype=dtype, device=device, requires_grad=requires_grad)


def result(device, buffer, shape, dtype):
    return tg.Tensor.from_buffer(buffer, tuple(shape), dtype, device).numpy()


def select(device, array, dtype, layout, dim, idx):
    """The backend's index_select on a layout of the array, as numpy."""
    x = LAYOUTS[layout](on(device, array, dtype))
    index = on(device, idx, tg.int64)
    out = backend.get(device).index_select(x.as_view(), dim, index.as_view())
    return result(device, out, x.shape[:dim] + (len(idx),) + x.shape[dim + 1:], dtype)


# ---- index_select ------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_index_select_moves_every_dtype_from_any_view(device, dtype, layout, no_fallback):
    array = values(np.random.default_rng(0).normal(size=(4, 6, 5)), DTYPES[dtype])
    reference = LAYOUTS[layout](tg.tensor(array.tolist(), dtype=DTYPES[dtype])).numpy()
    for dim in range(3):
        size = reference.shape[dim]
        idx = [size - 1, 0, -1, 1, -size, size - 1]            # repeats and negatives
        got = select(device, array, DTYPES[dtype], layout, dim, idx)
        np.testing.assert_array_equal(got, np.take(reference, idx, axis=dim))
        np.testing.assert_array_equal(got, select("cpu", array, DTYPES[dtype], layout, dim, idx))


@pytest.mark.parametrize("device", DEVICES)
def test_index_select_of_many_rows_covers_the_whole_grid(device, no_fallback):
    """More output elements than the grid has threads (the emulator's two blocks, 512): the
    grid-stride loop must reach every one; an int32 index tensor is converted on the way."""
    table = np.random.default_rng(1).normal(size=(50, 33)).astype(np.float32)
    idx = np.random.default_rng(2).integers(-50, 50, size=(7, 11))
    w = on(device, table, tg.float32)
    for index_dtype in (tg.int64, tg.int32):
        got = w[on(device, idx, index_dtype)].numpy()
        np.testing.assert_array_equal(got, table[idx])
        assert got.shape == (7, 11, 33)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_indices_raise_cpus_error_naming_the_first(device):
    x = tg.arange(12, device=device).reshape(4, 3).float()
    for bad, value in (([0, 4, 1], 4), ([2, -5, 9], -5), ([[1, 2], [7, 0]], 7), ([1, 2, 3, -9, 8], -9)):
        messages = []
        for dev in ("cpu", device):
            with pytest.raises(IndexError) as err:
                tg.arange(12, device=dev).reshape(4, 3).float()[tg.tensor(bad, device=dev)].tolist()
            messages.append(str(err.value))
        assert messages[0] == messages[1] == f"index {value} is out of bounds for dimension 0 with size 4"
    be = backend.get(device)
    index = tg.tensor([0, 2, 3, 5], device=device).as_view()
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 1 with size 3$"):
        ran(device, be.index_select(x.T.T.as_view(), 1, index))
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 0 with size 3$"):
        ran(device, be.index_add((3, 2), 0, index, tg.ones(4, 2, device=device).as_view()))
    with pytest.raises(IndexError, match="^index -4 is out of bounds for dimension 1 with size 3$"):
        ran(device, be.index_add((2, 3), 1, tg.tensor([1, -4], device=device).as_view(),
                                 tg.ones(2, 2, device=device).as_view()))
    # rows with no element still have their indices checked
    empty = tg.zeros(0, 3, device=device)
    with pytest.raises(IndexError, match="^index 3 is out of bounds for dimension 1 with size 3$"):
        ran(device, be.index_select(empty.as_view(), 1, tg.tensor([0, 3], device=device).as_view()))
    # and the device still works after an error
    assert x[tg.tensor([-1, 0], device=device)].tolist() == [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]


# ---- index_add ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("device", DEVICES)
def test_index_add_accumulates_repeated_indices(device, dtype, no_fallback):
    """Many src rows into few output rows, over more elements than the grid has threads:
    every addition lands (atomicAdd), along the first, a middle and the last dimension."""
    tg_dtype = DTYPES[dtype]
    rng = np.random.default_rng(3)
    for shape, dim in (((5, 40), 0), ((3, 4, 20), 1), ((6, 30, 3), 2)):
        idx = rng.integers(-shape[dim], shape[dim], size=200)
        src_shape = shape[:dim] + (len(idx),) + shape[dim + 1:]
        src = values(rng.normal(size=src_shape), tg_dtype)
        if tg_dtype is tg.int64:
            src = src - 2 ** 53                                   # sums that fit in int64
        expected = np.zeros(shape, dtype=src.dtype)
        np.add.at(expected, (slice(None),) * dim + (idx,), src)
        results = []
        for dev in ("cpu", device):
            be = backend.get(dev)
            out = be.index_add(shape, dim, on(dev, idx, tg.int64).as_view(), on(dev, src, tg_dtype).as_view())
            results.append(result(dev, out, shape, tg_dtype))
        if tg_dtype.is_floating_point:                            # the order of additions differs
            rtol = 1e-5 if tg_dtype is tg.float32 else 1e-12
            np.testing.assert_allclose(results[1], expected, rtol=rtol, atol=rtol)
            np.testing.assert_allclose(results[1], results[0], rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(results[1], expected)
            np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_gradient_adds_up_repeated_rows(device, no_fallback):
    """weight[indices] forward and backward on a transposed table: the strided gather and
    the scatter-add of its gradient, against device "cpu"."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 9))
    idx = np.array([[3, 1, 3], [-3, 0, 3]])                       # row 3 four times
    upstream = rng.normal(size=(2, 3, 6))
    grads = []
    for dev in ("cpu", device):
        w = on(dev, a, requires_grad=True)
        out = w.T[on(dev, idx, tg.int64)]
        np.testing.assert_array_equal(out.detach().numpy(), a.T[idx])
        out.backward(on(dev, upstream))
        grads.append(w.grad.numpy())
    expected = np.zeros((9, 6))
    np.add.at(expected, idx, upstream)
    np.testing.assert_allclose(grads[1], expected.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)
    assert grads[1][:, 2].tolist() == [0.0] * 6 and grads[1][:, 3].tolist() != [0.0] * 6


@pytest.mark.parametrize("device", DEVICES)
def test_index_add_of_bools_falls_back_to_python_like_the_cpu_sum(device):
    be = backend.get(device)
    src = on(device, [[True, False], [True, True], [False, True]], tg.bool)
    out = be.index_add((2, 2), 0, on(device, [1, 1, 0], tg.int64).as_view(), src.as_view())
    assert result(device, out, (2, 2), tg.bool).tolist() == [[False, True], [True, True]]


# ---- the squared-error loss --------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:mse_loss. target size")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("device", DEVICES)
def test_mse_loss_and_gradient_match_cpu(device, dtype, no_fallback):
    """Every reduction, forward and backward, on sizes from one element to more than the
    grid's threads (several blocks' partial sums), a broadcast target included."""
    tg_dtype, np_dtype = FLOATS[dtype]
    rng = np.random.default_rng(5)
    rtol = 1e-6 if np_dtype is np.float32 else 1e-13
    for shape, target_shape in (((1,), (1,)), ((3, 7), (3, 7)), ((40, 70), (40, 70)), ((9, 130), (130,))):
        a, b = rng.normal(size=shape).astype(np_dtype), rng.normal(size=target_shape).astype(np_dtype)
        up = rng.normal(size=shape)
        for reduction in ("none", "sum", "mean"):
            got = {}
            for dev in ("cpu", device):
                x, y = on(dev, a, tg_dtype, requires_grad=True), on(dev, b, tg_dtype, requires_grad=True)
                loss = F.mse_loss(x, y, reduction=reduction)
                loss.backward(on(dev, up, tg_dtype) if reduction == "none" else None)
                got[dev] = loss.detach().numpy(), x.grad.numpy(), y.grad.numpy()
            diff = a.astype(np.float64) - b
            expected = {"none": diff ** 2, "sum": (diff ** 2).sum(), "mean": (diff ** 2).mean()}[reduction]
            np.testing.assert_allclose(got[device][0], expected, rtol=rtol, atol=rtol)
            for mine, cpus in zip(got[device], got["cpu"]):
                assert mine.dtype == np_dtype and mine.shape == cpus.shape
                np.testing.assert_allclose(mine, cpus, rtol=rtol, atol=rtol)
            if reduction == "none" and device != "python":   # element by element: the same bits
                # (python rounds the gradient 2 * diff * grad once, from double; y's sums a broadcast)
                for mine, cpus in zip(got[device][:2], got["cpu"][:2]):
                    np.testing.assert_array_equal(mine, cpus)


@pytest.mark.parametrize("device", DEVICES)
def test_mse_sum_is_the_same_bits_every_run(device, no_fallback):
    """The partial sums are added in an order the grid fixes (no atomics): a loss repeats."""
    rng = np.random.default_rng(6)
    a, b = on(device, rng.normal(size=5000)), on(device, rng.normal(size=5000))
    losses = {F.mse_loss(a, b, reduction="sum").item() for _ in range(3)}
    assert len(losses) == 1
    assert losses.pop() == pytest.approx(((a.numpy() - b.numpy()) ** 2).sum(), rel=1e-13)


# ---- dropout -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("device", DEVICES)
def test_dropout_drops_exactly_the_elements_cpu_drops(device, dtype, no_fallback):
    tg_dtype, np_dtype = FLOATS[dtype]
    rng = np.random.default_rng(7)
    x, upstream = rng.normal(size=(7, 150)), rng.normal(size=(7, 150))
    for p in (0.1, 0.5, 0.9):
        results = {}
        for dev in ("cpu", device):
            tg.seed(21)
            leaf = on(dev, x, tg_dtype, requires_grad=True)
            out = F.dropout(leaf.T, p)                            # a transposed view: row-major order
            out.backward(on(dev, upstream.T, tg_dtype))
            results[dev] = out.detach().numpy(), leaf.grad.numpy()
        keep = dropout_keep(dropout_seed(21), (150, 7), p)
        assert 0 < keep.sum() < keep.size
        np.testing.assert_array_equal(results[device][0] != 0, keep)
        for mine, cpus in zip(results[device], results["cpu"]):
            assert mine.dtype == np_dtype
            np.testing.assert_array_equal(mine, cpus)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_keeps_nan_and_takes_64_bit_seeds(device, no_fallback):
    be = backend.get(device)
    x = on(device, [np.nan, 1.0] * 300)
    for seed in (0, 2 ** 63 + 12345, 2 ** 64 - 1):
        out = result(device, be.dropout(x.as_view(), seed, 0.5, tg.float64), (600,), tg.float64)
        cpu = result("cpu", backend.get("cpu").dropout(on("cpu", [np.nan, 1.0] * 300).as_view(), seed, 0.5,
                                                       tg.float64), (600,), tg.float64)
        np.testing.assert_array_equal(out, cpu)                   # nan == nan for assert_array_equal
        assert np.isnan(out[::2]).all()
        np.testing.assert_array_equal(out[1::2], np.where(dropout_keep(seed, (600,), 0.5)[1::2], 2.0, 0.0))


# ---- optimizer updates -------------------------------------------------------------------
OPTIMIZERS = {
    "sgd": lambda ps: tg.optim.SGD(ps, lr=0.05),
    "sgd_momentum": lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True),
    "adam": lambda ps: tg.optim.Adam(ps, lr=0.05, weight_decay=0.1),
    "adamw": lambda ps: tg.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("device", DEVICES)
def test_optimizer_steps_follow_the_cpu_trajectory(device, name, dtype, no_fallback):
    """15 steps on a matrix, a vector and a parameter larger than the grid, with their
    state, against device "cpu" (the arithmetic is the same; fused multiply-adds may
    differ in the last bit)."""
    tg_dtype, np_dtype = FLOATS[dtype]
    rng = np.random.default_rng(8)
    starts = [rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(30, 40))]
    x = rng.normal(size=(6, 4))
    trajectories = {}
    for dev in ("cpu", device):
        w, b, big = (on(dev, s, tg_dtype, requires_grad=True) for s in starts)
        storages = [p.storage for p in (w, b, big)]
        xs = on(dev, x, tg_dtype)
        opt = OPTIMIZERS[name]([w, b, big])
        history = []
        for _ in range(15):
            opt.zero_grad()
            (((xs @ w + b).tanh() ** 2).sum() + (big * big * 0.5).sum()).backward()
            opt.step()
            history.append(np.concatenate([p.detach().numpy().ravel() for p in (w, b, big)]))
        assert [p.storage for p in (w, b, big)] == storages          # in place
        trajectories[dev] = np.array(history)
    rtol = 1e-6 if np_dtype is np.float32 else 1e-12
    np.testing.assert_allclose(trajectories[device], trajectories["cpu"], rtol=rtol, atol=rtol)
    assert not np.allclose(trajectories[device][0], trajectories[device][-1])    # they moved


@pytest.mark.parametrize("kernel", ["sgd_update", "adam_update"])
@pytest.mark.parametrize("device", DEVICES)
def test_updates_of_non_contiguous_views_are_written_back(device, kernel, no_fallback):
    """A parameter (and its state) seen through a transposed or stepped view is updated in
    a copy and written back into the view's own elements; the rest of its buffer stays."""
    rng = np.random.default_rng(9)
    base0, grad0 = rng.normal(size=(5, 8)), rng.normal(size=(4, 5))
    state0 = [np.abs(rng.normal(size=(5, 8))) for _ in range(2)]
    results = {}
    for dev in ("cpu", device):
        be = backend.get(dev)
        base = on(dev, base0)
        state = [on(dev, s) for s in state0]
        param, grad = base[:, ::2].T, on(dev, grad0)              # (4, 5), strides (2, 8)
        moments = [s[:, 1::2].T for s in state]
        if kernel == "sgd_update":
            be.sgd_update([param.as_view()], [grad.as_view()], [moments[0].as_view()], 0.1, 0.9, 0.0, 0.01,
                          [False], True)
        else:
            be.adam_update([param.as_view()], [grad.as_view()], [moments[0].as_view()], [moments[1].as_view()],
                           0.1, 0.9, 0.99, 1e-8, 0.1, True, [3])
        results[dev] = [base.numpy()] + [s.numpy() for s in state]
    for mine, cpus in zip(results[device], results["cpu"]):
        np.testing.assert_allclose(mine, cpus, rtol=1e-13, atol=1e-15)
    assert (results[device][0][:, 1::2] == base0[:, 1::2]).all()             # not the parameter's
    assert not np.allclose(results[device][0][:, ::2], base0[:, ::2])
    assert (results[device][1][:, ::2] == state0[0][:, ::2]).all()           # not the state's


@pytest.mark.parametrize("device", DEVICES)
def test_sgd_without_momentum_needs_no_buffer(device, no_fallback):
    be = backend.get(device)
    p, g = on(device, [1.0, -2.0, 3.0], tg.float32), on(device, [0.5, 0.5, -1.0], tg.float32)
    be.sgd_update([p.as_view()], [g.as_view()], [None], 0.5, 0.0, 0.0, 0.0, [False], False)
    assert p.tolist() == [0.75, -2.25, 3.5]
    empty = tg.zeros(0, device=device)
    be.sgd_update([empty.as_view()], [empty.as_view()], [None], 0.5, 0.0, 0.0, 0.0, [False], False)
    assert empty.tolist() == []

