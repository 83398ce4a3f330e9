"""A plan: the graph made concrete for one set of input shapes (chapter 13,
"13_inference_compiler").

Making a plan runs the graph once, node by node. What depends only on shapes and constants
(shape arithmetic on the host, a Transpose of a weight, a Constant) is computed then and
kept, the plan's ``values``; what depends on the inputs' data becomes a ``step`` the plan
replays on every run, on the device. Each value is dropped after its last reader, so a run
holds only the activations still needed.

The first run also records each device tensor's shape and itemsize (``info``: what the
selection and memory passes weigh) and, when floats are stored in float16, which nodes
overflowed it and store float32 instead (``widened``: passes/specialize.py).
"""
import stage2_tensor as tg

from .operators import OPERATORS
from .operators.host import HostTensor
from .passes.specialize import overflowed, widen


class Plan:
    def __init__(self, graph, ctx, constants, feeds):
        """Build the plan for ``feeds`` (input name -> device Tensor), computing its first run;
        ``self.first`` holds that run's outputs."""
        self.ctx = ctx
        self.steps = []                 # (node, fn) replayed each run
        self.values = dict(constants)   # name -> value fixed for these shapes (constants included)
        self.outputs = [v.name for v in graph.outputs]
        self.info = {}                  # name -> (shape, itemsize) of the device tensors steps touch
        self.widened = []               # nodes computed in float32: their float16 result overflowed
        self.schedule = self.memory = None      # the session's selection and memory plan (passes/)
        half = ctx.float_dtype is tg.float16
        static = set(constants)
        env = dict(constants)
        env.update(feeds)
        dead_after = _lifetimes(graph.nodes, self.outputs)
        for node, dead in zip(graph.nodes, dead_after):
            fn = OPERATORS[node.op_type]
            if half:
                fn = _unified(fn)
            outputs = _apply(fn, ctx, node, env)
            if half and not all(not n or n in static for n in node.inputs) \
                    and overflowed([env.get(n) for n in node.inputs if n], outputs):
                fn = _unified(OPERATORS[node.op_type], always=True)
                outputs = _apply(fn, ctx, node, env)
                self.widened.append(node.name)
            # A host value depends on shapes alone: operators make one only from host values
            # or from a shape (Shape, Size), never from a tensor's data.
            if all(not n or n in static for n in node.inputs) or all(isinstance(v, HostTensor) for v in outputs):
                static.update(node.outputs)
                self.values.update((n, v) for n, v in zip(node.outputs, outputs) if n)
            else:
                self.steps.append((node, fn))
                for name, value in [(n, env.get(n)) for n in node.inputs + node.outputs if n]:
                    if isinstance(value, tg.Tensor):
                        self.info[name] = (tuple(value.shape), value.dtype.itemsize)
            for name in dead:
                env.pop(name, None)
        self.first = [env[name] for name in self.outputs]
        self._dead_after = _lifetimes([node for node, _ in self.steps], self.outputs)

    def run(self, feeds):
        env = dict(self.values)
        env.update(feeds)
        for (node, fn), dead in zip(self.steps, self._dead_after):
            _apply(fn, self.ctx, node, env)
            for name in dead:
                env.pop(name, None)
        return [env[name] for name in self.outputs]


def _unified(fn, always=False):
    """fn with its float inputs in one dtype: float32 where they mix float16 and float32, or
    ``always`` (a node whose float16 result overflowed)."""
    def run(ctx, node, inputs):
        return fn(ctx, node, widen(inputs, always))
    return run


def _lifetimes(nodes, outputs):
    """For each node, the values no later node reads (nor the graph's outputs): freed after it."""
    last = {}
    for i, node in enumerate(nodes):
        for name in node.inputs:
            last[name] = i
    free = [[] for _ in nodes]
    for name, i in last.items():
        if name not in outputs:
            free[i].append(name)
    return free


def _apply(fn, ctx, node, env):
    """Run one node on the values in env, storing its outputs there."""
    inputs = [env[name] if name else None for name in node.inputs]
    while inputs and inputs[-1] is None:       # trailing optional inputs left out
        inputs.pop()
    try:
        outputs = fn(ctx, node, inputs)
    except (ValueError, TypeError, RuntimeError, IndexError) as e:    # from tracegrad's ops: say which node
        if node.describe() in str(e):
            raise
        raise ValueError(f"{node.describe()}: {e}") from e
    wanted = node.outputs
    if any(n for n in wanted[len(outputs):]):
        raise ValueError(f"{node.describe()}: output {len(outputs)} and later are not supported")
    for name, value in zip(wanted, outputs):
        if name:
            env[name] = value
    return outputs
