"""``autograd.grad`` and ``autograd.backward``: the backward pass (backward.py's ``run``) from
several outputs, its gradients returned or accumulated into chosen inputs, checked as PyTorch
checks its arguments."""
from .. import backward as _engine
from ..tensor import Tensor


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """The gradients of ``tensors`` (weighted by ``grad_tensors``) accumulated into the leaves'
    ``.grad`` (into ``inputs``' only, when given): ``sum(t * g).backward()`` in one pass."""
    tensors = _as_tuple("backward", "tensors", tensors)
    gradients = _gradients(tensors, grad_tensors if grad_tensors is not None else grad_variables)
    inputs = None if inputs is None else _as_tuple("backward", "inputs", inputs)
    _engine.run(tensors, gradients, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` (weighted by ``grad_outputs``) with respect to ``inputs``, as
    a tuple; no ``.grad`` is written. An input the outputs do not reach is an error, or None
    with ``allow_unused`` (zeros with ``materialize_grads``). ``create_graph``: the gradients
    are recorded, so that they can be differentiated again (the module docstring)."""
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True): tracegrad has no vmap; call grad once per row")
    outputs = _as_tuple("grad", "outputs", outputs)
    inputs = _as_tuple("grad", "inputs", inputs)
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    gradients = _gradients(outputs, grad_outputs)
    found = _engine.run(outputs, gradients, retain_graph, create_graph, inputs, accumulate=False)
    for i, (t, g) in enumerate(zip(inputs, found)):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
        if g is None and materialize_grads:
            found[i] = t.detach().new_zeros(t.shape)
    return tuple(found)


def _as_tuple(op, name, x):
    xs = (x,) if isinstance(x, Tensor) else tuple(x)
    for t in xs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): {name} must be Tensors, got {type(t).__name__}")
    return xs


def _gradients(outputs, grad_outputs):
    """One gradient per output: given, or 1 for a one-element output that requires grad."""
    given = (None,) * len(outputs) if grad_outputs is None else _as_maybe_tuple(grad_outputs)
    if len(given) != len(outputs):
        raise RuntimeError(f"grad_tensors/grad_outputs has {len(given)} tensors, but there are {len(outputs)} outputs")
    gradients = []
    for i, (out, g) in enumerate(zip(outputs, given)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = out.detach().ones_like()
        elif not isinstance(g, Tensor):
            g = out.detach().new_full(out.shape, g)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                               f"has a shape of {out.shape}.")
        gradients.append(g)
    return gradients


def _as_maybe_tuple(x):
    return (x,) if isinstance(x, Tensor) or x is None or isinstance(x, (int, float)) else tuple(x)
