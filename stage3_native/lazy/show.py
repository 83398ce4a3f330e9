"""Printing the recorded graph (chapter 11): what a tensor of device "cpu:lazy" is waiting
for, one node a line, inputs first:

    %1 = buffer (2, 3) float32
    %2 = buffer (3,) float32
    %3 = binary add(%1, %2<(2, 3):(0, 1)>) (2, 3) float32
    %4 = unary exp(%3) (2, 3) float32

Numbers are given in the order of the listing. A finished buffer a pending node reads is a
"buffer" line; a view of a buffer other than its plain layout shows its shape:strides (and
+offset); output i of a node with several is %n.i.
"""
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides, numel

from .graph import LazyBuffer, needed


def _node_of(x):
    """A tensor's, LazyBuffer's or node's node."""
    if hasattr(x, "storage"):
        x = x.storage.buffer
    return x.node if isinstance(x, LazyBuffer) else x


def pending(*tensors):
    """The nodes not run yet that the tensors' values need, in an order they can run in."""
    return needed([_node_of(t) for t in tensors])


def graph(*tensors):
    """The listing above, as text, for the tensors' pending nodes and the buffers they read."""
    names, shown, lines = {}, {}, []    # (node, output index) -> "%n", -> the shape its line shows

    def name(b, view):
        """A LazyBuffer's name in the listing; a finished one gets its "buffer" line now."""
        if not b.node.realized:
            return names[id(b.node), None] + ("" if b.index is None else f".{b.index}")
        key = (id(b.node), b.index)
        if key not in names:
            names[key] = f"%{len(names) + 1}"
            shape, dtype = b.node.outputs[b.index or 0]
            shown[key] = shape = _as_read(shape, view)
            lines.append(f"{names[key]} = buffer {shape} {dtype.name}")
        return names[key]

    def arg(a):
        if isinstance(a, View) and isinstance(a.buffer, LazyBuffer):
            b = a.buffer
            text = name(b, a)
            if not (a.offset == 0 and tuple(a.strides) == make_strides(a.shape)
                    and shown.get((id(b.node), b.index)) == tuple(a.shape)):
                text += f"<{tuple(a.shape)}:{tuple(a.strides)}" + (f"+{a.offset}" if a.offset else "") + ">"
            return text
        if isinstance(a, list):
            return "[" + ", ".join(arg(x) for x in a) + "]"
        return repr(a)

    for node in pending(*tensors):
        first = 1 if node.op in NAMED else 0
        text = f"{node.op} {node.args[0]}" if first else node.op
        # dtype arguments left out: the result's dtype ends the line
        text += "(" + ", ".join(arg(a) for a in node.args[first:] if not hasattr(a, "itemsize")) + ")"
        label = names[id(node), None] = f"%{len(names) + 1}"
        outputs = node.outputs
        for i, o in enumerate(outputs):
            if o is not None:
                shown[id(node), None if len(outputs) == 1 else i] = o[0]
        if len(outputs) == 1:
            lines.append(f"{label} = {text} {_describe(outputs[0])}")
        else:
            lines.append(f"{label} = {text} -> " + ", ".join(_describe(o) for o in outputs))
    return "\n".join(lines)


NAMED = ("unary", "binary", "reduce")       # methods whose first argument names the operation


def _as_read(shape, view):
    """A finished buffer's shape: the view's when it reads the whole buffer in order (data
    is made flat: from_flat knows no shape), else the one recorded."""
    if view.offset == 0 and tuple(view.strides) == make_strides(view.shape) and numel(view.shape) == numel(shape):
        return tuple(view.shape)
    return shape


def _describe(output):
    return "None" if output is None else f"{output[0]} {output[1].name}"
