"""``torch.autograd.functional``: derivatives of a function rather than of a graph already
built. ``jacobian`` and ``hessian`` (one backward pass per output element, as PyTorch's
without ``vectorize``), ``vjp``, and ``jvp``, ``hvp``, ``vhp`` (two passes, the second
through the first's recorded gradient: exact where autograd/__init__.py says second
derivatives are).

``inputs`` is a tensor or a tuple of them and the answers follow its form: a tensor for a
tensor, a tuple for a tuple (and for a function of several outputs, a tuple over them).
"""
from ..concat import stack
from ..grad_mode import enable_grad
from ..tensor import Tensor
from .differentiate import grad


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product, one backward pass."""
    single, xs = _prepare(inputs, create_graph)
    with enable_grad():
        out = func(*xs)
        found = grad(out, xs, v, create_graph=create_graph, allow_unused=True)
    return _finish(out, create_graph), _shaped(single, _zeros_where_none(found, xs, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick: the
    vjp with a vector u is linear in u, and its gradient with respect to u, weighted by v,
    is J v."""
    single, xs = _prepare(inputs, create_graph)
    vs = _tangents(v, xs)
    with enable_grad():
        out = func(*xs)
        if not isinstance(out, Tensor):
            raise TypeError("jvp: func must return a Tensor")
        u = out.detach().new_zeros(out.shape).requires_grad_(True)
        gs = grad(out, xs, u, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, vs) if g is not None and g.requires_grad]
        if not pairs:
            return _finish(out, create_graph), out.detach().new_zeros(out.shape)
        (found,) = grad([g for g, _ in pairs], [u], [t for _, t in pairs], create_graph=create_graph,
                        allow_unused=True, materialize_grads=True)
    return _finish(out, create_graph), _finish(found, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d func(inputs) / d inputs: for an output of shape O and an input of shape I, a tensor of
    shape O + I, one backward pass per output element."""
    if strategy != "reverse-mode":
        raise NotImplementedError(f"jacobian: strategy {strategy!r}; tracegrad has reverse mode only")
    single, xs = _prepare(inputs, create_graph)
    with enable_grad():
        out = func(*xs)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        per_output = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [_zeros_where_none(grad(flat[i], xs, retain_graph=True, create_graph=create_graph,
                                           allow_unused=True), xs, create_graph) for i in range(flat.shape[0])]
            per_output.append(tuple(_block(rows, j, o, x, create_graph) for j, x in enumerate(xs)))
    answers = [p[0] if single else p for p in per_output]
    return answers[0] if isinstance(out, Tensor) else tuple(answers)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The second derivatives of a function of one element: the jacobian of its gradient
    (shape I + I for one input; a tuple of tuples for several)."""
    single, _ = _prepare(inputs, False)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single element Tensor")
        found = _zeros_where_none(grad(out, xs, create_graph=True, allow_unused=True), xs, True)
        return found[0] if single else found
    return jacobian(gradient, inputs, create_graph=create_graph, strategy=outer_jacobian_strategy)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function of one element: two backward passes."""
    single, xs = _prepare(inputs, create_graph)
    vs = _tangents(v, xs)
    with enable_grad():
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hvp should return a single element Tensor")
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, vs) if g is not None and g.requires_grad]
        found = grad([g for g, _ in pairs], xs, [t for _, t in pairs], create_graph=create_graph,
                     allow_unused=True) if pairs else (None,) * len(xs)
    return _finish(out, create_graph), _shaped(single, _zeros_where_none(found, xs, create_graph))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): H v, the Hessian being symmetric."""
    return hvp(func, inputs, v, create_graph, strict)


def _prepare(inputs, create_graph):
    """(whether inputs is one tensor, the inputs as leaves of a graph of their own)."""
    single = isinstance(inputs, Tensor)
    xs = (inputs,) if single else tuple(inputs)
    for x in xs:
        if not isinstance(x, Tensor):
            raise TypeError(f"The inputs given to autograd.functional must be Tensors, got {type(x).__name__}")
    # with create_graph, an input in a graph stays linked to it (a view of it), so the answer differentiates back
    return single, tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                         for x in xs)


def _tangents(v, xs):
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        return (xs[0].detach().ones_like(),)
    vs = (v,) if isinstance(v, Tensor) else tuple(v)
    if len(vs) != len(xs) or any(t.shape != x.shape for t, x in zip(vs, xs)):
        raise RuntimeError(f"v has shapes {[tuple(t.shape) for t in vs]}, the inputs {[tuple(x.shape) for x in xs]}; "
                           "they must match")
    return vs


def _zeros_where_none(found, xs, create_graph):
    return tuple(_finish(g, create_graph) if g is not None else x.detach().new_zeros(x.shape)
                 for g, x in zip(found, xs))


def _finish(t, create_graph):
    return t if create_graph or not isinstance(t, Tensor) else t.detach()


def _block(rows, j, out, x, create_graph):
    """The rows' gradients for input j, as one tensor of shape out.shape + x.shape."""
    if not rows:
        return x.detach().new_zeros(tuple(out.shape) + tuple(x.shape))
    return _finish(stack([r[j] for r in rows]).reshape(*out.shape, *x.shape), create_graph)


def _shaped(single, found):
    return found[0] if single else found
