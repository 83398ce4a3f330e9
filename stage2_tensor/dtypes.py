"""Data types and type promotion (chapter 1, "Tensors").

A dtype names how one element is stored (``typecode`` for ``array.array``, ``itemsize``
bytes) and what Python type reads it back. Promotion follows PyTorch:

* two tensors: bool < uint8, int8 < int16 < int32 < int64 < float32 < float64, except that
  a float always wins over an int (int64 with float32 gives float32, not float64), and
  uint8 with int8 gives int16 (neither holds the other);
* a tensor and a Python number: the number only matters when it is of a higher kind
  (bool < int < float) than the tensor; it then gives that kind's default dtype
  (int64 for int, float32 for float). ``tensor_f32 * 2.5`` stays float32.

Half precision (chapter 1, "Half precision"). float16 (IEEE binary16: 5 exponent bits, 10
mantissa bits) and bfloat16 (float32's 8 exponent bits, 7 mantissa bits) are *storage*
types: a buffer holds their 16-bit patterns (typecode 'H'), and every computation on them
runs in their ``compute`` dtype, float32, rounding on store, as PyTorch's CPU does (the one
place that does so: backend.py, "Half precision"). ``encode`` turns a Python number into
what a buffer stores (the bits, rounded to nearest even through float32, as PyTorch
converts a double), ``decode`` reads it back; for the other dtypes the bits are the value.
Promotion as PyTorch's: float16 with bfloat16 gives float32 (neither holds the other), a
half with a wider float gives the wider one, with an int or a Python float stays half.

The small integers (uint8, int8, int16: images' pixels, quantized weights) are storage
types in the same way: held as they are, computed in int64 and wrapped on store, which is
what their own arithmetic gives (uint8's 250 + 10 is 4, as in PyTorch), so the devices need
only move and convert them.
"""
import builtins
import struct
from typing import NamedTuple


class DType:
    __slots__ = ("name", "typecode", "itemsize", "kind", "rank", "compute", "encode", "decode",
                 "is_floating_point")

    def __init__(self, name, typecode, itemsize, kind, rank, codec=None):
        self.name, self.typecode, self.itemsize = name, typecode, itemsize
        self.kind = kind      # 0 bool, 1 integer, 2 floating point
        # a field, not a property computed from kind: operations ask it on every call
        self.is_floating_point = kind == 2
        self.rank = rank      # order for promotion within everything
        # a half dtype's (encode, decode) of its bits; None: the stored value is the number
        self.compute = self if codec is None else None      # set below for the halves
        self.encode, self.decode = codec or (self.cast, self.cast)

    @property
    def is_half(self):
        """A 16-bit float stored as bits and computed in float32 (``compute``)."""
        return self.kind == 2 and self.compute is not self

    @property
    def is_stored(self):
        """Held in this dtype, computed in another (``compute``): the halves, the small ints."""
        return self.compute is not self

    def cast(self, x):
        """A Python number converted to what this dtype stores."""
        if self.compute is not self:                # rounded (wrapped) to what it holds
            return self.decode(self.encode(builtins.int(x) if self.kind == 1 else x))
        if self.kind == 2:
            return builtins.float(x)
        if self.kind == 1:
            return builtins.int(x)
        return builtins.bool(x)

    def __repr__(self):
        return f"tracegrad.{self.name}"

    def __reduce__(self):                   # pickles (and so save/load) by name
        return (by_name, (self.name,))


def _float32_bits(x):
    """The bits of x rounded to float32 (to nearest even; beyond float32's range, inf)."""
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:               # struct refuses what rounds to inf; PyTorch gives inf
        return 0xFF800000 if x < 0 else 0x7F800000


def _encode_float16(x):
    """x's float16 bits: via float32 (as PyTorch converts a double), to nearest even; a NaN
    keeps its sign and the top of its payload, quieted (as the C kernels, csrc/half.h)."""
    bits = _float32_bits(builtins.float(x))
    if bits & 0x7FFFFFFF > 0x7F800000:
        return ((bits >> 16) & 0x8000) | 0x7E00 | ((bits >> 13) & 0x3FF)
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:               # 65520 and beyond round to inf
        return 0xFC00 if x < 0 else 0x7C00


def _encode_bfloat16(x):
    """x's bfloat16 bits: float32's upper half, rounded to nearest even; NaN is 0x7FC0 (PyTorch's)."""
    x = builtins.float(x)
    if x != x:
        return 0x7FC0
    bits = _float32_bits(x)
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


_TABLES = {}


def _decoder(name, unpack):
    """decode for a half dtype: the 65536 values tabulated once, on first use."""
    def decode(bits):
        table = _TABLES.get(name)
        if table is None:
            table = _TABLES[name] = [unpack(b) for b in range(65536)]
        return table[bits]
    return decode


def _float16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def _bfloat16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _wrapping(bits, signed):
    """(encode, decode) of a small int: the value's low ``bits`` bits, read back signed or not
    (two's complement, as C's conversions and PyTorch's arithmetic wrap)."""
    mask, top = (1 << bits) - 1, 1 << (bits - 1)
    if signed:
        return (lambda x: ((builtins.int(x) + top) & mask) - top), builtins.int
    return (lambda x: builtins.int(x) & mask), builtins.int


bool_ = DType("bool", "B", 1, 0, 0)
uint8 = DType("uint8", "B", 1, 1, 1, _wrapping(8, False))
int8 = DType("int8", "b", 1, 1, 1, _wrapping(8, True))
int16 = DType("int16", "h", 2, 1, 2, _wrapping(16, True))
int32 = DType("int32", "i", 4, 1, 3)
int64 = DType("int64", "q", 8, 1, 4)
float16 = DType("float16", "H", 2, 2, 5, (_encode_float16, _decoder("float16", _float16_value)))
bfloat16 = DType("bfloat16", "H", 2, 2, 5, (_encode_bfloat16, _decoder("bfloat16", _bfloat16_value)))
float32 = DType("float32", "f", 4, 2, 6)
float64 = DType("float64", "d", 8, 2, 7)
float16.compute = bfloat16.compute = float32
uint8.compute = int8.compute = int16.compute = int64

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
HALVES = (float16, bfloat16)
SMALL_INTS = (uint8, int8, int16)
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
    if a.rank == b.rank and a is not b:     # neither holds the other: the next that holds both
        return float32 if a.kind == 2 else int16
    return a if a.rank >= b.rank else b


def promote_scalar(dtype, x):
    """The dtype of an operation on a tensor of `dtype` and the Python number x."""
    kind = kind_of_scalar(x)
    return DEFAULT_FOR_KIND[kind] if kind > dtype.kind else dtype


def infer(value):
    """The default dtype of a Python number (or nested list of them)."""
    return DEFAULT_FOR_KIND[kind_of_scalar(value)]


class FInfo(NamedTuple):
    """A floating-point dtype's numbers, as torch.finfo gives them."""
    bits: int
    eps: float          # the gap between 1 and the next value: a relative rounding of eps / 2
    max: float
    min: float
    tiny: float         # the smallest normal value
    resolution: float   # 10 ** -(decimal digits)
    dtype: str


_FINFO = {"float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 3),
          "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 2),
          "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 6),
          "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 15)}


def finfo(dtype=None):
    """The numbers of a floating-point dtype (float32 when None), as torch.finfo."""
    dtype = float32 if dtype is None else dtype
    if not isinstance(dtype, DType) or not dtype.is_floating_point:
        raise TypeError(f"finfo: expected a floating-point dtype such as tracegrad.float16, got {dtype!r}")
    bits, eps, big, tiny, digits = _FINFO[dtype.name]
    return FInfo(bits, eps, big, -big, tiny, 10.0 ** -digits, dtype.name)
