"""PyTorch's legacy tensor types, still common in older programs: ``torch.FloatTensor``,
``torch.LongTensor``, ... (a dtype's constructor, and a class ``isinstance`` checks
against), the constructor ``torch.Tensor(2, 3)`` / ``torch.Tensor([1, 2])`` (float32), and
``Tensor.type()``, which names a tensor's type ("torch.FloatTensor") or converts it.

Each type is a dtype on the host: ``isinstance(t, FloatTensor)`` is whether t is float32
and not on a GPU, as PyTorch's answer is for a CPU tensor. The constructors take sizes
(``LongTensor(2, 3)``: zeros, where PyTorch leaves the memory uninitialised), data
(``LongTensor([1, 2])``, converted to the dtype as ``tensor(data, dtype=...)`` does), a
tensor of the dtype (an alias of its storage, as PyTorch) or nothing (an empty tensor).
"""
import numbers

from . import dtypes, factories
from .strides import Size
from .tensor import Tensor

NAMES = {dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor", dtypes.float16: "HalfTensor",
         dtypes.bfloat16: "BFloat16Tensor", dtypes.int64: "LongTensor", dtypes.int32: "IntTensor",
         dtypes.bool_: "BoolTensor", dtypes.uint8: "ByteTensor", dtypes.int8: "CharTensor",
         dtypes.int16: "ShortTensor"}
_BY_NAME = {name: dtype for dtype, name in NAMES.items()}


def _on_gpu(device):
    return device.startswith("cuda")


def legacy_new(dtype, args, name, device=None):
    """A tensor of ``dtype`` from a legacy constructor's arguments: sizes, one sequence of
    data (or numpy array), a tensor of that dtype (an alias), or nothing."""
    if not args:
        return factories.empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dtype or (device is not None and device != first.device):
            raise TypeError(f"{name}(): a tensor given to it must be {dtype.name} on its device (an "
                            f"alias of it is made), got {first.dtype.name} on {first.device!r}; "
                            "convert it with .to(...)")
        return first.detach()
    if isinstance(first, Size) and len(args) == 1:
        args = tuple(first)
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return factories.zeros(*args, dtype=dtype, device=device)
    if len(args) == 1 and (isinstance(first, (list, tuple)) or hasattr(first, "__array__")):
        return factories.tensor(first, dtype=dtype, device=device)
    raise TypeError(f"{name}(): expected sizes (ints), one sequence of data or a tensor, got "
                    f"({', '.join(type(a).__name__ for a in args)})")


class LegacyType(type):
    """The class of FloatTensor, LongTensor, ...: calling one makes a tensor of its dtype;
    ``isinstance`` asks for that dtype on the host."""

    def __call__(cls, *args, device=None):
        return legacy_new(cls.dtype, args, cls.__name__, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and not _on_gpu(obj.device)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(dtype):
    name = NAMES[dtype]
    return LegacyType(name, (), {"dtype": dtype, "__doc__": f"torch.{name}: {dtype.name} tensors "
                                 f"on the host; {name}(2, 3) or {name}(data) makes one."})


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, BoolTensor, ByteTensor, CharTensor,
 ShortTensor) = (_legacy_type(d) for d in (dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16,
                                           dtypes.int64, dtypes.int32, dtypes.bool_, dtypes.uint8, dtypes.int8,
                                           dtypes.int16))


def type_name(t):
    """'torch.FloatTensor' for a float32 tensor, 'torch.cuda.FloatTensor' on a GPU."""
    return ("torch.cuda." if _on_gpu(t.device) else "torch.") + NAMES[t.dtype]


def convert(t, target):
    """t.type(target): t as a dtype, a legacy type or a type's name ('torch.LongTensor',
    'torch.cuda.FloatTensor' moves it to the GPU; a host type's name brings it back)."""
    if isinstance(target, dtypes.DType):
        return t.to(dtype=target)
    if isinstance(target, LegacyType):
        target = "torch." + target.__name__
    if not isinstance(target, str):
        raise TypeError(f"type(): expected a dtype, a tensor type or its name such as "
                        f"'torch.LongTensor', got {type(target).__name__}")
    gpu = target.startswith("torch.cuda.")
    prefix = "torch.cuda." if gpu else "torch."
    dtype = _BY_NAME.get(target[len(prefix):]) if target.startswith(prefix) else None
    if dtype is None:
        raise ValueError(f"invalid type: {target!r} (expected a name such as 'torch.FloatTensor', "
                         f"'torch.LongTensor' or 'torch.cuda.FloatTensor')")
    if gpu:
        return t.to(device="cuda", dtype=dtype)
    return (t.cpu() if _on_gpu(t.device) else t).to(dtype=dtype)
