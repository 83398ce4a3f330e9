"""PyTorch's other names of tracegrad's operations (stage2_tensor/aliases.py): one table of
(alias call, the call it stands for), each checked to give the same values, dtype and shape;
add/sub/div's extra arguments against numpy; the torch.X functions against their methods;
the small queries (nbytes, is_cuda, is_signed, ...) and their errors."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import aliases

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")
A = np.array([[1.5, -2.0, 3.0], [0.25, 3.0, -1.0]])
B = np.array([[1.0, 2.0, -3.0], [0.5, 3.0, 2.0]])

# (name, the alias's call, the call it stands for); x, y float64 tensors, m a bool mask
ALIASES = [
    ("absolute", lambda x, y: x.absolute(), lambda x, y: x.abs()),
    ("negative", lambda x, y: x.negative(), lambda x, y: -x),
    ("positive", lambda x, y: x.positive(), lambda x, y: x),
    ("multiply", lambda x, y: x.multiply(y), lambda x, y: x * y),
    ("subtract", lambda x, y: x.subtract(y), lambda x, y: x - y),
    ("divide", lambda x, y: x.divide(y), lambda x, y: x / y),
    ("true_divide", lambda x, y: x.true_divide(y), lambda x, y: x / y),
    ("add", lambda x, y: x.add(y), lambda x, y: x + y),
    ("sub", lambda x, y: x.sub(y), lambda x, y: x - y),
    ("mul", lambda x, y: x.mul(2.0), lambda x, y: x * 2.0),
    ("div", lambda x, y: x.div(y), lambda x, y: x / y),
    ("clip", lambda x, y: x.clip(-1.0, 2.0), lambda x, y: x.clamp(-1.0, 2.0)),
    ("clamp_min", lambda x, y: x.clamp_min(0.5), lambda x, y: x.clamp(min=0.5)),
    ("clamp_max", lambda x, y: x.clamp_max(0.5), lambda x, y: x.clamp(max=0.5)),
    ("greater", lambda x, y: x.greater(y), lambda x, y: x > y),
    ("greater_equal", lambda x, y: x.greater_equal(y), lambda x, y: x >= y),
    ("less", lambda x, y: x.less(y), lambda x, y: x < y),
    ("less_equal", lambda x, y: x.less_equal(y), lambda x, y: x <= y),
    ("not_equal", lambda x, y: x.not_equal(y), lambda x, y: x != y),
    ("reshape_as", lambda x, y: x.reshape_as(y.reshape(3, 2)), lambda x, y: x.reshape(3, 2)),
    ("ravel", lambda x, y: x.t().ravel(), lambda x, y: x.t().reshape(-1)),
    ("where", lambda x, y: x.where(x > y, y), lambda x, y: tg.where(x > y, x, y)),
    ("outer", lambda x, y: x[0].outer(y[1]), lambda x, y: tg.outer(x[0], y[1])),
    ("isclose", lambda x, y: x.isclose(y), lambda x, y: tg.isclose(x, y)),
    ("new_full", lambda x, y: x.new_full((2,), 3.0), lambda x, y: tg.full((2,), 3.0, dtype=tg.float64)),
    ("new_tensor", lambda x, y: x.new_tensor([1, 2]), lambda x, y: tg.tensor([1.0, 2.0], dtype=tg.float64)),
    ("new_empty", lambda x, y: x.new_empty(2, 3).shape, lambda x, y: (2, 3)),
    ("concat", lambda x, y: tg.concat([x, y], dim=1), lambda x, y: tg.cat([x, y], dim=1)),
    ("concatenate", lambda x, y: tg.concatenate([x, y]), lambda x, y: tg.cat([x, y])),
]


def _same(got, want):
    if isinstance(got, tg.Tensor):
        assert got.dtype is want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:
        assert got == want


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, alias, target", ALIASES, ids=[a[0] for a in ALIASES])
def test_alias_gives_what_it_stands_for(device, name, alias, target):
    x, y = tg.tensor(A.tolist(), dtype=tg.float64, device=device), tg.tensor(B.tolist(), dtype=tg.float64, device=device)
    _same(alias(x, y), target(x, y))


@pytest.mark.parametrize("name", aliases.FUNCTIONS)
def test_every_function_calls_its_method(name):
    """torch.X(input, ...) is input.X(...): the same result, and a plain number is an error naming X."""
    args = {"transpose": (0, 1), "permute": ((1, 0),), "reshape": ((3, 2),), "broadcast_to": ((2, 2, 3),),
            "index_select": (1, tg.tensor([2, 0])), "fill_": (7.0,), "index_put_": ((tg.tensor([1]),), tg.tensor(9.0)),
            "clamp_min": (0.0,), "clamp_max": (0.0,), "clamp_min_": (0.0,), "clamp_max_": (0.0,),
            "clip": (0.0, 1.0), "clip_": (0.0, 1.0), "clamp_": (0.0, 1.0)}.get(name, ())
    if name in {"add", "sub", "mul", "div", "rsub", "true_divide", "multiply", "subtract", "divide", "greater",
                "greater_equal", "less", "less_equal", "not_equal", "eq", "ne", "lt", "le", "gt", "ge", "is_same_size"}:
        args = (tg.tensor(B.tolist()),)
    data = np.abs(A) if name in ("log_", "sqrt_", "rsqrt_") else A
    if name == "is_nonzero":
        data = A[:1, :1]
    x1, x2 = tg.tensor(data.tolist()), tg.tensor(data.tolist())
    _same(getattr(tg, name)(x1, *args), getattr(x2, name)(*args))
    _same(x1, x2)                                          # an in-place function wrote as its method did
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' \\(position 1\\) must be a Tensor, not float"):
        getattr(tg, name)(1.0, *args)


@pytest.mark.parametrize("device", DEVICES)
def test_add_sub_rsub_scale_by_alpha(device):
    x, y = tg.tensor(A.tolist(), device=device), tg.tensor(B.tolist(), device=device)
    np.testing.assert_allclose(tg.add(x, y, alpha=2.5).numpy(), A + 2.5 * B, rtol=1e-6)
    np.testing.assert_allclose(x.sub(y, alpha=-2).numpy(), A + 2 * B, rtol=1e-6)
    np.testing.assert_allclose(tg.rsub(x, y, alpha=3).numpy(), B - 3 * A, rtol=1e-6)
    np.testing.assert_allclose(tg.rsub(x, 5.0).numpy(), 5.0 - A, rtol=1e-6)
    ints = tg.tensor([1, 2], device=device)
    np.testing.assert_array_equal(ints.add(ints, alpha=3).numpy(), [4, 8])
    with pytest.raises(RuntimeError, match="integral input tensors, argument alpha must not be a floating point"):
        ints.add(ints, alpha=0.5)
    with pytest.raises(TypeError, match="argument 'alpha' must be a number, not str"):
        x.add(y, alpha="2")


@pytest.mark.parametrize("device", DEVICES)
def test_div_rounding_modes_match_numpy(device):
    a, b = np.array([5, -7, 3, -8, 7]), np.array([2, 2, -2, 3, -7])
    x, y = tg.tensor(a.tolist(), device=device), tg.tensor(b.tolist(), device=device)
    np.testing.assert_allclose(tg.div(x, y).numpy(), a / b, rtol=1e-6)
    assert tg.div(x, y).dtype is tg.float32
    trunc, floor = tg.div(x, y, rounding_mode="trunc"), x.div(y, rounding_mode="floor")
    assert trunc.dtype is tg.int64 and floor.dtype is tg.int64
    np.testing.assert_array_equal(trunc.numpy(), np.trunc(a / b))
    np.testing.assert_array_equal(floor.numpy(), np.floor_divide(a, b))
    xf = tg.tensor((a + 0.5).tolist(), dtype=tg.float64, device=device)
    np.testing.assert_array_equal(xf.div(y, rounding_mode="trunc").numpy(), np.trunc((a + 0.5) / b))
    np.testing.assert_array_equal(xf.div(2, rounding_mode="trunc").numpy(), np.trunc((a + 0.5) / 2))
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor' but found 'up'"):
        x.div(y, rounding_mode="up")


@pytest.mark.parametrize("device", DEVICES)
def test_queries_a_tensor_answers(device):
    x = tg.zeros(2, 3, dtype=tg.float64, device=device)
    assert (x.nbytes, x.itemsize, x.ndimension()) == (48, 8, 2)
    assert x[:, :2].nbytes == 32                                     # the view's elements, not its storage
    assert x.is_cpu and not x.is_cuda and x.get_device() == -1
    assert x.is_signed() and tg.tensor([1]).is_signed() and not tg.tensor([True]).is_signed()
    assert not tg.zeros(1, dtype=tg.uint8, device=device).is_signed()
    assert x.is_same_size(tg.ones(2, 3)) and not x.is_same_size(tg.ones(3, 2))
    assert tg.tensor([2.0], device=device).is_nonzero() and not tg.tensor(0.0, device=device).is_nonzero()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        x.is_nonzero()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        tg.zeros(0).is_nonzero()
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not supported"):
        tg.tensor([True]).positive()
    assert x.new_tensor([1.5]).dtype is tg.float64 and tg.tensor([1]).new_tensor([1.5]).tolist() == [1]
    assert x.new_empty((2,), dtype=tg.int64).dtype is tg.int64


def test_detach_in_place_cuts_the_graph():
    w = tg.ones(2, requires_grad=True)
    y = w * 2
    assert y.detach_() is y and y.grad_fn is None and not y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])


def test_reshape_as_names_a_non_tensor():
    with pytest.raises(TypeError, match="reshape_as\\(\\): argument 'other' must be a Tensor, not tuple"):
        tg.ones(2).reshape_as((2,))
