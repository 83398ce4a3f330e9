"""sort, argsort, topk, kthvalue, median, nanmedian, msort, gather, scatter, scatter_add_, cumsum,
multinomial and einsum: what the op table (tests/optable.py, which checks the differentiable
values and their gradients) does not: indices, in-place writes, the distribution multinomial
draws from, and the errors for bad arguments. On the python and cpu engines, against numpy; PyTorch as an optional oracle."""
import bisect
import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stage2_tensor as tg

from .engines import DEVICES, engine_params, engines_on

ENGINES_ = engine_params(engines_on("python", "cpu"))
# every device: sort, argsort, topk and cumsum are kernels of each (stage2_tensor/kernels/),
# python's, C's and CUDA's
EVERY_DEVICE = engine_params(engines_on(*DEVICES))
INF, NAN = math.inf, math.nan


def t(data, engine, **kw):
    return tg.tensor(data, device=engine.device, **kw)


# ---- sort, argsort, topk -----------------------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_indices_are_numpys_stable_order(engine, descending, dim):
    x = np.array([[3.0, 1.0, 3.0, -2.0], [0.5, 0.5, 7.0, 0.5], [1.0, -1.0, 1.0, 2.0]])   # ties
    values, indices = tg.sort(t(x.tolist(), engine), dim=dim, descending=descending)
    want = np.argsort(-x if descending else x, axis=dim, kind="stable")
    assert indices.dtype is tg.int64 and indices.device == engine.device and not indices.requires_grad
    np.testing.assert_array_equal(np.array(indices.tolist()), want)
    np.testing.assert_array_equal(np.array(values.tolist()), np.take_along_axis(x, want, dim))
    assert tg.argsort(t(x.tolist(), engine), dim, descending).tolist() == want.tolist()


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_sort_is_a_named_tuple_and_nan_is_largest(engine):
    x = t([2.0, float("nan"), -1.0], engine, requires_grad=True)
    result = x.sort()
    assert isinstance(result, tuple) and result._fields == ("values", "indices")
    assert result.indices.tolist() == [2, 0, 1] and x.sort(descending=True).indices.tolist() == [1, 0, 2]
    assert result.values.requires_grad
    assert x.sort(stable=True).indices.tolist() == [2, 0, 1]
    assert tg.sort(t(5.0, engine)).indices.tolist() == 0          # 0-d: itself, index 0


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_topk_indices_values_and_k_bounds(engine):
    x = np.array([[0.5, 2.0, -1.0, 2.0], [5.0, 4.0, 3.0, 6.0]])
    values, indices = t(x.tolist(), engine).topk(3)
    assert indices.tolist() == [[1, 3, 0], [3, 0, 1]]                 # ties: the lower index first
    np.testing.assert_array_equal(np.array(values.tolist()), np.take_along_axis(x, np.array(indices.tolist()), 1))
    small = tg.topk(t(x.tolist(), engine), 2, dim=0, largest=False)
    assert small.indices.tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
    assert t(x.tolist(), engine).topk(0).values.shape == (2, 0)
    with pytest.raises(RuntimeError, match=r"k \(5\) is out of range: expected 0 <= k <= 4"):
        t(x.tolist(), engine).topk(5)
    with pytest.raises(RuntimeError, match="out of range"):
        t(x.tolist(), engine).topk(-1)
    with pytest.raises(TypeError, match="'k' must be an int"):
        t(x.tolist(), engine).topk(1.5)
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        tg.sort(t(x.tolist(), engine), dim=2)


def _stable_order(x, axis, descending):
    """numpy's stable order (lexsort is stable) with PyTorch's NaN rule: NaN last ascending,
    first descending."""
    nan = np.isnan(x)
    value = np.where(nan, 0.0, -x if descending else x)
    return np.lexsort((value, ~nan if descending else nan), axis=axis)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_sort_and_topk_follow_numpys_stable_order_with_nan_and_ties(engine, data):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    # rows long enough for a heap of k, and for the radix sort of csrc/topk.c (from 256)
    shape[dim] = data.draw(st.one_of(st.integers(1, 60), st.integers(256, 300)), label="row")
    pool = data.draw(st.sampled_from([[0.0, 1.0, -1.0], [NAN, 2.0, -INF, INF, 0.5, -0.0]]), label="values")
    x = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed")).choice(pool, shape)
    x = x.astype(np.float32)
    descending = data.draw(st.booleans(), label="descending")
    want = _stable_order(x, dim, descending)
    values, indices = tg.sort(t(x.tolist(), engine, dtype=tg.float32), dim, descending)
    np.testing.assert_array_equal(indices.numpy(), want)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, want, dim))
    size = shape[dim]
    for k in {0, 1, size // 9, size}:                # small k: a heap of the k best; large: the whole row sorted
        got = tg.topk(t(x.tolist(), engine, dtype=tg.float32), k, dim, largest=descending)
        np.testing.assert_array_equal(got.indices.numpy(), np.take(want, range(k), axis=dim % len(shape)))


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.int32, tg.int64, tg.bool])
def test_long_rows_of_every_dtype_sort_in_the_stable_order(engine, dtype):
    """Rows of 256 and more sort by radix on "cpu" (keys whose order is the comparisons':
    -0.0 equal to 0.0, every NaN last, ties by position); the same order as short rows."""
    rng = np.random.default_rng(1)
    pool = {tg.bool: [0, 1], tg.int32: [-(2 ** 31), -7, 0, 5, 2 ** 31 - 1], tg.int64: [-(2 ** 62), -1, 0, 3, 2 ** 40]}
    x = rng.choice(pool.get(dtype, [NAN, -0.0, 0.0, -INF, INF, 1e-30, -2.5, 7.0]), (2, 300))
    for descending in (False, True):
        for dim in (1, 0):
            want = _stable_order(x.astype(np.float64), dim, descending)
            got = tg.sort(t(x.tolist(), engine, dtype=dtype).T.contiguous().T, dim, descending).indices
            np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("dtype", [tg.uint8, tg.int8, tg.int16])
def test_small_integer_dtypes_are_ordered_in_int64(engine, dtype):
    """Their kernels run on int64 copies (their compute dtype): the indices stay int64, the
    values come back in the dtype."""
    x = t([3, 1, 2, 100, 1], engine, dtype=dtype)
    values, indices = x.sort()
    assert values.dtype is dtype and indices.dtype is tg.int64 and indices.tolist() == [1, 4, 2, 0, 3]
    unique, inverse, counts = tg.unique(x, return_inverse=True, return_counts=True)
    assert unique.dtype is dtype and [unique.tolist(), inverse.tolist(), counts.tolist()] == \
        [[1, 2, 3, 100], [2, 0, 1, 3, 0], [2, 1, 1, 1]]
    assert x.cummax(0).indices.tolist() == [0, 0, 0, 3, 3] and x.kthvalue(2).indices.tolist() == 4
    assert tg.searchsorted(values, x).tolist() == [3, 0, 2, 4, 0] and x.topk(2).values.dtype is dtype


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_sort_of_every_dtype_and_its_gradient(engine):
    x = np.array([[3, 1, 2, 3], [0, -5, 7, 7]])
    for dtype in (tg.int32, tg.int64, tg.float16, tg.bfloat16, tg.float64):
        values, indices = t(x.tolist(), engine, dtype=dtype).sort(1, descending=True)
        assert values.dtype is dtype and indices.dtype is tg.int64
        assert indices.tolist() == np.argsort(-x, 1, kind="stable").tolist()
    assert t([True, False, True], engine).sort().indices.tolist() == [1, 0, 2]
    w = t(x.tolist(), engine, dtype=tg.float64, requires_grad=True)
    values, indices = w.topk(2, 1)
    (values * t([[1.0, 10.0], [100.0, 1000.0]], engine, dtype=tg.float64)).sum().backward()
    assert w.grad.tolist() == [[1.0, 0.0, 0.0, 10.0], [0.0, 0.0, 100.0, 1000.0]]


# ---- kthvalue, median, nanmedian, msort ---------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=10, deadline=None)
def test_kthvalue_and_median_select_from_numpys_stable_order(engine, data):
    """The k-th of sort's order (NaN last, ties by position): the value PyTorch gives, and
    of equal values the index at that position of the stable order."""
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    shape[dim] = data.draw(st.integers(1, 40), label="row")         # long rows: several partitions
    pool = data.draw(st.sampled_from([[0.0, 1.0, -1.0], [2.0, -INF, INF, 0.5, -0.0, 7.0]]), label="values")
    x = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed")).choice(pool, shape)
    order = _stable_order(x, dim, False)
    size = shape[dim]
    k = data.draw(st.integers(1, size), label="k")
    values, indices = tg.kthvalue(t(x.tolist(), engine, dtype=tg.float64), k, dim)
    want = np.take(order, k - 1, axis=dim)
    np.testing.assert_array_equal(indices.numpy(), want)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, np.expand_dims(want, dim), dim).squeeze(dim))
    values, indices = t(x.tolist(), engine, dtype=tg.float64).median(dim, keepdim=True)
    np.testing.assert_array_equal(indices.numpy(), np.take(order, [(size - 1) // 2], axis=dim))
    assert tg.median(t(x.tolist(), engine, dtype=tg.float64)).tolist() == np.sort(x, None)[(x.size - 1) // 2]


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_median_and_nanmedian_with_nan_as_pytorch(engine):
    x = t([2.0, NAN, 1.0, NAN, 3.0], engine)
    assert math.isnan(x.median().item()) and x.nanmedian().tolist() == 2.0
    values, indices = x.median(0)
    assert math.isnan(values.item()) and indices.tolist() == 1                 # the first NaN
    assert tuple(x.nanmedian(0)) == (2.0, 0) and x.nanmedian(0)._fields == ("values", "indices")
    assert [x.kthvalue(k).indices.tolist() for k in (3, 4, 5)] == [4, 1, 3]    # NaN largest
    rows = t([[3.0, 1.0, 2.0, 5.0], [NAN, 1.0, 0.0, NAN]], engine, requires_grad=True)
    values, indices = rows.median(1)
    assert indices.tolist() == [2, 0] and type(rows.median(1)).__name__ == "median"
    values.sum().backward()
    assert rows.grad.tolist() == [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    assert rows.nanmedian(1).values.tolist() == [2.0, 0.0] and rows.nanmedian(1).indices.tolist() == [2, 2]
    everything = t([NAN, NAN], engine).nanmedian(0)
    assert math.isnan(everything.values.item()) and everything.indices.tolist() == 0
    assert math.isnan(t([], engine).median().item()) and math.isnan(t([NAN], engine).nanmedian().item())
    ties = t([3.0, 1.0, 1.0, 5.0], engine, requires_grad=True)
    ties.median().backward()                                                  # shared by the equal elements
    assert ties.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert t([3, 1, 2, 5], engine).median().tolist() == 2 and t([[1.0, 2.0, 3.0, 4.0]], engine).median(1).values.tolist() == [2.0]
    assert tg.median(t(3.0, engine), 0).indices.tolist() == 0 and t(3.0, engine).kthvalue(1).values.tolist() == 3.0
    assert t([[3, 1], [1, 0]], engine).msort().tolist() == [[1, 0], [3, 1]]
    assert t([1.5, 0.5, 1.0], engine, dtype=tg.float16).median(0).values.dtype is tg.float16
    with pytest.raises(RuntimeError, match="selected number k out of range for dimension 0"):
        t([1.0], engine).kthvalue(2)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        tg.zeros(1, 0, device=engine.device).median(1)
    with pytest.raises(NotImplementedError, match="bool"):
        t([True, False], engine).median()
    with pytest.raises(TypeError, match="'k' must be an int"):
        x.kthvalue(1.0)


# ---- gather, scatter, scatter_add_ -------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES_)
def test_gather_and_scatter_as_numpy(engine):
    x = np.arange(12.0).reshape(3, 4)
    index = np.array([[3, 0], [1, 1], [0, 2]])
    got = tg.gather(t(x.tolist(), engine), 1, t(index.tolist(), engine))
    np.testing.assert_array_equal(np.array(got.tolist()), np.take_along_axis(x, index, 1))
    want = x.copy()
    np.put_along_axis(want, index[:, :1], -1.0, 1)
    got = t(x.tolist(), engine).scatter(1, t(index[:, :1].tolist(), engine), -1.0)    # a number as src
    np.testing.assert_array_equal(np.array(got.tolist()), want)
    rows = t(x.tolist(), engine).scatter(0, t([[2, 0, 1, 2]], engine), t([[10.0, 20, 30, 40]], engine))
    assert rows.tolist()[0] == [0.0, 20.0, 2.0, 3.0] and rows.tolist()[2] == [10.0, 9.0, 10.0, 40.0]


@pytest.mark.parametrize("engine", ENGINES_)
def test_scatter_add_in_place_sums_repeats_and_bumps_the_version(engine):
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], engine)
    version = x.storage.version
    out = x.scatter_add_(1, t([[0, 0, 2], [1, 1, 1]], engine), t([[1.0, 10.0, 100.0], [1.0, 2.0, 3.0]], engine))
    assert out is x and x.storage.version > version
    assert x.tolist() == [[12.0, 2.0, 103.0], [4.0, 11.0, 6.0]]
    view = x[:, 1:]                                                   # a strided view, written through
    view.scatter_add_(0, t([[1, 0]], engine), t([[5.0, 7.0]], engine))
    assert x.tolist() == [[12.0, 2.0, 110.0], [4.0, 16.0, 6.0]]
    x.scatter_(1, t([[2], [0]], engine), 0.0)
    assert x.tolist() == [[12.0, 2.0, 0.0], [0.0, 16.0, 6.0]]
    leaf = t([1.0, 2.0], engine, requires_grad=True)
    with pytest.raises(RuntimeError, match="scatter_add_: in-place operation on a leaf tensor"):
        leaf.scatter_add_(0, t([0], engine), t([1.0], engine))
    with tg.no_grad():
        leaf.scatter_add_(0, t([0, 0], engine), t([1.0, 1.0], engine))
    assert leaf.tolist() == [3.0, 2.0]


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_index_add_adds_onto_a_base_or_zeros(engine):
    """index_add adds src's rows onto base when one is given (scatter_add's input, here a
    strided view), else onto zeros; the declaration holds base to the output's shape."""
    rng = np.random.default_rng(6)
    base, src, idx = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), [2, 0, -2]
    be = tg.backend.get(engine.device)
    strided = t(base.T.tolist(), engine, dtype=tg.float64).T                      # (4, 3), not contiguous
    index, rows = t(idx, engine).as_view(), t(src.tolist(), engine, dtype=tg.float64).as_view()
    expected = np.zeros((4, 3))
    np.add.at(expected, idx, src)
    for onto, want in ((None, expected), (strided.as_view(), base + expected)):
        out = tg.Tensor.from_buffer(be.index_add((4, 3), 0, index, rows, onto), (4, 3), tg.float64, engine.device)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"index_add: base has shape \(3, 4\), expected \(4, 3\)"):
        be.index_add((4, 3), 0, index, rows, strided.T.as_view())


@pytest.mark.parametrize("engine", ENGINES_)
def test_gather_and_scatter_reject_bad_indices(engine):
    x = t([[1.0, 2.0], [3.0, 4.0]], engine)
    with pytest.raises(IndexError, match=r"index 2 is out of bounds for dimension 1 with size 2 \(expected 0 to 1\)"):
        x.gather(1, t([[0, 2]], engine))
    with pytest.raises(IndexError, match="index -1 is out of bounds"):          # as PyTorch: no negatives
        x.gather(0, t([[-1, 0]], engine))
    with pytest.raises(RuntimeError, match="Expected dtype int64 for index, got"):
        x.gather(0, t([[0.0, 1.0]], engine))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(0, t([0, 1], engine))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 1"):
        x.gather(0, t([[0, 1, 0]], engine))
    with pytest.raises(RuntimeError, match="no larger than src"):
        x.scatter(1, t([[0, 1]], engine), t([[5.0]], engine))
    with pytest.raises(TypeError, match="'src' must be a Tensor or a number"):
        x.scatter(1, t([[0, 1]], engine), "5")
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        tg.scatter_add(x, 2, t([[0]], engine), x)


# ---- cumsum ------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES_)
def test_cumsum_dtypes_and_dims(engine):
    x = np.arange(6).reshape(2, 3)
    out = t(x.tolist(), engine).cumsum(1)
    assert out.dtype is tg.int64 and out.tolist() == np.cumsum(x, 1).tolist()
    assert tg.cumsum(t([True, False, True], engine), 0).tolist() == [1, 1, 2]
    assert tg.cumsum(t(x.tolist(), engine), -2, dtype=tg.float64).dtype is tg.float64
    assert tg.cumsum(t(3.0, engine), 0).tolist() == 3.0
    with pytest.raises(TypeError, match="'dim' must be an int"):
        tg.cumsum(t(x.tolist(), engine), None)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("values, want", [
    ([1.0, INF, 2.0], [1.0, INF, INF]), ([1.0, NAN, 2.0], [1.0, NAN, NAN]),
    ([1.0, -INF, INF], [1.0, -INF, NAN]), ([2.0, 3.0, -INF], [2.0, 5.0, -INF])])
def test_cumsum_spreads_nan_and_inf_only_from_their_position_on(engine, values, want):
    """As PyTorch's running sum. Written as a product with the triangular matrix of ones,
    cumsum once turned the whole row to nan: the zeros above the diagonal times inf."""
    want = np.array(want)
    for dtype in (tg.float32, tg.float64, tg.float16):
        np.testing.assert_array_equal(t(values, engine, dtype=dtype).cumsum(0).float().numpy(), want)
    # along a middle dimension of a transposed (not contiguous) view, each row on its own
    x = t([[values, [1.0, 2.0, 3.0]]] * 2, engine, dtype=tg.float64).permute(0, 2, 1)   # (2, 3, 2)
    out = x.cumsum(1).numpy()
    np.testing.assert_array_equal(out[:, :, 0], [want, want])
    np.testing.assert_array_equal(out[:, :, 1], [[1.0, 3.0, 6.0]] * 2)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_cumsum_gradient_is_the_reversed_cumsum_of_the_upstream_gradient(engine):
    x = t([[1.0, INF, 2.0, -3.0], [0.5, 0.25, NAN, 4.0]], engine, dtype=tg.float64, requires_grad=True)
    weights = np.array([[1.0, 10.0, 100.0, 1000.0], [2.0, 3.0, 5.0, 7.0]])
    (x.cumsum(1) * t(weights.tolist(), engine, dtype=tg.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.flip(np.cumsum(np.flip(weights, 1), 1), 1))
    y = t(np.arange(6.0).reshape(3, 2).tolist(), engine, dtype=tg.float64, requires_grad=True)
    y.cumsum(0).sum().backward()                              # d/dy[i] = how many sums hold y[i]
    np.testing.assert_array_equal(y.grad.numpy(), [[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]])
    assert t([[3, 1], [2, 5]], engine).cumsum(0).tolist() == [[3, 1], [5, 6]]          # int64
    assert t([True, False, True], engine).cumsum(0, dtype=tg.bool).tolist() == [True, True, True]
    for shape, dim in (((1, 0), 1), ((0, 3), 0), ((0, 3), 1)):               # nothing to sum
        assert tg.zeros(*shape, device=engine.device).cumsum(dim).shape == shape


# ---- multinomial -------------------------------------------------------------------------------
def chi_square(counts, probs):
    n = sum(counts)
    return sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, probs))


# chi-square quantiles at 1 - 1e-6: a correct sampler exceeds them once in a million seeds
CHI2_BOUND = {2: 27.6, 3: 30.7}


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_multinomial_with_replacement_follows_the_weights(engine):
    weights = [1.0, 2.0, 3.0, 4.0]                                    # not normalized
    g = tg.Generator().manual_seed(3)
    draws = tg.multinomial(t(weights, engine), 4000, replacement=True, generator=g)
    assert draws.shape == (4000,) and draws.dtype is tg.int64 and draws.device == engine.device
    counts = [draws.tolist().count(i) for i in range(4)]
    assert chi_square(counts, [w / 10 for w in weights]) < CHI2_BOUND[3]
    again = tg.multinomial(t(weights, engine), 4000, True, generator=tg.Generator().manual_seed(3))
    assert again.tolist() == draws.tolist()                          # a seeded generator repeats
    tg.manual_seed(5)
    first = t([[0.0, 1.0, 1.0]], engine).multinomial(50, replacement=True)
    tg.manual_seed(5)
    assert first.tolist() == t([[0.0, 1.0, 1.0]], engine).multinomial(50, True).tolist()
    assert 0 not in first.tolist()[0]                                # zero weight: never drawn


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_multinomial_without_replacement(engine):
    p = [0.2, 0.3, 0.5]
    draws = tg.multinomial(t([p] * 2000, engine), 2, generator=tg.Generator().manual_seed(11))
    assert draws.shape == (2000, 2)
    rows = draws.tolist()
    assert all(a != b for a, b in rows)                               # no category twice in a row
    first = [sum(1 for a, _ in rows if a == i) for i in range(3)]
    second = [sum(1 for _, b in rows if b == j) for j in range(3)]
    # P(second = j) = sum over i != j of p_i p_j / (1 - p_i)
    p_second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(3) if i != j) for j in range(3)]
    assert math.isclose(sum(p_second), 1.0)
    assert chi_square(first, p) < CHI2_BOUND[2]
    assert chi_square(second, p_second) < CHI2_BOUND[2]
    assert sorted(tg.multinomial(t([1.0, 1.0, 1.0], engine), 3).tolist()) == [0, 1, 2]


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("probs, n, replacement, message", [
    ([0.5, -0.1], 1, True, "element < 0"),
    ([0.5, float("nan")], 1, True, "inf, nan or element < 0"),
    ([0.0, 0.0], 1, True, "sum of probabilities <= 0"),
    ([0.5, 0.5], 3, False, r"n_sample \(3\) > prob_dist.size\(-1\) \(2\)"),
    ([0.5, 0.0, 0.5], 3, False, "2 categories of non-zero probability, fewer than num_samples"),
    ([[[0.5]]], 1, True, "1 or 2 dim"),
    ([0.5, 0.5], 0, True, "num_samples must be a positive int"),
])
def test_multinomial_rejects_bad_distributions(engine, probs, n, replacement, message):
    with pytest.raises(RuntimeError, match=message):
        tg.multinomial(t(probs, engine), n, replacement)


def drawn_one_by_one(rows, num_samples, replacement, rng):
    """multinomial as it drew before it had a kernel, one Python loop over every weight:
    each draw one rng.random(), bisecting the running sums of the row's weights."""
    out = []
    for row in rows:
        weights = list(row)
        for _ in range(num_samples):
            cumulative = list(itertools.accumulate(weights))
            at = min(bisect.bisect_right(cumulative, rng.random() * cumulative[-1]), len(weights) - 1)
            while weights[at] == 0:
                at -= 1
            out.append(at)
            if not replacement:
                weights[at] = 0.0
    return out


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_draws_what_the_python_loop_drew(engine, dtype, replacement):
    """The kernels draw the same categories, to the index, for any seed: the sampled text
    of the chapters depends on it."""
    rng = np.random.default_rng(7)
    weights = (rng.random((6, 40)) + 0.1) * (rng.random((6, 40)) > 0.3)       # zeros among them
    weights[:, 10:15] = 1.0                             # at least five above 0
    weights[2, :-5], weights[3, 5:] = 0.0, 0.0          # the last five only, the first five only
    weights[2, -5:] = weights[3, :5] = 0.5
    weights *= 10.0 ** rng.integers(-30, 30, (6, 1))    # sums of any size
    for seed, shape, samples in ((0, (6, 40), 5), (1, (40,), 5), (2, (6, 40), 1)):
        x = t(weights[0] if shape == (40,) else weights, engine, dtype=dtype)
        got = tg.multinomial(x, samples, replacement, generator=tg.Generator().manual_seed(seed))
        want = drawn_one_by_one(x.reshape(-1, 40).tolist(), samples, replacement,
                                tg.Generator().manual_seed(seed)._rng)
        assert got.shape == shape[:-1] + (samples,)
        assert (sum(got.tolist(), []) if len(shape) == 2 else got.tolist()) == want


@pytest.mark.parametrize("threads", [1, 3])
def test_multinomial_rows_split_among_threads_draw_the_same(threads):
    """Above TG_PARALLEL_MIN the C kernel splits the rows among threads, each with scratch
    of its own: the same draws, and the first bad row still the one named."""
    import stage3_native
    rng = np.random.default_rng(2)
    weights = rng.random((40, 2000)) * (rng.random((40, 2000)) > 0.5)
    saved = stage3_native.get_num_threads()
    try:
        stage3_native.set_num_threads(threads)
        x = tg.tensor(weights.tolist(), dtype=tg.float64, device="cpu")
        for replacement in (True, False):
            got = tg.multinomial(x, 3, replacement, generator=tg.Generator().manual_seed(5))
            want = drawn_one_by_one(weights.tolist(), 3, replacement, tg.Generator().manual_seed(5)._rng)
            assert sum(got.tolist(), []) == want
        weights[[17, 31]] = 0.0
        with pytest.raises(RuntimeError, match=re.escape("<= 0) in row 17")):
            tg.multinomial(tg.tensor(weights.tolist(), dtype=tg.float64, device="cpu"), 3, True)
    finally:
        stage3_native.set_num_threads(saved)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_multinomial_past_the_top_end_draws_the_last_nonzero_weight(engine):
    """A draw u * total that rounds to the total itself (a subnormal total) or is no number
    (an infinite total) falls past every running sum: the last non-zero weight is drawn."""
    weights = t([[5e-324, 0.0, 0.0], [1e308, 1e308, 0.0], [0.0, 1.0, 0.0]], engine, dtype=tg.float64)
    uniforms = t([[1 - 2 ** -53, 0.5], [0.0, 0.7], [0.0, 1 - 2 ** -53]], engine, dtype=tg.float64)
    drawn, bad = tg.backend.launch(engine.device, "multinomial", weights.as_view(), uniforms.as_view(), True,
                                   tg.float64, out_dtype=tg.int64)
    assert tg.Tensor.from_buffer(drawn, (3, 2), tg.int64, engine.device).tolist() == [[0, 0], [1, 1], [1, 1]]
    assert tg.Tensor.from_buffer(bad, (), tg.int64, engine.device).item() == -1


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_names_the_first_bad_row(engine, replacement):
    rows = [[1.0, 2.0], [0.0, 0.0], [1.0, -1.0]] if replacement else [[1.0, 2.0], [0.0, 3.0], [0.0, 0.0]]
    message = ("sum of probabilities <= 0) in row 1" if replacement else
               "row 1 has 1 categories of non-zero probability, fewer than num_samples (2)")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        tg.multinomial(t(rows, engine), 2, replacement)
    with pytest.raises(RuntimeError, match=re.escape("(row 2: -0.5)")):
        tg.multinomial(t([[1.0, 2.0], [1.0, 1.0], [0.5, -0.5]], engine), 1, replacement)


def test_multinomial_type_errors():
    with pytest.raises(RuntimeError, match="floating point"):
        tg.multinomial(tg.tensor([1, 2]), 1)
    with pytest.raises(TypeError, match="generator must be"):
        tg.multinomial(tg.tensor([1.0, 2.0]), 1, generator=3)
    with pytest.raises(TypeError, match="'input' must be a Tensor"):
        tg.multinomial([1.0, 2.0], 1)


# ---- einsum ------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES_)
@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 2)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij->ji", [(2, 3)]),
    ("i,i->", [(3,), (3,)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 2), (1, 2, 2, 2)]), ("i,j->ij", [(2,), (3,)]),
    ("ij->", [(2, 3)]), ("ij,jk", [(2, 3), (3, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]), ("ijk,ik->j", [(2, 3, 2), (2, 2)]),
    # diagonals (a letter twice in one operand) and ellipses
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("iij->j", [(2, 2, 3)]), ("iji->j", [(2, 3, 2)]), ("bii->bi", [(2, 3, 3)]),
    ("ii,i->i", [(3, 3), (3,)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]), ("...ij,...jk", [(2, 1, 3, 4), (3, 4, 2)]),
    ("b...,b...->b...", [(2, 3, 4), (2, 3, 4)]), ("...", [(2, 3)]), ("i...->...", [(2, 3)]), ("ij...,j->i...", [(2, 3, 2, 2), (3,)]),
    ("...ii->...i", [(2, 3, 3)]),
])
def test_einsum_as_numpy(engine, equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=s) for s in shapes]
    got = tg.einsum(equation, *[t(a.tolist(), engine, dtype=tg.float64) for a in arrays])
    np.testing.assert_allclose(np.array(got.tolist()), np.einsum(equation, *arrays), rtol=1e-12, atol=1e-12)
    listed = tg.einsum(equation, [t(a.tolist(), engine, dtype=tg.float64) for a in arrays])
    assert listed.shape == got.shape


@pytest.mark.parametrize("equation, operands, error, message", [
    ("ii->i", [(2, 3)], ValueError, "subscript 'i' is repeated for operand 'ii' but the sizes don't match, 2 != 3"),
    ("...ijk->ij", [(2, 2)], ValueError, "names 3 dimensions besides the ellipsis"),
    ("....ij->ij", [(2, 2)], ValueError, "an ellipsis is written '...', at most once per operand"),
    ("...i...->i", [(2, 2)], ValueError, "at most once per operand"),
    ("ij->k", [(2, 2)], ValueError, "output letter 'k' appears in no operand"),
    ("ij,jk->ik", [(2, 2)], ValueError, "names 2 operand"),
    ("ij,jk->ik", [(2, 3), (2, 2)], ValueError, "letter 'j' has size 3"),
    ("ijk->i", [(2, 2)], ValueError, "operand 0 has 2 dimensions"),
    ("i1->i", [(2, 2)], ValueError, "subscripts are letters"),
    ("ij->ii", [(2, 2)], ValueError, "names a letter twice"),
])
def test_einsum_errors(equation, operands, error, message):
    with pytest.raises(error, match=message):
        tg.einsum(equation, *[tg.zeros(*s) for s in operands])
    with pytest.raises(TypeError, match="operand 0 must be a Tensor"):
        tg.einsum("i->i", [1.0])


# ---- the surface, and PyTorch as an oracle -----------------------------------------------------
def test_package_functions_and_methods():
    for name in ("sort", "argsort", "topk", "gather", "scatter", "scatter_add", "cumsum", "multinomial", "einsum",
                 "kthvalue", "median", "nanmedian", "msort"):
        assert name in tg.__all__ and callable(getattr(tg, name))
    for name in ("sort", "argsort", "topk", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
                 "cumsum", "multinomial", "kthvalue", "median", "nanmedian", "msort"):
        assert callable(getattr(tg.Tensor, name))


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[3.0, 1.0, 3.0, -2.0], [0.5, 0.5, 7.0, 0.5]])
    ours, theirs = tg.tensor(x.tolist()), torch.tensor(x)
    assert ours.sort(descending=True, stable=True).indices.tolist() == \
        theirs.sort(descending=True, stable=True).indices.tolist()
    assert ours.argsort(dim=0, stable=True).tolist() == theirs.argsort(dim=0, stable=True).tolist()
    assert ours.topk(2).values.tolist() == theirs.topk(2).values.tolist()
    index = [[1, 0, 3], [2, 2, 0]]
    assert ours.gather(1, tg.tensor(index)).tolist() == theirs.gather(1, torch.tensor(index)).tolist()
    assert ours.scatter_add(1, tg.tensor(index), ours).tolist() == \
        theirs.scatter_add(1, torch.tensor(index), theirs).tolist()
    assert ours.cumsum(1).tolist() == theirs.cumsum(1).tolist()
    np.testing.assert_allclose(np.array(tg.einsum("ij,kj->ik", ours, ours).tolist()),
                               torch.einsum("ij,kj->ik", theirs, theirs).numpy(), rtol=1e-6)
    assert tg.multinomial(tg.tensor([[0.0, 1.0]]), 2, True).tolist() == \
        torch.multinomial(torch.tensor([[0.0, 1.0]]), 2, True).tolist()
