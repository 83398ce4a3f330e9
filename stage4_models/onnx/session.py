"""``InferenceSession``: onnxruntime's API on tracegrad's ops (chapter 13, "13_inference_compiler").

    from stage4_models.onnx import InferenceSession
    sess = InferenceSession("model.onnx")                  # device "cpu"; also "python", "cpu:lazy"
    [y] = sess.run(None, {sess.get_inputs()[0].name: x})  # numpy in, numpy out

The model is imported once (importer.py: the checks, the IR), its shapes inferred as
expressions of the input dims (inference/: ``sess.shapes()``, ``sess.memory()``; a Concat
whose extents cannot be proven equal refuses the model here); a plan (plan.py) is made the
first time each set of input shapes is fed and replayed after.
"""
import stage2_tensor as tg

from .importer import import_model, load_model
from .inference import infer
from .operators import Context
from .operators.context import tg_dtype
from .operators.host import HostTensor, to_numpy
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
    def __init__(self, path_or_bytes, device="cpu", dtype=None):
        """``dtype``: None keeps the model's float types; "float32" or "float64" stores
        every float weight and activation in that type."""
        self.graph = import_model(load_model(path_or_bytes))
        self.inference = infer(self.graph)     # symbolic shapes; refuses unprovable Concats
        float_dtype = None
        if dtype is not None:
            float_dtype = tg_dtype(str(getattr(dtype, "name", dtype)), "InferenceSession")
            if not float_dtype.is_floating_point:
                raise ValueError(f"InferenceSession: dtype must be a float type, got {dtype!r}")
        tg.device(device)           # ValueError for a device that does not exist
        self.device = device
        self.ctx = Context(device, float_dtype)
        self._constants = {name: self.ctx.constant(array) for name, array in self.graph.constants.items()}
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
            else:
                results = self._plans[key].run(feeds)
        by_name = dict(zip(self._plans[key].outputs, results))
        return [self._to_numpy(by_name[n], outputs[n]) for n in names]

    @staticmethod
    def _to_numpy(value, declared):
        array = to_numpy(value) if isinstance(value, HostTensor) else value.numpy()
        if declared.dtype is not None and array.dtype.name != declared.dtype:
            array = array.astype(declared.dtype)
        return array

    def memory(self):
        """The plan's live activation bytes per step and their peak, as expressions of the
        input dims (inference/memory.py): ``(peak, [(node, bytes), ...])``."""
        from .inference.memory import peak, profile
        itemsize = self.ctx.float_dtype.itemsize if self.ctx.float_dtype is not None else None
        per_step = profile(self.graph, self.inference, itemsize)
        return peak([b for _, b in per_step]), per_step
