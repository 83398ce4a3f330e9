"""numpy interop: ``Tensor.numpy()`` and ``from_numpy``. numpy is an exchange format here,
never an engine. A backend that can (``as_numpy``/``from_numpy``, a native device) shares
memory both ways, as PyTorch does on its CPU: writing through the numpy array changes the
tensor. Device "python" copies. float16 is numpy's float16; bfloat16, which numpy lacks,
raises as in PyTorch (convert with .float() first).
"""
from . import backend, dtypes
from .tensor import Tensor

_NUMPY_NAMES = {"float32": dtypes.float32, "float64": dtypes.float64, "int32": dtypes.int32,
                "int64": dtypes.int64, "bool": dtypes.bool_, "float16": dtypes.float16,
                "uint8": dtypes.uint8, "int8": dtypes.int8, "int16": dtypes.int16}


def to_numpy(t):
    import numpy as np
    if t.requires_grad:
        raise RuntimeError("numpy() on a tensor that requires grad; call .detach().numpy()")
    if t.dtype is dtypes.bfloat16:
        raise TypeError("Got unsupported ScalarType BFloat16: numpy has no bfloat16; "
                        "convert first, e.g. t.float().numpy()")
    be = backend.get(t.device)
    if be.has("as_numpy"):
        return be.as_numpy(t.as_view())
    return np.array(t.tolist(), dtype=t.dtype.name).reshape(t.shape)


_BY_NUMPY_DTYPE = {}        # numpy dtype object -> ours; keyed by the object, since str(dtype)
                            # costs microseconds and a training loop converts every batch


def from_numpy(array, device=None):
    device = device or backend.default_device()
    if not _BY_NUMPY_DTYPE:
        import numpy as np
        _BY_NUMPY_DTYPE.update({np.dtype(name): dtype for name, dtype in _NUMPY_NAMES.items()})
    dtype = _BY_NUMPY_DTYPE.get(array.dtype)
    if dtype is None:
        raise TypeError(f"from_numpy: numpy dtype {array.dtype} is not supported; expected one of "
                        f"{sorted(_NUMPY_NAMES)} in the machine's byte order")
    be = backend.get(device)
    if be.has("from_numpy"):
        buffer = be.from_numpy(array, dtype)        # None when the layout does not allow sharing
        if buffer is not None:
            return Tensor.from_buffer(buffer, array.shape, dtype, device)
    # a copy: the values row-major, then the array's shape (which a nested list loses
    # when a dimension is 0)
    return Tensor.from_buffer(be.from_flat(array.ravel().tolist(), dtype), array.shape, dtype, device)
