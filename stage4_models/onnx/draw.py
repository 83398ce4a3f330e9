"""Drawing the inference compiler's graphs (chapter 13, "13_inference_compiler"), with the
graphviz package, in the style of stage3_native/lazy/draw.py.

    graph(g)                            # an ir.Graph: operations, values, constants
    graph(g, host={...})                # shape arithmetic (run on the host once per plan): grey
    graph(before, after=after)          # what a pass did: removed dashed, rewritten orange
    supergraph(entry)                   # one plan of session.explain(): cut points, one edge
                                        # per kernel match, the cheapest path in red

Each returns a graphviz.Digraph: ``.source`` is the DOT text, Jupyter shows it inline,
stage1_scalargrad.viz.save(graph, path) writes an .svg or .png.
"""
from stage1_scalargrad.viz import digraph, escape

FILL = {"op": "#eef3fb", "host": "#e6e6e6", "constant": "#fdf2d0", "value": "#ffffff",
        "removed": "#e0e0e0", "rewritten": "#f6c28b", "added": "#d5ecd4"}
FADED = {"color": "gray50", "fontcolor": "gray40"}
DASHED_EDGE = {"style": "dashed", "color": "gray60"}


def _new(rankdir):
    """An empty Digraph with this module's node and edge style."""
    g = digraph(rankdir, fontsize=10)
    g.attr("node", shape="box", style="rounded,filled")
    g.attr("edge", color="#555555", arrowsize="0.6", fontname="Helvetica", fontsize="8")
    return g


def _shape(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _signature(node):
    return (node.op_type, tuple(node.inputs), tuple(node.outputs))


def graph(g, after=None, host=(), constants=True, rankdir="TB"):
    """The DOT drawing of ``g`` (an ir.Graph). With ``after`` (the graph a pass made from
    ``g``): nodes and constants it dropped are dashed grey, nodes it rewrote (same name,
    other inputs or outputs) orange, nodes and constants it added green. ``host``: names of
    nodes that compute shapes on the host (drawn grey). ``constants``: draw the constants
    (initializers and folded values) as small yellow boxes."""
    if rankdir not in ("TB", "LR"):
        raise ValueError(f"draw.graph: rankdir must be 'TB' or 'LR', got {rankdir!r}")
    host = set(host)
    shown = list(g.nodes)
    consts = dict(g.constants)
    state, after_nodes = {}, {}
    if after is not None:
        after_nodes = {n.name: n for n in after.nodes}
        before_names = {n.name for n in g.nodes}
        for n in g.nodes:
            if n.name not in after_nodes:
                state[n.name] = "removed"
            elif _signature(after_nodes[n.name]) != _signature(n):
                state[n.name] = "rewritten"
        added = [n for n in after.nodes if n.name not in before_names]
        shown += added
        state.update((n.name, "added") for n in added)
        consts.update((k, v) for k, v in after.constants.items() if k not in consts)
    g_out = _new(rankdir)
    ids = {}

    def ident(kind, name):
        return ids.setdefault((kind, name), f"{kind[0]}{len(ids)}")

    for v in g.inputs:
        g_out.node(ident("value", v.name), label=f"{escape(v.name)}\\n{escape(_shape(v.shape or ()))}",
                   shape="ellipse", style="filled", fillcolor=FILL["value"])
    producer = {v.name: ident("value", v.name) for v in g.inputs}
    const_state = {}
    if after is not None:
        for k in consts:
            if k not in after.constants and k in g.constants:
                const_state[k] = "removed"
            elif k not in g.constants:
                const_state[k] = "added"
    for n in shown:
        fill = FILL.get(state.get(n.name), FILL["host"] if n.name in host else FILL["op"])
        style = {"style": "rounded,dashed,filled", **FADED} if state.get(n.name) == "removed" else {}
        g_out.node(ident("node", n.name), label=f"{escape(n.op_type)}\\n{escape(n.name)}", fillcolor=fill, **style)
        for out in n.outputs:
            if out:
                producer.setdefault(out, ident("node", n.name))
    removed_ids = {ident("node", name) for name, st in state.items() if st == "removed"}
    used = set()
    for n in shown:
        names = list(n.inputs)
        if state.get(n.name) == "rewritten":       # the rewritten node's new inputs too (its folded weights)
            names += [name for name in after_nodes[n.name].inputs if name not in names]
        for name in names:
            if not name:
                continue
            if name in consts and name not in producer:
                if not constants:
                    continue
                if name not in used:
                    used.add(name)
                    status = const_state.get(name)
                    style = {"style": "filled,dashed", **FADED} if status == "removed" else {"style": "filled"}
                    fill = FILL["added"] if status == "added" else FILL["constant"]
                    g_out.node(ident("const", name), label=f"{escape(name)}\\n{escape(_shape(consts[name].shape))}",
                               shape="box", fontsize="8", fillcolor=fill, **style)
                src = ident("const", name)
            elif name in producer:
                src = producer[name]
            else:
                continue
            faded = (state.get(n.name) == "removed" or src in removed_ids or const_state.get(name) == "removed"
                     or state.get(n.name) == "rewritten" and name not in after_nodes[n.name].inputs)
            g_out.edge(src, ident("node", n.name), **(DASHED_EDGE if faded else {}))
    for v in g.outputs:
        out = ident("output", v.name)
        g_out.node(out, label=f"{escape(v.name)}\\n{escape(_shape(v.shape or ()))}", shape="ellipse",
                   style="filled", fillcolor=FILL["value"])
        if v.name in producer:
            g_out.edge(producer[v.name], out)
    return g_out


def chosen_edges(entry):
    """The cheapest path of a plan (session.explain()'s entry): [(i, j, kernel)], from the
    kernels chosen, each covering len(nodes) steps from where the previous one ended."""
    path, i = [], 0
    for kernel, nodes in entry["kernels"]:
        path.append((i, i + len(nodes), kernel))
        i += len(nodes)
    return path


def supergraph(entry, step_names=None):
    """The supergraph of one plan (an entry of session.explain()["plans"]): a circle per cut
    point between steps, an edge per kernel match labelled with its kernel and its cost
    (bytes moved, or the measured cost), the cheapest path in red. ``step_names``: the
    steps' names, in order, printed under the cut point each one starts from."""
    if "supergraph" not in entry:
        raise ValueError("draw.supergraph: this plan has no supergraph (the session was made with optimize=False)")
    chosen = {(i, j, k) for i, j, k in chosen_edges(entry)}
    n = entry["steps"]
    g = _new("LR")
    g.attr(nodesep="0.3")
    for i in range(n + 1):
        label = str(i) if not step_names or i >= len(step_names) else f"{i}\\n{escape(step_names[i])}"
        g.node(f"c{i}", label=label, shape="circle", style="filled", fillcolor="#eef3fb", fontsize="9", width="0.5")
    for i, j, kernel, cost in entry["supergraph"]:
        bold = {"color": "#c03000", "fontcolor": "#c03000", "penwidth": "2.2"} if (i, j, kernel) in chosen else {}
        g.edge(f"c{i}", f"c{j}", label=f"{escape(kernel)}\\n{cost:,.0f}", **bold)
    return g


__all__ = ["chosen_edges", "graph", "supergraph"]
