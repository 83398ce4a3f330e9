"""Small checks every operator family uses (chapter 13, "13_inference_compiler")."""
import math

from stage2_tensor.factories import host_memory


INT64_MAX = 2 ** 63 - 1


# No tensor larger than the machine's memory can be allocated (nor indexed past int64);
# where the system does not say how much it has, only the int64 check bounds a size.
MEMORY_BYTES = min(host_memory() or INT64_MAX, INT64_MAX)


def axis(node, value, ndim, what="axis"):
    """An axis in [-ndim, ndim) as a non-negative int; ValueError naming the node otherwise."""
    if not isinstance(value, int) or not -ndim <= value < max(ndim, 1):
        raise ValueError(f"{node.describe()}: {what} {value!r} is out of range for a {ndim}-d input")
    return value % ndim if ndim else 0


def ints_attr(node, key, default=None, length=None):
    """An attribute that must be a list of ints (of ``length`` when given)."""
    value = node.attr(key, default)
    if value is None:
        return None
    if isinstance(value, int):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{node.describe()}: attribute {key} must be a list of ints, got {value!r}")
    if length is not None and len(value) != length:
        raise ValueError(f"{node.describe()}: attribute {key} must have {length} entries, got {list(value)}")
    return list(value)


def number_attr(node, key, default):
    value = node.attr(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{node.describe()}: attribute {key} must be a finite number, got {value!r}")
    return value


def count_inputs(node, inputs, low, high=None):
    """ValueError unless ``low..high`` inputs are present (the first ``low`` required)."""
    high = low if high is None else high
    if len(inputs) > high or len(inputs) < low or any(v is None for v in inputs[:low]):
        raise ValueError(f"{node.describe()}: expected {low}" + (f" to {high}" if high != low else "")
                         + f" inputs, got {len(inputs)} ({', '.join(node.inputs) or 'none'})")


def check_size(node, shape, itemsize, what="output"):
    """``shape`` as a tuple, or ValueError naming the node: an extent is negative, or a tensor
    of that shape (``itemsize`` bytes an element) would not fit in this machine's memory.
    Called before an operator allocates a size the model computes (a Range's bounds, a
    Resize's sizes, pads, repeats), so a tiny file cannot ask for terabytes; onnxruntime
    fails such a node with an allocation error naming it."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"{node.describe()}: its {what} would have shape {shape}; extents must be non-negative")
    if math.prod(d for d in shape if d) * itemsize > INT64_MAX:
        # (a 0 empties the tensor, but the strides, products of the extents, are int64s)
        raise ValueError(f"{node.describe()}: its {what} of shape {shape} has extents past what int64 strides index")
    nbytes = math.prod(shape) * itemsize
    if nbytes > MEMORY_BYTES:
        raise ValueError(f"{node.describe()}: its {what} of shape {shape} asks for {nbytes} bytes, more than "
                         f"this machine's memory ({MEMORY_BYTES} bytes)")
    return shape
