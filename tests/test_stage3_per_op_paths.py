"""The shortcuts of the per-op path (performance chapter, benchmarks/overhead.py) give what
the general path gives: a binary op on two tensors of one shape reads each tensor's own
view (no broadcast views), a tensor keeps the View it made once (dropped when ``p.data =``
or Module.to points it elsewhere), the cpu backend's tables of C arrays are bounded, two
fitting matrices are checked inline, and a sum of everything reads its dims from a table.
Each against numpy in float64 and, for the gradients, central differences (gradcheck)."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend as backends
from stage2_tensor.backend import View
from tests import engines
from tests.gradcheck import gradcheck

DEVICES = engines.device_params()
ENGINES = engines.engine_params([e for e in engines.ENGINES if e.device])


def values(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=shape).astype(dtype)


# (a, b) as numpy arrays -> the same operands as tensors: one shape (contiguous, transposed,
# offset by a slice) takes the same-shape path; the others broadcast or promote first
def same(x, y, device):
    return tg.tensor(x.tolist(), device=device), tg.tensor(y.tolist(), device=device)


def transposed(x, y, device):
    return tg.tensor(x.tolist(), device=device), tg.tensor(y.T.tolist(), device=device).T


def sliced(x, y, device):
    padded = np.concatenate([y, y])
    return tg.tensor(x.tolist(), device=device), tg.tensor(padded.tolist(), device=device)[len(y):]


def broadcast_row(x, y, device):
    return tg.tensor(x.tolist(), device=device), tg.tensor(y[0].tolist(), device=device)


def broadcast_column(x, y, device):
    return tg.tensor(x.tolist(), device=device), tg.tensor(y[:, :1].tolist(), device=device)


CASES = {"same shape": (same, lambda x, y: (x, y)),
         "transposed operand": (transposed, lambda x, y: (x, y)),
         "offset operand": (sliced, lambda x, y: (x, y)),
         "row broadcast": (broadcast_row, lambda x, y: (x, y[0])),
         "column broadcast": (broadcast_column, lambda x, y: (x, y[:, :1]))}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum"])
def test_binary_ops_on_every_layout_match_numpy(device, case, op):
    make, numpy_operands = CASES[case]
    x, y = values((3, 4), 0, np.float32), values((3, 4), 1, np.float32)
    a, b = make(x, y, device)
    assert a.dtype is b.dtype is tg.float32
    out = getattr(a, op)(b) if op == "maximum" else getattr(a, f"__{'truediv' if op == 'div' else op}__")(b)
    nx, ny = numpy_operands(x.astype(np.float64), y.astype(np.float64))
    expected = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "maximum": np.maximum}[op](nx, ny)
    # one float32 operation on float32 inputs: within float32's rounding of the result
    np.testing.assert_allclose(out.numpy(), expected, rtol=2 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("device", DEVICES)
def test_mixed_dtypes_promote_before_the_same_shape_path(device):
    x, y = values((2, 3), 2), values((2, 3), 3)
    a = tg.tensor(x.tolist(), dtype=tg.float32, device=device)
    b = tg.tensor(y.tolist(), dtype=tg.float64, device=device)
    assert (a + b).dtype is tg.float64
    np.testing.assert_allclose((a + b).numpy(), x.astype(np.float32).astype(np.float64) + y, rtol=1e-15)
    i = tg.tensor([[1, 2, 3], [4, 5, 6]], dtype=tg.int32, device=device)
    j = tg.tensor([[6, 5, 4], [3, 2, 1]], dtype=tg.int64, device=device)
    assert (i + j).dtype is tg.int64 and (i + j).tolist() == [[7, 7, 7], [7, 7, 7]]
    assert (i / j).dtype is tg.float32                    # true division of integers
    np.testing.assert_allclose((i / j).numpy(), np.array([[1, 2, 3], [4, 5, 6]]) / np.array([[6, 5, 4], [3, 2, 1]]),
                               rtol=np.finfo(np.float32).eps)
    assert (a * 2).dtype is tg.float32                    # a number keeps the tensor's dtype


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", [lambda a, b: a * b.T, lambda a, b: (a + b[1:2]) * b, lambda a, b: a / b - b],
                         ids=["transposed", "broadcast", "same shape"])
def test_gradients_through_both_paths(engine, fn):
    gradcheck(engine, fn, [values((3, 3), 4), values((3, 3), 5)])


@pytest.mark.parametrize("device", DEVICES)
def test_the_same_shape_view_is_the_broadcast_view(device):
    t = tg.tensor(values((3, 4), 6).tolist(), device=device).T
    assert t.as_view() is t.as_view()                     # made once, kept
    assert t.broadcast_view(t.shape) == t.as_view()
    assert t.broadcast_view((2, 4, 3)).strides == (0,) + t.strides


@pytest.mark.parametrize("device", DEVICES)
def test_data_assignment_drops_the_kept_view(device):
    p = tg.tensor([1.0, 2.0], device=device)
    np.testing.assert_allclose(p.exp().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)     # view kept
    p.data = tg.tensor([[3.0], [4.0], [5.0]], dtype=tg.float64, device=device)
    assert p.as_view().shape == (3, 1) and p.as_view().dtype is tg.float64
    np.testing.assert_allclose(p.exp().numpy(), np.exp([[3.0], [4.0], [5.0]]), rtol=1e-15)
    p.add_(1.0)                                           # in place: the same buffer, the kept view
    np.testing.assert_allclose((p * 1).numpy(), [[4.0], [5.0], [6.0]])


@pytest.mark.parametrize("device", DEVICES)
def test_module_to_drops_the_kept_views(device):
    tg.seed(0)
    layer = tg.nn.Linear(3, 2).to(device)
    x = tg.tensor(values((4, 3), 7).tolist(), device=device)
    before = layer(x).detach().numpy().astype(np.float64)   # the parameters' views made here
    layer.to(dtype=tg.float64)
    assert layer.weight.as_view().dtype is tg.float64
    after = layer(x.to(dtype=tg.float64)).detach().numpy()
    assert after.dtype == np.float64
    np.testing.assert_allclose(after, before, rtol=1e-5)  # float32 values, now in float64


def test_made_once_tables_are_bounded():
    from stage3_native.cpu.backend import C_INTS, MadeOnce
    made = []
    table = MadeOnce(lambda key: made.append(key) or 2 * key, limit=3)
    assert [table[k] for k in (1, 2, 1, 3)] == [2, 4, 2, 6] and made == [1, 2, 3]
    assert table[4] == 8 and len(table) == 1              # full: started over
    assert list(C_INTS[(4, 1)]) == [4, 1] and C_INTS[(4, 1)] is C_INTS[(4, 1)]


def test_the_inline_matmul_check_still_refuses_what_does_not_fit():
    import stage3_native  # noqa: F401  (registers "cpu")
    be = backends.get("cpu")
    a = tg.ones(2, 3, device="cpu").as_view()
    with pytest.raises(ValueError, match="matmul: expected"):
        be.matmul(a, tg.ones(4, 5, device="cpu").as_view(), tg.float32)
    with pytest.raises(ValueError, match="bias must have shape"):
        be.matmul(a, tg.ones(3, 5, device="cpu").as_view(), tg.float32, tg.ones(4, device="cpu").as_view())
    bias = tg.tensor([1.0, 2.0], device="cpu")
    out = be.matmul(a, tg.ones(3, 2, device="cpu").as_view(), tg.float32, bias.as_view())
    assert list(out) == [4.0, 5.0, 4.0, 5.0]
    assert isinstance(a, View)


@pytest.mark.parametrize("device", DEVICES)
def test_sum_of_everything_at_any_number_of_dimensions(device):
    x = values((2, 3, 4), 8)
    t = tg.tensor(x.tolist(), device=device)
    np.testing.assert_allclose(t.sum().numpy(), x.sum(), rtol=24 * np.finfo(np.float32).eps)
    assert t.sum().shape == () and t.sum(keepdim=True).shape == (1, 1, 1)
    assert tg.tensor(5.0, device=device).sum().item() == 5.0


def test_sum_of_everything_beyond_the_table_of_dims():
    t = tg.ones(*(1,) * 17, 2, device="python")                      # python: no limit on dimensions
    assert t.sum().item() == 2.0 and t.sum(keepdim=True).shape == (1,) * 18
