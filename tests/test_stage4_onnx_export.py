"""stage4_models/onnx/export.py (chapter 13, "13_inference_compiler": export): models built
with tracegrad's nn, traced into ONNX, give the model's own outputs through this engine's
InferenceSession and through onnxruntime (where installed); the files pass
onnx.checker.check_model; what cannot be exported is refused, naming it.

Tolerances: everything computes in float32 (eps = 1.2e-7). The InferenceSession runs the
same kernels as the model, in the same order, so it agrees to a few eps; onnxruntime sums
the convolutions' K products (K up to 9216 in the MNIST CNN's Linear) in another order,
drifting by about sqrt(K) eps relative to the sum of magnitudes: rtol 1e-4, atol 1e-5 (as
tests/test_stage4_onnx.py) leave a margin of ~10x.
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import stage2_tensor as tg  # noqa: E402
import stage2_tensor.nn as nn  # noqa: E402
import stage2_tensor.nn.functional as F  # noqa: E402
from stage4_models.mnist.cnn import MnistCNN  # noqa: E402
from stage4_models.onnx import InferenceSession  # noqa: E402
from stage4_models.onnx.export import export  # noqa: E402

pytestmark = pytest.mark.stage4

RTOL, ATOL = 1e-4, 1e-5
DYNAMIC = {0: "N", 2: "H", 3: "W"}


def _engines(path):
    """name -> run(x) for this engine and, when installed, onnxruntime."""
    ours = InferenceSession(path)
    engines = {"tracegrad": lambda x: ours.run(None, {ours.get_inputs()[0].name: x})[0]}
    try:
        import onnxruntime
    except ImportError:
        return engines
    ort = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    engines["onnxruntime"] = lambda x: ort.run(None, {ort.get_inputs()[0].name: x})[0]
    return engines


def _check(model, shapes, path, dynamic_axes=None, seed=0):
    """Export ``model`` on an input of ``shapes[0]``; at every shape, each engine's output
    matches the model's (in eval mode)."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    proto = export(model, tg.from_numpy(xs[0], device="cpu"), path, input_names=["x"], output_names=["y"],
                   dynamic_axes=dynamic_axes)
    onnx.checker.check_model(onnx.load(path))
    model.eval()
    engines = _engines(path)
    for x in xs:
        with tg.no_grad():
            expected = model(tg.from_numpy(x, device="cpu")).numpy()
        for name, run in engines.items():
            got = run(x)
            assert got.shape == expected.shape, name
            np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=f"{name} at {x.shape}")
    return proto


class ConvNet(nn.Module):
    """Every layer the U-nets use, and some beside: strided, dilated and grouped conv, batch
    norm, max and average pooling, nearest upsampling, concat, the activations, scalars."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 8, 3, padding=1, device="cpu")
        self.bn = nn.BatchNorm2d(8, device="cpu")
        self.conv2 = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2, device="cpu")
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv3 = nn.Conv2d(16, 4, 3, stride=1, padding=1, device="cpu")
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x):
        a = F.relu(self.bn(self.conv1(x)))
        b = self.up(F.avg_pool2d(self.conv2(self.pool(a)), 1)).sigmoid()
        y = self.conv3(tg.cat([a, self.act(b)], 1))
        return (y.tanh() * 0.5 + 1.0) / 2.0 - y


def _convnet():
    tg.seed(0)
    model = ConvNet()
    model.bn.running_mean = tg.from_numpy(np.linspace(-1, 1, 8).astype(np.float32), device="cpu")
    model.bn.running_var = tg.from_numpy(np.linspace(0.5, 2, 8).astype(np.float32), device="cpu")
    return model


def test_conv_pool_upsample_concat_net_with_a_free_batch(tmp_path):
    proto = _check(_convnet(), [(2, 2, 8, 8), (1, 2, 8, 8), (3, 2, 8, 8)], str(tmp_path / "convnet.onnx"),
                   {"x": {0: "N"}, "y": {0: "N"}})
    ops = [n.op_type for n in proto.graph.node]
    assert ops[:2] == ["Conv", "BatchNormalization"] and {"MaxPool", "AveragePool", "Resize", "Concat",
                                                          "LeakyRelu", "Sigmoid", "Tanh", "Mul", "Div", "Sub"} <= set(ops)
    conv2 = [n for n in proto.graph.node if n.op_type == "Conv"][1]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in conv2.attribute}
    assert attrs["group"] == 2 and list(attrs["dilations"]) == [2, 2] and list(attrs["pads"]) == [2, 2, 2, 2]
    assert [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] == ["N", 2, 8, 8]
    assert proto.opset_import[0].version == 17
    assert {t.name for t in proto.graph.initializer} >= {"conv1.weight", "bn.running_mean"}


def test_the_same_net_with_free_height_and_width_is_refused_at_import(tmp_path):
    """Pooled by 2 and upsampled by 2, an odd extent comes back one short: its Concat with
    the unpooled branch holds only for even H and W, which the import cannot prove."""
    path = str(tmp_path / "convnet.onnx")
    proto = export(_convnet(), tg.randn(1, 2, 8, 8, device="cpu"), path, input_names=["x"], output_names=["y"],
                   dynamic_axes={"x": DYNAMIC, "y": DYNAMIC})
    assert [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] == ["N", 2, "H", "W"]
    with pytest.raises(ValueError, match=r"Concat.*cannot prove the extents H and 2\*\(H // 2\) equal"):
        InferenceSession(path)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(12, 16, device="cpu"), nn.ReLU(),
                                  nn.Linear(16, 5, device="cpu"), nn.Tanh())
        self.out = nn.Linear(5, 3, bias=False, device="cpu")

    def forward(self, x):
        return F.softmax(self.out(self.body(x)), dim=1)


def test_mlp_gemm_flatten_softmax(tmp_path):
    tg.seed(1)
    proto = _check(MLP(), [(4, 3, 4), (7, 3, 4)], str(tmp_path / "mlp.onnx"), {"x": [0], "y": [0]})
    assert [n.op_type for n in proto.graph.node] == ["Flatten", "Gemm", "Relu", "Gemm", "Tanh", "Gemm", "Softmax"]


class Tokens(nn.Module):
    """A Linear on a 3-d input (MatMul + Add) and a reshape."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4, device="cpu")

    def forward(self, x):
        return self.fc(x).reshape(2, 12)


def test_linear_on_3d_input_and_reshape(tmp_path):
    tg.seed(2)
    proto = _check(Tokens(), [(2, 3, 6)], str(tmp_path / "tokens.onnx"))
    assert [n.op_type for n in proto.graph.node] == ["MatMul", "Add", "Reshape"]


def test_the_mnist_cnn(tmp_path):
    tg.seed(3)
    model = MnistCNN(device="cpu")
    proto = _check(model, [(2, 1, 28, 28), (1, 1, 28, 28)], str(tmp_path / "cnn.onnx"), {"x": [0], "y": [0]})
    assert [n.op_type for n in proto.graph.node] == ["Conv", "Relu", "Conv", "Relu", "MaxPool", "Flatten", "Gemm",
                                                     "Relu", "Gemm", "LogSoftmax"]     # dropout: identity
    assert model.training is False      # _check put it in eval mode; export itself restores the mode:
    model.train()
    export(model, tg.zeros(1, 1, 28, 28, device="cpu"))
    assert model.training and model.dropout1.training


def test_inplace_activations_export(tmp_path):
    """The example runs in the graph, where inplace=True computes out of place (inplace.py)."""
    tg.seed(4)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), nn.Linear(5, 3), nn.LeakyReLU(0.2, inplace=True),
                          nn.Dropout(0.5, inplace=True), nn.Linear(3, 2)).to("cpu")
    proto = _check(model, [(2, 4)], str(tmp_path / "inplace.onnx"))
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Relu", "Gemm", "LeakyRelu", "Gemm"]


class Passthrough(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=self.training)


def test_an_output_that_is_the_input_is_an_identity(tmp_path):
    proto = _check(Passthrough(), [(2, 3)], str(tmp_path / "id.onnx"))
    assert [n.op_type for n in proto.graph.node] == ["Identity"]


def test_a_failing_export_leaves_the_old_file_and_no_temporary(tmp_path, full_disk):
    """export writes through stage2's atomic_write: a write that fails keeps the previous
    model whole and removes its temporary file; a killed export's temporary file (its
    process id one no process can have) is removed by the next export."""
    path = tmp_path / "id.onnx"
    old = b"the previous model"
    path.write_bytes(old)
    (tmp_path / f".id.onnx.{2 ** 40}.0badcafe.tmp").write_bytes(b"half")
    with pytest.raises(OSError, match="No space left on device"):
        export(Passthrough(), tg.zeros(2, 3, device="cpu"), path)
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["id.onnx"]


class Exp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3, device="cpu")

    def forward(self, x):
        return self.fc(x.exp())


class Indices(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2, return_indices=True)[0]


class Training(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=True)


@pytest.mark.parametrize("model, message", [
    (Exp(), "Gemm reads a value computed by Exp, an operation the exporter does not support"),
    (Indices(), "max_pool with return_indices=True is not supported"),
    (Training(), "dropout in training mode cannot be exported"),
])
def test_what_cannot_be_exported_is_named(model, message):
    with pytest.raises(ValueError, match=message):
        export(model, tg.zeros(1, 3, 4, 4, device="cpu") if not isinstance(model, Exp) else tg.zeros(2, 3, device="cpu"))


def test_the_recording_is_undone_after_an_error():
    before = (tg.Tensor.__dict__.get("relu"), tg.Tensor.__add__, tg.cat, F.linear, F.interpolate)
    with pytest.raises(ValueError):
        export(Exp(), tg.zeros(2, 3, device="cpu"))
    assert (tg.Tensor.__dict__.get("relu"), tg.Tensor.__add__, tg.cat, F.linear, F.interpolate) == before


def test_bad_arguments():
    model = MLP()
    x = tg.zeros(2, 3, 4, device="cpu")
    with pytest.raises(TypeError, match="expected an nn.Module"):
        export(lambda x: x, x)
    with pytest.raises(TypeError, match="example_input must be a float Tensor"):
        export(model, np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="dynamic_axes names 'z', which is not an input or output"):
        export(model, x, dynamic_axes={"z": [0]})
    with pytest.raises(ValueError, match="has axis 5"):
        export(model, x, input_names=["x"], dynamic_axes={"x": {5: "N"}})
    with pytest.raises(ValueError, match="input_names must be 1 distinct non-empty strings"):
        export(model, x, input_names=["a", "b"])
    with pytest.raises(ValueError, match="opset_version 13 is not supported"):
        export(model, x, opset_version=13)
