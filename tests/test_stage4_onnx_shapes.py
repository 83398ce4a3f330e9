"""Symbolic shape inference at import (stage4_models/onnx/inference, chapter 13,
"13_inference_compiler": symbolic shapes): every value's shape is an expression of the input
dims, checked against the shapes a real run computes at many sizes; the unpadded U-net's
Concat is refused at import with the failed proof; the padded one runs at every size; the
plan's memory per step is an expression equal to the bytes the plan really holds.

Shapes are integers: every comparison here is exact. The sessions run the graph as imported
(optimize=False), whose every value inference describes; the passes' graphs are
tests/test_stage4_onnx_passes.py's.
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from hypothesis import given, settings, strategies as st  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import stage2_tensor as tg  # noqa: E402
from stage4_models.onnx import InferenceSession  # noqa: E402
from stage4_models.onnx.inference.values import is_unknown  # noqa: E402
from stage4_models.onnx.operators import OPERATORS  # noqa: E402
from stage4_models.onnx.operators.host import HostTensor  # noqa: E402
from stage4_models.onnx.plan import _apply  # noqa: E402
from stage4_models.onnx.symbolic import Dim, evaluate  # noqa: E402
from tests.test_stage4_onnx import padded_unet_model, torch_unets  # noqa: E402,F401  (a fixture)

pytestmark = pytest.mark.stage4
H, W, N = Dim("H"), Dim("W"), Dim("N")


def _run_every_node(sess, feeds):
    """name -> the value a run computes, for every value (the plan keeps only its outputs)."""
    env = dict(sess._constants)
    env.update({v.name: sess._feed(v, feeds[v.name]) for v in sess.graph.inputs})
    with tg.no_grad():
        for node in sess.graph.nodes:
            _apply(OPERATORS[node.op_type], sess.ctx, node, env)
    return env


def _check_every_value(sess, feeds):
    """Each value's inferred shape, evaluated at the fed sizes, is the shape the run gives
    it; each shape-arithmetic value is the one the host computed."""
    at = sess.inference.bind({name: x.shape for name, x in feeds.items()})
    env = _run_every_node(sess, feeds)
    checked = 0
    for name, sym in sess.inference.syms.items():
        if name not in env or name in sess._constants:
            continue
        assert sym.shape is not None and not any(is_unknown(d) for d in sym.shape), name
        assert tuple(evaluate(d, at) for d in sym.shape) == tuple(env[name].shape), name
        if sym.value is not None and isinstance(env[name], HostTensor):
            assert [evaluate(v, at) for v in sym.value.reshape(-1)] == env[name].values, name
        checked += 1
    return checked


def _unpadded_unet_model():
    """The padded U-net without its Pad and Slice: conv, pool, upsample, concat with the skip."""
    padded = padded_unet_model()
    nodes = [n for n in padded.graph.node if n.op_type in ("Conv", "Relu", "MaxPool", "Resize", "Concat")
             and n.output[0] not in ("pads_raw", "pads")]
    nodes[0].input[0] = "x"
    nodes[-1].output[0] = "y"
    inits = [t for t in padded.graph.initializer if t.name in ("w1", "w2", "scales")]
    graph = helper.make_graph(nodes, "unet", list(padded.graph.input),
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1, "H", "W"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


# ---- the seed's two U-nets ---------------------------------------------------------------------------
def test_padded_unet_shapes_are_expressions_of_the_input_dims():
    sess = InferenceSession(padded_unet_model().SerializeToString(), optimize=False)
    inf = sess.inference
    assert inf.fallbacks == []
    assert list(inf.syms["pads"].value) == [0, 0, 0, 0, 0, 0, H % 2, W % 2]    # (2 - H % 2) % 2, canonical
    Hp, Wp = H + H % 2, W + W % 2
    assert inf.shape("xp") == (N, 2, Hp, Wp)
    assert inf.shape("p1") == (N, 3, Hp // 2, Wp // 2)
    assert [str(d) for d in inf.shape("u1")] == ["N", "3", "2*((H + H % 2) // 2)", "2*((W + W % 2) // 2)"]
    assert inf.shape("cat") == (N, 6, Hp, Wp)       # the Concat's proof: 2*((H + H % 2) // 2) == H + H % 2
    (where_h, proof_h), (where_w, _) = inf.proofs                 # the two the canonical forms did not show
    assert where_h == "Concat (opset 13) node '#12', dim 2" and where_w.endswith("dim 3")
    assert proof_h.proven and "case analysis over H = 2*H__q + r: all 2 cases" in proof_h.explain()
    assert inf.shape("y") == (N, 1, H, W) and sess.graph.outputs[0].sym_shape == (N, 1, H, W)
    table = sess.shapes()
    assert "cat: (N, 6, H + H % 2, W + W % 2)  (Concat)" in table and "pads: (8) = [0, 0, 0, 0, 0, 0, H % 2" in table


@pytest.mark.parametrize("hw", [(1, 1), (5, 7), (2, 9), (8, 6)])
def test_padded_unet_every_value_as_the_run_computes_it(hw):
    sess = InferenceSession(padded_unet_model().SerializeToString(), optimize=False)
    x = np.random.default_rng(0).standard_normal((2, 2, *hw)).astype(np.float32)
    assert _check_every_value(sess, {"x": x}) == 16     # x and the 15 nodes' outputs
    assert sess.run(None, {"x": x})[0].shape == (2, 1, *hw)


def test_unpadded_unet_is_refused_at_import_naming_the_concat_and_both_extents():
    model = _unpadded_unet_model()
    with pytest.raises(ValueError, match=r"Concat \(opset 13\) node '#4', dim 2: cannot prove the extents "
                                         r"H and 2\*\(H // 2\) equal for every input \(disproven: "
                                         r"counterexample \{'H': 1\}"):
        InferenceSession(model.SerializeToString(), optimize=False)
    # with static even extents the same network is proven, and runs
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 6
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = 4
    sess = InferenceSession(model.SerializeToString(), optimize=False)
    assert sess.inference.shape("y") == (N, 1, 6, 4)


def test_torch_exported_unets(torch_unets):  # noqa: F811  (the fixture imported above)
    """The 73-node padded export: all of its shape arithmetic evaluated on expressions, every
    value's shape right at 1x1, odd and larger sizes; the plain export refused at import."""
    torch, unets = torch_unets
    sess = InferenceSession(unets[True][1], optimize=False)
    assert sess.inference.fallbacks == []
    assert sess.graph.outputs[0].sym_shape == (1, 1, H, W)
    assert sess.inference.shape("/Concat_3_output_0") == (1, 12, H + H % 2, W + W % 2)
    peak, per_step = sess.memory()
    for hw in [(1, 1), (5, 7), (9, 4)]:
        x = np.random.default_rng(1).standard_normal((1, 1, *hw)).astype(np.float32)
        assert _check_every_value(sess, {"x": x}) > 60
        sess._plans.clear()
        replayed, measured = _measured_live_bytes(sess, {"x": x})      # the shape arithmetic: no step
        assert [node.op_type for node, _ in per_step] == replayed and len(replayed) == 11
        assert [evaluate(b, {"H": hw[0], "W": hw[1]}) for _, b in per_step] == measured
        assert evaluate(peak, {"H": hw[0], "W": hw[1]}) == max(measured)
    with pytest.raises(ValueError, match=r"Concat.*'/Concat'.*extents H and 2\*\(H // 2\)"):
        InferenceSession(unets[False][1], optimize=False)


# ---- one operator at a time ---------------------------------------------------------------------------
def _session(nodes, inputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
                              list(inits))
    return InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
                            .SerializeToString(), optimize=False)


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


@st.composite
def _window(draw):
    k = draw(st.integers(1, 4))
    attrs = {"kernel_shape": [k, k], "strides": [draw(st.integers(1, 3))] * 2}
    pad = draw(st.sampled_from(["explicit", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if pad == "explicit":
        attrs["pads"] = [draw(st.integers(0, k - 1)) for _ in range(4)]     # unequal, over half the kernel
    else:
        attrs["auto_pad"] = pad
    return attrs


@settings(max_examples=40, deadline=None)
@given(conv=_window(), pool=_window(), ceil_mode=st.booleans(), dilation=st.integers(1, 2),
       pool_dilation=st.integers(1, 2),
       sizes=st.lists(st.tuples(st.integers(1, 13), st.integers(1, 13)), min_size=3, max_size=3))
def test_conv_pool_chain_formulas_against_the_run(conv, pool, ceil_mode, dilation, pool_dilation, sizes):
    """Conv (pads, strides, dilations, auto_pad), MaxPool (ceil_mode), ConvTranspose and
    AveragePool: the formulas, evaluated, are the extents of a real run at many sizes."""
    if conv.get("auto_pad", "").startswith("SAME"):
        dilation = 1
    k = conv["kernel_shape"][0]
    w = numpy_helper.from_array(np.ones((2, 1, k, k), np.float32), "w")
    wt = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "wt")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], dilations=[dilation] * 2, **conv),
             helper.make_node("MaxPool", ["c"], ["p"], ceil_mode=int(ceil_mode), dilations=[pool_dilation] * 2,
                              **pool),
             helper.make_node("ConvTranspose", ["p", "wt"], ["t"], strides=[2, 2], pads=[1, 0, 0, 1],
                              output_padding=[1, 0]),
             helper.make_node("AveragePool", ["t"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)]
    sess = _session(nodes, [("x", TensorProto.FLOAT, [1, 1, "H", "W"])], [w, wt])
    assert sess.inference.fallbacks == []
    for hw in sizes:
        x = np.zeros((1, 1, *hw), np.float32)
        at = {"H": hw[0], "W": hw[1]}
        try:
            env = _run_every_node(sess, {"x": x})
        except ValueError:          # a window larger than the input: the run refuses it
            continue
        for name in ("c", "p", "t", "y"):
            assert tuple(evaluate(d, at) for d in sess.inference.shape(name)) == tuple(env[name].shape), name


def test_shape_subgraph_feeds_a_reshape_with_expressions():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: (N, C*H*W) from expressions; a
    Slice with negative and INT64_MAX bounds clamps symbolically; Resize by 0.5 floors;
    Split, DepthToSpace, ReduceMean and Flatten follow."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "first"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["cut"]),
             helper.make_node("Resize", ["cut", "", "half"], ["small"], mode="nearest",
                              coordinate_transformation_mode="asymmetric"),
             helper.make_node("Split", ["small"], ["a", "b"], axis=1),
             helper.make_node("DepthToSpace", ["x"], ["d2s"], blocksize=2),
             helper.make_node("ReduceMean", ["d2s"], ["m"], axes=[2], keepdims=0),
             helper.make_node("Flatten", ["m"], ["y"], axis=2)]
    inits = [_i64("first", 0), _i64("zero", [0]), _i64("minus1", [-1]), _i64("starts", [1, 0]), _i64("ends", [-1, 2 ** 63 - 1]),
             _i64("axes", [2, 3]), numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "half")]
    sess = _session(nodes, [("x", TensorProto.FLOAT, ["N", 4, "H", "W"])], inits)
    inf = sess.inference
    assert inf.fallbacks == []
    assert inf.shape("flat") == (N, 4 * H * W)
    assert [str(d) for d in inf.shape("cut")] == ["N", "4", "max(0, H - 2)", "W"]
    assert [str(d) for d in inf.shape("small")] == ["N", "4", "(max(0, H - 2)) // 2", "W // 2"]
    assert inf.shape("a") == inf.shape("b") == (N, 2, inf.shape("small")[2], W // 2)
    assert inf.shape("d2s") == (N, 1, 2 * H, 2 * W) and inf.shape("m") == (N, 1, 2 * W) and inf.shape("y") == (N, 2 * W)
    for shape in [(1, 4, 4, 2), (2, 4, 7, 3), (1, 4, 9, 5)]:
        assert _check_every_value(sess, {"x": np.zeros(shape, np.float32)}) == 13     # x and the 12 outputs


def test_broadcast_of_extents_not_provably_equal_nor_1_is_refused():
    with pytest.raises(ValueError, match=r"Add \(opset 13\) node 'mix', broadcasting dim 2.*extents H and W"):
        _session([helper.make_node("Add", ["x", "z"], ["y"], name="mix")],
                 [("x", TensorProto.FLOAT, [1, 2, "H", "W"]), ("z", TensorProto.FLOAT, [1, 2, "W", "H"])])
    sess = _session([helper.make_node("Mul", ["x", "z"], ["y"])],             # 1 broadcasts; equal is equal
                    [("x", TensorProto.FLOAT, ["N", 2, "H", 1]), ("z", TensorProto.FLOAT, [2, 1, "W"])])
    assert sess.inference.shape("y") == (N, 2, H, Dim("W"))


def test_what_cannot_be_inferred_falls_back_to_unknown_dims_and_still_runs():
    """floor(H * 1.7) in float32 has no exact integer expression: the Upsample's spatial dims
    become fresh symbols, the fallback is listed, a Concat with them is left to the run."""
    scales = numpy_helper.from_array(np.array([1, 1, 1.7, 1.7], np.float32), "s")
    sess = _session([helper.make_node("Upsample", ["x", "s"], ["u"], name="odd"),
                     helper.make_node("Concat", ["u", "u"], ["y"], axis=1)],
                    [("x", TensorProto.FLOAT, ["N", 2, "H", "W"])], [scales], opset=9)
    (node, reason), (same, _) = sess.inference.fallbacks           # H and W, each listed
    assert node.name == same.name == "odd" and "1.7" in reason and "binary fraction" in reason
    n, c, h, w = sess.inference.shape("y")
    assert (n, c) == (N, 4) and is_unknown(h) and is_unknown(w) and (str(h), str(w)) == ("?odd#0", "?odd#1")
    [y] = sess.run(None, {"x": np.ones((1, 2, 3, 5), np.float32)})
    assert y.shape == (1, 4, 5, 8)


# ---- memory -------------------------------------------------------------------------------------------
def _measured_live_bytes(sess, feeds):
    """Replays the plan made for feeds, summing after each step the bytes of the inputs and
    step outputs the plan still holds."""
    sess.run(None, feeds)
    [plan] = sess._plans.values()
    env = dict(plan.values)
    env.update({v.name: sess._feed(v, feeds[v.name]) for v in sess.graph.inputs})
    totals = []
    with tg.no_grad():
        for (node, fn), dead in zip(plan.steps, plan._dead_after):
            _apply(fn, sess.ctx, node, env)
            totals.append(sum(v.numel() * v.dtype.itemsize for name, v in env.items() if name not in plan.values))
            for name in dead:
                env.pop(name, None)
    return [node.op_type for node, _ in plan.steps], totals


@pytest.mark.parametrize("hw", [(1, 1), (5, 7), (16, 10)])
def test_plan_memory_is_an_expression_of_the_input_dims(hw):
    sess = InferenceSession(padded_unet_model().SerializeToString(), optimize=False)
    peak, per_step = sess.memory()
    assert str(peak).startswith("max(")         # two steps neither of which provably dominates
    x = np.zeros((3, 2, *hw), np.float32)
    replayed, measured = _measured_live_bytes(sess, {"x": x})
    at = {"N": 3, "H": hw[0], "W": hw[1]}
    assert [node.op_type for node, _ in per_step] == replayed
    assert [evaluate(b, at) for _, b in per_step] == measured
    assert evaluate(peak, at) == max(measured)


def test_plan_memory_time_grows_linearly_along_a_chain():
    """memory() sums the live bytes in one sweep over the steps (a value's bytes join the
    total at its first step and leave after its last): along a chain whose every value is
    a graph output, alive to the end, 16x the steps take some 16x the time, far below the
    256x of summing every value alive at every step."""
    from stage4_models.onnx.importer import import_model
    from stage4_models.onnx.inference import infer
    from stage4_models.onnx.inference.memory import profile
    from tests.test_stage4_onnx_passes import _time_ratio

    def chain(n):
        nodes = [helper.make_node("Add", [f"v{i}", "c"], [f"v{i + 1}"]) for i in range(n)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["N", 4])],
                                  [helper.make_tensor_value_info(f"v{i + 1}", TensorProto.FLOAT, None) for i in range(n)],
                                  [numpy_helper.from_array(np.ones(4, np.float32), "c")])
        imported = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        return imported, infer(imported)
    small, large = chain(100), chain(1600)
    assert [total for _, total in profile(*small)] == [(max(i, 1) + 1) * 16 * N for i in range(100)]
    ratio = _time_ratio(lambda: profile(*small), lambda: profile(*large), rounds=2)
    assert ratio < 100, ratio


# ---- the backend test models --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pytorch-operator", "pytorch-converted"])
def test_every_value_of_the_backend_models_as_the_run_computes_it(kind):
    """The 35 + 82 backend test models (the light ones are checked at their outputs in
    test_stage4_onnx.py): every value's shape and shape-arithmetic value, inferred at
    import, is the run's; no operator fell back."""
    import glob
    import os

    from tests.test_stage4_onnx import DATA, _cases, _tensor
    checked = 0
    for name in _cases(kind):
        folder = os.path.join(DATA, kind, name)
        sess = InferenceSession(os.path.join(folder, "model.onnx"), optimize=False)
        assert sess.inference.fallbacks == [], name
        inputs = [_tensor(p) for p in sorted(glob.glob(os.path.join(folder, "test_data_set_0", "input_*.pb")))]
        checked += _check_every_value(sess, {a.name: x for a, x in zip(sess.get_inputs(), inputs)})
    assert checked > 100


def _light_dynamic(name, dims="NHW"):
    """A light model with its input's batch, height and width made symbolic."""
    import os

    from tests.test_stage4_onnx import DATA
    model = onnx.load(os.path.join(DATA, "light", f"light_{name}.onnx"))
    inits = {t.name for t in model.graph.initializer}
    [x] = [v for v in model.graph.input if v.name not in inits]
    for axis, param in zip((0, 2, 3), dims):
        if param != "-":
            d = x.type.tensor_type.shape.dim[axis]
            d.Clear()
            d.dim_param = param
    return model, x.name


def test_light_squeezenet_at_any_size():
    """Ceil-mode pools, concats of expand branches, global pooling: the output is (N, 1000,
    1, 1) for every N, H, W, and every value's shape is the run's at a size never stored."""
    model, name = _light_dynamic("squeezenet")
    sess = InferenceSession(model.SerializeToString(), optimize=False)
    assert sess.inference.fallbacks == [] and sess.graph.outputs[0].sym_shape == (N, 1000, 1, 1)
    assert _check_every_value(sess, {name: np.zeros((2, 3, 51, 47), np.float32)}) > 60


def test_light_inception_v2_with_dynamic_extents_is_refused_with_the_size_that_breaks_it():
    """Inception v2's pooled branch ((H + 9) // 16) and its strided convolutions' ((H + 1) // 16)
    agree at 224 but not for every H: refused at import; onnxruntime (when installed) accepts
    it and fails at run time on the same node at H = 231, where the two are 15 and 14."""
    model, name = _light_dynamic("inception_v2", "-HW")
    with pytest.raises(ValueError, match=r"Concat \(opset 9\) node 'n161', dim 2: cannot prove the extents "
                                         r"\(H \+ 9\) // 16 and \(H \+ 1\) // 16 equal"):
        InferenceSession(model.SerializeToString(), optimize=False)
    assert ((231 + 9) // 16, (231 + 1) // 16) == (15, 14)
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match=r"n161.*mismatched dimensions of 14 and 15"):
        sess.run(None, {name: np.zeros((1, 3, 231, 231), np.float32)})


def test_untrusted_shape_arithmetic_cannot_stall_the_import():
    """Values are kept up to 64 entries (30 doubling Concats would make 2**30) and an integer
    Pow only up to exponent 64 (2**(10**9) would take the import's memory)."""
    nodes = [helper.make_node("Shape", ["x"], ["v0"])]
    nodes += [helper.make_node("Concat", [f"v{i}", f"v{i}"], [f"v{i + 1}"], axis=0) for i in range(30)]
    nodes += [helper.make_node("Pow", ["two", "huge"], ["p"]), helper.make_node("Relu", ["x"], ["y"])]
    sess = _session(nodes, [("x", TensorProto.FLOAT, ["N", 3])], [_i64("two", [2]), _i64("huge", [10 ** 9])])
    inf = sess.inference
    assert list(inf.syms["v5"].value) == [N, 3] * 32 and inf.syms["v6"].value is None
    assert inf.shape("v30") == (2 ** 31,) and inf.shape("p") == (1,) and inf.syms["p"].value is None


def test_extents_that_grow_without_bound_fall_back():
    """Squaring an extent 12 times would give a polynomial of degree 4096: past 64 terms the
    value is dropped, and a shape built from it falls back to fresh symbols."""
    nodes = [helper.make_node("Shape", ["x"], ["s0"]), helper.make_node("Add", ["s0", "one"], ["v0"])]
    nodes += [helper.make_node("Mul", [f"v{i}", f"v{i}"], [f"v{i + 1}"]) for i in range(12)]
    nodes += [helper.make_node("Pad", ["x", "v12"], ["y"])]
    sess = _session(nodes, [("x", TensorProto.FLOAT, ["N", "C"])], [_i64("one", [1, 1])])
    inf = sess.inference
    assert list(inf.syms["v1"].value) == [N * N + 2 * N + 1, Dim("C") * Dim("C") + 2 * Dim("C") + 1]
    assert inf.syms["v12"].value is None and [n.name for n, _ in inf.fallbacks] == ["#14"]
    assert all(is_unknown(d) for d in inf.shape("y"))


_BOUNDS = st.one_of(st.integers(-12, 12), st.sampled_from([2 ** 63 - 1, -(2 ** 63)]))


@settings(max_examples=40, deadline=None)
@given(start=_BOUNDS, end=_BOUNDS, step=st.sampled_from([-3, -2, -1, 1, 2, 3]),
       pads=st.tuples(st.integers(-1, 3), st.integers(0, 3)), sizes=st.lists(st.integers(2, 11), min_size=3,
                                                                              max_size=3))
def test_slice_and_pad_formulas_against_the_run(start, end, step, pads, sizes):
    """ONNX's clamping of Slice bounds (negative, past the end, INT64_MAX, negative steps)
    and a Pad (negative: cropping), written on a symbolic extent, evaluated at many sizes."""
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"]),
             helper.make_node("Slice", ["p", "starts", "ends", "axes", "steps"], ["y"])]
    inits = [_i64("pads", [0, pads[0], 0, pads[1]]), _i64("starts", [start]), _i64("ends", [end]),
             _i64("axes", [1]), _i64("steps", [step])]
    sess = _session(nodes, [("x", TensorProto.FLOAT, [2, "H"])], inits)
    assert sess.inference.fallbacks == []
    for h in sizes:
        env = _run_every_node(sess, {"x": np.zeros((2, h), np.float32)})
        for name in ("p", "y"):
            assert tuple(evaluate(d, {"H": h}) for d in sess.inference.shape(name)) == tuple(env[name].shape)
