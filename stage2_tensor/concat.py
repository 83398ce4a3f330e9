"""Joining and splitting tensors: ``cat`` copies its inputs side by side along a dimension;
``split`` returns views of consecutive slices. Their gradients are each other: the gradient
of cat is the upstream gradient split back into pieces."""
from .factories import zeros
from .function import GradientFunction
from .strides import normalize_dim


def _slice_along(dim, start, stop):
    return (slice(None),) * dim + (slice(start, stop),)


class Cat(GradientFunction):
    def forward(self, dim, *tensors):
        first = tensors[0]
        for t in tensors[1:]:
            if t.ndim != first.ndim or any(a != b for d, (a, b) in enumerate(zip(t.shape, first.shape)) if d != dim):
                raise ValueError(f"cat: shapes {first.shape} and {t.shape} differ outside dimension {dim}")
            if t.dtype is not first.dtype or t.device != first.device:
                raise TypeError(f"cat: all tensors need one dtype and device, got {first.dtype} on "
                                f"{first.device!r} and {t.dtype} on {t.device!r}")
        sizes = [t.shape[dim] for t in tensors]
        shape = first.shape[:dim] + (sum(sizes),) + first.shape[dim + 1:]
        out = zeros(*shape, dtype=first.dtype, device=first.device)
        start = 0
        for t, size in zip(tensors, sizes):
            out[_slice_along(dim, start, start + size)] = t.detach()
            start += size
        self.dim, self.sizes = dim, sizes
        return out

    def backward(self, grad):
        return tuple(split(grad, self.sizes, self.dim))


def cat(tensors, dim=0):
    """Concatenate along an existing dimension (negative dims count from the end)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat: expected a non-empty list of tensors")
    return Cat.apply(normalize_dim(dim, tensors[0].ndim), *tensors)


def split(x, split_size_or_sections, dim=0):
    """Views of consecutive slices along `dim`: pieces of one size (the last may be
    smaller), or of the listed sizes."""
    dim = normalize_dim(dim, x.ndim)
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        sizes = [min(size, n - s) for s in range(0, n, size)]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise ValueError(f"split: sections {sizes} add up to {sum(sizes)}, but dimension "
                             f"{dim} has size {n}")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(x[_slice_along(dim, start, start + size)])
        start += size
    return tuple(pieces)
