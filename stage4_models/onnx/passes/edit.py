"""Small graph edits the passes share (chapter 13, "13_inference_compiler": passes)."""
import dataclasses

from ..ir import Graph


def copy_graph(graph):
    """A copy a pass may edit: new node objects and lists, the same constant arrays."""
    nodes = [dataclasses.replace(n, inputs=list(n.inputs), outputs=list(n.outputs),
                                 attributes=dict(n.attributes)) for n in graph.nodes]
    return Graph(list(graph.inputs), list(graph.outputs), nodes, dict(graph.constants), dict(graph.opsets))


def protected(graph):
    """Names a pass may not remove or rename: the graph's inputs and outputs."""
    return {v.name for v in graph.inputs} | {v.name for v in graph.outputs}


def producer_map(graph):
    """value name -> the node that writes it."""
    return {name: n for n in graph.nodes for name in n.outputs if name}


class Index:
    """Who writes and who reads each value, and the names in use, gathered once for a rewrite
    and kept up to date by the edits it makes through it: asking the whole graph at every
    node would make a pass quadratic in the nodes. Nodes removed leave ``graph.nodes`` at
    ``done()``."""

    def __init__(self, graph):
        self.graph = graph
        self.protected = protected(graph)
        self.producer = producer_map(graph)
        self.readers = {}               # name -> {id(node): node} of the nodes reading it
        for node in graph.nodes:
            self._read(node, node.inputs, True)
        self.used = set(graph.constants) | self.protected | set(self.producer) | set(self.readers)
        self.removed = set()            # ids of the nodes removed
        self.suffix = {}                # base name -> the number fresh() tries next

    def _read(self, node, names, reading):
        for name in names:
            if not name:
                continue
            if reading:
                self.readers.setdefault(name, {})[id(node)] = node
            else:
                self.readers.get(name, {}).pop(id(node), None)

    def only_reader(self, name, node):
        """True when ``node`` is the one node that reads ``name`` and it is no graph output."""
        readers = self.readers.get(name, {})
        return name not in self.protected and len(readers) == 1 and id(node) in readers

    def set_inputs(self, node, inputs):
        self._read(node, node.inputs, False)
        node.inputs = list(inputs)
        self._read(node, node.inputs, True)

    def set_outputs(self, node, outputs):
        for name in node.outputs:
            self.producer.pop(name, None)
        node.outputs = list(outputs)
        self.producer.update((name, node) for name in node.outputs if name)

    def remove(self, node):
        self._read(node, node.inputs, False)
        for name in node.outputs:
            if self.producer.get(name) is node:
                del self.producer[name]
        self.removed.add(id(node))

    def fresh(self, base):
        """A value name no node, input or constant uses yet (nor an earlier fresh one):
        ``base``, else ``base_1``, ``base_2``... counting on from the last one given."""
        name, i = base, self.suffix.get(base, 1)
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        self.suffix[base] = i
        return name

    def done(self):
        self.graph.nodes = [n for n in self.graph.nodes if id(n) not in self.removed]
