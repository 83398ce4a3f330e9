"""PyTorch's nn.utils.parameters_to_vector and vector_to_parameters: a model's parameters
as one flat vector (for an optimizer written over vectors, or a flat copy) and back."""
from ...concat import cat
from ...grad_mode import no_grad
from ...tensor import Tensor


def parameters_to_vector(parameters):
    """The parameters flattened and joined, in order: one 1-D tensor, in the graph."""
    params = list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"expected an iterable of Tensors, got {type(p).__name__}")
    if params and len({p.device for p in params}) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Copy consecutive pieces of the 1-D ``vec`` into the parameters, in order (in place,
    outside the graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec must be 1-D with {total} elements (the parameters' "
                         f"count), got shape {vec.shape}")
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n
