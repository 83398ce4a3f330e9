"""Backpropagation over a graph of Values (chapter 3, "Scalar-level Autograd").

Two steps, both loops (no recursion, so a chain of a million nodes is fine):

1. ``topological_order`` lists every node reachable from the root, each after all of its
   inputs (depth-first with an explicit stack: a node is visited once to push its
   inputs and again, after them, to be placed). Each traversal marks the nodes it has
   seen in their ``visit`` field with two fresh objects, which needs no set of visited
   nodes: hashing into and growing such a set for every node is a large share of backward's
   time.
2. ``backward`` walks that list from the root down. When a node is reached, every
   operation that reads it has already been visited, so its gradient is complete; it then
   hands each input upstream gradient * local gradient.

Leaves (parameters, inputs) accumulate gradients across calls, as in PyTorch. The
operations' outputs are reset first, so a second call never re-sends the first call's
gradients down the graph.
"""


def topological_order(root):
    """Nodes reachable from ``root``, inputs before the operations that read them."""
    opened, placed = object(), object()     # this traversal's marks
    order = []
    stack = [root]
    while stack:
        node = stack.pop()
        visit = node.visit
        if visit is placed:
            continue
        if visit is opened:
            node.visit = placed
            order.append(node)
        else:
            node.visit = opened
            stack.append(node)
            stack.extend(node.inputs)
    return order


def backward(root):
    order = topological_order(root)
    for node in order:
        if node.op is not None:
            node.grad = 0.0
    root.grad += 1.0
    for node in reversed(order):
        op = node.op
        if op is None:
            continue
        upstream = node.grad
        inputs = node.inputs
        # The same rule for every arity; one and two inputs (nearly every node) are spelled
        # out because building an argument list per node costs a large share of the pass.
        if len(inputs) == 2:
            a, b = inputs
            da, db = op.backward(node.data, a.data, b.data)
            a.grad += upstream * da
            b.grad += upstream * db
        elif len(inputs) == 1:
            a, = inputs
            da, = op.backward(node.data, a.data)
            a.grad += upstream * da
        else:
            for x, d in zip(inputs, op.backward(node.data, *[x.data for x in inputs])):
                x.grad += upstream * d
