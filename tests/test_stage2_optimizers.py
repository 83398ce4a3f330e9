"""Adagrad, Adadelta and amsgrad against PyTorch's update rules written out in numpy (and
PyTorch itself where it is installed), parameter groups with their own settings, the checks
of every setting, and each optimizer's state_dict round trip."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.optim as optim

from .engines import device_params
from .test_stage2_optim import START, TARGET, adam_rule, reference, run_optimizer

pytestmark = pytest.mark.stage2

# Adagrad, Adadelta and amsgrad run tensor operations, not a fused kernel: python (the
# readable loops) and cpu (the C kernels those operations launch) cover both engines.
DEVICES = device_params("python", "cpu")
STEPS = 12
# float64, a dozen steps of a few operations each: rounding stays near 1e-15 relative.
TOL = dict(rtol=1e-12, atol=1e-14)


def adagrad_rule(lr, lr_decay, weight_decay, initial_accumulator_value, eps):
    def update(p, g, t, s):
        g = g + weight_decay * p
        s["sum"] = s.get("sum", initial_accumulator_value) + g * g
        return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)
    return update


def adadelta_rule(lr, rho, eps, weight_decay):
    def update(p, g, t, s):
        g = g + weight_decay * p
        s["v"] = rho * s.get("v", 0) + (1 - rho) * g * g
        delta = np.sqrt(s.get("u", 0) + eps) / np.sqrt(s["v"] + eps) * g
        s["u"] = rho * s.get("u", 0) + (1 - rho) * delta * delta
        return p - lr * delta
    return update


def amsgrad_rule(lr, b1, b2, eps, weight_decay, decoupled):
    return adam_rule(lr, b1, b2, eps, weight_decay, decoupled, amsgrad=True)


CASES = {
    "adagrad": (lambda ps: optim.Adagrad(ps, lr=0.5), adagrad_rule(0.5, 0, 0, 0, 1e-10)),
    "adagrad decayed": (lambda ps: optim.Adagrad(ps, lr=0.5, lr_decay=0.1, weight_decay=0.1,
                                                 initial_accumulator_value=0.3, eps=1e-6),
                        adagrad_rule(0.5, 0.1, 0.1, 0.3, 1e-6)),
    "adadelta": (lambda ps: optim.Adadelta(ps), adadelta_rule(1.0, 0.9, 1e-6, 0)),
    "adadelta decayed": (lambda ps: optim.Adadelta(ps, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1),
                         adadelta_rule(0.5, 0.8, 1e-4, 0.1)),
    "adam amsgrad": (lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
                     amsgrad_rule(0.1, 0.8, 0.9, 1e-8, 0.1, False)),
    "adamw amsgrad": (lambda ps: optim.AdamW(ps, lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
                      amsgrad_rule(0.1, 0.8, 0.9, 1e-8, 0.1, True)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(CASES))
def test_trajectory_matches_pytorch_rule(case, device):
    make, rule = CASES[case]
    got = run_optimizer(make, STEPS, device)
    np.testing.assert_allclose(got, reference(rule, STEPS), **TOL)


def test_amsgrad_keeps_the_largest_second_moment():
    """On this descent g shrinks, so v falls after its peak: amsgrad's steps differ, and its
    state holds the running maximum of v."""
    plain = run_optimizer(lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.9)), STEPS)
    ams = run_optimizer(lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.9), amsgrad=True), STEPS)
    assert np.abs(plain - ams).max() > 1e-3
    p = tg.tensor([1.0, -2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.Adam([p], betas=(0.5, 0.5), amsgrad=True)
    for scale in (4.0, 1.0):                   # a large gradient, then a small one
        p.grad = tg.tensor([scale, -scale], dtype=tg.float64)
        opt.step()
    state = opt.state[p]
    assert state["exp_avg_sq"].tolist() == [4.5, 4.5]        # 0.5 * (0.5 * 16) + 0.5 * 1
    assert state["max_exp_avg_sq"].tolist() == [8.0, 8.0]    # step 1's 0.5 * 16


@pytest.mark.parametrize("case", list(CASES))
def test_trajectory_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    make, _ = CASES[case]
    name, kwargs = _torch_twin(make)
    q = torch.tensor(START, dtype=torch.float64, requires_grad=True)
    opt = getattr(torch.optim, name)([q], **kwargs)
    want = []
    for _ in range(STEPS):
        opt.zero_grad()
        ((q - torch.tensor(TARGET)) ** 2).sum().backward()
        opt.step()
        want.append(q.detach().numpy().copy())
    np.testing.assert_allclose(run_optimizer(make, STEPS), np.array(want), **TOL)


def _torch_twin(make):
    """The class name and settings of the optimizer `make` builds, for PyTorch's twin."""
    opt = make([tg.zeros(1, requires_grad=True)])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    return type(opt).__name__, group


@pytest.mark.parametrize("make, settings, rule", [
    (optim.Adagrad, [dict(lr=0.5), dict(lr=0.1, initial_accumulator_value=1.0)],
     [adagrad_rule(0.5, 0, 0, 0, 1e-10), adagrad_rule(0.1, 0, 0, 1.0, 1e-10)]),
    (optim.Adadelta, [dict(rho=0.5), dict(lr=0.3, weight_decay=0.1)],
     [adadelta_rule(0.2, 0.5, 1e-6, 0), adadelta_rule(0.3, 0.9, 1e-6, 0.1)]),
    (optim.Adam, [dict(amsgrad=True), dict(lr=0.05, amsgrad=False)],
     [amsgrad_rule(0.2, 0.9, 0.999, 1e-8, 0, False), None]),
    (optim.RMSprop, [dict(alpha=0.5), dict(lr=0.02, momentum=0.5)], [None, None]),
    (optim.SGD, [dict(momentum=0.9), dict(lr=0.05, nesterov=True, momentum=0.5)], [None, None]),
])
def test_each_group_follows_its_own_settings(make, settings, rule):
    """Two groups with their own settings move exactly as two optimizers would, one per
    group; the second group is added with add_param_group."""
    lr = 0.2
    a, b = (tg.tensor(START, dtype=tg.float64, requires_grad=True) for _ in range(2))
    alone = [tg.tensor(START, dtype=tg.float64, requires_grad=True) for _ in range(2)]
    grouped = make([{"params": [a], **settings[0]}], lr=lr)
    grouped.add_param_group({"params": b, **settings[1]})      # one tensor, as PyTorch allows
    singles = [make([p], **{"lr": lr, **s}) for p, s in zip(alone, settings)]
    target = tg.tensor(TARGET.tolist(), dtype=tg.float64)
    for _ in range(5):
        for opt, ps in [(grouped, (a, b)), (singles[0], alone[:1]), (singles[1], alone[1:])]:
            opt.zero_grad()
            sum(((p - target) ** 2).sum() for p in ps).backward()
            opt.step()
    assert a.tolist() == alone[0].tolist() and b.tolist() == alone[1].tolist()
    for p, r in zip((a, b), rule):
        if r is not None:                          # and the rule itself, where written above
            np.testing.assert_allclose(p.tolist(), reference(r, 5)[-1], **TOL)


def test_add_param_group_checks_the_group():
    a, b = tg.zeros(2, requires_grad=True), tg.zeros(2, requires_grad=True)
    opt = optim.Adagrad([a])
    with pytest.raises(ValueError, match="appear more than once"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="appear more than once"):
        optim.SGD([b, b], lr=0.1)
    with pytest.raises(TypeError, match="a dict with a 'params' entry"):
        opt.add_param_group([b])
    with pytest.raises(ValueError, match=r"Adagrad: invalid lr_decay -1, expected a number >= 0"):
        opt.add_param_group({"params": [b], "lr_decay": -1})
    with pytest.raises(TypeError, match="got a single tensor"):
        optim.Adam(a)
    assert len(opt.param_groups) == 1              # nothing half-added


@pytest.mark.parametrize("make, message", [
    (lambda ps: optim.SGD(ps, lr=-0.1), r"SGD: invalid lr -0.1, expected a number >= 0"),
    (lambda ps: optim.SGD(ps, lr=float("nan")), r"invalid lr nan"),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=-0.9), r"invalid momentum -0.9"),
    (lambda ps: optim.SGD(ps, lr=0.1, nesterov=True), r"Nesterov momentum requires a momentum"),
    (lambda ps: optim.RMSprop(ps, alpha=1.5), r"invalid alpha 1.5, expected a number in \[0, 1\]"),
    (lambda ps: optim.Adagrad(ps, eps=-1e-10), r"Adagrad: invalid eps"),
    (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1), r"invalid initial_accumulator_value -1"),
    (lambda ps: optim.Adagrad(ps, weight_decay="0.1"), r"invalid weight_decay '0.1'"),
    (lambda ps: optim.Adadelta(ps, rho=1.1), r"Adadelta: invalid rho 1.1, expected a number in \[0, 1\]"),
    (lambda ps: optim.Adadelta(ps, rho=-0.1), r"invalid rho -0.1"),
    (lambda ps: optim.Adadelta(ps, lr=-1.0), r"Adadelta: invalid lr -1.0"),
    (lambda ps: optim.Adam(ps, betas=(0.9, 1.0)), r"invalid beta at index 1 1.0, expected a number in \[0, 1\)"),
    (lambda ps: optim.Adam(ps, betas=0.9), r"invalid betas 0.9, expected two numbers"),
    (lambda ps: optim.AdamW(ps, amsgrad="yes"), r"AdamW: invalid amsgrad 'yes', expected True or False"),
    (lambda ps: optim.Adadelta([{"params": ps, "rho": 2.0}]), r"invalid rho 2.0"),
])
def test_bad_settings_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make([tg.zeros(2, requires_grad=True)])


ROUND_TRIPS = {
    "SGD": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1),
    "Adadelta": lambda ps: optim.Adadelta(ps, rho=0.8),
    "Adam": lambda ps: optim.Adam(ps, lr=0.05),
    "Adam amsgrad": lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True),
    "AdamW amsgrad": lambda ps: optim.AdamW(ps, lr=0.05, amsgrad=True),
}


@pytest.mark.parametrize("name", list(ROUND_TRIPS))
def test_state_dict_round_trip_resumes_exactly(name, tmp_path):
    """Three steps, saved to a file and loaded into a fresh optimizer, then three more: the
    same numbers as six uninterrupted steps, and the state saved equal to the state loaded."""
    from stage2_tensor.serialization import load, save
    make = ROUND_TRIPS[name]
    target = tg.tensor(TARGET.tolist(), dtype=tg.float64)

    def train(p, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            ((p - target) ** 2).sum().backward()
            opt.step()

    p = tg.tensor(START, dtype=tg.float64, requires_grad=True)
    opt = make([p])
    train(p, opt, 3)
    save({"p": p.detach(), "optimizer": opt.state_dict()}, tmp_path / "ckpt.tg")
    train(p, opt, 3)

    ckpt = load(tmp_path / "ckpt.tg")
    q = ckpt["p"].clone().requires_grad_(True)
    resumed = make([q])
    resumed.load_state_dict(ckpt["optimizer"])
    again = resumed.state_dict()
    for key, saved in ckpt["optimizer"]["state"][0].items():
        loaded = again["state"][0][key]
        assert (loaded.tolist() if hasattr(loaded, "tolist") else loaded) == \
               (saved.tolist() if hasattr(saved, "tolist") else saved), key
    assert again["param_groups"] == ckpt["optimizer"]["param_groups"]
    train(q, resumed, 3)
    assert q.tolist() == p.tolist()


@pytest.mark.parametrize("make, change, message", [
    (ROUND_TRIPS["Adam amsgrad"], lambda sd: sd["state"][0].pop("max_exp_avg_sq"),
     r"its state lacks \['max_exp_avg_sq'\]"),
    (ROUND_TRIPS["Adagrad"], lambda sd: sd["state"][0].update(square_avg=tg.zeros(3)),
     r"unknown state \['square_avg'\]; Adagrad keeps \['sum', 'step'\]"),
    (ROUND_TRIPS["Adadelta"], lambda sd: sd["state"][0].pop("acc_delta"), r"lacks \['acc_delta'\]"),
    (ROUND_TRIPS["Adadelta"], lambda sd: sd["param_groups"][0].update(rho=2.0),
     r"Adadelta.load_state_dict: parameter group 0: invalid rho 2.0"),
    (ROUND_TRIPS["Adagrad"], lambda sd: sd["state"][0].update(sum=tg.zeros(2)),
     r"sum has shape \(2,\), expected the parameter's \(3,\)"),
])
def test_load_state_dict_checks_the_new_optimizers_state(make, change, message):
    p = tg.tensor(START, dtype=tg.float64, requires_grad=True)
    opt = make([p])
    p.grad = tg.ones(3, dtype=tg.float64)
    opt.step()
    saved = opt.state_dict()
    change(saved)
    before = p.tolist(), dict(opt.param_groups[0])
    with pytest.raises(ValueError, match=message):
        opt.load_state_dict(saved)
    assert (p.tolist(), opt.param_groups[0]) == before                # nothing changed
