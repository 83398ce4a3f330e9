"""stage4_models/onnx/passes (chapter 13, "13_inference_compiler": passes): each pass alone on
small graphs built with onnx.helper, the selection and memory plan on a plan's steps, and
float16 storage against float32.

Tolerances: BN folding rounds W * s and (b - mean) * s + beta once each in float32, so the
folded convolution differs from conv-then-BN by a few ulps of each term: over K = 3 x 3 x 4
products, rtol = 1e-5 of the output's scale is ~10x the drift (sqrt(K) eps ~ 7e-7).
float16 stores values with an 11-bit significand (eps 9.8e-4) and computes in float32; each
stored activation is off by half an ulp relative, and a few layers add up to ~1e-3 of the
output's scale, so 1e-2 of that scale (the bound asked for) holds with margin.
"""
import gc
import os
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from stage4_models.onnx import InferenceSession  # noqa: E402
from stage4_models.onnx.importer import import_model  # noqa: E402
from stage4_models.onnx.ir import Node  # noqa: E402
from stage4_models.onnx.passes import canonicalize, eliminate_dead_code, fold_constants, optimize  # noqa: E402
from stage4_models.onnx.passes.measure import measure_costs  # noqa: E402
from stage4_models.onnx.passes.memory import plan_memory  # noqa: E402
from stage4_models.onnx.passes.select import select  # noqa: E402
from .test_stage4_onnx import padded_unet_model  # noqa: E402

pytestmark = pytest.mark.stage4
DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def _model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _ops(graph):
    return [n.op_type for n in graph.nodes]


def _time_ratio(small, large, rounds=3):
    """How many times longer large() takes than small(): the fastest of ``rounds`` runs of
    each, taken in turns (so a busy moment of a shared machine slows both), the garbage
    collector paused (its sweeps over every object alive are noise, not the code's cost)."""
    gc.collect()
    gc.disable()
    try:
        times = {small: [], large: []}
        for _ in range(rounds):
            for fn in (small, large):
                start = time.perf_counter()
                fn()
                times[fn].append(time.perf_counter() - start)
        return min(times[large]) / min(times[small])
    finally:
        gc.enable()


def _both(model, feeds):
    """The outputs with and without the passes."""
    data = model.SerializeToString()
    return InferenceSession(data, optimize=False).run(None, feeds), InferenceSession(data).run(None, feeds)


# ---- canonicalize ------------------------------------------------------------------------------------
def _conv_bn_model(bias=True):
    rng = np.random.default_rng(0)
    inits = [("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
             ("scale", rng.uniform(0.5, 2, 4).astype(np.float32)), ("beta", rng.standard_normal(4).astype(np.float32)),
             ("mean", rng.standard_normal(4).astype(np.float32)), ("var", rng.uniform(0.1, 3, 4).astype(np.float32))]
    if bias:
        inits.append(("b", rng.standard_normal(4).astype(np.float32)))
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["y"], epsilon=1e-3)]
    return _model(nodes, [("x", [1, 3, 6, 5])], ["y"], inits)


@pytest.mark.parametrize("bias", [True, False])
def test_batch_norm_folds_into_the_conv(bias):
    model = _conv_bn_model(bias)
    graph, changes = canonicalize(import_model(model))
    assert _ops(graph) == ["Conv"] and graph.nodes[0].outputs == ["y"] and "folded" in changes[0]
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 5)).astype(np.float32)
    [plain], [folded] = _both(model, {"x": x})
    np.testing.assert_allclose(folded, plain, rtol=0, atol=1e-5 * np.abs(plain).max())


def test_batch_norm_stays_when_the_conv_output_is_read_elsewhere():
    model = _conv_bn_model()
    model.graph.node.append(helper.make_node("Relu", ["c"], ["r"]))
    model.graph.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, None))
    graph, _ = canonicalize(import_model(model))
    assert _ops(graph) == ["Conv", "BatchNormalization", "Relu"]


def _slices(opset):
    if opset < 10:
        nodes = [helper.make_node("Slice", ["x"], ["a"], starts=[1], ends=[5], axes=[2]),
                 helper.make_node("Slice", ["a"], ["b"], starts=[0], ends=[3], axes=[3]),
                 helper.make_node("Slice", ["b"], ["y"], starts=[1], ends=[100], axes=[2])]
        return _model(nodes, [("x", [2, 3, 6, 7])], ["y"], opset=opset)
    nodes = [helper.make_node("Slice", ["x", "s1", "e1", "a1"], ["a"]),
             helper.make_node("Slice", ["a", "s2", "e2", "a2", "t2"], ["b"]),
             helper.make_node("Slice", ["b", "s1", "e1", "a1"], ["y"])]
    i64 = np.int64
    inits = [("s1", np.array([1], i64)), ("e1", np.array([5], i64)), ("a1", np.array([2], i64)),
             ("s2", np.array([0], i64)), ("e2", np.array([3], i64)), ("a2", np.array([3], i64)),
             ("t2", np.array([1], i64))]
    return _model(nodes, [("x", [2, 3, 6, 7])], ["y"], inits, opset)


@pytest.mark.parametrize("opset", [9, 13])
def test_consecutive_slices_merge(opset):
    model = _slices(opset)
    graph, changes = canonicalize(import_model(model))
    assert _ops(graph) == ["Slice"] and len(changes) == 2
    x = np.arange(2 * 3 * 6 * 7, dtype=np.float32).reshape(2, 3, 6, 7)
    [plain], [merged] = _both(model, {"x": x})
    expected = x[:, :, 1:5, 0:3][:, :, 1:100]
    assert np.array_equal(plain, expected) and np.array_equal(merged, expected)


def _pads(first_mode="edge", second_mode="edge"):
    nodes = [helper.make_node("Pad", ["x", "p1"], ["a"], mode=first_mode),
             helper.make_node("Pad", ["a", "p2"], ["y"], mode=second_mode)]
    inits = [("p1", np.array([0, 0, 1, 0, 0, 0, 0, 2], np.int64)), ("p2", np.array([0, 0, 0, 3, 0, 0, 1, 0], np.int64))]
    return _model(nodes, [("x", [1, 2, 3, 4])], ["y"], inits)


@pytest.mark.parametrize("mode", ["edge", "constant"])
def test_consecutive_pads_merge(mode):
    model = _pads(mode, mode)
    graph, _ = canonicalize(import_model(model))
    assert _ops(graph) == ["Pad"]
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 4)).astype(np.float32)
    [plain], [merged] = _both(model, {"x": x})
    expected = np.pad(x, ((0, 0), (0, 0), (1, 1), (3, 2)), mode=mode)
    assert np.array_equal(plain, expected) and np.array_equal(merged, expected)


def test_pads_of_different_modes_stay_apart():
    graph, _ = canonicalize(import_model(_pads("edge", "constant")))
    assert _ops(graph) == ["Pad", "Pad"]


def test_identity_and_inference_dropout_are_dropped():
    nodes = [helper.make_node("Identity", ["x"], ["i"]), helper.make_node("Relu", ["i"], ["r"]),
             helper.make_node("Dropout", ["r"], ["y"]),                         # y is a graph output
             helper.make_node("Dropout", ["r"], ["d", "mask"]), helper.make_node("Cast", ["mask"], ["m"], to=1)]
    model = _model(nodes, [("x", [2, 3])], ["y", "m"])
    graph, _ = canonicalize(import_model(model))
    # the Relu writes y itself; the Dropout whose mask is read stays
    assert _ops(graph) == ["Relu", "Dropout", "Cast"] and graph.nodes[0].inputs == ["x"] \
        and graph.nodes[0].outputs == ["y"]
    x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    (y0, m0), (y1, m1) = _both(model, {"x": x})
    assert np.array_equal(y1, np.maximum(x, 0)) and np.array_equal(y0, y1) and np.all(m1 == 1)


# ---- constant folding and DCE ---------------------------------------------------------------------------
def test_nodes_of_constants_fold_and_dead_code_goes():
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["w"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
             helper.make_node("Mul", ["x", "w"], ["y"]),
             helper.make_node("Sigmoid", ["x"], ["unused"]), helper.make_node("Add", ["unused", "k"], ["unused2"])]
    model = _model(nodes, [("x", [2, 3]), ("z", [1])], ["y"], [("shape", np.array([2, 3], np.int64)),
                                                              ("k", np.ones((2, 3), np.float32))])
    graph, _ = fold_constants(import_model(model))
    assert _ops(graph) == ["Mul", "Sigmoid", "Add"] and np.array_equal(graph.constants["w"], np.full((2, 3), 0.5))
    graph, changes = eliminate_dead_code(graph)
    assert _ops(graph) == ["Mul"] and "k" not in graph.constants and len(changes) == 3
    assert [v.name for v in graph.inputs] == ["x", "z"]           # the caller still feeds z
    sess = InferenceSession(model.SerializeToString())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    [y] = sess.run(None, {"x": x, "z": np.zeros(1, np.float32)})
    assert np.array_equal(y, x * 0.5)
    record = sess.explain()
    assert [p["pass"] for p in record["passes"]] == ["fold", "canonicalize", "dce", "specialize"]
    assert (record["nodes_imported"], record["nodes"]) == (4, 1)


def test_folding_keeps_a_scalar_a_scalar():
    nodes = [helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(np.array(3, np.int64))),
             helper.make_node("Constant", [], ["f"], value=numpy_helper.from_array(np.array(2.0, np.float32))),
             helper.make_node("Mul", ["x", "f"], ["y"])]
    graph, _ = fold_constants(import_model(_model(nodes, [("x", [2])], ["y"])))
    assert graph.constants["s"].shape == () and graph.constants["s"] == 3 and graph.constants["f"].shape == ()


# ---- selection: the supergraph's cheapest path ------------------------------------------------------------
def _conv_relu_model(hw=(8, 8)):
    rng = np.random.default_rng(4)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    inits = [("w", rng.standard_normal((8, 3, 3, 3)).astype(np.float32)), ("b", rng.standard_normal(8).astype(np.float32))]
    return _model(nodes, [("x", [1, 3, *hw])], ["y"], inits)


def _plan(sess, feeds):
    sess.run(None, feeds)
    [plan] = sess._plans.values()
    return plan


def test_conv_bias_relu_uses_the_fused_kernel_on_the_lazy_device_and_cpu():
    """The lazy device's epilogue fuses them; device cpu's conv_bands where its bands are
    wide (FUSE_MIN_POSITIONS output positions: 32 x 32 is, 8 x 8 is not); the python
    device has neither."""
    model = _conv_relu_model().SerializeToString()
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    lazy = InferenceSession(model, device="cpu:lazy")
    plan = _plan(lazy, {"x": x})
    assert plan.schedule.kernels() == ["conv_bias_relu", "pool"]
    assert _plan(InferenceSession(model), {"x": x}).schedule.kernels() == ["conv", "relu", "pool"]
    large = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    large_model = _conv_relu_model((32, 32)).SerializeToString()
    cpu = InferenceSession(large_model)
    assert _plan(cpu, {"x": large}).schedule.kernels() == ["conv_bias_relu", "pool"]
    [expected] = InferenceSession(large_model, optimize=False).run(None, {"x": large})
    assert np.array_equal(cpu.run(None, {"x": large})[0], expected)          # conv_bands: the same bits
    eager = _plan(InferenceSession(model, device="python"), {"x": x})
    assert eager.schedule.kernels() == ["conv", "relu", "pool"]
    # the fused edge skips writing the conv's output and reading it back: 2 x 8 x 8 x 8 floats
    assert eager.schedule.bytes_moved - plan.schedule.bytes_moved == 2 * 8 * 8 * 8 * 4
    # a measured-cost table that finds the fused kernel slow turns the path away from it
    steps = [node for node, _ in plan.steps]
    slow = select(steps, plan.info, plan.outputs, "cpu:lazy", measured={"conv_bias_relu": 10.0})
    assert slow.kernels() == ["conv", "relu", "pool"]
    assert {(i, j, k) for i, j, k, _ in plan.schedule.edges} >= {(0, 2, "conv_bias_relu"), (0, 1, "conv"),
                                                                  (1, 2, "relu"), (2, 3, "pool")}
    [y] = lazy.run(None, {"x": x})
    [expected] = InferenceSession(model, optimize=False).run(None, {"x": x})
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="non-negative finite numbers"):
        select(steps, plan.info, plan.outputs, "cpu", measured={"conv": -1})


def test_a_measured_cost_table_weighs_the_edges():
    model = _conv_relu_model().SerializeToString()
    x = np.random.default_rng(9).standard_normal((1, 3, 8, 8)).astype(np.float32)
    table = measure_costs(InferenceSession(model), {"x": x}, repeats=1)
    assert set(table) == {"conv", "relu", "pool", "*"} and all(0 < v < 1 for v in table.values())
    sess = InferenceSession(model, measured_costs=table)
    plan = _plan(sess, {"x": x})
    assert plan.schedule.kernels() == ["conv", "relu", "pool"]
    assert plan.schedule.choices[0].cost == pytest.approx(plan.schedule.choices[0].bytes * table["conv"])
    [expected] = InferenceSession(model, optimize=False).run(None, {"x": x})
    assert np.array_equal(sess.run(None, {"x": x})[0], expected)
    with pytest.raises(ValueError, match="optimize=False"):
        measure_costs(InferenceSession(model, optimize=False), {"x": x})


# ---- memory plan ----------------------------------------------------------------------------------------
def _check_placement(memory):
    """No two buffers alive at one step share a byte."""
    for i, a in enumerate(memory.buffers):
        for b in memory.buffers[i + 1:]:
            if a.start <= b.end and b.start <= a.end:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)


def test_memory_plan_reuses_buffers_and_writes_the_concat_in_place():
    x = np.random.default_rng(6).standard_normal((1, 2, 6, 8)).astype(np.float32)
    sess = InferenceSession(padded_unet_model().SerializeToString())
    plan = _plan(sess, {"x": x})
    memory = plan.memory
    _check_placement(memory)
    # the skip connection (Conv and Relu, one conv_bands call) and the upsampled path (the
    # Resize, through interpolate_into) are written into the Concat's buffer: it moves nothing
    relu, resize, concat = (next(n.name for n, _ in plan.steps if n.outputs == [v]) for v in ("r1", "u1", "cat"))
    lines = [("r1", f"written in place by conv_bias_relu ({relu})"),
             ("u1", f"written in place by resize ({resize})")]
    assert plan.writes.report == {concat: lines}
    assert "concat" not in plan.schedule.kernels() and memory.in_place == [concat]
    [choice] = [c for c in plan.schedule.choices if c.kernel == "concat_in_place"]
    assert choice.bytes == 0
    assert memory.live_peak_bytes <= memory.peak_bytes < memory.naive_bytes
    # r1 and u1 live in the concat's buffer: without it the plan needs more
    steps = [node for node, _ in plan.steps]
    copied = plan_memory(steps, plan.info, plan.outputs, None)
    _check_placement(copied)
    assert memory.peak_bytes < copied.peak_bytes
    [entry] = sess.explain()["plans"]
    assert entry["memory"]["peak_bytes"] == memory.peak_bytes and len(entry["buffers"]) == len(memory.buffers)
    assert max(offset + size for _, _, _, offset, size in entry["buffers"]) == memory.peak_bytes
    assert entry["concats"] == {concat: [f"{value}: {how}" for value, how in lines]}
    [cat] = [b for b in memory.buffers if b.name == "cat"]
    assert sorted(cat.members) == [("cat", 0), ("r1", 0), ("u1", 3 * 6 * 8 * 4)]


def test_memory_plan_time_grows_linearly_along_a_chain():
    """Each buffer is placed against the buffers alive beside it only, found in a tree of
    lifetimes, and a run of views is walked once: along a chain (a Relu, half the steps views
    of its output, then Relus) 16x the steps take some 16x the time (more as the data leaves
    the caches), far below a quadratic planner's 256x."""
    def chain(n):
        steps = [Node("Relu", ["x"], ["v0"], name="n0")]
        steps += [Node("Reshape" if i < n // 2 else "Relu", [f"v{i - 1}"], [f"v{i}"], name=f"n{i}")
                  for i in range(1, n)]
        return steps, {f"v{i}": ((16,), 4) for i in range(n)}, [f"v{n - 1}"]
    small, large = chain(500), chain(8000)
    memory = plan_memory(*small)
    assert len(memory.buffers) == 251 and memory.peak_bytes == memory.live_peak_bytes == 2 * 64
    ratio = _time_ratio(lambda: plan_memory(*small), lambda: plan_memory(*large))
    assert ratio < 100, ratio


def _rewritable_chain(blocks):
    """A chain of ``blocks`` times every canonicalization: an Identity, a Conv and its
    BatchNormalization, two Slices, two Pads; then a Dropout writing the output."""
    nodes, value = [], "x"
    for i in range(blocks):
        v = [f"b{i}_{k}" for k in range(7)]
        nodes += [helper.make_node("Identity", [value], [v[0]]), helper.make_node("Conv", [v[0], "w"], [v[1]]),
                  helper.make_node("BatchNormalization", [v[1], "s", "b", "m", "v"], [v[2]]),
                  helper.make_node("Slice", [v[2], "zero", "end"], [v[3]]),
                  helper.make_node("Slice", [v[3], "zero", "end"], [v[4]]),
                  helper.make_node("Pad", [v[4], "pads"], [v[5]], mode="edge"),
                  helper.make_node("Pad", [v[5], "pads"], [v[6]], mode="edge")]
        value = v[6]
    nodes.append(helper.make_node("Dropout", [value], ["y"]))
    inits = [("w", np.ones((1, 1, 1, 1), np.float32)), ("zero", np.array([0])), ("end", np.array([2 ** 62])),
             ("pads", np.zeros(8, np.int64))] + [(k, np.ones(1, np.float32)) for k in "sbmv"]
    return _model(nodes, [("x", [1, 1, 2, 2])], ["y"], inits)


def test_graph_passes_time_grows_linearly_along_a_chain():
    """Each rewrite walks the nodes once and asks an Index (passes/edit.py) who writes and
    reads a value, and for fresh names, where asking the whole graph at every node made the
    passes quadratic: 16x the nodes take some 16x the time, far below 256x."""
    small, large = import_model(_rewritable_chain(20)), import_model(_rewritable_chain(320))
    graph, records, _ = optimize(small)
    assert len(small.nodes) == 141 and _ops(graph) == ["Conv", "Slice", "Pad"] * 20 and graph.nodes[-1].outputs == ["y"]
    assert [(r.nodes_before, r.nodes_after) for r in records[:2]] == [(141, 141), (141, 60)]
    ratio = _time_ratio(lambda: optimize(small), lambda: optimize(large))
    assert ratio < 100, ratio


def test_memory_plans_of_random_graphs_never_overlap():
    """Random DAGs of steps (views and concats among them): buffers alive at one step never
    share a byte; the peak lies between the lower bound and the naive sum."""
    from stage4_models.onnx.ir import Node
    from stage4_models.onnx.passes.select import Choice, Schedule
    rng = np.random.default_rng(11)
    for _ in range(40):
        names, steps, info, choices = ["x"], [], {"x": ((4,), 4)}, []
        for i in range(int(rng.integers(3, 15))):
            op = str(rng.choice(["Relu", "Add", "Reshape", "Concat"]))
            k = 2 if op in ("Add", "Concat") else 1
            inputs = [str(v) for v in rng.choice(names, size=min(k, len(names)), replace=False)]
            out = f"v{i}"
            steps.append(Node(op, inputs, [out], {"axis": 0}, name=f"n{i}"))
            info[out] = ((sum(info[v][0][0] for v in inputs) if op == "Concat" else int(rng.integers(1, 50)),), 4)
            choices.append(Choice("concat_in_place" if op == "Concat" and "x" not in inputs and rng.random() < 0.7
                                  else op.lower(), [f"n{i}"], 0, 0))
            names.append(out)
        # one buffer per value: a value two in-place concats read is copied by the later one
        held = set()
        for c, node in zip(choices, steps):
            if c.kernel == "concat_in_place":
                if held.isdisjoint(node.inputs):
                    held.update(node.inputs)
                else:
                    c.kernel = "concat"
        memory = plan_memory(steps, info, [names[-1]], Schedule(choices))
        _check_placement(memory)
        assert memory.live_peak_bytes <= memory.peak_bytes <= memory.naive_bytes


# ---- float16 ----------------------------------------------------------------------------------------------
def _random_conv_net():
    rng = np.random.default_rng(7)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"]), helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    inits = [("w1", rng.standard_normal((16, 3, 3, 3)) * 0.3), ("b1", rng.standard_normal(16) * 0.1),
             ("w2", rng.standard_normal((32, 16, 3, 3)) * 0.1), ("b2", rng.standard_normal(32) * 0.1),
             ("w3", rng.standard_normal((10, 32)) * 0.3), ("b3", rng.standard_normal(10) * 0.1)]
    inits = [(n, a.astype(np.float32)) for n, a in inits]
    return _model(nodes, [("x", [1, 3, 16, 16])], ["y"], inits)


def _half_against_single(data, x):
    feeds = {InferenceSession(data).get_inputs()[0].name: x}
    single, half = InferenceSession(data), InferenceSession(data, dtype="float16")
    [a], [b] = single.run(None, feeds), half.run(None, feeds)
    assert b.dtype == np.float32 and np.all(np.isfinite(b))
    assert np.abs(a - b).max() <= 1e-2 * np.abs(a).max()
    [p32], [p16] = single._plans.values(), half._plans.values()
    return p32, p16


@pytest.mark.parametrize("make", [_random_conv_net, padded_unet_model])
def test_float16_is_within_1e_2_and_halves_the_memory_plan(make):
    x = np.random.default_rng(8).standard_normal((1, 3 if make is _random_conv_net else 2, 16, 16)).astype(np.float32)
    p32, p16 = _half_against_single(make().SerializeToString(), x)
    assert p16.memory.peak_bytes * 2 == p32.memory.peak_bytes and not p16.widened


@pytest.mark.parametrize("name", ["shufflenet", "squeezenet"])
def test_float16_on_light_models(name):
    """shufflenet fits float16's range; squeezenet's generated weights grow activations past
    65504 (to 1e10): the nodes that overflow store float32 and the output stays finite."""
    n = 3 * 224 * 224
    x = (np.arange(n, dtype=np.float32) / n).reshape(1, 3, 224, 224)
    with open(os.path.join(DATA, "light", f"light_{name}.onnx"), "rb") as f:
        data = f.read()
    p32, p16 = _half_against_single(data, x)
    _check_placement(p32.memory)
    # squeezenet's Concats join two Conv+Relu (all written in place); shufflenet's join a
    # Conv with an AveragePool (copied)
    assert bool(p32.memory.in_place) == (name == "squeezenet")
    assert p32.memory.peak_bytes < p32.memory.naive_bytes / 4
    assert bool(p16.widened) == (name == "squeezenet")
    assert p16.memory.peak_bytes * 2 == p32.memory.peak_bytes


def test_bfloat16_storage_returns_float32():
    """bfloat16 keeps 8 significand bits (eps 7.8e-3): a few layers stay within 5e-2 of the scale."""
    x = np.random.default_rng(10).standard_normal((1, 3, 16, 16)).astype(np.float32)
    data = _random_conv_net().SerializeToString()
    [a], [b] = InferenceSession(data).run(None, {"x": x}), InferenceSession(data, dtype="bfloat16").run(None, {"x": x})
    assert b.dtype == np.float32 and 0 < np.abs(a - b).max() <= 5e-2 * np.abs(a).max()


def test_session_options_are_checked():
    data = _conv_relu_model().SerializeToString()
    with pytest.raises(TypeError, match="optimize must be True or False"):
        InferenceSession(data, optimize="yes")
    plain = InferenceSession(data, optimize=False)
    x = np.zeros((1, 3, 8, 8), np.float32)
    plain.run(None, {"x": x})
    record = plain.explain()
    assert record["passes"] == [] and "kernels" not in record["plans"][0]
