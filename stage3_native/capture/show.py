"""A plan printed and drawn (chapter 11, "Capturing a training step"): its launches in
order, what each buffer is, and where the memory plan put it.

    describe(plan)          one step a line: the C function, its buffers
    draw(plan, names)       graphviz: launches, and the buffers flowing between them
    blocks_figure(plan, ax) matplotlib: each block of the memory plan over the launches,
                            the buffers that took turns in it

A buffer is named by its kind: ``in3`` an input read afresh (an argument, a parameter, a
gradient kept from before), ``new5`` one the call made and kept (a new gradient, the loss:
a new buffer at each replay), ``b2`` a buffer the memory plan placed in block 2 (two
buffers in one block, one after the other, share the name), ``live1`` what a live call
returned, ``seed7`` a random seed it drew, ``up0`` the upstream gradient handed to a
backward segment. Constants (a table of shapes and strides, a tensor read in place) are
left out.
"""
from stage1_scalargrad.viz import digraph, escape

from .steps import Launch

FILL = {"input": "#fdf2d0", "fresh": "#d5ecd4", "block": "#eef3fb", "static": "#e0e0e0",
        "live": "#f6c28b", "given": "#f6c28b", "scalar": "#f6c28b"}


def shown(plan, v):
    return plan.kinds[v] != "static" or v in plan.where


def label(plan, v):
    kind = plan.kinds[v]
    if v in plan.where:
        return f"b{plan.where[v]}"
    return {"input": "in", "fresh": "new", "static": "k", "live": "live", "given": "up",
            "scalar": "seed"}.get(kind, kind) + str(v)


def short(name):
    """tg_matmul_f32 -> matmul."""
    parts = name.split("_")
    if parts[0] == "tg":
        parts = parts[1:]
    if parts and parts[-1] in ("f32", "f64", "i64", "i32", "u8"):
        parts = parts[:-1]
    return "_".join(parts)


def describe(plan, names=None):
    """The steps, one a line; ``names`` (live call k -> its name) labels the live points."""
    lines, first = [], 0
    for s, (steps, _) in enumerate(plan.segments):
        lines.append("forward" if s == 0 and len(plan.segments) > 1 else
                     f"backward of output segment {s}" if s else "the step")
        for i, step in enumerate(steps, first):
            buffers = " ".join(label(plan, v) for v in plan.uses[i] if shown(plan, v))
            if isinstance(step, Launch):
                lines.append(f"  {i:3d} {short(step.name):24} {buffers}")
            else:
                name = (names or {}).get(step.k, f"live call {step.k}")
                lines.append(f"  {i:3d} {name:24} (Python) {buffers}")
        first += len(steps)
    return "\n".join(lines)


def draw(plan, names=None):
    """The launches as boxes in order, an edge from the launch that first passed a buffer
    to each later one that passes it, labelled with the buffer; inputs as yellow sources."""
    g = digraph("TB", fontsize=10)
    last = {}
    steps = [step for steps, _ in plan.segments for step in steps]
    for i, step in enumerate(steps):
        title = short(step.name) if isinstance(step, Launch) else (names or {}).get(step.k, f"live {step.k}")
        g.node(f"s{i}", f"{i}: {escape(title)}", shape="box", style="filled",
               fillcolor="#eef3fb" if isinstance(step, Launch) else "#f6c28b")
        for v in plan.uses[i]:
            if not shown(plan, v):
                continue
            if v in last:
                g.edge(last[v], f"s{i}", label=label(plan, v), fontsize="9")
            elif plan.kinds[v] == "input":
                g.node(f"v{v}", label(plan, v), shape="note", style="filled", fillcolor=FILL["input"])
                g.edge(f"v{v}", f"s{i}")
            last[v] = f"s{i}"
    return g


def blocks_figure(plan, ax):
    """Each block of the memory plan as a row, each buffer placed in it as a bar over the
    launches from its first use to its last: buffers whose lives do not meet share a row."""
    spans = {}
    for i, uses in enumerate(plan.uses):
        for v in uses:
            if v in plan.where:
                first, _ = spans.get(v, (i, i))
                spans[v] = (first, i)
    for v, (first, last) in spans.items():
        block = plan.where[v]
        ax.barh(block, last - first + 1, left=first - 0.5, height=0.8, color="#8aa9d6", edgecolor="white")
    ax.set_xlabel("launch")
    ax.set_ylabel("block")
    ax.invert_yaxis()
    return spans
