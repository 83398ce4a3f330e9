"""The resampling and batch-norm kernels (backend.py's optional pad, pad_backward,
interpolate, interpolate_backward, batch_norm, batch_norm_backward; the python device's
loops, csrc/resample.c and batchnorm.c, cuda/resample.cu and batchnorm.cu): each against
numpy's answer on every device that has them, gradients by central differences in
float64, random shapes and paddings (hypothesis), the same numbers as the composite path
a device without them takes, half dtypes through float32, and the errors for arguments
that would reach outside a buffer, raised before any C runs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import backend, normalization_functions, resampling
from stage2_tensor.sampling_grid import interpolation_step

from .engines import ENGINES, device_params, engine_params
from .gradcheck import gradcheck

KERNEL_ENGINES = engine_params([e for e in ENGINES if e.device is not None])
DTYPES = {"float32": (tg.float32, np.float32), "float64": (tg.float64, np.float64)}
NUMPY_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def on(device, a, dtype=tg.float64, requires_grad=False):
    return tg.tensor(np.asarray(a).tolist(), dtype=dtype, device=device, requires_grad=requires_grad)


# ---- numpy's answers ---------------------------------------------------------------------

def torch_order(before, after):
    """F.pad's tuple (last dimension first, before then after) for per-dimension lists."""
    return tuple(v for b, a in zip(reversed(before), reversed(after)) for v in (b, a))


def pad_numpy(x, before, after, mode, value=0.0):
    n = len(before)
    widths = [(0, 0)] * (x.ndim - n) + list(zip(before, after))
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=NUMPY_MODE[mode])


def pad_backward_numpy(g, spatial, before, after, mode):
    """The adjoint by the definition: where each padded position reads (np.pad of the
    positions themselves, -1 as constant padding's fill), its gradient added there."""
    n = len(before)
    where = pad_numpy(np.arange(int(np.prod(spatial))).reshape(spatial), before, after, mode, -1)
    lead = g.shape[:g.ndim - n]
    flat_g = g.reshape(int(np.prod(lead)), -1)
    dx = np.zeros((flat_g.shape[0], int(np.prod(spatial))))
    for j, p in enumerate(where.reshape(-1)):
        if p >= 0:
            dx[:, p] += flat_g[:, j]
    return dx.reshape(lead + tuple(spatial))


def interpolation_matrix(size, out, mode, align_corners, scale=None):
    """M (out, size) with y = M x along one dimension, from PyTorch's documented formulas
    (written here in numpy, independently of sampling_grid.py)."""
    j = np.arange(out, dtype=np.float64)
    step = (size / out if scale is None else 1 / scale)
    m = np.zeros((out, size))
    if mode == "nearest":
        m[np.arange(out), np.minimum(np.floor(j * step).astype(int), size - 1)] = 1
        return m
    if align_corners:
        c = j * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        c = np.maximum((j + 0.5) * step - 0.5, 0)
    i0 = np.minimum(c.astype(int), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    np.add.at(m, (np.arange(out), i0), 1 - (c - i0))
    np.add.at(m, (np.arange(out), i1), c - i0)
    return m


def batch_norm_numpy(x, weight, bias, eps):
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=dims), x.var(axis=dims)
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return out * weight.reshape(shape) + bias.reshape(shape), mean, var


# ---- forward and backward against numpy, every device with the kernels --------------------

PADS = [  # (x shape, before, after): 1-d, 2-d, 3-d, uneven sides, a side of 0, the largest reflect
    ((2, 3, 7), (2,), (3,)),
    ((2, 3, 5, 6), (1, 3), (2, 0)),
    ((1, 2, 3, 4, 3), (1, 2, 2), (2, 0, 1)),
    ((2, 4, 4), (3, 3), (3, 3)),
]


@pytest.mark.parametrize("case", PADS, ids=["1d", "2d", "3d", "widest"])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", device_params(kernel="pad"))
def test_pad_against_numpy(device, dtype, mode, case):
    tg_dtype, np_dtype = DTYPES[dtype]
    shape, before, after = case
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype(np_dtype)
    t = on(device, x, tg_dtype, requires_grad=True)
    y = F.pad(t, torch_order(before, after), mode=mode, value=1.5)
    assert type(y.grad_fn) is resampling.Pad                         # the kernel, not the gathers
    np.testing.assert_array_equal(y.detach().numpy(), pad_numpy(x, before, after, mode, 1.5))
    g = rng.normal(size=y.shape).astype(np_dtype)
    (y * on(device, g, tg_dtype)).sum().backward()
    # an element gets at most 1 + (widest padding) gradients added: rounding ~ that many eps
    eps = np.finfo(np_dtype).eps
    np.testing.assert_allclose(t.grad.numpy(), pad_backward_numpy(g.astype(np.float64), shape[-len(before):],
                                                                  before, after, mode),
                               rtol=20 * eps, atol=20 * eps)


INTERPOLATIONS = [  # (x shape, size or None, scale_factor or None, mode, align_corners)
    ((2, 3, 4, 5), None, 2, "nearest", None),
    ((2, 3, 4, 5), None, 2, "bilinear", False),
    ((2, 3, 4, 5), (7, 9), None, "bilinear", True),
    ((1, 2, 6, 7), None, 1.7, "bilinear", False),
    ((1, 2, 6, 7), (3, 4), None, "nearest", None),
    ((1, 2, 6, 7), (1, 1), None, "bilinear", True),
    ((2, 3, 5), None, 2.5, "linear", False),
    ((2, 3, 5), 8, None, "linear", True),
    ((2, 3, 5), None, 3, "nearest", None),
]


def interpolate_numpy(x, case):
    shape, size, scale, mode, align_corners = case
    n = x.ndim - 2
    sizes = (size,) * n if isinstance(size, int) else size
    scales = (None,) * n if scale is None else (float(scale),) * n
    out = sizes if size is not None else tuple(int(np.floor(s * scale)) for s in shape[2:])
    kind = "nearest" if mode == "nearest" else "linear"
    ms = [interpolation_matrix(s, o, kind, align_corners, f) for s, o, f in zip(shape[2:], out, scales)]
    if n == 1:
        return x @ ms[0].T, ms
    return ms[0] @ x @ ms[1].T, ms


@pytest.mark.parametrize("case", INTERPOLATIONS, ids=lambda c: f"{c[3]}-{c[1] or c[2]}-{c[4]}-{len(c[0]) - 2}d")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", device_params(kernel="interpolate"))
def test_interpolate_against_numpy(device, dtype, case):
    tg_dtype, np_dtype = DTYPES[dtype]
    shape, size, scale, mode, align_corners = case
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype(np_dtype)
    t = on(device, x, tg_dtype, requires_grad=True)
    y = F.interpolate(t, size=size, scale_factor=scale, mode=mode, align_corners=align_corners)
    fn = y.grad_fn if len(shape) == 4 else y.grad_fn.inputs[0].grad_fn     # 1-d: squeezed after
    assert type(fn) is resampling.Interpolate
    want, ms = interpolate_numpy(x.astype(np.float64), case)
    # four products and three sums in the dtype, weights in [0, 1]: a few eps of the inputs
    eps = np.finfo(np_dtype).eps
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=10 * eps, atol=10 * eps)
    g = rng.normal(size=y.shape)
    (y * on(device, g, tg_dtype)).sum().backward()
    dx = g @ ms[0] if len(ms) == 1 else ms[0].T @ g @ ms[1]         # the adjoint: the transposes
    # each input gathers at most ~(2 / scale + 1)^2 weighted gradients
    np.testing.assert_allclose(t.grad.numpy(), dx, rtol=50 * eps, atol=50 * eps)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4, 5), (2, 3, 4, 5), (2, 2, 2, 3, 2)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", device_params(kernel="batch_norm"))
def test_batch_norm_against_numpy(device, dtype, shape):
    tg_dtype, np_dtype = DTYPES[dtype]
    rng = np.random.default_rng(2)
    x = (rng.normal(size=shape) * 3 + 2).astype(np_dtype)
    w, b = rng.normal(size=shape[1]).astype(np_dtype), rng.normal(size=shape[1]).astype(np_dtype)
    t, tw, tb = (on(device, a, tg_dtype, requires_grad=True) for a in (x, w, b))
    rm, rv = on(device, np.zeros(shape[1]), tg_dtype), on(device, np.ones(shape[1]), tg_dtype)
    y = F.batch_norm(t, rm, rv, tw, tb, training=True, momentum=0.25, eps=1e-3)
    assert type(y.grad_fn) is normalization_functions.BatchNorm
    want, mean, var = batch_norm_numpy(x.astype(np.float64), w, b, 1e-3)
    # sums of n values in double, the normalization in the dtype: a few eps of |out| ~ 5
    tol = 10 * np.finfo(np_dtype).eps * 10
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=tol, atol=tol)
    n = x.size // shape[1]
    np.testing.assert_allclose(rm.numpy(), 0.25 * mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * var * n / (n - 1), rtol=tol, atol=tol)
    # the backward formula in numpy, by the definition of each sum
    g = rng.normal(size=shape)
    (y * on(device, g, tg_dtype)).sum().backward()
    dims = (0,) + tuple(range(2, x.ndim))
    cshape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x - mean.reshape(cshape)) / np.sqrt(var.reshape(cshape) + 1e-3)
    dweight, dbias = (g * xhat).sum(axis=dims), g.sum(axis=dims)
    dx = (w.reshape(cshape) / np.sqrt(var.reshape(cshape) + 1e-3)
          * (g - dbias.reshape(cshape) / n - xhat * dweight.reshape(cshape) / n))
    for got, expected in ((t.grad, dx), (tw.grad, dweight), (tb.grad, dbias)):
        np.testing.assert_allclose(got.numpy(), expected, rtol=tol * n, atol=tol * n)


# ---- gradients by central differences, float64 -------------------------------------------

@pytest.mark.parametrize("engine", KERNEL_ENGINES)
def test_gradients_by_central_differences(engine):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 2, 4, 5))
    for mode in ("constant", "reflect", "replicate", "circular"):
        gradcheck(engine, lambda t: F.pad(t, (2, 1, 3, 0), mode=mode, value=0.5), [x], rng)
    gradcheck(engine, lambda t: F.interpolate(t, scale_factor=1.5, mode="bilinear"), [x], rng)
    gradcheck(engine, lambda t: F.interpolate(t, size=(5, 3), mode="bilinear", align_corners=True), [x], rng)
    gradcheck(engine, lambda t: F.interpolate(t, scale_factor=2, mode="nearest"), [x], rng)
    w, b = rng.normal(size=2), rng.normal(size=2)
    gradcheck(engine, lambda t, tw, tb: F.batch_norm(t, None, None, tw, tb, training=True), [x, w, b], rng)
    gradcheck(engine, lambda t: F.batch_norm(t, None, None, training=True), [x], rng)


@pytest.mark.parametrize("device", device_params(kernel="pad_backward"))
def test_the_adjoints_gradients_are_the_forward_kernels(device):
    # PadBackward's gradient is Pad (with 0 as the constant), InterpolateBackward's is
    # Interpolate: d/dg <adjoint(g), v> = forward(v)
    rng = np.random.default_rng(4)
    v = rng.normal(size=(1, 2, 4, 5))
    steps = (interpolation_step(4, 6, "linear", False, 1.5), interpolation_step(5, 7, "linear", False, 1.5))
    pairs = [(lambda g: resampling.PadBackward.apply(g, (4, 5), (3, 2), (0, 1), "constant"),
              lambda t: F.pad(t, (2, 1, 3, 0)), (1, 2, 7, 8)),
             (lambda g: resampling.PadBackward.apply(g, (4, 5), (3, 2), (0, 1), "reflect"),
              lambda t: F.pad(t, (2, 1, 3, 0), mode="reflect"), (1, 2, 7, 8)),
             (lambda g: resampling.InterpolateBackward.apply(g, (4, 5), steps, "linear", False),
              lambda t: F.interpolate(t, scale_factor=1.5, mode="bilinear"), (1, 2, 6, 7))]
    for adjoint, forward, shape in pairs:
        g = on(device, rng.normal(size=shape), requires_grad=True)
        (adjoint(g) * on(device, v)).sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), forward(on(device, v)).numpy(), rtol=1e-12, atol=1e-12)


# ---- random geometries (hypothesis), each device's kernels against numpy --------------------

@st.composite
def paddings(draw):
    n = draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(n))
    limit = {"reflect": lambda s: s - 1, "circular": lambda s: s}.get(mode, lambda s: 4)
    before = tuple(draw(st.integers(0, limit(s))) for s in spatial)
    after = tuple(draw(st.integers(0, limit(s))) for s in spatial)
    lead = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(1, 2))))
    return lead + spatial, before, after, mode


@settings(max_examples=25)
@pytest.mark.parametrize("device", device_params(kernel="pad"))
@given(case=paddings(), seed=st.integers(0, 2**32 - 1))
def test_pad_on_random_geometries(device, case, seed):
    shape, before, after, mode = case
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    be = backend.get(device)
    t = on(device, x)
    padded = pad_numpy(x, before, after, mode, -2.0)
    y = tg.Tensor.from_buffer(be.pad(t.as_view(), before, after, mode, -2.0, tg.float64), padded.shape,
                              tg.float64, device)
    np.testing.assert_array_equal(y.numpy(), padded)
    g = rng.normal(size=padded.shape)
    dx = be.pad_backward(on(device, g).as_view(), shape[-len(before):], before, after, mode, tg.float64)
    np.testing.assert_allclose(tg.Tensor.from_buffer(dx, shape, tg.float64, device).numpy(),
                               pad_backward_numpy(g, shape[-len(before):], before, after, mode),
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=25)
@pytest.mark.parametrize("device", device_params(kernel="interpolate"))
@given(spatial=st.tuples(st.integers(1, 6), st.integers(1, 6)), out=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       mode=st.sampled_from(["nearest", "linear"]), align_corners=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_interpolate_on_random_sizes(device, spatial, out, mode, align_corners, seed):
    align_corners = align_corners and mode == "linear"
    rng = np.random.default_rng(seed)
    x, g = rng.normal(size=(2, 2) + spatial), rng.normal(size=(2, 2) + out)
    steps = tuple(interpolation_step(s, o, mode, align_corners, None) for s, o in zip(spatial, out))
    be = backend.get(device)
    y = be.interpolate(on(device, x).as_view(), out, steps, mode, align_corners, tg.float64)
    mh, mw = (interpolation_matrix(s, o, mode, align_corners) for s, o in zip(spatial, out))
    np.testing.assert_allclose(tg.Tensor.from_buffer(y, (2, 2) + out, tg.float64, device).numpy(),
                               mh @ x @ mw.T, rtol=1e-12, atol=1e-12)
    dx = be.interpolate_backward(on(device, g).as_view(), spatial, steps, mode, align_corners, tg.float64)
    np.testing.assert_allclose(tg.Tensor.from_buffer(dx, (2, 2) + spatial, tg.float64, device).numpy(),
                               mh.T @ g @ mw, rtol=1e-12, atol=1e-12)


# ---- the dispatch: composite fallback, half dtypes ---------------------------------------

@pytest.mark.parametrize("device", device_params(kernel="pad"))
def test_kernels_give_the_composites_numbers(device, monkeypatch):
    """A device without the kernels takes the gathers and tensor-op composites: same values
    and gradients (up to the order of the sums)."""
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(2, 3, 5, 6)), rng.normal(size=3), rng.normal(size=3)
    cases = [lambda t, tw, tb: F.pad(t, (1, 2, 2, 1), mode="reflect") * 1.0,
             lambda t, tw, tb: F.pad(t, (1, 2, 0, 1), mode="replicate"),
             lambda t, tw, tb: F.pad(t, (1, 2, 0, 1), value=3.0),
             lambda t, tw, tb: F.interpolate(t, scale_factor=2, mode="bilinear"),
             lambda t, tw, tb: F.interpolate(t, scale_factor=2, mode="nearest"),
             lambda t, tw, tb: F.batch_norm(t, None, None, tw, tb, training=True),
             lambda t, tw, tb: F.batch_norm(t, on(device, w), on(device, b * b), tw, tb),
             lambda t, tw, tb: F.group_norm(t, 3, tw, tb),
             lambda t, tw, tb: F.instance_norm(t, on(device, w), on(device, b * b), tw, tb)]

    def run(fn):
        leaves = [on(device, a, requires_grad=True) for a in (x, w, b)]
        y = fn(*leaves)
        (y * y).sum().backward()
        return [y.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None for t in leaves]

    kernels = [run(fn) for fn in cases]
    monkeypatch.setattr(resampling, "native", lambda *a: False)
    monkeypatch.setattr(normalization_functions, "native", lambda *a: False)
    for fn, want in zip(cases, kernels):
        for got, expected in zip(run(fn), want):
            if expected is None:
                assert got is None
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_a_device_without_the_kernels_takes_the_composite(monkeypatch):
    be = backend.get("cpu")
    monkeypatch.setattr(type(be), "has", lambda self, k: k not in ("pad", "interpolate", "batch_norm"))
    t = on("cpu", np.ones((1, 2, 3, 3)), requires_grad=True)
    assert type(F.pad(t, (1, 1, 1, 1), mode="reflect").grad_fn) is not resampling.Pad
    assert type(F.interpolate(t, scale_factor=2).grad_fn) is not resampling.Interpolate
    assert type(F.batch_norm(t, None, None, training=True).grad_fn) is not normalization_functions.BatchNorm


@pytest.mark.parametrize("device", device_params(kernel="batch_norm"))
def test_group_and_instance_norm_run_the_batch_norm_kernels(device):
    # per sample and group is batch normalization of (1, N * groups, rest)
    t = on(device, np.random.default_rng(7).normal(size=(2, 4, 3, 3)), requires_grad=True)
    for y in (F.group_norm(t, 2), F.instance_norm(t)):
        assert type(y.grad_fn.inputs[0].grad_fn) is normalization_functions.BatchNorm


@pytest.mark.stage3
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes_run_through_float32(dtype):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    half = getattr(tg, dtype)
    t = tg.tensor(x.tolist(), dtype=half, device="cpu", requires_grad=True)
    x = t.detach().to(dtype=tg.float32).numpy().astype(np.float64)       # the rounded inputs
    tol = {"float16": 2e-3, "bfloat16": 2e-2}[dtype]
    y = F.pad(t, (1, 2, 2, 1), mode="reflect")
    assert y.dtype is half
    np.testing.assert_allclose(y.detach().to(dtype=tg.float32).numpy(), pad_numpy(x, (2, 1), (1, 2), "reflect"),
                               rtol=tol, atol=tol)
    z = F.interpolate(t, scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(z.detach().to(dtype=tg.float32).numpy(),
                               interpolate_numpy(x, (x.shape, None, 2, "bilinear", False))[0], rtol=tol, atol=tol)
    b = F.batch_norm(t, None, None, training=True)
    np.testing.assert_allclose(b.detach().to(dtype=tg.float32).numpy(),
                               batch_norm_numpy(x, np.ones(3), np.zeros(3), 1e-5)[0], rtol=4 * tol, atol=4 * tol)
    (y.sum() + z.sum() + b.sum()).backward()
    assert t.grad.dtype is half


# ---- bad arguments, refused before C -----------------------------------------------------

def _view(device, shape, dtype=tg.float32):
    return tg.zeros(*shape, dtype=dtype, device=device).as_view()


BAD = {
    "reflect as wide as the dimension": (
        lambda be, d: be.pad(_view(d, (1, 2, 3)), (3,), (0,), "reflect", 0.0, tg.float32), "reflect padding"),
    "circular wider than the dimension": (
        lambda be, d: be.pad(_view(d, (1, 2, 3)), (0,), (4,), "circular", 0.0, tg.float32), "circular padding"),
    "negative padding": (
        lambda be, d: be.pad(_view(d, (1, 2, 3)), (-1,), (0,), "constant", 0.0, tg.float32), "before must be"),
    "padding past int64": (
        lambda be, d: be.pad(_view(d, (1, 2, 3)), (1 << 62,), (0,), "constant", 0.0, tg.float32), "before must be"),
    "an output too large for a buffer": (
        lambda be, d: be.pad(_view(d, (2, 3, 3)), (1 << 61, 1 << 30), (0, 0), "constant", 0.0, tg.float32),
        "too many"),
    "an unknown mode": (
        lambda be, d: be.pad(_view(d, (1, 2, 3)), (1,), (1,), "mirror", 0.0, tg.float32), "mode must be"),
    "more padded dimensions than the view has": (
        lambda be, d: be.pad(_view(d, (3,)), (1, 1), (1, 1), "constant", 0.0, tg.float32), "at most one per"),
    "pad_backward onto extents past int64": (
        lambda be, d: be.pad_backward(_view(d, (1, 2, 5)), (1 << 62,), (1,), (2,), "constant", tg.float32),
        "spatial"),
    "pad_backward onto extents that are not ints": (
        lambda be, d: be.pad_backward(_view(d, (1, 2, 5)), ("2",), (1,), (2,), "constant", tg.float32),
        "spatial"),
    "pad_backward's grad of another shape": (
        lambda be, d: be.pad_backward(_view(d, (1, 2, 5)), (3,), (1,), (2,), "reflect", tg.float32),
        r"expected \(\.\.\., 6\)"),
    "interpolate of a 3-d view": (
        lambda be, d: be.interpolate(_view(d, (1, 2, 3)), (2, 2), (0.5, 0.5), "linear", False, tg.float32),
        r"expected a view \(N, C, H, W\)"),
    "a NaN step": (
        lambda be, d: be.interpolate(_view(d, (1, 2, 3, 3)), (2, 2), (float("nan"), 0.5), "linear", False,
                                     tg.float32), "finite"),
    "an empty output": (
        lambda be, d: be.interpolate(_view(d, (1, 2, 3, 3)), (0, 2), (0.5, 0.5), "linear", False, tg.float32),
        "out must be"),
    "interpolate_backward onto an empty input": (
        lambda be, d: be.interpolate_backward(_view(d, (1, 2, 3, 3)), (0, 2), (0.5, 0.5), "nearest", False,
                                              tg.float32), "spatial must be"),
    "batch_norm of a 1-d view": (
        lambda be, d: be.batch_norm(_view(d, (5,)), None, None, 1e-5, tg.float32), "at least 2 dimensions"),
    "batch_norm's weight per element": (
        lambda be, d: be.batch_norm(_view(d, (2, 3, 4)), _view(d, (4,)), None, 1e-5, tg.float32),
        r"weight has shape \(4,\), expected \(3,\)"),
    "batch_norm's negative eps": (
        lambda be, d: be.batch_norm(_view(d, (2, 3)), None, None, -1.0, tg.float32), "eps must be"),
    "batch_norm_backward's statistics of another size": (
        lambda be, d: be.batch_norm_backward(_view(d, (2, 3, 4)), _view(d, (2, 3, 4)), _view(d, (2,)),
                                             _view(d, (3,)), None, 1e-5, tg.float32),
        r"mean has shape \(2,\), expected \(3,\)"),
}


@pytest.mark.parametrize("case", BAD)
@pytest.mark.parametrize("device", device_params(kernel="pad"))
def test_bad_arguments_are_refused_before_the_kernel(device, case):
    call, message = BAD[case]
    with pytest.raises(ValueError, match=message):
        call(backend.get(device), device)


def test_reflect_padding_too_wide_is_refused_by_F_pad():
    with pytest.raises(ValueError, match="reflect padding"):
        F.pad(on("cpu", np.zeros((1, 2, 3))), (3, 0), mode="reflect")


@pytest.mark.parametrize("device", device_params(kernel="pad"))
def test_no_planes_build_no_tables(device):
    # an empty batch with padding or an output of 2^31 per dimension: nothing to write, and
    # no table of that length is built (the kernels return before)
    be = backend.get(device)
    y = be.pad(_view(device, (0, 3)), (1 << 40,), (1 << 40,), "constant", 0.0, tg.float32)
    assert be.size(y, tg.float32) == 0
    dx = be.pad_backward(_view(device, (0, 5)), (3,), (1 << 0,), (1,), "reflect", tg.float32)
    assert be.size(dx, tg.float32) == 0
    y = be.interpolate(_view(device, (0, 2, 3, 3)), (1 << 30, 1 << 30), (0.5, 0.5), "linear", False, tg.float32)
    assert be.size(y, tg.float32) == 0
