"""Parameter, Module and the containers (thesis chapter 2, "Neural Networks"; the tensor
form of stage1's ``nn.Module``).

A module owns Parameters and sub-modules simply by holding them as attributes, directly or
inside a list, tuple or dict; ``named_parameters()`` finds them by walking the attributes,
in the order they were assigned, so a new layer only has to store its tensors. The names
are dotted paths, ``"0.weight"`` or ``"blocks.2.attn.bias"``, as in PyTorch, and they are
the keys of ``state_dict()``. A plain tensor attribute is not state; one registered with
``register_buffer`` is (a running statistic, a fixed mask): saved, loaded and moved by
``to`` with the parameters, but not trained.
"""
from collections import namedtuple

from .. import dtypes
from ..grad_mode import no_grad
from ..tensor import Tensor

IncompatibleKeys = namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")


class Parameter(Tensor):
    """A tensor that is a module's parameter: it shares `data`'s storage and requires grad.
    Only Parameters are collected by ``Module.parameters()``; a plain tensor attribute (a
    constant, a mask) is not trained."""

    def __init__(self, data, requires_grad=True):
        super().__init__(data.storage, data.shape, data.strides, data.offset, data.dtype,
                         requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        return Parameter(super().__deepcopy__(memo), self.requires_grad)


class Module:
    """Base class of every layer and model. Subclasses set attributes in ``__init__`` and
    define ``forward``; calling the module calls ``forward``."""

    training = True                   # a class default, so subclasses need no super().__init__()

    def __init__(self):
        self.training = True

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def __setattr__(self, name, value):
        # an nn.Buffer (parameter.py) assigned is registered as a buffer, as in PyTorch
        if getattr(type(value), "registers_as_buffer", False):
            self.register_buffer(name, value.plain(), value.persistent)
        else:
            object.__setattr__(self, name, value)

    # ---- registering members by name (PyTorch's explicit forms of plain assignment) --------
    def register_buffer(self, name, tensor, persistent=True):
        """Hold ``tensor`` (or None) as attribute ``name``, a buffer: state that is not trained.
        A persistent buffer is saved by ``state_dict`` and loaded by ``load_state_dict``; a
        non-persistent one (something recomputed, such as a causal mask) is not. Both move
        with ``to``. Assigning a tensor to the attribute later replaces the buffer."""
        _check_member_name(self, name, "buffer", lambda _: name in self._buffer_registry())
        if tensor is not None and (not isinstance(tensor, Tensor) or isinstance(tensor, Parameter)):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(a plain Tensor or None required; a Parameter is registered with "
                            "register_parameter)")
        setattr(self, name, tensor)
        self._buffer_registry()[name] = bool(persistent)

    def _buffer_registry(self):
        """{buffer name: persistent} of this module's own buffers, created on first use (in
        vars(self), so each module has its own; a subclass need not call __init__)."""
        return vars(self).setdefault("_buffers", {})

    def register_parameter(self, name, param):
        """Hold ``param`` (a Parameter, or None) as attribute ``name``: ``self.name = param``
        with PyTorch's checks of the name and the value."""
        _check_member_name(self, name, "parameter", lambda current: isinstance(current, Parameter))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (nn.Parameter or None required)")
        setattr(self, name, param)

    def add_module(self, name, module):
        """Hold ``module`` (a Module, or None) as attribute ``name``: ``self.name = module``
        with PyTorch's checks of the name and the value."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_member_name(self, name, "module", lambda current: isinstance(current, Module))
        setattr(self, name, module)

    register_module = add_module

    # ---- finding parameters and sub-modules -------------------------------------------------
    def _members(self):
        """(name, value) for each Parameter and Module held by this module's attributes; a
        list, tuple or dict attribute is opened one level (``layers.0``, ``heads.q``)."""
        for name, value in vars(self).items():
            if isinstance(value, (list, tuple)):
                items = [(f"{name}.{i}", v) for i, v in enumerate(value)]
            elif isinstance(value, dict):
                items = [(f"{name}.{k}", v) for k, v in value.items()]
            else:
                items = [(name, value)]
            for n, v in items:
                if isinstance(v, (Parameter, Module)):
                    yield n, v

    def named_children(self):
        """(name, module) for the direct sub-modules, each once (a shared one under its
        first name)."""
        seen = set()
        for n, m in self._members():
            if isinstance(m, Module) and id(m) not in seen:
                seen.add(id(m))
                yield n, m

    def children(self):
        return (m for _, m in self.named_children())

    def named_modules(self, prefix=""):
        """This module and every module inside it, each once (a shared one under its first
        name), depth first."""
        seen, stack = set(), [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m) for n, m in module.named_children()]
            stack.extend(reversed(children))

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_parameters(self, prefix=""):
        """(dotted name, Parameter) for every parameter, each once: a parameter shared by
        two layers (tied weights) is trained once and saved once, under its first name."""
        seen = set()
        for module_name, module in self.named_modules(prefix):
            for n, p in module._members():
                if isinstance(p, Parameter) and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{module_name}.{n}" if module_name else n), p

    def parameters(self):
        return (p for _, p in self.named_parameters())

    def named_buffers(self, prefix=""):
        """(dotted name, tensor) for every registered buffer that is not None, persistent or
        not, each once (a shared one under its first name), as in PyTorch."""
        seen = set()
        for module_name, module in self.named_modules(prefix):
            for n in module._buffer_registry():
                b = getattr(module, n, None)
                if isinstance(b, Tensor) and id(b) not in seen:
                    seen.add(id(b))
                    yield (f"{module_name}.{n}" if module_name else n), b

    def buffers(self):
        return (b for _, b in self.named_buffers())

    def apply(self, fn):
        """fn(m) for every module inside this one, then for this one (custom initialisation)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes, gradients, devices ---------------------------------------------------------
    def train(self, mode=True):
        """Training mode (Dropout active) for this module and everything inside it."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Freeze (False) or unfreeze every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad.zero_()

    def to(self, device=None, dtype=None):
        """Move (and/or convert) every parameter and buffer. A Parameter is moved in place:
        the object stays the same and gets the new storage, so optimizers created before or
        after still hold the parameters they update. A buffer attribute is replaced by its
        moved copy, as in PyTorch. Only floating-point tensors change dtype."""
        if isinstance(device, dtypes.DType):          # model.to(tg.float64)
            device, dtype = None, device
        for p in self.parameters():
            _move_(p, device, dtype if p.dtype.is_floating_point else None)
        for module in self.modules():
            for n in module._buffer_registry():
                b = getattr(module, n, None)
                if isinstance(b, Tensor):
                    setattr(module, n, b.to(device=device,
                                            dtype=dtype if b.dtype.is_floating_point else None))
        return self

    def share_memory(self):
        """Move every parameter and buffer into memory that processes share
        (Tensor.share_memory_, device "cpu"): processes given this model then train one
        set of weights (torch.multiprocessing's hogwild)."""
        for p in self.parameters():
            p.share_memory_()
        for _, b in self.named_buffers():
            b.share_memory_()
        return self

    def float(self):
        return self.to(dtype=dtypes.float32)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def bfloat16(self):
        return self.to(dtype=dtypes.bfloat16)

    # ---- saving and loading ----------------------------------------------------------------
    def _state_items(self, prefix=""):
        """(dotted name, tensor) under every name: own parameters first, then own persistent
        buffers, then each sub-module's, PyTorch's order. Unlike named_parameters, a shared
        (tied) parameter appears under each of its names, as in PyTorch's state_dict."""
        members = list(self._members())
        for n, v in members:
            if isinstance(v, Parameter):
                yield prefix + n, v
        for n, persistent in self._buffer_registry().items():
            b = getattr(self, n, None)
            if persistent and isinstance(b, Tensor):
                yield prefix + n, b
        for n, v in members:
            if isinstance(v, Module):
                yield from v._state_items(f"{prefix}{n}.")

    def state_dict(self):
        """{dotted name: tensor} for every parameter and persistent buffer; the tensors are
        detached and share the module's storage (save them with ``stage2_tensor.save`` to
        keep a copy)."""
        return {name: p.detach() for name, p in self._state_items()}

    def load_state_dict(self, state_dict, strict=True):
        """Copy the values of `state_dict` into the parameters and persistent buffers, in
        place, converted to each one's dtype and device as PyTorch does. A tied parameter is
        one object under several names, so it stays tied. With strict=True (the default)
        its keys must be exactly the state_dict's names. Always checked, before anything is
        copied: each value is a tensor of its parameter's shape, and not of a kind the
        parameter cannot hold (floats into an integer parameter, which PyTorch would
        truncate). Returns (missing_keys, unexpected_keys)."""
        if not hasattr(state_dict, "items"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}")
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
        problems = (_load_problem(k, v, own[k]) for k, v in state_dict.items() if k in own)
        errors += [problem for problem in problems if problem]
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for k, v in state_dict.items():
                if k in own:
                    own[k].copy_(v)
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        children = [(n, m) for n, m in self._members() if isinstance(m, Module)]
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        lines = [f"  ({n}): " + repr(m).replace("\n", "\n  ") for n, m in children]
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)"


def _check_member_name(module, name, kind, replaceable):
    """PyTorch's checks of a name given to register_buffer, register_parameter or
    add_module: a non-empty string without a dot (dots separate the levels of a state_dict
    key), and not an attribute the module already has for something else (``forward``,
    ``training``, a parameter registered as a buffer): an existing value must be None or
    one that ``replaceable(value)`` accepts (a parameter replacing a parameter)."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
    if not name or "." in name:
        raise KeyError(f"{kind} name can't be empty or contain \".\", got {name!r}")
    if getattr(module, name, None) is not None and not replaceable(getattr(module, name)):
        raise KeyError(f"attribute '{name}' already exists in {type(module).__name__}; "
                       f"choose another {kind} name")


def _load_problem(name, value, param):
    """Why checkpoint tensor `value` cannot be copied into parameter `param`, or None."""
    if not isinstance(value, Tensor):
        return (f'While copying the parameter named "{name}", expected a Tensor from '
                f"checkpoint but received {type(value).__name__}")
    if tuple(value.shape) != param.shape:
        return (f"size mismatch for {name}: copying a param with shape {tuple(value.shape)} "
                f"from checkpoint, the shape in current model is {param.shape}")
    if value.dtype.kind > param.dtype.kind:
        return (f"dtype mismatch for {name}: copying a param of dtype {value.dtype} from "
                f"checkpoint into one of dtype {param.dtype} would lose its values")
    return None


def _move_(p, device, dtype):
    """Point tensor p at a converted copy of its data (and its gradient), keeping p itself."""
    moved = p.detach().to(device=device, dtype=dtype)
    if moved.storage is p.storage:
        return
    moved = moved.contiguous()
    p.set_layout(moved.storage, moved.shape, moved.strides, moved.offset, moved.dtype)
    if p.grad is not None:
        p.grad = p.grad.to(device=device, dtype=dtype)


class _ModuleSequence(Module):
    """Modules kept in order and named "0", "1", ... as in PyTorch."""

    def __init__(self, modules):
        super().__init__()
        self._modules_list = list(modules)

    def _members(self):
        return ((str(i), m) for i, m in enumerate(self._modules_list))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(self._modules_list[i])
        return self._modules_list[i]

    def __len__(self):
        return len(self._modules_list)

    def __iter__(self):
        return iter(self._modules_list)

    def append(self, module):
        self._modules_list.append(module)
        return self


class Sequential(_ModuleSequence):
    """Modules applied one after the other: Sequential(Linear(2, 8), ReLU(), Linear(8, 1))."""

    def __init__(self, *modules):
        if len(modules) == 1 and isinstance(modules[0], list):   # from a slice
            modules = modules[0]
        super().__init__(modules)

    def forward(self, x):
        for module in self._modules_list:
            x = module(x)
        return x


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters the owner finds; the owner's forward decides how
    to use them (a loop over transformer blocks). It has no forward of its own."""

    def __init__(self, modules=()):
        super().__init__(modules)

    def extend(self, modules):
        self._modules_list.extend(modules)
        return self
