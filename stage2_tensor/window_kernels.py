"""Convolution's and pooling's own kernels as differentiable operations (chapter on
convolutional networks, "im2col").

convolution.py writes every convolution and pooling with index tables that any device runs:
a gather of the windows (index_select), a padding element appended to every row (cat),
a scatter-add (index_add) for the gradient. A device may instead run the optional window
kernels of backend.py, which compute each window position arithmetically, reading a fill
value in the padding, so there is no table, no padded copy, and one pass each way:

    im2col   each plane's windows as columns (N, C, K, L)         gradient: col2im
    col2im   the columns added back where they were read from     gradient: im2col
    max_pool each window's maximum and its position               gradient: max_pool_backward,
                                                                  the gradient put back there

Here are the autograd functions around them; convolution.py picks them, or its tables, in
one place (``convolution.native``). ``conv_direct`` runs the device's naive direct
convolution, the seven nested loops, without autograd: the chapter's first rung and a test
oracle. (The device's inference convolution, conv_bands, is run by the inference compiler
alone: stage4_models/onnx/operators/inference_kernels.py.)
"""
from . import backend as backends
from . import dtypes
from .gradient_function import GradientFunction
from .strides import numel
from .tensor import Tensor


class Im2col(GradientFunction):
    """x (N, C, *spatial) as its windows (N, C, K, L): what window l reads at kernel
    position k, ``fill`` where that lies in the padding. Gradient: col2im of the upstream
    gradient (the fill positions, reading no input, get none)."""

    def forward(self, x, kernel, stride, before, dilation, out, fill):
        self.geometry = (x.shape[2:], kernel, stride, before, dilation, out)
        shape = x.shape[:2] + (numel(kernel), numel(out))
        return x.launch("im2col", x.as_view(), kernel, stride, before, dilation, out, fill, x.dtype,
                        shape=shape, dtype=x.dtype)

    def backward(self, grad):
        return (Col2im.apply(grad, *self.geometry),)


class Col2im(GradientFunction):
    """Columns (N, C, K, L) summed back into (N, C, *spatial) at the positions im2col reads
    them from (those in the padding dropped): im2col's transpose, so a convolution's input
    gradient and F.fold. Gradient: im2col of the upstream gradient, 0 in the padding."""

    def forward(self, cols, spatial, kernel, stride, before, dilation, out):
        self.geometry = (kernel, stride, before, dilation, out)
        shape = cols.shape[:2] + tuple(spatial)
        return cols.launch("col2im", cols.as_view(), tuple(spatial), kernel, stride, before, dilation, out,
                           cols.dtype, shape=shape, dtype=cols.dtype)

    def backward(self, grad):
        return (Im2col.apply(grad, *self.geometry, 0),)


class _Maxima(GradientFunction):
    """The link from x to its windows' maxima, which the max_pool kernel computed (the
    buffer ``values``) with their positions ``where``: the gradient of each maximum goes to
    its position."""

    def forward(self, x, where, values):
        self.spatial = x.shape[2:]
        self.save_for_backward(where)
        return Tensor.from_buffer(values, where.shape, x.dtype, x.device)

    def backward(self, grad):
        (where,) = self.saved_tensors
        dx = grad.launch("max_pool_backward", grad.as_view(), where.as_view(), self.spatial, grad.dtype,
                         shape=grad.shape[:2] + self.spatial, dtype=grad.dtype)
        return dx, None


def max_pool(x, kernel, stride, before, dilation, out):
    """(maxima (N, C, *out), their flat positions in the input plane, int64) of x's windows."""
    values, where = backends.launch(x.device, "max_pool", x.as_view(), kernel, stride, before, dilation,
                                    out, x.dtype, out_dtype=x.dtype)
    where = Tensor.from_buffer(where, x.shape[:2] + tuple(out), dtypes.int64, x.device)
    return _Maxima.apply(x, where, values), where


def conv_direct(x, weight, bias, stride, before, dilation, groups, out):
    """The device's direct convolution kernel (no autograd): (N, C_out, *out)."""
    views = (x.as_view(), weight.as_view(), None if bias is None else bias.as_view())
    y = backends.launch(x.device, "conv_direct", *views, stride, before, dilation, groups, out, x.dtype,
                        out_dtype=x.dtype)
    return Tensor.from_buffer(y, (x.shape[0], weight.shape[0]) + tuple(out), x.dtype, x.device)
