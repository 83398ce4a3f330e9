"""Reductions by index (stage2_tensor/index_reduce.py; the kernel index_reduce,
kernels/indexing.py) on every device that has the kernel: index_reduce and scatter_reduce
against their definitions (tests/optable_shapes.py), every dtype, NaN, empty and bad
indices, the product's gradient at zeros (where central differences cannot reach), ties,
and PyTorch's errors. The gradients at generic points are the op table's rows
index_reduce and scatter_reduce."""
import math

import numpy as np
import pytest

import stage2_tensor as tg

from .engines import NATIVE, device_params
from .optable_shapes import index_reduce as np_index_reduce, scatter_reduce as np_scatter_reduce

DEVICES = device_params(kernel="index_reduce")
ALL_DEVICES = device_params()
REDUCTIONS = ("prod", "mean", "amax", "amin")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_index_reduce_matches_its_definition_in_every_dtype(device, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, size=(3, 5)).astype(dtype)
    s = rng.integers(-4, 5, size=(3, 6)).astype(dtype)
    index = [4, 0, 4, -1, 2, 4]
    for reduce in REDUCTIONS:
        for include_self in (True, False):
            got = tg.tensor(a, device=device).index_reduce(1, tg.tensor(index, device=device),
                                                          tg.tensor(s, device=device), reduce,
                                                          include_self=include_self)
            want = np_index_reduce(a, 1, index, s, reduce, include_self)
            if dtype.startswith("int") and reduce == "mean":      # an integer mean rounds down
                want = np.floor(np_index_reduce(a.astype(float), 1, index, s.astype(float), "mean", include_self))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=f"{reduce} {include_self}")


@pytest.mark.parametrize("device", DEVICES)
def test_integer_mean_rounds_down_as_pytorch(device):
    x = tg.tensor([0, 2], device=device)
    idx, s = tg.tensor([0, 0], device=device), tg.tensor([-3, 0], device=device)
    assert x.index_reduce(0, idx, s, "mean").tolist() == [-1, 2]                       # -3 / 3
    assert x.scatter_reduce(0, idx, s, "mean", include_self=False).tolist() == [-2, 2]  # -3 / 2 rounds down


def _max_and_mean_without_self(a, dim, index, s):
    """index_reduce's amax and mean with include_self=False, by numpy's unbuffered ufuncs."""
    a, s = np.moveaxis(a, dim, 0), np.moveaxis(s, dim, 0)
    rows = index % a.shape[0]
    top, sums, counts = np.full_like(a, -np.inf), np.zeros_like(a), np.zeros(a.shape[0])
    np.maximum.at(top, rows, s)
    np.add.at(sums, rows, s)
    np.add.at(counts, rows, 1)
    hit = (counts > 0).reshape(-1, *[1] * (a.ndim - 1))
    mean = sums / np.maximum(counts, 1).reshape(hit.shape)
    return [np.moveaxis(np.where(hit, r, a), 0, dim) for r in (top, mean)]


@pytest.mark.parametrize("device", device_params(*NATIVE, kernel="index_reduce"))
def test_long_rows_and_many_outer_positions_take_the_threaded_paths(device):
    rng = np.random.default_rng(1)
    for shape, dim, n in (((300, 7, 40), 1, 12), ((2, 9, 5000), 1, 30), ((70000,), 0, 70000)):
        a = rng.normal(size=shape)
        index = rng.integers(-shape[dim], shape[dim], size=n)
        s = rng.normal(size=shape[:dim] + (n,) + shape[dim + 1:])
        for reduce, want in zip(("amax", "mean"), _max_and_mean_without_self(a, dim, index, s)):
            got = tg.tensor(a, dtype=tg.float64, device=device).index_reduce(
                dim, tg.tensor(index, device=device), tg.tensor(s, dtype=tg.float64, device=device), reduce,
                include_self=False)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_scatter_reduce_matches_its_definition_and_ignores_src_beyond_the_index(device):
    a = np.arange(12.0).reshape(3, 4) - 5
    s = np.arange(20.0).reshape(4, 5) * 0.5 - 3
    index = np.array([[3, 0, 3], [1, 1, 2]])
    for reduce in ("sum",) + REDUCTIONS:
        for include_self in (True, False):
            got = tg.scatter_reduce(tg.tensor(a, device=device), 1, tg.tensor(index, device=device),
                                    tg.tensor(s, device=device), reduce, include_self=include_self)
            want = np_scatter_reduce(a, 1, index, s[:2, :3], reduce, include_self)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=f"{reduce} {include_self}")


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_nan_wins_a_maximum_and_a_minimum_and_spreads_through_the_others(device):
    nan = math.nan
    x = tg.tensor([1.0, nan, 3.0], device=device)
    s = tg.tensor([nan, 5.0, 2.0, 9.0], device=device)
    idx = tg.tensor([0, 1, 2, 2], device=device)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        out = x.scatter_reduce(0, idx, s, reduce).tolist()
        assert math.isnan(out[0]) and math.isnan(out[1]) and not math.isnan(out[2]), reduce
    assert x.scatter_reduce(0, idx, s, "amax").tolist()[2] == 9.0


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_an_empty_index_leaves_the_tensor_and_bools_reduce_by_and_and_or(device):
    x = tg.tensor([1.0, 2.0], device=device)
    empty = tg.tensor([], dtype=tg.int64, device=device)
    assert x.scatter_reduce(0, empty, x, "amax").tolist() == [1.0, 2.0]
    assert x.index_reduce(0, empty, tg.zeros(0, device=device), "prod").tolist() == [1.0, 2.0]
    b = tg.tensor([True, False, True], device=device)
    idx, s = tg.tensor([0, 1, 1], device=device), tg.tensor([False, True, False], device=device)
    assert b.scatter_reduce(0, idx, s, "prod").tolist() == [False, False, True]
    assert b.scatter_reduce(0, idx, s, "amax").tolist() == [True, True, True]
    assert b.scatter_reduce(0, idx, s, "amin").tolist() == [False, False, True]
    assert b.scatter_reduce(0, idx, s, "sum", include_self=False).tolist() == [False, True, True]


def _grads(device, run, *values):
    leaves = [tg.tensor(v, dtype=tg.float64, requires_grad=True, device=device) for v in values]
    out = run(*leaves)
    (out * tg.arange(1, out.numel() + 1, dtype=tg.float64, device=device).reshape(*out.shape)).sum().backward()
    return [leaf.grad.tolist() for leaf in leaves]


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_a_products_gradient_at_one_zero_is_the_product_of_the_rest_and_at_two_zeros_zero(device):
    def run(x, s):
        return x.scatter_reduce(0, tg.tensor([0, 0, 1, 1, 2], device=device), s, "prod")
    gx, gs = _grads(device, run, [3.0, 2.0, 0.0], [0.0, 5.0, 0.0, 0.0, 4.0])
    # place 0: 3 * 0 * 5, one zero; place 1: 2 * 0 * 0, two; place 2: 0 * 4, base's zero
    assert gx == [0.0, 0.0, 12.0]
    assert gs == [15.0, 0.0, 0.0, 0.0, 0.0]
    gx, gs = _grads(device, lambda x, s: x.index_reduce(0, tg.tensor([1, 1], device=device), s, "prod"),
                    [1.0, 2.0], [0.0, 7.0])
    assert gx == [1.0, 0.0] and gs == [28.0, 0.0]


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_a_maximums_gradient_is_shared_among_the_elements_that_reach_it(device):
    def run(include_self):
        return lambda x, s: x.scatter_reduce(0, tg.tensor([0, 0, 1], device=device), s, "amax",
                                             include_self=include_self)
    gx, gs = _grads(device, run(True), [7.0, 2.0], [7.0, 7.0, 1.0])
    assert np.allclose(gx, [1 / 3, 2.0]) and np.allclose(gs, [1 / 3, 1 / 3, 0.0])
    # without include_self the place's own 7 takes no part (PyTorch counts it, giving 1/2 each)
    gx, gs = _grads(device, run(False), [7.0, 2.0], [7.0, 7.0, 1.0])
    assert np.allclose(gx, [0.0, 0.0]) and np.allclose(gs, [0.5, 0.5, 2.0])


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_a_means_gradient_divides_by_each_places_count(device):
    gx, gs = _grads(device, lambda x, s: x.index_reduce(0, tg.tensor([0, 0, 0], device=device), s, "mean"),
                    [1.0, 1.0], [1.0, 2.0, 3.0])
    assert np.allclose(gx, [0.25, 2.0]) and np.allclose(gs, [0.25] * 3)


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_in_place_forms_write_the_tensor(device):
    x = tg.tensor([[1.0, 5.0], [2.0, 0.0]], device=device)
    assert x.index_reduce_(0, tg.tensor([1, 1], device=device), tg.tensor([[4.0, 1.0], [3.0, 2.0]], device=device),
                           "amax") is x
    assert x.tolist() == [[1.0, 5.0], [4.0, 2.0]]
    x.scatter_reduce_(1, tg.tensor([[0, 0]], device=device), tg.tensor([[2.0, 3.0]], device=device), "sum",
                      include_self=False)
    assert x.tolist() == [[5.0, 5.0], [4.0, 2.0]]


@pytest.mark.parametrize("device", ALL_DEVICES)
def test_bad_arguments_raise_pytorchs_errors(device):
    x = tg.zeros(2, 3, device=device)
    idx = tg.tensor([0, 1], device=device)
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"):
        x.index_reduce(0, idx, x, "sum")
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got max"):
        x.scatter_reduce(0, idx.reshape(2, 1), x, "max")
    with pytest.raises(RuntimeError, match="same dtype"):
        x.index_reduce(0, idx, x.double(), "prod")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, idx.reshape(2, 1), x.double(), "amax")
    with pytest.raises(IndexError, match="supposed to be a vector"):
        x.index_reduce(0, idx.reshape(1, 2), x, "prod")
    with pytest.raises(RuntimeError, match="source of shape"):
        x.index_reduce(1, idx, x, "prod")
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        x.index_reduce(0, tg.tensor([0, 2], device=device), x, "amin").tolist()     # lazy: when read
    with pytest.raises(IndexError, match="out of bounds"):
        x.scatter_reduce(1, tg.tensor([[0, 3]], device=device), x, "prod")
    with pytest.raises(NotImplementedError, match="Bool"):
        x.bool().index_reduce(0, idx, x.bool(), "amax")
    with pytest.raises(NotImplementedError, match="Bool"):
        x.bool().scatter_reduce(0, idx.reshape(2, 1), x.bool(), "mean")
    with pytest.raises(TypeError, match="src"):
        x.scatter_reduce(0, idx.reshape(2, 1), 1.0, "amax")


@pytest.mark.parametrize("device", DEVICES)
def test_a_bad_index_leaves_the_tensor_unwritten(device):
    x = tg.tensor([1.0, 2.0], device=device)
    with pytest.raises(IndexError):
        x.index_reduce_(0, tg.tensor([0, 5], device=device), tg.tensor([9.0, 9.0], device=device), "amax")
    assert x.tolist() == [1.0, 2.0]
