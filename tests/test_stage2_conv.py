"""Convolution, pooling, padding and interpolation (stage2_tensor/convolution.py,
resampling.py, nn/conv.py) beyond the shared op
table (tests/optable.py checks every op's values and gradients on every device): the im2col
table itself, pooling's options against numpy, the modules, unbatched inputs, and the errors
for arguments that cannot work. PyTorch, where installed, is an extra oracle."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor.convolution import output_size, windows

from .engines import device_params
from .optable import _conv

pytestmark = pytest.mark.stage2


def test_the_im2col_table_lists_each_windows_input_positions():
    # a 3x3 input, a 2x2 kernel, stride 1, padding 1 before and after: 4x4 windows
    indices, out, (padded, inside) = windows((3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (1, 1))
    assert out == (4, 4) and len(indices) == 4 * 16
    pad = 9                                    # the extra element each input row gets
    # kernel position (0, 0) of window (0, 0) reads input (-1, -1): the padding
    assert indices[0] == pad
    # kernel position (1, 1) of window (1, 1) reads input (1, 1), flat 4
    assert indices[3 * 16 + 5] == 4
    assert padded == [4] * 16                  # every window lies inside the padded input
    assert inside[0] == 1 and inside[5] == 4   # a corner window sees one input element


def test_output_size_follows_pytorchs_formula():
    assert output_size(28, 3, 1, 0, 0, 1) == 26
    assert output_size(7, 3, 2, 1, 1, 1) == 4
    assert output_size(5, 2, 2, 0, 0, 1, ceil_mode=True) == 3
    # ceil_mode never starts a window in the right padding alone
    assert output_size(5, 2, 2, 1, 1, 1, ceil_mode=True) == 3


@pytest.mark.parametrize("device", device_params(kernel="max_pool"))
def test_pooling_options_against_numpy(device):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 5, 6))
    t = tg.from_numpy(x, device=device)
    # avg_pool2d without the padding in the divisor: sum of the real elements / their count
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ones = np.pad(np.ones_like(x), [(0, 0), (0, 0), (1, 1), (1, 1)])
    want = np.zeros((2, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            window = (slice(None), slice(None), slice(2 * i, 2 * i + 3), slice(2 * j, 2 * j + 3))
            want[:, :, i, j] = padded[window].sum((2, 3)) / ones[window].sum((2, 3))
    got = F.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    # max_pool2d's indices: the flat position of each maximum in its input plane
    values, where = F.max_pool2d(t, 2, return_indices=True)
    planes = x.reshape(2, 3, 30)
    np.testing.assert_array_equal(np.take_along_axis(planes, where.numpy().reshape(2, 3, -1), 2),
                                  values.numpy().reshape(2, 3, -1))
    blocks = x[:, :, :4, :].reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(values.numpy(), blocks)


@pytest.mark.parametrize("device", device_params(kernel="im2col"))
def test_modules_and_unbatched_inputs(device):
    tg.manual_seed(0)
    conv = nn.Conv2d(4, 6, 3, padding=1, groups=2).to(device)
    assert conv.weight.shape == (6, 2, 3, 3) and conv.bias.shape == (6,)
    bound = 1 / math.sqrt(2 * 9)                       # fan_in = in_channels / groups * 3 * 3
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    x = np.random.default_rng(1).normal(size=(4, 5, 5)).astype(np.float32)
    y = conv(tg.from_numpy(x, device=device))           # (C, H, W): one sample
    want = _conv(x[None], w, conv.bias.detach().numpy(), padding=1, groups=2)[0]
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-5, atol=1e-6)
    net = nn.Sequential(nn.Conv1d(2, 3, 2), nn.MaxPool1d(2), nn.AvgPool1d(1))
    assert net.to(device)(tg.randn(4, 2, 7).to(device)).shape == (4, 3, 3)
    assert nn.Conv3d(2, 1, (1, 2, 3)).to(device)(tg.randn(2, 3, 4, 5).to(device)).shape == (1, 3, 3, 3)
    assert "kernel_size=(3, 3)" in repr(conv) and "groups=2" in repr(conv)
    up = nn.ConvTranspose2d(4, 6, 2, stride=2, groups=2).to(device)
    assert up.weight.shape == (4, 3, 2, 2)                      # (C_in, C_out / groups, *kernel)
    assert up(tg.randn(3, 4, 5, 5).to(device)).shape == (3, 6, 10, 10)
    pooled = nn.AdaptiveAvgPool2d((1, None)).to(device)(tg.from_numpy(x, device=device))
    np.testing.assert_allclose(pooled.numpy(), x.mean(axis=1, keepdims=True), rtol=1e-6)
    assert nn.AdaptiveMaxPool2d(1)(tg.from_numpy(x, device=device)).shape == (4, 1, 1)


@pytest.mark.parametrize("call, message", [
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(2, 2, 3, 3)), "input of 3 channels"),
    (lambda: F.conv2d(tg.zeros(1, 3, 2, 2), tg.zeros(2, 3, 3, 3)), "smaller than the kernel"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(2, 3, 3, 3), stride=2, padding="same"),
     "padding='same' is not supported for strided"),
    (lambda: F.conv2d(tg.zeros(3, 5), tg.zeros(2, 3, 3, 3)), "expected a 3-d \\(unbatched\\) or 4-d"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(2, 3, 3, 3), padding=-1), "padding must be non-negative"),
    (lambda: F.conv2d(tg.zeros(1, 3, 5, 5), tg.zeros(2, 3, 3, 3), stride=(1, 0)), "stride and dilation must"),
    (lambda: F.max_pool2d(tg.zeros(1, 1, 4, 4), 2, padding=2), "at most half of kernel_size"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), "must be divisible by groups"),
    (lambda: F.pad(tg.zeros(1, 2, 3), (3, 0), mode="reflect"), "must be smaller than the dimension"),
    (lambda: F.conv_transpose2d(tg.zeros(1, 3, 4, 4), tg.zeros(2, 3, 3, 3)), "needs a weight \\(C_in = 3"),
    (lambda: F.conv_transpose2d(tg.zeros(1, 3, 4, 4), tg.zeros(3, 1, 3, 3), stride=2, output_padding=2),
     "output_padding \\(2, 2\\) must be smaller"),
    (lambda: F.fold(tg.zeros(1, 8, 5), (3, 3), 2), "fold: expected input \\(N, C \\* 4, 4\\)"),
    (lambda: F.adaptive_avg_pool2d(tg.zeros(1, 2, 3, 3), (0, 2)), "output_size must be positive"),
    (lambda: F.pad(tg.zeros(1, 2, 3), (1, 1), mode="mirror"), "mode must be one of"),
    (lambda: F.pad(tg.zeros(1, 2, 3), (1, 1, 1)), "expected pairs of ints"),
    (lambda: F.interpolate(tg.zeros(1, 2, 3), size=4, scale_factor=2), "either size or scale_factor"),
    (lambda: F.interpolate(tg.zeros(1, 2, 3), size=4, mode="bilinear"), "takes a 4-d input"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="reflect"), "padding_mode 'reflect' is not supported"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_against_pytorch_where_installed():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, w, b = rng.normal(size=(2, 4, 9, 8)), rng.normal(size=(6, 2, 3, 2)), rng.normal(size=6)
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    want = torch.nn.functional.conv2d(*(torch.tensor(a) for a in (x, w, b)), **kw).numpy()
    np.testing.assert_allclose(F.conv2d(*(tg.from_numpy(a) for a in (x, w, b)), **kw).numpy(), want, rtol=1e-12)
    for kw in (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), dict(kernel_size=(2, 3), dilation=2)):
        want = torch.nn.functional.max_pool2d(torch.tensor(x), **kw).numpy()
        np.testing.assert_array_equal(F.max_pool2d(tg.from_numpy(x), **kw).numpy(), want)
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    want = torch.nn.functional.avg_pool2d(torch.tensor(x), **kw).numpy()
    np.testing.assert_allclose(F.avg_pool2d(tg.from_numpy(x), **kw).numpy(), want, rtol=1e-12)
    w = rng.normal(size=(4, 3, 3, 2))
    kw = dict(stride=(2, 3), padding=1, output_padding=(1, 2), groups=2, dilation=(1, 2))
    want = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), **kw).numpy()
    np.testing.assert_allclose(F.conv_transpose2d(tg.from_numpy(x), tg.from_numpy(w), **kw).numpy(), want, rtol=1e-12)
    for size in ((3, 5), (9, 8), (4, None)):
        for pool in ("adaptive_avg_pool2d", "adaptive_max_pool2d"):
            want = getattr(torch.nn.functional, pool)(torch.tensor(x), size).numpy()
            np.testing.assert_allclose(getattr(F, pool)(tg.from_numpy(x), size).numpy(), want, rtol=1e-12)
