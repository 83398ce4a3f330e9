"""Small checks every operator family uses (chapter 13, "13_inference_compiler")."""
import math


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
