"""Data types and type promotion (chapter 1, "Tensors").

A dtype names how one element is stored (``typecode`` for ``array.array``, ``itemsize``
bytes) and what Python type reads it back. Promotion follows PyTorch:

* two tensors: bool < int32 < int64 < float32 < float64, except that a float always wins
  over an int (int64 with float32 gives float32, not float64);
* a tensor and a Python number: the number only matters when it is of a higher kind
  (bool < int < float) than the tensor; it then gives that kind's default dtype
  (int64 for int, float32 for float). ``tensor_f32 * 2.5`` stays float32.
"""
import builtins


class DType:
    __slots__ = ("name", "typecode", "itemsize", "kind", "rank")

    def __init__(self, name, typecode, itemsize, kind, rank):
        self.name, self.typecode, self.itemsize = name, typecode, itemsize
        self.kind = kind      # 0 bool, 1 integer, 2 floating point
        self.rank = rank      # order for promotion within everything

    @property
    def is_floating_point(self):
        return self.kind == 2

    def cast(self, x):
        """A Python number converted to what this dtype stores."""
        if self.kind == 2:
            return builtins.float(x)
        if self.kind == 1:
            return builtins.int(x)
        return builtins.bool(x)

    def __repr__(self):
        return f"tracegrad.{self.name}"

    def __reduce__(self):                   # pickles (and so save/load) by name
        return (by_name, (self.name,))


bool_ = DType("bool", "B", 1, 0, 0)
int32 = DType("int32", "i", 4, 1, 1)
int64 = DType("int64", "q", 8, 1, 2)
float32 = DType("float32", "f", 4, 2, 3)
float64 = DType("float64", "d", 8, 2, 4)

ALL = (bool_, int32, int64, float32, float64)
DEFAULT_FOR_KIND = {0: bool_, 1: int64, 2: float32}


def by_name(name):
    for d in ALL:
        if d.name == name:
            return d
    raise ValueError(f"unknown dtype {name!r}; expected one of {[d.name for d in ALL]}")


def kind_of_scalar(x):
    if isinstance(x, builtins.bool):
        return 0
    if isinstance(x, builtins.int):
        return 1
    if isinstance(x, builtins.float):
        return 2
    raise TypeError(f"expected a number (bool, int or float), got {type(x).__name__}: {x!r}")


def promote(a, b):
    """The dtype of an operation on tensors of dtypes a and b."""
    if a.kind != b.kind:
        return a if a.kind > b.kind else b
    return a if a.rank >= b.rank else b


def promote_scalar(dtype, x):
    """The dtype of an operation on a tensor of `dtype` and the Python number x."""
    kind = kind_of_scalar(x)
    return DEFAULT_FOR_KIND[kind] if kind > dtype.kind else dtype


def infer(value):
    """The default dtype of a Python number (or nested list of them)."""
    return DEFAULT_FOR_KIND[kind_of_scalar(value)]
