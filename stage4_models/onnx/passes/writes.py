"""Which Concat inputs are written in place (chapter 13, "13_inference_compiler": the
memory plan, a Concat written in place).

A Concat copies each input into its slice of the output. It costs nothing when each
input's producer writes its result straight into that slice (a strided view of the
Concat's buffer along its axis): the plan then allocates the buffer when the first
producer runs (plan.py's ``Program``), the producer writes into its slice, its other
readers read the slice, and the Concat step runs nothing. This pass decides it for every
input of every Concat step, with the reason where it cannot:

- the input is a graph input or a constant, or a graph output (returned as its own array):
  nothing in the plan produces it into a buffer of ours;
- it appears twice in the Concat, or already lives in an earlier Concat's buffer (a value
  lives in one buffer);
- its producer has no kernel that writes into a strided destination (``WRITERS``: the
  convolutions, alone or with the ReLU after them as one conv_bias_relu step, through
  conv_bands, whose store writes each plane at any channel stride; a MaxPool through
  max_pool_into, a Resize or Upsample of an (N, C, H, W) tensor through interpolate_into,
  which do the same; an element-wise op, an AveragePool or a global pool computes into a
  buffer of its own), or it writes planes row-major and the Concat's axis cuts inside a
  plane (axis 2 or more);

The buffer is made when the first producer runs, so whatever reads an input before the
Concat (the U-net's max pool reads the skip connection) reads its slice: contiguous for
batch 1 along the channels, strided otherwise, which every kernel takes (one that wants
contiguous planes copies them first, as for any view). The inputs not written in place
are copied by the Concat step, into the same buffer. Only
device "cpu" has these kernels, in float32 and float64; elsewhere (another device, float16
storage) the producer computes into a buffer of its own and copies it into its slice at
once, which the report says: the plan's memory is the same, the copy is not saved.
"""
from collections import Counter
from dataclasses import dataclass, field

# (the schedule's kernel, its last node's op type) that can write its output into a given
# slice -> the device kernel that does it (the operator's own kernel, select.py's "op", is
# labelled by its op type: "resize")
WRITERS = {("conv", "Conv"): "conv_bands", ("conv_bias_relu", "Relu"): "conv_bands",
           ("pool", "MaxPool"): "max_pool_into", ("resize", "Resize"): "interpolate_into",
           ("upsample", "Upsample"): "interpolate_into"}
RESAMPLES = ("Resize", "Upsample")          # interpolate_into writes (N, C, H, W) planes only
DEVICES = ("cpu",)


@dataclass
class Writes:
    """``into``: input name -> (Concat node, axis, start along it, extent) for the inputs
    their producer writes into the Concat's buffer; ``producers``: the names of the
    schedule's kernels (their last node) that do; ``report``: per Concat node, a line per
    input saying how it gets there."""
    into: dict = field(default_factory=dict)
    producers: dict = field(default_factory=dict)      # last node name -> the Concat node
    report: dict = field(default_factory=dict)

    def in_place(self):
        """The Concats all of whose inputs are written into their buffer: the Concat step
        runs nothing (its producers wrote, directly or through a copy: ``report``)."""
        return [name for name, lines in self.report.items() if all(not line.startswith("copied")
                                                                   for _, line in lines)]


def plan_writes(steps, schedule, info, dtypes, outputs, device):
    """The Writes of a plan: ``steps`` its nodes in order, ``schedule`` select.py's
    (which steps each kernel runs), ``info`` name -> (shape, itemsize), ``dtypes`` name ->
    tracegrad dtype of the device tensors, ``outputs`` the graph's output names."""
    writes = Writes()
    outputs = set(outputs)
    kernel_of = {}                  # output of a kernel's last node -> (kernel, its last node)
    by_name = {node.name: node for node in steps}
    for choice in (schedule.choices if schedule else []):
        last = by_name[choice.nodes[-1]]
        for name in last.outputs:
            kernel_of[name] = (choice.kernel, last)
    held = {}
    for node in steps:
        if node.op_type != "Concat" or not node.outputs or node.outputs[0] not in info:
            continue
        shape = info[node.outputs[0]][0]
        axis = node.attr("axis", 1 if node.opset < 4 else None) % len(shape)
        lines, start = [], 0
        repeats = Counter(node.inputs)
        for name in node.inputs:
            extent = info[name][0][axis] if name in info else 0
            why = _why_not(name, node, axis, kernel_of, held, info, outputs, repeats[name])
            if why is None:
                kernel, last = kernel_of[name]
                writes.into[name] = (node.name, axis, start, extent)
                writes.producers[last.name] = node.name
                held[name] = node.name
                how = _indirect(name, WRITERS[kernel, last.op_type], dtypes, device)
                lines.append((name, f"written in place by {kernel} ({last.name})" if how is None else
                              f"written into its slice by {kernel} ({last.name}) through a copy: {how}"))
            else:
                lines.append((name, f"copied: {why}"))
            start += extent
        writes.report[node.name] = lines
    return writes


def _indirect(name, writer, dtypes, device):
    """Why the producer of ``name`` cannot write its slice directly with its device kernel
    ``writer``, or None when it can."""
    if device not in DEVICES:
        return f"device {device} has no {writer} ({', '.join(DEVICES)} has)"
    dtype = getattr(dtypes.get(name), "name", None)
    if dtype not in ("float32", "float64"):
        return f"stored as {dtype}: {writer} writes float32 and float64"
    return None


def _why_not(name, concat, axis, kernel_of, held, info, outputs, repeats):
    """Why ``name`` (``repeats`` times among ``concat``'s inputs) cannot be written into its
    slice of ``concat``'s buffer, or None."""
    if name not in info or name not in kernel_of:
        return "a graph input or a constant"
    if name in outputs:
        return "a graph output"
    if repeats > 1:
        return "it appears more than once"
    if name in held:
        return f"it already lives in {held[name]}'s buffer"
    kernel, last = kernel_of[name]
    if last.op_type == "Concat":
        return f"the output of {last.name}, a Concat: a buffer of its own"
    if (kernel, last.op_type) not in WRITERS:
        return f"{last.op_type} ({kernel}) computes into a buffer of its own"
    if last.op_type in RESAMPLES and len(info[name][0]) != 4:
        return f"{last.op_type} of a {len(info[name][0])}-d tensor computes into a buffer of its own"
    if axis > 1:
        return f"{kernel} writes whole planes, and axis {axis} cuts inside them"
    if info[name][1] != info[concat.outputs[0]][1]:
        return "stored in another dtype than the Concat's output"
    return None
