"""unique, unique_consecutive, bincount, histc (counting.py), searchsorted and bucketize
(searching.py), repeat_interleave (repeating.py): against numpy, with PyTorch's rules for
NaN, ties, dtypes and errors, on every device (searchsorted is a kernel of each; the others
are composites of sort, nonzero, cumsum, index_add and index_select, which each has)."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stage2_tensor as tg

from .engines import DEVICES, engine_params, engines_on

EVERY_DEVICE = engine_params(engines_on(*DEVICES))
INF, NAN = math.inf, math.nan


def t(data, engine, **kw):
    return tg.tensor(data, device=engine.device, **kw)


def array(x, engine, dtype):
    """A numpy array as a tensor of its shape (an empty one's too, which tolist() loses)."""
    return t(x.ravel().tolist(), engine, dtype=dtype).reshape(x.shape)


def _seed(data):
    return np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))


# ---- unique, unique_consecutive ----------------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_unique_nan_zero_signs_and_return_forms(engine):
    values, inverse, counts = tg.unique(t([3.0, NAN, 1.0, 3.0, NAN, -0.0, 0.0], engine), return_inverse=True,
                                        return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [-0.0, 1.0, 3.0, NAN, NAN])     # each NaN its own, as PyTorch's CPU
    assert math.copysign(1, values.tolist()[0]) == -1                           # the first of equal values kept
    assert inverse.tolist() == [2, 3, 1, 2, 4, 0, 0] and counts.tolist() == [2, 1, 2, 1, 1]
    assert inverse.dtype is tg.int64 and counts.dtype is tg.int64
    x = t([[3, 1], [1, 2]], engine)
    assert x.unique().tolist() == [1, 2, 3] and x.unique(sorted=False).tolist() == [1, 2, 3]
    assert tg.unique(x, return_inverse=True)[1].tolist() == [[2, 0], [0, 1]]              # in input's shape
    assert tg.unique(x, return_counts=True)[1].tolist() == [2, 1, 1]
    assert t([True, False, True], engine).unique().tolist() == [False, True]
    single = tg.unique(t(5.0, engine), return_inverse=True)
    assert single[0].tolist() == [5.0] and single[1].tolist() == 0
    empty = tg.unique(t([], engine), return_inverse=True, return_counts=True)
    assert [e.shape for e in empty] == [(0,), (0,), (0,)]
    leaf = t([1.0, 2.0, 1.0], engine, requires_grad=True)
    out = leaf.unique()
    assert out.requires_grad                                                   # as PyTorch's, which
    with pytest.raises(NotImplementedError, match="derivative for '_unique2' is not implemented"):
        out.sum().backward()                                                   # cannot differentiate it


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=8, deadline=None)
def test_unique_and_unique_consecutive_as_numpy(engine, data):
    shape = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3), label="shape")
    x = _seed(data).integers(-3, 4, shape)
    values, inverse, counts = tg.unique(array(x, engine, tg.int64), return_inverse=True, return_counts=True)
    want, want_inverse, want_counts = np.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == want.tolist() and counts.tolist() == want_counts.tolist()
    np.testing.assert_array_equal(inverse.numpy(), want_inverse.reshape(x.shape))
    runs = [(k, len(list(g))) for k, g in itertools.groupby(x.ravel().tolist())]
    values, inverse, counts = array(x, engine, tg.int64).unique_consecutive(return_inverse=True, return_counts=True)
    assert values.tolist() == [k for k, _ in runs] and counts.tolist() == [n for _, n in runs]
    np.testing.assert_array_equal(inverse.numpy().ravel(), np.repeat(np.arange(len(runs)), [n for _, n in runs]))


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_along_a_dimension_as_numpy(engine, dim):
    x = np.array([[[1, 2], [1, 2], [0, 5]], [[1, 2], [1, 2], [0, 4]], [[1, 2], [1, 2], [0, 5]]])   # (3, 3, 2)
    values, inverse, counts = tg.unique(t(x.tolist(), engine), dim=dim, return_inverse=True, return_counts=True)
    want, want_inverse, want_counts = np.unique(x, axis=dim, return_inverse=True, return_counts=True)
    assert values.tolist() == want.tolist() and counts.tolist() == want_counts.tolist()
    assert inverse.tolist() == want_inverse.ravel().tolist()
    runs = t(x.tolist(), engine).unique_consecutive(dim=1, return_counts=True)
    assert runs[0].tolist() == x[:, 1:].tolist() and runs[1].tolist() == [2, 1]
    with pytest.raises(IndexError, match="out of range"):
        tg.unique(t(x.tolist(), engine), dim=3)


# ---- bincount, histc ---------------------------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_bincount_counts_and_weights_as_pytorch(engine):
    x = t([1, 3, 1], engine)
    assert x.bincount().tolist() == [0, 2, 0, 1] and x.bincount().dtype is tg.int64
    assert tg.bincount(x, minlength=6).tolist() == [0, 2, 0, 1, 0, 0]
    for weights, dtype in ((t([0.5, 1.0, 2.0], engine), tg.float32), (t([0.5, 1.0, 2.0], engine, dtype=tg.float64),
                                                                       tg.float64), (t([1, 2, 3], engine), tg.float64)):
        out = tg.bincount(x, weights)
        assert out.dtype is dtype and out.tolist() == ([0.0, 2.5, 0.0, 1.0] if dtype is not tg.float64 or
                                                       weights.dtype is tg.float64 else [0.0, 4.0, 0.0, 2.0])
    assert tg.bincount(t([], engine, dtype=tg.int64), minlength=3).tolist() == [0, 0, 0]
    assert t([1, 2], engine, dtype=tg.int32).bincount().tolist() == [0, 1, 1]
    weights = t([0.5, 1.0, 2.0], engine, requires_grad=True)
    out = tg.bincount(x, weights)
    with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
        out.sum().backward()
    for bad in (t([-1, 2], engine), t([[1]], engine)):
        with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
            bad.bincount()
    with pytest.raises(NotImplementedError, match="counts integers"):
        t([1.0], engine).bincount()
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        x.bincount(minlength=-1)
    with pytest.raises(RuntimeError, match="weights should be 1-d and have the same length as input"):
        x.bincount(t([1.0], engine))


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=6, deadline=None)
def test_bincount_as_numpy(engine, data):
    x = _seed(data).integers(0, data.draw(st.integers(1, 40), label="high"), data.draw(st.integers(0, 50), label="n"))
    minlength = data.draw(st.integers(0, 45), label="minlength")
    assert tg.bincount(t(x.tolist(), engine, dtype=tg.int64), minlength=minlength).tolist() == \
        np.bincount(x, minlength=minlength).tolist()


def _histc(x, bins, low, high):
    """PyTorch's histc by its formula, in x's dtype: bin (x - low) * bins / (high - low),
    rounded down, the last bin holding high; NaN and elements outside left out."""
    x = x[(x >= low) & (x <= high)]
    position = ((x - x.dtype.type(low)) * x.dtype.type(bins) / (x.dtype.type(high) - x.dtype.type(low)))
    return np.bincount(np.minimum(position.astype(np.int64), bins - 1), minlength=bins).astype(x.dtype)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_histc_as_pytorch(engine):
    assert tg.histc(t([1.0, 2.0, 1.0, 4.0, NAN, 0.0], engine), bins=4, min=0, max=3).tolist() == [1, 2, 1, 0]
    assert t([1.0, 2.0, 1.0, 4.0], engine).histc(bins=4).tolist() == [2, 1, 0, 1]       # the data's range
    assert tg.histc(t([2.0, 2.0], engine), bins=4).tolist() == [0, 0, 2, 0]             # widened by 1 each side
    values = [0.0, 0.1, 0.2, 0.3, 0.7, 1.0]                                    # PyTorch's float32 rounding
    assert tg.histc(t(values, engine), bins=10, min=0, max=1).tolist() == [1, 1, 1, 1, 0, 0, 0, 1, 0, 1]
    x = np.random.default_rng(0).normal(size=200).astype(np.float32)
    np.testing.assert_array_equal(t(x.tolist(), engine, dtype=tg.float32).histc(7, -1.5, 2).numpy(),
                                  _histc(x, 7, -1.5, 2))
    assert tg.histc(t([], engine, dtype=tg.float64), bins=3).tolist() == [0, 0, 0]
    assert t([1.0, 2.0], engine, dtype=tg.float16).histc(bins=2).dtype is tg.float16
    assert not t([1.0, 2.0], engine, requires_grad=True).histc(bins=2).requires_grad
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        t([1.0], engine).histc(bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        t([1.0], engine).histc(bins=3, min=2, max=1)
    with pytest.raises(RuntimeError, match="is not finite"):
        t([1.0, INF], engine).histc(bins=3)
    with pytest.raises(NotImplementedError, match="floating-point"):
        t([1, 2], engine).histc()


# ---- searchsorted, bucketize -------------------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_searchsorted_with_nan_rows_sorter_and_options(engine):
    s, v = t([1.0, 3.0, 3.0, 5.0, NAN], engine), t([[0.0, 3.0, 4.0], [NAN, INF, 5.0]], engine)
    assert tg.searchsorted(s, v).tolist() == [[0, 1, 5], [5, 5, 5]]              # PyTorch's, NaN boundary included
    assert tg.searchsorted(s, v, right=True).tolist() == tg.searchsorted(s, v, side="right").tolist() == \
        [[0, 5, 5], [5, 5, 5]]
    assert tg.searchsorted(s, 3.0).tolist() == 1 and tg.searchsorted(s, 3).tolist() == 1
    assert tg.searchsorted(t([1, 3, 5], engine), t([2.5, 3.0], engine)).tolist() == [1, 1]   # promoted
    rows = tg.searchsorted(t([[1.0, 3, 5], [0, 2, 4]], engine), t([[2.0, 3.0], [3, 5]], engine), out_int32=True)
    assert rows.dtype is tg.int32 and rows.tolist() == [[1, 1], [2, 3]]
    assert tg.searchsorted(t([5.0, 1, 3], engine), t([2.0, 3], engine), sorter=t([1, 2, 0], engine)).tolist() == [1, 1]
    assert tg.bucketize(t([[1, 5], [3, 7]], engine), t([1, 3, 5], engine)).tolist() == [[0, 2], [1, 3]]
    assert tg.bucketize(t([[1, 5], [3, 7]], engine), t([1, 3, 5], engine), right=True).tolist() == [[1, 3], [2, 3]]
    assert tg.bucketize(3, t([1, 3, 5], engine)).tolist() == 1
    assert tg.searchsorted(t([], engine), t([1.0], engine)).tolist() == [0]
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        tg.searchsorted(s, v, side="left", right=True)
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right' but got middle"):
        tg.searchsorted(s, v, side="middle")
    with pytest.raises(RuntimeError, match=r"first N-1 dimensions .* \[2, 2\] and input value tensor \[3, 1\]"):
        tg.searchsorted(t([[1.0, 2], [3, 4]], engine), t([[1.0], [2], [3]], engine))
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        tg.searchsorted(t([5.0, 1, 3], engine), t([2.0], engine), sorter=t([1, 2, 3], engine))
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        tg.bucketize(t([1], engine), t([[1, 3]], engine))
    with pytest.raises(NotImplementedError, match="bool"):
        tg.searchsorted(t([True, False], engine), t([True], engine))


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=8, deadline=None)
def test_searchsorted_as_numpy(engine, data):
    rng = _seed(data)
    batch = data.draw(st.sampled_from([(), (2,), (2, 3)]), label="batch")
    n, m = data.draw(st.integers(0, 30), label="n"), data.draw(st.integers(0, 6), label="m")
    boundaries = np.sort(rng.integers(-5, 6, batch + (n,)), -1).astype(np.float32)     # ties
    values = rng.integers(-7, 8, batch + (m,)).astype(np.float32)
    for right in (False, True):
        got = tg.searchsorted(array(boundaries, engine, tg.float32), array(values, engine, tg.float32),
                              right=right).numpy()
        want = np.zeros(values.shape, dtype=np.int64)
        for row in np.ndindex(*batch):
            want[row] = np.searchsorted(boundaries[row], values[row], side="right" if right else "left")
        np.testing.assert_array_equal(got, want)


# ---- repeat_interleave -------------------------------------------------------------------------
@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_repeat_interleave_as_numpy_and_pytorch(engine):
    x = np.array([[1, 2], [3, 4]])
    assert t(x.tolist(), engine).repeat_interleave(2).tolist() == np.repeat(x, 2).tolist()
    assert tg.repeat_interleave(t(x.tolist(), engine), t([1, 2], engine), dim=0).tolist() == \
        np.repeat(x, [1, 2], axis=0).tolist()
    assert t(x.tolist(), engine).repeat_interleave(t([0, 3], engine), dim=-1).tolist() == \
        np.repeat(x, [0, 3], axis=1).tolist()
    assert t(x.tolist(), engine).repeat_interleave(t([2], engine), dim=0).tolist() == np.repeat(x, 2, 0).tolist()
    assert tg.repeat_interleave(t([2, 0, 3], engine)).tolist() == [0, 0, 2, 2, 2]
    assert tg.repeat_interleave(t([1, 2], engine, dtype=tg.int32)).dtype is tg.int32
    assert t(5.0, engine).repeat_interleave(3).tolist() == [5.0, 5.0, 5.0]
    assert t([[1, 2]], engine).repeat_interleave(t([1, 1], engine), dim=1, output_size=2).shape == (1, 2)
    assert t([1.0, 2.0], engine).repeat_interleave(t([0, 0], engine)).shape == (0,)
    y = t([1.0, 2.0], engine, requires_grad=True)
    y.repeat_interleave(t([2, 3], engine)).backward(t([0.0, 1.0, 2.0, 3.0, 4.0], engine))
    assert y.grad.tolist() == [1.0, 9.0]
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        t(x.tolist(), engine).repeat_interleave(t([1, -1], engine), dim=0)
    with pytest.raises(RuntimeError, match=r"repeats.size\(0\) = 3 and input.size\(0\) = 2"):
        t(x.tolist(), engine).repeat_interleave(t([1, 2, 3], engine), dim=0)
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        t(x.tolist(), engine).repeat_interleave(-1)
    with pytest.raises(RuntimeError, match="repeats must be 0-dim or 1-dim tensor"):
        t(x.tolist(), engine).repeat_interleave(t([[1, 2]], engine), dim=0)
    with pytest.raises(RuntimeError, match="allocated size does not match required size"):
        t(x.tolist(), engine).repeat_interleave(t([1, 2], engine), dim=0, output_size=5)
    with pytest.raises(RuntimeError, match="Invalid output_size, expected 4 but got 5"):
        t(x.tolist(), engine).repeat_interleave(2, dim=0, output_size=5)
    with pytest.raises(RuntimeError, match="only accept 1D vector as repeat"):
        tg.repeat_interleave(t([[1, 2]], engine))
    with pytest.raises(NotImplementedError, match="int64 or int32"):
        t(x.tolist(), engine).repeat_interleave(t([1.0, 2.0], engine), dim=0)


def test_repeat_interleave_checks_the_total_before_allocating():
    huge = tg.tensor([2 ** 61, 2 ** 61, 2 ** 61])                        # int64 running sums would wrap
    with pytest.raises(RuntimeError, match="more than a tensor can hold"):
        tg.tensor([1.0, 2.0, 3.0]).repeat_interleave(huge)
    with pytest.raises(RuntimeError, match="tried to allocate"):        # more than the machine's memory
        tg.tensor([1.0, 2.0]).repeat_interleave(tg.tensor([2 ** 50, 1]))


def test_counting_ops_are_public():
    for name in ("unique", "unique_consecutive", "bincount", "histc", "searchsorted", "bucketize", "repeat_interleave"):
        assert name in tg.__all__ and callable(getattr(tg, name))
    for name in ("unique", "unique_consecutive", "bincount", "histc", "repeat_interleave"):
        assert callable(getattr(tg.Tensor, name))
