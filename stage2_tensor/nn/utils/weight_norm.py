"""PyTorch's nn.utils.weight_norm and remove_weight_norm (Salimans and Kingma 2016): a
weight w written as g * v / ||v||, its length g (one per slice along ``dim``) and direction
v trained apart. The module holds ``weight_g`` and ``weight_v`` (PyTorch's state_dict
names) and computes ``weight`` from them when it is read."""
from ...grad_mode import no_grad
from ..modules import Parameter
from . import computed


def norm_except_dim(v, pow=2, dim=0):
    """||v|| over every dimension but ``dim`` (kept, the others of size 1), or over all of
    v with dim=None or -1."""
    if dim is None or dim == -1:
        return (v.abs() ** pow).sum() ** (1 / pow)
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    return (v.abs() ** pow).sum(dim=others, keepdim=True) ** (1 / pow) if others else v.abs()


class WeightNorm:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def assign(self, module, value):
        raise AttributeError(f"weight_norm: '{self.name}' is computed from '{self.name}_g' and "
                             f"'{self.name}_v'; assign those")


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as g * v / ||v|| (the norm over all dimensions but
    ``dim``; dim=None: over all)."""
    if computed.installed(module, name):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    weight = getattr(module, name)
    if not isinstance(weight, Parameter):
        raise TypeError(f"weight_norm: '{name}' must be a Parameter, got {type(weight).__name__}")
    with no_grad():
        g = norm_except_dim(weight, 2, dim)
    del vars(module)[name]
    setattr(module, name + "_g", Parameter(g.detach().contiguous()))
    setattr(module, name + "_v", Parameter(weight.detach()))
    computed.install(module, name, WeightNorm(name, dim))
    return module


def remove_weight_norm(module, name="weight"):
    """Back to a plain ``weight`` parameter holding g * v / ||v||."""
    if not isinstance(vars(module).get("_computed", {}).get(name), WeightNorm):
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    with no_grad():
        weight = getattr(module, name).detach()
    computed.uninstall(module, name)
    del vars(module)[name + "_g"], vars(module)[name + "_v"]
    setattr(module, name, Parameter(weight))
    return module
