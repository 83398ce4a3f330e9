"""Small graph edits the passes share (chapter 13, "13_inference_compiler": passes)."""
import dataclasses

from ..ir import Graph


def copy_graph(graph):
    """A copy a pass may edit: new node objects and lists, the same constant arrays."""
    nodes = [dataclasses.replace(n, inputs=list(n.inputs), outputs=list(n.outputs),
                                 attributes=dict(n.attributes)) for n in graph.nodes]
    return Graph(list(graph.inputs), list(graph.outputs), nodes, dict(graph.constants), dict(graph.opsets))


def rename_reads(graph, old, new):
    """Every node that reads ``old`` reads ``new`` instead."""
    for node in graph.nodes:
        node.inputs = [new if name == old else name for name in node.inputs]


def readers(graph, name):
    return [n for n in graph.nodes if name in n.inputs]


def protected(graph):
    """Names a pass may not remove or rename: the graph's inputs and outputs."""
    return {v.name for v in graph.inputs} | {v.name for v in graph.outputs}


def only_reader(graph, name, node):
    """True when ``node`` is the one node that reads ``name`` and it is no graph output."""
    return name not in protected(graph) and readers(graph, name) == [node]


def fresh_name(graph, base):
    """A value name no node, input or constant uses yet."""
    used = set(graph.constants) | {v.name for v in graph.inputs} | {v.name for v in graph.outputs}
    for n in graph.nodes:
        used.update(n.inputs)
        used.update(n.outputs)
    name, i = base, 1
    while name in used:
        name, i = f"{base}_{i}", i + 1
    return name


def producer_map(graph):
    """value name -> the node that writes it."""
    return {name: n for n in graph.nodes for name in n.outputs if name}
