"""``torch.isin``: whether each element is among a set of values, by sorting the values
once and searching each element in them (searchsorted): n log n, as PyTorch's."""
import numbers

from . import dtypes, factories, searching
from .tensor import Tensor


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of elements' shape: whether each is equal to some element of
    test_elements (either may be a number; NaN is in nothing)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected elements or test_elements to be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    for name, value in (("elements", elements), ("test_elements", test_elements)):
        if not isinstance(value, (Tensor, numbers.Number)):
            raise TypeError(f"isin(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")
    elements = factories.as_tensor(elements, device=like.device)
    test_elements = factories.as_tensor(test_elements, device=like.device)
    dtype = dtypes.promote(elements.dtype, test_elements.dtype)
    values = test_elements.reshape(-1).to(dtype=dtype).sort().values
    x = elements.to(dtype=dtype)
    if not values.numel():
        found = factories.zeros(*x.shape, dtype=dtypes.bool_, device=x.device)
    else:
        at = searching.searchsorted(values, x.reshape(-1)).clamp(max=values.numel() - 1)
        found = (values[at] == x.reshape(-1)).reshape(*x.shape)
    return (found.to(dtype=dtypes.int64) == 0) if invert else found
