"""The plan's memory as an expression of the input dims (chapter 13, "13_inference_compiler":
symbolic shapes, "memory over time").

A plan (plan.py) replays the nodes that depend on the inputs' data, in the graph's order,
and drops each value after its last reader. This module follows the same schedule on
symbolic shapes: at step i the live activations are the inputs fed and the outputs of
steps <= i that a step >= i still reads (or that are never read by a step: graph outputs,
unused outputs, inputs only their Shape reads, all kept until the run returns). Their
bytes summed, per step, is an expression; the peak is the maximum over the steps,
``Max(...)`` of those no other step's total provably dominates. Weights (constants) are
not counted: they are the same at every size.
"""
import numpy as np

from ..symbolic import Max, as_expr
from ..symbolic.solver import dim_bounds
from .values import product


def _itemsize(dtype, float_itemsize):
    if dtype is None:
        return float_itemsize or 4
    kind = np.dtype(dtype)
    if kind.kind == "f" and float_itemsize:
        return float_itemsize
    return kind.itemsize


def steps(graph, inference):
    """The nodes a plan replays: those reading a value computed from the data, unless every
    output is shape arithmetic known at import (a Shape's vector and what is made of it)."""
    data = {v.name for v in graph.inputs}
    out = []
    for node in graph.nodes:
        if not any(name in data for name in node.inputs if name):
            continue
        syms = [inference.syms[name] for name in node.outputs if name]
        if syms and all(s.value is not None for s in syms):
            continue
        data.update(name for name in node.outputs if name)
        out.append(node)
    return out


def profile(graph, inference, float_itemsize=None):
    """[(node, live bytes at that step as an Expr)] over the plan's steps."""
    schedule = steps(graph, inference)
    born = {v.name: 0 for v in graph.inputs}
    last = {}
    for i, node in enumerate(schedule):
        for name in node.inputs:
            if name in born:
                last[name] = i
        for name in node.outputs:
            if name:
                born.setdefault(name, i)
    outputs = {v.name for v in graph.outputs}
    end = len(schedule) - 1
    death = {name: (end if name in outputs or name not in last else last[name]) for name in born}

    def nbytes(name):
        sym = inference.syms[name]
        if sym.shape is None:
            raise ValueError(f"the memory of {name!r} is unknown: its rank is not inferred")
        return product(sym.shape) * _itemsize(sym.dtype, float_itemsize)
    # one sweep: a value's bytes join the total at the step it is born and leave after the
    # step it dies (canonical forms cancel exactly)
    births, deaths = [[] for _ in schedule], [[] for _ in schedule]
    for name in born:
        births[born[name]].append(name)
        deaths[death[name]].append(name)
    total, out = as_expr(0), []
    for i, node in enumerate(schedule):
        for name in births[i]:
            total = total + nbytes(name)
        out.append((node, total))
        for name in deaths[i]:
            total = total - nbytes(name)
    return out


def peak(totals):
    """The maximum of the step totals, as ``Max(...)`` of the totals no other one
    provably exceeds for every dims >= 1."""
    kept = []
    for t in dict.fromkeys(totals):
        if any(_at_least(k, t) for k in kept):
            continue
        kept = [k for k in kept if not _at_least(t, k)] + [t]
    result = kept[0] if kept else as_expr(0)
    for t in kept[1:]:
        result = Max(result, t)
    return result


def _at_least(a, b):
    lo, _ = dim_bounds(as_expr(a) - as_expr(b))
    return lo is not None and lo >= 0
