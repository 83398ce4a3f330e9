"""Drawing computation graphs with the ``graphviz`` package (chapter 3, "The chain rule as
upstream x local"; stage2's viz, the lazy compiler's and the ONNX compiler's drawings build
on these helpers).

``draw(root)`` returns a ``graphviz.Digraph``: Jupyter shows it inline, ``.source`` is its
DOT text and ``.render()`` writes a file. ``save(graph, path)`` writes it as an .svg or .png
(chosen by the suffix) and returns the path, which is how the chapters keep their figures.
Rendering needs Graphviz's ``dot`` program, a system package (``make setup`` installs it).

graphviz is imported inside the functions that draw, never at the top of a module: the
engines import their viz modules, and ``import stage2_tensor`` stays standard library only.
"""
from pathlib import Path

from .backward import topological_order

INSTALL_HINT = "install Graphviz, e.g. `sudo apt-get install graphviz` (or `brew install graphviz`)"
FORMATS = ("svg", "png")


def escape(text):
    """Text made safe inside a record label: graphviz quotes the label, but a record gives
    {, }, |, < and > a meaning, and a backslash starts an escape."""
    out = str(text).replace("\\", "\\\\").replace('"', '\\"')
    for ch in "{}|<>":
        out = out.replace(ch, "\\" + ch)
    return out


def digraph(rankdir="LR", fontsize=11):
    """An empty ``graphviz.Digraph`` in the project's style (Helvetica, ``rankdir``)."""
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"digraph: rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    import graphviz
    return graphviz.Digraph(graph_attr={"rankdir": rankdir},
                            node_attr={"fontname": "Helvetica", "fontsize": str(fontsize)})


def save(graph, path):
    """Write ``graph`` (a graphviz.Digraph or graphviz.Source) as an image at ``path``, an
    .svg or a .png by its suffix, and return the path. Unlike ``graph.render`` it leaves no
    DOT file beside the image."""
    import graphviz
    if not isinstance(graph, (graphviz.Digraph, graphviz.Graph, graphviz.Source)):
        raise TypeError(f"save: expected a graphviz.Digraph or graphviz.Source, got {type(graph).__name__}")
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"save: path must end in .svg or .png, got {path.name!r}")
    try:
        image = graph.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise RuntimeError(f"save: Graphviz's `dot` program was not found on PATH; {INSTALL_HINT}") from None
    except graphviz.CalledProcessError as err:
        stderr = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else str(err.stderr)
        raise RuntimeError(f"save: dot failed: {stderr.strip()}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image)
    return path


def draw(root, names=None, rankdir="LR"):
    """The graph below ``root`` as a graphviz.Digraph: a record node per Value (its data and
    grad) and an ellipse per operation. ``names`` maps Values to labels shown beside their
    numbers. Node ids come from the traversal, so the same graph gives the same source."""
    names = names or {}
    g = digraph(rankdir)
    number = {}
    for i, v in enumerate(topological_order(root)):
        number[v] = i
        label = f"data {v.data:.4g} | grad {v.grad:.4g}"
        if v in names:
            label = f"{escape(names[v])} | {label}"
        g.node(f"v{i}", label=f"{{ {label} }}", shape="record")
        if v.op is not None:
            g.node(f"op{i}", label=escape(v.op.symbol), shape="ellipse", style="filled", fillcolor="#eef3fb")
            g.edge(f"op{i}", f"v{i}")
            for x in v.inputs:
                g.edge(f"v{number[x]}", f"op{i}")
    return g
