"""ONNX ModelProto -> the engine's Graph (chapter 13, "13_inference_compiler": import).

Reading the protobuf file is the ``onnx`` package's job; this module turns what it read
into ``ir.Graph`` and checks it, since every file is untrusted: a file that does not parse,
a node that reads a value nothing produced, an attribute of the wrong kind, an operator
this engine does not implement all fail here, before anything runs, with a ValueError that
names the node, the operator and its opset.
"""
import os

from .ir import Graph, Node, Value
from .operators import OPERATORS

ONNX_DOMAINS = ("", "ai.onnx")
# The ONNX opsets this engine implements: up to 27, every change to its operators is
# implemented (opset 18's axes inputs, Split's uneven parts, Pad's wrap), refused by name
# (Resize's antialias, axes...) or about what it refuses anyway (float8 casts, float Ranges);
# opset 28 gives SpaceToDepth a mode it lacks. onnxruntime refuses an opset outside its own.
OPSETS = range(1, 28)


def _onnx():
    import onnx
    return onnx


def load_model(path_or_bytes, external_data_dir=None):
    """The ModelProto in a file (a path) or in bytes; ValueError when it does not parse.

    A tensor may keep its data in a file beside the model (ONNX's external data, for models
    past protobuf's 2 GB): it is read from the model file's folder, or for bytes from
    ``external_data_dir`` (onnxruntime's session option
    "session.model_external_initializers_file_folder_path"), never from the working
    directory; the onnx package refuses a location outside that folder."""
    onnx = _onnx()
    from google.protobuf.message import DecodeError
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        try:
            model = onnx.load_model_from_string(bytes(path_or_bytes))
        except (DecodeError, RuntimeError, ValueError) as e:
            raise ValueError(f"the bytes are not a valid ONNX model: {e}") from None
        if external_data_dir is not None:
            if not isinstance(external_data_dir, (str, os.PathLike)):
                raise TypeError(f"external_data_dir must be a path, got {type(external_data_dir).__name__}")
            if not os.path.isdir(external_data_dir):
                raise ValueError(f"external_data_dir {os.fspath(external_data_dir)!r} is not a folder")
            _load_external_data(model, os.fspath(external_data_dir))
        return model
    if not isinstance(path_or_bytes, (str, os.PathLike)):
        raise TypeError(f"expected a path or the model's bytes, got {type(path_or_bytes).__name__}")
    path = os.fspath(path_or_bytes)
    if external_data_dir is not None:
        raise ValueError("external_data_dir is for a model given as bytes; a model file's external data is "
                         "read from the file's own folder")
    if not os.path.isfile(path):
        raise ValueError(f"ONNX model file {path!r} does not exist")
    try:
        model = onnx.load(path, load_external_data=False)
    except (DecodeError, RuntimeError, ValueError, OSError) as e:
        raise ValueError(f"{path!r} is not a valid ONNX model: {e}") from None
    _load_external_data(model, os.path.dirname(os.path.abspath(path)))
    return model


def _load_external_data(model, folder):
    """The tensors' external data read from ``folder`` (the onnx package checks each location)."""
    onnx = _onnx()
    try:
        onnx.external_data_helper.load_external_data_for_model(model, folder)
    except (onnx.checker.ValidationError, ValueError, OSError) as e:
        raise ValueError(f"the model's external data cannot be read: {e}") from None


def numpy_dtype(elem_type, where):
    """numpy's name for an ONNX TensorProto element type."""
    onnx = _onnx()
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"{where}: unknown ONNX element type {elem_type}") from None


def _value(info):
    """A graph input or output's Value: dims are ints, dim names, or None (unknown)."""
    t = info.type
    if t.WhichOneof("value") is None:           # no type declared: learnt when the graph runs
        return Value(info.name)
    if t.WhichOneof("value") != "tensor_type":
        raise ValueError(f"graph value {info.name!r} is not a tensor ({t.WhichOneof('value')}); "
                         "only tensor inputs and outputs are supported")
    shape = None
    if t.tensor_type.HasField("shape"):
        # a negative dim_value is no extent: unknown, as onnxruntime reads it (an unset one too)
        shape = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else (d.dim_param or None)
                      for d in t.tensor_type.shape.dim)
    elem = t.tensor_type.elem_type
    return Value(info.name, shape, numpy_dtype(elem, f"graph value {info.name!r}") if elem else None)


def _tensor(proto, where):
    from onnx import external_data_helper, numpy_helper
    if any(d < 0 for d in proto.dims):
        raise ValueError(f"{where}: tensor {proto.name!r} has dims {list(proto.dims)}; each must be non-negative")
    if external_data_helper.uses_external_data(proto):
        # (load_model read every file it could; numpy_helper would look in the working directory)
        location = external_data_helper.ExternalDataInfo(proto).location
        raise ValueError(f"{where}: tensor {proto.name!r} keeps its data in the external file {location!r}, and "
                         "a model given as bytes has no folder to read it from: pass external_data_dir= (the "
                         "folder that holds it) or the model file's path")
    try:
        return numpy_helper.to_array(proto)
    except Exception as e:          # the onnx package raises several kinds for a bad tensor
        raise ValueError(f"{where}: tensor {proto.name!r} cannot be read: {e}") from None


def _attributes(proto, where):
    """The node's attributes as Python values: ints, floats, str, lists, numpy arrays."""
    onnx = _onnx()
    A = onnx.AttributeProto
    out = {}
    for a in proto.attribute:
        if a.type in (A.GRAPH, A.GRAPHS):
            raise ValueError(f"{where}: attribute {a.name!r} is a subgraph; control flow is not supported")
        if a.type == A.TENSOR:
            out[a.name] = _tensor(a.t, f"{where}, attribute {a.name!r}")
            continue
        try:
            value = onnx.helper.get_attribute_value(a)
        except Exception as e:
            raise ValueError(f"{where}: attribute {a.name!r} cannot be read: {e}") from None
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif isinstance(value, list):
            value = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
        out[a.name] = value
    return out


def import_model(model):
    """The Graph of a ModelProto, checked: known operators, topological order."""
    opsets = {}
    for o in model.opset_import:
        opsets["" if o.domain == "ai.onnx" else o.domain] = o.version
    if not opsets:                      # IR version 1 models predate opset_import
        opsets[""] = 1
    if "" in opsets and opsets[""] not in OPSETS:
        raise ValueError(f"the model imports ONNX opset {opsets['']}; this engine implements opsets "
                         f"{OPSETS[0]} to {OPSETS[-1]}")
    g = model.graph
    constants = {t.name: _tensor(t, "initializer") for t in g.initializer}
    inputs = [_value(v) for v in g.input if v.name not in constants]
    outputs = [_value(v) for v in g.output]
    if not outputs:
        raise ValueError("the model's graph declares no outputs")
    known = set(constants) | {v.name for v in inputs}
    nodes = []
    for i, p in enumerate(g.node):
        domain = "" if p.domain == "ai.onnx" else p.domain
        if domain not in opsets:
            raise ValueError(f"node {i} ({p.op_type}) uses domain {p.domain!r}, which the model does not import")
        node = Node(p.op_type, list(p.input), list(p.output), {}, p.name or f"#{i}", domain, opsets[domain])
        where = node.describe()
        if domain != "" or p.op_type not in OPERATORS:
            raise ValueError(f"unsupported operator {p.op_type} (domain {p.domain or 'ai.onnx'!r}, "
                             f"opset {node.opset}) at node {node.name!r}")
        node.attributes = _attributes(p, where)
        for name in node.inputs:
            if name and name not in known:
                raise ValueError(f"{where} reads {name!r}, which no graph input, initializer or "
                                 "earlier node produces (missing input, or nodes out of order)")
        for name in node.outputs:
            if name in known:
                raise ValueError(f"{where} writes {name!r}, which is already defined (each value has one producer)")
        known.update(n for n in node.outputs if n)
        nodes.append(node)
    for v in outputs:
        if v.name not in known:
            raise ValueError(f"graph output {v.name!r} is produced by no node, input or initializer")
    return Graph(inputs, outputs, nodes, constants, opsets)
