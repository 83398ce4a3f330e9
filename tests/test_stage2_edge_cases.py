"""Edge cases as PyTorch has them, on every device: NaN in max/min and their indices,
tensors with a zero-length dimension, losses over no rows, one_hot's range check, and a
write through ``numpy()`` after an operation read the tensor."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params()
NAN = math.nan


def values(t):
    return np.array(t.tolist(), dtype=np.float64)


# ---- NaN in max, min, argmax, argmin ------------------------------------------------------
# numpy propagates NaN as PyTorch does (np.max is NaN, np.argmax the first NaN's index).
ROWS = np.array([[1.0, NAN, 3.0, NAN], [4.0, 2.0, 4.0, 0.0], [2.0, 5.0, 1.0, NAN]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_nan_propagates_through_max_min_and_their_indices(device, op, dim):
    x = tg.tensor(ROWS.tolist(), dtype=tg.float64, device=device)
    got = getattr(x, op)() if dim is None else getattr(x, op)(dim=dim)
    if op in ("max", "min") and dim is not None:
        np.testing.assert_array_equal(values(got.indices), getattr(np, "arg" + op)(ROWS, axis=dim))
        got = got.values
    np.testing.assert_array_equal(values(got), getattr(np, op)(ROWS, axis=dim))


@pytest.mark.parametrize("device", DEVICES)
def test_the_gradient_of_a_nan_max_goes_to_the_nans(device):
    x = tg.tensor(ROWS.tolist(), dtype=tg.float64, device=device, requires_grad=True)
    x.max().backward()                              # shared among the NaNs...
    np.testing.assert_array_equal(values(x.grad), np.where(np.isnan(ROWS), 1 / 3, 0.0))
    x.grad = None
    x.max(dim=1).values.sum().backward()            # ...and per row: the NaNs, or the maxima
    np.testing.assert_array_equal(values(x.grad), [[0, 0.5, 0, 0.5], [0.5, 0, 0.5, 0], [0, 0, 0, 1]])


# ---- tensors with a zero-length dimension -------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 0, 3), (0,)])
def test_empty_tensors_read_out_as_numpy_does(device, shape):
    t = tg.zeros(*shape, device=device)
    assert t.tolist() == np.zeros(shape).tolist()
    assert t.numpy().shape == shape


@pytest.mark.parametrize("device", DEVICES)
def test_empty_tensors_print_as_in_pytorch(device):
    where = "" if device == tg.get_default_device() else f", device={device!r}"
    assert repr(tg.zeros(3, 0, device=device)) == f"tensor([], size=(3, 0){where})"
    assert repr(tg.zeros(0, device=device)) == f"tensor([]{where})"
    assert repr(tg.zeros(0, 2, dtype=tg.int64, device=device)) == \
        f"tensor([], size=(0, 2), dtype={tg.int64}{where})"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction, expected", [("mean", [NAN]), ("sum", [0.0]), ("none", [])])
def test_losses_over_no_rows(device, reduction, expected):
    """PyTorch: the mean of nothing is nan, the sum 0, and none an empty tensor; backward
    gives empty gradients."""
    logits = tg.zeros(0, 4, device=device, requires_grad=True)
    prediction = tg.zeros(0, 3, device=device, requires_grad=True)
    losses = [F.cross_entropy(logits, tg.zeros(0, dtype=tg.int64, device=device), reduction=reduction),
              F.mse_loss(prediction, tg.zeros(0, 3, device=device), reduction=reduction)]
    for loss in losses:
        np.testing.assert_array_equal(values(loss).reshape(-1), expected)
        loss.sum().backward()
    assert logits.grad.shape == (0, 4) and prediction.grad.shape == (0, 3)


# ---- one_hot ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("one_hot", [tg.one_hot, F.one_hot])
def test_one_hot_rejects_classes_out_of_range(device, one_hot):
    with pytest.raises(RuntimeError, match=r"smaller than num_classes \(5\), got 7"):
        one_hot(tg.tensor([0, 7], device=device), 5)
    with pytest.raises(RuntimeError, match="must be non-negative, got -1"):
        one_hot(tg.tensor([[0], [-1]], device=device), 5)
    assert one_hot(tg.tensor([4, 0], device=device), 5).tolist() == [[0, 0, 0, 0, 1], [1, 0, 0, 0, 0]]


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_sizes_and_bad_arguments(device):
    assert F.one_hot(tg.tensor([2, 0], device=device)).shape == (2, 3)      # max + 1 classes
    assert F.one_hot(tg.zeros(0, dtype=tg.int64, device=device), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="cannot infer the number of classes from an empty"):
        F.one_hot(tg.zeros(0, dtype=tg.int64, device=device))
    with pytest.raises(TypeError, match="class indices .* got dtype float32"):
        F.one_hot(tg.tensor([1.0], device=device), 3)
    with pytest.raises(ValueError, match="num_classes must be a non-negative int"):
        F.one_hot(tg.tensor([1], device=device), -2)


# ---- numpy() after an operation read the tensor -------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_a_write_through_numpy_does_not_reach_an_earlier_result(device):
    """On "cpu" numpy() shares memory (as PyTorch) and y was computed already; on "cpu:lazy"
    y is pending until read, so numpy() runs it first; other devices hand out a copy."""
    x = tg.tensor([1.0, 2.0], device=device)
    y = x * 2
    x.numpy()[0] = 100.0
    assert y.tolist() == [2.0, 4.0]
    assert x.tolist()[0] == (100.0 if device in ("cpu", "cpu:lazy") else 1.0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_nan_on_either_side_of_maximum_and_minimum_wins(device, op):
    a = np.array([1.0, NAN, NAN, 2.0, -0.5])
    b = np.array([NAN, 1.0, NAN, 3.0, -1.5])
    x, y = (tg.tensor(v.tolist(), dtype=tg.float64, device=device) for v in (a, b))
    np.testing.assert_array_equal(values(getattr(x, op)(y)), getattr(np, op)(a, b))
    np.testing.assert_array_equal(values(getattr(y, op)(x)), getattr(np, op)(b, a))


@pytest.mark.parametrize("op", [
    lambda a, b: a @ b,
    lambda a, b: F.linear(a, b),
    lambda a, b: F.linear(a, b, a[0]),
    lambda a, b: F.conv2d(a.reshape(1, 1, 2, 2), b.reshape(1, 1, 2, 2)),
], ids=["matmul", "linear", "linear_bias", "conv2d"])
def test_tensors_on_two_devices_are_refused_naming_both(op):
    """A kernel reads only its own device's buffers: an operation on tensors of two devices
    is refused before any kernel runs (a 0-d host tensor excepted, as a Python number)."""
    pytest.importorskip("stage3_native")
    a, b = tg.randn(2, 2, device="cpu"), tg.randn(2, 2, device="python")
    for x, y in ((a, b), (b, a)):
        with pytest.raises(RuntimeError, match="one device.*'(cpu|python)' and '(cpu|python)'"):
            op(x, y)
