"""The primitive ops are declared once (stage2_tensor/ops.py) and every backend agrees with
the declaration: each device runs every declared op and matches numpy (tests/optable.py's
PRIMITIVES) on a tiny input; the backend's op lists and the native op codes (the generated
header) derive from the declaration by name, and an op without its native formula fails to
compile, naming the function it lacks."""
import re

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend, dtypes, elementwise, ops

from .engines import DEVICES, device_marks, device_params
from .optable import PRIMITIVES

pytestmark = pytest.mark.stage3

X = np.array([[-1.5, -0.25, 0.5], [2.0, 0.75, -3.0]])
Y = np.array([[0.5, -0.25, 2.0], [2.0, -1.0, 0.0]])     # equal to X in two places: comparisons
POSITIVE = np.abs(X) + 0.1                               # log, sqrt, pow's base


def inputs(name):
    first = POSITIVE if PRIMITIVES[name].positive else X
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
    assert set(PRIMITIVES) == set(ops.BY_NAME)


FUSED = [p.name for p in ops.FUSED]
# every declared op on every device, but the fused kernels on python, which has none
CASES = [pytest.param(device, name, marks=device_marks(device)) for name in ops.names(*ops.KINDS, fused=True)
         for device in DEVICES if not (device == "python" and name in FUSED)]


@pytest.mark.parametrize("device,name", CASES)
def test_every_device_runs_every_primitive(device, name):
    arrays = inputs(name)
    with np.errstate(divide="ignore"):                   # X / 0: -inf, as every device gives
        reference = PRIMITIVES[name].value
        expected = reference(*arrays, axis=1) if ops.BY_NAME[name].kind == "reduce" else reference(*arrays)
    got = run(device, name, *arrays)
    assert got.dtype == expected.dtype or (got.dtype, expected.dtype) == (np.int64, np.intp)
    # float64 formulas that differ from numpy's only in their rounding (erf, tanh via sigmoid)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", device_params())
def test_a_comparison_asked_for_another_dtype_gives_0_and_1(device):
    """A comparison is known by its declared kind: asked for a float64 result (a direct
    backend call; stage2 asks for bool) it is still computed as a comparison, its 0s and
    1s converted, as the python backend does. A test on the result's dtype (`dtype is bool
    and code >= FIRST_COMPARISON`) would take it for an arithmetic op."""
    a, b = (tg.from_numpy(v, device=device) for v in (X, Y))
    for name in ops.names("comparison"):
        out = a.launch("binary", name, a.as_view(), b.as_view(), dtypes.float64, shape=a.shape,
                       dtype=dtypes.float64)
        np.testing.assert_array_equal(out.numpy(), PRIMITIVES[name].value(X, Y).astype(np.float64))


def test_backend_lists_are_views_of_the_declaration():
    assert backend.UNARY_OPS == ops.names("unary")
    assert backend.BINARY_OPS == ops.names("binary") + ops.names("comparison")
    assert backend.COMPARISON_OPS == ops.names("comparison")
    assert backend.REDUCE_OPS == ops.names("reduce")
    assert len(ops.BY_NAME) == len(ops.PRIMITIVES) + len(ops.FUSED), "an op declared twice"
    assert {p.kind for p in ops.PRIMITIVES} <= set(ops.KINDS)


@pytest.mark.parametrize("name", [p.name for p in ops.PRIMITIVES if p.float_only])
def test_a_float_only_op_on_integers_computes_on_floats(name):
    """What float_only declares: stage2 converts an integer input to float32 first, as
    PyTorch does (exp of an int64 tensor is a float tensor)."""
    ints = np.array([1, 2, 3], dtype=np.int64)
    out = elementwise.unary(name, tg.tensor(ints.tolist()))
    assert out.dtype is dtypes.float32
    np.testing.assert_allclose(out.tolist(), PRIMITIVES[name].value(ints.astype(np.float64)), rtol=1e-6)


def test_native_codes_name_the_ops_of_the_declaration():
    """The generated header's enums list each kind's ops by name, in the order whose
    positions cpu_backend and cuda_backend pass as codes."""
    from stage3_native import ops_header
    from stage3_native.cpu import backend as cpu_backend
    from stage3_native.cuda import backend as cuda_backend
    text = ops_header.text()
    for kind in ops.KINDS:
        members = re.search(rf"enum tg_{kind}_op {{ ([^}}]*) }};", text).group(1).split(", ")
        assert members == [name.upper() for name in ops.names(kind, fused=True)]
        assert f"#define TG_{kind.upper()}_COUNT {len(members)}" in text
    for module in (cpu_backend, cuda_backend):
        for kind, codes in (("unary", module.UNARY_CODE), ("binary", module.BINARY_CODE),
                            ("comparison", module.COMPARISON_CODE), ("reduce", module.REDUCE_CODE)):
            assert codes == {name: i for i, name in enumerate(ops.names(kind, fused=True))}


def test_an_op_without_its_native_formula_fails_to_compile_naming_it(tmp_path, monkeypatch):
    """The kernels call an op's formula by its name alone (elementwise_math.h's TG_BY_TYPE):
    an op declared without tg_NAME_f32 & co. is a compile error naming the function, in
    the eager kernels' build as in a generated kernel (which this compiles)."""
    from stage3_native.lazy import codegen, jit
    monkeypatch.setenv("TRACEGRAD_KERNEL_CACHE", str(tmp_path))
    body = codegen.signature("frob") + " { float x = 1.0f; x = TG_BY_TYPE(frobnicate, x)(x); (void)x; }\n"
    with pytest.raises(jit.KernelCompileError, match="tg_frobnicate_f32"):
        jit.compile_source(codegen.preamble(), body, codegen.signature("frob"), None)
    # and with every declared op's functions, it compiles
    calls = " ".join(f"(void)tg_{name}_{suffix};" for name in ops.names("unary", "binary", "comparison")
                     for suffix in ("f32", "f64", "i64"))
    body = codegen.signature("every_op") + " { " + calls + " }\n"
    jit.compile_source(codegen.preamble(), body, codegen.signature("every_op"), None)


def test_an_unknown_kind_of_primitive_is_named():
    with pytest.raises(ValueError, match="unknown kind of primitive 'ternary'"):
        ops.names("ternary")
