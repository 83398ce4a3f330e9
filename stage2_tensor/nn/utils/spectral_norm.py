"""PyTorch's nn.utils.spectral_norm and remove_spectral_norm (Miyato et al. 2018): the weight
divided by its largest singular value sigma, estimated by power iteration, so the layer is
1-Lipschitz (a GAN discriminator's). The module holds ``weight_orig`` (trained) and the
buffers ``weight_u`` and ``weight_v`` (the singular vectors' estimates), PyTorch's
state_dict names. Reading ``weight`` in training mode first runs ``n_power_iterations``
steps u <- W v / ||W v||, v <- W^T u / ||W^T u|| (outside autograd), then gives
W / (u . W v); in evaluation mode it uses u and v as they are."""
from ...factories import randn
from ...grad_mode import no_grad
from ..modules import Parameter
from . import computed


def _normalize(x, eps):
    return x / ((x * x).sum().sqrt().maximum(eps))


class SpectralNorm:
    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute(self, module):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        w = self.matrix(weight)
        if module.training:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(w.detach().transpose(0, 1) @ u, self.eps))
                    u.copy_(_normalize(w.detach() @ v, self.eps))
        sigma = (u * (w @ v)).sum()
        return weight / sigma

    def assign(self, module, value):
        raise AttributeError(f"spectral_norm: '{self.name}' is computed from '{self.name}_orig'; assign that")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm at every read (dim: the output
    dimension, 0, or 1 for a transposed convolution by default)."""
    if computed.installed(module, name):
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, int) or n_power_iterations <= 0:
        raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                         f"{n_power_iterations}")
    weight = getattr(module, name)
    if not isinstance(weight, Parameter):
        raise TypeError(f"spectral_norm: '{name}' must be a Parameter, got {type(weight).__name__}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    w = fn.matrix(weight.detach())
    h, k = w.shape
    u = _normalize(randn(h, dtype=weight.dtype, device=weight.device), eps)
    v = _normalize(randn(k, dtype=weight.dtype, device=weight.device), eps)
    del vars(module)[name]
    setattr(module, name + "_orig", weight)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    computed.install(module, name, fn)
    return module


def remove_spectral_norm(module, name="weight"):
    """Back to a plain ``weight`` parameter holding the normalized weight."""
    if not isinstance(vars(module).get("_computed", {}).get(name), SpectralNorm):
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    with no_grad():
        training, module.training = module.training, False
        weight = getattr(module, name).detach()
        module.training = training
    computed.uninstall(module, name)
    for suffix in ("_orig", "_u", "_v"):
        del vars(module)[name + suffix]
        module._buffer_registry().pop(name + suffix, None)
    setattr(module, name, Parameter(weight))
    return module
