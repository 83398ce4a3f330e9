"""Device "cpu"'s buffers behind the lazy ones (chapter 11, lazy execution and kernel
fusion): a node's arguments as device "cpu" takes them, and a new buffer for its output.
Both eager nodes (steps.py) and fused kernels (kernels.py) run on them.
"""
from stage2_tensor.backend import View
from stage2_tensor.strides import numel

from ..cpu.backend import allocate
from .graph import LazyBuffer


def allocate_for(node):
    """A new device "cpu" buffer for node's (single) output."""
    shape, dtype = node.outputs[0]
    return allocate(numel(shape), dtype)


def on_cpu(arg):
    """An argument as device "cpu" takes it: a View's LazyBuffer replaced by its buffer."""
    if isinstance(arg, View) and isinstance(arg.buffer, LazyBuffer):
        # View(...) rather than _replace: this runs for every argument of every node
        return View(arg.buffer.cpu_buffer(), arg.shape, arg.strides, arg.offset, arg.dtype)
    if isinstance(arg, list):
        return [on_cpu(a) for a in arg]
    return arg
