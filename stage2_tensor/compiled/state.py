"""The state a compiled function reads and changes besides its arguments: the tensors of the
modules, optimizers and schedulers it can reach, each behind a ``Slot``.

A replay runs kernels, not Python, so it has to know where Python keeps the tensors the
step reads (a parameter, its ``.grad``, an optimizer's moments, a module's buffers) to hand
their current buffers to the kernels, and where to put the tensors the step leaves behind
(new gradients) for Python to find. Those places are found as PyTorch's dynamo finds its
guards' sources: from the function's roots (its arguments, the object a bound method is
bound to, the names of its closure and its globals), opening every Module (its attributes'
tensors, its sub-modules), Optimizer (its parameters and state) and scheduler (its
optimizer). A tensor the step reads that none of these reach is a constant of the plan,
read in place.
"""
import functools
import types

from ..tensor import Tensor


class Slot:
    """One place a tensor is kept: ``owner``'s attribute ``key`` (``"grad"`` of a tensor is
    its gradient), or item ``key`` of a dict or list ``owner``."""
    __slots__ = ("owner", "key", "is_item")

    def __init__(self, owner, key, is_item=False):
        self.owner, self.key, self.is_item = owner, key, is_item

    def get(self):
        if self.is_item:
            try:
                return self.owner[self.key]
            except (KeyError, IndexError):
                return None
        return getattr(self.owner, "_grad" if self.key == "grad" else self.key, None)

    def set(self, tensor):
        if self.is_item:
            self.owner[self.key] = tensor
        elif self.key == "grad":
            self.owner._grad = tensor          # its shape, dtype and device are the traced ones
        else:
            setattr(self.owner, self.key, tensor)

    def __repr__(self):
        owner = type(self.owner).__name__
        return f"{owner}[{self.key!r}]" if self.is_item else f"{owner}.{self.key}"


def roots(fn, args, kwargs):
    """What a call of ``fn`` can reach besides its tensors: fn itself (a Module), its
    arguments, and, through every function on the way (fn, a bound method's object, a
    Module's forward, the functions in closures and globals), the contents of their closures
    and the globals their code names; lists, tuples, dicts and plain objects' attributes
    opened. Python modules and classes are not opened."""
    found, seen = [], set()

    def visit(obj, depth):
        if id(obj) in seen or depth > MAX_DEPTH or isinstance(obj, SKIPPED):
            return
        seen.add(id(obj))
        found.append(obj)
        if isinstance(obj, (list, tuple)):
            for item in obj:
                visit(item, depth + 1)
        elif isinstance(obj, dict):
            for item in obj.values():
                visit(item, depth + 1)
        elif isinstance(obj, types.MethodType):
            visit(obj.__self__, depth + 1)
            visit(obj.__func__, depth + 1)
        elif isinstance(obj, (types.FunctionType, functools.partial)):
            for item in _reached(obj):
                visit(item, depth + 1)
        elif hasattr(type(obj), "forward"):               # a Module: what its forward reaches
            visit(getattr(type(obj), "forward"), depth + 1)
        elif hasattr(obj, "__dict__") and not callable(obj):  # a plain object (a run, a config)
            for item in vars(obj).values():
                visit(item, depth + 1)

    for obj in [fn, *args, *kwargs.values()]:
        visit(obj, 0)
    return found


MAX_DEPTH = 6
SKIPPED = (types.ModuleType, type, str, bytes, int, float, complex, bool, type(None))


def _reached(function):
    """The closure's contents and the globals a function's code (and its nested code) names."""
    if isinstance(function, functools.partial):
        return [function.func, *function.args, *function.keywords.values()]
    code = function.__code__
    found = [c.cell_contents for c in (function.__closure__ or ()) if _filled(c)]
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names |= set(c.co_names)
        stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    scope = function.__globals__
    return found + [scope[n] for n in sorted(names) if n in scope]


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def slots(found):
    """The slots of every Module, Optimizer and scheduler in ``found`` (and of the tensors
    in it: their gradients), each place once, in a fixed order."""
    from ..nn.modules import Module
    from ..optim.optimizer import Optimizer
    out, seen = [], set()

    def add(owner, key, is_item=False):
        if (id(owner), key) not in seen:
            seen.add((id(owner), key))
            out.append(Slot(owner, key, is_item))

    def tensor(t):
        if t.requires_grad:
            add(t, "grad")

    def module(m):
        for sub in m.modules():
            for name, value in list(vars(sub).items()):
                if isinstance(value, Tensor):
                    add(sub, name)
                    tensor(value)
                elif isinstance(value, (list, dict)):
                    items = value.items() if isinstance(value, dict) else enumerate(value)
                    for k, v in items:
                        if isinstance(v, Tensor):
                            add(value, k, True)
                            tensor(v)

    def optimizer(opt):
        for group in opt.param_groups:
            for i, p in enumerate(group["params"]):
                add(group["params"], i, True)
                tensor(p)
        for state in opt.state.values():
            for k, v in state.items():
                if isinstance(v, Tensor):
                    add(state, k, True)

    for obj in found:
        if isinstance(obj, Tensor):
            tensor(obj)
        elif isinstance(obj, Module):
            module(obj)
        elif isinstance(obj, Optimizer):
            optimizer(obj)
        elif isinstance(getattr(obj, "optimizer", None), Optimizer):     # a scheduler
            optimizer(obj.optimizer)
    return out
