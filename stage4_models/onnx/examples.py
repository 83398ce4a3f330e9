"""The seed's two U-nets as ONNX models (chapter 13, "13_inference_compiler": the U-net).

The system this chapter follows is an inference engine for U-nets, and its two example
networks show what such an engine must get right. Both are one level deep: a 3x3 convolution
(1 -> 4 channels, BatchNorm, ReLU) whose output is the skip connection, a 2x2 max-pool, a
second convolution (4 -> 8, BatchNorm, ReLU), a 2x nearest upsample, the Concat of the skip
and the upsampled tensor (12 channels), Dropout, and a last convolution back to one channel.
(The seed's own networks have no BatchNorm or Dropout and name no channel counts; these are
added so that the passes have something to fold and drop.)

* ``unet_model(padded=True)`` pads H and W up to even extents first (edge padding) and
  crops the output back to H x W, so the pool and the upsample give back the skip's extent
  at every size. The padding is computed in the graph, as an exporter writes it when H and W
  are left free: Shape, Gather, Mod, Sub, Mod, Concat (the 8 pads: every begin, then
  every end), then Pad; the crop is a Slice whose
  ends are the Gathered [H, W].
* ``unet_model(padded=False)`` does neither: at an odd extent E the pool gives E // 2, the
  upsample 2 * (E // 2) = E - 1, and the Concat's inputs differ.
* ``torch_unet(padded)`` is the seed's forward exactly as it is written, in PyTorch
  (replicate padding, no BatchNorm), exported by PyTorch's TorchScript exporter: the graph a
  real exporter writes, to be imported as it comes. PyTorch is an optional oracle here, imported
  only when this is called.

Exporters leave constants as Constant nodes and keep BatchNormalization and inference-time
Dropout as nodes; so do these models, which gives each of the compiler's graph passes
(passes/) something to do. Built with ``onnx.helper``; weights from a seeded generator.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _const(name, values, dtype=np.int64):
    """A Constant node, as exporters write small constants."""
    return helper.make_node("Constant", [], [name], name=f"Constant_{name}",
                            value=numpy_helper.from_array(np.array(values, dtype=dtype), name))


def _conv_bn(rng, prefix, c_in, c_out):
    """Initializers of a 3x3 convolution and the BatchNormalization after it."""
    arrays = {f"{prefix}.weight": rng.standard_normal((c_out, c_in, 3, 3)) / np.sqrt(9 * c_in),
              f"{prefix}.bias": 0.1 * rng.standard_normal(c_out),
              f"{prefix}.bn.scale": 1 + 0.1 * rng.standard_normal(c_out),
              f"{prefix}.bn.bias": 0.1 * rng.standard_normal(c_out),
              f"{prefix}.bn.mean": 0.1 * rng.standard_normal(c_out),
              f"{prefix}.bn.var": 1 + 0.1 * rng.random(c_out)}
    return [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()]


def unet_model(padded=True, seed=0):
    """The seed's one-level U-net as an ONNX ModelProto (opset 13): input ``x`` (N, 1, H, W)
    with H and W free, output ``y`` (N, 1, H, W) when ``padded`` (otherwise the Concat fails
    at odd extents). See the module docstring for the layers."""
    if not isinstance(padded, bool):
        raise TypeError(f"unet_model: padded must be True or False, got {padded!r}")
    rng = np.random.default_rng(seed)
    inits = _conv_bn(rng, "conv1", 1, 4) + _conv_bn(rng, "conv2", 4, 8)
    inits += [numpy_helper.from_array((rng.standard_normal((1, 12, 3, 3)) / np.sqrt(108)).astype(np.float32),
                                      "conv3.weight"),
              numpy_helper.from_array(np.zeros(1, np.float32), "conv3.bias")]
    node = helper.make_node
    nodes = []
    x = "x"
    if padded:      # pads = [0, 0, 0, 0, 0, 0, (2 - H % 2) % 2, (2 - W % 2) % 2], then an edge Pad
        nodes += [_const("hw_axes", [2, 3]), _const("two", [2]), _const("zeros6", [0] * 6),
                  node("Shape", ["x"], ["shape"], name="Shape_0"),
                  node("Gather", ["shape", "hw_axes"], ["hw"], name="Gather_1", axis=0),
                  node("Mod", ["hw", "two"], ["hw_mod"], name="Mod_2"),
                  node("Sub", ["two", "hw_mod"], ["to_even"], name="Sub_3"),
                  node("Mod", ["to_even", "two"], ["pad_hw"], name="Mod_4"),
                  node("Concat", ["zeros6", "pad_hw"], ["pads"], name="Concat_5", axis=0),
                  node("Pad", ["x", "pads"], ["x_even"], name="Pad_6", mode="edge")]
        x = "x_even"

    def conv_bn_relu(prefix, src, out):
        return [node("Conv", [src, f"{prefix}.weight", f"{prefix}.bias"], [f"{prefix}.conv"],
                     name=f"{prefix}.Conv", pads=[1, 1, 1, 1]),
                node("BatchNormalization", [f"{prefix}.conv"] + [f"{prefix}.bn.{k}" for k in
                                                                   ("scale", "bias", "mean", "var")],
                     [f"{prefix}.bn"], name=f"{prefix}.BatchNormalization", epsilon=1e-5),
                node("Relu", [f"{prefix}.bn"], [out], name=f"{prefix}.Relu")]

    nodes += conv_bn_relu("conv1", x, "skip")
    nodes.append(node("MaxPool", ["skip"], ["pooled"], name="MaxPool", kernel_shape=[2, 2], strides=[2, 2]))
    nodes += conv_bn_relu("conv2", "pooled", "deep")
    nodes += [_const("scales", [1, 1, 2, 2], np.float32),
              node("Resize", ["deep", "", "scales"], ["up"], name="Resize", mode="nearest"),
              node("Concat", ["skip", "up"], ["cat"], name="Concat", axis=1),
              node("Dropout", ["cat"], ["cat_dropped"], name="Dropout"),
              node("Conv", ["cat_dropped", "conv3.weight", "conv3.bias"], ["y_full" if padded else "y"],
                   name="conv3.Conv", pads=[1, 1, 1, 1])]
    if padded:      # crop back: y_full[:, :, :H, :W]
        nodes += [_const("zeros2", [0, 0]),
                  node("Slice", ["y_full", "zeros2", "hw", "hw_axes"], ["y"], name="Slice")]
    graph = helper.make_graph(nodes, "unet_padded" if padded else "unet",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1, "H", "W"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def reference_unet(model, x):
    """The same network in numpy, float64 (a loop convolution): what the tests and the chapter
    compare against when onnxruntime is absent. ``model``: unet_model's ModelProto."""
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    padded = any(n.op_type == "Pad" for n in model.graph.node)

    def conv(a, prefix):
        k, b = w[f"{prefix}.weight"], w[f"{prefix}.bias"]
        a = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        h, wd = a.shape[2] - 2, a.shape[3] - 2
        out = np.stack([sum(np.einsum("nchw,c->nhw", a[:, :, i:i + h, j:j + wd], k[o, :, i, j])
                            for i in range(3) for j in range(3)) for o in range(k.shape[0])], axis=1)
        return out + b[None, :, None, None]

    def bn(a, prefix):
        s = w[f"{prefix}.bn.scale"] / np.sqrt(w[f"{prefix}.bn.var"] + 1e-5)
        return ((a - w[f"{prefix}.bn.mean"][None, :, None, None]) * s[None, :, None, None]
                + w[f"{prefix}.bn.bias"][None, :, None, None])

    H, W = x.shape[2:]
    a = x.astype(np.float64)
    if padded:
        a = np.pad(a, ((0, 0), (0, 0), (0, H % 2), (0, W % 2)), mode="edge")
    skip = np.maximum(bn(conv(a, "conv1"), "conv1"), 0)
    h2, w2 = skip.shape[2] // 2, skip.shape[3] // 2
    pooled = skip[:, :, :2 * h2, :2 * w2].reshape(*skip.shape[:2], h2, 2, w2, 2).max(axis=(3, 5))
    deep = np.maximum(bn(conv(pooled, "conv2"), "conv2"), 0)
    up = deep.repeat(2, axis=2).repeat(2, axis=3)
    y = conv(np.concatenate([skip, up], axis=1), "conv3")        # fails on odd extents unpadded
    return y[:, :, :H, :W]


def torch_unet(padded=True, seed=0):
    """The seed's U-net as the seed writes its forward, in PyTorch, exported by PyTorch's
    TorchScript exporter (opset 17) with H and W left free: ``(module, ONNX bytes)``.
    ``padded``: pad H and W up to even (replicate) and crop the output back, or not.
    The weights are PyTorch's default initialisation under ``seed``; the global random state
    is left as it was. Raises ImportError when PyTorch is not installed."""
    if not isinstance(padded, bool):
        raise TypeError(f"torch_unet: padded must be True or False, got {padded!r}")
    import io
    import warnings

    import torch
    nn, F = torch.nn, torch.nn.functional

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 4, 3, padding=1), nn.Conv2d(4, 8, 3, padding=1)
            self.conv3 = nn.Conv2d(12, 1, 3, padding=1)

        def forward(self, x):
            H, W = x.size(2), x.size(3)
            if padded:      # alignUp to a multiple of 2, as the seed writes it
                x = F.pad(x, (0, (2 - W % 2) % 2, 0, (2 - H % 2) % 2), mode="replicate")
            x1 = F.relu(self.conv1(x))
            x2 = F.relu(self.conv2(F.max_pool2d(x1, 2)))
            y = self.conv3(torch.cat([x1, F.interpolate(x2, scale_factor=2.0, mode="nearest")], 1))
            return y[:, :, :H, :W] if padded else y

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = UNet().eval()
    f = io.BytesIO()
    with warnings.catch_warnings():          # the TorchScript exporter's deprecation notice
        warnings.simplefilter("ignore")
        torch.onnx.export(module, torch.zeros(1, 1, 16, 16), f, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {2: "H", 3: "W"}, "y": {2: "H", 3: "W"}}, opset_version=17,
                          dynamo=False)
    return module, f.getvalue()


__all__ = ["reference_unet", "torch_unet", "unet_model"]
