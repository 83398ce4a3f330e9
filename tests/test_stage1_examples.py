"""The chapter 3 examples reproduce what they claim; the benchmark's baseline is a real
engine (it computes the same gradients as stage1)."""
import importlib.util
import random
from pathlib import Path

import pytest

from stage1_scalargrad import nn
from stage1_scalargrad.examples import bobnet, chain

pytestmark = pytest.mark.stage1


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEGRAD_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("TRACEGRAD_LOGS", str(tmp_path / "logs"))
    return tmp_path


def test_chain_prints_the_thesis_gradients(workspace, capsys):
    chain.main()
    values = chain.run()
    assert {k: v.grad for k, v in values.items()} == chain.THESIS_GRADS
    assert "grad=133.0842586675095" in capsys.readouterr().out


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_bobnet_full_run_reaches_the_thesis_result(workspace, capsys):
    y_hat = bobnet.main(["--steps", "4000"])
    assert abs(y_hat - bobnet.THESIS_RESULT) < 0.01
    assert abs(y_hat - bobnet.target(0.13)) < 0.03
    out = capsys.readouterr().out
    assert "yHat(0.13) = " in out and "step = 3900, loss = " in out
    for name in ("figures/bobnet_loss.png", "logs/bobnet_loss.csv"):
        assert (workspace / name).stat().st_size > 0
    lines = (workspace / "logs/bobnet_loss.csv").read_text().splitlines()
    assert lines[0] == "step,loss" and len(lines) == 4001


def test_bobnet_graph_names_its_parameters():
    model, _ = bobnet.train(steps=3, show=False)
    graph = bobnet.draw_graph(model)
    for name in ("x", "yHat", "w1", "b1", "w2", "b2"):
        assert f"{{ {name} | data " in graph.source
    assert "grad 1 }" in graph.source                   # d yHat / d yHat, the training grads cleared


def test_bobnet_loss_falls():
    _, losses = bobnet.train(steps=600, show=False)
    assert sum(losses[-50:]) < 0.35 * sum(losses[:50])      # measured: about 0.21


def load_benchmark():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "stage1_scalar.py"
    spec = importlib.util.spec_from_file_location("stage1_scalar_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_baseline_computes_the_same_gradients():
    bench = load_benchmark()
    rng = random.Random(0)
    xs = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(10)]
    ys = [rng.choice([-1.0, 1.0]) for _ in xs]
    ours = nn.MLP(2, [4, 4, 1], seed=0)
    theirs = bench.MicroMLP(2, [4, 4, 1])
    # Give both the same weights: micrograd keeps (weights, bias) per neuron.
    linears = [m for m in ours.layers if isinstance(m, nn.Linear)]
    for layer, neurons in zip(linears, theirs.layers):
        for row, b, (w, mb) in zip(layer.weight, layer.bias, neurons):
            for ours_w, their_w in zip(row, w):
                their_w.data = ours_w.data
            mb.data = b.data
    bench.step_stage1(ours, xs, ys)
    bench.step_micrograd(theirs, xs, ys)
    for layer, neurons in zip(linears, theirs.layers):
        for row, (w, _) in zip(layer.weight, neurons):
            for ours_w, their_w in zip(row, w):
                # stage1's loss is the mean over the batch, micrograd-style's the sum
                assert ours_w.grad == pytest.approx(their_w.grad / len(xs), rel=1e-9, abs=1e-12)
