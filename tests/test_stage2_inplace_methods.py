"""The in-place forms (stage2_tensor/inplace_methods.py): each writes its operation's result
into the tensor and returns it, bumping the version; refuses a tensor autograd needs, a
result of another shape or of a dtype the tensor cannot hold; the shape ones relay the
tensor as their view."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import inplace_methods

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")
A = np.array([[1.5, -2.25, 3.0], [0.25, 2.5, -1.0]])
ARGS = {"pow": (2.0,), "clamp_min": (0.5,), "clamp_max": (0.5,), "cumsum": (1,), "cumprod": (0,),
        "floor_divide": (0.75,), "remainder": (0.75,), "eq": (3.0,), "ne": (3.0,), "lt": (0.5,), "le": (0.25,),
        "gt": (0.5,), "ge": (0.25,), "tril": (), "triu": (1,)}
POSITIVE = {"log", "sqrt", "rsqrt"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", inplace_methods.WRITTEN)
def test_written_in_place_equals_the_operation(device, name):
    data = np.abs(A) if name in POSITIVE else A
    x = tg.tensor(data.tolist(), dtype=tg.float64, device=device)
    want = getattr(x, name)(*ARGS.get(name, ()))
    version, storage = x.storage.version, x.storage
    assert getattr(x, name + "_")(*ARGS.get(name, ())) is x
    assert x.storage is storage and x.storage.version == version + 1 and x.dtype is tg.float64
    np.testing.assert_array_equal(x.numpy(), want.to(dtype=tg.float64).numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_writes_through_a_view(device):
    x = tg.tensor(A.tolist(), device=device)
    x[:, 1].abs_()
    x.t()[0].neg_()
    np.testing.assert_allclose(x.numpy(), np.array([[-1.5, 2.25, 3.0], [-0.25, 2.5, -1.0]]))


@pytest.mark.parametrize("name", ["exp_", "relu_", "tril_", "t_", "unsqueeze_"])
def test_a_leaf_that_requires_grad_is_not_written(name):
    w = tg.ones(2, 2, requires_grad=True)
    args = (0,) if name == "unsqueeze_" else ()
    with pytest.raises(RuntimeError, match=f"{name}: in-place operation on a leaf tensor that requires grad"):
        getattr(w, name)(*args)
    with pytest.raises(RuntimeError, match="part of the autograd graph"):
        getattr(w * 2, name)(*args)
    with tg.no_grad():                                        # as an optimizer writes its parameters
        assert getattr(w, name)(*args) is w


def test_results_that_do_not_fit_are_errors():
    ints = tg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="exp_: result type float32 can't be cast to the desired output type int64"):
        ints.exp_()
    with pytest.raises(RuntimeError, match="pow_: output with shape \\[2\\] doesn't match the broadcast shape \\[3, 2\\]"):
        ints.pow_(tg.ones(3, 2, dtype=tg.int64))
    np.testing.assert_array_equal(ints.numpy(), [1, 2])                 # nothing written
    x = tg.tensor([1.0, 2.0])
    assert x.eq_(tg.tensor([1.0, 3.0])).tolist() == [1.0, 0.0] and x.dtype is tg.float32   # a bool result fits
    assert ints.clamp_min_(2).tolist() == [2, 2] and ints.abs_().dtype is tg.int64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, args", [("t", ()), ("transpose", (0, 2)), ("squeeze", ()), ("squeeze", (1,)),
                                        ("unsqueeze", (-1,))])
def test_relaid_in_place_takes_its_views_layout(device, name, args):
    x = tg.arange(6, device=device).reshape(3, 1, 2)
    if name == "t":
        x = x.reshape(3, 2)
    want = getattr(x, name)(*args)
    storage, version = x.storage, x.storage.version
    assert getattr(x, name + "_")(*args) is x
    assert x.storage is storage and x.storage.version == version and x.shape == want.shape
    assert x.strides == want.strides
    np.testing.assert_array_equal(x.numpy(), want.numpy())


def test_other_names_of_in_place_forms():
    for alias, target in inplace_methods.INPLACE_ALIASES.items():
        assert getattr(tg.Tensor, alias) is getattr(tg.Tensor, target), alias
    x = tg.tensor([2.0, -4.0])
    assert x.multiply_(2).divide_(4).negative_().tolist() == [-1.0, 2.0]
    assert x.clip_(-0.5, 0.5).tolist() == [-0.5, 0.5]
