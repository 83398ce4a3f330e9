"""Reading a digit from an image file the way MNIST was made, and classifying it.

MNIST's digits are white on black, 28x28, each scaled to fit a 20x20 box and placed so
that its centre of mass is the image centre. ``to_mnist`` does the same to any picture:
grey levels, inverted when the background is light (a digit drawn on paper), cropped to
the ink, resized with area averaging, and centred by mass. An image that is already
28x28 is only converted to grey (and inverted if light), like the test set's own images.
"""
import numpy as np

import stage2_tensor as tg

from .data import as_inputs

SIZE, BOX = 28, 20


def read_image(path):
    """Grey levels in [0, 1], shape (H, W), from a PNG (or any file matplotlib reads)."""
    import matplotlib.image as mpimg
    try:
        image = np.asarray(mpimg.imread(path), dtype=np.float64)
    except (OSError, ValueError, SyntaxError) as e:
        raise ValueError(f"{path}: cannot read an image from it ({e}); expected a PNG") from e
    if image.dtype.kind in "ui" or image.max() > 1.0:           # 8-bit values from a JPEG
        image = image / 255.0
    if image.ndim == 3:
        alpha = image[..., 3:4] if image.shape[2] == 4 else 1.0
        rgb = image[..., :3] * alpha + (1 - alpha)              # transparent = white paper
        image = rgb @ np.array([0.299, 0.587, 0.114])           # luma
    if image.ndim != 2 or min(image.shape) == 0:
        raise ValueError(f"{path}: expected a grey or colour image, got an array of shape {image.shape}")
    return image


def area_resize(image, height, width):
    """Resize by averaging the source area under each output pixel (exact for any ratio):
    out = Rows @ image @ Cols^T, where Rows[i, j] is how much of source row j falls in
    output row i."""
    return _area_weights(image.shape[0], height) @ image @ _area_weights(image.shape[1], width).T


def _area_weights(n_in, n_out):
    edges = np.linspace(0, n_in, n_out + 1)                     # output pixel borders, in source units
    lo, hi = edges[:-1, None], edges[1:, None]
    j = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0, None)
    return overlap / overlap.sum(1, keepdims=True)


def to_mnist(image):
    """A grey image (H, W) in [0, 1], any size, as an MNIST-style 28x28 digit."""
    if np.median(image) > 0.5:                                  # light background: invert
        image = 1.0 - image
    image = np.clip(image - np.median(image), 0, None)          # background to 0
    if image.max() > 0:
        image = image / image.max()
    if image.shape == (SIZE, SIZE):
        return image
    ink = np.argwhere(image > 0.1)
    if len(ink) == 0:
        return np.zeros((SIZE, SIZE))
    (top, left), (bottom, right) = ink.min(0), ink.max(0) + 1
    digit = image[top:bottom, left:right]
    scale = BOX / max(digit.shape)
    h, w = max(1, round(digit.shape[0] * scale)), max(1, round(digit.shape[1] * scale))
    digit = area_resize(digit, h, w)
    rows, cols = np.indices(digit.shape)
    mass = digit.sum()
    cy, cx = (rows * digit).sum() / mass, (cols * digit).sum() / mass
    top = int(np.clip(round(SIZE / 2 - cy - 0.5), 0, SIZE - h))
    left = int(np.clip(round(SIZE / 2 - cx - 0.5), 0, SIZE - w))
    out = np.zeros((SIZE, SIZE))
    out[top:top + h, left:left + w] = digit
    return out


def predict(model, image):
    """Class probabilities (10,) for a 28x28 image with values in [0, 1]."""
    device = model.fc1.weight.device
    with tg.no_grad():
        x = tg.from_numpy(as_inputs(image[None] * 255.0), device=device)
        return model(x).numpy()[0]
