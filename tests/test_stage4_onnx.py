"""stage4_models/onnx (chapter 13, "13_inference_compiler"): the ONNX backend test models that
ship inside the onnx wheel run through InferenceSession on device cpu and match their stored
outputs; shape arithmetic is computed on the host when a plan is made; every malformed model
or feed fails with a clear error.

Tolerances: the models compute in float32 (eps = 1.2e-7) and the stored outputs come from
PyTorch or Caffe2 in float32, summing in another order. A sum of K products drifts by about
sqrt(K) eps relative to the sum of magnitudes (K up to 4608 here: 512 channels x 3 x 3), so
rtol = 1e-4 leaves a margin of ~10x; atol = 1e-5 covers outputs near 0 after cancellation.
(Measured: at most 1.3e-7 relative on every model.)
"""
import functools
import glob
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from stage4_models.onnx import InferenceSession  # noqa: E402
from stage4_models.onnx.examples import torch_unet  # noqa: E402
from stage4_models.onnx.symbolic import evaluate  # noqa: E402

from .engines import CUDA, device_params  # noqa: E402

pytestmark = pytest.mark.stage4

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
RTOL, ATOL = 1e-4, 1e-5


def _cases(kind):
    return sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(DATA, kind, "*", "model.onnx")))


def _tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def _check_case(kind, name, device="cpu"):
    folder = os.path.join(DATA, kind, name)
    sess = InferenceSession(os.path.join(folder, "model.onnx"), device=device)
    data = os.path.join(folder, "test_data_set_0")
    inputs = [_tensor(p) for p in sorted(glob.glob(os.path.join(data, "input_*.pb")))]
    expected = [_tensor(p) for p in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
    feeds = {arg.name: x for arg, x in zip(sess.get_inputs(), inputs)}
    got = sess.run(None, feeds)
    # the second run replays the compiled plan (fused kernels, Concats written in place): the same bits
    for a, b in zip(got, sess.run(None, feeds)):
        np.testing.assert_array_equal(a, b)
    assert len(got) == len(expected)
    # every operator has a shape rule: nothing fell back, and the outputs' inferred shapes are theirs
    assert sess.inference.fallbacks == []
    at = sess.inference.bind({name: x.shape for name, x in feeds.items()})
    assert [tuple(evaluate(d, at) for d in v.sym_shape) for v in sess.graph.outputs] == [e.shape for e in expected]
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)       # NaN where expected NaN (sqrt, pow)


# ---- the 82 + 35 backend test models ------------------------------------------------------------------
def test_the_wheel_ships_the_backend_models():
    assert len(_cases("pytorch-converted")) == 82 and len(_cases("pytorch-operator")) == 35


@pytest.mark.parametrize("name", _cases("pytorch-converted"))
def test_pytorch_converted(name):
    _check_case("pytorch-converted", name)


@pytest.mark.parametrize("name", _cases("pytorch-operator"))
def test_pytorch_operator(name):
    _check_case("pytorch-operator", name)


@pytest.mark.parametrize("device", device_params("python", "cpu:lazy", *CUDA))
@pytest.mark.parametrize("name", ["test_Conv2d_groups", "test_BatchNorm2d_eval", "test_GLU_dim"])
def test_other_devices(name, device):
    _check_case("pytorch-converted", name, device)


# ---- the 9 light architectures ------------------------------------------------------------------------
LIGHT_SMALL = ["squeezenet", "shufflenet", "inception_v1", "inception_v2"]
LIGHT_BIG = ["bvlc_alexnet", "zfnet512", "resnet50", "densenet121", "vgg19"]


def _light(name):
    sess = InferenceSession(os.path.join(DATA, "light", f"light_{name}.onnx"))
    expected = _tensor(os.path.join(DATA, "light", f"light_{name}_output_0.pb"))
    return sess, expected


def _check_light(name):
    """Input arange(n).reshape(shape) / n, as the files were generated."""
    sess, expected = _light(name)
    [arg] = sess.get_inputs()
    n = int(np.prod(arg.shape))
    x = (np.arange(n, dtype=np.float32) / n).reshape(arg.shape)
    [y] = sess.run(None, {arg.name: x})
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(sess.run(None, {arg.name: x})[0], y)       # the compiled replay


@pytest.mark.parametrize("name", [*LIGHT_SMALL, *(pytest.param(n, marks=pytest.mark.slow) for n in LIGHT_BIG)])
def test_light_imports_with_declared_shapes(name):
    """The reduced form for the normal suite: every light model imports, and declares an
    input of 1x3x224x224 floats and the output shape its stored result has."""
    sess, expected = _light(name)
    [arg] = sess.get_inputs()
    assert arg.shape == [1, 3, 224, 224] and arg.type == "tensor(float)"
    [out] = sess.get_outputs()
    assert out.shape == list(expected.shape) and out.type == "tensor(float)"
    assert sess.inference.fallbacks == [] and sess.graph.outputs[0].sym_shape == expected.shape


@pytest.mark.parametrize("name", LIGHT_SMALL)
def test_light_small(name):
    _check_light(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", LIGHT_BIG)
def test_light_big(name):
    _check_light(name)


# ---- shape arithmetic on the host: a padded U-net step with dynamic H, W -------------------------------
def _int64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def padded_unet_model():
    """x (N, 2, H, W) padded up to even H, W with the Shape/Gather/Mod/Sub/Concat arithmetic an
    exporter writes, conv, max pool, upsample, concat with the skip, conv, cropped back."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((1, 6, 3, 3)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "hw_idx"], ["hw"], axis=0),            # [H, W]
        helper.make_node("Mod", ["hw", "two"], ["rem"]),
        helper.make_node("Sub", ["two", "rem"], ["up"]),
        helper.make_node("Mod", ["up", "two"], ["pad_hw"]),                          # (2 - hw % 2) % 2
        helper.make_node("Concat", ["zeros4", "pad_hw"], ["pads_raw"], axis=0),      # [0,0,0,0, ph,pw]
        helper.make_node("Concat", ["zeros2", "pads_raw"], ["pads"], axis=0),        # 8 entries
        helper.make_node("Pad", ["x", "pads"], ["xp"], mode="edge"),
        helper.make_node("Conv", ["xp", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Resize", ["p1", "", "scales"], ["u1"], mode="nearest"),
        helper.make_node("Concat", ["r1", "u1"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Slice", ["c2", "zeros2", "hw", "axes23"], ["y"]),
    ]
    inits = [w1, w2, _int64("hw_idx", [2, 3]), _int64("two", [2]), _int64("zeros4", [0, 0, 0, 0]),
             _int64("zeros2", [0, 0]), _int64("axes23", [2, 3]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")]
    graph = helper.make_graph(nodes, "padded_unet",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1, "H", "W"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _reference_unet(model, x):
    """numpy for the same network (a loop convolution): the oracle when onnxruntime is absent."""
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}

    def conv(a, k):
        a = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        h, wd = a.shape[2] - 2, a.shape[3] - 2
        return np.stack([sum(np.einsum("nchw,c->nhw", a[:, :, i:i + h, j:j + wd], k[o, :, i, j])
                             for i in range(3) for j in range(3)) for o in range(k.shape[0])], axis=1)
    H, W = x.shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (0, H % 2), (0, W % 2)), mode="edge")
    r1 = np.maximum(conv(xp, w["w1"]), 0)
    p1 = r1.reshape(*r1.shape[:2], r1.shape[2] // 2, 2, r1.shape[3] // 2, 2).max(axis=(3, 5))
    u1 = p1.repeat(2, axis=2).repeat(2, axis=3)
    return conv(np.concatenate([r1, u1], axis=1), w["w2"])[:, :, :H, :W]


@pytest.mark.parametrize("hw", [(1, 1), (5, 7), (8, 6)])
def test_padded_unet_runs_at_every_size(hw):
    model = padded_unet_model()
    sess = InferenceSession(model.SerializeToString())
    assert [a.shape for a in sess.get_inputs()] == [["N", 2, "H", "W"]]
    x = np.random.default_rng(1).standard_normal((2, 2, *hw)).astype(np.float32)
    [y] = sess.run(["y"], {"x": x})
    assert y.shape == (2, 1, *hw)
    np.testing.assert_allclose(y, _reference_unet(model, x), rtol=RTOL, atol=ATOL)


def test_shape_arithmetic_is_computed_once_on_the_host():
    """The plan replays only the operations on data: Shape, Gather, Mod, Sub, Concat of the
    pads ran on the host while the plan was made."""
    sess = InferenceSession(padded_unet_model().SerializeToString())
    x = np.zeros((1, 2, 5, 7), dtype=np.float32)
    sess.run(None, {"x": x})
    [plan] = sess._plans.values()
    replayed = [node.op_type for node, _ in plan.steps]
    assert replayed == ["Pad", "Conv", "Relu", "MaxPool", "Resize", "Concat", "Conv", "Slice"]
    assert plan.values["pads"].values == [0, 0, 0, 0, 0, 0, 1, 1]
    # the compiled replay (Conv and Relu one step): each value freed after its last reader
    outputs = [step.outputs for step in plan.program]
    assert outputs[:2] == [["xp"], ["r1"]] and "x" in plan._dead_after[0] and "xp" in plan._dead_after[1]
    assert "r1" in plan._dead_after[outputs.index(["cat"])]      # the skip connection lives until the Concat
    y1 = sess.run(None, {"x": x + 1})[0]                          # replayed: same plan, new data
    assert len(sess._plans) == 1 and y1.shape == (1, 1, 5, 7)


def test_onnxruntime_agrees_on_the_padded_unet():
    ort = pytest.importorskip("onnxruntime")
    data = padded_unet_model().SerializeToString()
    x = np.random.default_rng(2).standard_normal((1, 2, 9, 6)).astype(np.float32)
    [expected] = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    [y] = InferenceSession(data).run(None, {"x": x})
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


# ---- the session's surface and its errors --------------------------------------------------------------
def _small_model(op="Relu", opset=13, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_inputs_outputs_and_dtype_option():
    sess = InferenceSession(_small_model().SerializeToString(), dtype="float64")
    [i], [o] = sess.get_inputs(), sess.get_outputs()
    assert (i.name, i.shape, i.type, o.name, o.type) == ("x", [2, 3], "tensor(float)", "y", "tensor(float)")
    x = np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)
    [y] = sess.run(None, {"x": x})
    assert y.dtype == np.float32 and np.array_equal(y, np.maximum(x, 0))


def test_unsupported_operator_is_named_with_its_opset():
    with pytest.raises(ValueError, match=r"unsupported operator NonZero .*opset 11"):
        InferenceSession(_small_model("NonZero", opset=11).SerializeToString())


def test_malformed_files(tmp_path):
    data = _small_model().SerializeToString()
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        InferenceSession(data[: len(data) // 2])                  # truncated inside a field
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) - 5])
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        InferenceSession(str(path))
    with pytest.raises(ValueError, match="does not exist"):
        InferenceSession(str(tmp_path / "absent.onnx"))
    with pytest.raises(TypeError, match="path or the model's bytes"):
        InferenceSession(42)


def test_a_node_reading_a_missing_value():
    node = helper.make_node("Add", ["x", "nowhere"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ValueError, match="reads 'nowhere'"):
        InferenceSession(model.SerializeToString())


def test_bad_attribute():
    sess = InferenceSession(_small_model("Transpose", perm=[0, 0]).SerializeToString())
    with pytest.raises(ValueError, match=r"Transpose \(opset 13\).*perm \[0, 0\]"):
        sess.run(None, {"x": np.zeros((2, 3), dtype=np.float32)})


def test_run_checks_its_feed():
    sess = InferenceSession(_small_model().SerializeToString())
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"unknown \['z'\], missing \['x'\]"):
        sess.run(None, {"z": x})
    with pytest.raises(ValueError, match=r"expected shape \[2, 3\], got \[3, 2\]"):
        sess.run(None, {"x": x.T.copy()})
    with pytest.raises(TypeError, match="expected dtype float32, got float64"):
        sess.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(TypeError, match="expected a numpy array"):
        sess.run(None, {"x": [[0.0] * 3] * 2})
    with pytest.raises(ValueError, match="output names"):
        sess.run(["nope"], {"x": x})


def test_outputs_are_the_callers_own_arrays():
    """onnxruntime returns arrays of their own: writing into an output changes neither a later
    run (a weight reshaped, a weight added: values the plan keeps) nor the caller's input (an
    Identity's output), on the devices whose numpy() shares memory."""
    nodes = [helper.make_node("Identity", ["x"], ["a"]), helper.make_node("Reshape", ["w", "s"], ["b"]),
             helper.make_node("Add", ["x", "w"], ["c"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "abc"],
                              [numpy_helper.from_array(np.arange(3, dtype=np.float32), "w"), _int64("s", [3])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    for device in ("cpu", "cpu:lazy"):
        sess = InferenceSession(data, device=device)
        x = np.zeros(3, np.float32)
        outputs = sess.run(None, {"x": x})
        assert not any(np.shares_memory(out, x) for out in outputs)
        for out in outputs:
            out[:] = 100
        assert np.array_equal(x, [0, 0, 0])
        for out, expected in zip(sess.run(None, {"x": x}), ([0, 0, 0], [0, 1, 2], [0, 1, 2])):
            assert np.array_equal(out, expected)


def _external_model(folder, location="w.bin"):
    """(the bytes of a model y = x + w whose initializer w keeps its data in the file
    ``location``, relative to ``folder``, which holds it; w)."""
    from onnx.external_data_helper import set_external_data
    w = np.arange(4, dtype=np.float32)
    (folder / location).parent.mkdir(parents=True, exist_ok=True)
    (folder / location).write_bytes(w.tobytes())
    tensor = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    set_external_data(tensor, location)
    tensor.ClearField("raw_data")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [tensor])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString(), w


def test_external_data_is_read_from_the_models_folder_only(tmp_path, monkeypatch):
    """A model file's external data is read from its folder; a model given as bytes has
    none, so its external data comes from ``external_data_dir`` (onnxruntime's
    "session.model_external_initializers_file_folder_path") or is refused naming the tensor
    and the file, even when the working directory holds a file of that name."""
    folder = tmp_path / "model"
    folder.mkdir()
    data, w = _external_model(folder)
    (folder / "model.onnx").write_bytes(data)
    x = np.ones(4, np.float32)
    monkeypatch.chdir(folder)
    with pytest.raises(ValueError, match=r"initializer: tensor 'w' keeps its data in the external file 'w\.bin'.*"
                                         r"pass external_data_dir="):
        InferenceSession(data)
    monkeypatch.chdir(tmp_path)
    [y] = InferenceSession(data, external_data_dir=folder).run(None, {"x": x})
    assert np.array_equal(y, x + w)
    [y] = InferenceSession(str(folder / "model.onnx")).run(None, {"x": x})
    assert np.array_equal(y, x + w)
    with pytest.raises(ValueError, match="external_data_dir is for a model given as bytes"):
        InferenceSession(str(folder / "model.onnx"), external_data_dir=folder)
    with pytest.raises(ValueError, match="is not a folder"):
        InferenceSession(data, external_data_dir=tmp_path / "absent")
    # a location outside the folder is refused (by the onnx package), though the file is there
    outside, _ = _external_model(folder, "../secret.bin")
    assert (tmp_path / "secret.bin").exists()
    (folder / "outside.onnx").write_bytes(outside)
    for source, kwargs in ((str(folder / "outside.onnx"), {}), (outside, {"external_data_dir": folder})):
        with pytest.raises(ValueError, match=r"external data cannot be read: .*tensor name: w.*points outside"):
            InferenceSession(source, **kwargs)


@pytest.mark.parametrize("opset", [0, -5, 28, 99])
def test_an_opset_outside_the_engines_is_refused(opset):
    """onnxruntime refuses an opset below 1 or above its newest; this engine implements 1 to 27."""
    with pytest.raises(ValueError, match=rf"imports ONNX opset {opset}; this engine implements opsets 1 to 27"):
        InferenceSession(_small_model(opset=opset).SerializeToString())


def test_negative_dims():
    """A negative dim_value in a graph input or output is no extent: unknown (None), as
    onnxruntime reads it; in a tensor it is refused, as onnx's checker and onnxruntime do."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])])
    sess = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    assert sess.get_inputs()[0].shape == [None, 3] and sess.get_outputs()[0].shape == [None, 3]
    [y] = sess.run(None, {"x": -np.ones((5, 3), np.float32)})
    assert np.array_equal(y, np.zeros((5, 3)))
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[-1], raw_data=np.ones(2, np.float32).tobytes())
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w])
    with pytest.raises(ValueError, match=r"initializer: tensor 'w' has dims \[-1\]; each must be non-negative"):
        InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())


def _graph(nodes, inputs, opset=13):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def test_errors_from_the_ops_name_the_node():
    sess = InferenceSession(_graph([helper.make_node("Gather", ["x", "i"], ["y"], name="lookup")],
                                   [("x", TensorProto.FLOAT, [3, 2]), ("i", TensorProto.INT64, [2])]))
    with pytest.raises(ValueError, match=r"Gather \(opset 13\) node 'lookup': index 5 is out of bounds"):
        sess.run(None, {"x": np.zeros((3, 2), np.float32), "i": np.array([0, 5])})
    # shapes that cannot broadcast are refused at import, by the symbolic shape inference
    with pytest.raises(ValueError, match=r"Add \(opset 13\).*broadcasting dim 1.*extents 2 and 4 differ"):
        InferenceSession(_graph([helper.make_node("Add", ["x", "z"], ["y"])],
                                [("x", TensorProto.FLOAT, [3, 2]), ("z", TensorProto.FLOAT, [4])]))
    sess = InferenceSession(_graph([helper.make_node("Add", ["x", "z"], ["y"])],     # undeclared: checked at run time
                                   [("x", TensorProto.FLOAT, [3, 2]), ("z", TensorProto.FLOAT, None)]))
    with pytest.raises(ValueError, match=r"Add \(opset 13\).*cannot be broadcast"):
        sess.run(None, {"x": np.zeros((3, 2), np.float32), "z": np.zeros(4, np.float32)})


def test_a_value_with_two_producers():
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])]
    with pytest.raises(ValueError, match="writes 'y', which is already defined"):
        InferenceSession(_graph(nodes, [("x", TensorProto.FLOAT, [2])]))


# ---- the seed's U-nets as PyTorch exports them (73 nodes for the padded one) ---------------------------
@pytest.fixture(scope="module")
def torch_unets():
    """The seed's two U-nets (padding H, W up to even sizes, or not), exported by PyTorch's
    TorchScript exporter with dynamic H and W: (module, ONNX bytes) for padded and plain."""
    return _export_torch_unets()


@functools.cache       # exported once per process: test_stage4_onnx_shapes.py uses them too
def _export_torch_unets():
    torch = pytest.importorskip("torch")
    return torch, {padded: torch_unet(padded) for padded in (True, False)}


def test_torch_exported_padded_unet_runs_at_every_size(torch_unets):
    torch, unets = torch_unets
    module, data = unets[True]
    assert len(onnx.load_from_string(data).graph.node) == 73
    with pytest.raises(TypeError, match="padded must be True or False"):
        torch_unet("yes")
    sess = InferenceSession(data)
    assert sess.get_inputs()[0].shape == [1, 1, "H", "W"]
    for hw in [(1, 1), (5, 7), (16, 16), (9, 4)]:
        x = np.random.default_rng(0).standard_normal((1, 1, *hw)).astype(np.float32)
        [y] = sess.run(None, {"x": x})
        with torch.no_grad():
            expected = module(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)
    replayed = {node.op_type for plan in sess._plans.values() for node, _ in plan.steps}
    assert replayed == {"Pad", "Conv", "Relu", "MaxPool", "Resize", "Concat", "Slice"}   # the shape arithmetic: none


def test_torch_exported_plain_unet_is_refused_at_import_naming_the_concat(torch_unets):
    """onnxruntime accepts it and fails on the first odd size; the symbolic shapes refuse it
    at import, with the proof that failed (H odd: the pooled-then-upsampled 2*(H // 2) != H)."""
    torch, unets = torch_unets
    module, data = unets[False]
    with pytest.raises(ValueError, match=r"Concat \(opset 17\) node '/Concat', dim 2: cannot prove the "
                                         r"extents H and 2\*\(H // 2\) equal.*counterexample \{'H': 1\}"):
        InferenceSession(data)
