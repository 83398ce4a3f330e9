"""Row kernels (stage3_native/lazy/rows.py, chapter 11): reductions with their element-wise
producers and consumers in one pass per row must compute what device "cpu"'s eager
kernels compute op by op (softmax: max, sub, exp, sum, div), bit for bit.

Each test compiles one or two kernels and checks several values with each; the file's
kernels share one cache folder (the kernel_cache fixture).
"""

import numpy as np
import pytest

import stage3_native
from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides, numel
from stage3_native.cpu import backend as cpu
from stage3_native.lazy import rows
from stage3_native.lazy.expr import (
    Const,
    Input,
    Operand,
    RowReduce,
    RowSpec,
    RowValue,
    op,
)
from tests.test_stage3_codegen import DT, buffer, read, same_bits, values

BE = backend.get("cpu")


pytestmark = pytest.mark.usefixtures("kernel_cache")      # conftest.py: one folder per file


# ---- both ways of computing ---------------------------------------------------------------

class Arg:
    """An operand both ways: a View for the eager backend, an Operand for the spec."""
    def __init__(self, dtype, buf, shape, strides, offset=0):
        self.dtype, self.buf = dtype, buf
        self.view = View(buf, shape, strides, offset, DT[dtype])
        self.operand = Operand(dtype, tuple(strides), offset)


def dense(dtype, shape, seed, data=None):
    data = values(dtype, numel(shape), seed) if data is None else data
    return Arg(dtype, buffer(data, dtype), shape, make_strides(shape))


def one(dtype, value, shape):
    """A one-element operand broadcast over shape (a Python number in an eager expression)."""
    return Arg(dtype, buffer(np.array([value]), dtype), shape, (0,) * len(shape))


def tensor(buf, dtype, shape):
    """An eager result (a contiguous buffer) as a View of shape."""
    return View(buf, shape, make_strides(shape), 0, DT[dtype])


def per_row(buf, dtype, shape, dims=1):
    """An eager reduce's result (one value per row, kept dims contiguous) broadcast over
    shape: what keepdim=True reads back in the next op."""
    kept = shape[: len(shape) - dims]
    return View(buf, shape, make_strides(kept) + (0,) * dims, 0, DT[dtype])


def fused(spec, ins):
    """Run the row kernel: the outputs (numel(shape) each), then the stored reductions."""
    kernel = rows.compile_rows(spec)
    n, n_rows = numel(spec.shape), numel(spec.shape[: len(spec.shape) - spec.dims])
    sizes = [(n, e.dtype) for e in spec.outputs]
    sizes += [(n_rows, spec.reductions[s].dtype) for s in spec.stored]
    outs = [cpu.allocate(k, DT[d]) for k, d in sizes]
    kernel.run(outs, [a.buf for a in ins])
    return [read(o, k, d) for o, (k, d) in zip(outs, sizes)]


def eager(buf, dtype, n):
    return read(buf, n, dtype)


def eager_softmax(x, shape, dims=1):
    """Softmax over the trailing dims as tensor ops run eagerly: five kernels. Returns the
    max, the sum and the result, as the eager kernels stored them."""
    d, dt, red = DT[x.dtype], x.dtype, tuple(range(len(shape) - dims, len(shape)))
    m = BE.reduce("max", x.view, red, d)
    t = BE.binary("sub", x.view, per_row(m, dt, shape, dims), d)
    e = BE.unary("exp", tensor(t, dt, shape), d)
    s = BE.reduce("sum", tensor(e, dt, shape), red, d)
    y = BE.binary("div", tensor(e, dt, shape), per_row(s, dt, shape, dims), d)
    n_rows = numel(shape[: len(shape) - dims])
    return eager(m, dt, n_rows), eager(s, dt, n_rows), eager(y, dt, numel(shape))


def softmax_spec(x, shape, dims=1):
    """Softmax's row kernel, storing the max and the sum too."""
    dt = x.dtype
    X = Input(0, dt)
    e = op("exp", op("sub", X, RowValue(0, dt)))
    return RowSpec(shape, (x.operand,), (RowReduce(X, "max", dt), RowReduce(e, "sum", dt)),
                   (op("div", e, RowValue(1, dt)),), dims, stored=(0, 1))


def check_softmax(x, shape, dims=1):
    y, m, s = fused(softmax_spec(x, shape, dims), [x])
    m_e, s_e, y_e = eager_softmax(x, shape, dims)
    what = f"softmax {x.dtype} {shape} strides {x.operand.strides}"
    same_bits(m, m_e, what + ": max")
    same_bits(s, s_e, what + ": sum")
    same_bits(y, y_e, what)
    assert np.isfinite(y).mean() > 0.5 and (y > 0).mean() > 0.5        # mostly ordinary rows
    return y


# ---- softmax ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_matches_the_five_eager_kernels(dtype):
    """Rows of 300 (one block, not a whole number of lanes), with inf and nan in a few."""
    shape = (37, 300)
    y = check_softmax(dense(dtype, shape, 1), shape)
    ok = np.isfinite(y.reshape(shape)).all(axis=1)
    np.testing.assert_allclose(y.reshape(shape)[ok].sum(axis=1), 1, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_of_several_blocks_on_threads(dtype):
    """Rows of 2100 (two blocks of 1024 and a tail), 2-D kept dims, 67200 elements: above
    TG_PARALLEL_MIN, threads take whole rows (as the eager kernels do with 32 rows)."""
    shape = (4, 8, 2100)
    before = stage3_native.get_num_threads()
    stage3_native.set_num_threads(2)
    try:
        check_softmax(dense(dtype, shape, 2), shape)
    finally:
        stage3_native.set_num_threads(before)


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_softmax_of_a_transposed_input():
    """Rows strided in memory: x is (300, 37) contiguous viewed as (37, 300), strides
    (1, 37); and a 3-D one reducing two dims, which still merge into one stride."""
    shape = (37, 300)
    data = values("float32", numel(shape), 3)
    check_softmax(Arg("float32", buffer(data, "float32"), shape, (1, 37)), shape)
    shape3 = (6, 5, 40)
    data = values("float32", numel(shape3), 4)
    check_softmax(Arg("float32", buffer(data, "float32"), shape3, (1, 240, 6)), shape3, dims=2)


# ---- LayerNorm ----------------------------------------------------------------------------

@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_layer_norm_composite_with_weight_bias_and_stored_statistics():
    """stage2_tensor.nn.functional.layer_norm_composite as the eager kernels run it:
    mean = sum(x) / n, centered = x - mean, var = sum(centered * centered) / n,
    out = centered / sqrt(var + eps) * w + b: eleven kernels, here one.

    The mean and std = sqrt(var + eps) are per-row values of expressions, not reductions;
    to store them, the kernel reduces them by max over the row (of one value repeated:
    that value, exactly)."""
    shape, dt, eps = (37, 300), "float32", 1e-5
    d = DT[dt]
    x = dense(dt, shape, 5, values(dt, numel(shape), 5) * np.float32(0.7) + np.float32(0.3))
    w = Arg(dt, buffer(values(dt, 304, 6), dt), shape, (0, 1), offset=4)
    b = Arg(dt, buffer(values(dt, 300, 7), dt), shape, (0, 1))
    n = one(dt, 300, shape)
    X, W, B, N = (Input(k, dt) for k in range(4))
    mean = op("div", RowValue(0, dt), N)
    centered = op("sub", X, mean)
    std = op("sqrt", op("add", op("div", RowValue(1, dt), N), Const(eps, dt)))
    spec = RowSpec(shape, (x.operand, w.operand, b.operand, n.operand),
                   (RowReduce(X, "sum", dt), RowReduce(op("mul", centered, centered), "sum", dt),
                    RowReduce(mean, "max", dt), RowReduce(std, "max", dt)),
                   (op("add", op("mul", op("div", centered, std), W), B), centered),
                   stored=(2, 3, 0))
    out, cen, mean_f, std_f, sum_f = fused(spec, [x, w, b, n])
    # eagerly
    rows_n = (37,)
    s = BE.reduce("sum", x.view, (1,), d)
    mean_e = BE.binary("div", tensor(s, dt, (37, 1)), one(dt, 300, (37, 1)).view, d)
    cen_e = BE.binary("sub", x.view, per_row(mean_e, dt, shape), d)
    sq = BE.binary("mul", tensor(cen_e, dt, shape), tensor(cen_e, dt, shape), d)
    ss = BE.reduce("sum", tensor(sq, dt, shape), (1,), d)
    var = BE.binary("div", tensor(ss, dt, (37, 1)), one(dt, 300, (37, 1)).view, d)
    std_e = BE.unary("sqrt", tensor(BE.binary("add", tensor(var, dt, (37, 1)),
                                              one(dt, eps, (37, 1)).view, d), dt, (37, 1)), d)
    t = BE.binary("div", tensor(cen_e, dt, shape), per_row(std_e, dt, shape), d)
    t = BE.binary("mul", tensor(t, dt, shape), w.view, d)
    out_e = BE.binary("add", tensor(t, dt, shape), b.view, d)
    same_bits(sum_f, eager(s, dt, 37), "layer norm: sum(x)")
    same_bits(mean_f, eager(mean_e, dt, 37), "layer norm: mean")
    same_bits(std_f, eager(std_e, dt, 37), "layer norm: sqrt(var + eps)")
    same_bits(cen, eager(cen_e, dt, numel(shape)), "layer norm: x - mean")
    same_bits(out, eager(out_e, dt, numel(shape)), "layer norm")
    assert np.isfinite(out).mean() > 0.9 and rows_n == mean_f.shape


# ---- reductions alone, extremes, errors ---------------------------------------------------

def test_only_stored_reductions():
    """No outputs: sum(x * x) of float32 stored as float64 (the eager reduce's double
    accumulator, unrounded) and sum of an int32 operand as int64, over two merged dims."""
    shape = (6, 40, 50)
    x, i = dense("float32", shape, 8), dense("int32", shape, 9)
    X, I = Input(0, "float32"), Input(1, "int32")
    spec = RowSpec(shape, (x.operand, i.operand),
                   (RowReduce(op("mul", X, X), "sum", "float64"), RowReduce(I, "sum", "int64")),
                   (), dims=2, stored=(0, 1))
    assert spec.n_outputs == 2
    sq_f, i_f = fused(spec, [x, i])
    sq = BE.binary("mul", x.view, x.view, dtypes.float32)
    same_bits(sq_f, eager(BE.reduce("sum", tensor(sq, "float32", shape), (1, 2), dtypes.float64), "float64", 6),
              "sum(x * x) as float64")
    same_bits(i_f, eager(BE.reduce("sum", i.view, (1, 2), dtypes.int64), "int64", 6), "sum(i) as int64")
    with pytest.raises(ValueError):             # run() counts the stored reductions
        rows.compile_rows(spec).run([cpu.allocate(6, dtypes.float64)], [x.buf, i.buf])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("length", [16, 64, 128])
def test_sum_of_a_product_over_short_rows(dtype, length):
    """sum(x * y) over rows whose length is a small constant: gcc then unrolls the row whole,
    and without a keep on the value it stores for the sum it would contract the multiply
    into the lanes' additions (one FMA, one rounding instead of two), where the eager mul
    stored its rounded product first (LayerNorm's variance, rows of 128, differed so)."""
    shape = (64, length)
    x, y = dense(dtype, shape, 10), dense(dtype, shape, 11)
    X, Y = Input(0, dtype), Input(1, dtype)
    spec = RowSpec(shape, (x.operand, y.operand), (RowReduce(op("mul", X, Y), "sum", dtype),), (),
                   stored=(0,))
    (got,) = fused(spec, [x, y])
    product = BE.binary("mul", x.view, y.view, DT[dtype])
    want = eager(BE.reduce("sum", tensor(product, dtype, shape), (1,), DT[dtype]), dtype, 64)
    same_bits(got, want, f"sum(x * y) over rows of {length}, {dtype}")
    assert np.isfinite(got).sum() > 32


@pytest.mark.slow          # seconds of compiles or runs: make test-slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_and_min_with_nans_in_rows(dtype):
    """NaN wins a row's max and min (wherever it is in the row); -0 and 0 tie as eagerly;
    and a reduction reads the ones before it: min(x - max) then (x - max) / (max - min)."""
    shape, d = (37, 300), DT[dtype]
    data = values(dtype, numel(shape), 10).reshape(shape)
    data[np.isnan(data)] = 0
    data[3, 0] = data[10, 150] = data[20, 299] = data[30, 290] = np.nan
    data[5, :] = 0.0
    data[5, 7::3] = -0.0
    data[6, :] = -0.0
    data[6, 11] = 0.0
    x = dense(dtype, shape, 0, data.reshape(-1))
    X, M, L = Input(0, dtype), RowValue(0, dtype), RowValue(1, dtype)
    spec = RowSpec(shape, (x.operand,),
                   (RowReduce(X, "max", dtype), RowReduce(X, "min", dtype),
                    RowReduce(op("sub", X, M), "min", dtype)),
                   (op("div", op("sub", X, L), op("sub", M, L)),), stored=(0, 1, 2))
    y, mx, mn, mn2 = fused(spec, [x])
    mx_e, mn_e = (BE.reduce(o, x.view, (1,), d) for o in ("max", "min"))
    t = BE.binary("sub", x.view, per_row(mx_e, dtype, shape), d)
    mn2_e = BE.reduce("min", tensor(t, dtype, shape), (1,), d)
    num = BE.binary("sub", x.view, per_row(mn_e, dtype, shape), d)
    den = BE.binary("sub", tensor(mx_e, dtype, (37, 1)), tensor(mn_e, dtype, (37, 1)), d)
    y_e = BE.binary("div", tensor(num, dtype, shape), per_row(den, dtype, shape), d)
    same_bits(mx, eager(mx_e, dtype, 37), "max")
    same_bits(mn, eager(mn_e, dtype, 37), "min")
    same_bits(mn2, eager(mn2_e, dtype, 37), "min(x - max)")
    same_bits(y, eager(y_e, dtype, numel(shape)), "(x - min) / (max - min)")
    assert np.isnan(mx[[3, 10, 20, 30]]).all() and np.isnan(mn[[3, 10, 20, 30]]).all()
    assert np.isnan(mx).sum() == 4


def test_errors():
    shape = (3, 4, 5)
    X = Input(0, "float32")
    # reduced dims (4, 5) of strides (1, 4): no single stride walks them
    bad = RowSpec(shape, (Operand("float32", (20, 1, 4)),), (RowReduce(X, "sum", "float32"),), (X,), dims=2)
    with pytest.raises(NotImplementedError):
        rows.generate_rows(bad, "g")
    ok = Operand("float32", (20, 5, 1))
    # a reduction reading itself, or a later one
    with pytest.raises(ValueError, match="RowValue"):
        rows.generate_rows(RowSpec(shape, (ok,), (RowReduce(RowValue(0, "float32"), "sum", "float32"),), (X,)), "g")
    # a RowValue of another dtype than its reduction stores
    with pytest.raises(TypeError):
        rows.generate_rows(RowSpec(shape, (ok,), (RowReduce(X, "sum", "float32"),),
                                   (RowValue(0, "float64"),)), "g")
    with pytest.raises(ValueError):              # nothing to write
        rows.generate_rows(RowSpec(shape, (ok,), (RowReduce(X, "sum", "float32"),), ()), "g")
    with pytest.raises(ValueError):              # a stored index that is no reduction
        rows.generate_rows(RowSpec(shape, (ok,), (RowReduce(X, "sum", "float32"),), (), stored=(1,)), "g")
