"""The backward pass over tensor operations (chapter 4, "Tensor-level autograd").

1. From the roots' grad_fns, find every function reachable through inputs that require
   grad, and count how many reachable functions consume each one's output.
2. Process functions whose output gradient is complete (pending count 0), starting from
   the roots with the given gradients. Each hands back one gradient per input; a gradient
   whose shape differs from its input's was broadcast in the forward pass and is summed
   back (``sum_to``). Leaves accumulate into ``.grad``; other inputs add into their
   function's pending gradient, which is complete once every consumer has reported.

Inputs that do not require grad get None from ``backward`` (their branch is never
computed), and functions behind them are never visited.

A slice's gradient is zeros of its input's shape with the upstream gradient in the
slice (SliceBackward). Made that way for every slice, a tensor read in T slices (a
recurrent layer's inputs, one time step each; q, k and v split from one product) would
cost T tensors of its whole size and T additions of them: quadratic in T. So without
``create_graph`` the pass gathers a tensor's slices' gradients into one buffer of its
shape (``Gathered``): one fill, then work the size of each slice, a copy where no slice
before covered it (the slices of a split, a sequence's steps), an addition where one did.
(With ``create_graph`` each gradient must be recorded: SliceBackward as it is.)

``run`` is the pass itself, for ``Tensor.backward`` and ``autograd.backward`` (several
roots, gradients into ``inputs`` only) and ``autograd.grad`` (the gradients returned, no
``.grad`` written). With ``create_graph`` the pass runs in grad mode, so the gradients it
computes are recorded in turn and can be differentiated again (autograd/__init__.py says
where that is exact). Hooks (``Tensor.register_hook``) see, and may replace, a tensor's
gradient once it is complete.
"""
import weakref

from . import grad_mode
from .compiled.capture import note_backward
from .factories import zeros
from .tensor import Tensor
from .views import Slice, basic_index

_leaf_hooks = {}                          # id(leaf) -> its hooks; a non-leaf's are on its grad_fn


def backward(root, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """``root.backward(gradient)``: gradients accumulated into the leaves' ``.grad`` (into
    ``inputs``' only, when given)."""
    note_backward()
    if not root.requires_grad:
        raise RuntimeError("backward(): this tensor does not require grad and has no grad_fn; "
                           "create its inputs with requires_grad=True")
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError(
                f"backward() on a tensor of shape {root.shape} needs an explicit gradient: "
                f"pass backward(gradient) with a tensor of shape {root.shape} (only a "
                "single-element tensor has the implicit gradient 1)")
        gradient = root.ones_like()
    elif not isinstance(gradient, Tensor) or gradient.shape != root.shape:
        shape = getattr(gradient, "shape", type(gradient).__name__)
        raise RuntimeError(f"backward(gradient): the gradient has shape {shape} but the "
                           f"tensor has shape {root.shape}; they must match")
    run([root], [gradient], retain_graph, create_graph, inputs)


def run(roots, gradients, retain_graph=None, create_graph=False, inputs=None, accumulate=True):
    """Backpropagate ``gradients`` (checked, one per root) from ``roots``. ``inputs``: the
    tensors whose gradients are wanted (None: every leaf's); with ``accumulate`` they are
    added into ``.grad``, else returned, one per input (None where none reached it)."""
    retain_graph = create_graph if retain_graph is None else retain_graph
    wanted = None if inputs is None else {id(t): t for t in inputs}
    wanted_fns = {} if inputs is None else {t.grad_fn: id(t) for t in inputs if t.grad_fn is not None}
    found = {}                                                  # id(input) -> its gradient
    with grad_mode.set_grad_enabled(create_graph):
        pending = _count_consumers([r.grad_fn for r in roots if r.grad_fn is not None])
        grads = {}                               # function -> its output's gradient so far
        sliced_grads = {}                        # function -> what slices of its output gave (Gathered)
        leaf_slices = {}                         # id(leaf) -> (leaf, what slices of it gave)
        for root, g in zip(roots, gradients):
            if root.grad_fn is None:
                _arrive(root, g, wanted, found, accumulate, create_graph)
            else:
                f = root.grad_fn
                grads[f] = grads[f] + g if f in grads else g
        ready = [f for f in grads if f not in pending]
        while ready:
            fn = ready.pop()
            grad = _complete(grads.pop(fn, None), sliced_grads.pop(fn, None))
            if fn.hooks:
                grad = _hooked(fn.hooks, grad)
            if create_graph:
                _check_recorded(fn)
            if wanted_fns and fn in wanted_fns:      # a non-leaf input: its gradient is complete
                _found(found, wanted_fns[fn], grad)
            elif fn.retained is not None and accumulate:
                _accumulate(fn.retained, grad, create_graph)
            sliced = type(fn) is Slice and not create_graph
            input_grads = (grad,) if sliced else fn.backward(grad)
            if not retain_graph:
                fn.release()
            for x, g in zip(fn.inputs, input_grads):
                if g is None or not x.requires_grad:
                    continue
                if sliced:
                    if x.grad_fn is None:
                        gathered = leaf_slices.get(id(x), (x, None))[1]
                        leaf_slices[id(x)] = (x, Gathered.put(gathered, x, fn.index, g))
                        continue
                    f = x.grad_fn
                    sliced_grads[f] = Gathered.put(sliced_grads.get(f), x, fn.index, g)
                else:
                    if g.shape != x.shape:
                        g = g.sum_to(x.shape)
                    if x.grad_fn is None:
                        _arrive(x, g, wanted, found, accumulate, create_graph)
                        continue
                    f = x.grad_fn
                    grads[f] = grads[f] + g if f in grads else g
                pending[f] -= 1
                if pending[f] == 0:
                    ready.append(f)
        for leaf, gathered in leaf_slices.values():
            _arrive(leaf, gathered.buffer, wanted, found, accumulate, create_graph)
    if wanted is None:
        return None
    if accumulate:
        for key, g in found.items():
            _accumulate(wanted[key], g, create_graph)
        return None
    return [found.get(id(t)) for t in inputs]


def _complete(total, gathered):
    """A function's output's whole gradient: what other functions gave (``total``) and
    what its slices gave (``gathered``), either possibly None."""
    if gathered is None:
        return total
    return gathered.buffer if total is None else total + gathered.buffer


class Gathered:
    """A tensor's gradient from its slices, gathered in one buffer of its shape: zeros but
    where a slice's gradient was put. ``boxes``: the index ranges written so far, one
    (start, stop) per dimension each; None once the buffer may be non-zero anywhere.
    Nothing is added into the buffer in place, where a lazy device would have to run what
    reads it first: a slice that overlaps one put before (the same slice read twice) is
    added as a tensor of the whole shape, as SliceBackward makes it."""

    def __init__(self, x, g):
        self.buffer, self.boxes = zeros(x.shape, dtype=g.dtype, device=g.device), []

    @classmethod
    def put(cls, gathered, x, index, g):
        """``gathered`` (None: a new one) with g, the gradient of x[index], put into that
        slice."""
        gathered = gathered or cls(x, g)
        box = _box(index, x.shape)
        if gathered.boxes is not None and box is not None and all(_apart(box, b) for b in gathered.boxes):
            target = gathered.buffer                    # zeros there: a copy, not a sum
            gathered.boxes.append(box)
        else:
            target, gathered.boxes = zeros(x.shape, dtype=g.dtype, device=g.device), None
        target.view_of(*basic_index(target, index))._write("Slice backward", g)
        if target is not gathered.buffer:
            gathered.buffer = gathered.buffer + target
        return gathered


def _box(index, shape):
    """The range [start, stop) along each dimension of ``shape`` that the basic index
    ``index`` (ints, slices, None, ...) reads, or None for a slice with a step."""
    index = index if isinstance(index, tuple) else (index,)
    if any(i is Ellipsis for i in index):
        k = next(j for j, i in enumerate(index) if i is Ellipsis)
        used = sum(i is not None and i is not Ellipsis for i in index)
        index = index[:k] + (slice(None),) * (len(shape) - used) + index[k + 1:]
    box = []
    for i in (i for i in index if i is not None):
        n = shape[len(box)]
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return None
            box.append((start, max(start, stop)))
        else:
            box.append((i % n, i % n + 1))
    return box + [(0, n) for n in shape[len(box):]]


def _apart(a, b):
    """Whether two boxes share no element."""
    return any(a_stop <= b_start or b_stop <= a_start or a_start == a_stop or b_start == b_stop
               for (a_start, a_stop), (b_start, b_stop) in zip(a, b))


def _arrive(leaf, g, wanted, found, accumulate, create_graph):
    """A leaf's gradient from one consumer: its hooks, then into .grad or the answer."""
    hooks = _leaf_hooks.get(id(leaf))
    if hooks:
        g = _hooked(hooks, g)
    if wanted is None:
        _accumulate(leaf, g, create_graph)
    elif id(leaf) in wanted:
        _found(found, id(leaf), g)


def _found(found, key, g):
    found[key] = found[key] + g if key in found else g


def _hooked(hooks, grad):
    for hook in hooks:
        out = hook(grad)
        if out is not None:
            grad = out
    return grad


def _count_consumers(root_fns):
    pending = {}                          # also the functions seen: each is pushed once
    stack = list(root_fns)
    seen = set(root_fns)
    while stack:
        fn = stack.pop()
        for x in fn.inputs:
            f = x.grad_fn
            if f is None or not x.requires_grad:
                continue
            if f in pending:
                pending[f] += 1
            else:
                pending[f] = 1
                if f not in seen:
                    seen.add(f)
                    stack.append(f)
    return pending


def _accumulate(t, g, create_graph=False):
    if g.requires_grad and not create_graph:    # without create_graph only a given gradient can be in a graph
        g = g.detach()
    if g.dtype is not t.dtype:
        g = g.to(dtype=t.dtype)
    # g has t's shape (summed back above) and now its dtype: the slot behind the checked
    # ``grad`` property is written directly
    t._grad = g if t._grad is None else t._grad + g


# ---- create_graph: which gradients are recorded -------------------------------------------------
# With create_graph a gradient must itself be differentiable: every operation of its backward
# recorded. These are the operations whose backward is written with recorded operations (and
# whose local gradients are), so a second derivative through them is exact; any other stops
# with an error rather than give a second derivative with terms missing. (A primitive's
# local gradient that calls a kernel, as pow's pow_grad or relu's relu_backward, is not
# recorded: ops.py.)
RECORDED = frozenset({
    "views.Reshape", "views.Permute", "views.Expand", "views.Contiguous", "views.Slice", "views.SliceBackward",
    "concat.Cat",
    "elementwise.Where", "elementwise.Convert", "reduce.Sum", "reduce.Extremum", "matmul.MatMul", "clamp.Clamp",
    "reorder.Flip", "reorder.Roll", "cumulative.Cumsum", "function._Node",
})
# kernels in a local gradient that are constant almost everywhere: abs's sign, maximum's shares
CONSTANT_LOCAL = frozenset({"abs", "maximum", "minimum"})


def _check_recorded(fn):
    kind = f"{type(fn).__module__.rsplit('.', 1)[-1]}.{type(fn).__name__}"
    if kind in RECORDED:
        return
    if kind in ("elementwise.Unary", "elementwise.Binary"):
        from .elementwise import GRADIENTS
        rules = GRADIENTS[fn.op].rules
        if fn.op in CONSTANT_LOCAL or not any("kernel" in r.__code__.co_names for r in rules):
            return
    raise NotImplementedError(
        f"create_graph: the gradient of {fn.name} is computed by a kernel that autograd does not record, so it "
        "cannot be differentiated again; write the function with operations whose gradients are recorded, or "
        "as an autograd.Function whose backward is")


# ---- hooks ------------------------------------------------------------------------------------

class RemovableHandle:
    """What register_hook returns: ``remove()`` takes the hook off again."""

    def __init__(self, remove):
        self._remove = remove

    def remove(self):
        self._remove()


def register_hook(t, hook):
    """Call ``hook(grad)`` with ``t``'s gradient each backward pass, once it is complete; a
    tensor it returns replaces the gradient (PyTorch's Tensor.register_hook)."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not callable(hook):
        raise TypeError(f"register_hook: expected a callable, got {type(hook).__name__}")
    if t.grad_fn is not None:
        fn = t.grad_fn
        fn.hooks = fn.hooks + (hook,)
        return RemovableHandle(lambda: setattr(fn, "hooks", tuple(h for h in fn.hooks if h is not hook)))
    key = id(t)
    if key not in _leaf_hooks:
        weakref.finalize(t, _leaf_hooks.pop, key, None)         # the id may be reused once t is gone
    _leaf_hooks[key] = _leaf_hooks.get(key, ()) + (hook,)
    return RemovableHandle(lambda: _leaf_hooks.__setitem__(key, tuple(h for h in _leaf_hooks.get(key, ())
                                                                       if h is not hook)))
