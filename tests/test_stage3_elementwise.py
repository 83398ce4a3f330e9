"""stage3's element-wise and reduction kernels (csrc/elementwise.c, csrc/reduce.c) against
numpy: every level of the dispatch hierarchy, each asked for by its layout (and the level
the C side reports checked), every op in float32 and float64, below TG_PARALLEL_MIN on one
thread and above it on two (where the kernels split their work among threads), at every SIMD
level this CPU runs (csrc/simd.h), each op within an error bound that follows from its
formula (error_bound); the vectorized float32 exp at its special values and its accuracy;
reductions over every dimension of contiguous and non-contiguous inputs, ties, NaN, and a
16M-element float32 sum; choosing the SIMD level."""
import functools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import ops
from stage2_tensor.elementwise import binary_kernel, compare, unary
from stage3_native.cpu import backend as cpu_backend
from stage3_native.cpu.backend import elementwise_path, reduce_path

from .optable import PRIMITIVES

pytestmark = pytest.mark.stage3

PARALLEL_MIN = 65536                           # TG_PARALLEL_MIN in csrc/parallel.h
SMALL, LARGE = (6, 37), (300, 257)             # 222 and 77,100 elements: one thread, then all
assert math.prod(SMALL) < PARALLEL_MIN < math.prod(LARGE)
# Below TG_PARALLEL_MIN a second thread is never used, so the small shape runs on one thread
# and the large one on two (its single-threaded loops are the small shape's, only longer).
SIZES = [pytest.param(SMALL, 1, id="small"), pytest.param(LARGE, 2, id="large")]
F32, F64 = np.float32, np.float64


def cpu(array):
    return tg.from_numpy(np.array(array, order="C"), device="cpu")     # a copy, 0-d stays 0-d


def transposed(array):
    """The values of a 2-D array as the transpose of a contiguous tensor: strides (1, rows)."""
    return cpu(array.T).T


def stepped(array):
    """The values of a 2-D array as every other column of a wider tensor: strides (2*cols, 2)."""
    wide = np.zeros((array.shape[0], 2 * array.shape[1]), array.dtype)
    wide[:, ::2] = array
    return cpu(wide)[:, ::2]


def with_size1_dims(array):
    """(N, M) as an (N, 1, M) view whose size-1 dimension has an odd stride; collapsing
    drops it, so the view counts as contiguous."""
    n, m = array.shape
    return cpu(array.reshape(n, m, 1)).permute(0, 2, 1)


@functools.lru_cache(maxsize=None)
def sample(dtype, shape, seed=0, low=-4.0, high=4.0):
    """Fixed random values, none exactly 0, of dtype and shape."""
    x = np.random.default_rng(seed).uniform(low, high, size=shape)
    x[np.abs(x) < 1e-3] = 0.5
    return x.astype(dtype)


# ---- references, and how far from them a kernel may be -----------------------------------
# ULPS eps (eps: the dtype's spacing at 1, 2^-23 for float32, 2^-52 for float64) times the
# magnitudes of the terms the op's formula adds, per element. Each term is a product of
# correctly rounded operations and library functions within a few ulps of exact (libm's
# within 1; vmath.h's float32 exp within 2, sigmoid and tanh within 4: tested below), so
# it is within a few ulps of itself; an exponential of a computed argument a (e^(-x^2/2),
# sigmoid(z)) is further off by |a| ulps, its condition number, so such a term counts
# (1 + |a|) times. Adding terms then loses nothing measured against their magnitudes, but
# much measured against the result where they cancel: gelu_grad(-0.7518) is 0.2261 - 0.2261,
# so an ulp of the terms is thousands of ulps of the result, whatever formula adds them. A
# float64 reference has rounding errors of the same kind as the kernel's (numpy's own exp
# differs with the CPU): ULPS covers both. Which SIMD level runs (vector width, FMA or not)
# changes the roundings, never the bound.
ULPS = 8


def error_bound(dtype, terms):
    """The largest error allowed, per element, for a formula adding `terms`."""
    return ULPS * np.finfo(dtype).eps * sum(np.abs(t) for t in terms) + np.finfo(dtype).tiny


# The ops and their references, from the declaration (stage2_tensor/ops.py: the primitives
# and the fused kernels, which the C kernels have) and optable.py
UNARY = {name: PRIMITIVES[name] for name in ops.names("unary", fused=True)}
BINARY = {name: (functools.partial(binary_kernel, name), PRIMITIVES[name].value) for name in ops.names("binary")}
COMPARE = {name: (functools.partial(compare, name), PRIMITIVES[name].value) for name in ops.names("comparison")}


def unary_reference(op, x):
    """(value, error bound) of a unary op at float64 x, for x's dtype."""
    with np.errstate(all="ignore"):
        value = UNARY[op].value(x.astype(F64))
        terms = UNARY[op].terms(x.astype(F64)) if UNARY[op].terms else (value,)
    return value, error_bound(x.dtype.type, terms) * np.ones_like(value)


@functools.lru_cache(maxsize=None)
def sample_reference(op, dtype, shape):
    return unary_reference(op, sample(dtype, shape))


def check(result, reference, dtype, bound=None, what=""):
    """result within bound (default: error_bound of the reference itself: ULPS ulps) of the
    float64 reference; NaN and infinities exactly where the reference rounds to them."""
    got = result.numpy()
    assert result.shape == reference.shape and got.dtype == dtype, what
    if bound is None:
        bound = error_bound(dtype, (reference,))
    with np.errstate(all="ignore"):
        special = ~np.isfinite(reference.astype(dtype))
        np.testing.assert_array_equal(got[special], reference.astype(dtype)[special], err_msg=what)
        excess = np.where(special, 0.0, np.abs(got.astype(F64) - reference) / bound)
    if excess.size and excess.max() > 1:
        i = np.unravel_index(np.argmax(excess), excess.shape)
        pytest.fail(f"{what}: at {tuple(map(int, i))} got {got[i]!r}, reference {reference[i]!r}: "
                    f"off by {excess[i]:.2f} times the bound")


# ---- unary ops: (a) contiguous, (b) one value expanded, (c) an expanded row, (d) strided ----

UNARY_LAYOUTS = {           # (N, M) values -> (tensor with those values, the level it takes)
    "contiguous": (cpu, "contiguous"),
    "size1_dims": (with_size1_dims, "contiguous"),
    "transposed": (transposed, "strided"),
    "stepped": (stepped, "strided"),
}


@pytest.mark.parametrize("shape, threads", SIZES, indirect=["threads"])
@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("layout", UNARY_LAYOUTS)
def test_unary_ops_on_every_layout(layout, dtype, shape, threads, simd_level):
    make, path = UNARY_LAYOUTS[layout]
    x = make(sample(dtype, shape))
    assert elementwise_path(x) == path
    for op in UNARY:
        reference, bound = sample_reference(op, dtype, shape)
        check(unary(op, x), reference.reshape(x.shape), dtype, bound.reshape(x.shape), op)


@pytest.mark.parametrize("shape, threads", SIZES, indirect=["threads"])
@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_unary_ops_on_expanded_values(dtype, shape, threads, simd_level):
    row = sample(dtype, (1, shape[1]), seed=1)
    cases = [(cpu(row).expand(*shape), row, "lastdim"),
             (cpu(row[0, :1]).reshape(()).expand(*shape), row[0, 0], "scalar")]
    for x, values, path in cases:                     # values: what x repeats
        assert elementwise_path(x) == path
        for op in UNARY:
            reference, bound = (np.broadcast_to(r, shape) for r in unary_reference(op, np.asarray(values)))
            check(unary(op, x), reference, dtype, bound, f"{op} {path}")


def test_unary_ops_on_zero_dimensional_and_empty_tensors():
    for op in UNARY:
        for values in (np.array(0.75, F32), np.zeros((0, 5), F32), np.zeros((3, 0, 2), F64)):
            reference, bound = unary_reference(op, values)
            check(unary(op, cpu(values)), reference, values.dtype.type, bound, op)


@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
def test_gelu_grad_where_its_two_terms_cancel(dtype, simd_level):
    """Phi(x) + x phi(x) crosses 0 near x = -0.7518, where both terms are 0.226: the result
    is as accurate as ULPS ulps of the terms, not of itself, on every SIMD level (a bound of
    ulps of the result fails here, in float64, where numpy's exp rounds unlike libm's)."""
    x = np.linspace(-0.76, -0.74, 4001).astype(dtype)
    reference, bound = unary_reference("gelu_grad", x)
    assert (np.abs(reference) < 1e-4).any() and bound.max() < 1e4 * np.finfo(dtype).eps
    check(unary("gelu_grad", cpu(x)), reference, dtype, bound, "gelu_grad near its zero")


# ---- binary ops, comparisons and where: operands that land on each level -----------------

def binary_cases(shape, dtype):
    """(name, a, b as numpy values, a, b as tensors, the level): a (N, M) against every
    kind of second operand, and layouts of a that are not contiguous."""
    n, m = shape
    a, b = sample(dtype, shape, seed=2), sample(dtype, shape, seed=3).copy()
    row, col, one = sample(dtype, (m,), seed=4), sample(dtype, (n, 1), seed=5), sample(dtype, (), seed=6)
    short_a, short_b = sample(dtype, (n * m // 3, 3), seed=7), sample(dtype, (3,), seed=8)
    b[::3] = a[::3]                            # some equal elements for the comparisons
    return [
        ("contiguous", a, b, cpu(a), cpu(b), "contiguous"),
        ("size1_dims", a.reshape(n, 1, m), b.reshape(n, 1, m), with_size1_dims(a), cpu(b).reshape(n, 1, m),
         "contiguous"),
        ("scalar_right", a, one, cpu(a), cpu(one), "scalar"),
        ("scalar_left", one, b, cpu(one), cpu(b), "scalar"),
        ("zero_d", one, np.array(-one), cpu(one), cpu(np.array(-one)), "contiguous"),
        ("row", a, row, cpu(a), cpu(row), "lastdim"),
        ("row_left", row, b, cpu(row), cpu(b), "lastdim"),
        ("column", a, col, cpu(a), cpu(col), "lastdim"),
        ("outer", col, row, cpu(col), cpu(row), "lastdim"),
        ("transposed", a, b, transposed(a), cpu(b), "strided"),
        ("both_transposed", a, b, transposed(a), transposed(b), "strided"),
        ("stepped", a, b, stepped(a), cpu(b), "strided"),
        ("short_rows", short_a, short_b, cpu(short_a), cpu(short_b), "strided"),
        ("empty", a[:0], row, cpu(a[:0]), cpu(row), None),
    ]


CASE_NAMES = [case[0] for case in binary_cases(SMALL, F32)]


@pytest.mark.parametrize("shape, threads", SIZES, indirect=["threads"])
@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASE_NAMES)
def test_binary_ops_comparisons_and_where_on_every_level(case, dtype, shape, threads, simd_level):
    name, a, b, ta, tb, path = next(c for c in binary_cases(shape, dtype) if c[0] == case)
    if path:
        assert elementwise_path(ta, tb) == path
    a64, b64 = a.astype(F64), b.astype(F64)
    for op, (apply, reference) in BINARY.items():
        powers = PRIMITIVES[op].positive
        x, y = (np.abs(a64), b64) if powers else (a64, b64)      # no nan from (-2) ** 0.5
        tx = ta.abs() if powers else ta
        with np.errstate(all="ignore"):
            check(apply(tx, tb), reference(x, y), dtype, what=op)
    for op, (apply, reference) in COMPARE.items():
        np.testing.assert_array_equal(apply(ta, tb).numpy(), reference(a, b), err_msg=op)
    np.testing.assert_array_equal(tg.where(ta > tb, ta, tb).numpy(), np.where(a > b, a, b))


def test_integer_and_bool_tensors_on_every_level(threads, simd_level):
    for dtype in (np.int32, np.int64):
        a = np.arange(-50_000, 50_000, dtype=dtype).reshape(400, 250) * 3
        row = np.arange(250, dtype=dtype) - 100
        for ta, tb, x, y in [(cpu(a), cpu(a[::-1]), a, a[::-1]), (cpu(a), cpu(row), a, row),
                             (transposed(a), cpu(np.array(7, dtype)), a, np.array(7, dtype))]:
            for op in ("add", "sub", "mul", "maximum", "minimum"):
                np.testing.assert_array_equal(BINARY[op][0](ta, tb).numpy(), BINARY[op][1](x, y))
            np.testing.assert_array_equal((ta > tb).numpy(), x > y)
            np.testing.assert_array_equal(ta.abs().numpy(), np.abs(x))
            np.testing.assert_array_equal((-ta).numpy(), -x)
    mask = np.arange(100_000).reshape(400, 250) % 3 == 0
    np.testing.assert_array_equal((cpu(mask) == cpu(mask.T.copy()).T).numpy(), np.ones_like(mask))



def test_a_float_only_op_is_never_run_by_an_integer_kernel():
    """The integer kernels compile no loop for the float_only ops (stage2 converts an integer
    tensor to float first): asked for one directly, the backend refuses."""
    x = cpu(np.arange(4, dtype=np.int64))
    float_only = [name for name in ops.names("unary") if ops.BY_NAME[name].float_only]
    assert "exp" in float_only and "neg" not in float_only
    for name in float_only:
        with pytest.raises(TypeError, match=f"unary '{name}' computes in a floating-point dtype, not int64"):
            cpu_backend.CpuBackend().unary(name, x.as_view(), x.dtype)
    np.testing.assert_allclose(x.exp().numpy(), np.exp(np.arange(4.0)), rtol=1e-6)

# ---- float32 exp, sigmoid, tanh: the vectorized versions in vmath.h ----------------------

def ulps(result, reference):
    """|result - reference| in units of the float32 spacing at the reference."""
    return np.abs(result.astype(F64) - reference) / np.spacing(np.abs(reference).astype(F32)).astype(F64)


def test_float32_exp_special_values_like_numpy(simd_level):
    largest = np.float32(88.72283)                       # e^x still finite
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 1.0, -1.0, largest,
                  np.nextafter(largest, np.float32(np.inf)), 89.0, 100.0, 1e30,
                  -87.33654, -87.5, -100.0, -103.2789, -103.97, -104.0, -150.0, -1e30], F32)
    result = cpu(x).exp().numpy()
    with np.errstate(over="ignore"):
        expected = np.exp(x.astype(F64)).astype(F32)
    np.testing.assert_array_equal(np.isnan(result), np.isnan(x))
    np.testing.assert_array_equal(np.isinf(result), np.isinf(expected))
    normal = np.isfinite(expected) & (expected >= np.finfo(F32).tiny)
    np.testing.assert_allclose(result[normal], expected[normal], rtol=2.5e-7)
    subnormal = np.isfinite(expected) & (expected < np.finfo(F32).tiny)    # within one step
    np.testing.assert_allclose(result[subnormal], expected[subnormal], rtol=0, atol=2.0 ** -149)
    assert result[x == -np.inf][0] == 0 and result[x == np.inf][0] == np.inf


def test_float32_exp_within_two_ulp_over_its_range(simd_level):
    x = np.random.default_rng(1).uniform(-87.3, 88.7, size=1_000_000).astype(F32)
    reference = np.exp(x.astype(F64))
    assert ulps(cpu(x).exp().numpy(), reference).max() <= 2.0


def test_float32_sigmoid_and_tanh_special_values_and_accuracy(simd_level):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 0.6, -0.65, 20.0, -20.0,
                  -90.0, -100.0], F32)
    s, t = cpu(x).sigmoid().numpy(), cpu(x).tanh().numpy()
    assert np.isnan(s[2]) and np.isnan(t[2])
    assert (s[0], s[1], t[0], t[1]) == (1.0, 0.0, 1.0, -1.0)
    assert t[5] == np.float32(1e-30) and np.signbit(t[4])
    finite = np.isfinite(x)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(s[finite], (1 / (1 + np.exp(-x[finite].astype(F64)))).astype(F32),
                                   rtol=1e-6, atol=2.0 ** -149)
    np.testing.assert_allclose(t[finite], np.tanh(x[finite].astype(F64)).astype(F32), rtol=1e-6)
    dense = np.random.default_rng(2).uniform(-12, 12, size=200_000).astype(F32)
    assert ulps(cpu(dense).tanh().numpy(), np.tanh(dense.astype(F64))).max() <= 4.0
    assert ulps(cpu(dense).sigmoid().numpy(), 1 / (1 + np.exp(-dense.astype(F64)))).max() <= 4.0


# ---- reductions ---------------------------------------------------------------------------

REDUCE_LAYOUTS = {
    "contiguous": lambda x: cpu(x),
    "reversed_dims": lambda x: cpu(x.transpose(*reversed(range(x.ndim))).copy()).permute(*reversed(range(x.ndim))),
    "stepped": lambda x: cpu(np.repeat(x, 2, axis=-1))[..., ::2],
}


def numpy_argextreme(x, dims, op):
    """numpy's argmax/argmin over several dims: the row-major index within them."""
    kept = [d for d in range(x.ndim) if d not in dims]
    moved = np.transpose(x, kept + list(dims)).reshape([x.shape[d] for d in kept] + [-1])
    return getattr(moved, op)(-1)


def dims_of(ndim):
    return [(d,) for d in range(ndim)] + [tuple(range(ndim))] + ([(0, 2)] if ndim == 3 else [])


@pytest.mark.parametrize("shape", [(6, 37), (300, 257), (4, 9, 50), (20, 70, 60), (5, 3, 9000)])
@pytest.mark.parametrize("dtype", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("layout", REDUCE_LAYOUTS)
def test_reductions_over_every_dim(layout, dtype, shape, threads, simd_level):
    values = np.round(sample(dtype, shape, seed=9) * 2) / 2        # coarse values: many ties
    x = REDUCE_LAYOUTS[layout](values)
    np.testing.assert_array_equal(x.numpy(), values)
    for dims in dims_of(len(shape)):
        dim = dims[0] if len(dims) == 1 else dims
        np.testing.assert_allclose(x.sum(dim).numpy(), values.astype(F64).sum(axis=dims).astype(dtype),
                                   rtol=1e-6 if dtype is F32 else 1e-12)
        for op in ("max", "min"):
            result = getattr(x, op)(dim)
            np.testing.assert_array_equal(result.values.numpy(), getattr(values, op)(axis=dims))
            np.testing.assert_array_equal(result.indices.numpy(), numpy_argextreme(values, dims, "arg" + op))
    assert x.sum().item() == pytest.approx(values.astype(F64).sum(), rel=1e-6)
    assert x.argmax().item() == values.argmax() and x.argmin().item() == values.argmin()
    assert x.max().item() == values.max()


def test_reductions_write_the_result_dtype():
    """The kernel stores its results as the output's dtype: float32 sums stay float32,
    int32 maxima int32, integer sums int64."""
    f32 = cpu(sample(F32, (6, 37)))
    i32 = cpu((sample(F32, (6, 37)) * 1000).astype(np.int32))
    for result, dtype in [(f32.sum(), tg.float32), (f32.sum(0), tg.float32), (f32.T.sum(1), tg.float32),
                          (f32.double().sum(1), tg.float64), (i32.max(1).values, tg.int32),
                          (i32.sum(0), tg.int64), (cpu(np.zeros((0, 3), F32)).sum(0), tg.float32)]:
        assert result.dtype is tg.float32 if dtype is tg.float32 else result.dtype is dtype
        assert result.numpy().dtype == np.dtype(dtype.name)
    np.testing.assert_array_equal(i32.max(1).values.numpy(), i32.numpy().max(1))
    np.testing.assert_array_equal(i32.sum(0).numpy(), i32.numpy().astype(np.int64).sum(0))


def test_reduction_paths():
    x = cpu(np.zeros((64, 32, 48), F32))
    assert reduce_path(x, -1) == reduce_path(x, (1, 2)) == reduce_path(x) == "rows"
    assert reduce_path(x, 0) == reduce_path(x, 1) == reduce_path(x, (0, 1)) == "columns"
    assert reduce_path(x.permute(2, 1, 0), 0) == "rows"                 # contiguous in memory
    assert reduce_path(x.permute(2, 1, 0), (1, 2)) == "columns"        # kept dim 0 has stride 1
    assert reduce_path(x.permute(2, 1, 0), 2) == "strided"             # ...but is not the last kept
    assert reduce_path(x[..., ::2], -1) == reduce_path(x[..., :8], 0) == "strided"


def test_reductions_with_nan_propagate_it_like_numpy(threads, simd_level):
    for shape in [(7, 50), (3, 100_000), (1, 300_000), (300_000, 1)]:
        values = sample(F32, shape, seed=10).copy()
        values.flat[[5, values.size // 2, values.size - 3]] = np.nan
        x = cpu(values)
        for dim in (0, 1):
            for op in ("max", "min"):
                result = getattr(x, op)(dim)
                np.testing.assert_array_equal(result.values.numpy(), getattr(values, op)(axis=dim))
                np.testing.assert_array_equal(result.indices.numpy(), getattr(values, "arg" + op)(axis=dim))
        assert np.isnan(x.max().item()) and x.argmax().item() == 5 and x.argmin().item() == 5


def test_argmax_takes_the_first_of_equal_values(threads, simd_level):
    values = np.zeros((3, 200_000), F32)
    values[:, [7, 150_000, 199_999]] = 1.0
    x = cpu(values)
    assert x.argmax(1).tolist() == [7, 7, 7] and x.argmin(1).tolist() == [0, 0, 0]
    assert x.T.argmax(0).tolist() == [7, 7, 7]
    assert cpu(values.ravel()).argmax().item() == 7


def test_integer_reductions_stay_exact(threads, simd_level):
    values = np.arange(300_000, dtype=np.int64).reshape(600, 500) * (2**33 + 1)
    x = cpu(values)
    assert x.sum(0).tolist() == values.sum(0).tolist() and x.sum(1).tolist() == values.sum(1).tolist()
    assert x.max(0).values.tolist() == values.max(0).tolist()
    small = cpu(values.astype(np.int32) % 1000)
    assert small.sum().item() == int((values.astype(np.int32) % 1000).sum())
    assert small.min(1).indices.tolist() == (values.astype(np.int32) % 1000).argmin(1).tolist()


def test_sums_of_nothing_are_zero():
    assert cpu(np.zeros((0, 40), F32)).sum(0).tolist() == [0.0] * 40
    assert cpu(np.zeros((40, 0), F32)).sum(1).tolist() == [0.0] * 40
    assert cpu(np.zeros((0,), F64)).sum().item() == 0.0


def test_float32_sum_of_16m_elements_is_accurate(threads):
    values = np.random.default_rng(3).uniform(0, 1, size=1 << 24).astype(F32) + np.float32(100)
    exact = values.astype(F64).sum()
    assert cpu(values).sum().item() == pytest.approx(exact, rel=1e-6)
    matrix = cpu(values.reshape(4096, 4096))
    np.testing.assert_allclose(matrix.sum(0).numpy(), values.reshape(4096, 4096).astype(F64).sum(0), rtol=1e-6)
    np.testing.assert_allclose(matrix.sum(1).numpy(), values.reshape(4096, 4096).astype(F64).sum(1), rtol=1e-6)


# ---- SIMD levels: which copy of the kernels runs (csrc/simd.h) ------------------------------

def test_the_default_simd_level_is_the_widest_this_cpu_runs():
    levels = cpu_backend.simd_levels()
    assert levels[0] == "generic" and len(set(levels)) == len(levels)
    assert set(levels) <= {"generic", "avx2", "avx512"}
    if not os.environ.get("TRACEGRAD_SIMD"):
        assert cpu_backend.simd_level() == levels[-1]
    before = cpu_backend.simd_level()
    try:
        cpu_backend.use_simd_level("generic")
        assert cpu_backend.simd_level() == "generic"
        cpu_backend.use_simd_level("auto")
        assert cpu_backend.simd_level() == levels[-1]
    finally:
        cpu_backend.use_simd_level(before)
    with pytest.raises(ValueError, match="cannot run the 'sse9' SIMD level"):
        cpu_backend.use_simd_level("sse9")
    with pytest.raises(TypeError, match="str"):
        cpu_backend.use_simd_level(3)


def run_python(code, **env):
    result = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def test_the_simd_level_can_be_forced_from_the_environment():
    """TRACEGRAD_SIMD is read when the library is loaded; a level this CPU cannot run (or no
    level at all) falls back to the widest, with a warning."""
    code = "from stage3_native.cpu import backend as cpu_backend; print(cpu_backend.simd_level())"
    assert run_python(code, TRACEGRAD_SIMD="generic").stdout.split() == ["generic"]
    result = run_python(code, TRACEGRAD_SIMD="sse9")
    assert result.stdout.split() == [cpu_backend.simd_levels()[-1]]
    assert "TRACEGRAD_SIMD='sse9': this CPU cannot run it" in result.stderr
