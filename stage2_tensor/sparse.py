"""Sparse COO tensors, as PyTorch's ``torch.sparse_coo_tensor``: a matrix that stores only its
non-zero entries, as coordinates (``indices``, one column per entry) and ``values``.

A graph's adjacency matrix is the use a learner meets first (a graph convolution multiplies
it with the node features): V nodes but only E edges, so the product should cost E times the
feature width, not V squared. ``mm(sparse, dense)`` is that product, written with the dense
operations every device has: each entry (i, j, v) reads row j of the dense matrix
(``index_select``), scales it by v and adds it into row i of the result (``scatter_add``).
Autograd differentiates it through those operations, with respect to the dense matrix and
to the values, with no code of its own; duplicate coordinates simply add up, as PyTorch's
uncoalesced tensors do.

Only what the matrix product needs is here: building (``sparse_coo_tensor``,
``Tensor.to_sparse``), ``to_dense``, ``coalesce``, moving (``to``), the transpose, ``mm``
with a dense matrix on either side and adding a dense tensor (which gives a dense one).
"""
from . import dtypes
from .concat import cat, stack
from .factories import as_tensor, ones, zeros
from .strides import make_strides, numel as _numel
from .tensor import Tensor


class SparseTensor:
    """A sparse COO tensor of ``shape``: ``indices`` an int64 tensor (ndim, nnz), ``values``
    a tensor (nnz,), on one device."""
    is_sparse = True
    layout = "sparse_coo"

    def __init__(self, indices, values, shape):
        self._indices, self._values, self.shape = indices, values, tuple(shape)

    # ---- what a tensor tells -----------------------------------------------------------------
    dtype = property(lambda self: self._values.dtype)
    device = property(lambda self: self._values.device)
    ndim = property(lambda self: len(self.shape))
    requires_grad = property(lambda self: self._values.requires_grad)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.ndim

    def indices(self):
        return self._indices

    def values(self):
        return self._values

    def _nnz(self):
        return self._values.shape[0]

    def __repr__(self):
        return (f"tensor(indices={self._indices.tolist()},\n       values={self._values.tolist()},\n"
                f"       size={self.shape}, nnz={self._nnz()}, layout=torch.sparse_coo)")

    # ---- conversions -------------------------------------------------------------------------
    def to_sparse(self):
        return self

    def to_dense(self):
        """The dense tensor: each value added at its coordinates (duplicates sum)."""
        flat = _flat_positions(self._indices, self.shape)
        out = zeros(_numel(self.shape), dtype=self.dtype, device=self.device)
        return out.scatter_add(0, flat, self._values).reshape(*self.shape)

    def coalesce(self):
        """One entry per coordinate, in row-major order, duplicates summed (PyTorch's): the
        positions sorted, each run of equal ones a group whose values add up."""
        flat = _flat_positions(self._indices, self.shape)
        order = flat.argsort(stable=True)
        flat = flat[order]
        starts = flat[1:] != flat[:-1]
        first = cat([ones(min(1, flat.shape[0]), dtype=dtypes.bool_, device=self.device), starts])
        group = first.long().cumsum(0) - 1
        values = zeros(int(first.sum().item()), dtype=self.dtype, device=self.device)
        values = values.scatter_add(0, group, self._values[order])
        return SparseTensor(_coordinates(flat[first], self.shape), values, self.shape)

    def to(self, *args, **kwargs):
        values = self._values.to(*args, **kwargs)
        return SparseTensor(self._indices.to(values.device), values, self.shape)

    def t(self):
        if self.ndim != 2:
            raise ValueError(f"t(): expects a sparse matrix (2-D), got shape {self.shape}")
        return SparseTensor(self._indices.flip(0), self._values, self.shape[::-1])

    def detach(self):
        return SparseTensor(self._indices, self._values.detach(), self.shape)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    # ---- arithmetic --------------------------------------------------------------------------
    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        return mm(other, self)

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            return SparseTensor(cat([self._indices, other._indices], dim=1),
                                cat([self._values, other._values]), _same_shape(self, other))
        return self.to_dense() + other

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return SparseTensor(self._indices, self._values * other, self.shape)
        return NotImplemented

    __rmul__ = __mul__


def _same_shape(a, b):
    if a.shape != b.shape:
        raise RuntimeError(f"add: sparse tensors of shapes {a.shape} and {b.shape} cannot be added")
    return a.shape


def _flat_positions(indices, shape):
    """Each entry's row-major position in a dense tensor of ``shape``."""
    flat = None
    for d, stride in enumerate(make_strides(shape)):
        term = indices[d] * stride
        flat = term if flat is None else flat + term
    return flat


def _coordinates(flat, shape):
    """The (ndim, n) coordinates of row-major positions: ``_flat_positions`` undone."""
    rows = []
    for stride, size in zip(make_strides(shape), shape):
        rows.append((flat // stride) % size)
    return stack(rows)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False):
    """A sparse COO tensor with ``values`` at ``indices`` (ndim, nnz); ``size`` inferred as
    one past each dimension's largest index when not given. Coordinates outside ``size`` are
    refused, as PyTorch's."""
    indices = as_tensor(indices, dtype=dtypes.int64, device=device)
    values = as_tensor(values, dtype=dtype, device=device or indices.device)
    if dtype is not None:
        values = values.to(dtype=dtype)
    if indices.dtype.is_floating_point or indices.dtype is dtypes.bool_:
        raise TypeError(f"sparse_coo_tensor: indices must be an integer tensor, got {indices.dtype}")
    if indices.ndim != 2:
        raise ValueError(f"sparse_coo_tensor: indices must be 2-D (ndim, nnz), got shape {indices.shape}")
    if values.ndim != 1 or values.shape[0] != indices.shape[1]:
        raise ValueError(f"sparse_coo_tensor: values must be 1-D with one value per column of indices "
                         f"({indices.shape[1]}), got shape {values.shape}")
    nnz = indices.shape[1]
    if nnz and int(indices.min().item()) < 0:
        raise RuntimeError(f"sparse_coo_tensor: found a negative index {int(indices.min().item())}")
    largest = indices.amax(dim=1).tolist() if nnz else [-1] * indices.shape[0]
    if size is None:
        size = tuple(m + 1 for m in largest)
    size = tuple(size)
    if len(size) != indices.shape[0]:
        raise ValueError(f"sparse_coo_tensor: size {size} has {len(size)} dimensions, indices "
                         f"{indices.shape[0]} rows")
    for d, (m, s) in enumerate(zip(largest, size)):
        if m >= s:
            raise RuntimeError(f"sparse_coo_tensor: size is inconsistent with indices: for dim {d}, "
                               f"size is {s} but found index {m}")
    if requires_grad:
        values.requires_grad_(True)
    return SparseTensor(indices, values, size)


def to_sparse(dense):
    """The non-zero entries of a dense tensor as a sparse COO tensor (row-major order)."""
    mask = dense != 0
    return SparseTensor(mask.nonzero().t().contiguous(), dense[mask], dense.shape)


def mm(a, b):
    """The matrix product with a sparse COO matrix on either side (the other dense): cost
    proportional to the entries times the dense matrix's width."""
    if isinstance(b, SparseTensor) and not isinstance(a, SparseTensor):
        return mm(b.t(), a.t()).t()
    if not isinstance(a, SparseTensor):
        raise TypeError("sparse.mm: expected a sparse COO matrix as one operand")
    if isinstance(b, SparseTensor):
        b = b.to_dense()
    if a.ndim != 2 or not isinstance(b, Tensor) or b.ndim != 2:
        got = b.shape if isinstance(b, Tensor) else type(b).__name__
        raise ValueError(f"sparse.mm: expected a sparse matrix and a dense matrix, got shapes {a.shape} and {got}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"sparse.mm: shapes {a.shape} and {b.shape} cannot be multiplied "
                         f"({a.shape[1]} != {b.shape[0]})")
    if a.device != b.device:
        raise RuntimeError(f"sparse.mm: the sparse matrix is on {a.device!r}, the dense one on {b.device!r}")
    rows, cols = a._indices[0], a._indices[1]
    dtype = dtypes.promote(a.dtype, b.dtype)
    contributions = b.to(dtype=dtype).index_select(0, cols) * a._values.to(dtype=dtype).unsqueeze(1)
    out = zeros(a.shape[0], b.shape[1], dtype=dtype, device=b.device)
    return out.scatter_add(0, rows.unsqueeze(1).expand(-1, b.shape[1]), contributions)
