"""torchvision.utils: images in a grid, saved as one picture."""
import numpy as np


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A (C, H', W') float array of the (B, C, H, W) images laid out ``nrow`` to a row,
    ``padding`` pixels of ``pad_value`` between them; ``normalize`` maps ``value_range`` (by
    default the images' minimum and maximum) to [0, 1]."""
    images = np.asarray(tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else tensor, dtype=np.float32)
    if images.ndim == 2:
        images = images[None, None]
    elif images.ndim == 3:
        images = images[None] if images.shape[0] in (1, 3) else images[:, None]
    if images.ndim != 4:
        raise ValueError(f"make_grid: expected images of shape (B, C, H, W), got {images.shape}")
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if normalize:
        low, high = value_range or (images.min(), images.max())
        images = np.clip((images - low) / max(high - low, 1e-5), 0, 1)
    b, c, h, w = images.shape
    columns = min(nrow, b)
    rows = -(-b // columns)
    grid = np.full((c, rows * (h + padding) + padding, columns * (w + padding) + padding), pad_value, np.float32)
    for k in range(b):
        y, x = divmod(k, columns)
        grid[:, padding + y * (h + padding):padding + y * (h + padding) + h,
             padding + x * (w + padding):padding + x * (w + padding) + w] = images[k]
    return grid


def save_image(tensor, fp, format=None, **kwargs):  # noqa: A002  (torchvision's name)
    """The grid of ``make_grid(tensor, **kwargs)`` saved as an 8-bit picture (PNG by the name)."""
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    Image.fromarray(pixels).save(fp, format=format)
