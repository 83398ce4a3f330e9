"""stage1's nn and optim against hand-written references."""
import math

import numpy as np
import pytest

from stage1_scalargrad import Value, nn, optim

pytestmark = pytest.mark.stage1


def test_linear_init_range_and_seed():
    layer = nn.Linear(16, 8, seed=3)
    k = 1 / math.sqrt(16)
    weights = [w.data for row in layer.weight for w in row] + [b.data for b in layer.bias]
    assert all(-k <= w <= k for w in weights)
    assert max(weights) > 0.8 * k and min(weights) < -0.8 * k      # spread over the interval
    again = nn.Linear(16, 8, seed=3)
    assert [p.data for p in again.parameters()] == [p.data for p in layer.parameters()]
    assert [p.data for p in nn.Linear(16, 8, seed=4).parameters()] != weights


def test_linear_forward_matches_numpy_on_a_batch():
    layer = nn.Linear(3, 2, seed=0)
    W = np.array([[w.data for w in row] for row in layer.weight])
    b = np.array([v.data for v in layer.bias])
    X = np.random.default_rng(0).normal(size=(4, 3))
    out = layer(X.tolist())
    np.testing.assert_allclose([[v.data for v in row] for row in out], X @ W.T + b, rtol=1e-12)


def test_linear_without_bias_and_parameter_count():
    assert len(nn.Linear(4, 3, bias=False, seed=0).parameters()) == 12
    model = nn.MLP(2, [16, 16, 1], seed=0)
    assert len(model.parameters()) == (2 * 16 + 16) + (16 * 16 + 16) + (16 + 1)
    assert [type(m).__name__ for m in model.layers] == ["Linear", "ReLU", "Linear", "ReLU", "Linear"]


def test_parameters_are_found_once_in_nested_modules():
    shared = nn.Linear(2, 2, seed=0)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    assert len(model.parameters()) == 6


def test_module_zero_grad():
    model = nn.MLP(2, [3, 1], seed=0)
    nn.mse_loss(model([[1.0, 2.0]]), [[1.0]]).backward()
    assert any(p.grad != 0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0 for p in model.parameters())


@pytest.mark.parametrize("act, ref", [(nn.ReLU, lambda x: max(x, 0)), (nn.Tanh, math.tanh),
                                      (nn.Sigmoid, lambda x: 1 / (1 + math.exp(-x)))])
def test_activations(act, ref):
    xs = [-1.5, -0.2, 0.3, 2.0]
    assert [v.data for v in act()(xs)] == pytest.approx([ref(x) for x in xs])


def test_mse_loss_value():
    loss = nn.mse_loss([[Value(1.0), Value(2.0)], [Value(0.0), Value(0.0)]], [[0.0, 0.0], [1.0, 1.0]])
    assert loss.data == pytest.approx(((1 + 4) + (1 + 1)) / 2)


def quadratic_grads(p):
    """Gradient of (p - target)^2 summed, through the engine."""
    loss = sum((x - t) ** 2 for x, t in zip(p, [3.0, -1.0]))
    loss.backward()


def run_optimizer(make, steps=25):
    params = [Value(0.5), Value(2.0)]
    opt = make(params)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        quadratic_grads(params)
        opt.step()
        history.append([p.data for p in params])
    return np.array(history)


def reference(update, steps=25):
    """The same descent with PyTorch's update rule written out in numpy."""
    p = np.array([0.5, 2.0])
    state, history = {}, []
    for t in range(1, steps + 1):
        g = 2 * (p - np.array([3.0, -1.0]))
        p = update(p, g, t, state)
        history.append(p.copy())
    return np.array(history)


@pytest.mark.parametrize("momentum, dampening", [(0.0, 0.0), (0.9, 0.0), (0.9, 0.1)])
def test_sgd_matches_pytorch_rule(momentum, dampening):
    lr = 0.05

    def update(p, g, t, s):
        if momentum:
            s["buf"] = g if t == 1 else momentum * s["buf"] + (1 - dampening) * g
            g = s["buf"]
        return p - lr * g

    got = run_optimizer(lambda ps: optim.SGD(ps, lr=lr, momentum=momentum, dampening=dampening))
    np.testing.assert_allclose(got, reference(update), rtol=1e-12)


def test_adam_matches_pytorch_rule():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8

    def update(p, g, t, s):
        s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
        return p - lr * (s["m"] / (1 - b1 ** t)) / (np.sqrt(s["v"] / (1 - b2 ** t)) + eps)

    got = run_optimizer(lambda ps: optim.Adam(ps, lr=lr, betas=(b1, b2), eps=eps))
    np.testing.assert_allclose(got, reference(update), rtol=1e-12)
