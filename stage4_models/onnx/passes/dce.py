"""Dead-code elimination (chapter 13, "13_inference_compiler": passes).

Walking the nodes back to front from the graph's outputs: a node is live when a live node
or the caller reads one of its outputs, and its inputs are then live too. What is left
(a Dropout's unused mask, the Shape arithmetic an exporter wrote for a branch nobody reads,
a constant only a removed node read) goes. The graph's inputs stay: the caller still feeds
them (onnxruntime keeps them too).
"""
from .edit import copy_graph


def eliminate_dead_code(graph):
    """(graph without dead nodes and constants, [a line per removal])."""
    graph = copy_graph(graph)
    live = {v.name for v in graph.outputs}
    kept = []
    changes = []
    for node in reversed(graph.nodes):
        if any(name in live for name in node.outputs if name):
            kept.append(node)
            live.update(name for name in node.inputs if name)
        else:
            changes.append(f"removed {node.op_type} {node.name!r} (nothing reads {', '.join(node.outputs)})")
    graph.nodes = kept[::-1]
    unused = [name for name in graph.constants if name not in live]
    for name in unused:
        del graph.constants[name]
    if unused:
        changes.append(f"removed {len(unused)} unused constant(s)")
    return graph, changes[::-1]
