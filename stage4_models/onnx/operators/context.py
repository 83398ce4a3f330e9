"""What operators share while a plan runs (chapter 13, "13_inference_compiler"): the device,
the float dtype, and the conversions between host values and device tensors."""
import stage2_tensor as tg
from stage2_tensor import dtypes

from .host import HostTensor


def tg_dtype(name, where):
    """tracegrad's dtype for a numpy dtype name; ValueError for one tracegrad lacks."""
    try:
        return dtypes.by_name(name)
    except (KeyError, ValueError):
        raise ValueError(f"{where}: dtype {name} is not supported (tracegrad has float16, float32, "
                         "float64, int32, int64, bool)") from None


class Context:
    def __init__(self, device="cpu", float_dtype=None):
        self.device = device
        self.float_dtype = float_dtype      # a tracegrad dtype every float is stored in, or None: keep

    def tensor(self, value, node=None):
        """A value as a device Tensor (host values are copied over)."""
        if value is None or not isinstance(value, HostTensor):
            return value
        dtype = tg_dtype(value.dtype, node.describe() if node else "host value")
        return tg.tensor(value.values, dtype=dtype, device=self.device).reshape(value.shape)

    def host(self, value, node, what):
        """A HostTensor, or ValueError: ``what`` must be known while the plan is made."""
        if isinstance(value, HostTensor):
            return value
        if value is None:
            raise ValueError(f"{node.describe()}: input {what} is missing")
        raise ValueError(f"{node.describe()}: {what} must be a constant or computed from shapes, "
                         "known while the plan is made; here it is computed from the data at run time")

    def ints(self, value, node, what):
        """A host value's entries as Python ints (a Reshape's shape, a Slice's bounds)."""
        h = self.host(value, node, what)
        if h.dtype not in ("int64", "int32", "int16", "int8", "uint8"):
            raise ValueError(f"{node.describe()}: {what} must be integers, got dtype {h.dtype}")
        return [int(v) for v in h.values]

    def constant(self, array):
        """A numpy array from the model (an initializer, a Constant) as a host value when it
        is shape arithmetic (small, integer), else as a device tensor in the float dtype."""
        from .host import fits_host, from_numpy
        if fits_host(array.dtype.name, array.shape):
            return from_numpy(array)
        if array.dtype.name == "float16" or array.dtype.kind not in "fiub":
            raise ValueError(f"constant of dtype {array.dtype.name} is not supported")
        if array.dtype.kind in "iu" and array.dtype.name not in ("int32", "int64"):
            array = array.astype("int64")           # tracegrad's integers are int32 and int64
        t = tg.from_numpy(array.copy(), device=self.device)
        if self.float_dtype is not None and t.dtype.is_floating_point and t.dtype is not self.float_dtype:
            t = t.to(dtype=self.float_dtype)
        return t
