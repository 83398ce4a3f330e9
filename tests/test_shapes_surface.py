"""PyTorch's shape, view and sequence functions of the surface sweep's area D
(stage2_tensor/view_layouts.py, shaping.py, put.py, membership.py, sequences.py) on
every device: forward against numpy, views written through to their base, PyTorch's errors.
Their gradients are the op table's rows shape_views, shape_scatters and shape_arrangements
(tests/optable_shapes.py)."""
import numpy as np
import pytest

import stage2_tensor as tg

from .engines import device_params

DEVICES = device_params()
A = np.arange(24.0).reshape(2, 3, 4)


def same(got, want):
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), np.asarray(w), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_views_write_through_to_their_base(device):
    x = tg.tensor(A, device=device)
    x.diagonal(0, 1, 2).mul_(0)
    want = A.copy()
    want[:, [0, 1, 2], [0, 1, 2]] = 0
    same(x, want)
    x.unfold(2, 2, 2).select(-1, 1).copy_(tg.full((2, 3, 2), -1.0, device=device))
    want[:, :, 1::2] = -1
    same(x, want)
    x.select(0, 1).copy_(tg.ones(3, 4, device=device))
    want[1] = 1
    same(x, want)
    assert x.diagonal().storage is x.storage and x.unfold(0, 1, 1).storage is x.storage


@pytest.mark.parametrize("device", DEVICES)
def test_grids_splits_and_stacks_match_numpy(device):
    x = tg.tensor(A, device=device)
    u, v = tg.tensor([1.0, 2.0, 3.0], device=device), tg.tensor([4.0, 5.0], device=device)
    same(tg.meshgrid(u, v, indexing="xy"), tuple(np.meshgrid([1.0, 2, 3], [4.0, 5])))
    same(tg.meshgrid([u, v]), tuple(np.meshgrid([1.0, 2, 3], [4.0, 5], indexing="ij")))
    same(x.tensor_split(3, 2), tuple(np.array_split(A, 3, 2)))
    same(tg.tensor_split(x, [1, 9], 1), tuple(np.split(A, [1, 9], 1)))
    same(x.hsplit([2]), tuple(np.hsplit(A, [2])))
    same(x.vsplit(2), tuple(np.vsplit(A, 2)))
    same(x.dsplit(2), tuple(np.dsplit(A, 2)))
    same(x.split_with_sizes([1, 3], -1), tuple(np.split(A, [1], -1)))
    same(tg.atleast_2d(u, x), (np.atleast_2d(np.array([1.0, 2, 3])), A))
    same(tg.atleast_3d(tg.tensor(5.0, device=device)), np.atleast_3d(5.0))
    same(tg.row_stack([u, u]), np.vstack([[1.0, 2, 3]] * 2))
    same(tg.unflatten(x, -1, (2, 2)), A.reshape(2, 3, 2, 2))
    same(x.swapdims(0, -1), A.swapaxes(0, -1))
    same(tg.flipud(x), A[::-1])


@pytest.mark.parametrize("device", DEVICES)
def test_indices_membership_and_put_match_numpy(device):
    for offset in (-1, 0, 2):
        same(tg.tril_indices(3, 5, offset, device=device), np.stack(np.tril_indices(3, offset, 5)))
        same(tg.triu_indices(4, 2, offset, device=device), np.stack(np.triu_indices(4, offset, 2)))
    flat = tg.tensor([0, 5, 23, 13], device=device)
    same(tg.unravel_index(flat, (2, 3, 4)), np.unravel_index([0, 5, 23, 13], (2, 3, 4)))
    x = tg.tensor(A, device=device)
    values = tg.tensor([3.0, 17.0, 99.0, 3.0], device=device)
    same(tg.isin(x, values), np.isin(A, [3.0, 17.0, 99.0]))
    same(tg.isin(x, values, invert=True), np.isin(A, [3.0, 17.0, 99.0], invert=True))
    same(tg.isin(x, tg.tensor([], device=device)), np.zeros(A.shape, dtype=bool))
    want = A.copy().ravel()
    np.add.at(want, [0, -1, 0], [1.0, 2.0, 3.0])
    got = x.put(tg.tensor([0, -1, 0], device=device), tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64, device=device),
                accumulate=True)
    same(got, want.reshape(A.shape))
    x.put_(tg.tensor([1], device=device), tg.tensor([-5.0], dtype=tg.float64, device=device))
    assert x.reshape(-1)[1].item() == -5.0


@pytest.mark.parametrize("device", DEVICES)
def test_windows_logspace_and_vander_match_numpy(device):
    numpy_windows = {"hann": np.hanning, "hamming": np.hamming, "blackman": np.blackman, "bartlett": np.bartlett}
    for name, window in numpy_windows.items():
        make = getattr(tg, f"{name}_window")
        same(make(7, periodic=False, dtype=tg.float64, device=device), window(7))
        same(make(6, dtype=tg.float64, device=device), window(7)[:-1])          # periodic: one more, dropped
        assert make(1, device=device).tolist() == [1.0] and make(0, device=device).numel() == 0
    same(tg.kaiser_window(9, False, beta=5.0, dtype=tg.float64, device=device), np.kaiser(9, 5.0))
    same(tg.kaiser_window(8, dtype=tg.float64, device=device), np.kaiser(9, 12.0)[:-1])
    assert tg.hann_window(4, device=device).dtype is tg.float32
    same(tg.logspace(-2, 3, 6, device=device), np.logspace(-2, 3, 6))
    same(tg.logspace(0, 4, 5, base=2.0, dtype=tg.float64, device=device), np.logspace(0, 4, 5, base=2.0))
    v = tg.tensor([2, 3, 5], device=device)
    same(tg.vander(v), np.vander([2, 3, 5]))
    assert tg.vander(v).dtype is tg.int64


@pytest.mark.parametrize("device", DEVICES)
def test_as_strided_views_its_storage_within_bounds_and_differentiates(device):
    x = tg.tensor(np.arange(10.0), device=device, requires_grad=True)
    view = x.as_strided((3, 3), (2, 1), 1)           # overlapping windows
    same(view, np.lib.stride_tricks.as_strided(np.arange(10.0)[1:], (3, 3), (16, 8)))
    view.sum().backward()
    same(x.grad, [0, 1, 1, 2, 1, 2, 1, 1, 0, 0])
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.detach().as_strided((3, 3), (4, 1), 2)
    with pytest.raises(RuntimeError, match="Negative strides"):
        x.detach().as_strided((2,), (-1,))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_raise_pytorchs_errors(device):
    x = tg.tensor(A, device=device)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        x.diagonal(0, 1, 1)
    with pytest.raises(IndexError):
        x.diagonal(0, 0, 3)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 2 is 4 but size is 5"):
        x.unfold(2, 5, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(2, 2, 0)
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice of self"):
        tg.select_scatter(x, tg.zeros(3, 3, device=device), 0, 0)
    with pytest.raises(IndexError, match="out of range"):
        x.select(1, 3)
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        tg.rot90(x, 1, (1, 1))
    with pytest.raises(RuntimeError, match="not divisible by the split_size 2"):
        x.hsplit(2)
    with pytest.raises(RuntimeError, match="sum exactly to 4"):
        x.split_with_sizes([1, 2], 2)
    with pytest.raises(RuntimeError, match="movedim: Invalid source or destination dims"):
        x.movedim((0, 1), 2)
    with pytest.raises(RuntimeError, match="repeated dim"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(RuntimeError, match="is not expandable"):
        x.sum_to_size(3)
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        tg.meshgrid(x)
    with pytest.raises(RuntimeError, match="floating point dtypes"):
        tg.hann_window(4, dtype=tg.int64)
    with pytest.raises(RuntimeError, match="2 or fewer dimensions"):
        tg.block_diag(x)
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        tg.combinations(x)
    with pytest.raises(IndexError):
        x.put(tg.tensor([24], device=device), tg.tensor([1.0], dtype=tg.float64, device=device)).tolist()    # lazy: when read
