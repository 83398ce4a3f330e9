"""Element-wise operations and their gradients (chapter 4, "Tensor-level autograd").

Each backward is the tensor form of upstream x local: the local gradient is computed
element by element with tensor operations, and multiplied by the upstream gradient. An
input that broadcasting stretched gets a gradient of the output's shape; the backward pass
sums it back to the input's shape (``Tensor.sum_to``), so no operation here has to.
"""
from . import backend, dtypes, ops
from .broadcast import broadcast_shapes
from .factories import as_tensor, zeros_like
from .gradient_function import GradientFunction
from .tensor import Tensor

# ops defined on floating-point values: an integer input is converted first (ops.py)
FLOAT_ONLY = frozenset(name for name, p in ops.BY_NAME.items() if p.float_only)
# the differentiable ops' gradients, and where what each saves sits in (*inputs, output):
# looked up once here rather than on every operation
GRADIENTS = {name: p.gradient for name, p in ops.BY_NAME.items() if p.gradient}
ROLES = {1: ("x", "out"), 2: ("a", "b", "out")}          # by arity: (*inputs, output)
SAVED = {name: tuple(ROLES[ops.BY_NAME[name].arity].index(role) for role in gradient.saves)
         for name, gradient in GRADIENTS.items()}


class Primitive(GradientFunction):
    """A differentiable primitive op (ops.py): its kernel forward, its declared gradient
    backward. ``op`` is the op's name, set by Unary and Binary's forward."""

    @property
    def name(self):
        return "".join(part.capitalize() for part in self.op.split("_"))    # GeluTanh

    def save(self, values):
        """Save what the declared gradient reads (``Gradient.saves``) of the inputs and the
        output, ``values``."""
        saved = ()
        for i in SAVED[self.op]:        # save_for_backward's (tensor, version) pairs, made in a
            t = values[i]               # plain loop: cheaper than its comprehension for the
            saved += ((t, t.storage.version),)      # one or two tensors a primitive saves
        self._saved = saved

    def backward(self, grad):
        saved = self.saved_tensors
        return [rule(grad, *saved) if needed else None
                for rule, needed in zip(GRADIENTS[self.op].rules, self.needs_input_grad)]


class Unary(Primitive):
    """One element-wise function of one tensor."""

    def forward(self, x, op):
        self.op = op
        dtype = x.dtype
        if op in FLOAT_ONLY and not dtype.is_floating_point:
            dtype = dtypes.float32          # exp of an integer tensor is a float32 tensor
        out = x.launch("unary", op, x.as_view(), dtype, shape=x.shape, dtype=dtype)
        if SAVED[op]:
            self.save((x, out))
        return out


def unary(op, x):
    if op in GRADIENTS:
        fn = Unary()                        # Unary.apply, less its walk over the arguments
        return fn.link(fn.forward(x, op), (x,))
    # Not differentiable (masks and signs used inside backward passes): a plain kernel call.
    return x.launch("unary", op, x.as_view(), x.dtype, shape=x.shape, dtype=x.dtype)


_CONSTANTS = {}


def constant(x, dtype, device):
    """A Python number (bool, int or float) in arithmetic as a 0-d tensor, made once per
    value, dtype and device: the 2 of ``x ** 2`` or the batch size of ``loss / B`` comes back
    every training step.
    Keyed by repr, so that -0.0 and 0.0 (equal, with one hash) stay two constants. Only
    operations see these tensors (as inputs they record), and none writes to an input."""
    key = (repr(x), dtype, device)
    t = _CONSTANTS.get(key)
    if t is None:
        if len(_CONSTANTS) >= 4096:                 # a loop over ever new numbers: start over
            _CONSTANTS.clear()
        t = _CONSTANTS[key] = as_tensor(x, dtype=dtype, device=device)
    return t


_HOST = ("python", "cpu")


def _scalar_to_device(a, b):
    """As PyTorch, a 0-d tensor in the host's memory combines with a tensor on any device,
    as a number would (``loss < best_loss`` where best_loss came from a checkpoint): it is
    copied there (differentiably). Any other pair on two devices is an error."""
    if b.ndim == 0 and b.device in _HOST:
        return a, b.to(a.device)
    if a.ndim == 0 and a.device in _HOST:
        return a.to(b.device), b
    raise RuntimeError(f"operands are on different devices: {a.device!r} and {b.device!r}; "
                       "move one with .to(device)")


def operands(a, b):
    """Both operands as tensors of the promoted dtype, broadcast to one shape."""
    a, b = (x.to_dense() if getattr(x, "is_sparse", False) else x for x in (a, b))  # PyTorch: dense
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"expected a tensor operand, got {type(a).__name__} and {type(b).__name__}")
    t = a if isinstance(a, Tensor) else b
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a.device != b.device:
            a, b = _scalar_to_device(a, b)
        dtype = dtypes.promote(a.dtype, b.dtype)
    else:
        dtype = dtypes.promote_scalar(t.dtype, b if t is a else a)
    device = t.storage.device
    if a is not t or a.dtype is not dtype:         # a tensor of the right dtype stays itself
        a = as_tensor(a, dtype=dtype, device=device) if isinstance(a, Tensor) else constant(a, dtype, device)
    if b is not t or b.dtype is not dtype:
        b = as_tensor(b, dtype=dtype, device=device) if isinstance(b, Tensor) else constant(b, dtype, device)
    shape = broadcast_shapes(a.shape, b.shape)
    return a, b, shape, dtype


class Binary(Primitive):
    """One element-wise function of two tensors of one dtype and device (``binary`` makes
    them so), broadcast to one shape."""

    def forward(self, a, b, op):
        self.op = op
        dtype = a.dtype
        if op == "div" and not dtype.is_floating_point:
            dtype = dtypes.float32          # true division, as in PyTorch
            a, b = a.to(dtype=dtype), b.to(dtype=dtype)
        shape = a.shape
        if shape == b.shape:                # no broadcasting: the kernel reads both as they are
            av, bv = a.as_view(), b.as_view()
        else:
            shape = broadcast_shapes(shape, b.shape)
            av, bv = a.broadcast_view(shape), b.broadcast_view(shape)
        out = a.launch("binary", op, av, bv, dtype, shape=shape, dtype=dtype)
        if SAVED[op]:                       # add and sub save nothing
            self.save((a, b, out))
        return out


def binary(op, a, b):
    """a op b for tensors or a tensor and a Python number. Both become tensors of the
    promoted dtype first: a number a 0-d tensor (with no gradient), a tensor of another
    dtype a conversion, recorded as its own node so its gradient converts back."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype
            and a.storage.device == b.storage.device):
        a, b, _, _ = operands(a, b)
    # Binary.apply, less its device check and walk over the arguments: done just above
    fn = Binary()
    return fn.link(fn.forward(a, b, op), (a, b))


def binary_kernel(op, a, b):
    """A binary kernel outside autograd (local gradients inside backward passes, like
    pow_grad): a and b tensors of one dtype and device."""
    shape = a.shape if a.shape == b.shape else broadcast_shapes(a.shape, b.shape)
    return a.launch("binary", op, a.broadcast_view(shape), b.broadcast_view(shape), a.dtype,
                    shape=shape, dtype=a.dtype)


def kernel(op, *operands):
    """Primitive ``op``'s kernel on tensors, or ``where``: what a gradient rule calls as
    ``ops.kernel.NAME(...)`` (gelu_grad(x), relu_backward(g, x), pow_grad(a, b))."""
    if op == "where":
        return where(*operands)
    if ops.BY_NAME[op].kind == "unary":
        (x,) = operands
        return x.launch("unary", op, x.as_view(), x.dtype, shape=x.shape, dtype=x.dtype)
    return binary_kernel(op, *operands)


ops.kernel.runner = kernel


def compare(op, a, b):
    """Comparisons give bool tensors and no gradient."""
    if not isinstance(b, (Tensor, int, float, bool)):
        return NotImplemented
    a, b, shape, dtype = operands(a, b)
    return a.launch("binary", op, a.broadcast_view(shape), b.broadcast_view(shape), dtypes.bool_,
                    shape=shape, dtype=dtypes.bool_)


class Where(GradientFunction):
    def forward(self, cond, a, b):
        shape = broadcast_shapes(cond.shape, a.shape, b.shape)
        views = [t.broadcast_view(shape) for t in (cond, a, b)]
        self.cond = cond
        return a.launch("where", *views, a.dtype, shape=shape, dtype=a.dtype)

    def backward(self, grad):
        zero = zeros_like(grad)
        return None, Where.apply(self.cond, grad, zero), Where.apply(self.cond, zero, grad)


def where(cond, a, b):
    """Elements of a where cond is true, else of b (PyTorch's torch.where)."""
    if not isinstance(cond, Tensor) or cond.dtype is not dtypes.bool_:
        raise TypeError(f"where: the condition must be a bool tensor, got "
                        f"{getattr(cond, 'dtype', type(cond).__name__)}")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = as_tensor(a, device=cond.device)
    a, b, _, _ = operands(a, b)
    return Where.apply(cond, a, b)


class Convert(GradientFunction):
    """A copy to another device and/or dtype; its gradient converts back."""

    def forward(self, x, device, dtype):
        self.device, self.dtype = x.device, x.dtype
        if device == x.device:
            return x.launch("contiguous", x.as_view(), dtype, shape=x.shape, dtype=dtype)
        source, target = backend.get(x.device), backend.get(device)
        if source.has("to_bytes") and target.has("from_bytes"):     # one block, not per element
            buffer = target.from_bytes(source.to_bytes(x.as_view()), x.dtype)
            out = Tensor.from_buffer(buffer, x.shape, x.dtype, device)
            return out if dtype is x.dtype else out.to(dtype=dtype)
        values = source.to_flat(x.as_view())
        return Tensor.from_buffer(target.from_flat(values, dtype), x.shape, dtype, device)

    def backward(self, grad):
        return (grad.to(self.device, self.dtype),)
