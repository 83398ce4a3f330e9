"""Concats written in place (stage4_models/onnx/passes/writes.py, plan.py's compile): the
producers of a Concat's inputs write into their slices of its buffer and the Concat step
copies nothing, where they can; elsewhere the Concat copies, and explain() says which and
why. The compiled replay (a plan's second run on) against the node-by-node first run (bit
for bit: the same kernels), against the graph without the passes (bit for bit where the
same kernels run, conv_bands computing what the whole-column GEMM does), against the
float64 reference and onnxruntime (optional) on the seed U-nets.

Tolerances as in test_stage4_onnx_examples.py: float32 convolutions of at most 108
products against float64, rtol 1e-4 and atol 1e-5."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import stage2_tensor as tg  # noqa: E402
from stage2_tensor import backend  # noqa: E402
from stage4_models.onnx import InferenceSession  # noqa: E402
from stage4_models.onnx.examples import reference_unet, unet_model  # noqa: E402
from stage4_models.onnx.operators import OPERATORS  # noqa: E402
from stage4_models.onnx.passes.memory import plan_memory  # noqa: E402

pytestmark = pytest.mark.stage4
RTOL, ATOL = 1e-4, 1e-5


def _twin_model(axis=1, extra=()):
    """x -> Conv+Relu (a) -> Conv+Relu (b); Concat(a, b, *extra) along ``axis`` -> Conv (y):
    a U-net's skip connection beside the deeper path, both convolutions; ``extra`` adds
    inputs that must be copied (the graph input x, a repeat of a, ...)."""
    rng = np.random.default_rng(4)
    c_cat = 8 if axis == 1 else 4
    c_cat += sum(1 if name == "x" else 4 for name in extra) if axis == 1 else 0
    inits = {"w1": rng.standard_normal((4, 1, 3, 3)) / 3, "b1": rng.standard_normal(4) * 0.1,
             "w2": rng.standard_normal((4, 4, 3, 3)) / 6, "b2": rng.standard_normal(4) * 0.1,
             "w3": rng.standard_normal((1, c_cat, 3, 3)) / 9, "b3": np.zeros(1)}
    node = helper.make_node
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             node("Relu", ["c1"], ["a"], name="relu1"),
             node("Conv", ["a", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             node("Relu", ["c2"], ["b"], name="relu2"),
             node("Concat", ["a", "b", *extra], ["cat"], axis=axis, name="cat"),
             node("Conv", ["cat", "w3", "b3"], ["y"], pads=[1, 1, 1, 1], name="conv3")]
    graph = helper.make_graph(nodes, "twin", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _x(h, w, batch=1, seed=0, channels=1):
    return np.random.default_rng(seed).standard_normal((batch, channels, h, w)).astype(np.float32)


class _Copies:
    """Counts, during a run, the Concat operator's calls and the device writes (copy_,
    slice assignment): what a Concat copying its inputs would make."""

    def __init__(self, monkeypatch):
        self.concat = self.write = 0
        concat, be = OPERATORS["Concat"], backend.get("cpu")
        write = be.write

        def counted_concat(*args):
            self.concat += 1
            return concat(*args)

        def counted_write(*args):
            self.write += 1
            return write(*args)
        monkeypatch.setitem(OPERATORS, "Concat", counted_concat)
        monkeypatch.setattr(be, "write", counted_write)


def _plan(sess):
    [plan] = sess._plans.values()
    return plan


@pytest.mark.parametrize("hw, batch", [((1, 1), 1), ((5, 7), 1), ((16, 16), 1), ((9, 4), 2), ((3, 11), 3)])
def test_a_concat_of_two_convolutions_copies_nothing(monkeypatch, hw, batch):
    """Both inputs written in place (along the channels, strided slices when the batch is
    above 1): the replay calls no Concat and writes nothing but the kernels' outputs; the
    output is optimize=False's bit for bit (conv_bands computes what conv's GEMM does) on
    every run; the memory plan holds a and b inside the Concat's buffer."""
    data = _twin_model().SerializeToString()
    x = _x(*hw, batch=batch)
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    [first] = sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    [second] = sess.run(None, {"x": x})
    assert copies.concat == 0 and copies.write == 0
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    plan = _plan(sess)
    assert plan.writes.report == {"cat": [("a", "written in place by conv_bias_relu (relu1)"),
                                          ("b", "written in place by conv_bias_relu (relu2)")]}
    assert plan.memory.in_place == ["cat"] and "concat_in_place" in plan.schedule.kernels()
    [cat] = [b for b in plan.memory.buffers if b.name == "cat"]
    plane = hw[0] * hw[1] * 4
    assert sorted(cat.members) == [("a", 0), ("b", 4 * plane), ("cat", 0)]
    steps = [node for node, _ in plan.steps]
    assert plan.memory.peak_bytes < plan_memory(steps, plan.info, plan.outputs).peak_bytes


def test_the_written_slices_are_the_concats_buffer(monkeypatch):
    """During the replay, a and b are views of the Concat's output (the same storage, at
    the offsets of their slices), not tensors of their own."""
    data = _twin_model().SerializeToString()
    sess = InferenceSession(data)
    x = _x(6, 5, batch=2)
    sess.run(None, {"x": x})
    plan = _plan(sess)
    seen = {}
    [step] = [s for s in plan.program if s.outputs == ["cat"]]
    run = step.run

    def spy(env):
        seen.update(a=env["a"], b=env["b"])
        run(env)
        seen["cat"] = env["cat"]
    monkeypatch.setattr(step, "run", spy)
    sess.run(None, {"x": x})
    cat, a, b = seen["cat"], seen["a"], seen["b"]
    assert a.storage is cat.storage and b.storage is cat.storage
    assert (a.offset, b.offset) == (0, 4 * 6 * 5) and a.strides == b.strides == cat.strides
    np.testing.assert_array_equal(cat.numpy(), np.concatenate([a.numpy(), b.numpy()], axis=1))


def test_inputs_that_cannot_be_written_are_copied_and_explained(monkeypatch):
    """A graph input and a repeated input are copied into the buffer (the Concat copies
    only them); the rest are still written in place; the output is unchanged."""
    data = _twin_model(extra=("x", "a")).SerializeToString()
    x = _x(7, 5)
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    [y] = sess.run(None, {"x": x})
    np.testing.assert_array_equal(y, expected)
    assert copies.concat == 0 and copies.write == 3                 # a (twice) and x
    report = sess.explain()["plans"][0]["concats"]
    assert report == {"cat": ["a: copied: it appears more than once",
                              "b: written in place by conv_bias_relu (relu2)",
                              "x: copied: a graph input or a constant",
                              "a: copied: it appears more than once"]}
    assert _plan(sess).memory.in_place == [] and "concat" in _plan(sess).schedule.kernels()


def test_a_value_two_concats_read_lives_in_the_first():
    """a and b feed the Concat cat (written in place there) and a second Concat, cat2,
    which copies them out of cat's buffer: a value lives in one buffer."""
    model = _twin_model()
    graph = model.graph
    graph.node.append(helper.make_node("Concat", ["b", "a"], ["cat2"], axis=1, name="cat2"))
    graph.output.append(helper.make_tensor_value_info("cat2", TensorProto.FLOAT, None))
    data = model.SerializeToString()
    x = _x(6, 7, batch=2)
    sess = InferenceSession(data)
    expected = InferenceSession(data, optimize=False).run(None, {"x": x})
    for _ in range(2):
        for got, want in zip(sess.run(None, {"x": x}), expected):
            np.testing.assert_array_equal(got, want)
    report = sess.explain()["plans"][0]["concats"]
    assert report["cat"] == ["a: written in place by conv_bias_relu (relu1)",
                             "b: written in place by conv_bias_relu (relu2)"]
    assert report["cat2"] == ["b: copied: it already lives in cat's buffer", "a: copied: it already lives in cat's buffer"]


def test_a_convolution_without_relu_writes_its_slice(monkeypatch):
    """The deeper path without its ReLU: the plain Conv writes into its slice (conv_bands
    with no activation), the Conv+Relu into the other; nothing is copied."""
    model = _twin_model()
    graph = model.graph
    for node in graph.node:
        if node.name == "cat":
            node.input[1] = "c2"
    relu2 = [i for i, node in enumerate(graph.node) if node.name == "relu2"][0]
    del graph.node[relu2]
    data = model.SerializeToString()
    x = _x(9, 8)
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], expected)
    assert copies.concat == copies.write == 0
    assert sess.explain()["plans"][0]["concats"]["cat"] == ["a: written in place by conv_bias_relu (relu1)",
                                                            "c2: written in place by conv (conv2)"]


def test_a_concat_along_the_batch_and_within_a_plane():
    """Along axis 0 the slices are whole images: written in place. Along axis 2 (H) they
    cut inside each plane, which conv_bands writes whole: copied, and said so."""
    x = _x(6, 4)
    for axis, how in ((0, "written in place by conv_bias_relu (relu1)"),
                      (2, "copied: conv_bias_relu writes whole planes, and axis 2 cuts inside them")):
        data = _twin_model(axis=axis).SerializeToString()
        sess = InferenceSession(data)
        [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
        for _ in range(2):
            np.testing.assert_array_equal(sess.run(None, {"x": x})[0], expected)
        assert sess.explain()["plans"][0]["concats"]["cat"][0] == f"a: {how}"


@pytest.mark.parametrize("hw", [(1, 1), (2, 3), (5, 7), (8, 6), (33, 17)])
def test_the_seed_unet_with_its_skip_connection_in_place(monkeypatch, hw):
    """The seed's padded U-net at even, odd and 1x1 sizes, batch 1 and 2: the skip
    connection (Conv, Relu) and the upsampled path (Resize, through interpolate_into) are
    written into the Concat's buffer; the replay equals the first run bit for bit and the
    float64 reference within float32's rounding; nothing is copied."""
    model = unet_model(padded=True)
    for batch in (1, 2):
        x = _x(*hw, batch=batch, seed=sum(hw))
        sess = InferenceSession(model.SerializeToString())
        [first] = sess.run(None, {"x": x})
        copies = _Copies(monkeypatch)
        [second] = sess.run(None, {"x": x})
        monkeypatch.undo()
        assert copies.concat == 0 and copies.write == 0
        np.testing.assert_array_equal(first, second)
        np.testing.assert_allclose(second, reference_unet(model, x), rtol=RTOL, atol=ATOL)
        [lines] = sess.explain()["plans"][0]["concats"].values()
        assert lines == ["skip: written in place by conv_bias_relu (conv1.Relu)",
                         "up: written in place by resize (Resize)"]


def test_onnxruntime_agrees_with_the_replay():
    ort = pytest.importorskip("onnxruntime")
    for data, x in ((unet_model(padded=True).SerializeToString(), _x(9, 6, batch=2, seed=3)),
                    (_twin_model().SerializeToString(), _x(11, 13, seed=4))):
        [expected] = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        sess = InferenceSession(data)
        for _ in range(2):
            np.testing.assert_allclose(sess.run(None, {"x": x})[0], expected, rtol=RTOL, atol=ATOL)


def test_the_exported_unet_writes_both_skip_connections_in_place(tmp_path, monkeypatch):
    """stage4's U-net exported (what benchmarks/onnx.py runs at 256x256), at small even and
    odd sizes: its two skip connections (Conv+Relu) and its upsampled paths (Resize) are
    written in place, nothing copied; the replay is optimize=False's result bit for bit."""
    from stage4_models.onnx.export import export
    from stage4_models.unet.model import UNet
    tg.seed(0)
    path = str(tmp_path / "unet.onnx")
    dims = {0: "N", 2: "H", 3: "W"}
    export(UNet(8, device="cpu"), tg.zeros(1, 1, 12, 12, device="cpu"), path, input_names=["noisy"],
           output_names=["denoised"], dynamic_axes={"noisy": dims, "denoised": dims})
    with open(path, "rb") as f:
        data = f.read()
    for hw in ((12, 12), (13, 7)):
        x = _x(*hw, seed=hw[0])
        sess = InferenceSession(data)
        [expected] = InferenceSession(data, optimize=False).run(None, {"noisy": x})
        np.testing.assert_array_equal(sess.run(None, {"noisy": x})[0], expected)
        copies = _Copies(monkeypatch)
        np.testing.assert_array_equal(sess.run(None, {"noisy": x})[0], expected)
        monkeypatch.undo()
        assert copies.concat == copies.write == 0
        report = sess.explain()["plans"][0]["concats"]
        assert len(report) == 2 and all(lines[0].split(": ", 1)[1].startswith("written in place by conv_bias_relu")
                                        and lines[1].split(": ", 1)[1].startswith("written in place by resize")
                                        for lines in report.values())


@pytest.mark.parametrize("device, dtype", [("cpu:lazy", None), ("cpu", "float16")])
def test_without_conv_bands_the_producer_copies_into_its_slice(device, dtype):
    """The lazy device has no conv_bands, and it writes float32 and float64 only: the
    producer computes into its own buffer and copies that into its slice (said so); the
    plan and its memory are the same, the results those of the graph run node by node."""
    data = _twin_model().SerializeToString()
    x = _x(5, 6)
    sess = InferenceSession(data, device=device, dtype=dtype)
    [first] = sess.run(None, {"x": x})
    [second] = sess.run(None, {"x": x})
    np.testing.assert_array_equal(first, second)
    [expected] = InferenceSession(data, device=device, dtype=dtype, optimize=False).run(None, {"x": x})
    tol = 1e-2 if dtype else RTOL                       # float16 storage: 11 significant bits
    np.testing.assert_allclose(second, expected, rtol=tol, atol=tol)
    why = f"device {device} has no conv_bands (cpu has)" if dtype is None else \
        "stored as float16: conv_bands writes float32 and float64"
    assert sess.explain()["plans"][0]["concats"]["cat"] == [
        f"{v}: written into its slice by conv_bias_relu ({r}) through a copy: {why}"
        for v, r in (("a", "relu1"), ("b", "relu2"))]
    assert _plan(sess).memory.in_place == ["cat"]


def test_on_the_python_device_the_concat_copies():
    """No fused kernel there: the Relus compute into their own buffers, the Concat copies."""
    data = _twin_model().SerializeToString()
    x = _x(4, 3)
    sess = InferenceSession(data, device="python")
    [first] = sess.run(None, {"x": x})
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], first)
    assert sess.explain()["plans"][0]["concats"]["cat"] == [
        f"{v}: copied: Relu (relu) computes into a buffer of its own" for v in "ab"]


# ---- the backend test models with a Concat ----------------------------------------------------------
def _stored(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def test_the_backend_concat_model_copies_its_graph_inputs():
    """pytorch-operator's test_operator_concat2 concatenates the graph's inputs: nothing
    produces them into a buffer of ours, so the Concat copies them, as explain() says."""
    import glob
    import os
    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "pytorch-operator",
                          "test_operator_concat2")
    sess = InferenceSession(os.path.join(folder, "model.onnx"))
    inputs = [_stored(p) for p in sorted(glob.glob(os.path.join(folder, "test_data_set_0", "input_*.pb")))]
    [expected] = [_stored(p) for p in glob.glob(os.path.join(folder, "test_data_set_0", "output_*.pb"))]
    feeds = {arg.name: x for arg, x in zip(sess.get_inputs(), inputs)}
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(None, feeds)[0], expected)
    [lines] = sess.explain()["plans"][0]["concats"].values()
    assert lines == [f"{arg.name}: copied: a graph input or a constant" for arg in sess.get_inputs()]


@pytest.mark.parametrize("name, in_place", [("squeezenet", 8), ("inception_v1", 9)])
def test_light_models_write_their_concats_in_place(name, in_place):
    """squeezenet's Fire modules and inception's branches end in Conv+Relu: every Concat is
    written in place, the replay gives the stored output, and the same bits as optimize=False
    (no BatchNorm to fold, conv_bands computing what conv's GEMM does)."""
    import os
    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    path = os.path.join(folder, f"light_{name}.onnx")
    expected = _stored(os.path.join(folder, f"light_{name}_output_0.pb"))
    sess = InferenceSession(path)
    [arg] = sess.get_inputs()
    n = int(np.prod(arg.shape))
    x = (np.arange(n, dtype=np.float32) / n).reshape(arg.shape)
    [first] = sess.run(None, {arg.name: x})
    [second] = sess.run(None, {arg.name: x})
    np.testing.assert_allclose(second, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(second, InferenceSession(path, optimize=False).run(None, {arg.name: x})[0])
    assert len(_plan(sess).memory.in_place) == in_place == len(sess.explain()["plans"][0]["concats"])


# ---- a MaxPool, a Resize, an Upsample writing their slices (max_pool_into, interpolate_into) ----------
def _pool_model(pool_attrs, resize=None, opset=13, shape=("N", 1, "H", "W")):
    """x -> Conv+Relu (a, 4 channels) -> MaxPool (p) -> Conv+Relu (b); Concat(p, b) -> Conv:
    an inception branch beside the pooled path. With ``resize`` ("Resize" bilinear, or
    "Upsample" nearest, opset 9), b is also upsampled back to a's extent and concatenated
    with a: a U-net's decoder (at even extents: ``shape`` fixed ones, or the import refuses
    the Concat, as it does the unpadded U-net)."""
    rng = np.random.default_rng(7)
    inits = {"w1": rng.standard_normal((4, 1, 3, 3)) / 3, "b1": rng.standard_normal(4) * 0.1,
             "w2": rng.standard_normal((4, 4, 3, 3)) / 6, "b2": rng.standard_normal(4) * 0.1,
             "w3": rng.standard_normal((1, 8, 3, 3)) / 9, "b3": np.zeros(1)}
    node = helper.make_node
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             node("Relu", ["c1"], ["a"], name="relu1"),
             node("MaxPool", ["a"], ["p"], name="pool", **pool_attrs),
             node("Conv", ["p", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             node("Relu", ["c2"], ["b"], name="relu2")]
    if resize is None:
        nodes += [node("Concat", ["p", "b"], ["cat"], axis=1, name="cat")]
    else:
        inits["scales"] = np.array([1, 1, 2, 2])
        if resize == "Resize":
            nodes.append(node("Resize", ["b", "", "scales"], ["u"], name="up", mode="linear"))
        else:
            nodes.append(node("Upsample", ["b", "scales"], ["u"], name="up", mode="nearest"))
        nodes += [node("Concat", ["a", "u"], ["cat"], axis=1, name="cat")]
    nodes.append(node("Conv", ["cat", "w3", "b3"], ["y"], pads=[1, 1, 1, 1], name="conv3"))
    graph = helper.make_graph(nodes, "pooled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


POOLS = [dict(kernel_shape=[2, 2], strides=[2, 2]),
         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
         dict(kernel_shape=[3, 2], strides=[2, 1], pads=[0, 1, 1, 0])]          # unequal pads: F.pad first


@pytest.mark.parametrize("attrs", POOLS)
@pytest.mark.parametrize("hw, batch", [((5, 7), 1), ((8, 6), 2), ((3, 3), 1)])
def test_a_max_pool_writes_its_slice(monkeypatch, attrs, hw, batch):
    """The MaxPool writes its maxima into its slice (max_pool_into), the Conv+Relu the other:
    nothing copied; the same bits as optimize=False (and onnxruntime, optional, within
    float32's rounding)."""
    data = _pool_model(attrs).SerializeToString()
    x = _x(*hw, batch=batch, seed=hw[0])
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    [first] = sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    [second] = sess.run(None, {"x": x})
    monkeypatch.undo()
    assert copies.concat == copies.write == 0
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    assert sess.explain()["plans"][0]["concats"]["cat"] == ["p: written in place by pool (pool)",
                                                            "b: written in place by conv_bias_relu (relu2)"]
    try:
        import onnxruntime as ort
    except ImportError:
        return
    [oracle] = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(second, oracle, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("resize, opset", [("Resize", 13), ("Upsample", 9)])
@pytest.mark.parametrize("hw, batch", [((4, 6), 1), ((8, 2), 2)])
def test_a_bilinear_resize_and_an_upsample_write_their_slices(monkeypatch, resize, opset, hw, batch):
    data = _pool_model(POOLS[0], resize, opset, (batch, 1) + hw).SerializeToString()
    x = _x(*hw, batch=batch, seed=5)
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    [second] = sess.run(None, {"x": x})
    monkeypatch.undo()
    assert copies.concat == copies.write == 0
    np.testing.assert_array_equal(second, expected)
    assert sess.explain()["plans"][0]["concats"]["cat"] == [
        "a: written in place by conv_bias_relu (relu1)", f"u: written in place by {resize.lower()} (up)"]


def test_a_max_pool_and_a_resize_through_a_copy_elsewhere():
    """In float16 storage (and on cpu:lazy) max_pool_into and interpolate_into cannot write
    the slice: the producers compute into their own buffers and copy, said so."""
    for data, name, kernel, writer in ((_pool_model(POOLS[0]), "p", "pool (pool)", "max_pool_into"),
                                       (_pool_model(POOLS[0], "Resize", shape=(1, 1, 6, 4)), "u", "resize (up)",
                                        "interpolate_into")):
        data = data.SerializeToString()
        x = _x(6, 4)
        for device, dtype, why in (("cpu", "float16", f"stored as float16: {writer} writes float32 and float64"),
                                   ("cpu:lazy", None, f"device cpu:lazy has no {writer} (cpu has)")):
            sess = InferenceSession(data, device=device, dtype=dtype)
            [first] = sess.run(None, {"x": x})
            np.testing.assert_array_equal(sess.run(None, {"x": x})[0], first)
            [expected] = InferenceSession(data, device=device, dtype=dtype, optimize=False).run(None, {"x": x})
            np.testing.assert_allclose(first, expected, rtol=1e-2, atol=1e-2)
            lines = sess.explain()["plans"][0]["concats"]["cat"]
            assert f"{name}: written into its slice by {kernel} through a copy: {why}" in lines


def test_an_average_pool_is_still_copied_and_said_so():
    model = _pool_model(POOLS[0])
    for n in model.graph.node:
        if n.op_type == "MaxPool":
            n.op_type = "AveragePool"
    data = model.SerializeToString()
    x = _x(6, 6)
    sess = InferenceSession(data)
    [expected] = InferenceSession(data, optimize=False).run(None, {"x": x})
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], expected)
    assert sess.explain()["plans"][0]["concats"]["cat"][0] == \
        "p: copied: AveragePool (pool) computes into a buffer of its own"


@pytest.mark.parametrize("hw", [(1, 1), (1, 6), (7, 1), (5, 5), (16, 9), (32, 32)])
def test_the_seed_unet_copies_nothing_and_agrees_with_onnxruntime(monkeypatch, hw):
    """Both of the U-net's Concat inputs are written in place at every size: the replay
    writes nothing but its kernels' outputs and equals the first run and optimize=False
    within float32's rounding (BatchNorm folded into the weights there), and onnxruntime."""
    data = unet_model(padded=True).SerializeToString()
    x = _x(*hw, seed=hw[0] * 31 + hw[1])
    sess = InferenceSession(data)
    [first] = sess.run(None, {"x": x})
    copies = _Copies(monkeypatch)
    [second] = sess.run(None, {"x": x})
    monkeypatch.undo()
    assert copies.concat == copies.write == 0
    assert _plan(sess).memory.in_place == ["Concat"]
    np.testing.assert_array_equal(first, second)
    [plain] = InferenceSession(data, optimize=False).run(None, {"x": x})
    np.testing.assert_allclose(second, plain, rtol=RTOL, atol=ATOL)
    try:
        import onnxruntime as ort
    except ImportError:
        return
    [oracle] = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(second, oracle, rtol=RTOL, atol=ATOL)
