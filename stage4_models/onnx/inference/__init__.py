"""Symbolic shape inference at import (chapter 13, "13_inference_compiler": symbolic shapes).

``infer(graph)`` walks the imported graph once, front to back, and gives every value a
shape whose dims are expressions (``symbolic.Expr``) of the graph inputs' dims: a dim the
model names (``dim_param`` "H") is ``Dim("H")``, an unnamed dynamic one is named after its
input and position (``x_d2``), a static one is an int. Each ONNX operator has a *rule*
(``rules_spatial.py``: windows, resizing, padding, slicing; ``rules_layout.py``: reshaping,
concatenating, products, reductions; ``rules_arith.py``: element-wise ops and the shape
arithmetic itself) that gives its outputs' shapes from its inputs'. Shape arithmetic
(Shape, Gather, Concat, Mod, Sub... of shapes) is evaluated on symbolic *values*, so a Pad
or Slice fed by it gets expressions: the padded U-net's pads ``(2 - H % 2) % 2`` are ``H % 2``
in canonical form, its padded extent ``H + H % 2``.

Where two extents must be equal (a Concat's non-axis dims, a broadcast's dims that are not
1), the rule asks the solver to prove it for every input; a failed proof refuses the
model with a ``ShapeRefusal`` (a ValueError) naming the node and both expressions. This is
how the unpadded U-net is refused at import: ``cannot prove the extents H and
2*(H // 2) equal``.

The fallback: an operator without a rule, or a rule that meets what it cannot express
(a Slice bound of unknown sign, a Squeeze of symbolic dims without axes), gives an
operator that keeps its input's rank (``RANK_KEEPING``) fresh symbols ``?node#k`` as dims,
and any other an unknown rank (shape None); a Resize dim whose float scale has no exact
integer expression (1.7: floor(H * 1.7) rounds) alone becomes such a symbol.
``Inference.fallbacks`` lists each (node, reason): none for the backend test models. A proof involving an
unknown symbol never refuses a model: the check is left to the operators at run time.
"""
from ..symbolic import Context, Dim
from ..symbolic.expr import Op
from .values import INT_DTYPES, MAX_TERMS, CannotInfer, ShapeRefusal, Sym, format_shape, size  # noqa: F401

RULES = {}
# operators whose first output has their first input's rank, whatever their attributes
RANK_KEEPING = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "Resize", "Upsample", "Pad", "Slice",
                "Tile", "DepthToSpace", "SpaceToDepth")


def rule(*op_types):
    """Decorator: the function gives the output Syms of these operators,
    ``fn(inference, node, inputs) -> [Sym, ...]`` (inputs: Syms, None where left out)."""
    def add(fn):
        for op_type in op_types:
            RULES[op_type] = fn
        return fn
    return add


from . import rules_arith, rules_layout, rules_spatial  # noqa: E402,F401  (their registrations)


def input_shape(value):
    """A graph input's symbolic shape: ints, ``Dim(dim_param)``, or ``Dim("<input>_d<i>")``."""
    if value.shape is None:
        return None
    return tuple(d if isinstance(d, int) and d > 0 else Dim(d if isinstance(d, str) and d else
                                                              f"{value.name}_d{i}")
                 for i, d in enumerate(value.shape))


class Inference:
    """The result: ``syms`` (value name -> Sym), ``fallbacks`` ([(node, reason)]), the
    ``proofs`` that needed the solver ([(where, Proof)]), and the solver ``ctx`` they were
    made in."""

    def __init__(self, graph):
        from .values import from_array
        self.graph, self.ctx = graph, Context()
        self.syms, self.fallbacks, self._fresh = {}, [], 0
        self.proofs = []        # (where, Proof) for each equality the canonical forms did not show
        for name, array in graph.constants.items():
            self.syms[name] = from_array(array)
        for v in graph.inputs:
            self.syms[v.name] = Sym(input_shape(v), v.dtype)
        for node in graph.nodes:
            self._infer(node)

    def _infer(self, node):
        inputs = [self.syms.get(name) if name else None for name in node.inputs]
        fn = RULES.get(node.op_type)
        try:
            if fn is None:
                raise CannotInfer("no rule for this operator")
            outputs = list(fn(self, node, inputs))
            if any(s.shape is not None and any(size(d) > MAX_TERMS for d in s.shape) for s in outputs):
                raise CannotInfer(f"an extent has more than {MAX_TERMS} terms")
        except ShapeRefusal:
            raise
        except (CannotInfer, ValueError, TypeError, IndexError, KeyError, ArithmeticError) as e:
            # A rule's failure is no refusal: the operators check their inputs at run time.
            self.fallbacks.append((node, f"{type(e).__name__}: {e}"))
            outputs = self._unknown(node, inputs)
        for i, name in enumerate(node.outputs):
            if name:
                self.syms[name] = outputs[i] if i < len(outputs) else Sym()

    def _unknown(self, node, inputs):
        # The fallback: an operator that keeps its input's rank gets a fresh symbol per dim
        # (a later Concat or broadcast with it is checked at run time); others, no rank.
        x = inputs[0] if inputs else None
        if node.op_type in RANK_KEEPING and x is not None and x.shape is not None:
            return [Sym([self.fresh(node.name) for _ in x.shape], x.dtype)]
        return []

    def fresh(self, label):
        """A fresh symbol for a dim no rule gives: ``?label#k``, k counting in this graph."""
        self._fresh += 1
        return Dim(f"?{label}#{self._fresh - 1}")

    def shape(self, name):
        return self.syms[name].shape

    def bind(self, shapes):
        """The symbols' values for concrete input shapes (input name -> tuple of ints): each
        input dim that is a symbol takes the fed extent. ValueError where a static dim, or a
        symbol two inputs share, disagrees with what is fed."""
        values = {}
        for v in self.graph.inputs:
            dims = self.syms[v.name].shape
            if dims is None or v.name not in shapes:
                continue
            fed = tuple(shapes[v.name])
            if len(fed) != len(dims):
                raise ValueError(f"input {v.name!r}: expected {len(dims)} dims, got shape {fed}")
            for d, n in zip(dims, fed):
                atom = d.single_atom()
                name = atom.args[0] if atom is not None and atom.kind == Op.SYM else None
                expected = values.get(name) if name else (d.const if d.is_constant() else None)
                if expected is not None and expected != n:
                    raise ValueError(f"input {v.name!r}: dim {d} is {expected}, got shape {fed}")
                if name:
                    values[name] = int(n)
        return values

    def table(self):
        """Each value's shape, one line each, with the value of shape arithmetic (what
        ``session.shapes()`` prints)."""
        def line(name, origin):
            sym = self.syms[name]
            text = f"{name}: {format_shape(sym.shape)}"
            if sym.value is not None and sym.value.size and sym.dtype in INT_DTYPES:
                text += " = [" + ", ".join(str(v) for v in sym.value.reshape(-1)) + "]"
            return f"{text}  ({origin})"
        lines = [line(v.name, "input") for v in self.graph.inputs]
        for node in self.graph.nodes:
            lines += [line(name, node.op_type) for name in node.outputs if name]
        return "\n".join(lines)


def infer(graph):
    """Infer every value's symbolic shape; store it on the IR (``graph.symbolic``, and
    ``Value.sym_shape`` on the inputs and outputs); return the ``Inference``. Raises a
    ``ShapeRefusal`` (ValueError) for a model whose extents cannot be proven compatible."""
    result = Inference(graph)
    graph.symbolic = result
    for v in graph.inputs + graph.outputs:
        v.sym_shape = result.syms[v.name].shape if v.name in result.syms else None
    return result
