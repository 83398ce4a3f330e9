"""cumprod, cummax, cummin and logcumsumexp (stage2_tensor/cumulative.py): what the op table
(tests/optable.py: values and gradients at random inputs) does not reach: PyTorch's rules
for ties, NaN and infinities, cumprod's gradient with zeros in the input, dtypes and errors,
on every device (each scan is a kernel of each: python's, C's and CUDA's)."""
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


def _running_extreme(x, axis, smallest):
    """PyTorch's cummax (cummin) of one axis, by its rule: x takes the extreme's place when
    x is NaN, or when the extreme is not and x >= it (<= it): the last of equal values."""
    x = np.moveaxis(x, axis, -1)
    values, indices = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
    for row in np.ndindex(*x.shape[:-1]):
        best, at = x[row][0], 0
        for i, v in enumerate(x[row]):
            if np.isnan(v) or (not np.isnan(best) and (v <= best if smallest else v >= best)):
                best, at = v, i
            values[row + (i,)], indices[row + (i,)] = best, at
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_cummax_takes_the_last_of_equal_values_and_the_last_nan(engine):
    x = t([1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN, 1.0], engine)       # PyTorch's answers
    result = tg.cummax(x, 0)
    assert isinstance(result, tuple) and result._fields == ("values", "indices") and type(result).__name__ == "cummax"
    assert result.indices.tolist() == [0, 1, 2, 2, 4, 4, 6, 6] and result.indices.dtype is tg.int64
    np.testing.assert_array_equal(result.values.numpy(), [1, 3, 3, 3, NAN, NAN, NAN, NAN])
    smallest = x.cummin(0)
    assert type(smallest).__name__ == "cummin" and smallest.indices.tolist() == [0, 0, 0, 0, 4, 4, 6, 6]
    assert t([2, 2, 1, 2], engine).cummax(0).indices.tolist() == [0, 1, 1, 3]
    assert t([True, False, True], engine).cummin(0).values.tolist() == [True, False, False]
    for dtype in (tg.int32, tg.float16, tg.bfloat16, tg.float64):
        values, indices = t([[3, 1, 4], [1, 5, 9]], engine, dtype=dtype).cummax(-1)
        assert values.dtype is dtype and values.tolist() == [[3, 3, 4], [1, 5, 9]] and indices.tolist() == [[0, 0, 2], [0, 1, 2]]
    values, indices = tg.cummin(t(7.0, engine), -1)                 # 0-d: itself, at index 0
    assert values.tolist() == 7.0 and indices.tolist() == 0
    assert tg.zeros(2, 0, device=engine.device).cummax(1).values.shape == (2, 0)
    with pytest.raises(IndexError, match="out of range"):
        x.cummax(1)
    with pytest.raises(TypeError, match="'dim' must be an int"):
        tg.cummin(x, None)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=8, deadline=None)
def test_cummax_and_cummin_follow_pytorchs_rule_over_ties_and_nan(engine, data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    pool = data.draw(st.sampled_from([[0.0, 1.0, -1.0], [NAN, 2.0, -INF, INF, 0.5]]), label="values")
    x = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed")).choice(pool, shape)
    leaf = t(x.tolist(), engine, dtype=tg.float64, requires_grad=True)
    for fn, smallest in ((tg.cummax, False), (tg.cummin, True)):
        want_values, want_indices = _running_extreme(x, dim, smallest)
        values, indices = fn(leaf, dim)
        np.testing.assert_array_equal(values.detach().numpy(), want_values)
        np.testing.assert_array_equal(indices.numpy(), want_indices)
    values, indices = tg.cummax(leaf, dim)
    weights = np.random.default_rng(0).normal(size=shape)
    (values * t(weights.tolist(), engine, dtype=tg.float64)).sum().backward()
    want = np.zeros(shape)                                           # each weight back to its index
    np.add.at(want, tuple(np.indices(shape)[d] if d != dim % len(shape) else indices.numpy()
                          for d in range(len(shape))), weights)
    np.testing.assert_array_equal(leaf.grad.numpy(), want)


def _cumprod_gradient(x, g):
    """dL/dx of sum(g * cumprod(x)) along the last axis, by the product rule: the sum over
    j >= i of g[j] times the product of x[m], m <= j, m != i (no division: zeros welcome)."""
    grad = np.zeros_like(x)
    for row in np.ndindex(*x.shape[:-1]):
        n = x.shape[-1]
        for i in range(n):
            grad[row + (i,)] = sum(g[row + (j,)] * np.prod([x[row + (m,)] for m in range(j + 1) if m != i])
                                   for j in range(i, n))
    return grad


@pytest.mark.parametrize("engine", EVERY_DEVICE)
@given(data=st.data())
@settings(max_examples=8, deadline=None)
def test_cumprod_gradient_with_zeros_is_the_product_rule(engine, data):
    """PyTorch's rule: before a row's first zero, the reversed cumsum of g * out over x; at
    it, the products with that zero taken as 1; after it, nothing."""
    rows, n = data.draw(st.integers(1, 3), label="rows"), data.draw(st.integers(1, 6), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    x = rng.choice([0.0, 0.0, 1.5, -2.0, 0.5, 3.0], (rows, n))
    g = rng.normal(size=(rows, n))
    leaf = t(x.tolist(), engine, dtype=tg.float64, requires_grad=True)
    out = leaf.cumprod(-1)
    np.testing.assert_array_equal(out.detach().numpy(), np.cumprod(x, -1))
    (out * t(g.tolist(), engine, dtype=tg.float64)).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), _cumprod_gradient(x, g), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_cumprod_dtypes_and_special_values(engine):
    x = t([2.0, 0.0, 3.0, 0.0, 4.0], engine, dtype=tg.float64, requires_grad=True)
    x.cumprod(0).backward(t([1.0, 2.0, 3.0, 4.0, 5.0], engine, dtype=tg.float64))
    assert x.grad.tolist() == [1.0, 22.0, 0.0, 0.0, 0.0]                 # PyTorch's answer
    assert t([1, 2, 3], engine).cumprod(0).dtype is tg.int64
    assert t([True, False], engine, dtype=tg.bool).cumprod(0).tolist() == [1, 0]
    assert tg.cumprod(t([[1, 2], [3, 4]], engine, dtype=tg.int32), 0, dtype=tg.float32).tolist() == [[1, 2], [3, 8]]
    assert t([1.5, 2.0], engine, dtype=tg.float16).cumprod(0).dtype is tg.float16
    np.testing.assert_array_equal(t([2.0, INF, 0.0, NAN, 1.0], engine).cumprod(0).numpy(), [2, INF, NAN, NAN, NAN])
    assert tg.cumprod(t(3.0, engine), 0).tolist() == 3.0
    assert tg.zeros(0, 3, device=engine.device).cumprod(0).shape == (0, 3)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_logcumsumexp_infinities_nan_and_its_gradient(engine):
    got = tg.logcumsumexp(t([-INF, -INF, 1.0, INF, INF, 2.0, NAN, 3.0], engine), 0)
    np.testing.assert_array_equal(got.numpy(), [-INF, -INF, 1.0, INF, INF, INF, NAN, NAN])      # PyTorch's
    big = t([[1000.0, 1001.0, -1000.0]], engine, dtype=tg.float64, requires_grad=True)
    out = big.logcumsumexp(1)
    np.testing.assert_allclose(out.detach().numpy(), np.logaddexp.accumulate([[1000.0, 1001.0, -1000.0]], 1))
    g = np.array([[1.0, -2.0, 3.0]])
    (out * t(g.tolist(), engine, dtype=tg.float64)).sum().backward()
    x, y = np.array([1000.0, 1001.0, -1000.0]), out.detach().numpy()[0]
    want = [sum(g[0, j] * np.exp(x[i] - y[j]) for j in range(i, 3)) for i in range(3)]
    np.testing.assert_allclose(big.grad.numpy()[0], want, rtol=1e-12, atol=1e-300)
    assert t([0.5], engine, dtype=tg.float16).logcumsumexp(0).dtype is tg.float16
    assert tg.logcumsumexp(t(2.0, engine), 0).tolist() == 2.0
    with pytest.raises(NotImplementedError, match="floating-point"):
        t([1, 2], engine).logcumsumexp(0)


def test_scans_are_public_as_functions_and_methods():
    for name in ("cumprod", "cummax", "cummin", "logcumsumexp"):
        assert name in tg.__all__ and callable(getattr(tg, name)) and callable(getattr(tg.Tensor, name))


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    x = [[1.0, 3.0, 3.0, NAN, 0.0], [2.0, 0.0, 2.0, -1.0, 4.0]]
    for op in ("cummax", "cummin"):
        ours, theirs = getattr(tg.tensor(x), op)(1), getattr(torch.tensor(x), op)(1)
        assert ours.indices.tolist() == theirs.indices.tolist()
    a = tg.tensor(x[1], dtype=tg.float64, requires_grad=True)
    b = torch.tensor(x[1], dtype=torch.float64, requires_grad=True)
    a.cumprod(0).sum().backward()
    b.cumprod(0).sum().backward()
    assert a.grad.tolist() == b.grad.tolist()
