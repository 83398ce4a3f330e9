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

Once the passes have chosen the plan's kernels (passes/select.py) and which Concat inputs
are written in place (passes/writes.py), ``compile`` makes the replay follow them where a
kernel is not the nodes' own operators: a Conv and its ReLU as one conv_bands call on
device cpu, a producer (a convolution, a MaxPool, a Resize) writing into its slice of a
Concat's buffer (made when the first of them runs), and such a Concat copying only the
inputs no producer wrote. The first run,
made before the passes, ran node by node.
"""
from contextlib import contextmanager
from dataclasses import dataclass

import stage2_tensor as tg

from .operators import OPERATORS
from .operators.host import HostTensor
from .operators.pooling import max_pool_into
from .operators.resize import resize_into
from .passes.specialize import overflowed, widen


# the producers (besides the convolutions: _conv_step) that write into a Concat's slice
_INTO = {"MaxPool": max_pool_into, "Resize": resize_into, "Upsample": resize_into}


class Plan:
    def __init__(self, graph, ctx, constants, feeds):
        """Build the plan for ``feeds`` (input name -> device Tensor), computing its first run;
        ``self.first`` holds that run's outputs."""
        self.ctx = ctx
        self.steps = []                 # (node, fn) replayed each run (until ``compile``)
        self.program = None             # compile's Steps, replayed instead once made
        self.choice_steps = None        # the Steps of each of the schedule's choices
        self.dtypes = {}                # name -> tracegrad dtype of the device tensors steps touch
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
                        self.dtypes[name] = value.dtype
            for name in dead:
                env.pop(name, None)
        self.first = [env[name] for name in self.outputs]
        self._dead_after = _lifetimes([node for node, _ in self.steps], self.outputs)

    def run(self, feeds):
        env = dict(self.values)
        env.update(feeds)
        if self.program is not None:
            for step, dead in zip(self.program, self._dead_after):
                step.run(env)
                for name in dead:
                    env.pop(name, None)
            return [env[name] for name in self.outputs]
        for (node, fn), dead in zip(self.steps, self._dead_after):
            _apply(fn, self.ctx, node, env)
            for name in dead:
                env.pop(name, None)
        return [env[name] for name in self.outputs]

    def compile(self, schedule, writes, device):
        """Replay the schedule's kernels (see the module docstring): ``writes`` is
        passes/writes.py's decision, ``device`` the session's."""
        fns = {node.name: (node, fn) for node, fn in self.steps}
        concats = {}            # Concat node name -> (its node, output shape, dtype)
        for node, _ in self.steps:
            if node.name in writes.report:
                out = node.outputs[0]
                concats[node.name] = (node, self.info[out][0], self.dtypes[out])
        program, self.choice_steps = [], []
        for choice in schedule.choices:
            first = len(program)
            nodes = [fns[name][0] for name in choice.nodes]
            last = nodes[-1]
            target = writes.producers.get(last.name)
            direct = device == "cpu" and all(self.dtypes.get(n) in (tg.float32, tg.float64)
                                             for n in (nodes[0].inputs[0], last.outputs[0]))
            fused = choice.kernel == "conv_bias_relu" and direct
            if fused or target is not None and choice.kernel == "conv" and direct:
                name = last.outputs[0]
                into = None if target is None else (concats[target], writes.into[name])
                program.append(Step(nodes[0].inputs, [name], _conv_step(self.ctx, nodes[0], name, fused, into)))
            elif target is not None and direct and len(nodes) == 1 and last.op_type in _INTO:
                name = last.outputs[0]
                program.append(Step(last.inputs, [name], _into_step(self.ctx, last, name, (concats[target],
                                                                                          writes.into[name]))))
            elif target is not None:        # computed into its own buffer, copied into its slice
                program += [Step(node.inputs, node.outputs, _node_step(self.ctx, node, fns[node.name][1]))
                            for node in nodes]
                name = last.outputs[0]
                program.append(Step([name], [name], _place_step(name, concats[target], writes.into[name])))
            elif last.name in concats and any(writes.into.get(n, ("",))[0] == last.name for n in last.inputs):
                program.append(Step(last.inputs, last.outputs, _concat_step(concats[last.name], writes)))
            else:
                program += [Step(node.inputs, node.outputs, _node_step(self.ctx, node, fns[node.name][1]))
                            for node in nodes]
            self.choice_steps.append(program[first:])         # what measure.py times per kernel
        self.program = program
        self._dead_after = _lifetimes(program, self.outputs)


@dataclass
class Step:
    """One step of a compiled replay: the names it reads and writes, and what runs it."""
    inputs: list
    outputs: list
    run: object             # env -> None


def _node_step(ctx, node, fn):
    return lambda env: _apply(fn, ctx, node, env)


def _slice(env, concat, start, extent):
    """The slice [start, start + extent) along the Concat's axis of its buffer, the buffer
    made (uninitialized: every element is written, by a producer or a copy) if this is
    the first producer to run."""
    (node, shape, dtype), axis = concat[0], concat[1]
    buffer = env.get(node.outputs[0])
    if buffer is None:
        buffer = env[node.outputs[0]] = tg.empty(*shape, dtype=dtype, device=buffer_device(env, node))
    return buffer[(slice(None),) * axis + (slice(start, start + extent),)]


def buffer_device(env, node):
    """The device of the Concat's inputs already computed (the plan's one device)."""
    for name in node.inputs:
        value = env.get(name)
        if isinstance(value, tg.Tensor):
            return value.device
    return "cpu"


def _conv_step(ctx, conv, name, relu, into):
    """A Conv (and the Relu after it when ``relu``) by conv_into, into its slice of a Concat's
    buffer when ``into`` = ((the Concat's node, shape, dtype), (concat, axis, start, extent))."""
    from .operators.conv import conv_into

    def run(env):
        inputs = [env[n] if n else None for n in conv.inputs]
        while inputs and inputs[-1] is None:
            inputs.pop()
        out = None
        if into is not None:
            (target, (_, axis, start, extent)) = into
            out = _slice(env, (target, axis), start, extent)
        with naming(conv):
            env[name] = conv_into(ctx, conv, inputs, relu=relu, out=out)
    return run


def _into_step(ctx, node, name, into):
    """A MaxPool, Resize or Upsample writing into its slice of a Concat's buffer (their
    device kernels max_pool_into, interpolate_into): ``into`` as _conv_step's."""
    write = _INTO[node.op_type]
    target, (_, axis, start, extent) = into

    def run(env):
        inputs = [env[n] if n else None for n in node.inputs]
        while inputs and inputs[-1] is None:
            inputs.pop()
        out = _slice(env, (target, axis), start, extent)
        with naming(node):
            [env[name]] = write(ctx, node, inputs, out)
    return run


def _place_step(name, concat, into):
    """Copy ``name`` into its slice of the Concat's buffer, which it is from then on."""
    _, axis, start, extent = into

    def run(env):
        env[name] = _slice(env, (concat, axis), start, extent).copy_(env[name])
    return run


def _concat_step(concat, writes):
    """A Concat some of whose inputs their producers wrote in place: the others copied into
    their slices of the buffer (which the first producer made)."""
    node, shape, _ = concat
    axis = node.attr("axis", 1 if node.opset < 4 else None) % len(shape)

    def run(env):
        start = 0
        for name in node.inputs:
            value = env[name]
            if writes.into.get(name, ("",))[0] != node.name:      # not written here by its producer
                _slice(env, (concat, axis), start, value.shape[axis]).copy_(value)
            start += value.shape[axis]
    return run


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
    kept = set(outputs)
    for name, i in last.items():
        if name not in kept:
            free[i].append(name)
    return free


@contextmanager
def naming(node):
    """Errors from tracegrad's ops say which node raised them: a ValueError, or the
    allocator's MemoryError (sizes the operators' checks let through, that the machine
    has no room for at the moment)."""
    try:
        yield
    except (ValueError, TypeError, RuntimeError, IndexError) as e:
        if node.describe() in str(e):
            raise
        raise ValueError(f"{node.describe()}: {e}") from e
    except MemoryError as e:
        raise MemoryError(f"{node.describe()}: out of memory ({e})") from e


def _apply(fn, ctx, node, env):
    """Run one node on the values in env, storing its outputs there."""
    inputs = [env[name] if name else None for name in node.inputs]
    while inputs and inputs[-1] is None:       # trailing optional inputs left out
        inputs.pop()
    with naming(node):
        outputs = fn(ctx, node, inputs)
    wanted = node.outputs
    if any(n for n in wanted[len(outputs):]):
        raise ValueError(f"{node.describe()}: output {len(outputs)} and later are not supported")
    for name, value in zip(wanted, outputs):
        if name:
            env[name] = value
    return outputs
