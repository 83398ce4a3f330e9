"""Canonicalization (chapter 13, "13_inference_compiler": passes): rewrites that compute the
same values with fewer nodes, found by small patterns on the graph.

- Identity, and Dropout at inference (no mask read, not in training mode), pass their input
  on: their readers read the input itself.
- BatchNormalization after a Conv (whose output nothing else reads) is an affine map per
  output channel, y = (conv(x) - mean) * s + beta with s = scale / sqrt(var + eps), so it
  folds into the Conv's constants: W' = W * s (per output channel), b' = (b - mean) * s + beta.
  Computed in float64, stored in the weight's dtype (one rounding, float32 noise).
- Two Slices in a row (constant bounds) are one Slice: on different axes the bounds are
  unioned; on one axis with step 1 and non-negative bounds, [s1 + s2, min(e1, s1 + e2)).
- Two Pads in a row (constant pads, non-negative, both "constant" with one value or both
  "edge") are one Pad with the pads summed.

Like stage3_native/lazy/canonicalize.py, a rewrite only reroutes readers and replaces
nodes; what is left without readers is dce.py's to remove. Each rewrite walks the nodes
once, asking an Index (edit.py) who writes and reads a value.
"""
import numpy as np

from .edit import Index, copy_graph

INT64_MAX = np.iinfo(np.int64).max


def canonicalize(graph):
    """(the canonical graph, [a line per rewrite])."""
    graph = copy_graph(graph)
    changes = []
    for rewrite in (_drop_pass_through, _fold_batch_norm, _merge_slices, _merge_pads):
        rewrite(graph, changes)
    return graph, changes


# ---- Identity and Dropout ------------------------------------------------------------------------------
def _passes_through(graph, node, read, protected):
    if node.op_type == "Identity":
        return True
    if node.op_type != "Dropout":
        return False
    if len(node.outputs) > 1 and node.outputs[1] and (node.outputs[1] in read or node.outputs[1] in protected):
        return False                    # the mask is read
    if node.opset >= 12 and len(node.inputs) > 2 and node.inputs[2]:
        mode = graph.constants.get(node.inputs[2])
        return mode is not None and not np.any(mode)      # training_mode a constant False
    return True


def _drop_pass_through(graph, changes):
    index = Index(graph)
    read = set(index.readers)       # (a Dropout's mask: its readers all come after it, none renamed yet)
    alias = {}                      # a name no longer written -> the name its readers read instead

    def resolve(name):
        while name in alias:
            name = alias[name]
        return name

    for node in graph.nodes:
        node.inputs = [resolve(name) for name in node.inputs]
        if not node.inputs or not node.inputs[0] or not node.outputs or not node.outputs[0] \
                or not _passes_through(graph, node, read, index.protected):
            continue
        src, out = node.inputs[0], node.outputs[0]
        if out in index.protected:
            # the caller asks for `out` by name: the producer of `src` may write it instead
            producer = index.producer.get(src)
            if producer is None or src in index.protected:
                continue
            index.set_outputs(producer, [out if n == src else n for n in producer.outputs])
            alias[src] = out
        else:
            alias[out] = src
        index.remove(node)
        changes.append(f"dropped {node.op_type} {node.name!r}")
    for node in graph.nodes:        # the readers of a renamed value visited before its rename
        node.inputs = [resolve(name) for name in node.inputs]
    index.done()


# ---- BatchNormalization into Conv ----------------------------------------------------------------------
def _fold_batch_norm(graph, changes):
    index = Index(graph)
    for bn in graph.nodes:
        if bn.op_type != "BatchNormalization" or len(bn.inputs) != 5 or not bn.attr("spatial", 1) \
                or bn.attr("training_mode", 0) or len([o for o in bn.outputs if o]) != 1:
            continue
        conv = index.producer.get(bn.inputs[0])
        if conv is None or conv.op_type != "Conv" or len(conv.inputs) < 2 or not index.only_reader(bn.inputs[0], bn):
            continue
        w = graph.constants.get(conv.inputs[1])
        b = graph.constants.get(conv.inputs[2]) if len(conv.inputs) > 2 and conv.inputs[2] else None
        stats = [graph.constants.get(name) for name in bn.inputs[1:]]
        if w is None or w.dtype.kind != "f" or (len(conv.inputs) > 2 and conv.inputs[2] and b is None) \
                or any(s is None for s in stats):
            continue
        scale, beta, mean, var = (np.asarray(s, np.float64).reshape(-1) for s in stats)
        m = w.shape[0]
        if any(len(s) != m for s in (scale, beta, mean, var)) or (b is not None and b.size != m):
            continue                    # malformed: leave it for the operator to report
        s = scale / np.sqrt(var + float(bn.attr("epsilon", 1e-5)))
        w_name = index.fresh(f"{conv.inputs[1]}_bn")
        graph.constants[w_name] = (w.astype(np.float64) * s.reshape(-1, *[1] * (w.ndim - 1))).astype(w.dtype)
        b_name = index.fresh(f"{w_name}_bias")
        b0 = np.zeros(m) if b is None else b.astype(np.float64).reshape(-1)
        graph.constants[b_name] = ((b0 - mean) * s + beta).astype(w.dtype)
        index.set_inputs(conv, [conv.inputs[0], w_name, b_name])
        index.remove(bn)
        index.set_outputs(conv, [bn.outputs[0]])
        changes.append(f"folded BatchNormalization {bn.name!r} into Conv {conv.name!r}")
    index.done()


# ---- consecutive Slices --------------------------------------------------------------------------------
def _slice_params(graph, node):
    """{axis: (start, end, step)} when every bound is a constant and every axis non-negative."""
    if node.opset < 10:
        starts, ends, axes = node.attr("starts"), node.attr("ends"), node.attr("axes")
        steps = None
    else:
        consts = [graph.constants.get(name) if name else None for name in node.inputs[1:5]]
        consts += [None] * (4 - len(consts))
        if consts[0] is None or consts[1] is None or any(n and c is None for n, c in zip(node.inputs[3:5], consts[2:])):
            return None
        starts, ends, axes, steps = [None if c is None else [int(v) for v in np.reshape(c, -1)] for c in consts]
    if starts is None or ends is None:
        return None
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps) or len(set(axes)) != len(axes) \
            or any(a < 0 for a in axes) or 0 in steps:
        return None
    return {a: (s, e, st) for a, s, e, st in zip(axes, starts, ends, steps)}


def _compose(first, second):
    """One (start, end, step) for slicing with ``first`` then ``second`` on one axis, or None."""
    (s1, e1, t1), (s2, e2, t2) = first, second
    if t1 != 1 or t2 != 1 or min(s1, e1, s2, e2) < 0:
        return None
    return s1 + s2, min(e1, s1 + e2, INT64_MAX), 1


def _merge_slices(graph, changes):
    index = Index(graph)
    for second in graph.nodes:
        if second.op_type != "Slice" or not second.inputs:
            continue
        first = index.producer.get(second.inputs[0])
        if first is None or first.op_type != "Slice" or not first.inputs \
                or not index.only_reader(second.inputs[0], second):
            continue
        p1, p2 = _slice_params(graph, first), _slice_params(graph, second)
        if p1 is None or p2 is None:
            continue
        merged = dict(p1)
        for a, bounds in p2.items():
            merged[a] = bounds if a not in p1 else _compose(p1[a], bounds)
        if any(b is None for b in merged.values()) or (second.opset < 10 and any(b[2] != 1 for b in merged.values())):
            continue
        axes = sorted(merged)
        starts, ends, steps = ([merged[a][i] for a in axes] for i in range(3))
        if second.opset < 10:
            second.attributes = {"starts": starts, "ends": ends, "axes": axes}
            index.set_inputs(second, [first.inputs[0]])
        else:
            names = []
            for what, values in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)):
                names.append(index.fresh(f"{second.outputs[0]}_{what}"))
                graph.constants[names[-1]] = np.array(values, dtype=np.int64)
            index.set_inputs(second, [first.inputs[0], *names])
        index.remove(first)
        changes.append(f"merged Slice {first.name!r} into Slice {second.name!r}")
    index.done()


# ---- consecutive Pads ----------------------------------------------------------------------------------
def _pad_params(graph, node):
    """(mode, value, pads) when the pads and value are constants and the pads non-negative."""
    mode = node.attr("mode", "constant")
    if node.opset < 11:
        pads = node.attr("pads" if node.opset >= 2 else "paddings")
        value = float(node.attr("value", 0.0))
    else:
        if len(node.inputs) > 3 and node.inputs[3]:
            return None                 # axes given: the pads are not per dim
        p = graph.constants.get(node.inputs[1]) if len(node.inputs) > 1 else None
        v = graph.constants.get(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else np.zeros(1)
        if p is None or v is None:
            return None
        pads, value = [int(x) for x in np.reshape(p, -1)], float(np.reshape(v, -1)[0])
    if pads is None or any(x < 0 for x in pads) or mode not in ("constant", "edge"):
        return None
    return mode, (value if mode == "constant" else 0.0), list(pads)


def _merge_pads(graph, changes):
    index = Index(graph)
    for second in graph.nodes:
        if second.op_type != "Pad" or not second.inputs:
            continue
        first = index.producer.get(second.inputs[0])
        if first is None or first.op_type != "Pad" or not first.inputs \
                or not index.only_reader(second.inputs[0], second):
            continue
        p1, p2 = _pad_params(graph, first), _pad_params(graph, second)
        if p1 is None or p2 is None or p1[:2] != p2[:2] or len(p1[2]) != len(p2[2]):
            continue
        pads = [a + b for a, b in zip(p1[2], p2[2])]
        if second.opset < 11:
            second.attributes["pads" if second.opset >= 2 else "paddings"] = pads
            index.set_inputs(second, [first.inputs[0]])
        else:
            name = index.fresh(f"{second.outputs[0]}_pads")
            graph.constants[name] = np.array(pads, dtype=np.int64)
            index.set_inputs(second, [first.inputs[0], name, *second.inputs[2:3]])
        index.remove(first)
        changes.append(f"merged Pad {first.name!r} into Pad {second.name!r}")
    index.done()
