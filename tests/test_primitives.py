"""The primitive ops are declared once (stage2_tensor/ops.py) and every backend agrees with
the declaration: each device runs every declared op and matches numpy on a tiny input; the
backend's op lists, the native op codes (the generated header) and the formula tables all
derive from the declaration by name, and a table that lacks an op fails naming it."""
import math
import re

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend, dtypes, elementwise, ops

pytestmark = pytest.mark.stage3

DEVICES = ["python", "cpu", "cpu:lazy", *(pytest.param(d, marks=pytest.mark.device(d)) for d in ("cuda-emu", "cuda"))]

X = np.array([[-1.5, -0.25, 0.5], [2.0, 0.75, -3.0]])
Y = np.array([[0.5, -0.25, 2.0], [2.0, -1.0, 0.0]])     # equal to X in two places: comparisons
POSITIVE = np.abs(X) + 0.1                               # log, sqrt, pow's base

_erf = np.vectorize(math.erf)
_K = math.sqrt(2 / math.pi)


def _phi(x):                                              # the standard normal's CDF
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


def _gelu_tanh_grad(x):
    t = np.tanh(_K * (x + 0.044715 * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _K * (1 + 3 * 0.044715 * x * x)


# numpy's answer for every declared primitive, and its inputs
UNARY = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh,
    "gelu": lambda x: x * _phi(x),
    "gelu_grad": lambda x: _phi(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
    "sign": np.sign, "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(_K * (x + 0.044715 * x ** 3))),
    "gelu_tanh_grad": _gelu_tanh_grad,
}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "pow_grad": lambda a, b: np.where(b == 0, 0.0, b * a ** (b - 1)),
    "relu_backward": lambda g, x: np.where(x > 0, g, 0.0),
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}
REFERENCES = {**UNARY, **BINARY, **REDUCE}
POSITIVE_FIRST = {"log", "sqrt", "pow", "pow_grad"}


def inputs(name):
    first = POSITIVE if name in POSITIVE_FIRST else X
    return (first,) if ops.BY_NAME[name].arity == 1 else (first, Y)


def run(device, name, *arrays):
    """Primitive `name` on `device` through the backend's own kernel (Tensor.launch), as
    stage2's operations call it; reductions over the last dimension."""
    ts = [tg.from_numpy(a, device=device) for a in arrays]
    x = ts[0]
    kind = ops.BY_NAME[name].kind
    if kind == "reduce":
        dtype = dtypes.int64 if name.startswith("arg") else x.dtype
        out = x.launch("reduce", name, x.as_view(), (1,), dtype, shape=x.shape[:1], dtype=dtype)
    elif kind == "unary":
        out = x.launch("unary", name, x.as_view(), x.dtype, shape=x.shape, dtype=x.dtype)
    else:
        dtype = dtypes.bool_ if kind == "comparison" else x.dtype
        out = x.launch("binary", name, x.as_view(), ts[1].as_view(), dtype, shape=x.shape, dtype=dtype)
    return out.numpy()


def test_every_primitive_has_a_reference_here():
    """Declaring an op makes this test ask for numpy's answer to it (and to nothing else)."""
    assert set(REFERENCES) == set(ops.BY_NAME)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ops.names(*ops.KINDS))
def test_every_device_runs_every_primitive(device, name):
    arrays = inputs(name)
    with np.errstate(divide="ignore"):                   # X / 0: -inf, as every device gives
        expected = REFERENCES[name](*arrays, axis=1) if name in REDUCE else REFERENCES[name](*arrays)
    got = run(device, name, *arrays)
    assert got.dtype == expected.dtype or (got.dtype, expected.dtype) == (np.int64, np.intp)
    # float64 formulas that differ from numpy's only in their rounding (erf, tanh via sigmoid)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda-emu", marks=pytest.mark.device("cuda-emu"))])
def test_a_comparison_asked_for_another_dtype_gives_0_and_1(device):
    """A comparison is known by its declared kind: asked for a float64 result (a direct
    backend call; stage2 asks for bool) it is still computed as a comparison, its 0s and
    1s converted, as the python backend does. Before, the native backends took it for an
    arithmetic op (the comparison test was `dtype is bool and code >= FIRST_COMPARISON`)."""
    a, b = (tg.from_numpy(v, device=device) for v in (X, Y))
    for name in ops.names("comparison"):
        out = a.launch("binary", name, a.as_view(), b.as_view(), dtypes.float64, shape=a.shape,
                       dtype=dtypes.float64)
        np.testing.assert_array_equal(out.numpy(), BINARY[name](X, Y).astype(np.float64))


def test_backend_lists_are_views_of_the_declaration():
    assert backend.UNARY_OPS == ops.names("unary")
    assert backend.BINARY_OPS == ops.names("binary") + ops.names("comparison")
    assert backend.COMPARISON_OPS == ops.names("comparison")
    assert backend.REDUCE_OPS == ops.names("reduce")
    assert len(ops.BY_NAME) == len(ops.PRIMITIVES), "an op declared twice"
    assert {p.kind for p in ops.PRIMITIVES} <= set(ops.KINDS)


@pytest.mark.parametrize("name", [p.name for p in ops.PRIMITIVES if p.float_only])
def test_a_float_only_op_on_integers_computes_on_floats(name):
    """What float_only declares: stage2 converts an integer input to float32 first, as
    PyTorch does (exp of an int64 tensor is a float tensor)."""
    ints = np.array([1, 2, 3], dtype=np.int64)
    out = elementwise.unary(name, tg.tensor(ints.tolist()))
    assert out.dtype is dtypes.float32
    np.testing.assert_allclose(out.tolist(), UNARY[name](ints.astype(np.float64)), rtol=1e-6)


def test_native_codes_name_the_ops_of_the_declaration():
    """The generated header's enums list each kind's ops by name, in the order whose
    positions cpu_backend and cuda_backend pass as codes."""
    from stage3_native import ops_header
    from stage3_native.cpu import backend as cpu_backend
    from stage3_native.cuda import backend as cuda_backend
    text = ops_header.text()
    for kind in ops.KINDS:
        members = re.search(rf"enum tg_{kind}_op {{ ([^}}]*) }};", text).group(1).split(", ")
        assert members == [name.upper() for name in ops.names(kind)]
        assert f"#define TG_{kind.upper()}_COUNT {len(members)}" in text
    for module in (cpu_backend, cuda_backend):
        for kind, codes in (("unary", module.UNARY_CODE), ("binary", module.BINARY_CODE),
                            ("comparison", module.COMPARISON_CODE), ("reduce", module.REDUCE_CODE)):
            assert codes == {name: i for i, name in enumerate(ops.names(kind))}


def test_a_table_missing_an_op_fails_naming_it():
    with pytest.raises(RuntimeError, match="no unary formula for exp, log"):
        ops.require("unary", {"neg": None, "sqrt": None}, "a backend")
    with pytest.raises(ValueError, match="unknown kind of primitive 'ternary'"):
        ops.names("ternary")
