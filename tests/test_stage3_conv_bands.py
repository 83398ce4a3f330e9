"""conv_bands, the inference convolution in one kernel (backend.py; csrc/convolution_t.h's
tg_conv_bands; stage4_models/onnx/operators/inference_kernels.py's conv_into and conv, whose
chunked path it is): against
numpy's definition on geometries hypothesis picks (1-d to 3-d, stride, dilation, padding
either side, groups, a batch, bands of any height), with bias and ReLU, into a new buffer
or a slice of a larger one; the same bits whatever the thread count and the band height;
and the errors for a destination or arguments the kernel cannot take."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stage2_tensor as tg
from stage2_tensor import backend, convolution
from stage4_models.onnx.operators import inference_kernels

from .test_stage3_conv_kernels import extents, im2col_numpy

pytestmark = pytest.mark.stage3


def conv_numpy(x, w, b, stride, before, dilation, out, groups, relu):
    """The convolution by its definition through numpy's im2col (float64)."""
    N, C = x.shape[:2]
    c_out, cg = w.shape[:2]
    cols = im2col_numpy(x, w.shape[2:], stride, before, dilation, out, 0.0)          # (N, C, K, L)
    cols = cols.reshape(N, groups, cg * cols.shape[2], cols.shape[3])
    rows = w.reshape(groups, c_out // groups, -1)
    y = np.einsum("gok,ngkl->ngol", rows, cols).reshape((N, c_out) + tuple(out))
    if b is not None:
        y = y + b.reshape((1, c_out) + (1,) * len(out))
    return np.maximum(y, 0) if relu else y


@st.composite
def convolutions(draw):
    """A geometry of 1 to 3 dims (windows reaching either end, reading padding alone, or
    skipping positions), channels, groups, a batch, a band height, bias and ReLU."""
    n = draw(st.integers(1, 3))
    dims = [draw(st.tuples(st.integers(1, 7), st.integers(1, 3), st.integers(1, 3), st.integers(0, 2),
                           st.integers(1, 2), st.integers(0, 2))) for _ in range(n)]
    spatial, kernel, stride, before, dilation, after = (tuple(d[i] for d in dims) for i in range(6))
    out = extents(spatial, kernel, stride, before, dilation, after)
    groups = draw(st.integers(1, 3))
    cg, per_group = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return dict(spatial=spatial, kernel=kernel, stride=stride, before=before, dilation=dilation, out=out,
                groups=groups, c_in=cg * groups, c_out=per_group * groups, batch=draw(st.integers(1, 2)),
                band_rows=draw(st.integers(1, 5)), bias=draw(st.booleans()), relu=draw(st.booleans()))


def _operands(g, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((g["batch"], g["c_in"]) + g["spatial"]).astype(dtype)
    w = rng.standard_normal((g["c_out"], g["c_in"] // g["groups"]) + g["kernel"]).astype(dtype)
    b = rng.standard_normal(g["c_out"]).astype(dtype) if g["bias"] else None
    return x, w, b


def _bands(g, x, w, b, dst=None):
    t = [None if a is None else tg.from_numpy(a, device="cpu") for a in (x, w, b)]
    return inference_kernels.conv_bands(*t, g["stride"], g["before"], g["dilation"], g["groups"], g["out"],
                                        g["relu"], g["band_rows"], dst)


@settings(max_examples=60, deadline=None)
@given(g=convolutions(), seed=st.integers(0, 2**32 - 1))
def test_conv_bands_against_numpy(g, seed):
    """Every output against numpy's definition, float64 (a sum of a few dozen products:
    rounding ~1e-15), in a new buffer and written into a channel slice of a larger one
    whose other channels stay as they were."""
    if 0 in g["out"]:
        return
    x, w, b = _operands(g, seed)
    want = conv_numpy(x, w, b, g["stride"], g["before"], g["dilation"], g["out"], g["groups"], g["relu"])
    got = _bands(g, x, w, b).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    whole = np.full((g["batch"], g["c_out"] + 3) + g["out"], 7.0)
    big = tg.from_numpy(whole, device="cpu")
    dst = big[:, 2:2 + g["c_out"]]
    assert _bands(g, x, w, b, dst) is dst
    whole[:, 2:2 + g["c_out"]] = got
    np.testing.assert_array_equal(big.numpy(), whole)


def test_conv_bands_is_the_same_whatever_the_threads_and_bands():
    """Bands never share an output and each sum runs over k in one order: 1 or 2 threads,
    bands of 1 row or all of them, float32, the same bits (and conv's, whose product the
    same TinyBLAS computes whole)."""
    import stage3_native
    g = dict(spatial=(23, 17), kernel=(3, 3), stride=(1, 1), before=(1, 1), dilation=(1, 1), out=(23, 17),
             groups=1, c_in=5, c_out=7, batch=1, band_rows=1, bias=True, relu=False)
    x, w, b = _operands(g, 3, np.float32)
    threads = stage3_native.get_num_threads()
    results = []
    try:
        for n in (1, 2):
            stage3_native.set_num_threads(n)
            for rows in (1, 4, 100):
                results.append(_bands(dict(g, band_rows=rows), x, w, b).numpy())
    finally:
        stage3_native.set_num_threads(threads)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    t = [tg.from_numpy(a, device="cpu") for a in (x, w, b)]
    with tg.no_grad():
        np.testing.assert_array_equal(convolution.conv(*t, 1, 1).numpy(), results[0])


@pytest.mark.parametrize("relu", [False, True])
def test_conv_into_and_the_chunked_conv_run_it(monkeypatch, relu):
    """The inference compiler's conv under no_grad with columns above CHUNK_ABOVE runs
    conv_bands (one kernel call, no im2col call), with the numbers of the gradient-recording
    path; conv_into writes into a slice; on the python device (no kernel) conv_into is conv,
    relu and a copy."""
    monkeypatch.setattr(convolution, "CHUNK_ABOVE", 0)
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 2)), rng.standard_normal(6)
    want = conv_numpy(x, w, b, (2, 1), (1, 0), (1, 2), extents((9, 8), (3, 2), (2, 1), (1, 0), (1, 2)), 2, relu)
    calls = []
    be = backend.get("cpu")
    for name in ("im2col", "conv_bands"):
        monkeypatch.setattr(be, name, (lambda f, name: lambda *a: calls.append(name) or f(*a))(getattr(be, name),
                                                                                                name))
    for device in ("cpu", "python"):
        t = [tg.from_numpy(a, device=device) for a in (x, w, b)]
        with tg.no_grad():
            y = inference_kernels.conv(*t, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
            y = y.relu() if relu else y
            big = tg.zeros(2, 8, *want.shape[2:], dtype=tg.float64, device=device)
            into = inference_kernels.conv_into(*t, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2,
                                               relu=relu, out=big[:, 1:7])
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(into.numpy(), y.numpy())
        assert not big.numpy()[:, [0, 7]].any()
    assert calls == ["conv_bands", "conv_bands"]
    t = [tg.from_numpy(a, device="cpu").requires_grad_() for a in (x, w, b)]
    y = inference_kernels.conv(*t, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)  # recorded: whole columns
    assert calls[-1] == "im2col" and y.requires_grad


def test_conv_bands_refuses_what_it_cannot_do():
    be = backend.get("cpu")
    g = dict(spatial=(5, 5), kernel=(3, 3), stride=(1, 1), before=(1, 1), dilation=(1, 1), out=(5, 5),
             groups=1, c_in=2, c_out=3, batch=1, band_rows=2, bias=False, relu=True)
    x, w, _ = _operands(g, 1)
    tx, tw = tg.from_numpy(x, device="cpu"), tg.from_numpy(w, device="cpu")
    geometry = ((1, 1), (1, 1), (1, 1), 1, (5, 5))
    args = lambda relu=True, rows=2, dst=None, dtype=tg.float64: (   # noqa: E731
        tx.as_view(), tw.as_view(), None, *geometry, relu, rows, dst, dtype)
    with pytest.raises(ValueError, match="band_rows"):
        be.conv_bands(*args(rows=0))
    with pytest.raises(ValueError, match="relu"):
        be.conv_bands(*args(relu=1))
    with pytest.raises(TypeError, match="float32 or float64"):
        be.conv_bands(*args(dtype=tg.float16))
    with pytest.raises(ValueError, match="destination is"):
        be.conv_bands(*args(dst=tg.zeros(1, 3, 5, 4, dtype=tg.float64, device="cpu").as_view()))
    with pytest.raises(ValueError, match="row-major"):            # a transposed plane
        be.conv_bands(*args(dst=tg.zeros(1, 3, 5, 5, dtype=tg.float64, device="cpu").transpose(2, 3).as_view()))
    with pytest.raises(ValueError, match="overlaps an input"):     # written over what it reads
        same = tg.zeros(1, 5, 5, 5, dtype=tg.float64, device="cpu")
        be.conv_bands(same[:, :2].as_view(), tw.as_view(), None, *geometry, True, 2, same[:, 2:].as_view(),
                      tg.float64)
        be.conv_bands(same[:, :2].as_view(), tw.as_view(), None, *geometry, True, 2, same[:, 1:4].as_view(),
                      tg.float64)
    with pytest.raises(ValueError, match="bias"):
        be.conv_bands(tx.as_view(), tw.as_view(), tg.zeros(2, dtype=tg.float64, device="cpu").as_view(),
                      *geometry, True, 2, None, tg.float64)
    with pytest.raises(ValueError, match="out must be"):
        inference_kernels.conv_into(tx, tw, padding=1, out=tg.zeros(1, 3, 4, 5, dtype=tg.float64, device="cpu"))
