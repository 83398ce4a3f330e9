"""The window kernels of convolution and pooling (backend.py's optional im2col, col2im,
conv_direct, max_pool, max_pool_backward; stage2_tensor/window_kernels.py; the python
device's loops and csrc/convolution.c, pooling.c): each against numpy's answer by the
definition, on every device that has them, gradients by central differences in float64,
1-d to 3-d with padding, stride, dilation and groups, the same numbers as the index-table
path convolution.py takes on a device without them, and the errors for geometries that
would reach outside a buffer."""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import backend, convolution, window_kernels
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides

from .engines import ENGINES, device_params, engine_params
from .gradcheck import gradcheck
from .optable import _conv

KERNEL_ENGINES = engine_params([e for e in ENGINES if e.device is not None])
DTYPES = {"float32": (tg.float32, np.float32), "float64": (tg.float64, np.float64)}

# (spatial, kernel, stride, before, dilation): 1-d, 2-d and 3-d, with padding, stride and
# dilation, a window reading only padding in places, and rows whose start lies in it
GEOMETRIES = [
    ((7,), (3,), (2,), (1,), (1,)),
    ((5, 6), (2, 3), (1, 2), (1, 2), (2, 1)),
    ((4, 4), (3, 3), (1, 1), (2, 2), (1, 1)),
    ((3, 4, 3), (2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2)),
]


def extents(spatial, kernel, stride, before, dilation, after=None):
    after = before if after is None else after
    return tuple(convolution.output_size(*a) for a in zip(spatial, kernel, stride, before, after, dilation))


def reads(spatial, kernel, stride, before, dilation, out):
    """(k, l, flat input position or None) for every kernel and output position: numpy's
    own walk of the definition."""
    for k, kk in enumerate(itertools.product(*map(range, kernel))):
        for l, o in enumerate(itertools.product(*map(range, out))):
            p = [o[d] * stride[d] - before[d] + kk[d] * dilation[d] for d in range(len(spatial))]
            inside = all(0 <= p[d] < spatial[d] for d in range(len(spatial)))
            yield k, l, (np.ravel_multi_index(p, spatial) if inside else None)


def im2col_numpy(x, kernel, stride, before, dilation, out, fill):
    planes = x.reshape(x.shape[0], x.shape[1], -1)
    K, L = int(np.prod(kernel)), int(np.prod(out))
    cols = np.full(x.shape[:2] + (K, L), fill, dtype=x.dtype)
    for k, l, p in reads(x.shape[2:], kernel, stride, before, dilation, out):
        if p is not None:
            cols[:, :, k, l] = planes[:, :, p]
    return cols


def col2im_numpy(cols, spatial, kernel, stride, before, dilation, out):
    x = np.zeros(cols.shape[:2] + (int(np.prod(spatial)),), dtype=cols.dtype)
    for k, l, p in reads(spatial, kernel, stride, before, dilation, out):
        if p is not None:
            x[:, :, p] += cols[:, :, k, l]
    return x.reshape(cols.shape[:2] + tuple(spatial))


def on(device, a, dtype=tg.float64, requires_grad=False):
    return tg.tensor(np.asarray(a).tolist(), dtype=dtype, device=device, requires_grad=requires_grad)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{len(g[0])}d-{g[0]}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", device_params(kernel="im2col"))
def test_im2col_and_col2im_against_numpy(device, dtype, geometry):
    tg_dtype, np_dtype = DTYPES[dtype]
    spatial, kernel, stride, before, dilation = geometry
    out = extents(*geometry)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3) + spatial).astype(np_dtype)
    for fill in (0.0, -np.inf):
        cols = window_kernels.Im2col.apply(on(device, x, tg_dtype), kernel, stride, before, dilation, out, fill)
        np.testing.assert_array_equal(cols.numpy(), im2col_numpy(x, kernel, stride, before, dilation, out, fill))
    c = rng.normal(size=(2, 3, int(np.prod(kernel)), int(np.prod(out)))).astype(np_dtype)
    got = window_kernels.Col2im.apply(on(device, c, tg_dtype), spatial, kernel, stride, before, dilation, out)
    want = col2im_numpy(c.astype(np.float64), spatial, kernel, stride, before, dilation, out)
    # col2im adds at most K values per element in the dtype: relative rounding ~ K eps
    eps = np.finfo(np_dtype).eps
    np.testing.assert_allclose(got.numpy(), want, rtol=10 * np.prod(kernel) * eps, atol=10 * np.prod(kernel) * eps)


@st.composite
def geometries(draw):
    """A window geometry of 1 to 3 dimensions with every extent, step and padding small, so
    that windows reaching past either end, reading padding only, or skipping input
    positions (stride above the kernel's span) all occur."""
    n = draw(st.integers(1, 3))
    dims = [draw(st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3),
                           st.integers(1, 3), st.integers(0, 3))) for _ in range(n)]
    spatial, kernel, stride, before, dilation, after = (tuple(d[i] for d in dims) for i in range(6))
    out = extents(spatial, kernel, stride, before, dilation, after)
    return spatial, kernel, stride, before, dilation, out


@pytest.mark.parametrize("device", device_params(kernel="im2col"))
@given(geometry=geometries(), seed=st.integers(0, 2**32 - 1))
def test_window_kernels_on_random_geometries(device, geometry, seed):
    """The kernels against numpy's definition on geometries hypothesis picks: every
    column of im2col, col2im's sums, max_pool's maxima and positions."""
    spatial, kernel, stride, before, dilation, out = geometry
    be, rng = backend.get(device), np.random.default_rng(seed)
    x = rng.permutation(2 * 2 * int(np.prod(spatial))).reshape((2, 2) + spatial).astype(np.float64)
    t = on(device, x)
    cols = window_kernels.Im2col.apply(t, kernel, stride, before, dilation, out, -1.0)
    np.testing.assert_array_equal(cols.numpy(), im2col_numpy(x, kernel, stride, before, dilation, out, -1.0))
    c = rng.normal(size=(2, 2, int(np.prod(kernel)), int(np.prod(out))))
    got = window_kernels.Col2im.apply(on(device, c), spatial, kernel, stride, before, dilation, out)
    np.testing.assert_allclose(got.numpy(), col2im_numpy(c, spatial, kernel, stride, before, dilation, out),
                               rtol=1e-12, atol=1e-12)
    if 0 in out:
        return
    values, where = be.max_pool(t.as_view(), kernel, stride, before, dilation, out, tg.float64)
    shape = (2, 2) + out
    values = tg.Tensor.from_buffer(values, shape, tg.float64, device).numpy()
    where = tg.Tensor.from_buffer(where, shape, tg.int64, device).numpy().reshape(2, 2, -1)
    want = im2col_numpy(x, kernel, stride, before, dilation, out, -np.inf).max(axis=2)
    np.testing.assert_array_equal(values.reshape(2, 2, -1), want)
    inside = want > -np.inf                          # a window in the padding alone has no position
    np.testing.assert_array_equal(where < 0, ~inside)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 2, -1), np.where(inside, where, 0), 2)[inside],
                                  want[inside])


@pytest.mark.parametrize("device", device_params(kernel="col2im"))
def test_col2im_is_im2cols_adjoint(device):
    # <im2col(x), c> = <x, col2im(c)>: col2im is im2col's transpose, hence its gradient
    spatial, kernel, stride, before, dilation = GEOMETRIES[1]
    out = extents(*GEOMETRIES[1])
    rng = np.random.default_rng(1)
    x, c = rng.normal(size=(1, 2) + spatial), rng.normal(size=(1, 2, int(np.prod(kernel)), int(np.prod(out))))
    a = window_kernels.Im2col.apply(on(device, x), kernel, stride, before, dilation, out, 0).numpy()
    b = window_kernels.Col2im.apply(on(device, c), spatial, kernel, stride, before, dilation, out).numpy()
    assert np.isclose(np.sum(a * c), np.sum(x * b), rtol=1e-12)


@pytest.mark.parametrize("engine", KERNEL_ENGINES)
@pytest.mark.parametrize("geometry", [GEOMETRIES[0], GEOMETRIES[1], GEOMETRIES[3]], ids=["1d", "2d", "3d"])
def test_window_kernels_gradients_by_central_differences(engine, geometry):
    spatial, kernel, stride, before, dilation = geometry
    out = extents(*geometry)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 2) + spatial)
    c = rng.normal(size=(1, 2, int(np.prod(kernel)), int(np.prod(out))))
    gradcheck(engine, lambda t: window_kernels.Im2col.apply(t, kernel, stride, before, dilation, out, 0), [x], rng)
    gradcheck(engine, lambda t: window_kernels.Col2im.apply(t, spatial, kernel, stride, before, dilation, out),
              [c], rng)
    # max pooling: distinct values, so each maximum is a differentiable choice
    pool = (spatial, tuple(min(k, 2) for k in kernel), stride, tuple(min(b, 1) for b in before), dilation)
    out = extents(*pool)
    x = rng.permutation(np.prod(x.shape)).reshape(x.shape) * 0.1
    gradcheck(engine, lambda t: window_kernels.max_pool(t, *pool[1:], out)[0], [x], rng)


CONVS = [  # (x shape, weight shape, stride, padding, dilation, groups)
    ((2, 3, 9), (4, 3, 3), 2, 1, 1, 1),
    ((2, 4, 6, 5), (6, 2, 3, 2), (2, 1), (1, 2), (1, 2), 2),
    ((1, 2, 5, 5), (4, 1, 3, 3), 1, "same", 1, 2),
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), (1, 2, 1), 1, (2, 1, 1), 1),
]


@pytest.mark.parametrize("case", CONVS, ids=["1d", "2d-groups", "2d-same", "3d"])
@pytest.mark.parametrize("device", device_params(kernel="conv_direct"))
def test_conv_direct_against_numpy_and_conv(device, case):
    x_shape, w_shape, stride, padding, dilation, groups = case
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=x_shape), rng.normal(size=w_shape), rng.normal(size=w_shape[0])
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    got = convolution.conv_direct(on(device, x), on(device, w), on(device, b), **args).numpy()
    n = len(w_shape) - 2
    pad = tuple(d * (k - 1) // 2 for d, k in zip(convolution._tuple(dilation, n, "d"), w_shape[2:])) \
        if padding == "same" else padding
    want = _conv(x, w, b, stride=stride, padding=pad, dilation=dilation, groups=groups)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # the im2col path (conv) gives the same, up to the order of the sums
    im2col = convolution.conv(on(device, x), on(device, w), on(device, b), n=n, **args).numpy()
    np.testing.assert_allclose(got, im2col, rtol=1e-12, atol=1e-12)
    # without a bias, in float32, unbatched
    x32, w32 = on(device, x[0], tg.float32), on(device, w, tg.float32)
    np.testing.assert_allclose(convolution.conv_direct(x32, w32, **args).numpy(),
                               _conv(x[:1], w, None, stride=stride, padding=pad, dilation=dilation,
                                     groups=groups)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", device_params(kernel="max_pool"))
def test_max_pool_kernel_values_positions_ties_and_nan(device):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 5, 7))
    values, where = F.max_pool2d(on(device, x), 3, stride=2, padding=1, dilation=1, return_indices=True)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
    want = np.array([[[[padded[i, c, 2 * a:2 * a + 3, 2 * b:2 * b + 3].max() for b in range(4)]
                       for a in range(3)] for c in range(3)] for i in range(2)])
    np.testing.assert_array_equal(values.numpy(), want)
    planes = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(planes, where.numpy().reshape(2, 3, -1), 2),
                                  want.reshape(2, 3, -1))
    # equal values: the first in the window (row-major) is the maximum's position
    ties = on(device, np.ones((1, 1, 4, 4)))
    np.testing.assert_array_equal(F.max_pool2d(ties, 2, return_indices=True)[1].numpy(), [[[[0, 2], [8, 10]]]])
    # a NaN wins over any number, and its gradient goes to it
    nan = np.arange(8.0).reshape(1, 1, 8)
    nan[0, 0, 1] = np.nan
    t = on(device, nan, requires_grad=True)
    y = F.max_pool1d(t, 4)
    assert np.isnan(y.detach().numpy()[0, 0, 0]) and y.detach().numpy()[0, 0, 1] == 7
    y.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[[0, 1, 0, 0, 0, 0, 0, 1]]])


@pytest.mark.stage3
def test_kernels_and_index_tables_agree_on_the_cnn_layers(monkeypatch):
    """Device "cpu" with its kernels and without them (convolution.native says no): the same
    values and gradients for a convolution with padding and stride, max and average
    pooling, a transposed convolution and fold."""
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(2, 4, 9, 8)), rng.normal(size=(6, 4, 3, 3))
    wt = rng.normal(size=(4, 3, 3, 3))

    def run():
        xt, wc, wtt = (on("cpu", a, requires_grad=True) for a in (x, w, wt))
        outs = [F.conv2d(xt, wc, padding=1, stride=(2, 1), dilation=(1, 2)),
                F.max_pool2d(xt, 3, stride=2, padding=1), F.avg_pool2d(xt, 2, padding=1),
                F.conv_transpose2d(xt, wtt, stride=2, padding=1), F.fold(F.unfold(xt, 2, padding=1), (9, 8), 2,
                                                                            padding=1)]
        sum(((o * o).sum() for o in outs), tg.tensor(0.0, dtype=tg.float64, device="cpu")).backward()
        return [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in (xt, wc, wtt)]

    with_kernels = run()
    monkeypatch.setattr(convolution, "native", lambda x, kernel: False)
    for a, b in zip(with_kernels, run()):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.stage3
def test_one_and_two_threads_give_the_same_bits():
    import stage3_native
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=(8, 16, 30, 30)), rng.normal(size=(8, 16, 3, 3))
    before, results = stage3_native.get_num_threads(), []
    try:
        for n in (1, 2):
            stage3_native.set_num_threads(n)
            xt, wt = on("cpu", x, tg.float32, requires_grad=True), on("cpu", w, tg.float32, requires_grad=True)
            y = F.max_pool2d(F.conv2d(xt, wt, padding=1), 2)
            (y * y).sum().backward()
            results.append((y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()))
    finally:
        stage3_native.set_num_threads(before)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_which_devices_run_the_kernels():
    py = backend.get("python")
    assert all(py.has(k) for k in ("im2col", "col2im", "conv_direct", "max_pool", "max_pool_backward"))
    x = tg.zeros(1, 1, 3, 3)
    assert convolution.native(x, "im2col") and convolution.native(x, "max_pool")
    assert not convolution.native(tg.zeros(1, 1, 3, 3, dtype=tg.int64), "im2col")   # floats only


@pytest.mark.stage3
def test_a_device_without_the_kernels_takes_the_index_tables(monkeypatch):
    from stage3_native.cpu.backend import CpuBackend
    lean = CpuBackend()
    lean.im2col = lean.col2im = lean.max_pool = None
    lean.name = "lean"
    monkeypatch.setitem(backend._BACKENDS, "lean", lean)
    x = np.random.default_rng(7).normal(size=(1, 2, 5, 5))
    t, w = on("lean", x, requires_grad=True), on("lean", np.ones((3, 2, 2, 2)))
    assert not convolution.native(t, "im2col") and not convolution.native(t, "max_pool")
    calls, gather = [], lean.index_select
    lean.index_select = lambda *a: calls.append("index_select") or gather(*a)
    y = F.max_pool2d(F.conv2d(t, w, padding=1), 2, padding=1)
    assert calls == ["index_select", "index_select"]           # the tables' gathers
    want = F.max_pool2d(F.conv2d(on("cpu", x), on("cpu", np.ones((3, 2, 2, 2))), padding=1), 2, padding=1)
    np.testing.assert_allclose(y.detach().numpy(), want.numpy(), rtol=1e-12)


# ---- geometries that would reach outside a buffer: refused before any kernel runs ----------

def view(device, shape, dtype=tg.float64):
    t = tg.zeros(*shape, dtype=dtype, device=device)
    return t.as_view()


@pytest.mark.parametrize("device", device_params(kernel="col2im"))
def test_bad_geometries_raise_before_the_kernel(device):
    be = backend.get(device)
    x = view(device, (1, 2, 5, 5))
    ok = ((3, 3), (1, 1), (0, 0), (1, 1), (3, 3))
    with pytest.raises(ValueError, match=r"col2im: cols has shape \(1, 2, 9, 8\), expected \(N, C, 9, 9\)"):
        be.col2im(view(device, (1, 2, 9, 8)), (5, 5), *ok, tg.float64)
    with pytest.raises(ValueError, match="stride .* must be positive"):
        be.im2col(x, (3, 3), (0, 1), (0, 0), (1, 1), (3, 3), 0.0, tg.float64)
    with pytest.raises(ValueError, match="before .* must be non-negative"):
        be.im2col(x, (3, 3), (1, 1), (-1, 0), (1, 1), (3, 3), 0.0, tg.float64)
    with pytest.raises(ValueError, match="out must be a tuple of 2 ints"):
        be.max_pool(x, (3, 3), (1, 1), (0, 0), (1, 1), (3,), tg.float64)
    with pytest.raises(ValueError, match=r"view has shape \(1, 2, 5, 5\), expected \(N, C, 5\)|spatial must be"):
        be.im2col(x, (3,), (1,), (0,), (1,), (3,), 0.0, tg.float64)
    # positions beyond int64: a stride of 2^61 over 4 outputs
    with pytest.raises(ValueError, match="below 2\\^62|beyond what int64"):
        be.im2col(x, (3, 3), (1 << 61, 1), (0, 0), (1, 1), (4, 3), 0.0, tg.float64)
    # an output that could not be allocated: 2^40 planes' worth of columns
    with pytest.raises(ValueError, match="too many elements"):
        be.im2col(x, (3, 3), (1, 1), (0, 0), (1, 1), (1 << 30, 1 << 30), 0.0, tg.float64)
    # sizes past int64 even with no planes at all (the kernels multiply them out)
    with pytest.raises(ValueError, match="too many elements"):
        be.max_pool(view(device, (0, 2, 5, 5)), (1 << 31, 1 << 31), (1, 1), (0, 0), (1, 1), (1, 1), tg.float64)
    with pytest.raises(ValueError, match="groups"):
        be.conv_direct(x, view(device, (4, 3, 3, 3)), None, (1, 1), (0, 0), (1, 1), 1, (3, 3), tg.float64)
    with pytest.raises(ValueError, match="bias has shape"):
        be.conv_direct(x, view(device, (4, 2, 3, 3)), view(device, (3,)), (1, 1), (0, 0), (1, 1), 1, (3, 3),
                       tg.float64)


@pytest.mark.parametrize("device", device_params(kernel="max_pool_backward"))
def test_max_pool_backward_refuses_positions_outside_the_plane(device):
    be = backend.get(device)
    grad = view(device, (1, 1, 2))
    where = tg.tensor([[[3, 25]]], dtype=tg.int64, device=device).as_view()
    with pytest.raises(IndexError, match="position 25 at entry 1 is outside a plane of 25"):
        out = be.max_pool_backward(grad, where, (25,), tg.float64)
        # the lazy device checks the data when the node runs: reading it
        be.to_flat(View(out, (1, 1, 25), make_strides((1, 1, 25)), 0, tg.float64))
    with pytest.raises(ValueError, match="grad .* and where .* must be one shape"):
        be.max_pool_backward(grad, view(device, (1, 1, 3), tg.int64), (25,), tg.float64)


def test_conv_direct_argument_errors():
    x, w = tg.zeros(1, 2, 5, 5), tg.zeros(3, 2, 3, 3)
    with pytest.raises(ValueError, match="at least one kernel dimension"):
        convolution.conv_direct(x, tg.zeros(3, 2))
    with pytest.raises(ValueError, match="bias of shape \\(3,\\)"):
        convolution.conv_direct(x, w, tg.zeros(2))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        convolution.conv_direct(tg.zeros(1, 2, 2, 2), w)
    with pytest.raises(TypeError, match="floating-point"):
        convolution.conv_direct(tg.zeros(1, 2, 5, 5, dtype=tg.int64), tg.zeros(3, 2, 3, 3, dtype=tg.int64))


# ---- the lazy device: convolution, bias and activation as one GEMM with an epilogue ---------

@pytest.mark.stage3
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("x_shape, groups", [((3, 10, 9), 1), ((1, 3, 10, 9), 1), ((4, 3, 10, 9), 1),
                                             ((2, 4, 7, 6), 2)], ids=["unbatched", "one", "batch", "groups"])
def test_lazy_conv_bias_relu_is_im2col_and_one_matmul_with_an_epilogue(grad, x_shape, groups, monkeypatch):
    """The convolution's product, one per image (and group), with the bias and ReLU run on
    each block of it as TinyBLAS finishes it (lazy/epilogue.py; kernels.MatmulEpilogue):
    two kernels, im2col and the product, bit for bit the eager result."""
    from stage3_native import lazy
    from stage3_native.lazy import kernels
    monkeypatch.setattr(kernels, "BATCHED_MIN", 0)      # these products are small
    monkeypatch.setattr(kernels, "EPILOGUE_MIN_BYTES", 0)
    rng = np.random.default_rng(8)
    c_in = x_shape[-3]
    x, w, b = (rng.normal(size=s).astype(np.float32) for s in [x_shape, (8, c_in // groups, 3, 3), (8,)])
    cpu = backend.get("cpu")
    variant, cpu.matmul_variant = cpu.matmul_variant, "tinyblas"
    try:
        with lazy.fusion(min_elements=0):
            ours = [tg.from_numpy(v, device="cpu").requires_grad_(grad) for v in (x, w, b)]
            eager = F.conv2d(*ours, padding=1, groups=groups).relu()
            xs = [tg.from_numpy(v, device="cpu:lazy").requires_grad_(grad) for v in (x, w, b)]
            y = F.conv2d(*xs, padding=1, groups=groups).relu()
            plan = lazy.plan([y.storage.buffer.node], cpu)
            kinds = [getattr(getattr(s, "kind", None), "name", None) for s in plan.steps]
            assert kinds == [None, "matmul+epilogue"] and plan.steps[0].op == "im2col"
            assert [n.op for n in plan.steps[1].nodes] == ["matmul", "binary", "unary"]
            lazy.reset_kernel_count()
            got = y.detach().numpy()
            assert lazy.kernel_count() == 2 and lazy.launched["matmul+epilogue"] == 1
            assert got.tobytes() == eager.detach().numpy().tobytes()
            if grad:
                for out in (eager, y):
                    (out * out).sum().backward()
                for a, c in zip(ours, xs):
                    np.testing.assert_allclose(c.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-5)
    finally:
        cpu.matmul_variant = variant


@pytest.mark.stage3
def test_lazy_small_batched_products_run_as_one_batched_call():
    """Below kernels.BATCHED_MIN multiply-adds per product (attention's many small ones), a
    batched matmul runs alone, as one call, and what follows it apart."""
    from stage3_native import lazy
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(8, 32, 16)).astype(np.float32), rng.normal(size=(8, 16, 32)).astype(np.float32)
    with lazy.fusion(min_elements=0):
        y = (tg.from_numpy(a, device="cpu:lazy") @ tg.from_numpy(b, device="cpu:lazy")).relu()
        plan = lazy.plan([y.storage.buffer.node], backend.get("cpu"))
        assert [getattr(s, "op", None) for s in plan.steps] == ["matmul", "unary"]   # two plain nodes
        np.testing.assert_allclose(y.numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
