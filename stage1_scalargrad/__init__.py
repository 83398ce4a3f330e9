"""stage1_scalargrad: a scalar autograd engine (thesis chapter 3, "Scalar-level Autograd").

Every number is a `Value`, every operation a node (`operations.py`), and `backward()`
applies the chain rule as upstream gradient times local gradient (`backward.py`).
`nn` and `optim` build neural networks and their training on top; `viz` draws the graph.
"""
from .value import Value, add, mul

__all__ = ["Value", "add", "mul"]
