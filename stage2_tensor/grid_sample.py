"""PyTorch's F.grid_sample for 4-d inputs: the input (N, C, H, W) read at the points of a
grid (N, Ho, Wo, 2) of normalized (x, y) coordinates in [-1, 1] (affine_grid's output, a
spatial transformer's), "bilinear" (the four neighbours weighted by their distances) or
"nearest" (the nearest pixel, halves to even).

A coordinate is unnormalized to pixels (-1 and 1 at the corner pixels' centres with
``align_corners``, at their outer edges without), then placed by ``padding_mode``: "zeros"
reads 0 outside the input, "border" clamps into it, "reflection" reflects at the borders
(the pixel centres with align_corners, the edges without) and then clamps. The reads are
gathers from the flattened planes, so the gradient reaches the input (a scatter-add) and,
through the weights, the grid, as PyTorch's.
"""
from . import dtypes
from .elementwise import where
from .tensor import Tensor


def _unnormalize(coord, size, align_corners):
    return (coord + 1) * ((size - 1) / 2) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """coord reflected into [twice_low / 2, twice_high / 2], repeatedly."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    flips = (coord / span).floor()
    extra = coord - flips * span
    even = (flips - (flips / 2).floor() * 2) == 0
    return where(even, extra + low, span - extra + low)


def _place(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0, size - 1)
    return coord


def _read(planes, ix, iy, W, H):
    """planes (N, C, H * W) at integer positions (N, L) as floats; 0 outside the input (a
    nan position too)."""
    ix, iy = ix.masked_fill(ix != ix, -1.0), iy.masked_fill(iy != iy, -1.0)
    inside = (ix >= 0) * (ix <= W - 1) * (iy >= 0) * (iy <= H - 1)
    flat = (iy.clamp(0, H - 1) * W + ix.clamp(0, W - 1)).to(dtype=dtypes.int64)
    n, c, _ = planes.shape
    values = planes.gather(2, flat.unsqueeze(1).expand(n, c, flat.shape[1]))
    return values * inside.to(dtype=planes.dtype).unsqueeze(1)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError("grid_sample: input and grid must be Tensors")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported here; use 'bilinear' or 'nearest'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = bool(align_corners)
    if input.ndim != 4:
        raise NotImplementedError(f"grid_sample: only 4-d inputs (N, C, H, W) are supported here, got "
                                  f"{input.ndim}-d")
    if grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected grid of shape ({input.shape[0]}, H_out, W_out, 2) for an "
                           f"input of shape {input.shape}, but got grid of shape {grid.shape}")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1:3]
    grid = grid.to(dtype=input.dtype)
    x = _place(_unnormalize(grid[..., 0].reshape(n, -1), w, align_corners), w, padding_mode, align_corners)
    y = _place(_unnormalize(grid[..., 1].reshape(n, -1), h, align_corners), h, padding_mode, align_corners)
    planes = input.reshape(n, c, h * w)
    if mode == "nearest":
        out = _read(planes, x.round().detach(), y.round().detach(), w, h)
        return out.reshape(n, c, ho, wo)
    x0, y0 = x.floor().detach(), y.floor().detach()
    ax, ay = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    out = (_read(planes, x0, y0, w, h) * (1 - ax) * (1 - ay) + _read(planes, x0 + 1, y0, w, h) * ax * (1 - ay)
           + _read(planes, x0, y0 + 1, w, h) * (1 - ax) * ay + _read(planes, x0 + 1, y0 + 1, w, h) * ax * ay)
    return out.reshape(n, c, ho, wo)
