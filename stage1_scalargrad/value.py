"""`Value`: one scalar of the computation graph (chapter 3, "Scalar-level Autograd").

A Value holds its number (``data``), its gradient (``grad``) and, when an operation
produced it, that operation's class (``op``) and the Values it read (``inputs``). That is
the whole graph: plain records pointing from outputs to inputs. No closures and no
back-pointers, so the graph has no reference cycles and Python frees it by reference
counting the moment the last Value is dropped.
"""
import numbers

from . import operations as ops
from .backward import backward, topological_order


class Value:
    __slots__ = ("data", "grad", "op", "inputs", "visit")

    def __init__(self, data, op=None, inputs=()):
        if type(data) is not float:          # fast path: every operation returns a float
            if not isinstance(data, numbers.Real):
                raise TypeError(f"Value needs a real number (int or float), "
                                f"got {type(data).__name__}: {data!r}")
            data = float(data)
        self.data = data
        self.grad = 0.0
        self.op = op            # the Operation class that produced this value, None for a leaf
        self.inputs = inputs    # the Values the operation read, in order
        self.visit = None       # where a graph traversal left this node (see backward.py)

    @staticmethod
    def apply(op, *inputs):
        """Run ``op`` forward on Values (or plain numbers) and record it in the graph."""
        for x in inputs:
            if type(x) is not Value:         # plain numbers become leaf Values
                inputs = tuple([x if type(x) is Value else Value(x) for x in inputs])
                break
        return Value(op.forward(*[x.data for x in inputs]), op, inputs)

    def backward(self):
        """Backpropagate from this value: each value it was computed from gets
        d self / d value. Leaves accumulate it into ``grad`` across calls, as in PyTorch;
        the operations' outputs show the latest pass."""
        backward(self)

    def zero_grad(self):
        """Reset ``grad`` to 0 on this value and every value it was computed from."""
        for v in topological_order(self):
            v.grad = 0.0

    def __repr__(self):
        return f"Value(data={self.data!r}, grad={self.grad!r})"


# The operators: each is `Value.apply` specialised to one Operation with one or two inputs.
# They run once per graph node, so skipping apply's generic argument handling matters
# (benchmarks/stage1_scalar.py times the engine); what they compute is exactly
# `Value.apply(op, ...)`.

def _unary(op):
    forward = op.forward

    def method(self):
        return Value(forward(self.data), op, (self,))
    method.__doc__ = f"{op.name}(self), recorded as a {op.__name__} node."
    return method


def _binary(op, reflected=False):
    forward = op.forward

    def method(self, other):
        if type(other) is not Value:         # a plain number becomes a leaf Value
            other = Value(other)
        return Value(forward(self.data, other.data), op, (self, other))

    def reflected_method(self, other):       # `2 * v` calls v.__rmul__(2): 2 is the left input
        other = Value(other)
        return Value(forward(other.data, self.data), op, (other, self))

    method.__doc__ = reflected_method.__doc__ = f"{op.name}, recorded as a {op.__name__} node."
    return reflected_method if reflected else method


for _name, _op in [("add", ops.Add), ("sub", ops.Sub), ("mul", ops.Mul),
                   ("truediv", ops.Div), ("pow", ops.Pow)]:
    setattr(Value, f"__{_name}__", _binary(_op))
    setattr(Value, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in [("__neg__", ops.Neg), ("exp", ops.Exp), ("log", ops.Log),
                   ("tanh", ops.Tanh), ("sigmoid", ops.Sigmoid), ("relu", ops.ReLU)]:
    setattr(Value, _name, _unary(_op))
del _name, _op


def add(*values):
    """a + b + c + ... as one graph node (its local gradients are all 1)."""
    return Value.apply(ops.Sum, *values)


def mul(*values):
    """a * b * c * ... as one graph node (local gradients by prefix and suffix products)."""
    return Value.apply(ops.Product, *values)
