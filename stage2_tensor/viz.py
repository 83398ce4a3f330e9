"""Drawing and printing tensor-level computation graphs (chapter 4, "Tensor-level autograd").

The graph below a tensor ``t`` is what the backward pass walks: ``t.grad_fn`` (the
GradientFunction that produced it) and that function's ``inputs``, and so on down to the
leaves (``grad_fn is None``). Here every tensor and every function is one node:

* ``draw(t)`` returns a ``graphviz.Digraph`` (Jupyter shows it inline, ``.source`` is its
  DOT text): a record per tensor (optional name, shape, dtype, and the shape of ``.grad``
  once backward has set it) and an ellipse per GradientFunction (its name, e.g.
  ``MatMul``). Leaves that require grad are shaded; tensors that do not require grad
  (constants) hang on dashed edges, because no gradient is ever sent along them.
* ``save(graph, path)`` (stage1's) writes it as an .svg or .png, by the path's suffix.
* ``print_dag(t)`` prints the same graph as an indented text tree.

graphviz is imported only when a graph is drawn (stage1's ``digraph``): ``import
stage2_tensor`` stays standard library only. Node numbers come from the traversal, never
from ``id()``, so the same graph gives the same source every time. Both traversals use an explicit stack: a chain of thousands of operations
does not hit Python's recursion limit.
"""
from stage1_scalargrad.viz import digraph, escape, save

__all__ = ["draw", "save", "print_dag", "format_dag"]


def _fmt_shape(shape):
    return str(tuple(shape))                  # (2, 3), (4,), ()


def _name_lookup(names):
    """``names`` maps tensors to labels ({a: "a"}); {"a": a} is accepted too. Tensors
    compare elementwise with ==, so the lookup goes by identity."""
    if not names:
        return {}
    lookup = {}
    for key, value in names.items():
        tensor, label = (value, key) if isinstance(key, str) else (key, value)
        lookup[id(tensor)] = str(label)
    return lookup


def _inputs(t):
    return t.grad_fn.inputs if t.grad_fn is not None else ()


def topological_tensors(root):
    """Tensors reachable from ``root`` through grad_fn.inputs, each after its inputs (an
    iterative depth-first search, inputs taken in their order)."""
    order, state = [], {}            # state: id -> "open" (inputs pending) / "done"
    keep = []                        # holds the tensors so their ids stay unique meanwhile
    stack = [root]
    while stack:
        t = stack.pop()
        s = state.get(id(t))
        if s == "done":
            continue
        if s == "open":
            state[id(t)] = "done"
            order.append(t)
            continue
        state[id(t)] = "open"
        keep.append(t)
        stack.append(t)
        stack.extend(reversed(_inputs(t)))   # reversed: the first input is explored first
    return order


def _tensor_label(t, name):
    parts = [f"{_fmt_shape(t.shape)} {t.dtype.name}"]
    if t.grad_fn is None and t.requires_grad:
        parts[0] += ", requires grad"
    if t.grad_fn is None and not t.requires_grad and t.numel() == 1:
        parts.append(f"value {t.item():.4g}")        # a constant such as the 2 in x * 2
    if t.grad is not None:
        parts.append(f"grad {_fmt_shape(t.grad.shape)}")
    if name is not None:
        parts.insert(0, name)
    return " | ".join(escape(p) for p in parts)


def draw(t, names=None, rankdir="LR"):
    """The graph below tensor ``t`` as a graphviz.Digraph: record nodes ``t0, t1, ...`` for
    tensors (inputs before outputs) and ellipses ``f0, f1, ...`` for GradientFunctions."""
    names = _name_lookup(names)
    g = digraph(rankdir)
    number = {}
    fn_count = 0
    for t_ in topological_tensors(t):
        i = number[id(t_)] = len(number)
        shaded = t_.grad_fn is None and t_.requires_grad          # a leaf we want .grad of
        style = {"style": "filled", "fillcolor": "#fdf2d0"} if shaded else {}
        label = _tensor_label(t_, names.get(id(t_)))
        if rankdir not in ("LR", "RL"):      # fields stack across the rank direction
            label = f"{{ {label} }}"
        g.node(f"t{i}", label=label, shape="record", **style)
        fn = t_.grad_fn
        if fn is None:
            continue
        f = fn_count
        fn_count += 1
        g.node(f"f{f}", label=escape(fn.name), shape="ellipse", style="filled", fillcolor="#eef3fb")
        for x in fn.inputs:
            dashed = {} if x.requires_grad else {"style": "dashed", "color": "gray50"}
            g.edge(f"t{number[id(x)]}", f"f{f}", **dashed)
        g.edge(f"f{f}", f"t{i}")
    return g


def _tensor_text(t, name):
    text = f"{_fmt_shape(t.shape)} {t.dtype.name}"
    if name is not None:
        text = f"{name}: {text}"
    if t.grad_fn is not None:
        text += f"  <- {t.grad_fn.name}"
    elif t.requires_grad:
        text += "  (leaf, requires grad)"
    else:
        text += "  (constant" + (f" {t.item():.4g})" if t.numel() == 1 else ")")
    if t.grad is not None:
        text += f"  grad {_fmt_shape(t.grad.shape)}"
    return text


def format_dag(t, names=None, indent="    "):
    """The text ``print_dag`` prints. Each tensor line shows its number, optional name,
    shape, dtype and the function that produced it; that function's inputs follow, one
    level deeper. A tensor reached a second time is printed as a reference to its number."""
    names = _name_lookup(names)
    lines, number, keep = [], {}, []
    stack = [(t, 0)]
    while stack:
        x, depth = stack.pop()
        pad = indent * depth
        if id(x) in number:
            name = names.get(id(x))
            lines.append(f"{pad}[{number[id(x)]}] {name + ' ' if name else ''}(shown above)")
            continue
        number[id(x)] = len(number)
        keep.append(x)
        lines.append(f"{pad}[{number[id(x)]}] {_tensor_text(x, names.get(id(x)))}")
        stack.extend((inp, depth + 1) for inp in reversed(_inputs(x)))
    return "\n".join(lines)


def print_dag(t, names=None):
    """Print the graph below ``t`` as an indented tree (see ``format_dag``)."""
    print(format_dag(t, names))
