"""The seed's U-nets as ONNX models (stage4_models/onnx/examples.py) and the drawings of the
compiler's graphs (stage4_models/onnx/draw.py), both used by chapter 13.

Tolerances as in test_stage4_onnx.py: float32 convolutions of at most 12 x 9 = 108 products
against a float64 reference, rtol 1e-4 and atol 1e-5 (measured: below 1e-6)."""
import graphviz
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from stage4_models.onnx import InferenceSession, draw  # noqa: E402
from stage4_models.onnx.examples import reference_unet, unet_model  # noqa: E402
from stage4_models.onnx.importer import import_model, load_model  # noqa: E402
from stage4_models.onnx.passes import canonicalize, fold_constants  # noqa: E402

pytestmark = pytest.mark.stage4
RTOL, ATOL = 1e-4, 1e-5


def _x(h, w, batch=1, seed=0):
    return np.random.default_rng(seed).standard_normal((batch, 1, h, w)).astype(np.float32)


@pytest.mark.parametrize("hw", [(1, 1), (5, 7), (8, 6), (9, 2)])
def test_padded_unet_runs_at_every_size(hw):
    model = unet_model(padded=True)
    sess = InferenceSession(model.SerializeToString())
    assert [a.shape for a in sess.get_inputs()] == [["N", 1, "H", "W"]]
    x = _x(*hw, batch=2)
    [y] = sess.run(None, {"x": x})
    assert y.shape == (2, 1, *hw)
    np.testing.assert_allclose(y, reference_unet(model, x), rtol=RTOL, atol=ATOL)


def test_padded_unet_has_the_exporters_shape_arithmetic_and_what_each_pass_removes():
    model = unet_model(padded=True)
    ops = [n.op_type for n in model.graph.node]
    assert len(ops) == 24 and ops.count("Constant") == 5 and ops.count("BatchNormalization") == 2
    assert {"Shape", "Gather", "Mod", "Sub", "Pad", "Slice", "Dropout"} <= set(ops)
    sess = InferenceSession(model.SerializeToString())
    sess.run(None, {"x": _x(5, 7)})
    [plan] = sess._plans.values()
    assert [n.op_type for n, _ in plan.steps] == ["Pad", "Conv", "Relu", "MaxPool", "Conv", "Relu", "Resize",
                                                  "Concat", "Conv", "Slice"]
    report = sess.explain()
    assert [(r["pass"], r["nodes_before"], r["nodes_after"]) for r in report["passes"]] == [
        ("fold", 24, 19), ("canonicalize", 19, 16), ("dce", 16, 16), ("specialize", 16, 16)]
    assert report["plans"][0]["concats"] == {"Concat": [
        "skip: written in place by conv_bias_relu (conv1.Relu)",
        "up: written in place by resize (Resize)"]}


def test_unpadded_unet_fails_on_odd_sizes_naming_the_concat():
    model = unet_model(padded=False)
    assert not any(n.op_type in ("Pad", "Slice") for n in model.graph.node)
    with pytest.raises(ValueError, match="Concat"):
        InferenceSession(model.SerializeToString()).run(None, {"x": _x(37, 50)})
    with pytest.raises(ValueError):                     # the float64 reference refuses it too
        reference_unet(model, _x(5, 4))


def test_onnxruntime_agrees_on_both_unets():
    ort = pytest.importorskip("onnxruntime")
    for padded, hw in ((True, (9, 6)), (False, (8, 6))):
        model = unet_model(padded=padded)
        x = _x(*hw, seed=3)
        [expected] = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
        np.testing.assert_allclose(reference_unet(model, x), expected, rtol=RTOL, atol=ATOL)


def test_unet_model_checks_its_argument():
    with pytest.raises(TypeError, match="padded"):
        unet_model(padded="yes")


def test_graph_drawing_marks_what_a_pass_changed():
    g = import_model(load_model(unet_model(padded=True).SerializeToString()))
    drawing = draw.graph(g, host={"Shape_0"})
    assert isinstance(drawing, graphviz.Digraph)
    text = drawing.source
    assert text.count("->") >= len(g.nodes) and all(f"\\n{n.name}\"" in text for n in g.nodes)
    assert "#e6e6e6" in text                        # the host node's fill
    folded, _ = fold_constants(g, "cpu")
    after, _ = canonicalize(folded)
    text = draw.graph(folded, after=after).source
    lines = {line.split("label=")[1].split('"')[1]: line for line in text.splitlines() if "label=" in line}
    assert "dashed" in lines["BatchNormalization\\nconv1.BatchNormalization"]       # removed
    assert "dashed" in lines["Dropout\\nDropout"]
    assert draw.FILL["rewritten"] in lines["Conv\\nconv1.Conv"]                     # its weights replaced
    assert draw.FILL["added"] in lines["conv1.weight_bn\\n(4, 1, 3, 3)"]           # the folded weight
    assert "Relu" in lines["Relu\\nconv1.Relu"] and "dashed" not in lines["Relu\\nconv1.Relu"]
    with pytest.raises(ValueError, match="rankdir"):
        draw.graph(g, rankdir="XY")


def test_supergraph_drawing_marks_the_cheapest_path():
    data = unet_model(padded=True).SerializeToString()
    sess = InferenceSession(data, device="cpu:lazy")
    sess.run(None, {"x": _x(6, 8)})
    [entry] = sess.explain()["plans"]
    path = draw.chosen_edges(entry)
    assert path[0][0] == 0 and path[-1][1] == entry["steps"]
    assert all(a[1] == b[0] for a, b in zip(path, path[1:]))
    # both of the Concat's producers write their slices (on cpu:lazy, which has neither
    # conv_bands nor interpolate_into, through a copy each): concat_in_place, though the
    # copying concat is an edge of the supergraph too
    assert ("conv_bias_relu" in {k for _, _, k in path}) and ("concat_in_place" in {k for _, _, k in path})
    assert "concat" in {k for _, _, k, _ in entry["supergraph"]}
    assert entry["concats"]["Concat"][1] == ("up: written into its slice by resize (Resize) through a copy: "
                                             "device cpu:lazy has no interpolate_into (cpu has)")
    text = draw.supergraph(entry).source
    assert text.count("penwidth") == len(path) and text.count("->") == len(entry["supergraph"])
    with pytest.raises(ValueError, match="optimize=False"):
        plain = InferenceSession(data, optimize=False)
        plain.run(None, {"x": _x(6, 8)})
        draw.supergraph(plain.explain()["plans"][0])


def test_memory_chart_draws_a_plan_and_refuses_an_empty_one(tmp_path):
    from types import SimpleNamespace

    from stage4_models.onnx.memory_chart import memory_chart
    sess = InferenceSession(unet_model(padded=True).SerializeToString())
    sess.run(None, {"x": _x(5, 7)})
    [plan] = sess._plans.values()
    steps = [node for node, _ in plan.steps]
    path = memory_chart(plan.memory, plan.info, steps, tmp_path / "plan.png", "the padded U-net at 5 x 7")
    assert path.stat().st_size > 0
    with pytest.raises(ValueError, match="no buffers to draw"):
        memory_chart(SimpleNamespace(buffers=[], peak_bytes=0), {}, [], tmp_path / "empty.png", "empty")
