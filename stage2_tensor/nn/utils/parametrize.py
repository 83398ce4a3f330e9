"""PyTorch's nn.utils.parametrize: a module's tensor replaced by a function of another, so
that training moves the other (``register_parametrization(layer, "weight", Symmetric())``
keeps the weight symmetric). The original is kept as
``module.parametrizations[name].original`` (with the parametrizations, its state_dict
name ``parametrizations.weight.original``); reading ``module.weight`` runs the
parametrizations on it (each read, or once inside ``cached()``); assigning to it stores the
right inverse of the value, when the parametrizations have one.
"""
import contextlib

from ...grad_mode import no_grad
from ...tensor import Tensor
from ..containers import ModuleDict
from ..modules import Module, ModuleList, Parameter
from . import computed

_cache = None


@contextlib.contextmanager
def cached():
    """Inside it, each parametrized tensor is computed once, at its first read."""
    global _cache
    outer, _cache = _cache, {} if _cache is None else _cache
    try:
        yield
    finally:
        _cache = outer


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to ``original``."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        if isinstance(original, Parameter):
            self.original = original
        else:
            self.register_buffer("original", original)

    def _members(self):
        if isinstance(vars(self).get("original"), Parameter):
            yield "original", self.original                  # PyTorch's order: the original first
        yield from super()._members()

    def right_inverse(self, value):
        for m in reversed(list(self)):
            if not hasattr(m, "right_inverse"):
                raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
            value = m.right_inverse(value)
        return value

    def forward(self):
        x = self.original
        for m in self:
            x = m(x)
        return x


class _Parametrized:
    def __init__(self, name):
        self.name = name

    def compute(self, module):
        if _cache is not None:
            key = (id(module), self.name)
            if key not in _cache:
                _cache[key] = module.parametrizations[self.name]()
            return _cache[key]
        return module.parametrizations[self.name]()

    def assign(self, module, value):
        plist = module.parametrizations[self.name]
        with no_grad():
            plist.original.copy_(plist.right_inverse(value))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` (a parameter or buffer) by the Module
    ``parametrization``; a second call on the same name chains it after the first."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"parametrization must be a Module, got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            _check(parametrization, plist(), tensor_name)
        plist.append(parametrization)
        return module
    original = getattr(module, tensor_name, None)
    if not isinstance(original, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{tensor_name}'")
    if not unsafe:
        _check(parametrization, original, tensor_name)
    if hasattr(parametrization, "right_inverse"):
        with no_grad():
            value = parametrization.right_inverse(original)
        if not isinstance(value, Tensor):
            raise ValueError(f"'right_inverse' must return a Tensor, got {type(value).__name__}")
        held = Parameter(value.detach().contiguous(), original.requires_grad) if isinstance(original, Parameter) \
            else value.detach()
    else:
        held = original
    buffers = module._buffer_registry()
    buffers.pop(tensor_name, None)
    del vars(module)[tensor_name]
    if "parametrizations" not in vars(module):
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], held, unsafe)
    computed.install(module, tensor_name, _Parametrized(tensor_name),
                     class_name=f"Parametrized{type(module).__name__}")
    return module


def _check(parametrization, x, name):
    with no_grad():
        y = parametrization(x)
    if not isinstance(y, Tensor) or y.shape != x.shape or y.dtype is not x.dtype:
        raise ValueError(f"Registering a parametrization may not change the shape or dtype of the tensor "
                         f"'{name}', unless unsafe=True: {getattr(x, 'shape', None)} became "
                         f"{getattr(y, 'shape', type(y).__name__)}")


def is_parametrized(module, tensor_name=None):
    plists = vars(module).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module):
    return type(module)._class_before_computed if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization: the tensor becomes a plain parameter (or buffer)
    again, holding its parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    original = plist.original
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
        if value.shape == original.shape and value.dtype is original.dtype:
            with no_grad():
                original.copy_(value)
        else:
            original = Parameter(value.detach(), original.requires_grad) if isinstance(original, Parameter) \
                else value.detach()
    computed.uninstall(module, tensor_name)
    del module.parametrizations[tensor_name]
    if not len(module.parametrizations):
        del vars(module)["parametrizations"]
    if isinstance(original, Parameter):
        setattr(module, tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    return module
