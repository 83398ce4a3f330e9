"""Advanced indexing, read and written, on every device (stage2_tensor/advanced_index.py;
the kernels index and index_put, kernels/indexing.py): against numpy's fancy indexing,
whose rules are PyTorch's for these indices (where they differ, an int beside advanced
indices a slice keeps apart, PyTorch's shape is written out); an index out of range raises
IndexError naming it and its size, and a write that raises changes nothing. The gradients
are rows of tests/optable.py (advanced_index_reads, index_writes, take_and_masks)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stage2_tensor as tg

from .engines import device_params

DEVICES = device_params()
X = np.random.default_rng(3).normal(size=(3, 4, 5))
MASK = X[:, :, 0] > 0

# numpy's indices; ``ours`` makes each numpy array a tensor (lists, ranges, numpy ints stay)
READS = {
    "mask_all": X > 0,
    "mask_leading": MASK,
    "mask_list": [True, False, True],
    "mask_empty": X > 9,
    "rows_repeated": [2, 0, 2],
    "after_slice": (slice(None), [1, 3]),
    "2d_after_slice": (slice(None), np.array([[2, 0], [1, 1]])),
    "mask_after_slice": (slice(None), np.array([False, True, True, False])),
    "ellipsis_list": (Ellipsis, [0, 4]),
    "ellipsis_mask": (Ellipsis, X[0, 0] > 0),
    "pairs": (np.array([0, 2]), np.array([3, 1])),
    "apart": ([0, 2, 0], slice(None), [1, 1, 3]),                 # S first
    "neighbours_broadcast": (slice(None), np.array([[1, 0]]), np.array([[2], [4]])),
    "negative": ([-1, -3], slice(1, None), [[-5], [4]]),
    "none_between": ([0, 1], None, [0, 1]),
    "none_first": (None, [0, 1]),
    "bool_true": True,
    "bool_false": False,
    "slice_then_bool": (slice(None), True),
    "list_and_bool": ([0, 1], True),
    "numpy_int_and_list": (np.int64(1), [0, 2]),
    "range_and_array": (range(2), np.array([2, 0])),
    "int_list_step": (1, [[0, 1]], slice(None, None, 2)),
    "mask_then_slice_list": (np.array([True, False, True]), slice(1, 3), [4, 0]),
}
WRITES = {name: index for name, index in READS.items() if name != "rows_repeated"}   # no repeats


def ours(index, device):
    def one(i):
        return tg.tensor(i, device=device) if isinstance(i, np.ndarray) else i
    return tuple(one(i) for i in index) if isinstance(index, tuple) else one(index)


def t(a, device, dtype=tg.float64):
    return tg.tensor(np.asarray(a), dtype=dtype, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", READS)
def test_reads_as_numpy(device, name):
    got, want = t(X, device)[ours(READS[name], device)], X[READS[name]]
    assert got.shape == want.shape and got.device == device
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", WRITES)
def test_writes_as_numpy(device, name):
    """A value of the result's shape, one broadcast along it, and a number."""
    index = WRITES[name]
    shape = X[index].shape
    for value in (np.arange(math.prod(shape), dtype=float).reshape(shape) + 10, np.arange(shape[-1] if shape else 1.0),
                  -1.5):
        x, want = t(X, device), X.copy()
        x[ours(index, device)] = t(value, device) if isinstance(value, np.ndarray) else value
        want[index] = value
        np.testing.assert_array_equal(x.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_pytorch_s_rules_where_numpy_differs_and_the_reported_failures(device):
    x = t(X, device)
    # an int selects first (a 0-d integer tensor too): x[0, :, [1, 2]] is x[0][:, [1, 2]]
    for first in (0, tg.tensor(0, device=device), np.int64(0)):
        np.testing.assert_array_equal(x[first, :, [1, 2]].numpy(), X[0][:, [1, 2]])
    assert x[tg.tensor(1, device=device)].shape == (4, 5)
    # 0-d bool masks: a new dimension, kept or empty, read and written
    assert x[tg.tensor(True, device=device)].shape == (1, 3, 4, 5)
    assert x[tg.tensor(False, device=device)].shape == (0, 3, 4, 5)
    y = x.clone()
    y[tg.tensor(False, device=device)] = 7.0
    np.testing.assert_array_equal(y.numpy(), X)
    y[tg.tensor(True, device=device)] = 7.0
    assert (y == 7.0).all().item()
    # a range beside a tensor, a numpy int: x[range(N), y] = v
    rows = t(X[:, 0, :], device)
    labels = tg.tensor([4, 0, 2], device=device)
    rows[range(3), labels] = 9.0
    want = X[:, 0, :].copy()
    want[range(3), [4, 0, 2]] = 9.0
    np.testing.assert_array_equal(rows.numpy(), want)
    rows[np.int64(1)] = 5.0
    want[1] = 5.0
    np.testing.assert_array_equal(rows.numpy(), want)
    # nanoGPT's top-k: everything below each row's k-th largest set to -inf
    logits = t(X[:, 0, :], device)
    v, _ = tg.topk(logits, 2)
    logits[logits < v[:, [-1]]] = -float("inf")
    kth = np.sort(X[:, 0, :], axis=1)[:, [-2]]
    np.testing.assert_array_equal(logits.numpy(), np.where(X[:, 0, :] < kth, -np.inf, X[:, 0, :]))
    # a list holding lists is the whole index (PyTorch reads it as a tuple); the idiom on ints
    np.testing.assert_array_equal(x[[[0, 1], [1, 1]]].numpy(), X[[0, 1], [1, 1]])
    ints = tg.tensor([1, -2, 3], device=device)
    ints[ints < 0] = 0
    assert ints.tolist() == [1, 0, 3]


@pytest.mark.parametrize("device", DEVICES)
def test_index_put_accumulates_repeats_and_the_ops_built_on_it(device):
    x, want = t(X, device), X.copy()
    rows, cols = [0, 2, 0, 0], [1, 1, 1, 3]
    v = np.arange(20.0).reshape(4, 5)
    x.index_put_((tg.tensor(rows, device=device), tg.tensor(cols, device=device)), t(v, device), accumulate=True)
    np.add.at(want, (rows, cols), v)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12)
    b = tg.zeros(4, dtype=tg.bool, device=device)              # a bool accumulates as or
    b.index_put_((tg.tensor([0, 0, 3], device=device),), tg.tensor([True, True, False], device=device), True)
    assert b.tolist() == [True, False, False, False]
    x = t(X, device)
    x.index_add_(1, tg.tensor([3, 3], device=device), t(np.ones((3, 2, 5)), device), alpha=2)
    np.testing.assert_allclose(x.numpy()[:, 3], X[:, 3] + 4, rtol=1e-12)
    x.index_fill_(2, tg.tensor([-1], device=device), -1.0)
    x.index_copy_(0, tg.tensor([2], device=device), t(np.zeros((1, 4, 5)), device))
    assert (x[:2, :, -1] == -1).all().item() and (x[2] == 0).all().item()
    found = tg.where(t(MASK, device, tg.bool))
    np.testing.assert_array_equal(np.stack([f.numpy() for f in found]), np.nonzero(MASK))
    np.testing.assert_array_equal(tg.argwhere(t(MASK, device, tg.bool)).numpy(), np.argwhere(MASK))
    assert tg.count_nonzero(t(MASK, device, tg.bool), dim=1).tolist() == MASK.sum(1).tolist()
    assert tg.tensor(0, device=device).nonzero(as_tuple=True)[0].shape == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_a_bad_index_raises_index_error_naming_it_and_writes_nothing(device):
    """PyTorch's dimension: counted among the indexed ones (x[:, [5]]: dimension 0)."""
    x = t(X, device)
    for index, value, dim, size in (([0, 3], 3, 0, 3), ((slice(None), [1, -5]), -5, 0, 4),
                                    (([0], slice(None), [5]), 5, 1, 5), (([1, 2], [0, 1], [2, 7]), 7, 2, 5)):
        message = f"^index {value} is out of bounds for dimension {dim} with size {size}$"
        with pytest.raises(IndexError, match=message):
            x[ours(index, device)].numpy()
        with pytest.raises(IndexError, match=message):
            x[ours(index, device)] = 1.0
    for indices, value, dim, size in ((([0, 3],), 3, 0, 3), (([1, 2], [0, -9]), -9, 1, 4)):
        with pytest.raises(IndexError, match=f"^index {value} is out of bounds for dimension {dim} with size {size}$"):
            x.index_put_(tuple(tg.tensor(i, device=device) for i in indices), t(1.0, device), accumulate=True)
    np.testing.assert_array_equal(x.numpy(), X)
    with pytest.raises(IndexError, match="^index 4 is out of bounds for dimension 1 with size 4$"):
        x.index_copy(1, tg.tensor([4], device=device), t(np.ones((3, 1, 5)), device))
    with pytest.raises(IndexError, match="tensors used as indices must be long, int or bool tensors, got "
                                         "tracegrad.float32"):
        x[tg.tensor([0.5], device=device)]
    with pytest.raises(IndexError, match=r"The shape of the mask \(3,\) at index 0 does not match the shape of "
                                         r"the indexed tensor \(3, 4, 5\) at index 1"):
        x[:, tg.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing tensors could not be broadcast together with "
                                         r"shapes \[2\], \[3\]"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[[0], [1], [2], [0]]
    with pytest.raises(RuntimeError, match=r"value tensor of shape \(5,\) cannot be broadcast to indexing result "
                                           r"of shape \(0,\)"):
        x[x > 9] = tg.ones(5, device=device)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x.index_put_((tg.tensor([0], device=device),), tg.ones(4, 5, device=device))
    with pytest.raises(RuntimeError, match="has stride 0"):
        tg.zeros(3, device=device).expand(2, 3)[tg.tensor([0], device=device)] = 1.0
    leaf = tg.zeros(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place operation on a leaf tensor that requires grad"):
        leaf[leaf > 0] = 1.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [tg.bool, tg.int32, tg.int64, tg.float16, tg.float32, tg.float64])
def test_the_kernels_move_every_dtype_through_strided_views(device, dtype):
    """index and index_put on a transposed view with its last dimension stepped, values
    broadcast along the trailing dimensions, repeated indices added up."""
    np_dtype = {tg.bool: bool}.get(dtype, dtype.name)
    a = (np.random.default_rng(5).normal(size=(6, 5, 4)) * 3).round().astype(np_dtype)
    x = tg.tensor(a, dtype=dtype, device=device)
    view, ref = x.permute(2, 0, 1)[:, :, ::2], a.transpose(2, 0, 1)[:, :, ::2]
    i, j = [3, -1, 0, 3], [[5], [0]]
    np.testing.assert_array_equal(view[i, j].numpy(), ref[i, j])
    row = (np.arange(3) % 2 == 0) if dtype is tg.bool else np.arange(3).astype(np_dtype)
    view.index_put_((tg.tensor(i, device=device), tg.tensor(j, device=device)),
                    tg.tensor(row, dtype=dtype, device=device), accumulate=True)
    if dtype is tg.bool:
        np.logical_or.at(ref, (np.broadcast_to(i, (2, 4)), np.broadcast_to(j, (2, 4))), row)
    else:
        np.add.at(ref, (np.broadcast_to(i, (2, 4)), np.broadcast_to(j, (2, 4))), row)
    np.testing.assert_array_equal(x.numpy().transpose(2, 0, 1)[:, :, ::2], ref)


@pytest.mark.parametrize("device", DEVICES)
def test_without_accumulate_a_repeated_index_keeps_one_of_its_values(device):
    x = tg.zeros(3, device=device)
    x[tg.tensor([1, 1, 1], device=device)] = tg.tensor([5.0, 6.0, 7.0], device=device)
    assert x.tolist()[1] in (5.0, 6.0, 7.0) and x.tolist()[0::2] == [0.0, 0.0]
    if not device.startswith("cuda"):                          # the last, where one thread writes
        assert x.tolist()[1] == 7.0


@st.composite
def index_cases(draw):
    """A shape of 1 to 3 dimensions, k <= ndim index tensors of one shape with repeats, and
    values for them."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    k = draw(st.integers(1, len(shape)))
    n = draw(st.integers(0, 5))
    indices = [draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n)) for size in shape[:k]]
    return shape, indices, draw(st.integers(0, 2 ** 32 - 1))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=8)
@given(case=index_cases())
def test_reads_and_accumulating_writes_property(device, case):
    shape, indices, seed = case
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    index = tuple(np.array(i, dtype=np.int64) for i in indices)
    x = t(a, device)
    np.testing.assert_array_equal(x[ours(index, device)].numpy(), a[index])
    v = rng.normal(size=a[index].shape)
    x.index_put_(ours(index, device), t(v, device), accumulate=True)
    np.add.at(a, index, v)
    np.testing.assert_allclose(x.numpy(), a, rtol=1e-12, atol=1e-12)
