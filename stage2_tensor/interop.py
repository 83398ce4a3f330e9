"""numpy interop: ``Tensor.numpy()`` and ``from_numpy``. numpy is an exchange format here,
never an engine; the data is copied element by element on the python device."""
from . import dtypes

_NUMPY_NAMES = {"float32": dtypes.float32, "float64": dtypes.float64, "int32": dtypes.int32,
                "int64": dtypes.int64, "bool": dtypes.bool_}


def to_numpy(t):
    import numpy as np
    if t.requires_grad:
        raise RuntimeError("numpy() on a tensor that requires grad; call .detach().numpy()")
    return np.array(t.tolist(), dtype=t.dtype.name).reshape(t.shape)


def from_numpy(array):
    from .factories import tensor
    name = str(array.dtype)
    if name not in _NUMPY_NAMES:
        raise TypeError(f"from_numpy: numpy dtype {name} is not supported; expected one of "
                        f"{sorted(_NUMPY_NAMES)}")
    return tensor(array.tolist(), dtype=_NUMPY_NAMES[name])
