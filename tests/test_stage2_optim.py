"""stage2's optimizers against PyTorch's update rules written out in numpy, the learning-rate
schedule, and a small network that learns."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim
from stage2_tensor.optim.lr_scheduler import LinearLR

from .engines import device_params

pytestmark = pytest.mark.stage2

START, TARGET = [0.5, 2.0, -1.5], np.array([3.0, -1.0, 0.25])
# SGD, Adam and AdamW are one fused kernel per device (backend.py's sgd_update, adam_update):
# their rules are checked on every device.
DEVICES = device_params()


def run_optimizer(make, steps=25, device="python"):
    """Descend sum((p - TARGET)^2) from START in float64 on `device`; the trajectory of p."""
    p = tg.tensor(START, dtype=tg.float64, requires_grad=True, device=device)
    storage = p.storage
    opt = make([p])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        ((p - tg.tensor(TARGET.tolist(), dtype=tg.float64, device=device)) ** 2).sum().backward()
        opt.step()
        history.append(p.tolist())
    assert p.storage is storage                    # updated in place, never replaced
    return np.array(history)


def reference(update, steps=25):
    """The same descent with PyTorch's update rule (`update(p, g, t, state)`) in numpy."""
    p, state, history = np.array(START), {}, []
    for t in range(1, steps + 1):
        p = update(p, 2 * (p - TARGET), t, state)
        history.append(p.copy())
    return np.array(history)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("momentum, dampening, weight_decay, nesterov",
                         [(0, 0, 0, False), (0.9, 0, 0, False), (0.9, 0.1, 0.01, False),
                          (0.8, 0, 0.05, True)])
def test_sgd_matches_pytorch_rule(momentum, dampening, weight_decay, nesterov, device):
    lr = 0.05

    def update(p, g, t, s):
        g = g + weight_decay * p
        if momentum:
            s["buf"] = g.copy() if t == 1 else momentum * s["buf"] + (1 - dampening) * g
            g = g + momentum * s["buf"] if nesterov else s["buf"]
        return p - lr * g

    got = run_optimizer(lambda ps: optim.SGD(ps, lr=lr, momentum=momentum, dampening=dampening,
                                             weight_decay=weight_decay, nesterov=nesterov), device=device)
    np.testing.assert_allclose(got, reference(update), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("weight_decay, momentum, centered", [(0, 0, False), (0.1, 0, False),
                                                               (0, 0.9, False), (0, 0.5, True)])
def test_rmsprop_matches_pytorch_rule(weight_decay, momentum, centered):
    lr, alpha, eps = 0.01, 0.99, 1e-8

    def update(p, g, t, s):
        g = g + weight_decay * p
        s["sq"] = alpha * s.get("sq", 0) + (1 - alpha) * g * g
        avg = s["sq"]
        if centered:
            s["g"] = alpha * s.get("g", 0) + (1 - alpha) * g
            avg = avg - s["g"] ** 2
        avg = np.sqrt(avg) + eps
        if momentum:
            s["buf"] = momentum * s.get("buf", 0) + g / avg
            return p - lr * s["buf"]
        return p - lr * g / avg

    got = run_optimizer(lambda ps: optim.RMSprop(ps, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                                 momentum=momentum, centered=centered))
    np.testing.assert_allclose(got, reference(update), rtol=1e-12, atol=1e-14)


def adam_rule(lr, b1, b2, eps, weight_decay, decoupled, amsgrad=False):
    """Adam's (AdamW's when decoupled) update in numpy; with amsgrad, the largest second
    moment so far in the denominator."""
    def update(p, g, t, s):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
        if amsgrad:
            s["vmax"] = np.maximum(s.get("vmax", 0), s["v"])
        denom = np.sqrt(s["vmax" if amsgrad else "v"]) / math.sqrt(1 - b2 ** t) + eps
        return p - lr / (1 - b1 ** t) * s["m"] / denom
    return update


def adam_reference(lr, b1, b2, eps, weight_decay, decoupled):
    return reference(adam_rule(lr, b1, b2, eps, weight_decay, decoupled))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("weight_decay", [0, 0.1])
def test_adam_matches_pytorch_rule(weight_decay, device):
    got = run_optimizer(lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.99), eps=1e-6,
                                              weight_decay=weight_decay), device=device)
    np.testing.assert_allclose(got, adam_reference(0.1, 0.8, 0.99, 1e-6, weight_decay, False),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("weight_decay", [1e-2, 0.3])
def test_adamw_matches_pytorch_rule(weight_decay, device):
    got = run_optimizer(lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=weight_decay), device=device)
    np.testing.assert_allclose(got, adam_reference(0.1, 0.9, 0.999, 1e-8, weight_decay, True),
                               rtol=1e-12, atol=1e-14)
    assert optim.AdamW([tg.zeros(1, requires_grad=True)]).defaults["weight_decay"] == 1e-2


def test_zero_grad_param_groups_and_skipped_parameters():
    a, b = tg.ones(2, requires_grad=True), tg.ones(2, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (a.sum() + b.sum()).backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == [0.5, 0.5]
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    opt.step()                                     # no gradients: nothing moves
    assert a.tolist() == pytest.approx([0.9, 0.9])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="leaf tensors that require grad"):
        optim.SGD([tg.ones(2)], lr=0.1)


def test_linear_lr_matches_pytorch_values():
    opt = optim.SGD([tg.zeros(1, requires_grad=True)], lr=0.1)
    sched = LinearLR(opt)                          # PyTorch's defaults: 1/3 -> 1 over 5 steps
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.1 / 3, 0.1 * 7 / 15, 0.06, 0.1 * 11 / 15, 0.1 * 13 / 15, 0.1, 0.1],
                                rel=1e-12)
    opt = optim.Adam([tg.zeros(1, requires_grad=True)], lr=1.0)
    decay = optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=4)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(5):
        decay.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    with pytest.raises(ValueError, match="start_factor"):
        LinearLR(opt, start_factor=0.0)


def two_moons(n, rng):
    """n points of two interleaved half circles, labels 0 and 1."""
    angle = rng.uniform(0, math.pi, n)
    label = np.arange(n) % 2
    x = np.where(label, 1 - np.cos(angle), np.cos(angle))
    y = np.where(label, 0.5 - np.sin(angle), np.sin(angle))
    return np.stack([x, y], 1) + rng.normal(0, 0.1, (n, 2)), label


def test_a_small_mlp_learns_two_moons():
    X, y = two_moons(32, np.random.default_rng(0))
    X, y = tg.tensor(X.tolist()), tg.tensor(y.tolist())
    tg.seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(100):
        loss = F.cross_entropy(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 20, (losses[0], losses[-1])       # measured: 0.87 -> 0.0096
    accuracy = (model(X).argmax(dim=1) == y).to(dtype=tg.float32).mean().item()
    assert accuracy >= 0.95


def test_optimizer_state_dict_resumes_training_exactly(tmp_path):
    from stage2_tensor.serialization import load, save

    def train(model, opt, steps, x):
        for _ in range(steps):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
        return loss.item()

    def fresh():
        tg.seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        return model, optim.Adam(model.parameters(), lr=0.05)

    x = tg.randn(6, 3)
    model, opt = fresh()
    train(model, opt, 3, x)
    save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "ckpt.tg")
    uninterrupted = train(model, opt, 3, x)

    model, opt = fresh()
    ckpt = load(tmp_path / "ckpt.tg")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    assert opt.state[next(model.parameters())]["step"] == 3
    assert train(model, opt, 3, x) == uninterrupted


def test_step_with_closure_returns_the_loss():
    p = tg.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 1.0 and p.tolist() == [0.5]


# ---- GradScaler (amp.py): loss scaling, as PyTorch's torch.amp.GradScaler -------------------
def test_grad_scaler_scales_unscales_and_skips_overflowing_steps():
    p = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.SGD([p], lr=0.5)
    scaler = tg.amp.GradScaler("python", init_scale=8.0, growth_interval=2)
    loss = (p * p).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == 8.0 * 5.0
    scaled.backward()
    assert p.grad.tolist() == [16.0, 32.0]                  # 8 * 2p
    scaler.unscale_(opt)
    assert p.grad.tolist() == [2.0, 4.0]                    # the true gradient, for clipping
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [0.0, 0.0] and scaler.get_scale() == 8.0       # stepped; 1 good step of 2
    for overflow, scale in ((False, 16.0), (True, 8.0)):    # second good step grows; an inf backs off
        opt.zero_grad()
        loss = (p * (math.inf if overflow else 1.0)).sum()
        scaler.scale(loss).backward()
        before = p.tolist()
        scaler.step(opt)                                    # unscales itself
        scaler.update()
        assert scaler.get_scale() == scale
        assert (p.tolist() == before) == overflow           # the overflowing step is skipped
    assert scaler.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 0}


def test_grad_scaler_disabled_passes_through_and_checks_arguments():
    p = tg.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    scaler = tg.cuda.amp.GradScaler(enabled=False)          # nanoGPT's spelling, float32 training
    loss = (p * 3).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    loss.backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert p.item() == pytest.approx(0.7) and scaler.state_dict() == {}
    if not tg.cuda.is_available():                           # PyTorch's warning, then disabled
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
            assert not tg.amp.GradScaler().is_enabled()
    with pytest.raises(ValueError, match="growth_interval must be a positive int, got 0"):
        tg.amp.GradScaler("python", growth_interval=0)
    with pytest.raises(ValueError, match="expects init_scale > 0"):
        tg.amp.GradScaler("python", init_scale=0)
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        tg.amp.GradScaler("python").load_state_dict({})
