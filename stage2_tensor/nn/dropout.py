"""Channel dropout modules, PyTorch's nn.Dropout1d, nn.Dropout2d and nn.Dropout3d: in
training, whole channels zeroed with probability p and the rest scaled by 1 / (1 - p)
(stage2_tensor/channel_dropout.py says why); the identity after ``model.eval()``.
(nn.Dropout, element by element, is in layers.py.)"""
from .. import channel_dropout
from .modules import Module


class _DropoutNd(Module):
    fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        name = type(self).__name__
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p!r}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        return self.fn(x, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes channels of (N, C, L) or (C, L) inputs."""
    fn = staticmethod(channel_dropout.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes channels of (N, C, H, W) inputs (a 3-D input is read as (N, C, L), with
    PyTorch's warning)."""
    fn = staticmethod(channel_dropout.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    fn = staticmethod(channel_dropout.dropout3d)
