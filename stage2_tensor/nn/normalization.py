"""Normalization layers, PyTorch's names, arguments and defaults: BatchNorm1d, BatchNorm2d,
InstanceNorm1d, InstanceNorm2d, GroupNorm and RMSNorm, each a thin Module around its
function in stage2_tensor/normalization_functions.py. Running statistics are buffers
(register_buffer): saved by state_dict, moved by to(), never trained. Arguments are
checked when the layer is built, not at its first forward.
"""
from .. import dtypes
from .. import normalization_functions as N
from ..factories import ones, zeros
from .modules import Module, Parameter


def _check_features(n, name, fn):
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{fn}: {name} must be a positive int, got {n!r}")


class _NormBase(Module):
    """What BatchNorm and InstanceNorm share: weight (ones) and bias (zeros) per channel when
    affine; with track_running_stats the buffers running_mean (zeros), running_var (ones)
    and num_batches_tracked (an int64 count of training batches), as in PyTorch."""

    expected_ndim = ()                  # the input dimensions the layer accepts

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        fn = type(self).__name__
        _check_features(num_features, "num_features", fn)
        N._check_eps(eps, fn)
        if momentum is not None:                     # None: a cumulative average
            N._check_momentum(momentum, fn)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self.weight = Parameter(ones(num_features, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(zeros(num_features, dtype=dtype, device=device)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked",
                                 zeros((), dtype=dtypes.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def _check_input_dim(self, input):
        if input.ndim not in self.expected_ndim:
            raise ValueError(f"{type(self).__name__}: expected a {' or '.join(map(str, self.expected_ndim))}D "
                             f"input, got shape {input.shape}")

    def _factor(self):
        """The weight of this batch's statistics in the running ones: momentum, or with
        momentum=None 1 / (the number of batches so far), a cumulative average (PyTorch's).
        A training step counts itself in num_batches_tracked first."""
        if not (self.training and self.track_running_stats):
            return 0.0 if self.momentum is None else self.momentum
        self.num_batches_tracked.add_(1)
        return self.momentum if self.momentum is not None else 1 / self.num_batches_tracked.item()

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Batch normalization: in training mode the batch's statistics normalize and update the
    running ones; in eval mode the running ones normalize (or, without
    track_running_stats, the batch's still do, as in PyTorch)."""

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}): expected "
                             f"{self.num_features} channels, got input of shape {input.shape}")
        factor = self._factor()
        use_batch = self.training or self.running_mean is None
        return N.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs over N (and L), per channel."""
    expected_ndim = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs over N, H and W, per channel."""
    expected_ndim = (4,)


class _InstanceNorm(_NormBase):
    """Instance normalization: each sample's channel by its own statistics. PyTorch's
    defaults differ from BatchNorm's: affine=False, track_running_stats=False. An input
    without the batch dimension (C, ...) is normalized as a batch of one."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        self._check_input_dim(input)
        if input.ndim == self.expected_ndim[0]:           # unbatched: (C, ...)
            return self.forward(input.unsqueeze(0)).squeeze(0)
        if input.shape[1] != self.num_features and self.affine:
            raise ValueError(f"{type(self).__name__}({self.num_features}): expected "
                             f"{self.num_features} channels, got input of shape {input.shape}")
        factor = self._factor()
        use_input_stats = self.training or not self.track_running_stats
        return N.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, use_input_stats, factor, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) (or (C, L)) inputs over L."""
    expected_ndim = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) (or (C, H, W)) inputs over H and W."""
    expected_ndim = (3, 4)


class GroupNorm(Module):
    """Group normalization, PyTorch's nn.GroupNorm(num_groups, num_channels, eps, affine):
    channels in num_groups groups, each normalized per sample; weight (ones) and bias
    (zeros) per channel when affine. The same in training and eval mode."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        _check_features(num_groups, "num_groups", "GroupNorm")
        _check_features(num_channels, "num_channels", "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        N._check_eps(eps, "GroupNorm")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, bool(affine)
        self.weight = Parameter(ones(num_channels, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device)) if affine else None

    def forward(self, input):
        return N.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """Root-mean-square normalization, PyTorch's nn.RMSNorm(normalized_shape, eps=None,
    elementwise_affine=True): x / sqrt(mean(x^2) + eps) * weight (ones at the start) over
    the last dimensions; eps=None is the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not shape or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape):
            raise ValueError(f"RMSNorm: normalized_shape must be a positive int or a tuple of "
                             f"them, got {normalized_shape!r}")
        if eps is not None:
            N._check_eps(eps, "RMSNorm")
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(ones(*shape, dtype=dtype, device=device)) if elementwise_affine else None

    def forward(self, input):
        return N.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs over N, D, H and W, per channel."""
    expected_ndim = (5,)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) (or (C, D, H, W)) inputs over D, H and W."""
    expected_ndim = (4, 5)


class SyncBatchNorm(_BatchNorm):
    """PyTorch's SyncBatchNorm in one process: the batch's statistics are all there are,
    so it is batch normalization of (N, C, ...) inputs (process_group is accepted and
    unused). ``convert_sync_batchnorm`` turns a model's BatchNorm layers into it, their
    parameters and buffers shared."""
    expected_ndim = tuple(range(2, 9))

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        if isinstance(module, _BatchNorm) and not isinstance(module, cls):
            converted = cls.__new__(cls)
            vars(converted).update(vars(module))
            converted.process_group = process_group
            return converted
        for name, child in list(vars(module).items()):
            if isinstance(child, Module):
                object.__setattr__(module, name, cls.convert_sync_batchnorm(child, process_group))
        for container in [c for c in vars(module).values() if isinstance(c, (list, dict))]:
            keys = range(len(container)) if isinstance(container, list) else list(container)
            for k in keys:
                if isinstance(container[k], Module):
                    container[k] = cls.convert_sync_batchnorm(container[k], process_group)
        return module
