"""PyTorch's lazy modules: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d, whose input size (in_features,
in_channels, num_features) is read from the first input (its last dimension for Linear,
its channels otherwise) instead of given.

Until then the weights are ``UninitializedParameter``s (parameter.py). At the first call the
module builds the layer it stands for with the inferred size, takes that layer's freshly
initialised tensors into its placeholders in place (so references held to them, an
optimizer's, see the real tensors), takes its other attributes, and becomes that layer
(its class is switched, as PyTorch's ``cls_to_become``).
"""
from . import conv, layers, normalization
from .modules import Module
from .parameter import UninitializedBuffer, UninitializedParameter


class _LazyMixin(Module):
    cls_to_become = None
    placeholders = ("weight", "bias")

    def __init__(self, *args, device=None, dtype=None, **kwargs):
        super().__init__()
        self._lazy_args, self._lazy_kwargs = args, dict(kwargs, device=device, dtype=dtype)
        for name in self.placeholders:
            if self._has(name):
                setattr(self, name, UninitializedParameter(device=device, dtype=dtype))
        for name in self._lazy_buffers():
            self.register_buffer(name, UninitializedBuffer(device=device, dtype=dtype))

    def _has(self, name):
        return True

    def _lazy_buffers(self):
        return ()

    def has_uninitialized_params(self):
        return any(isinstance(v, (UninitializedParameter, UninitializedBuffer)) for v in vars(self).values())

    def _size_of(self, input):
        return input.shape[1] if input.ndim > 1 else input.shape[0]

    def initialize_parameters(self, input):
        """Build the real layer for ``input`` and become it."""
        real = self.cls_to_become(self._size_of(input), *self._lazy_args, **self._lazy_kwargs)
        mine = vars(self)
        for name in ("_lazy_args", "_lazy_kwargs"):
            del mine[name]
        for name, value in vars(real).items():
            if name == "training":                            # train() / eval() called before stay
                continue
            current = mine.get(name)
            if isinstance(current, (UninitializedParameter, UninitializedBuffer)) and value is not None:
                current.take(value)
            else:
                object.__setattr__(self, name, value)
        for name in [n for n, v in mine.items() if isinstance(v, (UninitializedParameter, UninitializedBuffer))]:
            object.__setattr__(self, name, None)              # a placeholder the layer has no tensor for
        self.__class__ = self.cls_to_become

    def forward(self, input, *args, **kwargs):
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)


class LazyLinear(_LazyMixin):
    """Linear with in_features the input's last dimension."""
    cls_to_become = layers.Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        self._bias = bias
        super().__init__(out_features, bias, device=device, dtype=dtype)
        del vars(self)["_bias"]
        self.in_features, self.out_features = 0, out_features
        if not bias:
            self.bias = None

    def _has(self, name):
        return name == "weight" or self._bias

    def _size_of(self, input):
        return input.shape[-1]


class _LazyConv(_LazyMixin):
    def __init__(self, out_channels, kernel_size, *args, bias=True, device=None, dtype=None, **kwargs):
        self._bias = bias
        super().__init__(out_channels, kernel_size, *args, bias=bias, device=device, dtype=dtype, **kwargs)
        del vars(self)["_bias"]
        self.in_channels, self.out_channels = 0, out_channels
        if not bias:
            self.bias = None

    def _has(self, name):
        return name == "weight" or self._bias

    def _size_of(self, input):
        n = self.cls_to_become.n
        return input.shape[0] if input.ndim == n + 1 else input.shape[1]


class LazyConv1d(_LazyConv):
    cls_to_become = conv.Conv1d


class LazyConv2d(_LazyConv):
    cls_to_become = conv.Conv2d


class LazyConv3d(_LazyConv):
    cls_to_become = conv.Conv3d


class LazyConvTranspose1d(_LazyConv):
    cls_to_become = conv.ConvTranspose1d


class LazyConvTranspose2d(_LazyConv):
    cls_to_become = conv.ConvTranspose2d


class LazyConvTranspose3d(_LazyConv):
    cls_to_become = conv.ConvTranspose3d


class _LazyNorm(_LazyMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        self._affine, self._track = affine, track_running_stats
        super().__init__(eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        del vars(self)["_affine"], vars(self)["_track"]
        self.num_features = 0

    def _has(self, name):
        return self._affine

    def _lazy_buffers(self):
        return ("running_mean", "running_var") if self._track else ()


class LazyBatchNorm1d(_LazyNorm):
    cls_to_become = normalization.BatchNorm1d


class LazyBatchNorm2d(_LazyNorm):
    cls_to_become = normalization.BatchNorm2d


class LazyBatchNorm3d(_LazyNorm):
    cls_to_become = normalization.BatchNorm3d


class _LazyInstanceNorm(_LazyNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    def _size_of(self, input):
        return input.shape[0] if input.ndim == self.cls_to_become.expected_ndim[0] else input.shape[1]


class LazyInstanceNorm1d(_LazyInstanceNorm):
    cls_to_become = normalization.InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm):
    cls_to_become = normalization.InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm):
    cls_to_become = normalization.InstanceNorm3d
