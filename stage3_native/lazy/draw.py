"""Drawing what the graph compiler's passes do to a graph (chapter 11, lazy execution and
kernel fusion), with Graphviz, in stage2_tensor/viz.py's style: DOT text rendered by `dot`.

    before = draw.snapshot(y, m)             # the graph as recorded, before any pass
    p = lazy.plan(draw.roots(y, m), cpu)     # canonicalize, dce, fuse, schedule
    draw.draw(p, "recorded", before)         # every recorded node, edges as recorded
    draw.draw(p, "canonical", before)        # copies readers no longer read: dashed
    draw.draw(p, "dead", before)             # nodes this read never runs: grey
    draw.draw(p, "fused", before)            # one box (cluster) per generated kernel

Why a snapshot: canonicalization rewrites the readers' arguments in place, so once plan()
has run, the recorded edges into a bypassed copy are gone. ``snapshot`` copies the nodes and
edges first. It keeps Nodes, never LazyBuffers or Views: dce.py counts references to
LazyBuffers to tell which values the program still holds, and a snapshot must not look
like a holder. A node the snapshot holds but the read does not need (the argmax beside
x.max(dim)'s values) is drawn dead: this read never runs it.

``draw`` returns a Drawing: ``.source`` is the DOT text (as a graphviz.Digraph's), Jupyter
shows it as SVG, and ``.render(path)`` writes an .svg or .png (stage1's render).
"""
import shutil
import subprocess

from stage1_scalargrad.viz import escape, render

from .graph import buffers_in
from .show import _node_of

STAGES = ("recorded", "canonical", "dead", "fused")
FILL = {"node": "#eef3fb", "buffer": "#fdf2d0", "stored": "#f6c28b", "register": "#d5ecd4", "dead": "#e0e0e0"}


class Snapshot:
    """The pending nodes the tensors need (inputs first) and the edges between them,
    (producer node, reader node), as recorded."""

    def __init__(self, nodes, edges):
        self.nodes, self.edges = nodes, edges


def snapshot(*tensors):
    from .realize import needed
    nodes = needed([_node_of(t) for t in tensors])
    return Snapshot(nodes, [(b.node, n) for n in nodes for b in buffers_in(n.args)])


def roots(*tensors):
    """The nodes of the tensors, as lazy.plan takes them."""
    return [_node_of(t) for t in tensors]


class Drawing:
    def __init__(self, source):
        self.source = source

    def __str__(self):
        return self.source

    def pipe(self, format="svg"):
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("draw: Graphviz's `dot` program was not found on PATH")
        return subprocess.run([dot, f"-T{format}"], input=self.source.encode(),
                              capture_output=True, check=True).stdout

    def _repr_svg_(self):
        return self.pipe("svg").decode()

    def render(self, path):
        return render(self.source, path)


def _label(node):
    name = f"{node.op} {node.args[0]}" if node.args and node.op in ("unary", "binary", "reduce") else node.op
    shape, dtype = node.outputs[0] if node.outputs and node.outputs[0] else ((), None)
    return escape(f"%{node.number} {name}") + "\\n" + escape(f"{shape} {dtype.name if dtype else ''}")


def draw(plan, stage="fused", before=None):
    """The graph of ``plan`` (lazy.plan's result) at ``stage`` (one of STAGES); ``before``:
    a snapshot taken before plan() ran (needed for the recorded edges of bypassed copies)."""
    if stage not in STAGES:
        raise ValueError(f"draw: stage must be one of {STAGES}, got {stage!r}")
    nodes = before.nodes if before is not None else plan.recorded
    recorded_edges = {}
    for src, dst in (before.edges if before is not None else ()):
        recorded_edges.setdefault(id(dst), []).append(src)
    in_plan = {id(n) for n in plan.recorded}
    dead = {id(n) for n in nodes if id(n) in plan.dead or id(n) not in in_plan}
    bypassed = set(plan.bypassed)

    def inputs(node):       # as recorded, or as the passes left them
        if stage == "recorded" or node.args is None:
            return recorded_edges.get(id(node), [])
        return [b.node for b in buffers_in(node.args)]

    shown = [n for n in nodes if not (stage == "fused" and id(n) in dead)]
    lines = ["digraph G {", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled"];',
             '  edge [color="#555555", arrowsize=0.6];']
    drawn = {id(n) for n in shown}

    def node_line(n, fill, extra=""):
        return f'  n{n.number} [label="{_label(n)}", fillcolor="{fill}"{extra}];'

    clustered = set()
    if stage == "fused":
        for i, step in enumerate(s for s in plan.steps if hasattr(s, "nodes")):
            lines.append(f"  subgraph cluster_{i} {{")
            lines.append(f'    label="kernel {i + 1}: {step.kind.name} {step.shape}, {len(step.stored)} of '
                         f'{len(step.nodes)} stored"; style="rounded,dashed"; color="#c05000"; fontsize=10;')
            for n in step.nodes:
                fill = FILL["stored"] if id(n) in step.stored else FILL["register"]
                lines.append("  " + node_line(n, fill))
                clustered.add(id(n))
            lines.append("  }")
    for n in shown:
        if id(n) in clustered:
            continue
        if stage in ("canonical", "dead") and id(n) in bypassed:
            lines.append(node_line(n, FILL["dead"], ', style="rounded,dashed,filled", color=gray50, fontcolor=gray40'))
        elif stage == "dead" and id(n) in dead:
            lines.append(node_line(n, FILL["dead"], ", color=gray50, fontcolor=gray40"))
        else:
            lines.append(node_line(n, FILL["node"]))
    buffers = {}
    for n in shown:
        for src in inputs(n):
            if src.realized and id(src) not in drawn:
                buffers.setdefault(src.number, src)
            faded = id(src) in bypassed and stage != "recorded" or (stage == "dead" and id(n) in dead)
            lines.append(f"  n{src.number} -> n{n.number}" + (" [style=dashed, color=gray60];" if faded else ";"))
    for number, src in buffers.items():
        shape, dtype = src.outputs[0]
        lines.append(f'  n{number} [label="buffer\\n{shape} {dtype.name}", shape=box, style=filled, '
                     f'fillcolor="{FILL["buffer"]}"];')
    lines.append("}")
    return Drawing("\n".join(lines) + "\n")


__all__ = ["STAGES", "Drawing", "Snapshot", "draw", "roots", "snapshot"]
