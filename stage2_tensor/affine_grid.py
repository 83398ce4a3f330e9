"""PyTorch's F.affine_grid: the sampling grid of an affine transform, (N, H, W, 2) for 2-d
(theta (N, 2, 3)) or (N, D, H, W, 3) for 3-d (theta (N, 3, 4)): each output position's
normalized coordinates (x, y[, z], 1), x varying fastest in [-1, 1], times theta^T. With
``align_corners`` the coordinates reach -1 and 1 at the outer pixels' centres; without, at
their outer edges (each scaled by (size - 1) / size). One matrix product.
"""
import warnings

from .concat import stack
from .factories import linspace, ones
from .tensor import Tensor


def _steps(n, align_corners, like):
    if n <= 1:
        return linspace(0.0, 0.0, 1, dtype=like.dtype, device=like.device)
    steps = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    if not isinstance(theta, Tensor) or not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{getattr(theta, 'dtype', type(theta).__name__)}")
    size = tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ValueError(f"affine_grid: theta holds {theta.shape[0]} matrices for a batch of {size[0]}")
    # coordinates in the order x (last extent), y, z, each broadcast over the grid
    axes = [_steps(n, align_corners, theta) for n in reversed(spatial)]
    k = len(spatial)
    coords = []
    for d, steps in enumerate(axes):
        shape = [1] * k
        shape[k - 1 - d] = spatial[k - 1 - d]
        coords.append(steps.reshape(*shape).expand(*spatial))
    coords.append(ones(*spatial, dtype=theta.dtype, device=theta.device))
    base = stack(coords, -1).reshape(1, -1, k + 1)                      # (1, positions, k + 1)
    return (base @ theta.transpose(1, 2)).reshape(size[0], *spatial, k)
