"""stage4_models/onnx's operators one by one (chapter 13, "13_inference_compiler"), each in a
one-node model against onnx's reference evaluator (``onnx.reference``, numpy, shipped with
onnx): the attributes of old opsets beside their newer inputs (Pad, Clip, Squeeze, Slice,
Upsample and Resize, Softmax's 2-d coercion before opset 13, Add's broadcast/axis before 7).
Tolerances as in test_stage4_onnx.py (float32 sums: rtol 1e-4, atol 1e-5)."""
import errno
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from stage4_models.onnx import InferenceSession  # noqa: E402

pytestmark = pytest.mark.stage4

RNG = np.random.default_rng(0)
_TYPES = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}


def _model(op, feeds, opset, consts=(), outputs=1, **attrs):
    """One node: ``feeds`` (name -> array) are graph inputs, ``consts`` initializers, read in
    that order unless ``_inputs`` names them (where "" leaves an optional input out)."""
    names = attrs.pop("_inputs", None) or list(feeds) + [name for name, _ in consts]
    outs = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, names, outs, **attrs)
    inputs = [helper.make_tensor_value_info(n, _TYPES[a.dtype.type], list(a.shape)) for n, a in feeds.items()]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in consts]
    graph = helper.make_graph([node], op, inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                                                   for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _ours(op, feeds, opset, consts=(), outputs=1, **attrs):
    model = _model(op, feeds, opset, consts, outputs, **attrs)
    return InferenceSession(model.SerializeToString()).run(None, feeds)


def _check(op, feeds, opset, consts=(), outputs=1, rtol=1e-4, atol=1e-5, **attrs):
    model = _model(op, feeds, opset, consts, outputs, **attrs)
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = InferenceSession(model.SerializeToString()).run(None, feeds)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got


def x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def i64(*values):
    return np.array(values, dtype=np.int64)


@pytest.mark.parametrize("op,attrs", [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Elu", {"alpha": 0.7}),
                                      ("Selu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Softplus", {}),
                                      ("Softsign", {}), ("HardSigmoid", {}), ("Abs", {}), ("Neg", {}),
                                      ("Exp", {}), ("Floor", {}), ("Ceil", {}), ("Erf", {})])
def test_unary(op, attrs):
    _check(op, {"x": x(2, 3, 4)}, 13, **attrs)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"])
def test_binary_broadcasting(op):
    _check(op, {"a": x(2, 3, 4), "b": x(3, 1)}, 13)


def test_add_legacy_broadcast_axis():
    """opset 6: broadcast=1 with axis=1 aligns a (3,) operand with dim 1 of (2, 3, 4)."""
    a, b = x(2, 3, 4), x(3)
    model = _model("Add", {"a": a, "b": b}, 6, broadcast=1, axis=1)
    [y] = InferenceSession(model.SerializeToString()).run(None, {"a": a, "b": b})
    np.testing.assert_allclose(y, a + b[None, :, None], rtol=1e-6)


def test_add_legacy_without_broadcast_refuses_other_shapes():
    model = _model("Add", {"a": x(2, 3), "b": x(3)}, 6)
    with pytest.raises(ValueError, match="broadcast=1"):
        InferenceSession(model.SerializeToString()).run(None, {"a": x(2, 3), "b": x(3)})


def test_prelu_and_clip():
    _check("PRelu", {"x": x(2, 3, 4, 5)}, 13, consts=[("slope", x(3, 1, 1))])
    _check("Clip", {"x": x(3, 4)}, 6, min=-0.3, max=0.5)
    _check("Clip", {"x": x(3, 4)}, 13, consts=[("lo", np.float32(-0.3)), ("hi", np.float32(0.5))])
    _check("Clip", {"x": x(3, 4), "hi": x(1)}, 13, _inputs=["x", "", "hi"])     # a bound from the data


@pytest.mark.parametrize("opset,axis", [(11, 1), (11, 2), (13, 1), (13, -1)])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_axis_semantics(op, opset, axis):
    """Before opset 13 the dims from ``axis`` on form one row; from 13, one axis.
    (onnx.reference applies opset 13's rule to every opset, so numpy is the oracle here.)"""
    xs = x(2, 3, 4).astype(np.float64)
    rows = xs.reshape(int(np.prod(xs.shape[:axis])), -1) if opset < 13 else np.moveaxis(xs, axis, -1)
    e = np.exp(rows - rows.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    p = np.log(p) if op == "LogSoftmax" else p
    expected = p.reshape(xs.shape) if opset < 13 else np.moveaxis(p, -1, axis)
    [y] = _ours(op, {"x": xs.astype(np.float32)}, opset, axis=axis)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs", [{}, {"strides": [2, 1], "pads": [1, 0, 0, 2], "dilations": [1, 2]},
                                   {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, {"group": 2}])
def test_conv(attrs):
    w = x(4, 2 if attrs.get("group") else 4, 3, 3)
    _check("Conv", {"x": x(2, 4, 7, 8)}, 11, consts=[("w", w), ("b", x(4))], **attrs)


def test_conv_transpose():
    _check("ConvTranspose", {"x": x(1, 3, 4, 5)}, 11, consts=[("w", x(3, 2, 3, 3))], strides=[2, 2],
           pads=[1, 1, 1, 1], output_padding=[1, 0])


@pytest.mark.parametrize("attrs", [{"kernel_shape": [3, 3], "strides": [2, 2]},
                                   {"kernel_shape": [3, 2], "pads": [0, 1, 1, 0]},
                                   {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
                                   {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pooling(op, attrs):
    _check(op, {"x": x(2, 3, 7, 6)}, 11, **attrs)


def test_average_pool_counting_the_pads():
    _check("AveragePool", {"x": x(1, 2, 5, 5)}, 11, kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)


def test_global_pools_lrn_and_norms():
    _check("GlobalAveragePool", {"x": x(2, 3, 4, 5)}, 13)
    _check("GlobalMaxPool", {"x": x(2, 3, 4, 5)}, 13)
    xs = x(2, 6, 3, 3)                  # LRN: numpy (onnx.reference's LRN disagrees with onnxruntime)
    [y] = _ours("LRN", {"x": xs}, 13, size=3, alpha=0.01, beta=0.6, bias=1.5)
    padded = np.pad(xs.astype(np.float64) ** 2, ((0, 0), (1, 1), (0, 0), (0, 0)))
    window = padded[:, 0:6] + padded[:, 1:7] + padded[:, 2:8]
    np.testing.assert_allclose(y, xs / (1.5 + 0.01 / 3 * window) ** 0.6, rtol=1e-5, atol=1e-6)
    var = np.abs(x(3)) + 0.5
    _check("BatchNormalization", {"x": x(2, 3, 4)}, 15,
           consts=[("s", x(3)), ("b", x(3)), ("m", x(3)), ("v", var)], epsilon=1e-3)
    _check("InstanceNormalization", {"x": x(2, 3, 4, 5)}, 13, consts=[("s", x(3)), ("b", x(3))])


def test_products():
    _check("Gemm", {"a": x(4, 3), "b": x(5, 4)}, 13, consts=[("c", x(5))], transA=1, transB=1, alpha=0.5,
           beta=2.0)
    _check("MatMul", {"a": x(2, 3, 4), "b": x(4, 5)}, 13)


def test_reshape_flatten_transpose():
    _check("Reshape", {"x": x(2, 3, 4)}, 13, consts=[("s", i64(0, -1, 2))])
    _check("Flatten", {"x": x(2, 3, 4)}, 13, axis=2)
    _check("Transpose", {"x": x(2, 3, 4)}, 13, perm=[2, 0, 1])
    _check("Transpose", {"x": x(2, 3, 4)}, 13)


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze_attribute_then_input(opset):
    if opset < 13:
        _check("Squeeze", {"x": x(2, 1, 3, 1)}, opset, axes=[1, -1])
        _check("Unsqueeze", {"x": x(2, 3)}, opset, axes=[0, 3])
    else:
        _check("Squeeze", {"x": x(2, 1, 3, 1)}, opset, consts=[("a", i64(1, -1))])
        _check("Unsqueeze", {"x": x(2, 3)}, opset, consts=[("a", i64(0, 3))])


def test_concat_split_tile_expand():
    _check("Concat", {"a": x(2, 3), "b": x(2, 1)}, 13, axis=-1)
    _check("Split", {"x": x(2, 6)}, 11, outputs=2, axis=1, split=[2, 4])
    _check("Split", {"x": x(2, 6)}, 13, outputs=3, axis=1)
    _check("Split", {"x": x(5, 2)}, 13, consts=[("s", i64(2, 3))], outputs=2)
    _check("Tile", {"x": x(2, 3)}, 13, consts=[("r", i64(2, 1))])
    _check("Expand", {"x": x(3, 1)}, 13, consts=[("s", i64(2, 1, 4))])


@pytest.mark.parametrize("bounds", [(i64(1, 0), i64(3, -1), i64(0, 1), i64(1, 2)),
                                    (i64(-1), i64(-100), i64(1), i64(-2)),
                                    (i64(0), i64(1000), i64(-1), None)])
def test_slice(bounds):
    starts, ends, axes, steps = bounds
    consts = [("s", starts), ("e", ends), ("a", axes)] + ([("t", steps)] if steps is not None else [])
    _check("Slice", {"x": x(4, 5)}, 13, consts=consts)


def test_slice_steps_past_the_extent_are_clamped():
    """A step longer than the dim is one step, as onnxruntime clamps it (no view with a stride
    past int64), of either sign; a step of 0 is refused naming the node."""
    for steps in (i64(2 ** 62, -2 ** 63), i64(2 ** 63 - 1, -2 ** 62)):
        _check("Slice", {"x": x(4, 5)}, 13, consts=[("s", i64(1, -1)), ("e", i64(2 ** 62, -2 ** 63)),
                                                    ("a", i64(0, 1)), ("t", steps)])
    with pytest.raises(ValueError, match=r"Slice \(opset 13\) node '#0': .*steps \[0\] .*no zero step"):
        _ours("Slice", {"x": x(4, 5)}, 13, consts=[("s", i64(0)), ("e", i64(3)), ("a", i64(0)), ("t", i64(0))])


def test_slice_legacy_attributes():
    _check("Slice", {"x": x(4, 5)}, 9, starts=[1, -3], ends=[3, 100], axes=[0, 1])


def test_gather_host_and_device_indices():
    _check("Gather", {"x": x(5, 3)}, 13, consts=[("i", np.array([[0, -1], [2, 4]], dtype=np.int64))], axis=0)
    _check("Gather", {"x": x(5, 3), "i": np.array([2, 0, 1], dtype=np.int64)}, 13, axis=1)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_attribute_then_inputs(mode):
    _check("Pad", {"x": x(1, 2, 4, 5)}, 2, pads=[0, 0, 1, 2, 0, 0, 2, 1], mode=mode,
           **({"value": 1.5} if mode == "constant" else {}))
    _check("Pad", {"x": x(1, 2, 4, 5)}, 13, consts=[("p", i64(0, 0, 1, 2, 0, 0, 2, 1))], mode=mode)


def test_pad_constant_value_as_a_float_initializer():
    """From opset 11 the fill is an input: a float constant, kept on the device."""
    _check("Pad", {"x": x(1, 2, 4, 5)}, 13, consts=[("p", i64(0, 0, 1, 2, 0, 0, 2, 1)),
                                                    ("v", np.array(2.5, dtype=np.float32))], mode="constant")


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode):
    _check("DepthToSpace", {"x": x(1, 8, 2, 3)}, 13, blocksize=2, mode=mode)
    _check("SpaceToDepth", {"x": x(1, 2, 4, 6)}, 13, blocksize=2)


def test_reductions():
    _check("ReduceMean", {"x": x(2, 3, 4)}, 13, axes=[1, -1], keepdims=0)
    _check("ReduceSum", {"x": x(2, 3, 4)}, 13, consts=[("a", i64(0))])
    _check("ReduceMax", {"x": x(2, 3, 4)}, 13)
    _check("ReduceSum", {"x": x(2, 3, 4)}, 11, axes=[2], keepdims=1)


def test_upsample_and_resize():
    """Upsample: scales an attribute in opset 7, an input from 9; Resize: opset 10's
    (X, scales), 11's (X, roi, scales, sizes) with a coordinate transformation."""
    scales = np.array([1, 1, 2, 3], dtype=np.float32)
    xs = x(1, 2, 3, 4)
    nearest = xs.repeat(2, axis=2).repeat(3, axis=3)
    np.testing.assert_array_equal(_ours("Upsample", {"x": xs}, 7, scales=[1.0, 1.0, 2.0, 3.0])[0], nearest)
    np.testing.assert_array_equal(_ours("Upsample", {"x": xs}, 9, consts=[("s", scales)])[0], nearest)
    np.testing.assert_array_equal(_ours("Resize", {"x": xs}, 10, consts=[("s", scales)])[0], nearest)
    _check("Resize", {"x": xs}, 13, consts=[("s", scales)], _inputs=["x", "", "s"])
    _check("Resize", {"x": xs}, 13, consts=[("s", scales)], _inputs=["x", "", "s"], mode="linear")
    _check("Resize", {"x": xs}, 13, consts=[("z", i64(1, 2, 5, 7))], _inputs=["x", "", "", "z"], mode="linear",
           coordinate_transformation_mode="align_corners")


def test_shape_cast_constants_range():
    _check("Shape", {"x": x(2, 3, 4)}, 13)
    _check("Shape", {"x": x(2, 3, 4)}, 15, start=1)
    _check("Cast", {"x": x(3, 4) * 5}, 13, to=TensorProto.INT64)
    _check("ConstantOfShape", {}, 13, consts=[("s", i64(2, 3))],
           value=numpy_helper.from_array(np.array([0.5], dtype=np.float32)))
    _check("Range", {}, 13, consts=[("a", np.array(2, dtype=np.int64)), ("b", np.array(11, dtype=np.int64)),
                                    ("c", np.array(3, dtype=np.int64))])
    _check("Mod", {}, 13, consts=[("a", i64(7, -7)), ("b", i64(2, 2))])
    _check("Div", {}, 13, consts=[("a", i64(7, -7)), ("b", i64(2, 2))])


def test_a_long_range_is_made_without_a_python_list():
    _check("Range", {}, 13, consts=[("a", np.array(-5, dtype=np.int64)), ("b", np.array(1000, dtype=np.int64)),
                                    ("c", np.array(7, dtype=np.int64))])


def _host(name, *values):
    return (name, np.array(values, dtype=np.int64))


HUGE = 2 ** 20      # an extent: two of them, or a few of them squared, pass any machine's memory
# (op, opset, graph inputs, constants, attributes, what the size check names)
TOO_LARGE = [
    ("Range", 13, {}, [_host("a", 0), _host("b", 2 ** 40), _host("c", 1)], {},
     r"output of shape \(1099511627776,\) asks for 8796093022208"),
    ("ConstantOfShape", 13, {}, [_host("s", HUGE, HUGE, 8)], {}, r"output of shape \(1048576, 1048576, 8\)"),
    ("Resize", 13, {"x": x(1, 1, 4, 4)}, [_host("z", 1, 1, HUGE, HUGE)], {"_inputs": ["x", "", "", "z"]},
     r"output of shape \(1, 1, 1048576, 1048576\) asks for 4398046511104"),
    ("Upsample", 9, {"x": x(1, 1, 4, 4)}, [("s", np.array([1, 1, 1e6, 1e6], np.float32))], {}, "output"),
    ("Tile", 13, {"x": x(1, 4)}, [_host("r", HUGE, HUGE)], {}, r"output of shape \(1048576, 4194304\)"),
    ("Expand", 13, {"x": x(1, 4)}, [_host("e", HUGE, HUGE, 4)], {}, r"output of shape \(1048576, 1048576, 4\)"),
    ("Pad", 13, {"x": x(1, 4)}, [_host("p", HUGE, HUGE, HUGE, HUGE)], {}, "output"),
    ("Conv", 13, {"x": x(1, 1, 4, 4)}, [("w", x(1, 1, 1, 1))], {"pads": [HUGE] * 4}, "padded input"),
    ("MaxPool", 13, {"x": x(1, 1, 4, 4)}, [], {"kernel_shape": [3, 3], "dilations": [HUGE, HUGE],
                                                "auto_pad": "SAME_UPPER"}, "padded input"),
    ("ConvTranspose", 13, {"x": x(1, 1, 4, 4)}, [("w", x(1, 1, 1, 1))], {"strides": [HUGE, HUGE]}, "full result"),
]


@pytest.mark.parametrize("op, opset, feeds, consts, attrs, what", TOO_LARGE, ids=[case[0] for case in TOO_LARGE])
def test_a_size_the_model_computes_is_checked_before_anything_is_allocated(op, opset, feeds, consts, attrs, what):
    """Bounds, sizes, scales, repeats, pads and strides are the model's numbers: a tiny file
    may ask for terabytes. The operator refuses, naming the node and the bytes, before it
    allocates anything (onnxruntime fails such a node with an allocation error naming it)."""
    with pytest.raises(ValueError, match=rf"{op} \(opset {opset}\) node '#0': its {what}.*bytes, more than this "
                                         r"machine's memory \(\d+ bytes\)"):
        _ours(op, feeds, opset, consts=consts, **attrs)


def test_the_memory_bound_is_read_from_posix_names_and_int64s_limit_where_there_are_none(monkeypatch):
    """The sizes above are refused for passing the machine's physical memory, read with
    os.sysconf's POSIX names, which Linux and macOS both know (some macOS Pythons lack
    SC_PAGE_SIZE, Linux's synonym). Where the system does not say (Windows has no
    os.sysconf; a name it does not know; -1, "indeterminate"; an error), the bound is
    int64's: sizes any machine holds pass, and the int64 check still refuses the rest."""
    from stage2_tensor import factories
    from stage4_models.onnx.operators import common

    def system(answers):
        def sysconf(name):
            if name not in answers:
                raise ValueError("unrecognized configuration name")
            return answers[name]
        return sysconf

    def einval(name):
        raise OSError(errno.EINVAL, "Invalid argument")
    monkeypatch.setattr(os, "sysconf", system({"SC_PAGESIZE": 16384, "SC_PHYS_PAGES": 2 ** 20}))     # macOS
    assert factories.host_memory() == 2 ** 34
    for sysconf in (system({}), system({"SC_PAGESIZE": 4096, "SC_PHYS_PAGES": -1}), einval):
        monkeypatch.setattr(os, "sysconf", sysconf)
        assert factories.host_memory() is None
    monkeypatch.delattr(os, "sysconf")                                                           # Windows
    assert factories.host_memory() is None
    monkeypatch.setattr(common, "MEMORY_BYTES", 2 ** 63 - 1)                  # the bound where none is known
    [y] = _ours("Range", {}, 13, consts=[_host("a", 0), _host("b", 5), _host("c", 1)])
    assert y.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"Range \(opset 13\) node '#0': its output of shape \(2305843009213693952,\) "
                                         r"has extents past what int64 strides index"):
        _ours("Range", {}, 13, consts=[_host("a", 0), _host("b", 2 ** 61), _host("c", 1)])


def test_a_negative_or_unindexable_extent_is_refused():
    """A negative extent, as onnxruntime refuses it; an empty tensor whose other extents
    multiply past int64 (what its strides and numpy's shapes hold)."""
    with pytest.raises(ValueError, match=r"Tile \(opset 13\) node '#0': its output of shape \(0, 4611686018427387904\) "
                                         r"has extents past what int64 strides index"):
        _ours("Tile", {"x": x(1, 4)}, 13, consts=[_host("r", 0, 2 ** 60)])
    with pytest.raises(ValueError, match=r"Pad \(opset 13\) node '#0': its output would have shape \(-6, 4\)"):
        _ours("Pad", {"x": x(1, 4)}, 13, consts=[_host("p", -3, 0, -4, 0)])
    with pytest.raises(ValueError, match=r"Expand \(opset 13\) node '#0': shape \(1, 4\) does not broadcast"):
        _ours("Expand", {"x": x(1, 4)}, 13, consts=[_host("e", -1, 4)])
    with pytest.raises(ValueError, match=r"Resize \(opset 13\) node '#0': scales \[1.0, 1.0, inf, 1.0\] must give one "
                                         r"positive finite factor"):
        _ours("Resize", {"x": x(1, 1, 4, 4)}, 13, consts=[("s", np.array([1, 1, np.inf, 1], np.float32))],
              _inputs=["x", "", "s"])


def test_an_allocation_that_fails_names_the_node(monkeypatch):
    """A size no check refuses may still find the machine without room: the allocator's
    MemoryError says which node asked."""
    from stage2_tensor import convolution

    def no_memory(*args, **kwargs):
        raise MemoryError("alloc() returned NULL")
    monkeypatch.setattr(convolution, "conv", no_memory)
    with pytest.raises(MemoryError, match=r"Conv \(opset 13\) node '#0': out of memory \(alloc\(\) returned NULL\)"):
        _ours("Conv", {"x": x(1, 1, 4, 4)}, 13, consts=[("w", x(1, 1, 1, 1))])


def test_resize_refuses_what_opset_18_added():
    with pytest.raises(ValueError, match=r"Resize \(opset 18\) node '#0': antialias, axes and keep_aspect_ratio_policy"):
        _ours("Resize", {"x": x(1, 1, 4, 4)}, 18, consts=[("s", np.array([1, 1, 2, 2], np.float32))],
              _inputs=["x", "", "s"], antialias=1)


def test_dropout_is_the_identity_at_inference():
    xs = x(3, 4)
    model = _model("Dropout", {"x": xs}, 13, outputs=2)
    y, mask = InferenceSession(model.SerializeToString()).run(None, {"x": xs})
    np.testing.assert_array_equal(y, xs)
    assert mask.dtype == np.bool_ and mask.all()


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pooling_with_a_large_end_pad_against_onnxruntime(op):
    """An end pad of 2 for a kernel of 3 (applied with F.pad first; onnx.reference fails here)."""
    ort = pytest.importorskip("onnxruntime")
    feeds = {"x": x(2, 3, 7, 6)}
    model = _model(op, feeds, 13, kernel_shape=[3, 2], pads=[0, 1, 2, 1], ceil_mode=1)
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT      # onnxruntime wants it declared
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    [y] = InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(y, expected[0], rtol=1e-5, atol=1e-6)


def test_shape_arithmetic_on_small_integer_tensors_runs_on_the_host():
    """Exporters reshape pads to (n, 2), reverse and transpose them: on the host, any rank."""
    pairs = np.arange(8, dtype=np.int64).reshape(4, 2)
    _check("Transpose", {}, 13, consts=[("c", pairs)])
    _check("Slice", {}, 13, consts=[("c", pairs), ("s", i64(-1)), ("e", i64(-2 ** 63 + 1)), ("a", i64(0)),
                                    ("t", i64(-1))])
    _check("Concat", {}, 13, consts=[("a", pairs), ("b", pairs[:, :1])], axis=1)
    _check("Gather", {}, 13, consts=[("a", pairs), ("i", i64(1, 0))], axis=1)
    _check("Reshape", {}, 13, consts=[("a", pairs), ("s", i64(-1))])
    model = _model("Slice", {}, 13, consts=[("c", pairs), ("s", i64(1)), ("e", i64(3)), ("a", i64(0))])
    sess = InferenceSession(model.SerializeToString())
    sess.run(None, {})
    [plan] = sess._plans.values()
    assert plan.steps == [] and plan.values["y0"].values == [2, 3, 4, 5]      # nothing left to replay


@pytest.mark.parametrize("attrs", [{"pads": [0, 1, 2, 1]}, {"output_shape": [9, 12]},
                                   {"auto_pad": "SAME_LOWER"}, {"auto_pad": "SAME_UPPER"},
                                   {"pads": [1, 0, 0, 0], "output_padding": [1, 1]}])
def test_conv_transpose_unequal_pads(attrs):
    _check("ConvTranspose", {"x": x(1, 3, 4, 5)}, 11, consts=[("w", x(3, 2, 3, 3)), ("b", x(2))], strides=[2, 2],
           **attrs)


@pytest.mark.parametrize("output_shape", [[8, 9], [7, 8], [10, 12]])
def test_conv_transpose_output_shape_against_onnxruntime(output_shape):
    """Smaller than the full result: the larger half of the crop at the start; larger: grown
    at the end (onnx.reference fails on the first)."""
    ort = pytest.importorskip("onnxruntime")
    feeds = {"x": x(1, 3, 4, 5)}
    model = _model("ConvTranspose", feeds, 11, consts=[("w", x(3, 2, 3, 3)), ("b", x(2))], strides=[2, 2],
                   output_shape=output_shape)
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    [y] = InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(y, expected[0], rtol=1e-4, atol=1e-5)


def test_comparisons_logic_and_where():
    a, b = x(3, 4), x(4)
    for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
        _check(op, {"a": a, "b": b}, 16)
        _check(op, {}, 16, consts=[("a", i64(1, 5, 3)), ("b", i64(3))])            # on the host
    mask = a > 0
    _check("Where", {"a": a, "b": b}, 16, consts=[("c", mask)], _inputs=["c", "a", "b"])
    _check("Where", {}, 16, consts=[("c", np.array([True, False])), ("a", i64(1, 2)), ("b", i64(7))])
    for op in ("Not", "And", "Or"):
        feeds = {}
        consts = [("p", mask), ("q", x(3, 4) > 0)][:1 if op == "Not" else 2]
        _check(op, feeds, 16, consts=consts)


def test_integer_powers_on_the_host_wrap_as_int64_in_bounded_time():
    """Shape arithmetic is untrusted: 2 ** (10 ** 9) would take the host's memory as a Python
    int; it is computed modulo 2^64, as a runtime's int64 power wraps (2 ** 64 is 0)."""
    exps = numpy_helper.from_array(np.array([3, 64, 10 ** 9, -2], dtype=np.int64), "e")
    two = numpy_helper.from_array(np.array([2], dtype=np.int64), "two")
    graph = helper.make_graph([helper.make_node("Pow", ["two", "e"], ["p"]), helper.make_node("Relu", ["x"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("p", TensorProto.INT64, [4])], [exps, two])
    for optimize in (True, False):
        sess = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                                .SerializeToString(), optimize=optimize)
        _, p = sess.run(None, {"x": np.ones(2, np.float32)})
        np.testing.assert_array_equal(p, [8, 0, 0, 0])
