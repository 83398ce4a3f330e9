"""Scheduling (chapter 11, lazy execution and kernel fusion): the last pass, putting the
steps (fused groups and single nodes) in an order they can run in, and counting the memory
traffic the plan costs.

Fusion changes the order constraints: a group runs as one kernel, so it runs after every
input of every member, which can come later in the recorded order than its anchor. The
order is Kahn's algorithm over steps; among steps ready at once, the one recorded first
goes first (the program's own order, which keeps a buffer's readers close to its writer).

The traffic is what "least bytes read and written", the plan's goal, measures: each step reads
its inputs from memory and writes the values it stores, once. A plan's bytes, against the
same nodes run one kernel each, say what fusion saved; fusion.py makes each of its choices
(which producer's group a node joins) by the same measure.
"""
import heapq

from stage2_tensor.strides import numel


def nodes_of(step):
    return step.nodes if hasattr(step, "nodes") else [step]


def order(steps):
    """The steps, each after every step that computes an input of one of its nodes.

    Fusion checks each join against the groups a node's inputs depend on, but two groups
    can still end up waiting for each other through members that joined later. Then the
    groups caught in the cycle are dissolved into their nodes (which always have an order:
    the recorded one) and the order is made again."""
    step_of = {id(n): i for i, s in enumerate(steps) for n in nodes_of(s)}
    after = [set() for _ in steps]        # after[i]: steps that must wait for step i
    waiting = [0] * len(steps)
    for i, s in enumerate(steps):
        needs = {step_of[id(p)] for n in nodes_of(s) for p in n.inputs() if id(p) in step_of} - {i}
        waiting[i] = len(needs)
        for j in needs:
            after[j].add(i)

    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        i = heapq.heappop(ready)
        result.append(steps[i])
        for j in after[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(result) != len(steps):
        done = {id(s) for s in result}
        stuck = [n for s in steps if id(s) not in done for n in nodes_of(s)]
        return order(result + sorted(stuck, key=lambda n: n.number))
    return result


def traffic(step, stored=None):
    """Bytes a step reads (its inputs from outside it, each distinct buffer view once) and
    writes (its stored values; a single node stores all of its outputs)."""
    members = {id(n) for n in nodes_of(step)}
    read, seen = 0, set()
    for n in nodes_of(step):
        for a in n.views:
            b = a.buffer
            if not b.realized and id(b.node) in members:
                continue
            key = (id(b), tuple(a.strides), a.offset)
            if key not in seen:
                seen.add(key)
                read += _bytes_read(a)
    written = 0
    for n in nodes_of(step):
        if stored is None or id(n) in stored:
            written += sum(numel(o[0]) * o[1].itemsize for o in n.outputs if o is not None)
    return read, written


def _bytes_read(view):
    """Distinct elements a view reads (a broadcast dimension reads its values once)."""
    return numel([n for n, s in zip(view.shape, view.strides) if s != 0]) * view.dtype.itemsize
