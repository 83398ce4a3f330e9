"""Drawing what the graph compiler's passes do to a graph (chapter 11, lazy execution and
kernel fusion), with the graphviz package, in stage2_tensor/viz.py's style.

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

``draw`` returns a graphviz.Digraph: ``.source`` is the DOT text, Jupyter shows it inline,
and stage1_scalargrad.viz.save(graph, path) writes an .svg or .png.
"""
from stage1_scalargrad.viz import digraph, escape

from .graph import needed
from .show import _node_of

STAGES = ("recorded", "canonical", "dead", "fused")
FILL = {"node": "#eef3fb", "buffer": "#fdf2d0", "stored": "#f6c28b", "register": "#d5ecd4", "dead": "#e0e0e0"}


class Snapshot:
    """The pending nodes the tensors need (inputs first) and the edges between them,
    (producer node, reader node), as recorded."""

    def __init__(self, nodes, edges):
        self.nodes, self.edges = nodes, edges


def snapshot(*tensors):
    nodes = needed([_node_of(t) for t in tensors])
    return Snapshot(nodes, [(p, n) for n in nodes for p in n.inputs()])


def roots(*tensors):
    """The nodes of the tensors, as lazy.plan takes them."""
    return [_node_of(t) for t in tensors]


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
        return node.inputs()

    shown = [n for n in nodes if not (stage == "fused" and id(n) in dead)]
    g = digraph("TB", fontsize=10)
    g.attr("node", shape="box", style="rounded,filled")
    g.attr("edge", color="#555555", arrowsize="0.6")
    drawn = {id(n) for n in shown}

    def add_node(graph, n, fill, **extra):
        graph.node(f"n{n.number}", label=_label(n), fillcolor=fill, **extra)

    faded_node = {"color": "gray50", "fontcolor": "gray40"}
    clustered = set()
    if stage == "fused":
        for i, step in enumerate(s for s in plan.steps if hasattr(s, "nodes")):
            with g.subgraph(name=f"cluster_{i}") as cluster:
                cluster.attr(label=f"kernel {i + 1}: {step.kind.name} {step.shape}, {len(step.stored)} of "
                                   f"{len(step.nodes)} stored", style="rounded,dashed", color="#c05000", fontsize="10")
                for n in step.nodes:
                    add_node(cluster, n, FILL["stored"] if id(n) in step.stored else FILL["register"])
                    clustered.add(id(n))
    for n in shown:
        if id(n) in clustered:
            continue
        if stage in ("canonical", "dead") and id(n) in bypassed:
            add_node(g, n, FILL["dead"], style="rounded,dashed,filled", **faded_node)
        elif stage == "dead" and id(n) in dead:
            add_node(g, n, FILL["dead"], **faded_node)
        else:
            add_node(g, n, FILL["node"])
    buffers = {}
    for n in shown:
        for src in inputs(n):
            if src.realized and id(src) not in drawn:
                buffers.setdefault(src.number, src)
            faded = id(src) in bypassed and stage != "recorded" or (stage == "dead" and id(n) in dead)
            g.edge(f"n{src.number}", f"n{n.number}", **({"style": "dashed", "color": "gray60"} if faded else {}))
    for number, src in buffers.items():
        shape, dtype = src.outputs[0]
        g.node(f"n{number}", label=f"buffer\\n{shape} {dtype.name}", shape="box", style="filled",
               fillcolor=FILL["buffer"])
    return g


__all__ = ["STAGES", "Snapshot", "draw", "roots", "snapshot"]
