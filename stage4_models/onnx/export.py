"""Export a model built with tracegrad's ``nn`` to ONNX, by tracing (chapter 13,
"13_inference_compiler": export).

    from stage4_models.onnx.export import export
    export(model, example, "model.onnx", input_names=["x"], output_names=["y"],
           dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}, "y": {0: "N", 2: "H", 3: "W"}})

tracegrad has no graph to read: a model is Python code. So ``export`` runs it once on the
example while a ``Recorder`` stands in for the operations it may call (the convolution,
pooling and resampling functions every layer and ``F`` function reaches, ``cat``, the
activations, ``linear``, ``batch_norm``, the tensor methods ``relu``, ``flatten``, ``+``,
``*`` ...). Each recorded call writes its ONNX node(s); the calls a recorded operation makes
inside itself are not recorded (it is one node). A tensor reaching a recorded operation is
named by the node that made it, or is a constant (a parameter, a buffer, a tensor the code
made: an initializer). The example runs with ``requires_grad``, so a value computed by an
operation that was *not* recorded carries a ``grad_fn``: it is refused with that
operation's name rather than silently frozen into a constant. A module whose arithmetic is
not a fixed sequence of these operations (padding to a multiple of 4 at any size) writes its
own nodes: a method ``export_onnx(builder, *input_names)`` returning its output name(s).
(The stand-ins replace module attributes, so code must reach them through their modules,
``tg.cat``, ``F.relu``, as the layers do; a ``from stage2_tensor import cat`` made before
export is not seen, and its result is refused by the grad_fn check above.)

Weights are initializers; the opset is 17; ``dynamic_axes`` names the free dims (torch's
form: {value name: {axis: dim name}} or {value name: [axes]}). The model is exported in
eval mode (dropout off, batch norm on its running statistics), as torch.onnx.export does,
and its modes are restored after. The result passes ``onnx.checker.check_model``.
"""
import importlib

import numpy as np

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor.atomic import atomic_write
from stage2_tensor.nn.modules import Module
from stage2_tensor.tensor import Tensor

# the modules themselves (the package re-exports functions of the same names: softmax, ...)
concat, convolution, normalization_functions, resampling, softmax = (
    importlib.import_module(f"stage2_tensor.{name}")
    for name in ("concat", "convolution", "normalization_functions", "resampling", "softmax"))
OPSET = 17
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


class Builder:
    """The ONNX graph being written: its nodes, its initializers, and the name of every
    traced tensor (kept alive while tracing, so ``id`` stays a tensor's own)."""

    def __init__(self, constant_names=None):
        self.nodes, self.initializers = [], []
        self.names, self.alive = {}, []
        self.constant_names = constant_names or {}      # id(parameter or buffer) -> its name
        self.used = set()
        self.depth = 0                                  # > 0 inside a recorded operation

    def fresh(self, hint):
        """A name no value has yet."""
        name, k = hint, 1
        while name in self.used:
            name, k = f"{hint}_{k}", k + 1
        self.used.add(name)
        return name

    def node(self, op_type, inputs, outputs=1, **attributes):
        """Append a node; its output names (``outputs`` new ones, or the names given)."""
        from onnx import helper
        if isinstance(outputs, int):
            outputs = [self.fresh(f"{op_type.lower()}{len(self.nodes)}") for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs),
                                           name=f"{op_type}_{len(self.nodes)}", **attributes))
        return outputs

    def constant(self, array, hint="const"):
        """An initializer holding ``array``; its name."""
        from onnx import numpy_helper
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def ints(self, values, hint="ints"):
        return self.constant(np.array(values, dtype=np.int64), hint)

    def bind(self, tensor, name):
        self.names[id(tensor)] = name
        self.alive.append(tensor)
        return name

    def name_of(self, value, consumer, dtype="float32"):
        """The ONNX name of a tensor (or Python number) that ``consumer`` reads."""
        if isinstance(value, (bool, int, float)):
            return self.constant(np.array(value, dtype=dtype), "scalar")
        if not isinstance(value, Tensor):
            raise TypeError(f"export: {consumer} reads a {type(value).__name__}; expected a tensor")
        if id(value) in self.names:
            return self.names[id(value)]
        if value.grad_fn is not None:
            raise ValueError(f"export: {consumer} reads a value computed by {value.grad_fn.name}, an "
                             f"operation the exporter does not support (it supports: {', '.join(SUPPORTED)})")
        hint = self.constant_names.get(id(value), "const")
        return self.bind(value, self.constant(value.detach().numpy(), hint))


# ---- what each recorded operation writes: handler(builder, result, *the call's arguments) -----
def _conv(b, out, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, n=2):
    _batched(x, n, "conv")
    _, _, kernel, stride, before, after, dilation = convolution._conv_args(
        x, weight, stride, padding, dilation, groups, n, "conv")
    inputs = [b.name_of(x, "Conv"), b.name_of(weight, "Conv")] + ([b.name_of(bias, "Conv")] if bias is not None else [])
    [y] = b.node("Conv", inputs, kernel_shape=list(kernel), strides=list(stride), pads=list(before) + list(after),
                 dilations=list(dilation), group=groups)
    b.bind(out, y)


def _max_pool(b, out, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False, n=2):
    if return_indices:
        raise ValueError("export: max_pool with return_indices=True is not supported")
    _batched(x, n, "max_pool")
    kernel, stride, pad, dilation = convolution._pool_args(kernel_size, stride, padding, dilation, n, "max_pool")
    [y] = b.node("MaxPool", [b.name_of(x, "MaxPool")], kernel_shape=list(kernel), strides=list(stride),
                 pads=list(pad) * 2, dilations=list(dilation), ceil_mode=int(ceil_mode))
    b.bind(out, y)


def _avg_pool(b, out, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, n=2):
    _batched(x, n, "avg_pool")
    kernel, stride, pad, _ = convolution._pool_args(kernel_size, stride, padding, 1, n, "avg_pool")
    [y] = b.node("AveragePool", [b.name_of(x, "AveragePool")], kernel_shape=list(kernel), strides=list(stride),
                 pads=list(pad) * 2, ceil_mode=int(ceil_mode), count_include_pad=int(count_include_pad))
    b.bind(out, y)


def _interpolate(b, out, input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    x = b.name_of(input, "Resize")
    transform = ("asymmetric" if mode == "nearest" else "align_corners" if align_corners else "pytorch_half_pixel")
    factors = [o / i for o, i in zip(out.shape[2:], input.shape[2:])]
    if size is None and all(f == int(f) for f in factors):   # scales keep H and W free
        inputs = [x, "", b.constant(np.array([1.0, 1.0] + factors, dtype=np.float32), "scales")]
    else:                                                     # a size, or an uneven factor: fixed sizes
        inputs = [x, "", "", b.ints(list(out.shape), "sizes")]
    attributes = {"nearest_mode": "floor"} if mode == "nearest" else {}
    [y] = b.node("Resize", inputs, mode="nearest" if mode == "nearest" else "linear",
                 coordinate_transformation_mode=transform, **attributes)
    b.bind(out, y)


def _cat(b, out, tensors, dim=0):
    [y] = b.node("Concat", [b.name_of(t, "Concat") for t in tensors], axis=dim)
    b.bind(out, y)


def _unary(op_type):
    def handler(b, out, x):
        b.bind(out, b.node(op_type, [b.name_of(x, op_type)])[0])
    return handler


def _binary(op_type, swap=False):
    def handler(b, out, x, other):
        dtype = x.dtype.name
        a, c = b.name_of(x, op_type), b.name_of(other, op_type, dtype)
        b.bind(out, b.node(op_type, [c, a] if swap else [a, c])[0])
    return handler


def _reshape_to(b, out, x, shape, what):
    [y] = b.node("Reshape", [b.name_of(x, what), b.ints(shape, "shape")])
    b.bind(out, y)


def _flatten(b, out, x, start_dim=0, end_dim=-1):
    start = start_dim % max(x.ndim, 1)
    end = end_dim % max(x.ndim, 1)
    if start == 1 and end == x.ndim - 1:            # (N, ...) -> (N, rest): ONNX's own Flatten
        b.bind(out, b.node("Flatten", [b.name_of(x, "Flatten")], axis=1)[0])
        return
    # the dims before start copied (0 keeps a free batch dim free), the flattened one inferred
    _reshape_to(b, out, x, [0] * start + [-1] + list(x.shape[end + 1:]), "flatten")


def _reshape(b, out, x, *shape):
    _reshape_to(b, out, x, list(out.shape), "reshape")


def _leaky_relu(b, out, input, negative_slope=0.01, inplace=False):
    b.bind(out, b.node("LeakyRelu", [b.name_of(input, "LeakyRelu")], alpha=float(negative_slope))[0])


def _linear(b, out, x, weight, bias=None):
    if x.ndim == 2:                                 # Gemm: x @ W^T + b, the transpose a flag
        inputs = [b.name_of(x, "Gemm"), b.name_of(weight, "Gemm")]
        inputs += [b.name_of(bias, "Gemm")] if bias is not None else []
        b.bind(out, b.node("Gemm", inputs, transB=1)[0])
        return
    w_t = b.constant(weight.detach().numpy().T, "weight_t")
    [y] = b.node("MatMul", [b.name_of(x, "MatMul"), w_t])
    if bias is not None:
        [y] = b.node("Add", [y, b.name_of(bias, "Add")])
    b.bind(out, y)


def _batch_norm(b, out, input, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    if training or running_mean is None:
        raise ValueError("export: batch_norm on the batch's statistics (training mode, or no running "
                         "statistics) cannot be exported; ONNX's BatchNormalization uses running ones")
    c = input.shape[1]
    scale = b.name_of(weight, "BatchNormalization") if weight is not None else b.constant(np.ones(c, np.float32), "ones")
    shift = b.name_of(bias, "BatchNormalization") if bias is not None else b.constant(np.zeros(c, np.float32), "zeros")
    [y] = b.node("BatchNormalization", [b.name_of(input, "BatchNormalization"), scale, shift,
                                        b.name_of(running_mean, "BatchNormalization"),
                                        b.name_of(running_var, "BatchNormalization")], epsilon=float(eps))
    b.bind(out, y)


def _dropout(b, out, x, p=0.5, training=True, inplace=False):
    if training and p > 0:
        raise ValueError("export: dropout in training mode cannot be exported (the model is put in eval "
                         "mode; this call passed training=True itself)")
    b.bind(out, b.name_of(x, "Dropout"))        # identity at inference


def _softmax(op_type):
    def handler(b, out, x, dim=-1, *rest, **kwargs):
        b.bind(out, b.node(op_type, [b.name_of(x, op_type)], axis=dim)[0])
    return handler


def _pad(b, out, input, pad, mode="constant", value=0.0):
    pad = list(pad)
    before, after = [0] * input.ndim, [0] * input.ndim
    for k in range(len(pad) // 2):              # torch: (before, after) pairs from the last dim backwards
        before[input.ndim - 1 - k], after[input.ndim - 1 - k] = pad[2 * k], pad[2 * k + 1]
    inputs = [b.name_of(input, "Pad"), b.ints(before + after, "pads")]
    if mode == "constant":
        inputs.append(b.constant(np.array(value, dtype=input.dtype.name), "pad_value"))
    b.bind(out, b.node("Pad", inputs, mode=_PAD_MODES[mode])[0])


def _batched(x, n, what):
    if not isinstance(x, Tensor) or x.ndim != n + 2:
        raise ValueError(f"export: {what} reads a {getattr(x, 'ndim', '?')}-d input; only batched (N, C, ...) "
                         "inputs are exported")


# (owner, attribute, handler): every place a model's code reaches one of these operations. A
# layer (nn.Conv2d) and its F function (F.conv2d) both end in convolution.conv, looked up in
# that module at each call, so one entry records both.
_PATCHES = [
    (convolution, "conv", _conv), (convolution, "max_pool", _max_pool), (convolution, "avg_pool", _avg_pool),
    (resampling, "interpolate", _interpolate), (F, "interpolate", _interpolate),
    (resampling, "pad", _pad), (F, "pad", _pad),
    (concat, "cat", _cat), (tg, "cat", _cat),
    (Tensor, "relu", _unary("Relu")), (Tensor, "sigmoid", _unary("Sigmoid")), (Tensor, "tanh", _unary("Tanh")),
    (Tensor, "__add__", _binary("Add")), (Tensor, "__radd__", _binary("Add", swap=True)),
    (Tensor, "__sub__", _binary("Sub")), (Tensor, "__mul__", _binary("Mul")),
    (Tensor, "__rmul__", _binary("Mul", swap=True)), (Tensor, "__truediv__", _binary("Div")),
    (Tensor, "flatten", _flatten), (Tensor, "reshape", _reshape), (Tensor, "view", _reshape),
    (F, "leaky_relu", _leaky_relu), (F, "linear", _linear), (F, "dropout", _dropout),
    (F, "batch_norm", _batch_norm), (normalization_functions, "batch_norm", _batch_norm),
    (F, "softmax", _softmax("Softmax")), (softmax, "softmax", _softmax("Softmax")),
    (F, "log_softmax", _softmax("LogSoftmax")), (softmax, "log_softmax", _softmax("LogSoftmax")),
]
SUPPORTED = ("Conv", "MaxPool", "AveragePool", "Resize (interpolate, Upsample)", "Concat", "Relu", "LeakyRelu",
             "Sigmoid", "Tanh", "Add", "Sub", "Mul", "Div", "Gemm/MatMul (linear)", "Flatten", "Reshape",
             "BatchNormalization", "Dropout", "Softmax", "LogSoftmax", "Pad", "modules with export_onnx")


class Recorder:
    """While active, the operations in ``_PATCHES`` (and the ``forward`` of ``modules`` that
    define ``export_onnx``) write their nodes into ``builder`` as they run."""

    def __init__(self, builder, modules=()):
        self.builder, self.modules, self.saved = builder, modules, []

    def _wrap(self, original, handler):
        b = self.builder

        def recorded(*args, **kwargs):
            if b.depth:                         # inside a recorded operation: part of its node
                return original(*args, **kwargs)
            b.depth += 1
            try:
                out = original(*args, **kwargs)
            finally:
                b.depth -= 1
            if out is not NotImplemented:
                handler(b, out, *args, **kwargs)
            return out
        return recorded

    def __enter__(self):
        for owner, name, handler in _PATCHES:
            own = owner.__dict__ if isinstance(owner, type) else vars(owner)
            self.saved.append((owner, name, own.get(name, None), name in own))
            setattr(owner, name, self._wrap(getattr(owner, name), handler))
        for module in self.modules:             # instance attributes: other instances untouched
            self.saved.append((module, "forward", None, False))
            module.forward = self._wrap(type(module).forward.__get__(module), _custom(module))
        return self

    def __exit__(self, *exc):
        for owner, name, value, had in reversed(self.saved):
            if had:
                setattr(owner, name, value)
            else:
                delattr(owner, name)
        self.saved = []


def _custom(module):
    def handler(b, out, *args):
        names = module.export_onnx(b, *[b.name_of(a, type(module).__name__) for a in args])
        outs = out if isinstance(out, (tuple, list)) else [out]
        names = names if isinstance(names, (tuple, list)) else [names]
        for t, name in zip(outs, names):
            b.bind(t, name)
    return handler


def export(model, example_input, path=None, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=OPSET):
    """Trace ``model`` on ``example_input`` (a Tensor, or a tuple of them) and return the
    ModelProto, written to ``path`` when one is given."""
    import onnx
    from onnx import helper
    if not isinstance(model, Module):
        raise TypeError(f"export: expected an nn.Module, got {type(model).__name__}")
    examples = example_input if isinstance(example_input, (tuple, list)) else (example_input,)
    if not examples or not all(isinstance(x, Tensor) and x.dtype.is_floating_point for x in examples):
        raise TypeError("export: example_input must be a float Tensor or a tuple of float Tensors")
    if opset_version != OPSET:
        raise ValueError(f"export: opset_version {opset_version} is not supported; the exporter writes opset {OPSET}")
    input_names = _names(input_names, len(examples), "input")
    builder = Builder({id(t): name for name, t in [*model.named_parameters(), *model.named_buffers()]})
    builder.used.update(input_names)
    inputs = []
    for x, name in zip(examples, input_names):
        x = x.detach()
        x.requires_grad_(True)                  # an unrecorded op on it then shows as a grad_fn
        inputs.append(x)
        builder.bind(x, name)
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    custom = [m for m in model.modules() if callable(getattr(m, "export_onnx", None))]
    try:
        with Recorder(builder, custom):
            result = model(*inputs)
    finally:
        for m, training in modes:
            m.training = training
    results = result if isinstance(result, (tuple, list)) else (result,)
    output_names = _names(output_names, len(results), "output")
    if set(output_names) & set(input_names):
        raise ValueError(f"export: output names {output_names} repeat input names {input_names}")
    for t, name in zip(results, output_names):
        _rename(builder, builder.name_of(t, f"output {name!r}"), name)
    axes = _dynamic_axes(dynamic_axes, dict(zip(input_names, inputs)) | dict(zip(output_names, results)))
    graph = helper.make_graph(
        builder.nodes, type(model).__name__,
        [_value_info(name, t, axes.get(name, {})) for name, t in zip(input_names, inputs)],
        [_value_info(name, t, axes.get(name, {})) for name, t in zip(output_names, results)],
        builder.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tracegrad")
    onnx.checker.check_model(proto)
    if path is not None:
        # the old file or the whole new one, never half (a killed export's temporary file
        # is swept by the next write: stage2_tensor/atomic.py)
        atomic_write(path, lambda f: f.write(proto.SerializeToString()))
    return proto


def _rename(builder, name, new):
    """Make the value ``name`` the graph output ``new``: its producer writes ``new`` (an
    Identity when it is an input or an initializer, which no node produces)."""
    if not any(name in n.output for n in builder.nodes):
        builder.node("Identity", [name], [new])
        return
    for node in builder.nodes:
        for i, v in enumerate(node.output):
            if v == name:
                node.output[i] = new
        for i, v in enumerate(node.input):
            if v == name:
                node.input[i] = new
    builder.names.update({k: new for k, v in builder.names.items() if v == name})


def _names(names, count, what):
    if names is None:
        return [f"{what}" if count == 1 else f"{what}{i}" for i in range(count)]
    names = list(names)
    if len(names) != count or not all(isinstance(n, str) and n for n in names) or len(set(names)) != count:
        raise ValueError(f"export: {what}_names must be {count} distinct non-empty strings, got {names}")
    return names


def _dynamic_axes(dynamic_axes, values):
    """{value name: {axis: dim name}} checked against the traced values."""
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if name not in values:
            raise ValueError(f"export: dynamic_axes names {name!r}, which is not an input or output "
                             f"({sorted(values)})")
        if isinstance(axes, (list, tuple)):
            axes = {a: f"{name}_dim{a}" for a in axes}
        if not isinstance(axes, dict):
            raise TypeError(f"export: dynamic_axes[{name!r}] must be a dict or list of axes, got {type(axes).__name__}")
        ndim = values[name].ndim
        for a, dim in axes.items():
            if isinstance(a, bool) or not isinstance(a, int) or not -ndim <= a < ndim or not isinstance(dim, str):
                raise ValueError(f"export: dynamic_axes[{name!r}] has axis {a!r} -> {dim!r}; expected an axis "
                                 f"of the {ndim}-d value and a dim name")
        out[name] = {a % ndim: dim for a, dim in axes.items()}
    return out


def _value_info(name, tensor, dynamic):
    from onnx import helper
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(tensor.dtype.name))
    shape = [dynamic.get(i, d) for i, d in enumerate(tensor.shape)]
    return helper.make_tensor_value_info(name, elem, shape)
