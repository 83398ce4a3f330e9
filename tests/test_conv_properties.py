"""Convolution, transposed convolution and pooling at parameters hypothesis picks, on every
engine (chapter 12, "Convolutions"): random batch, channels (divisible by random groups),
extents, kernels, strides, paddings (ints, per-dimension tuples, 'same', 'valid'),
dilations, output_padding, ceil_mode and count_include_pad. Forward values are checked
against the numpy references below, which loop over output (or input) positions by the
definition and share nothing with the im2col table of stage2_tensor/convolution.py;
gradients against central differences in float64 (tests/gradcheck.py).

The op table (tests/optable.py) checks each op at one fixed setting; this file moves the
settings. Costs are kept small: a forward check reads one output, a gradient check two per
input element, so gradients are checked on the tiniest shapes only, and the pure-Python
device (the slowest) gets the smallest extents of all.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from .engines import ENGINES, engine_params
from .gradcheck import gradcheck

TENSOR_ENGINES = engine_params([e for e in ENGINES if not e.scalar_only])
FORWARD = settings(max_examples=15, deadline=None)
GRADIENT = settings(max_examples=10, deadline=None)


# ---- numpy references, by the definitions --------------------------------------------------

def conv_reference(x, w, b, stride, before, after, dilation, groups):
    """y[n, o, p] = b[o] + sum over c in o's group and kernel offsets k of
    w[o, c, k] * xpad[n, c, p * stride + k * dilation]: every output position's window,
    read from the zero-padded input by slicing."""
    n = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)))
    c_out, c_group, kernel = w.shape[0], w.shape[1], w.shape[2:]
    o_group = c_out // groups
    out = [(x.shape[2 + d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1 for d in range(n)]
    y = np.zeros((x.shape[0], c_out, *out))
    for pos in np.ndindex(*out):
        window = x[(slice(None), slice(None)) + tuple(
            slice(pos[d] * stride[d], pos[d] * stride[d] + dilation[d] * (kernel[d] - 1) + 1, dilation[d])
            for d in range(n))]
        for g in range(groups):
            xs = window[:, g * c_group:(g + 1) * c_group]                 # (N, Cg, *kernel)
            ws = w[g * o_group:(g + 1) * o_group]                         # (Og, Cg, *kernel)
            y[(slice(None), slice(g * o_group, (g + 1) * o_group)) + pos] = \
                xs.reshape(len(xs), -1) @ ws.reshape(len(ws), -1).T
    return y if b is None else y + b.reshape(c_out, *(1,) * n)


def conv_transpose_reference(x, w, b, stride, padding, output_padding, dilation, groups):
    """Every input value times its kernel, scattered: y[n, o, i * stride - padding + k *
    dilation] += x[n, c, i] * w[c, o - group offset, k], over the output's extents
    (i - 1) * stride - 2 padding + dilation (k - 1) + output_padding + 1."""
    n = w.ndim - 2
    c_in, o_group, kernel = w.shape[0], w.shape[1], w.shape[2:]
    c_group = c_in // groups
    out = [(x.shape[2 + d] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1)
           + output_padding[d] + 1 for d in range(n)]
    y = np.zeros((x.shape[0], o_group * groups, *out))
    for i in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*kernel):
            p = tuple(i[d] * stride[d] - padding[d] + k[d] * dilation[d] for d in range(n))
            if not all(0 <= p[d] < out[d] for d in range(n)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * c_group, (g + 1) * c_group)) + i]   # (N, Cg)
                ws = w[(slice(g * c_group, (g + 1) * c_group), slice(None)) + k]   # (Cg, Og)
                y[(slice(None), slice(g * o_group, (g + 1) * o_group)) + p] += xs @ ws
    return y if b is None else y + b.reshape(-1, *(1,) * n)


def pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling output extent: floor or ceil of the windows that fit, and with
    ceil_mode never a last window that starts in the right padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def pool_reference(x, kernel, stride, padding, dilation, ceil_mode, reduce, count_include_pad=True):
    """Each window's input elements listed one by one: the largest (reduce="max") or their
    sum divided by the window's positions within the padded input, clipped at its right
    edge (count_include_pad) or by the elements inside the input alone."""
    n = len(kernel)
    sizes = x.shape[2:]
    out = [pool_out_size(sizes[d], kernel[d], stride[d], padding[d], dilation[d], ceil_mode) for d in range(n)]
    y = np.zeros((*x.shape[:2], *out))
    for pos in np.ndindex(*out):
        starts = [pos[d] * stride[d] - padding[d] for d in range(n)]
        values = [x[(slice(None), slice(None)) + p]
                  for p in (tuple(starts[d] + k[d] * dilation[d] for d in range(n)) for k in np.ndindex(*kernel))
                  if all(0 <= p[d] < sizes[d] for d in range(n))]
        if reduce == "max":
            y[(slice(None), slice(None)) + pos] = np.max(values, axis=0)
            continue
        if count_include_pad:
            divisor = np.prod([min(starts[d] + kernel[d], sizes[d] + padding[d]) - starts[d] for d in range(n)])
        else:
            divisor = len(values)
        y[(slice(None), slice(None)) + pos] = np.sum(values, axis=0) / divisor
    return y


# ---- strategies -----------------------------------------------------------------------------

@st.composite
def conv_cases(draw, n, tiny):
    """(x shape, w shape, bias?, kwargs, (stride, before, after, dilation, groups)) for an
    n-d convolution whose output has at least one position. ``tiny`` bounds every size for
    a gradient check (two forward passes per input element) or the pure-Python device."""
    groups = draw(st.integers(1, 2))
    c_in = groups * draw(st.integers(1, 1 if tiny else 2))
    c_out = groups * draw(st.integers(1, 2))
    batch = draw(st.integers(1, 1 if tiny else 2))
    padding_kind = draw(st.sampled_from(["same", "int", "tuple", "valid"]))
    # 'same' with an even kernel and an odd dilation pads one more after than before
    kernel = tuple(draw(st.integers(2, 4) if padding_kind == "same" else st.integers(1, 3)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    if padding_kind == "same":
        stride = (1,) * n                         # PyTorch refuses 'same' with a stride
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        before = tuple(t // 2 for t in total)     # an odd total pads one more after
        after = tuple(t - t // 2 for t in total)
        padding = "same"
    else:
        stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
        if padding_kind == "valid":
            before = after = (0,) * n
            padding = "valid"
        elif padding_kind == "int":
            padding = draw(st.integers(0, 2))
            before = after = (padding,) * n
        else:
            before = after = padding = tuple(draw(st.integers(0, 2)) for _ in range(n))
    # each extent at least the dilated kernel less the padding (at least 1)
    most = (3 if n == 3 else 5) if tiny else (4 if n == 3 else 7 if n == 2 else 10)
    spatial = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - b - a), max(most, d * (k - 1) + 1)))
                    for k, d, b, a in zip(kernel, dilation, before, after))
    kwargs = dict(stride=stride if draw(st.booleans()) or len(set(stride)) > 1 else stride[0],
                  padding=padding, dilation=dilation, groups=groups)
    bias = draw(st.booleans())
    return (batch, c_in, *spatial), (c_out, c_in // groups, *kernel), bias, kwargs, \
        (stride, before, after, dilation, groups)


def _inputs(rng, x_shape, w_shape, bias, c_out=None):
    """x, w and, when ``bias``, a bias of ``c_out`` (the weight's first extent) values."""
    arrays = [rng.normal(size=x_shape), rng.normal(size=w_shape)]
    return arrays + [rng.normal(size=c_out or w_shape[0])] if bias else arrays


def _conv_fn(ns, n, kwargs):
    conv = getattr(ns.nn.functional, f"conv{n}d")
    return lambda x, w, b=None: conv(x, w, b, **kwargs)


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_forward_property(engine, n):
    tiny = engine.device == "python"

    @FORWARD
    @given(case=conv_cases(n, tiny), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        x_shape, w_shape, bias, kwargs, ref_args = case
        arrays = _inputs(np.random.default_rng(seed), x_shape, w_shape, bias)
        got = engine.value(_conv_fn(engine.namespace, n, kwargs)(*[engine.leaf(a) for a in arrays]))
        want = conv_reference(arrays[0], arrays[1], arrays[2] if bias else None, *ref_args)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check()


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("by", ["rows", "samples"])
def test_conv_in_chunks_property(engine, n, by, monkeypatch):
    """Inference (no gradient recorded) on a device with the im2col kernel convolves in
    chunks (convolution._conv_chunked; the inference compiler's conv makes them conv_bands'
    bands on device cpu instead: tests/test_stage3_conv_bands.py): a batch whose samples'
    columns each fit a chunk, a few samples at a time; otherwise a few output rows at a
    time. "rows": one row per chunk, whatever the size, so every chunk's band of input
    rows, the padding before it and chunks whose windows read the padding alone are
    exercised. "samples": one sample per chunk. Values as the whole convolution's."""
    from stage2_tensor import convolution
    monkeypatch.setattr(convolution, "CHUNK_BYTES", 1 if by == "rows" else 1 << 40)
    monkeypatch.setattr(convolution, "CHUNK_ABOVE", 0)          # every convolution in chunks
    chunked = []
    whole = convolution._conv_chunked
    monkeypatch.setattr(convolution, "_conv_chunked", lambda *a: chunked.append(1) or whole(*a))
    by_samples = convolution._conv_samples
    monkeypatch.setattr(convolution, "_conv_samples", lambda *a: chunked.append("samples") or by_samples(*a[:-1], 1))
    tg = engine.namespace
    tiny = engine.device == "python"

    @FORWARD
    @given(case=conv_cases(n, tiny), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        x_shape, w_shape, bias, kwargs, ref_args = case
        arrays = _inputs(np.random.default_rng(seed), x_shape, w_shape, bias)
        chunked.clear()
        with tg.no_grad():
            got = engine.value(_conv_fn(tg, n, kwargs)(*[engine.leaf(a) for a in arrays]))
        stride, before, after = ref_args[:3]
        identity = all(k == 1 for k in w_shape[2:]) and all(s == 1 for s in stride) and not any(before + after)
        native = convolution.native(engine.leaf(arrays[0]), "im2col")
        assert chunked.count(1) == (native and not identity)
        assert ("samples" in chunked) == (native and not identity and by == "samples" and x_shape[0] > 1)
        want = conv_reference(arrays[0], arrays[1], arrays[2] if bias else None, *ref_args)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check()


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
def test_conv_with_gradient_is_never_chunked(engine, monkeypatch):
    """With a gradient to record, the columns are made whole (im2col's backward needs
    them): the chunked path is for inference alone, so gradients are those of the whole."""
    from stage2_tensor import convolution
    monkeypatch.setattr(convolution, "CHUNK_BYTES", 1)
    monkeypatch.setattr(convolution, "CHUNK_ABOVE", 0)
    monkeypatch.setattr(convolution, "_conv_chunked", lambda *a: pytest.fail("chunked with a gradient"))
    rng = np.random.default_rng(3)
    arrays = _inputs(rng, (1, 2, 4, 5), (2, 2, 3, 3), True)
    kwargs = dict(stride=1, padding=1, dilation=1, groups=1)
    value = gradcheck(engine, _conv_fn(engine.namespace, 2, kwargs), arrays, rng)
    want = conv_reference(*arrays, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)


def test_a_1x1_convolution_makes_no_columns(monkeypatch):
    """Kernel 1, stride 1, no padding: the input's planes are the columns, so neither the
    im2col kernel nor the index table runs (either would copy the input), and the values
    and gradients are still the convolution's."""
    import stage2_tensor as tg
    import stage3_native  # noqa: F401
    from stage2_tensor import convolution, window_kernels
    monkeypatch.setattr(window_kernels.Im2col, "apply", lambda *a: pytest.fail("im2col ran"))
    monkeypatch.setattr(convolution, "_read", lambda *a: pytest.fail("the index table ran"))
    rng = np.random.default_rng(4)
    for device in ("python", "cpu"):
        engine = next(e for e in ENGINES if e.device == device)
        arrays = _inputs(rng, (2, 4, 3, 5), (6, 2, 1, 1), True)
        kwargs = dict(stride=1, padding=0, dilation=2, groups=2)
        value = gradcheck(engine, _conv_fn(tg, 2, kwargs), arrays, rng)
        want = conv_reference(*arrays, (1, 1), (0, 0), (0, 0), (2, 2), 2)
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("n", [1, 2])
def test_conv_gradient_property(engine, n):
    @GRADIENT
    @given(case=conv_cases(n, tiny=True), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        x_shape, w_shape, bias, kwargs, ref_args = case
        rng = np.random.default_rng(seed)
        arrays = _inputs(rng, x_shape, w_shape, bias)
        value = gradcheck(engine, _conv_fn(engine.namespace, n, kwargs), arrays, rng)
        np.testing.assert_allclose(value, conv_reference(arrays[0], arrays[1], arrays[2] if bias else None,
                                                         *ref_args), rtol=1e-12, atol=1e-12)
    check()


@st.composite
def conv_transpose_cases(draw, tiny):
    groups = draw(st.integers(1, 2))
    c_in, o_group = groups * draw(st.integers(1, 1 if tiny else 2)), draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(2))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(2))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(2))
    # padding up to half the dilated kernel keeps the output at least the input's size
    padding = tuple(draw(st.integers(0, d * (k - 1) // 2)) for k, d in zip(kernel, dilation))
    # below the stride or the dilation, as PyTorch allows
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    spatial = tuple(draw(st.integers(1, 3 if tiny else 5)) for _ in range(2))
    batch = draw(st.integers(1, 1 if tiny else 2))
    return ((batch, c_in, *spatial), (c_in, o_group, *kernel), draw(st.booleans()),
            (stride, padding, output_padding, dilation, groups))


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("gradient", [False, True], ids=["forward", "gradient"])
def test_conv_transpose2d_property(engine, gradient):
    tiny = gradient or engine.device == "python"

    @(GRADIENT if gradient else FORWARD)
    @given(case=conv_transpose_cases(tiny), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        x_shape, w_shape, bias, args = case
        stride, padding, output_padding, dilation, groups = args
        rng = np.random.default_rng(seed)
        arrays = _inputs(rng, x_shape, w_shape, bias, c_out=w_shape[1] * groups)

        def fn(x, w, b=None):
            return engine.namespace.nn.functional.conv_transpose2d(
                x, w, b, stride=stride, padding=padding, output_padding=output_padding,
                groups=groups, dilation=dilation)
        want = conv_transpose_reference(arrays[0], arrays[1], arrays[2] if bias else None, *args)
        if gradient:
            got = gradcheck(engine, fn, arrays, rng)
        else:
            got = engine.value(fn(*[engine.leaf(a) for a in arrays]))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check()


def test_conv_transpose2d_output_padding_below_the_dilation():
    """PyTorch takes output_padding < max(stride, dilation): here stride 1 and dilation 2 make
    a 2x1 output, its second row reached by no input (zero)."""
    import stage2_tensor as tg
    y = tg.nn.functional.conv_transpose2d(tg.ones(1, 1, 1, 1), tg.ones(1, 1, 1, 1), output_padding=(1, 0),
                                          dilation=(2, 1))
    np.testing.assert_array_equal(y.numpy(), [[[[1.0], [0.0]]]])


@st.composite
def pool_cases(draw, n, tiny, dilated):
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)         # PyTorch's limit
    dilation = tuple(draw(st.integers(1, 2)) if dilated else 1 for _ in range(n))
    most = 4 if tiny else 7
    spatial = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), max(most, d * (k - 1) + 1)))
                    for k, p, d in zip(kernel, padding, dilation))
    shape = (draw(st.integers(1, 1 if tiny else 2)), draw(st.integers(1, 2)), *spatial)
    return shape, kernel, stride, padding, dilation, draw(st.booleans())


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("gradient", [False, True], ids=["forward", "gradient"])
def test_max_pool_property(engine, n, gradient):
    tiny = gradient or engine.device == "python"

    @(GRADIENT if gradient else FORWARD)
    @given(case=pool_cases(n, tiny, dilated=True), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        shape, kernel, stride, padding, dilation, ceil_mode = case
        rng = np.random.default_rng(seed)
        # distinct values well apart: a central difference (h = 1e-6) never swaps a maximum
        x = rng.permutation(np.prod(shape)).reshape(shape) * 0.1 + rng.uniform(0, 0.01, size=shape)
        pool = getattr(engine.namespace.nn.functional, f"max_pool{n}d")

        def fn(t):
            return pool(t, kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode)
        want = pool_reference(x, kernel, stride, padding, dilation, ceil_mode, "max")
        got = gradcheck(engine, fn, [x], rng) if gradient else engine.value(fn(engine.leaf(x)))
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    check()


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("gradient", [False, True], ids=["forward", "gradient"])
def test_avg_pool_property(engine, n, gradient):
    tiny = gradient or engine.device == "python"

    @(GRADIENT if gradient else FORWARD)
    @given(case=pool_cases(n, tiny, dilated=False), count_include_pad=st.booleans(),
           seed=st.integers(0, 2**32 - 1))
    def check(case, count_include_pad, seed):
        shape, kernel, stride, padding, dilation, ceil_mode = case
        rng = np.random.default_rng(seed)
        x = rng.normal(size=shape)
        pool = getattr(engine.namespace.nn.functional, f"avg_pool{n}d")

        def fn(t):
            return pool(t, kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                        count_include_pad=count_include_pad)
        want = pool_reference(x, kernel, stride, padding, dilation, ceil_mode, "mean", count_include_pad)
        got = gradcheck(engine, fn, [x], rng) if gradient else engine.value(fn(engine.leaf(x)))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check()


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
def test_the_references_agree_with_pytorch_where_installed():
    """The references above are checked once against PyTorch too, at settings that exercise
    each of their branches (asymmetric 'same' padding, groups, dilation, output_padding,
    ceil_mode, count_include_pad), so a mistake in them cannot hide one in the library."""
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(2, 4, 7, 6)), rng.normal(size=(6, 2, 2, 3)), rng.normal(size=6)
    got = conv_reference(x, w, b, (1, 1), (0, 1), (1, 1), (1, 1), 2)
    want = tF.conv2d(*map(torch.tensor, (x, w, b)), padding="same", groups=2).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got = conv_reference(x, w, None, (2, 3), (1, 2), (1, 2), (2, 1), 2)
    want = tF.conv2d(torch.tensor(x), torch.tensor(w), stride=(2, 3), padding=(1, 2), dilation=(2, 1), groups=2)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)
    wt = rng.normal(size=(4, 3, 3, 2))
    got = conv_transpose_reference(x, wt, None, (2, 3), (1, 0), (1, 2), (1, 2), 2)
    want = tF.conv_transpose2d(torch.tensor(x), torch.tensor(wt), stride=(2, 3), padding=(1, 0),
                               output_padding=(1, 2), dilation=(1, 2), groups=2)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)
    got = pool_reference(x, (3, 2), (2, 2), (1, 1), (1, 2), True, "max")
    want = tF.max_pool2d(torch.tensor(x), (3, 2), stride=2, padding=1, dilation=(1, 2), ceil_mode=True)
    np.testing.assert_array_equal(got, want.numpy())
    for count_include_pad in (True, False):
        got = pool_reference(x, (3, 2), (2, 3), (1, 1), (1, 1), True, "mean", count_include_pad)
        want = tF.avg_pool2d(torch.tensor(x), (3, 2), stride=(2, 3), padding=1, ceil_mode=True,
                             count_include_pad=count_include_pad)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)
