"""interpolate_into and max_pool_into, the resampling and max-pool kernels writing into a
destination (backend.py; csrc/resample_t.h's tg_interpolate, pooling_t.h's tg_max_pool,
each plane row-major at any image and channel stride; the inference compiler's
interpolate_into and max_pool_into, stage4_models/onnx/operators/inference_kernels.py): against numpy's definition and, bit for bit, against interpolate and
max_pool into a buffer of their own, on geometries hypothesis picks, into a slice of a
larger buffer along its channels (what an ONNX Concat written in place hands them) leaving
the rest untouched; the fallbacks (a device without them, a destination they cannot take,
a gradient wanted) give the same result through a copy; and the contract's errors for a
destination the kernel must not get (wrong shape or dtype, planes not row-major or
overlapping, overlap with the input)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stage2_tensor as tg
from stage2_tensor import backend, convolution
from stage2_tensor.resampling import interpolate
from stage4_models.onnx.operators.inference_kernels import interpolate_into, max_pool_into

from .test_stage3_conv_kernels import extents, im2col_numpy

pytestmark = pytest.mark.stage3
NP = {tg.float32: np.float32, tg.float64: np.float64}


def _sources(size, out, mode, align_corners):
    """numpy's positions and weights along one dimension (PyTorch's formulas, float64):
    nearest floor(j * size / out); linear half-pixel or align_corners, clamped at 0."""
    j = np.arange(out, dtype=np.float64)
    if mode == "nearest":
        i = np.minimum(np.floor(j * size / out).astype(np.int64), size - 1)
        return i, i, np.zeros(out)
    c = j * ((size - 1) / (out - 1) if out > 1 else 0.0) if align_corners else (j + 0.5) * size / out - 0.5
    c = np.maximum(c, 0.0)
    i0 = np.minimum(np.floor(c).astype(np.int64), size - 1)
    return i0, np.minimum(i0 + 1, size - 1), c - i0


def interpolate_numpy(x, out, mode, align_corners):
    (y0, y1, wy), (x0, x1, wx) = (_sources(s, o, mode, align_corners) for s, o in zip(x.shape[2:], out))
    wy, wx = wy[:, None], wx[None, :]
    rows0, rows1 = x[:, :, y0], x[:, :, y1]
    return ((1 - wy) * ((1 - wx) * rows0[..., x0] + wx * rows0[..., x1])
            + wy * ((1 - wx) * rows1[..., x0] + wx * rows1[..., x1]))


def max_pool_numpy(x, kernel, stride, pad, dilation, out):
    cols = im2col_numpy(x, kernel, stride, pad, dilation, out, -np.inf)       # (N, C, K, L)
    return cols.max(axis=2).reshape(x.shape[:2] + tuple(out))


def _slot(batch, channels, out, dtype, extra):
    """A buffer of ``channels + sum(extra)`` channels filled with 7, and the slice
    [extra[0], extra[0] + channels) along them: where the kernel writes."""
    buf = tg.full((batch, channels + sum(extra)) + tuple(out), 7.0, dtype=dtype, device="cpu")
    return buf, buf[:, extra[0]:extra[0] + channels]


def _untouched(buf, extra, channels):
    a = buf.numpy()
    return np.all(a[:, :extra[0]] == 7) and np.all(a[:, extra[0] + channels:] == 7)


@st.composite
def resamplings(draw):
    mode = draw(st.sampled_from(["nearest", "bilinear"]))
    return dict(batch=draw(st.integers(1, 3)), channels=draw(st.integers(1, 4)),
                spatial=(draw(st.integers(1, 9)), draw(st.integers(1, 9))),
                out=(draw(st.integers(1, 13)), draw(st.integers(1, 13))), mode=mode,
                align_corners=draw(st.booleans()) if mode == "bilinear" else None,
                extra=(draw(st.integers(0, 3)), draw(st.integers(0, 3))),
                dtype=draw(st.sampled_from([tg.float32, tg.float64])))


@settings(max_examples=60, deadline=None)
@given(g=resamplings(), seed=st.integers(0, 2**32 - 1))
def test_interpolate_into_a_slice_against_numpy_and_interpolate(g, seed):
    x = np.random.default_rng(seed).standard_normal((g["batch"], g["channels"]) + g["spatial"])
    t = tg.from_numpy(x.astype(NP[g["dtype"]]), device="cpu")
    buf, dst = _slot(g["batch"], g["channels"], g["out"], g["dtype"], g["extra"])
    got = interpolate_into(t, size=g["out"], mode=g["mode"], align_corners=g["align_corners"], out=dst)
    assert got is dst and _untouched(buf, g["extra"], g["channels"])
    expected = interpolate(t, size=g["out"], mode=g["mode"], align_corners=g["align_corners"])
    np.testing.assert_array_equal(dst.numpy(), expected.numpy())
    reference = interpolate_numpy(x.astype(NP[g["dtype"]]).astype(np.float64), g["out"], g["mode"],
                                  bool(g["align_corners"]))
    tol = 1e-5 if g["dtype"] is tg.float32 else 1e-12       # a mix of four, each rounded once
    np.testing.assert_allclose(dst.numpy(), reference, rtol=tol, atol=tol)


@st.composite
def pools(draw):
    n = draw(st.integers(1, 3))
    dims = [draw(st.tuples(st.integers(1, 7), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)))
            for _ in range(n)]
    spatial, kernel, stride, dilation = (tuple(d[i] for d in dims) for i in range(4))
    pad = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    spatial = tuple(max(s, (k - 1) * d + 1 - 2 * p) for s, k, d, p in zip(spatial, kernel, dilation, pad))
    return dict(n=n, batch=draw(st.integers(1, 3)), channels=draw(st.integers(1, 4)), spatial=spatial,
                kernel=kernel, stride=stride, pad=pad, dilation=dilation,
                extra=(draw(st.integers(0, 3)), draw(st.integers(0, 3))),
                dtype=draw(st.sampled_from([tg.float32, tg.float64])))


@settings(max_examples=60, deadline=None)
@given(g=pools(), seed=st.integers(0, 2**32 - 1))
def test_max_pool_into_a_slice_against_numpy_and_max_pool(g, seed):
    x = np.random.default_rng(seed).standard_normal((g["batch"], g["channels"]) + g["spatial"])
    x = x.astype(NP[g["dtype"]])
    t = tg.from_numpy(x, device="cpu")
    out = extents(g["spatial"], g["kernel"], g["stride"], g["pad"], g["dilation"])
    buf, dst = _slot(g["batch"], g["channels"], out, g["dtype"], g["extra"])
    args = (g["kernel"], g["stride"], g["pad"], g["dilation"])
    got = max_pool_into(t, *args, out=dst, n=g["n"])
    assert got is dst and _untouched(buf, g["extra"], g["channels"])
    np.testing.assert_array_equal(dst.numpy(), convolution.max_pool(t, *args, n=g["n"]).numpy())
    np.testing.assert_array_equal(dst.numpy(), max_pool_numpy(x, *args, out))
    fresh = max_pool_into(t, *args, n=g["n"])          # a new buffer, no positions kept
    assert fresh.is_contiguous() and np.array_equal(fresh.numpy(), dst.numpy())


def test_max_pool_into_propagates_nan_and_takes_an_unbatched_input():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    x[0, 0, 1] = np.nan
    buf = tg.zeros(3, 2, 2, device="cpu")
    got = max_pool_into(tg.from_numpy(x, device="cpu"), 2, out=buf[1:2])
    a = buf.numpy()
    assert got.shape == (1, 2, 2) and np.isnan(a[1, 0, 0]) and a[1, 0, 1] == 7 and a[1, 1, 1] == 15
    assert np.all(a[0] == 0) and np.all(a[2] == 0)


def test_without_the_kernel_or_with_a_gradient_the_result_is_copied(monkeypatch):
    """A device without interpolate_into/max_pool_into (python), a destination whose planes
    are not row-major (a transposed view), an input that wants a gradient: the result is
    computed into a buffer of its own and copied, the same values."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for device in ("python", "cpu"):
        t = tg.from_numpy(x, device=device)
        up = tg.zeros(2, 3, 10, 8, device=device).transpose(2, 3)     # (2, 3, 8, 10), columns apart
        interpolate_into(t, size=(8, 10), mode="bilinear", align_corners=False, out=up)
        np.testing.assert_array_equal(up.numpy(), interpolate(t, size=(8, 10), mode="bilinear",
                                                              align_corners=False).numpy())
        pooled = tg.zeros(2, 5, 2, 2, device=device)[:, 1:4]
        max_pool_into(t, 2, out=pooled)
        np.testing.assert_array_equal(pooled.numpy(), convolution.max_pool(t, 2).numpy())
    # an input that wants a gradient takes interpolate (recorded), whose result copy_ then
    # refuses to write into out, as PyTorch refuses out= under autograd; without grad
    # mode, the kernel
    calls = []
    be = backend.get("cpu")
    monkeypatch.setattr(be, "interpolate_into", lambda *a: calls.append(a))
    t = tg.from_numpy(x, device="cpu")
    t.requires_grad = True
    out = tg.zeros(2, 3, 8, 10, device="cpu")
    with pytest.raises(RuntimeError, match="in-place"):
        interpolate_into(t, size=(8, 10), out=out)
    assert calls == []
    with tg.no_grad():
        interpolate_into(t, size=(8, 10), out=out)
    assert len(calls) == 1


def test_wrong_outs_are_refused_by_the_stage2_functions():
    t = tg.zeros(1, 2, 4, 4, device="cpu")
    with pytest.raises(ValueError, match="out must be a tracegrad.float32 tensor of shape"):
        interpolate_into(t, size=(8, 8), out=tg.zeros(1, 2, 8, 7, device="cpu"))
    with pytest.raises(ValueError, match="out must be a tracegrad.float32 tensor of shape"):
        interpolate_into(t, size=(8, 8), out=tg.zeros(1, 2, 8, 8, dtype=tg.float64, device="cpu"))
    with pytest.raises(ValueError, match="out must be a tracegrad.float32 tensor of shape"):
        max_pool_into(t, 2, out=tg.zeros(1, 3, 2, 2, device="cpu"))
    with pytest.raises(TypeError, match="expected a tensor"):
        interpolate_into([1.0], size=(2, 2))


def _view(t):
    return t.as_view()


def test_the_contract_refuses_destinations_the_kernel_must_not_get():
    """The backend's kernels check their destination before C runs: its shape and dtype,
    each plane row-major, the planes apart, and no element shared with the input."""
    be = backend.get("cpu")
    x = tg.zeros(2, 3, 4, 4, device="cpu")
    steps = (0.5, 0.5)

    def up(dst, view=None, dtype=tg.float32):
        be.interpolate_into(_view(x) if view is None else view, (8, 8), steps, "nearest", False, dst, dtype)

    def pool(dst):
        be.max_pool_into(_view(x), (2, 2), (2, 2), (0, 0), (1, 1), (2, 2), dst, tg.float32)

    with pytest.raises(ValueError, match=r"destination is \(2, 3, 8, 7\)"):
        up(_view(tg.zeros(2, 3, 8, 7, device="cpu")))
    with pytest.raises(ValueError, match="destination is"):
        pool(_view(tg.zeros(2, 3, 2, 2, dtype=tg.float64, device="cpu")))
    with pytest.raises(ValueError, match="row-major"):                  # columns apart
        up(_view(tg.zeros(2, 3, 8, 8, device="cpu").transpose(2, 3)))
    big = _view(tg.zeros(2, 3, 8, 8, device="cpu"))
    with pytest.raises(ValueError, match="planes apart"):                # channel planes share rows
        up(big._replace(strides=(192, 32, 8, 1)))
    with pytest.raises(ValueError, match="planes apart"):                # images share planes
        pool(big._replace(shape=(2, 3, 2, 2), strides=(4, 4, 2, 1)))
    with pytest.raises(TypeError, match="float32 or float64"):
        up(_view(tg.zeros(2, 3, 8, 8, dtype=tg.float16, device="cpu")), dtype=tg.float16)
    # the destination inside the input's own buffer: the kernel would read what it wrote
    shared = tg.zeros(2, 3, 8, 8, device="cpu")
    flat = shared.reshape(-1)
    with pytest.raises(ValueError, match="overlaps an input"):
        be.interpolate_into(_view(flat[:96].reshape(2, 3, 4, 4)), (8, 8), steps, "nearest", False,
                            _view(shared), tg.float32)
    with pytest.raises(ValueError, match="overlaps an input"):
        be.max_pool_into(_view(flat[:96].reshape(2, 3, 4, 4)), (2, 2), (2, 2), (0, 0), (1, 1), (2, 2),
                         _view(flat[:24].reshape(2, 3, 2, 2)), tg.float32)
    # a wrong geometry is interpolate's or max_pool's own error, before the destination's
    with pytest.raises(ValueError, match="steps"):
        be.interpolate_into(_view(x), (8, 8), (float("nan"), 0.5), "nearest", False,
                            _view(tg.zeros(2, 3, 8, 8, device="cpu")), tg.float32)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2), channels=st.integers(1, 3), h=st.integers(2, 9), w=st.integers(2, 9),
       seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([tg.float32, tg.float64]))
def test_the_2x2_pool_path_picks_what_the_definition_picks(batch, channels, h, w, seed, dtype):
    """pooling_t.h's specialized 2x2 stride-2 path against the python device's loops (the
    definition): the same maxima and positions with ties (small integers) and NaNs (a NaN
    wins over a number; the first of equal values wins), even and odd extents (the last
    row or column left out), into a new buffer and into a slice."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (batch, channels, h, w)).astype(NP[dtype])
    x[rng.random(x.shape) < 0.1] = np.nan
    got, where = convolution.max_pool(tg.from_numpy(x, device="cpu"), 2, return_indices=True)
    want, want_where = convolution.max_pool(tg.from_numpy(x, device="python"), 2, return_indices=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())          # NaNs equal where both are NaN
    np.testing.assert_array_equal(where.numpy(), want_where.numpy())
    buf, dst = _slot(batch, channels, (h // 2, w // 2), dtype, (1, 2))
    max_pool_into(tg.from_numpy(x, device="cpu"), 2, out=dst)
    np.testing.assert_array_equal(dst.numpy(), want.numpy())
    assert _untouched(buf, (1, 2), channels)
