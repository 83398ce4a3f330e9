"""Products a ported program names, each a matmul or a broadcast multiply (matmul.py), so
each runs on the device's matrix kernel and autograd differentiates it with no code here:

    dot, vdot, inner, mv, ger        vectors and a matrix times a vector
    addmm, addmv, addbmm, baddbmm, addr   beta * input + alpha * (a product), PyTorch's BLAS names
    kron, trace, tensordot, cross

As in PyTorch, ``beta=0`` ignores ``input`` (a NaN in it does not reach the result) but its
shape must still broadcast to the product's. Errors name PyTorch's: a RuntimeError for
shapes that do not fit.
"""
from .broadcast import broadcast_shapes
from .matmul import matmul
from .tensor import Tensor


def _tensor(op, name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def _same_dtype(op, a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected both arguments to have the same dtype, but found {a.dtype} and {b.dtype}")


def _vectors(op, a, b):
    _tensor(op, "input", a)
    _tensor(op, "tensor", b)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively")
    _same_dtype(op, a, b)


def dot(input, tensor):  # noqa: A002  (PyTorch's argument names)
    """The inner product of two 1-D tensors of one length, a 0-d tensor."""
    _vectors("dot", input, tensor)
    return matmul(input, tensor)


def vdot(input, other):  # noqa: A002
    """dot with the first vector conjugated: tracegrad's tensors are real, so dot."""
    _vectors("vdot", input, other)
    return matmul(input, other)


def inner(input, other):  # noqa: A002
    """The sum of products over the last dimension of each: shape input.shape[:-1] +
    other.shape[:-1]; a 0-d operand multiplies the other."""
    _tensor("inner", "input", input)
    _tensor("inner", "other", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def mv(input, vec):  # noqa: A002
    """A matrix (n, m) times a vector (m,): a vector (n,)."""
    _tensor("mv", "input", input)
    _tensor("mv", "vec", vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    _same_dtype("mv", input, vec)
    return matmul(input, vec)


def ger(input, vec2):  # noqa: A002
    """The outer product of two vectors (PyTorch's older name for outer)."""
    for name, t in (("self", input), ("vec2", vec2)):
        _tensor("ger", name, t)
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.unsqueeze(-1) * vec2


def _scaled_sum(op, input, product, beta, alpha):
    """beta * input + alpha * product, of the product's shape; beta == 0 leaves input out."""
    _tensor(op, "input", input)
    try:
        fits = broadcast_shapes(input.shape, product.shape) == product.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{op}: the input of shape {tuple(input.shape)} must broadcast to the product's shape "
                           f"{tuple(product.shape)}")
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


def _matrices(op, names, *ts):
    for name, t, ndim in zip(names, ts, (2, 2)):
        _tensor(op, name, t)
        if t.ndim != ndim:
            raise RuntimeError(f"{op}: {name} must be a matrix, got {t.ndim}-D tensor")


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), mat1 (n, m) and mat2 (m, p)."""
    _matrices("addmm", ("mat1", "mat2"), mat1, mat2)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype("addmm", mat1, mat2)
    return _scaled_sum("addmm", input, matmul(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (mat @ vec)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2)."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        _tensor("addr", name, t)
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    return _scaled_sum("addr", input, vec1.unsqueeze(-1) * vec2, beta, alpha)


def _batches(op, batch1, batch2):
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        _tensor(op, name, t)
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    _same_dtype(op, batch1, batch2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (batch1 @ batch2), batch by batch: (b, n, m) @ (b, m, p)."""
    _batches("baddbmm", batch1, batch2)
    return _scaled_sum("baddbmm", input, matmul(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * the sum over b of batch1[b] @ batch2[b]: one product of
    (n, b m) and (b m, p), the batches laid side by side."""
    _batches("addbmm", batch1, batch2)
    b, n, m = batch1.shape
    p = batch2.shape[2]
    product = matmul(batch1.permute(1, 0, 2).reshape(n, b * m), batch2.reshape(b * m, p))
    return _scaled_sum("addbmm", input, product, beta, alpha)


def kron(input, other):  # noqa: A002
    """The Kronecker product: out[i * b.shape + j] = a[i] * b[j] along every dimension (the
    shorter shape padded with leading 1s), one broadcast multiply of interleaved views."""
    _tensor("kron", "input", input)
    _tensor("kron", "other", other)
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = input.reshape(*[s for d in sa for s in (d, 1)])
    b = other.reshape(*[s for d in sb for s in (1, d)])
    return (a * b).reshape(*[x * y for x, y in zip(sa, sb)])


def diagonal_of(x):
    """The main diagonal of the last two dimensions, (..., min(m, n)): element (i, i) is i (n + 1)
    into each matrix read as one row, so a reshape and a step, both differentiable."""
    m, n = x.shape[-2:]
    k = min(m, n)
    return x.reshape(*x.shape[:-2], m * n)[..., ::n + 1][..., :k]


def trace(input):  # noqa: A002
    """The sum of a matrix's main diagonal (integers sum to int64, as sum does)."""
    _tensor("trace", "input", input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal_of(input).sum()


def _dim(op, d, ndim):
    if not isinstance(d, int) or isinstance(d, bool):
        raise TypeError(f"{op}: dims must be ints, got {d!r}")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def tensordot(a, b, dims=2, out=None):
    """The sum of products over dimensions of a and b paired: ``dims`` an int k (a's last k
    with b's first k) or a pair of lists ([a's dims], [b's dims]). The rest of a's dimensions,
    then the rest of b's, make the result: one matmul of a (free, contracted) by b
    (contracted, free)."""
    if out is not None:
        raise TypeError("tensordot: out= is not supported")
    _tensor("tensordot", "a", a)
    _tensor("tensordot", "b", b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError(f"both dimension lists should have same length, got {len(da)} and {len(db)}")
        da = [_dim("tensordot", d, a.ndim) for d in da]
        db = [_dim("tensordot", d, b.ndim) for d in db]
    else:
        raise TypeError(f"tensordot expects dims to be an int or a pair of lists of dims, got {dims!r}")
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and "
                               f"second has size {b.shape[y]} in dim {y}")
    _same_dtype("tensordot", a, b)
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    left = a.permute(*fa, *da).reshape(-1, k)
    right = b.permute(*db, *fb).reshape(k, -1)
    return matmul(left, right).reshape(*[a.shape[d] for d in fa], *[b.shape[d] for d in fb])


def cross(input, other, dim=None):  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (None: the first dimension of size 3, as
    PyTorch's torch.cross; linalg.cross defaults to -1), the two broadcast together:
    a x b = a.roll(-1) b.roll(-2) - a.roll(-2) b.roll(-1) along that dimension."""
    _tensor("cross", "input", input)
    _tensor("cross", "other", other)
    try:
        shape = broadcast_shapes(input.shape, other.shape)
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    if dim is None:
        dim = next((d for d, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input, shapes {tuple(input.shape)} and {tuple(other.shape)}")
    a, b = input.broadcast_to(shape), other.broadcast_to(shape)
    d = _dim("cross", dim, max(len(shape), 1))
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    _same_dtype("cross", a, b)
    return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)
