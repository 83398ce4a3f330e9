"""``InferenceSession``: onnxruntime's API on tracegrad's ops (chapter 13, "13_inference_compiler").

    from stage4_models.onnx import InferenceSession
    sess = InferenceSession("model.onnx")                  # device "cpu"; also "python", "cpu:lazy"
    [y] = sess.run(None, {sess.get_inputs()[0].name: x})  # numpy in, numpy out

The model is imported once (importer.py: the checks, the IR), its shapes inferred as
expressions of the input dims (inference/: ``sess.shapes()``, ``sess.memory()``; a Concat
whose extents cannot be proven equal refuses the model here) and, with ``optimize=True``
(the default), rewritten by the graph passes (passes/: canonicalize, dead-code elimination,
specialize); a plan (plan.py) is made the first time each set of input shapes is fed and
replayed after, and the shape-dependent passes (passes/select.py, passes/memory.py) choose
its kernels and plan its memory. ``explain()`` says what each pass did.
"""
import stage2_tensor as tg

from .importer import import_model, load_model
from .inference import infer
from .operators import Context
from .operators.context import tg_dtype
from .operators.host import HostTensor, to_numpy
from .passes import optimize as run_passes
from .passes.memory import plan_memory
from .passes.select import relabel, select
from .passes.writes import plan_writes
from .plan import Plan

_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "float16", "bool": "bool"}


class NodeArg:
    """An input or output as onnxruntime describes it: name, shape (ints, dim names), type."""
    def __init__(self, value):
        self.name = value.name
        self.shape = list(value.shape) if value.shape is not None else None
        self.type = f"tensor({_TYPE_NAMES.get(value.dtype, value.dtype)})"

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape})"


class InferenceSession:
    def __init__(self, path_or_bytes, device="cpu", dtype=None, optimize=True, measured_costs=None,
                 external_data_dir=None):
        """``dtype``: None keeps the model's float types; "float16", "float32" or "float64"
        stores every float weight and activation in that type (float16 computes in float32;
        a node whose float16 result overflows stores float32: passes/specialize.py).
        ``optimize``: run the passes (False: the graph as imported, node by node).
        ``measured_costs``: kernel name -> cost per byte, for the selection (passes/select.py).
        ``external_data_dir``: for a model given as bytes, the folder its tensors' external
        data files are in (a model file's are read from its own folder: importer.py)."""
        if not isinstance(optimize, bool):
            raise TypeError(f"InferenceSession: optimize must be True or False, got {optimize!r}")
        self.imported = self.graph = import_model(load_model(path_or_bytes, external_data_dir))
        self.inference = infer(self.graph)     # symbolic shapes; refuses unprovable Concats
        self.optimize = optimize
        self.measured_costs = measured_costs
        self.pass_records, self.specialization = [], None
        float_dtype = None
        if dtype is not None:
            float_dtype = tg_dtype(str(getattr(dtype, "name", dtype)), "InferenceSession")
            if not float_dtype.is_floating_point:
                raise ValueError(f"InferenceSession: dtype must be a float type, got {dtype!r}")
        tg.device(device)           # ValueError for a device that does not exist
        self.device = device
        if optimize:
            self.graph, self.pass_records, self.specialization = run_passes(
                self.graph, float_dtype.name if float_dtype is not None else "float32", device)
        self.ctx = Context(device, float_dtype)
        # The weights move to the device one by one, each numpy copy let go as it goes: the
        # graphs keep their nodes, not a second copy of the weights
        constants, self.imported.constants, self.graph.constants = self.graph.constants, {}, {}
        self._constants = {name: self.ctx.constant(constants.pop(name)) for name in list(constants)}
        self._plans = {}

    def shapes(self):
        """Every value's symbolic shape, one per line (inference/: expressions of the input dims)."""
        return self.inference.table()

    def get_inputs(self):
        return [NodeArg(v) for v in self.graph.inputs]

    def get_outputs(self):
        return [NodeArg(v) for v in self.graph.outputs]

    def _feed(self, value, array):
        """One input checked against its declaration and moved to the device."""
        import numpy as np
        if not isinstance(array, np.ndarray):
            raise TypeError(f"input {value.name!r}: expected a numpy array, got {type(array).__name__}")
        if value.dtype is not None and array.dtype.name != value.dtype:
            raise TypeError(f"input {value.name!r}: expected dtype {value.dtype}, got {array.dtype.name}")
        if value.shape is not None:
            if array.ndim != len(value.shape) or any(isinstance(d, int) and d > 0 and d != s
                                                     for d, s in zip(value.shape, array.shape)):
                raise ValueError(f"input {value.name!r}: expected shape {list(value.shape)}, got {list(array.shape)}")
        t = tg.from_numpy(np.ascontiguousarray(array), device=self.device)
        if self.ctx.float_dtype is not None and t.dtype.is_floating_point:
            t = t.to(dtype=self.ctx.float_dtype)
        return t

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (None: all) as numpy arrays, for ``input_feed`` (name -> array)."""
        if not isinstance(input_feed, dict):
            raise TypeError(f"input_feed must be a dict of name -> numpy array, got {type(input_feed).__name__}")
        declared = {v.name: v for v in self.graph.inputs}
        unknown = sorted(set(input_feed) - set(declared))
        missing = sorted(set(declared) - set(input_feed))
        if unknown or missing:
            raise ValueError(f"input names: unknown {unknown}, missing {missing}; the model's inputs are "
                             f"{sorted(declared)}")
        outputs = {v.name: v for v in self.graph.outputs}
        names = list(outputs) if output_names is None else list(output_names)
        bad = [n for n in names if n not in outputs]
        if bad:
            raise ValueError(f"output names {bad} are not among the model's outputs {list(outputs)}")
        feeds = {name: self._feed(declared[name], array) for name, array in input_feed.items()}
        key = tuple((name, tuple(t.shape), t.dtype.name) for name, t in sorted(feeds.items()))
        with tg.no_grad():
            if key not in self._plans:
                plan = self._plans[key] = Plan(self.graph, self.ctx, self._constants, feeds)
                results, plan.first = plan.first, None        # the plan keeps no activations
                if self.optimize:
                    steps = [node for node, _ in plan.steps]
                    plan.schedule = select(steps, plan.info, plan.outputs, self.device, self.measured_costs)
                    plan.writes = plan_writes(steps, plan.schedule, plan.info, plan.dtypes, plan.outputs,
                                              self.device)
                    relabel(plan.schedule, plan.writes, steps, plan.info, plan.outputs, self.measured_costs)
                    plan.memory = plan_memory(steps, plan.info, plan.outputs, plan.schedule, plan.writes)
                    plan.compile(plan.schedule, plan.writes, self.device)
            else:
                results = self._plans[key].run(feeds)
        by_name = dict(zip(self._plans[key].outputs, results))
        return [self._to_numpy(by_name[n], outputs[n]) for n in names]

    def explain(self):
        """What the passes did, as plain data (the chapter shows it): each graph pass's node
        counts and changes, then for each plan made (one per set of input shapes fed) its
        kernels (the supergraph's cheapest path) and the supergraph's edges, the bytes moved,
        the memory plan (its peak; each buffer's lifetime in steps, offset and size) and the
        nodes widened to float32, and for each Concat how each input reaches its buffer
        (written in place by its producer, or copied, and why: passes/writes.py)."""
        report = {"optimize": self.optimize, "nodes_imported": len(self.imported.nodes),
                  "nodes": len(self.graph.nodes), "passes": [r.as_dict() for r in self.pass_records],
                  "plans": []}
        for key, plan in self._plans.items():
            entry = {"inputs": {name: list(shape) for name, shape, _ in key}, "steps": len(plan.steps),
                     "float32_nodes": list(plan.widened)}
            if getattr(plan, "schedule", None) is not None:
                entry["kernels"] = [(c.kernel, c.nodes) for c in plan.schedule.choices]
                entry["bytes_moved"] = plan.schedule.bytes_moved
                entry["supergraph"] = list(plan.schedule.edges)         # (from step, to step, kernel, cost)
                entry["memory"] = plan.memory.summary()
                entry["concats"] = {name: [f"{value}: {how}" for value, how in lines]
                                    for name, lines in plan.writes.report.items()}
                entry["buffers"] = [(b.name, b.start, b.end, b.offset, b.size) for b in plan.memory.buffers]
            report["plans"].append(entry)
        return report

    @staticmethod
    def _to_numpy(value, declared):
        """An output as an array of its own, as onnxruntime returns it: numpy() on a native
        device shares the tensor's memory, which may be a weight, a value the plan keeps for
        every run, or the caller's input (an Identity's output)."""
        if not isinstance(value, HostTensor) and value.dtype.name == "bfloat16":
            value = value.float()           # numpy has no bfloat16; float32 holds every bfloat16
        array = to_numpy(value) if isinstance(value, HostTensor) else value.numpy()
        return array.astype(declared.dtype or array.dtype, copy=True)

    def memory(self):
        """The plan's live activation bytes per step and their peak, as expressions of the
        input dims (inference/memory.py): ``(peak, [(node, bytes), ...])``."""
        from .inference.memory import peak, profile
        itemsize = self.ctx.float_dtype.itemsize if self.ctx.float_dtype is not None else None
        per_step = profile(self.graph, self.inference, itemsize)
        return peak([b for _, b in per_step]), per_step
