"""torchvision.transforms for tensors of images: Compose, ToTensor, Normalize, Lambda."""
import numpy as np

import stage2_tensor as tg


class Compose:
    """The transforms one after another."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    """A PIL image or a (H, W[, C]) numpy array to a float32 tensor (C, H, W), 8-bit values
    scaled to [0, 1] as torchvision's."""

    def __call__(self, picture):
        array = np.asarray(picture)
        if array.ndim not in (2, 3):
            raise ValueError(f"ToTensor: expected an image of 2 or 3 dimensions, got shape {array.shape}")
        if array.ndim == 2:
            array = array[:, :, None]
        scale = 255.0 if array.dtype == np.uint8 else 1.0
        return tg.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1), dtype=np.float32) / scale)


class Normalize:
    """(x - mean) / std per channel of a (..., C, H, W) tensor."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = [float(m) for m in mean], [float(s) for s in std]
        if any(s == 0 for s in self.std):
            raise ValueError(f"Normalize: std evaluated to zero in {self.std}; division by zero")

    def __call__(self, x):
        shape = (-1, 1, 1)
        mean = tg.tensor(self.mean, dtype=x.dtype, device=x.device).reshape(shape)
        std = tg.tensor(self.std, dtype=x.dtype, device=x.device).reshape(shape)
        return (x - mean) / std


class Lambda:
    """A function of the caller's as a transform."""

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"Lambda: expected a callable, got {type(fn).__name__}")
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)
