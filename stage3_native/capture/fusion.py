"""Fusing a captured plan's element-wise launches (chapter 11, "Fusion in the plan").

A training step run eagerly calls one element-wise kernel per op: GELU's gradient, then
its product with the upstream gradient, each walking the whole tensor and writing a
result the next one reads back. Once the call is captured the plan sees all of them at
once, with every buffer's whole life: a run of element-wise launches over one shape whose
intermediate results nothing else reads can be one kernel, written by lazy's code
generator (lazy/codegen.py), that walks the tensor once and keeps the intermediates in
registers. The kernel computes what the eager kernels compute, bit for bit (codegen.py
says how), so a fused plan gives eager's results.

A run grows launch by launch, in order: an element-wise launch (``tg_unary``,
``tg_binary`` on float32 or float64) over the run's shape joins it; a launch that touches
none of the run's buffers stays where it is, and the fused kernel runs after it (a
constant Python put in a buffer, read by the next op); anything else ends the run. A
member that reads an earlier member's result through other strides than the plain ones
(a transposed view) ends it as well. A result is an output of the fused kernel when
anything outside the run reads it, or the call keeps it; the others are never written.
Runs over fewer than MIN_ELEMENTS elements are left as they are.
"""
from stage2_tensor.strides import make_strides, numel

from ..lazy import codegen
from ..lazy.expr import ElementwiseSpec, Input, Operand, op
from ..native_backend import BINARY_CODE, UNARY_CODE
from .steps import Launch

UNARY = {code: name for name, code in UNARY_CODE.items()}
BINARY = {code: name for name, code in BINARY_CODE.items()}
DTYPES = {"f32": ("float32", 4), "f64": ("float64", 8)}
LOOK_AHEAD = 4          # launches a run steps over (untouched) before it ends
# A generated kernel is compiled once per shape (a tenth of a second); over fewer elements
# than this, what it saves at each replay (a launch, microseconds) is not worth one.
MIN_ELEMENTS = 1024
enabled = True          # False: plans replay eager's kernels as captured (to compare)


class Member:
    """One element-wise launch: op ``name`` over ``shape`` of ``dtype``; ``operands``, per
    argument, (value, element offset, strides); ``out`` the value it writes."""
    __slots__ = ("name", "shape", "dtype", "operands", "out")

    def __init__(self, name, shape, dtype, operands, out):
        self.name, self.shape, self.dtype, self.operands, self.out = name, shape, dtype, operands, out


def member(step):
    """The Member a launch is, or None (not an element-wise launch the fusion reads)."""
    if not isinstance(step, Launch) or step.items:
        return None
    family, _, suffix = step.name[3:].partition("_")
    if family not in ("unary", "binary") or suffix not in DTYPES:
        return None
    names, positions = (UNARY, (3,)) if family == "unary" else (BINARY, (3, 6))
    name = names.get(step.args[0])
    dtype, itemsize = DTYPES[suffix]
    refs = {j: (v, offset, pointer) for j, v, offset, pointer in step.refs}
    ndim = step.args[1]
    shape = tuple(step.args[2][0:ndim]) if ndim else ()
    operands = []
    for j in positions:
        if j not in refs or refs[j][1] % itemsize:
            return None
        v, byte_offset, _ = refs[j]
        strides = tuple(step.args[j + 1][0:ndim]) if ndim else ()
        operands.append((v, step.args[j + 2] + byte_offset // itemsize, strides))
    out = refs.get(positions[-1] + 3)
    if name is None or out is None or out[1] != 0:
        return None
    return Member(name, shape, dtype, operands, out[0])


def fuse(trace):
    """Rewrite ``trace.steps`` (each segment on its own): each run of two or more
    element-wise launches that leaves at least one result unwritten becomes one launch of a
    generated kernel."""
    steps, bounds = trace.steps, trace.bounds
    ends = [first for first, _ in bounds[1:]] + [len(steps)]
    uses = {}                                   # value -> the steps that pass it
    for i, step in enumerate(steps):
        for v in step.buffer_values() if isinstance(step, Launch) else step.values:
            uses.setdefault(v, set()).add(i)
    new_steps, new_bounds = [], []
    for (first, first_value), end in zip(bounds, ends):
        new_bounds.append((len(new_steps), first_value))
        new_steps += _fuse_segment(trace, steps, first, end, uses)
    trace.steps, trace.bounds = new_steps, new_bounds


def _fuse_segment(trace, steps, first, end, uses):
    out, i = [], first
    while i < end:
        run = _run(steps, i, end)
        fused = _fused(trace, steps, run, uses) if run else None
        if fused is None:
            out.append(steps[i])
            i += 1
            continue
        indices, launch = fused
        members = set(indices)
        last = max(indices)
        out += [steps[k] for k in range(i, last) if k not in members]
        out.append(launch)
        i = last + 1
    return out


def _run(steps, start, end):
    """The indices of the run that starts at ``start`` (element-wise launches over one
    shape), or None."""
    head = member(steps[start])
    if head is None or numel(head.shape) < MIN_ELEMENTS:
        return None
    run, touched, skipped = [(start, head)], {head.out, *(o[0] for o in head.operands)}, 0
    made = {head.out}
    for k in range(start + 1, end):
        step = steps[k]
        m = member(step)
        if m is not None and m.shape == head.shape and m.dtype == head.dtype and all(
                v not in made or (offset == 0 and strides == make_strides(m.shape))
                for v, offset, strides in m.operands):
            run.append((k, m))
            made.add(m.out)
            touched |= {m.out, *(o[0] for o in m.operands)}
            skipped = 0
            continue
        passed = step.buffer_values() if isinstance(step, Launch) else None
        if passed is None or touched.intersection(passed) or skipped == LOOK_AHEAD:
            break
        skipped += 1
    return run if len(run) > 1 else None


def _fused(trace, steps, run, uses):
    """(member indices, the fused Launch) for a run, or None when every result is read
    elsewhere (fusing would save launches, not memory traffic)."""
    indices = {k for k, _ in run}
    kinds, empty = trace.values.kinds, trace.empty
    kept = [m for k, m in run
            if kinds[m.out] != "static" or m.out not in empty or not uses.get(m.out, set()) <= indices]
    if len(kept) == len(run):
        return None
    kept = kept or [run[-1][1]]                # a result nothing reads: still computed, as eagerly
    shape, dtype = run[0][1].shape, run[0][1].dtype
    inputs, nodes = {}, {}                      # (value, offset, strides) -> Input; value -> node
    for _, m in run:
        args = []
        for operand in m.operands:
            v = operand[0]
            if v in nodes:
                args.append(nodes[v])
            else:
                if operand not in inputs:
                    inputs[operand] = Input(len(inputs), dtype)
                args.append(inputs[operand])
        nodes[m.out] = op(m.name, *args)
    spec = ElementwiseSpec(shape=shape, operands=tuple(Operand(dtype, strides) for _, _, strides in inputs),
                           outputs=tuple(nodes[m.out] for m in kept))
    kernel = codegen.compile_elementwise(spec)
    objects = trace.values.objects
    outs = [objects[m.out] for m in kept]
    ins = [objects[v] for v, _, _ in inputs]
    items = [(0, j, m.out, 0, None) for j, m in enumerate(kept)]
    items += [(1, k, v, 0, None) for k, (v, _, _) in enumerate(inputs)]
    launch = Launch(f"fused {' '.join(m.name for _, m in run)} over {numel(shape)}", kernel.fn,
                    (outs, ins, [offset for _, offset, _ in inputs]), [], None, items)
    return sorted(indices), launch
