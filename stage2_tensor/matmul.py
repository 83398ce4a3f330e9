"""Matrix multiplication and its gradient (chapter 4, "Matmul backward").

``matmul(a, b, transpose_a, transpose_b)`` computes op(a) @ op(b), where op transposes the
last two dimensions when its flag is set. The transpose is virtual: the kernel reads the
same buffer with the two strides swapped. Leading (batch) dimensions broadcast.

With G = dL/dC for C = op(A) @ op(B), the thesis derives four cases, each again a matmul
with transpose flags, so no transposed copy is ever made:

    op(A), op(B)   dL/dA                dL/dB
    A,   B         G @ B^T              A^T @ G
    A^T, B         B @ G^T              A @ G
    A,   B^T       G @ B                G^T @ A
    A^T, B^T       B^T @ G^T            G^T @ A^T

A batch dimension that was broadcast gets a gradient with the full batch shape; the
backward pass sums it back like any other broadcast.
"""
from .broadcast import broadcast_shapes
from .gradient_function import GradientFunction, two_devices
from .tensor import Tensor


def _t(x):
    """x with its last two dimensions swapped: a view, no copy."""
    shape, strides = list(x.shape), list(x.strides)
    shape[-1], shape[-2] = shape[-2], shape[-1]
    strides[-1], strides[-2] = strides[-2], strides[-1]
    return x.view_of(tuple(shape), tuple(strides), x.offset)




class MatMul(GradientFunction):
    def forward(self, a, b, transpose_a, transpose_b):
        self.ta, self.tb = transpose_a, transpose_b
        self._saved = ((a, a.storage.version), (b, b.storage.version))    # save_for_backward(a, b)
        oa = _t(a) if transpose_a else a
        ob = _t(b) if transpose_b else b
        if oa.shape[-1] != ob.shape[-2]:
            flags = f" (transpose_a={transpose_a}, transpose_b={transpose_b})" if transpose_a or transpose_b else ""
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape}{flags} do not fit: "
                             f"{oa.shape[-1]} columns against {ob.shape[-2]} rows")
        if a.dtype is not b.dtype:
            raise TypeError(f"matmul: both operands need one dtype, got {a.dtype} and {b.dtype}")
        if len(oa.shape) == len(ob.shape) == 2:       # two matrices: no batch to broadcast
            return a.launch("matmul", oa.as_view(), ob.as_view(), a.dtype,
                            shape=(oa.shape[0], ob.shape[1]), dtype=a.dtype)
        batch = broadcast_shapes(oa.shape[:-2], ob.shape[:-2])
        av, bv = oa.broadcast_view(batch + oa.shape[-2:]), ob.broadcast_view(batch + ob.shape[-2:])
        shape = batch + (oa.shape[-2], ob.shape[-1])
        return a.launch("matmul", av, bv, a.dtype, shape=shape, dtype=a.dtype)

    def backward(self, g):
        a, b = self.saved_tensors
        da = db = None
        if (self.ta, self.tb) == (False, False):
            da = matmul(g, b, False, True) if self.needs_input_grad[0] else None
            db = matmul(a, g, True, False) if self.needs_input_grad[1] else None
        elif (self.ta, self.tb) == (True, False):
            da = matmul(b, g, False, True) if self.needs_input_grad[0] else None
            db = matmul(a, g, False, False) if self.needs_input_grad[1] else None
        elif (self.ta, self.tb) == (False, True):
            da = matmul(g, b, False, False) if self.needs_input_grad[0] else None
            db = matmul(g, a, True, False) if self.needs_input_grad[1] else None
        else:
            da = matmul(b, g, True, True) if self.needs_input_grad[0] else None
            db = matmul(g, a, True, True) if self.needs_input_grad[1] else None
        return da, db


def matmul(a, b, transpose_a=False, transpose_b=False):
    """PyTorch's matmul for 1-D to N-D operands, plus the two transpose flags. A 1-D first
    operand is a row vector, a 1-D second one a column; their added dimension is removed."""
    if not a.shape or not b.shape:
        raise ValueError(f"matmul: both operands need at least one dimension, got shapes "
                         f"{a.shape} and {b.shape}")
    vec_a, vec_b = len(a.shape) == 1, len(b.shape) == 1
    if vec_a:
        a, transpose_a = a.unsqueeze(0), False
    if vec_b:
        b, transpose_b = b.unsqueeze(-1), False
    # MatMul.apply, less its walk over the arguments: the two tensors are known
    if a.storage.device != b.storage.device:
        raise two_devices("MatMul", a, b)
    fn = MatMul()
    out = fn.link(fn.forward(a, b, transpose_a, transpose_b), (a, b))
    if vec_a:
        out = out.squeeze(-2)
    if vec_b:
        out = out.squeeze(-1)
    return out


def bmm(a, b):
    """Batched matrix product of (B, n, m) and (B, m, p) tensors, no broadcasting: PyTorch's
    bmm, a matmul that checks the shapes first."""
    for name, t in (("batch1", a), ("batch2", b)):
        if not isinstance(t, Tensor) or t.ndim != 3:
            got = f"shape {t.shape}" if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"bmm: {name} must be a 3-D tensor, got {got}")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"bmm: shapes {a.shape} and {b.shape} do not fit: expected (B, n, m) "
                         "and (B, m, p)")
    return matmul(a, b)


def mm(a, b):
    """The product of two matrices, PyTorch's mm: a matmul that checks both are 2-D (one of
    them may be sparse: sparse.mm)."""
    if getattr(a, "is_sparse", False) or getattr(b, "is_sparse", False):
        from . import sparse
        return sparse.mm(a, b)
    for name, t in (("input", a), ("mat2", b)):
        if not isinstance(t, Tensor) or t.ndim != 2:
            got = f"shape {t.shape}" if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"mm: {name} must be a matrix (2-D), got {got}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: shapes {a.shape} and {b.shape} cannot be multiplied ({a.shape[1]} != {b.shape[0]})")
    return matmul(a, b)


def outer(a, b):
    """The outer product of two 1-D tensors: out[i, j] = a[i] * b[j] (a column times a row,
    by broadcasting)."""
    for name, t in (("input", a), ("vec2", b)):
        if not isinstance(t, Tensor) or t.ndim != 1:
            got = f"shape {t.shape}" if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"outer: {name} must be a 1-D tensor, got {got}")
    return a.unsqueeze(-1) * b
