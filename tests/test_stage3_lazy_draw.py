"""Drawing the passes of the lazy graph compiler (stage3_native/lazy/draw.py, chapter 11)."""
import graphviz
import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native  # noqa: F401 - registers device "cpu" and "cpu:lazy"
from stage2_tensor import backend
from stage3_native import lazy
from stage3_native.lazy import draw

pytestmark = pytest.mark.stage3


@pytest.fixture(autouse=True)
def setup(monkeypatch, tmp_path):
    monkeypatch.setenv("TRACEGRAD_KERNEL_CACHE", str(tmp_path / "kernels"))
    with lazy.fusion(min_elements=0), tg.no_grad():
        yield


def test_a_fused_softmax_is_one_cluster():
    x = tg.from_numpy(np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32), device="cpu:lazy")
    e = (x - x.max(-1, keepdim=True).values).exp()
    y = e / e.sum(-1, keepdim=True)
    before = draw.snapshot(y)
    plan = lazy.plan(draw.roots(y), backend.get("cpu"))
    drawing = draw.draw(plan, "fused", before)
    assert isinstance(drawing, graphviz.Digraph)
    source = drawing.source
    assert source.count("subgraph cluster_") == 1 and "loop (8, 64)" in source
    assert "reduce max" in source and "reduce sum" in source
    assert draw.draw(plan, "recorded", before).source.count("->") >= 5


def test_the_argmax_nobody_reads_is_drawn_dead():
    x = tg.from_numpy(np.ones((8, 64), np.float32), device="cpu:lazy")
    values, indices = x.max(-1)
    m = values + 1
    before = draw.snapshot(m, indices)
    argmax = next(n for n in before.nodes if n.op == "reduce" and n.args[0] == "argmax")
    del values, indices
    plan = lazy.plan(draw.roots(m), backend.get("cpu"))
    dead = [line for line in draw.draw(plan, "dead", before).source.splitlines()
            if line.strip().startswith(f"n{argmax.number} [")]
    assert len(dead) == 1 and "gray" in dead[0]
    assert f"n{argmax.number} [" not in draw.draw(plan, "fused", before).source
    assert m.numpy().tolist() == [2.0] * 8
