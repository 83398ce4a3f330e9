"""PyTorch's surface a learner reaches for, the parts with no gradient to check (the
differentiable ones are rows of tests/optable.py): comparisons by name, all and any,
isclose, allclose and equal, argmax/argmin as functions, the random and range factories,
the in-place masked_fill_ and clamp_, small methods (t, mT, cpu, type_as, new_zeros, ...),
and the errors each gives for a bad argument. Checked against numpy on devices python and cpu."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend

from .engines import device_params, engine_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")
A = np.array([[1.0, -2.0, 3.0], [0.0, 3.0, -1.0]])
B = np.array([[1.0, 2.0, -3.0], [0.0, 3.0, 2.0]])


def t(a, device, dtype=tg.float64):
    return tg.tensor(np.asarray(a).tolist(), dtype=dtype, device=device)


# ---- comparisons, all, any, isclose, allclose, equal ------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op, reference", [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                                           ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)])
def test_comparisons_by_name(device, op, reference):
    got = getattr(t(A, device), op)(t(B, device))
    assert got.dtype is tg.bool
    np.testing.assert_array_equal(got.numpy(), reference(A, B))
    np.testing.assert_array_equal(getattr(t(A, device), op)(1.0).numpy(), reference(A, 1.0))
    with pytest.raises(TypeError, match=f"{op}\\(\\): argument 'other' must be a Tensor or a number, not str"):
        getattr(t(A, device), op)("1")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_and_any_match_numpy(device, dim, keepdim):
    data = np.array([[1.0, 0.0, math.nan], [2.0, 3.0, -1.0]])          # NaN is nonzero: true
    x = t(data, device)
    for op in ("all", "any"):
        got = getattr(x, op)(dim, keepdim) if dim is not None else getattr(x, op)()
        want = getattr(np, op)(data != 0, axis=dim, keepdims=keepdim if dim is not None else False)
        assert got.dtype is tg.bool
        np.testing.assert_array_equal(got.numpy(), want)
    assert (t(A, device) > -5).all().item() and not (t(A, device) > 5).any().item()
    assert t([1, 0], device, tg.int64).any().item() and not t([True, False], device, tg.bool).all().item()


@pytest.mark.parametrize("device", DEVICES)
def test_all_of_nothing_is_true_and_any_false(device):
    assert tg.zeros(0, device=device).all().item() is True
    assert tg.zeros(0, device=device).any().item() is False
    np.testing.assert_array_equal(tg.zeros(2, 0, device=device).any(dim=1).numpy(), [False, False])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_and_allclose_match_numpy(device, equal_nan):
    a = np.array([1.0, 1.0 + 1e-6, 1.0 + 1e-3, math.inf, -math.inf, math.inf, math.nan, math.nan, 0.0])
    b = np.array([1.0, 1.0, 1.0, math.inf, -math.inf, -math.inf, math.nan, 1.0, 1e-9])
    got = tg.isclose(t(a, device), t(b, device), equal_nan=equal_nan)
    np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, equal_nan=equal_nan))
    got = tg.isclose(t(a, device), t(b, device), rtol=0.01, atol=0.0, equal_nan=equal_nan)
    np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, rtol=0.01, atol=0.0, equal_nan=equal_nan))
    assert tg.allclose(t(A, device), t(A + 1e-9, device)) is True
    assert tg.allclose(t(A, device), t(B, device)) is False
    assert tg.allclose(t([math.nan], device), t([math.nan], device), equal_nan=True) is True
    ints = t([1, 2, 3], device, tg.int64)
    np.testing.assert_array_equal(tg.isclose(ints, t([1, 3, 3], device, tg.int64), atol=1).numpy(), [True] * 3)


@pytest.mark.parametrize("device", DEVICES)
def test_isclose_rejects_what_pytorch_rejects(device):
    with pytest.raises(TypeError, match="same dtype, got tracegrad.float64 and tracegrad.float32"):
        tg.isclose(t(A, device), t(A, device, tg.float32))
    with pytest.raises(ValueError, match="rtol must be a number >= 0, got -1"):
        tg.isclose(t(A, device), t(A, device), rtol=-1)
    with pytest.raises(TypeError, match="argument 'other' must be a Tensor, not list"):
        tg.allclose(t(A, device), A.tolist())


@pytest.mark.parametrize("device", DEVICES)
def test_equal_needs_the_same_shape_and_elements(device):
    assert tg.equal(t(A, device), t(A, device)) is True
    assert tg.equal(t(A, device), t(B, device)) is False
    assert tg.equal(t(A, device), t(A[:1], device)) is False
    assert tg.equal(t([1, 2], device, tg.int64), t([1.0, 2.0], device)) is True


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_argmin_as_functions(device):
    for op in ("argmax", "argmin"):
        assert getattr(tg, op)(t(A, device)).item() == getattr(np, op)(A)
        np.testing.assert_array_equal(getattr(tg, op)(t(A, device), dim=1).numpy(), getattr(np, op)(A, axis=1))


def test_functional_forms_name_a_non_tensor_argument():
    for name in ("exp", "sum", "max", "clamp", "masked_fill", "chunk", "var"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' \\(position 1\\) must be a Tensor, not float"):
            getattr(tg, name)(1.0)
    assert tg.exp.__name__ == "exp" and "torch.exp" in tg.exp.__doc__


# ---- factories -------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-2.5, 3, 7), (3, -1, 4), (1, 2, 1), (0, 1, 0), (0, 10, 6)])
def test_linspace_matches_numpy(device, start, end, steps):
    x = tg.linspace(start, end, steps, dtype=tg.float64, device=device)
    assert x.device == device and x.shape == (steps,)
    np.testing.assert_allclose(x.numpy(), np.linspace(start, end, steps), rtol=1e-15, atol=1e-15)
    if steps > 1:
        assert x[0].item() == start and x[-1].item() == end             # both ends exact
    assert tg.linspace(0, 1, 3).dtype is tg.float32                    # PyTorch's default dtype


def test_linspace_rejects_bad_arguments():
    with pytest.raises(ValueError, match="steps must be a non-negative int, got -1"):
        tg.linspace(0, 1, -1)
    with pytest.raises(ValueError, match="steps must be a non-negative int, got 2.5"):
        tg.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match="end must be a number, got '1'"):
        tg.linspace(0, "1", 3)


@pytest.mark.parametrize("device", DEVICES)
def test_randint_draws_in_range_and_repeats_with_a_seed(device):
    tg.manual_seed(3)
    x = tg.randint(-2, 3, (40, 5), device=device)
    assert x.dtype is tg.int64 and x.shape == (40, 5) and x.device == device
    values = x.numpy()
    assert values.min() >= -2 and values.max() <= 2 and set(values.ravel()) == {-2, -1, 0, 1, 2}
    tg.manual_seed(3)
    np.testing.assert_array_equal(tg.randint(-2, 3, (40, 5), device=device).numpy(), values)
    assert tg.randint(4, (3,)).numpy().max() < 4                      # randint(high, size)
    assert tg.randint(0, 2, 6, dtype=tg.int32).dtype is tg.int32
    for form in (lambda: tg.randint(4, size=(30,)), lambda: tg.randint(high=4, size=(30,)),
                 lambda: tg.randint(low=2, high=4, size=(30,))):
        drawn = form().numpy()
        assert drawn.shape == (30,) and drawn.max() == 3 and drawn.min() >= 0
    a, b = (tg.randint(100, (8,), generator=tg.Generator().manual_seed(5)).tolist() for _ in range(2))
    assert a == b


def test_randint_rejects_bad_arguments():
    with pytest.raises(ValueError, match="low must be less than high, got low=5 >= high=3"):
        tg.randint(5, 3, (2,))
    with pytest.raises(TypeError, match="missing size"):
        tg.randint(5)
    with pytest.raises(TypeError, match="high must be an int, got 2.5"):
        tg.randint(0, 2.5, (2,))
    with pytest.raises(ValueError, match=r"randint\(\): trying to create a tensor with negative dimension -1"):
        tg.randint(0, 3, (2, -1))


@pytest.mark.parametrize("device", DEVICES)
def test_randperm_is_a_permutation(device):
    x = tg.randperm(10, device=device)
    assert x.dtype is tg.int64 and x.device == device
    assert sorted(x.tolist()) == list(range(10))
    assert tg.randperm(0).shape == (0,)
    with pytest.raises(ValueError, match="n must be a non-negative int, got -3"):
        tg.randperm(-3)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_has_the_shape_dtype_and_device_asked_for(device):
    x = tg.empty(2, 3, dtype=tg.int64, device=device)
    assert (x.shape, x.dtype, x.device) == ((2, 3), tg.int64, device)
    assert tg.empty((4,)).shape == (4,)


# every device: the sizes are checked in stage2, the ranges computed by each device's kernels
EVERY_DEVICE = [pytest.param(p.values[0].device, marks=p.marks, id=p.id)
                for p in engine_params() if p.values[0].device]


@pytest.mark.parametrize("device", EVERY_DEVICE)
@pytest.mark.parametrize("make, op, nbytes", [
    (lambda d: tg.arange(2**40, device=d), "arange", 8 * 2**40),                 # int64
    (lambda d: tg.arange(0, 2**40, 0.5, device=d), "arange", 4 * 2**41),        # float32
    (lambda d: tg.linspace(0, 1, 2**40, device=d), "linspace", 4 * 2**40),
    (lambda d: tg.eye(2**20, device=d), "eye", 4 * 2**40),
    (lambda d: tg.multinomial(tg.tensor([1.0, 2.0], device=d), 2**40, True), "multinomial", 8 * 2**40),
    (lambda d: tg.multinomial(tg.ones(3, 2, device=d), 2**40, True), "multinomial", 3 * 8 * 2**40),
    (lambda d: tg.zeros(2**20, 2**20, device=d), "zeros", 4 * 2**40),
    (lambda d: tg.full((2**40,), 1.5, dtype=tg.float64, device=d), "full", 8 * 2**40),
    (lambda d: tg.randn(2**40, device=d), "randn", 4 * 2**40),
    (lambda d: tg.randint(0, 5, (2**40,), device=d), "randint", 8 * 2**40),
    (lambda d: tg.randperm(2**40, device=d), "randperm", 8 * 2**40),
    (lambda d: tg.ones(3, device=d).repeat(2**40), "repeat", 4 * 3 * 2**40),
])
def test_factories_refuse_what_cannot_fit_before_making_anything(device, make, op, nbytes):
    """arange, linspace, eye and multinomial of 2**40 elements would build Python lists
    until memory ran out, then raise an empty MemoryError: the size is checked first."""
    with pytest.raises(RuntimeError, match=rf"{op}\(\): tried to allocate {nbytes} bytes \(.*\), more than "
                                           rf"this machine's \d+ bytes of memory"):
        make(device)


@pytest.mark.parametrize("device", EVERY_DEVICE)
@pytest.mark.parametrize("args", [(5,), (2, 11, 3), (5, 0, -2), (0.0, 1.0, 0.1), (-1.5, 2, 0.25),
                                  (1, 2.5, 0.5), (3, 3), (10, 0, -0.3), (0, 1, math.inf)])
def test_arange_is_start_plus_i_times_step(device, args):
    """As PyTorch: ceil((end - start) / step) elements, start + i * step each, int64 for
    ints and float32 otherwise, computed by the device's kernels."""
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    x = tg.arange(*args, device=device)
    want = [start + i * step for i in range(math.ceil((end - start) / step))]
    assert x.device == device and x.dtype is (tg.int64 if all(type(v) is int for v in args) else tg.float32)
    np.testing.assert_array_equal(x.numpy(), np.array(want, dtype=x.dtype.name).reshape(-1))
    assert tg.arange(*args, dtype=tg.float64, device=device).tolist() == [float(v) for v in want]


@pytest.mark.parametrize("device", EVERY_DEVICE)
@pytest.mark.parametrize("args, error, message", [
    ((0, 1, 0), ValueError, r"arange\(\): step must be nonzero, got 0"),
    ((0, 1, math.nan), ValueError, r"arange\(\): step must be nonzero, got nan"),
    ((0, 10, -1), ValueError, r"arange\(\): upper bound and larger bound inconsistent with step sign: "
                              r"0 -> 10 in steps of -1"),
    ((5, 0), ValueError, r"inconsistent with step sign: 5 -> 0 in steps of 1"),
    ((0, math.inf), ValueError, r"arange\(\): unsupported range: 0 -> inf \(both ends must be finite\)"),
    ((math.nan,), ValueError, r"unsupported range: 0 -> nan"),
    ((-math.inf, 0, 1), ValueError, r"unsupported range: -inf -> 0"),
    ((0, "3"), TypeError, r"arange\(\): end must be a number, got '3'"),
    ((2**70,), RuntimeError, r"arange\(\): a tensor of shape \(1180591620717411303424,\) would have"),
    ((-1e308, 1e308, 1e-300), RuntimeError, r"makes inf elements"),
])
def test_arange_refuses_what_pytorch_refuses(device, args, error, message):
    """Unchecked, arange(0, 1, 0) would raise ZeroDivisionError, a step of the wrong sign
    give an empty tensor, an infinite end OverflowError (PyTorch: "step must be nonzero",
    "upper bound and larger bound inconsistent with step sign", "unsupported range")."""
    with pytest.raises(error, match=message):
        tg.arange(*args, device=device)


@pytest.mark.parametrize("device", [p for p in EVERY_DEVICE if p.values[0] != "python"])
def test_ranges_on_a_native_device_build_no_python_list(device, monkeypatch):
    """arange, linspace and eye come from the device's kernels (an index made as the running
    sums of ones), not from a list of Python numbers copied in (from_flat). A one-element
    list is a Python number meeting a tensor, as in x * 2."""
    def refuse(values, dtype):
        values = list(values)
        assert len(values) <= 1, f"a list of {len(values)} Python numbers"
        return make(values, dtype)
    be = backend.get(device)
    make = be.from_flat
    monkeypatch.setattr(be, "from_flat", refuse)
    assert tg.arange(1000, device=device).sum().item() == 499500
    np.testing.assert_allclose(tg.linspace(-1, 1, 1001, dtype=tg.float64, device=device).numpy(),
                               np.linspace(-1, 1, 1001), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(tg.eye(30, 40, device=device).numpy(), np.eye(30, 40))


@pytest.mark.parametrize("device", EVERY_DEVICE)
def test_split_sizes_as_pytorch(device):
    """Unchecked, split(0) would raise "range() arg 3 must not be zero"; as PyTorch, a split
    size is a positive int (0 only for an empty dimension, which splits into one empty piece)."""
    x = tg.arange(4.0, device=device)
    with pytest.raises(ValueError, match=r"split: split_size must be a positive int \(0 only for a "
                                         r"dimension of size 0\), got 0 for dimension 0 of size 4"):
        x.split(0)
    with pytest.raises(ValueError, match="got -1 for dimension 0 of size 4"):
        x.split(-1)
    with pytest.raises(TypeError, match=r"split\(\): split_size must be an int or a list of ints, got 2.5"):
        x.split(2.5)
    with pytest.raises(ValueError, match=r"split: the sections must be non-negative, got \[-1, 5\]"):
        x.split([-1, 5])
    with pytest.raises(TypeError, match=r"split\(\): argument 'split_size_or_sections' .* type float at pos 0"):
        x.split([2.0, 2])
    assert [p.tolist() for p in x.split(3)] == [[0.0, 1.0, 2.0], [3.0]]
    assert [p.tolist() for p in x.split([1, 0, 3])] == [[0.0], [], [1.0, 2.0, 3.0]]
    empty = tg.zeros(0, 2, device=device)
    assert [p.shape for p in empty.split(0)] == [p.shape for p in empty.split(3)] == [(0, 2)]
    assert [p.shape for p in empty.chunk(2)] == [(0, 2)]


# ---- in place: masked_fill_, clamp_ ------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_masked_fill_in_place(device):
    x = t(A, device)
    version = x.storage.version
    assert x.masked_fill_(x < 0, 9.0) is x
    np.testing.assert_array_equal(x.numpy(), np.where(A < 0, 9.0, A))
    assert x.storage.version == version + 1
    row = t(A, device)
    row[1].masked_fill_(t([True, False, True], device, tg.bool), tg.tensor(5.0, device=device))
    np.testing.assert_array_equal(row.numpy(), [A[0], [5.0, 3.0, 5.0]])   # through a view


@pytest.mark.parametrize("device", DEVICES)
def test_masked_fill_keeps_the_dtype_and_checks_its_arguments(device):
    ints = t([1, 2, 3], device, tg.int64)
    got = ints.masked_fill(ints > 1, 0.5)                 # PyTorch: the value becomes an int64
    assert got.dtype is tg.int64 and got.tolist() == [1, 0, 0]
    with pytest.raises(TypeError, match="only supports boolean masks, but got a mask of dtype tracegrad.int64"):
        ints.masked_fill(ints, 0)
    with pytest.raises(ValueError, match=r"the mask of shape \(2, 3\) must broadcast to the tensor's shape \(3,\)"):
        ints.masked_fill_(t(A, device) > 0, 0)
    with pytest.raises(ValueError, match=r"0-dimensional value tensor, but got a tensor of shape \(1,\)"):
        ints.masked_fill_(ints > 1, t([1], device, tg.int64))
    with pytest.raises(ValueError, match="value inf cannot be converted to tracegrad.int64"):
        ints.masked_fill(ints > 1, math.inf)
    leaf = t(A, device).requires_grad_()
    with pytest.raises(RuntimeError, match="masked_fill_: in-place operation on a leaf tensor that requires grad"):
        leaf.masked_fill_(leaf > 0, 0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_clamp_in_place_and_its_errors(device):
    x = t([-2.0, -0.5, math.nan, 0.5, 2.0], device)
    version = x.storage.version
    assert x.clamp_(-1, 1) is x and x.storage.version == version + 1
    np.testing.assert_array_equal(x.numpy(), [-1.0, -0.5, math.nan, 0.5, 1.0])   # NaN stays NaN
    x.clamp_(max=t([0.0, 0.0, 0.0, 0.0, 0.0], device))
    np.testing.assert_array_equal(x.numpy(), [-1.0, -0.5, math.nan, 0.0, 0.0])
    np.testing.assert_array_equal(t(A, device).clamp(2, 1).numpy(), np.full(A.shape, 1.0))  # min > max: max
    assert t([1, 5], device, tg.int64).clamp(2.5).dtype is tg.float32          # promoted, as PyTorch
    with pytest.raises(ValueError, match="at least one of 'min' or 'max' must not be None"):
        x.clamp_()
    with pytest.raises(TypeError, match="clamp: max must be a number, a tensor or None, got str"):
        x.clamp(max="1")
    leaf = t(A, device).requires_grad_()
    with pytest.raises(RuntimeError, match="clamp_: in-place operation on a leaf tensor that requires grad"):
        leaf.clamp_(0)


# ---- statistics: what var, std and norm refuse, and their edges ---------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_var_std_norm_edges(device):
    assert math.isnan(t([2.0], device).var().item())          # n - 1 = 0 degrees of freedom
    assert t([1.0, 3.0], device).var(correction=2).item() == math.inf
    assert t(A, device).var(False).item() == pytest.approx(A.var())       # var(unbiased)
    zero = tg.zeros(3, dtype=tg.float64, device=device, requires_grad=True)
    zero.norm().backward()                                    # PyTorch: a zero gradient at 0
    np.testing.assert_array_equal(zero.grad.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="var\\(\\): only supports floating point tensors, got tracegrad.int64"):
        t([1, 2], device, tg.int64).var()
    with pytest.raises(ValueError, match="give unbiased or correction, not both"):
        t(A, device).std(0, True, correction=0)
    with pytest.raises(ValueError, match="p must be 'fro', inf, -inf or a number > 0, got 'nuc'"):
        t(A, device).norm("nuc")


# ---- small methods -------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_small_methods(device):
    x = t(A, device)
    assert x.t().shape == (3, 2) and x[0].t().shape == (3,)
    assert x.reshape(1, 2, 3).mT.shape == (1, 3, 2)
    assert x[1:, 1:].storage_offset() == 4
    assert x.cpu().device in ("python", "cpu") and x.cpu().tolist() == A.tolist()
    other = tg.zeros(1, dtype=tg.float32, device=device)
    assert x.type_as(other).dtype is tg.float32 and x.type_as(other).device == device
    for made, value in ((x.new_zeros(2, 2), 0.0), (x.new_ones((3,), dtype=tg.int64), 1)):
        assert made.device == device and made.numpy().ravel()[0] == value
    assert x.new_zeros(2).dtype is tg.float64 and x.new_ones(2, dtype=tg.int64).dtype is tg.int64
    assert x.view_as(tg.zeros(6)).shape == (6,) and x[:1].expand_as(x).shape == (2, 3)
    np.testing.assert_array_equal(x.max(t(B, device)).numpy(), np.maximum(A, B))
    np.testing.assert_array_equal(tg.min(x, t(B, device)).numpy(), np.minimum(A, B))
    np.testing.assert_array_equal(x.index_select(1, t([2, 2, 0], device, tg.int64)).numpy(), A[:, [2, 2, 0]])
    np.testing.assert_array_equal(x.triu(-1).numpy(), np.triu(A, -1))
    assert (x > 0).tril().dtype is tg.bool                    # a zero of the tensor's own dtype


@pytest.mark.parametrize("device", DEVICES)
def test_small_methods_reject_bad_arguments(device):
    x = t(A, device)
    with pytest.raises(ValueError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self has shape \(1, 2, 3\)"):
        x.reshape(1, 2, 3).t()
    with pytest.raises(ValueError, match=r"mT is only supported on matrices .*shape \(3,\)"):
        x[0].mT
    with pytest.raises(TypeError, match="view_as\\(\\): argument 'other' must be a Tensor, not tuple"):
        x.view_as((3, 2))
    with pytest.raises(IndexError, match="must be int32 or int64, got tracegrad.float64"):
        x.index_select(0, t([0.0], device))
    with pytest.raises(ValueError, match=r"index must be a vector \(1-D\), got shape \(1, 1\)"):
        x.index_select(0, t([[0]], device, tg.int64))
    with pytest.raises((IndexError, RuntimeError), match="out of range|out of bounds"):
        x.index_select(1, t([3], device, tg.int64))
    with pytest.raises(ValueError, match="input tensor must have at least 2 dimensions"):
        x[0].tril()
    with pytest.raises(TypeError, match="diagonal must be an int"):
        x.triu(0.5)


@pytest.mark.parametrize("device", DEVICES)
def test_joining_and_products_reject_bad_arguments(device):
    x = t(A, device)
    with pytest.raises(ValueError, match=r"stack: expects each tensor to be of equal shape, got \(2, 3\) and \(3,\)"):
        tg.stack([x, x[0]])
    with pytest.raises(ValueError, match="stack: expected a non-empty list"):
        tg.stack([])
    with pytest.raises(ValueError, match=r"number of repeat dimensions \(1\) can not be smaller"):
        x.repeat(2)
    with pytest.raises(ValueError, match="repeats must be non-negative ints"):
        x.repeat(2, -1)
    assert x.repeat(0, 2).shape == (0, 6)
    with pytest.raises(ValueError, match="chunks must be a positive int, got 0"):
        x.chunk(0)
    assert [c.shape for c in tg.chunk(t(np.arange(6.0), device), 4)] == [(2,), (2,), (2,)]   # as PyTorch
    with pytest.raises(ValueError, match=r"bmm: batch1 must be a 3-D tensor, got shape \(2, 3\)"):
        tg.bmm(x, x)
    with pytest.raises(ValueError, match="do not fit"):
        tg.bmm(x.reshape(1, 2, 3), x.reshape(1, 2, 3))
    with pytest.raises(ValueError, match=r"outer: vec2 must be a 1-D tensor, got shape \(2, 3\)"):
        tg.outer(x[0], x)


# ---- normal_, uniform_ (in place, from a generator when given), data_ptr -------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_normal_and_uniform_fill_in_place_with_the_asked_distribution(device):
    n = 4000                                       # the mean of n draws is off by ~std / sqrt(n): 5 of those allowed
    x = tg.zeros(n, device=device, dtype=tg.float64)
    assert x.normal_(2.0, 0.5) is x
    v = x.numpy()
    assert abs(v.mean() - 2.0) < 5 * 0.5 / math.sqrt(n) and abs(v.std() - 0.5) < 5 * 0.5 / math.sqrt(2 * n)
    assert x.uniform_(-1.0, 3.0) is x
    v = x.numpy()                                  # uniform on [-1, 3): mean 1, std 4 / sqrt(12)
    assert v.min() >= -1.0 and v.max() < 3.0 and abs(v.mean() - 1.0) < 5 * (4 / math.sqrt(12)) / math.sqrt(n)
    view = tg.zeros(3, 4, device=device)[:, 1:3]  # a strided view: only its elements change
    base = view
    view.uniform_(5.0, 6.0)
    assert (base >= 5.0).all().item()
    draws = [tg.zeros(5, device=device).normal_(generator=tg.Generator().manual_seed(7)).tolist() for _ in range(2)]
    assert draws[0] == draws[1]                    # a seeded generator repeats
    w = tg.zeros(3, 4, device=device)
    w[:, 1:3].normal_()
    assert (w[:, 0] == 0).all().item() and (w[:, 3] == 0).all().item() and (w[:, 1:3] != 0).all().item()


@pytest.mark.parametrize("device", DEVICES)
def test_normal_and_uniform_reject_bad_arguments(device):
    with pytest.raises(ValueError, match="normal_ expects std >= 0.0, but found std -1"):
        tg.zeros(2, device=device).normal_(0.0, -1)
    with pytest.raises(ValueError, match=r"uniform_ expects to return a \[from, to\) range, but found from=1 > to=0"):
        tg.zeros(2, device=device).uniform_(1, 0)
    with pytest.raises(TypeError, match="normal_: expected a floating-point tensor, got dtype tracegrad.int64"):
        tg.zeros(2, device=device, dtype=tg.int64).normal_()
    with pytest.raises(TypeError, match="uniform: generator must be a stage2_tensor.Generator or None, got int"):
        tg.zeros(2, device=device).uniform_(generator=3)
    with pytest.raises(RuntimeError, match="in-place operation on a leaf tensor that requires grad"):
        tg.zeros(2, device=device, requires_grad=True).normal_()
    w = tg.zeros(2, device=device, requires_grad=True)
    with tg.no_grad():                             # the initialisation idiom
        w.uniform_(-0.1, 0.1)
    assert (w.abs() <= 0.1).all().item()


@pytest.mark.parametrize("device", DEVICES)
def test_data_ptr_tells_shared_memory_and_offsets(device):
    x = tg.zeros(4, 3, device=device)
    assert isinstance(x.data_ptr(), int) and x.data_ptr() != 0
    assert x.view(12).data_ptr() == x.data_ptr() == x.t().data_ptr()   # views of one storage
    assert x[1].data_ptr() - x.data_ptr() == 3 * 4                    # 3 float32 elements on
    assert x[:, 2].data_ptr() - x.data_ptr() == 2 * 4
    assert x.clone().data_ptr() != x.data_ptr()
    y = tg.zeros(2, dtype=tg.float64, device=device)
    assert y[1].data_ptr() - y.data_ptr() == 8                        # float64: 8 bytes each
    assert y.element_size() == 8 and x.element_size() == 4 and x.nelement() == 12


# ---- what a training script asks of torch itself: the GPU, switches, compile, ints, f-strings ---
def test_cuda_backends_and_compile_answer_as_a_script_expects():
    from stage2_tensor import backend
    assert tg.cuda.is_available() is backend.available("cuda")
    assert tg.cuda.device_count() == (1 if tg.cuda.is_available() else 0)
    assert tg.cuda.is_bf16_supported() is tg.cuda.is_available()
    with pytest.raises(ValueError, match="tracegrad drives one GPU"):
        tg.cuda.set_device("cuda:1")
    assert backend.available("python") and not backend.available("no-such-device")
    tg.backends.cuda.matmul.allow_tf32 = True            # accepted, and changes nothing
    tg.backends.cudnn.allow_tf32 = True
    tg.backends.cuda.matmul.allow_tf32 = False           # PyTorch's default again, for the tests after
    assert tg.backends.mps.is_available() is False
    model = tg.nn.Linear(2, 2)
    assert tg.compile(model)._orig_mod is model and tg.compile(model, disable=True) is model
    with pytest.raises(TypeError, match="expected a Module or a function, got int"):
        tg.compile(3)


@pytest.mark.parametrize("device", DEVICES)
def test_integer_tensors_index_and_tensors_format(device):
    data = list(range(10))
    i = tg.tensor(3, device=device)
    assert data[i:i + 2] == [3, 4] and data[tg.tensor([7], device=device)] == 7
    assert np.arange(10)[i] == 3 and list(range(i)) == [0, 1, 2]
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        data[tg.tensor(1.0, device=device)]
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        data[tg.tensor([1, 2], device=device)]
    loss = tg.tensor(math.pi, dtype=tg.float64, device=device)
    assert f"{loss:.4f}" == "3.1416" and f"{tg.tensor(7, device=device):>3d}" == "  7"
    assert f"{tg.tensor([1, 2], device=device)}" == repr(tg.tensor([1, 2], device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_a_host_scalar_tensor_meets_a_tensor_on_any_device(device):
    best = tg.tensor(2.0, dtype=tg.float64, device="python")     # a 0-d host tensor, as a checkpoint's
    x = tg.tensor([1.0, 3.0], dtype=tg.float64, device=device, requires_grad=True)
    assert (x < best).tolist() == [True, False]
    y = (x * best).sum()
    y.backward()
    assert y.device == device and x.grad.tolist() == [2.0, 2.0]
    if device != "python":
        with pytest.raises(RuntimeError, match="operands are on different devices"):
            x + tg.ones(2, dtype=tg.float64, device="python")    # only a 0-d tensor goes across


def test_device_names_a_device_as_pytorch_spells_it():
    d = tg.device("cpu")
    assert d == "cpu" and d.type == "cpu" and d.index is None and repr(d) == "device(type='cpu')"
    assert tg.zeros(2).to(d).device == "cpu" and tg.zeros(2, device=tg.device("python")).device == "python"
    cuda = tg.device("cuda:0")
    assert cuda == "cuda" and cuda.type == "cuda" and cuda.index == 0 and tg.device("cuda", 0) == "cuda"
    assert tg.device(d) is d
    with pytest.raises(ValueError, match="tracegrad drives one GPU, index 0; got index 1"):
        tg.device("cuda:1")
    with pytest.raises(TypeError, match="expected a device name such as 'cpu' or 'cuda', got int"):
        tg.device(0)
    assert tg.accelerator.is_available() is tg.cuda.is_available()
    assert tg.accelerator.current_accelerator() == ("cuda" if tg.cuda.is_available() else None)


# ---- sin, cos (trigonometry.py; values and gradients are op-table rows) and x += y --------------
@pytest.mark.parametrize("device", DEVICES)
def test_sin_and_cos_dtypes_far_angles_and_specials(device):
    x = np.array([-1e6, -7.5, -math.pi, 0.0, 0.5, math.pi / 2, 1e3, 123456.789])
    for dtype, tol in ((tg.float64, 1e-9), (tg.float32, 1e-6)):   # 1e-9: 2 pi's rounding times 1e6 / (2 pi) turns
        t_ = t(x, device, dtype)
        exact = t_.numpy().astype(np.float64)
        assert tg.sin(t_).dtype is dtype and t_.cos().dtype is dtype
        np.testing.assert_allclose(tg.sin(t_).numpy(), np.sin(exact), rtol=0, atol=tol)
        np.testing.assert_allclose(tg.cos(t_).numpy(), np.cos(exact), rtol=0, atol=tol)
    ints = tg.sin(tg.tensor([0, 1, 2], device=device))          # an integer angle gives float32
    assert ints.dtype is tg.float32
    np.testing.assert_allclose(ints.numpy(), np.sin([0, 1, 2]), atol=1e-7)
    specials = t([math.nan, math.inf, -math.inf], device)
    assert np.isnan(tg.sin(specials).numpy()).all() and np.isnan(tg.cos(specials).numpy()).all()
    assert abs(tg.sin(t([1e300], device)).item()) <= 1.0         # beyond any meaning, still a sine's range
    with pytest.raises(TypeError, match=r"sin\(\): argument 'input' \(position 1\) must be a Tensor, not float"):
        tg.sin(1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_augmented_assignment_writes_in_place_outside_the_graph(device):
    w = tg.tensor([1.0, 2.0], device=device, requires_grad=True)
    (w * w).sum().backward()
    alias = w
    with tg.no_grad():
        w -= 0.25 * w.grad                          # the tutorial's update: the parameter itself
    assert alias is w and w.tolist() == [0.5, 1.0] and w.requires_grad
    x = tg.ones(2, device=device)
    y = x
    y += 1
    y *= 3
    y /= 2
    y -= tg.ones(2, device=device)
    assert y is x and x.tolist() == [2.0, 2.0]
    h = w * 1.0                                     # in the graph: a new tensor, the same gradient
    h0 = h
    h += w
    assert h is not h0 and h0.tolist() == [0.5, 1.0]
    h.sum().backward()
    assert w.grad.tolist() == [2.0 + 2.0, 4.0 + 2.0]   # 2w at w = (1, 2) from before, plus 2 from h = 2w
    with pytest.raises(RuntimeError, match=r"\+=: in-place operation on a leaf tensor that requires grad"):
        w += 1
    with pytest.raises(RuntimeError, match="result type tracegrad.float32 can't be cast to the desired output type tracegrad.int64"):
        i = tg.tensor([1, 2], device=device)
        i += 0.5
    with pytest.raises(RuntimeError, match=r"output with shape \(2,\) doesn't match the broadcast shape \(2, 2\)"):
        x += tg.ones(2, 2, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_data_and_mm_the_older_spellings(device):
    p = tg.tensor([1.0, 2.0], device=device, requires_grad=True)
    (p * 3).sum().backward()
    d = p.data
    assert not d.requires_grad and d.grad_fn is None and d.data_ptr() == p.data_ptr()
    p.data.add_(-0.5 * p.grad)                        # pytorch/examples' regression update, unrecorded
    assert p.tolist() == [-0.5, 0.5] and p.requires_grad and p.is_leaf
    p.data = tg.tensor([[7.0]], dtype=tg.float64, device=device)    # a new storage, shape and dtype
    assert p.shape == (1, 1) and p.dtype is tg.float64 and p.tolist() == [[7.0]] and p.requires_grad
    with pytest.raises(TypeError, match="data\\(\\): argument 'value' must be a Tensor, not list"):
        p.data = [1.0]
    got = t(A, device).mm(t(B.T, device))
    np.testing.assert_allclose(got.numpy(), A @ B.T)
    np.testing.assert_allclose(tg.mm(t(A, device), t(B.T, device)).numpy(), A @ B.T)
    with pytest.raises(ValueError, match=r"mm: mat2 must be a matrix \(2-D\), got shape \(3,\)"):
        tg.mm(t(A, device), t(A[0], device))
    with pytest.raises(ValueError, match=r"mm: shapes \(2, 3\) and \(2, 3\) cannot be multiplied \(3 != 2\)"):
        t(A, device).mm(t(A, device))
    batch = t(np.stack([A, B]), device)
    np.testing.assert_allclose(batch.bmm(batch.mT).numpy(), np.stack([A @ A.T, B @ B.T]))


@pytest.mark.parametrize("device", DEVICES)
def test_flip_roll_unbind_eye_amax_logsumexp_shapes_and_errors(device):
    x = t(np.arange(24.0).reshape(2, 3, 4), device)
    assert [p.shape for p in x.unbind(-1)] == [(2, 3)] * 4 and len(tg.unbind(x)) == 2
    np.testing.assert_array_equal(tg.flip(x, [0, -1]).numpy(), np.flip(np.arange(24.0).reshape(2, 3, 4), (0, 2)))
    np.testing.assert_array_equal(x.roll(-1, 0).numpy(), np.roll(np.arange(24.0).reshape(2, 3, 4), -1, 0))
    np.testing.assert_array_equal(tg.eye(2, 3, device=device).numpy(), np.eye(2, 3))
    assert tg.eye(3).dtype is tg.float32 and tg.eye(0).shape == (0, 0)
    assert x.amax().item() == 23.0 and x.amin(dim=(1, 2)).tolist() == [0.0, 12.0]
    rows = t([[-math.inf, -math.inf], [1000.0, 1000.0]], device)
    np.testing.assert_allclose(rows.logsumexp(1).numpy(), [-math.inf, 1000.0 + math.log(2)])
    with pytest.raises(ValueError, match=r"flip\(\): dims \(0, -3\) name a dimension twice"):
        x.flip(0, -3)
    with pytest.raises(ValueError, match="roll\\(\\): shifts and dims must align, got 2 shifts and 1 dims"):
        x.roll((1, 2), 0)
    with pytest.raises(ValueError, match="eye: n must be a non-negative int, got -1"):
        tg.eye(-1)
    with pytest.raises(TypeError, match="logsumexp\\(\\): only supports floating point tensors"):
        tg.tensor([1, 2]).logsumexp(0)


@pytest.mark.parametrize("device", DEVICES)
def test_flip_and_roll_kernels_move_every_dtype_and_empty_or_strided_views(device):
    a = np.arange(24).reshape(2, 3, 4)
    for dtype, cast in ((tg.int32, np.int32), (tg.int64, np.int64), (tg.float16, np.float16),
                        (tg.float64, np.float64), (tg.bool, bool)):
        x = tg.tensor((a % 5).astype(cast).tolist(), dtype=dtype, device=device).permute(2, 0, 1)   # strided
        want = (a % 5).astype(cast).transpose(2, 0, 1)
        np.testing.assert_array_equal(x.flip(0, 2).numpy(), np.flip(want, (0, 2)))
        np.testing.assert_array_equal(x.roll((3, -1, 7), (0, 1, 2)).numpy(), np.roll(want, (3, -1, 7), (0, 1, 2)))
        assert x.flip(1).dtype is dtype and x.roll(1, 0).dtype is dtype
    empty = tg.zeros(2, 0, 3, device=device)
    assert empty.flip(1).shape == (2, 0, 3) and empty.roll(2, 1).shape == (2, 0, 3)
    assert tg.tensor(5.0, device=device).flip(()).item() == 5.0 and tg.tensor(5.0, device=device).roll(3).item() == 5.0


@pytest.mark.parametrize("device", EVERY_DEVICE)
def test_cat_and_stack_join_every_dtype_and_strided_or_empty_views_in_one_kernel(device):
    a = np.arange(48).reshape(2, 3, 8) % 5
    for dtype, cast in ((tg.int32, np.int32), (tg.int64, np.int64), (tg.float16, np.float16),
                        (tg.bfloat16, np.float32), (tg.float64, np.float64), (tg.bool, bool)):
        wide = a.astype(cast)
        w = tg.tensor(wide.tolist(), dtype=dtype, device=device)
        x, strided, want, want_strided = w[:, :, :4].contiguous(), w[:, :, ::2], wide[:, :, :4], wide[:, :, ::2]
        shifted, want_shifted = w[:, :, 1::2], wide[:, :, 1::2]                  # at an offset
        for dim in (0, 1, 2):
            empty = (slice(None),) * dim + (slice(0, 0),)
            joined = tg.cat([x, strided, x[empty], shifted, x], dim)
            expected = np.concatenate([want, want_strided, want[empty], want_shifted, want], dim)
            assert joined.dtype is dtype and joined.shape == expected.shape
            np.testing.assert_array_equal(joined.float().numpy(), expected.astype(np.float32))
            assert tg.cat([shifted, shifted], dim).float().numpy().tolist() == \
                np.concatenate([want_shifted] * 2, dim).astype(np.float32).tolist()      # one layout, offset
        for dim in (0, 1, 2, 3, -1):
            stacked = tg.stack([x, strided, x, shifted], dim)
            assert stacked.dtype is dtype
            np.testing.assert_array_equal(stacked.float().numpy(),
                                          np.stack([want, want_strided, want, want_shifted], dim).astype(np.float32))
    rng = np.random.default_rng(0)                      # enough to share among threads, split mid-piece
    arrays = [rng.standard_normal((3, n)) for n in (7001, 1, 0, 40003)]
    import stage3_native
    saved = stage3_native.get_num_threads()
    try:
        stage3_native.set_num_threads(3)
        joined = tg.cat([t(x, device) for x in arrays], 1)
        np.testing.assert_array_equal(joined.numpy(), np.concatenate(arrays, 1))
    finally:
        stage3_native.set_num_threads(saved)
    many = [tg.full((1, 3), float(i), device=device) for i in range(300)]    # more pieces than threads
    np.testing.assert_array_equal(tg.cat(many, 1).numpy(), np.repeat(np.arange(300.0), 3)[None].astype(np.float32))
    np.testing.assert_array_equal(tg.stack(many).numpy()[:, 0, 1], np.arange(300.0))
    assert tg.stack([tg.tensor(1.0, device=device), tg.tensor(2.0, device=device)]).tolist() == [1.0, 2.0]
    assert tg.cat([tg.zeros(0, 3, device=device)] * 2).shape == (0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_cat_and_stack_reject_mixed_inputs(device):
    x = t(A, device)
    with pytest.raises(ValueError, match=r"cat: views\[1\] has shape \(2, 2\), expected \(2, 3\) but for dimension 0"):
        tg.cat([x, x[:, :2]])
    with pytest.raises(ValueError, match=r"cat: shapes \(2, 3\) and \(3,\) differ outside dimension 1"):
        tg.cat([x, x[0]], 1)
    with pytest.raises(ValueError, match=r"cat: views\[1\] has shape \(3,\), expected \(2, 3\) but for dimension 0"):
        tg.cat([x, x[0]])
    with pytest.raises(TypeError, match="cat: views\\[2\\] is tracegrad.float32, expected tracegrad.float64"):
        tg.cat([x, x, x.float()])
    for dim in (0, 2):          # stacking at the end gives each view a dimension: its dtype kept, and checked
        with pytest.raises(TypeError, match="views\\[1\\] is tracegrad.float32, expected tracegrad.float64"):
            tg.stack([x, x.float()], dim)
    with pytest.raises(TypeError, match="views\\[1\\] is tracegrad.float64, expected tracegrad.float32"):
        tg.stack([x[0, 0].float(), x[0, 0]])
    with pytest.raises(TypeError, match="stack: expected a list of tensors, got an element of type int"):
        tg.stack([x, 3])
    with pytest.raises(RuntimeError, match="expected all tensors on one device"):
        tg.cat([x, t(A, "python" if device != "python" else "cpu")])
    with pytest.raises(ValueError, match=r"cat: views\[1\] has shape \(2, 3, 1\)"):
        backend.get(device).cat([x.as_view(), x.reshape(2, 3, 1).as_view()], 0, tg.float64)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_kernel_gives_numpys_positions_and_a_mask_reads_them(device):
    from stage2_tensor.advanced_index import nonzero
    rng = np.random.default_rng(7)
    a = np.where(rng.random((3, 4, 5)) < 0.4, rng.standard_normal((3, 4, 5)), 0.0)
    a[0, 1, 2] = np.nan                                 # NaN is nonzero
    for dtype, cast in ((tg.float32, np.float32), (tg.float16, np.float16), (tg.int64, np.int64), (tg.bool, bool)):
        values = a if dtype.is_floating_point else np.nan_to_num(a, nan=1.0)     # NaN has no int
        x = tg.tensor(values.astype(cast).tolist(), dtype=dtype, device=device).permute(2, 0, 1)    # strided
        want = values.astype(cast).transpose(2, 0, 1)
        np.testing.assert_array_equal(nonzero(x).numpy(), np.argwhere(want))
    x = tg.tensor(a.tolist(), device=device)
    np.testing.assert_array_equal(x[x > 0].numpy(), a[a > 0].astype(np.float32))
    np.testing.assert_array_equal(x[:, x[0] != 0].numpy(), a[:, a[0] != 0].astype(np.float32))
    assert nonzero(tg.zeros(0, 3, device=device)).shape == (0, 2)
    assert nonzero(tg.tensor(3.0, device=device)).shape == (1, 0)


@pytest.mark.parametrize("device", device_params("python", "cpu", "cpu:lazy"))
def test_floor_ceil_round_and_integer_division_as_python(device):
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 1e17, math.nan, math.inf, -math.inf])
    x = t(v, device)
    np.testing.assert_array_equal(tg.floor(x).numpy(), np.floor(v))
    np.testing.assert_array_equal(x.ceil().numpy(), np.ceil(v))
    np.testing.assert_array_equal(tg.round(x).numpy(), np.round(v))          # halves to even, as numpy
    a, b = np.array([7.0, -7.0, 7.5, -7.5, 0.0, 1e10 + 0.5]), np.array([2.0, 2.0, -2.0, 3.0, 5.0, 3.0])
    np.testing.assert_array_equal((t(a, device) // t(b, device)).numpy(), a // b)
    np.testing.assert_array_equal((t(a, device) % t(b, device)).numpy(), a % b)
    ints, divisors = [7, -7, 8, -9, 0], [2, 2, -3, 4, 5]
    q = tg.tensor(ints, device=device) // tg.tensor(divisors, device=device)
    assert q.dtype is tg.int64 and q.tolist() == [i // d for i, d in zip(ints, divisors)]
    assert (tg.tensor(ints, device=device) % 3).tolist() == [i % 3 for i in ints]
    assert (7 // tg.tensor([2], device=device)).tolist() == [3] and (7 % tg.tensor([4], device=device)).tolist() == [3]
    assert tg.floor(tg.tensor([3], device=device)).tolist() == [3]
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        tg.tensor([1], device=device) // 0
    with pytest.raises(TypeError, match=r"floor\(\): argument 'input' \(position 1\) must be a Tensor, not float"):
        tg.floor(1.5)


@pytest.mark.parametrize("device", DEVICES)
def test_diag_sign_and_the_in_place_updates_of_hand_written_optimizers(device):
    v, m = np.arange(1.0, 4.0), np.arange(12.0).reshape(3, 4)
    for k in (-2, 0, 1, 3):
        np.testing.assert_array_equal(tg.diag(t(v, device), k).numpy(), np.diag(v, k))
        np.testing.assert_array_equal(t(m, device).diag(k).numpy(), np.diag(m, k))
    assert tg.diag(t(m, device), 5).shape == (0,)
    np.testing.assert_array_equal(t(A, device).sign().numpy(), np.sign(A))
    p, g = t([1.0, 2.0], device), t([0.5, -1.0], device)
    avg = tg.zeros(2, device=device, dtype=tg.float64)
    assert avg.lerp_(g, 0.1) is avg and avg.tolist() == pytest.approx([0.05, -0.1])
    sq = tg.zeros(2, device=device, dtype=tg.float64).addcmul_(g, g, value=0.5)
    assert sq.tolist() == [0.125, 0.5]
    p.addcdiv_(g, sq.sqrt() + 1.0, value=-0.1)
    np.testing.assert_allclose(p.numpy(), [1.0, 2.0] - 0.1 * np.array([0.5, -1.0]) / (np.sqrt([0.125, 0.5]) + 1))
    with pytest.raises(ValueError, match=r"diag: expected a 1-D or 2-D tensor, got shape \(1, 2, 3\)"):
        tg.diag(t(A, device).reshape(1, 2, 3))
    with pytest.raises(TypeError, match="diag: diagonal must be an int, got 0.5"):
        tg.diag(t(A, device), 0.5)


# ---- older programs' spellings: torch.Size, the legacy types, narrow, np.array(t) -------------
def test_size_is_a_tuple_that_prints_as_pytorchs():
    x = tg.zeros(2, 3, 4)
    size = x.size()
    assert isinstance(size, tg.Size) and isinstance(size, tuple) and size == (2, 3, 4)
    assert repr(size) == "torch.Size([2, 3, 4])" and size.numel() == 24
    assert isinstance(size[1:], tg.Size) and size[1:] == (3, 4) and size[-1] == 4
    assert tg.Size([2, 3]) + (1,) == tg.Size([2, 3, 1]) and tg.zeros(tg.Size([2, 3])).shape == (2, 3)
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        tg.Size([2.5])


@pytest.mark.parametrize("dtype, name", [(tg.float32, "FloatTensor"), (tg.float64, "DoubleTensor"),
                                         (tg.float16, "HalfTensor"), (tg.bfloat16, "BFloat16Tensor"),
                                         (tg.int64, "LongTensor"), (tg.int32, "IntTensor"),
                                         (tg.bool, "BoolTensor")])
def test_legacy_types_name_make_and_recognise_their_dtype(dtype, name):
    kind = getattr(tg, name)
    t = kind([1, 0, 1])
    assert t.dtype is dtype and t.tolist() == [dtype.cast(v) for v in (1, 0, 1)]
    assert t.type() == f"torch.{name}" and isinstance(t, kind) and isinstance(t, tg.Tensor)
    assert kind(2, 3).shape == (2, 3) and kind(2, 3).dtype is dtype and kind().shape == (0,)
    assert not isinstance(t.to(dtype=tg.float64 if dtype is not tg.float64 else tg.float32), kind)
    assert tg.zeros(2).type(kind).dtype is dtype and tg.zeros(2).type(f"torch.{name}").dtype is dtype


def test_legacy_constructors_and_type_conversions():
    assert tg.Tensor(2, 3).tolist() == [[0.0] * 3] * 2 and tg.Tensor(2, 3).dtype is tg.float32
    assert tg.Tensor([1, 2]).dtype is tg.float32 and tg.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert tg.Tensor().shape == (0,) and tg.Tensor(tg.Size([2])).shape == (2,)
    assert tg.Tensor(np.array([1, 2])).dtype is tg.float32
    x = tg.tensor([1.0, 2.0])
    alias = tg.Tensor(x)
    assert alias is not x and alias.data_ptr() == x.data_ptr()       # a new tensor, one storage
    assert tg.LongTensor([1.7, -2.2]).tolist() == [1, -2] and tg.BoolTensor([0, 2]).tolist() == [False, True]
    assert x.type(tg.float32) is x and x.type(tg.float64).dtype is tg.float64
    with pytest.raises(TypeError, match="must be float32 on its device"):
        tg.Tensor(tg.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"LongTensor\(\): expected sizes \(ints\), one sequence of data or a tensor, got \(list, list\)"):
        tg.LongTensor([1], [2])
    for bad in ("torch.Foo", "float64"):
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            x.type(bad)
    with pytest.raises(TypeError, match="expected a dtype, a tensor type or its name"):
        x.type(3)
    assert repr(tg.FloatTensor) == "<class 'torch.FloatTensor'>"


@pytest.mark.parametrize("device", DEVICES)
def test_narrow_is_a_slice_along_a_dimension(device):
    data = np.arange(10).reshape(2, 5)
    x = t(data, device, tg.int64)
    np.testing.assert_array_equal(x.narrow(1, 1, 3).numpy(), data[:, 1:4])
    np.testing.assert_array_equal(tg.narrow(x, 1, -2, 2).numpy(), data[:, 3:5])
    np.testing.assert_array_equal(x.narrow(0, tg.tensor(1), 1).numpy(), data[1:2])
    assert x.narrow(1, 5, 0).shape == (2, 0)
    view = x.narrow(1, 1, 2)
    view.fill_(-1)                                                        # a view: writes reach x
    assert x.tolist() == [[0, -1, -1, 3, 4], [5, -1, -1, 8, 9]]
    w = t([1.0, 2.0, 3.0], device, tg.float64).requires_grad_()
    (w.narrow(0, 1, 2) * 2).sum().backward()
    assert w.grad.tolist() == [0.0, 2.0, 2.0]


def test_narrow_errors_are_pytorchs():
    x = tg.zeros(2, 5)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of \[-5, 5\], but got 6\)"):
        x.narrow(1, 6, 1)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(4\) exceeds dimension size \(5\)"):
        x.narrow(1, 2, 4)
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        x.narrow(1, 0, -1)
    with pytest.raises(IndexError, match="out of range"):
        x.narrow(2, 0, 1)


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_reads_a_tensor_through_array(device):
    x = t([[1.5, -2.0]], device, tg.float32)
    got = np.array(x)
    assert got.dtype == np.float32 and got.tolist() == [[1.5, -2.0]]
    assert np.array(x, dtype=np.int64).tolist() == [[1, -2]] and np.asarray(tg.tensor(3)).shape == ()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.array(x.requires_grad_())
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    scaled = np.float64(3.0) * w                         # numpy leaves the operator to Tensor
    assert isinstance(scaled, tg.Tensor) and scaled.grad_fn is not None
