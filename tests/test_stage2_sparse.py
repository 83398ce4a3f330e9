"""Sparse COO tensors (stage2_tensor/sparse.py): building, to_dense and coalesce against
numpy, the product with a dense matrix on either side against numpy's dense product, its
gradients with respect to the dense matrix and the values against central differences, on
every device; and bad coordinates refused."""
import numpy as np
import pytest

import stage2_tensor as tg

from .engines import DEVICES, engine_params, engines_on
from .gradcheck import gradcheck

EVERY_DEVICE = engine_params(engines_on(*DEVICES))
# a 4 x 5 matrix with a duplicate coordinate (1, 3) and an empty row (2)
INDICES = np.array([[0, 1, 1, 3, 1, 0], [4, 3, 0, 2, 3, 0]])
VALUES = np.array([0.5, -1.5, 2.0, 3.0, 0.25, -0.75])
SHAPE = (4, 5)


def dense_of(indices, values, shape):
    out = np.zeros(shape)
    np.add.at(out, tuple(indices), values)
    return out


def sparse(engine, values=VALUES):
    values = values if isinstance(values, tg.Tensor) else tg.tensor(values.tolist(), dtype=tg.float64,
                                                                    device=engine.device)
    return tg.sparse_coo_tensor(INDICES.tolist(), values, SHAPE, device=engine.device)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_to_dense_coalesce_and_back(engine):
    s = sparse(engine)
    want = dense_of(INDICES, VALUES, SHAPE)
    assert s.is_sparse and s._nnz() == 6 and s.shape == SHAPE and s.device == engine.device
    np.testing.assert_array_equal(s.to_dense().numpy(), want)
    c = s.coalesce()
    flat = INDICES[0] * SHAPE[1] + INDICES[1]
    positions = np.unique(flat)
    assert c._nnz() == len(positions)
    np.testing.assert_array_equal(c.indices().numpy(), np.stack(np.unravel_index(positions, SHAPE)))
    np.testing.assert_allclose(c.values().numpy(), [want.reshape(-1)[p] for p in positions])
    back = tg.tensor(want.tolist(), dtype=tg.float64, device=engine.device).to_sparse()
    np.testing.assert_array_equal(back.indices().numpy(), np.stack(np.nonzero(want)))
    np.testing.assert_array_equal(back.to_dense().numpy(), want)
    np.testing.assert_array_equal((tg.eye(4, 5, dtype=tg.float64, device=engine.device) + s).numpy(),
                                  np.eye(4, 5) + want)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_products_on_either_side_against_numpy(engine):
    rng = np.random.default_rng(0)
    right, left = rng.standard_normal((5, 3)), rng.standard_normal((2, 4))
    s, a = sparse(engine), dense_of(INDICES, VALUES, SHAPE)
    on = lambda x: tg.tensor(x.tolist(), dtype=tg.float64, device=engine.device)  # noqa: E731
    for got in (tg.spmm(s, on(right)), tg.mm(s, on(right)), s @ on(right), tg.sparse.mm(s, on(right))):
        np.testing.assert_allclose(got.numpy(), a @ right, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((on(left) @ s).numpy(), left @ a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tg.mm(on(left), s).numpy(), left @ a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", EVERY_DEVICE)
def test_product_gradients_against_central_differences(engine):
    rng = np.random.default_rng(1)
    gradcheck(engine, lambda v, d: sparse(engine, v) @ d, [VALUES.copy(), rng.standard_normal((5, 3))],
              reference=lambda v, d: dense_of(INDICES, v, SHAPE) @ d)
    gradcheck(engine, lambda v, d: d @ sparse(engine, v), [VALUES.copy(), rng.standard_normal((2, 4))],
              reference=lambda v, d: d @ dense_of(INDICES, v, SHAPE))


def test_cost_grows_with_the_entries_not_the_dense_size():
    """A 100,000 x 100,000 matrix of 1,000 entries: its dense form would need 40 GB; the
    product never makes it."""
    n, rng = 100_000, np.random.default_rng(2)
    indices = rng.integers(0, n, (2, 1000))
    s = tg.sparse_coo_tensor(indices.tolist(), tg.ones(1000), (n, n))
    dense = rng.standard_normal((n, 2)).astype(np.float32)
    out = s @ tg.from_numpy(dense)
    want = np.zeros((n, 2), np.float32)
    np.add.at(want, indices[0], dense[indices[1]])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_bad_coordinates_are_refused():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 3 but found index 4"):
        tg.sparse_coo_tensor([[0, 1], [4, 0]], [1.0, 2.0], (2, 3))
    with pytest.raises(RuntimeError, match="negative index -1"):
        tg.sparse_coo_tensor([[0, -1], [0, 0]], [1.0, 2.0], (2, 3))
    with pytest.raises(ValueError, match="one value per column of indices"):
        tg.sparse_coo_tensor([[0, 1], [0, 0]], [1.0], (2, 3))
    with pytest.raises(ValueError, match="cannot be multiplied"):
        tg.sparse_coo_tensor([[0], [0]], [1.0], (2, 3)) @ tg.ones(2, 2)
    assert tg.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0]).shape == (3, 2)     # size inferred
