"""Values known on the host while a plan is made (chapter 13, "13_inference_compiler").

A model exported with dynamic sizes computes its padding, reshape targets and slice bounds
with ONNX operators (Shape, Gather, Unsqueeze, Concat, Add, Mod...). Those compute on a few
integers that depend only on shapes, so they run here in plain Python when the plan is
made, never as device kernels: a ``HostTensor`` is such a value, small (a scalar or a
vector, a flat list of Python numbers) with a numpy dtype name.
"""
import itertools
import math

# which values stay on the host: integer (and bool) tensors this small, shapes' arithmetic
HOST_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool")
HOST_MAX_ELEMENTS = 64


class HostTensor:
    __slots__ = ("shape", "values", "dtype")

    def __init__(self, shape, values, dtype):
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != len(values):
            raise ValueError(f"host tensor: {len(values)} values do not fill shape {shape}")
        self.shape, self.values, self.dtype = shape, list(values), dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"HostTensor({self.shape}, {self.values}, {self.dtype})"


def fits_host(dtype, shape):
    """Whether a value of this dtype and shape is computed on the host."""
    return dtype in HOST_DTYPES and math.prod(shape) <= HOST_MAX_ELEMENTS


def cast_values(values, dtype):
    """Python numbers as ONNX Cast makes them: ints truncated, bools 0/1, floats as floats."""
    if dtype == "bool":
        return [bool(v) for v in values]
    if dtype in HOST_DTYPES:
        return [int(v) for v in values]
    return [float(v) for v in values]


def from_numpy(array):
    return HostTensor(array.shape, array.reshape(-1).tolist(), array.dtype.name)


def to_numpy(value):
    import numpy as np
    return np.array(value.values, dtype=value.dtype).reshape(value.shape)


def _strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def take(h, indices):
    """The values at the crossings of ``indices`` (one list of positions per axis): what
    Slice and Gather read from a host tensor, in row-major order."""
    strides = _strides(h.shape)
    values = [h.values[sum(i * s for i, s in zip(at, strides))] for at in itertools.product(*indices)]
    return HostTensor([len(i) for i in indices], values, h.dtype)


def permute(h, perm):
    """A host tensor with its axes reordered (Transpose)."""
    strides = _strides(h.shape)
    shape = [h.shape[p] for p in perm]
    values = [h.values[sum(i * strides[p] for i, p in zip(at, perm))]
              for at in itertools.product(*(range(d) for d in shape))]
    return HostTensor(shape, values, h.dtype)
