"""The learning-rate schedulers PyTorch has (StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR, LambdaLR, OneCycleLR) against their closed forms (and PyTorch itself where
installed), their checks, and every scheduler's state_dict round trip."""
import copy
import math

import pytest

import stage2_tensor as tg
import stage2_tensor.optim as optim
from stage2_tensor.optim import lr_scheduler as S

pytestmark = pytest.mark.stage2

BASE = 0.8


def lrs(scheduler, optimizer, steps):
    """The lr of the first group at steps 0 .. steps, as get_last_lr and the group say."""
    seen = [scheduler.get_last_lr()[0]]
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        assert scheduler.get_last_lr() == [g["lr"] for g in optimizer.param_groups]
        seen.append(scheduler.get_last_lr()[0])
    return seen


def sgd(lr=BASE, groups=1, **settings):
    return optim.SGD([{"params": [tg.zeros(1, requires_grad=True)]} for _ in range(groups)],
                     lr=lr, **settings)


# name -> (make the scheduler for an optimizer, the closed form of lr at step t)
CLOSED_FORMS = {
    "StepLR": (lambda o: S.StepLR(o, step_size=3, gamma=0.5), lambda t: BASE * 0.5 ** (t // 3)),
    "MultiStepLR": (lambda o: S.MultiStepLR(o, milestones=[5, 2, 5]),       # 5 twice: two drops
                    lambda t: BASE * (1 if t < 2 else 0.1 if t < 5 else 0.001)),
    "ExponentialLR": (lambda o: S.ExponentialLR(o, gamma=0.9), lambda t: BASE * 0.9 ** t),
    "CosineAnnealingLR": (lambda o: S.CosineAnnealingLR(o, T_max=8, eta_min=0.05),
                          lambda t: 0.05 + (BASE - 0.05) * (1 + math.cos(math.pi * t / 8)) / 2),
    "LambdaLR": (lambda o: S.LambdaLR(o, lambda t: 1 / (t + 1)), lambda t: BASE / (t + 1)),
}


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_schedule_follows_its_closed_form(name):
    make, closed_form = CLOSED_FORMS[name]
    opt = sgd()
    got = lrs(make(opt), opt, 12)                  # CosineAnnealingLR: past T_max, back up
    assert got == pytest.approx([closed_form(t) for t in range(13)], rel=1e-14, abs=1e-16)


def test_lambda_lr_one_function_per_group():
    opt = sgd(groups=2)
    scheduler = S.LambdaLR(opt, [lambda t: 0.5 ** t, lambda t: t + 1])
    for t in range(4):
        assert scheduler.get_last_lr() == pytest.approx([BASE * 0.5 ** t, BASE * (t + 1)], rel=1e-15)
        scheduler.step()


def one_cycle(t, total, max_lr, pct_start=0.3, strategy="cos", three_phase=False,
              div=25.0, final_div=1e4, m_low=0.85, m_high=0.95):
    """OneCycleLR's lr and momentum at step t, written from PyTorch's documentation: phases
    end at steps pct_start * total - 1 (and twice that, three_phase) and total - 1."""
    low, floor = max_lr / div, max_lr / div / final_div
    up = pct_start * total - 1
    if three_phase:
        phases = [(up, low, max_lr, m_high, m_low), (2 * up, max_lr, low, m_low, m_high),
                  (total - 1, low, floor, m_high, m_high)]
    else:
        phases = [(up, low, max_lr, m_high, m_low), (total - 1, max_lr, floor, m_low, m_high)]
    start = 0.0
    for i, (end, lr0, lr1, m0, m1) in enumerate(phases):
        if t <= end or i == len(phases) - 1:
            x = (t - start) / (end - start)
            if strategy == "cos":
                w = (1 - math.cos(math.pi * x)) / 2         # 0 -> 1 along the phase
            else:
                w = x
            return lr0 + (lr1 - lr0) * w, m0 + (m1 - m0) * w
        start = end


@pytest.mark.parametrize("settings", [dict(), dict(three_phase=True),
                                      dict(anneal_strategy="linear", pct_start=0.25)])
def test_one_cycle_lr_and_momentum_follow_the_policy(settings):
    total = 20
    want = [one_cycle(t, total, 1.0, **{k.replace("anneal_", ""): v for k, v in settings.items()})
            for t in range(total + 1)]
    opt = sgd(momentum=0.9)
    scheduler = S.OneCycleLR(opt, max_lr=1.0, total_steps=total, **settings)
    momenta = [opt.param_groups[0]["momentum"]]
    got = [scheduler.get_last_lr()[0]]
    for _ in range(total):
        scheduler.step()
        got.append(scheduler.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
    assert got == pytest.approx([lr for lr, _ in want], rel=1e-12, abs=1e-15)
    assert momenta == pytest.approx([m for _, m in want], rel=1e-12)
    with pytest.raises(ValueError, match="tried to step 21 times; total_steps is 20"):
        scheduler.step()


def test_one_cycle_moves_adams_beta1_per_group():
    opt = optim.Adam([{"params": [tg.zeros(1, requires_grad=True)]},
                      {"params": [tg.zeros(1, requires_grad=True)], "betas": (0.5, 0.9)}])
    scheduler = S.OneCycleLR(opt, max_lr=[1.0, 2.0], epochs=2, steps_per_epoch=5)
    for t in range(4):
        for group, max_lr in zip(opt.param_groups, [1.0, 2.0]):
            lr, momentum = one_cycle(t, 10, max_lr)
            assert group["lr"] == pytest.approx(lr, rel=1e-12)
            assert group["betas"][0] == pytest.approx(momentum, rel=1e-12)
        scheduler.step()
    assert opt.param_groups[0]["betas"][1] == 0.999 and opt.param_groups[1]["betas"][1] == 0.9


TORCH_TWINS = {
    **{name: make for name, (make, _) in CLOSED_FORMS.items()},
    "OneCycleLR": lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=15),
    "OneCycleLR three phases": lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=15, three_phase=True,
                                                      anneal_strategy="linear"),
}


@pytest.mark.parametrize("name", list(TORCH_TWINS))
def test_schedules_match_pytorch(name):
    torch = pytest.importorskip("torch")
    mine = sgd(momentum=0.9)
    got = lrs(TORCH_TWINS[name](mine), mine, 14)
    theirs = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE, momentum=0.9)
    settings = {k: v for k, v in vars(TORCH_TWINS[name](sgd(momentum=0.9))).items()
                if k in ("step_size", "gamma", "milestones", "T_max", "eta_min", "total_steps",
                         "three_phase", "anneal_strategy")}
    if name == "LambdaLR":
        settings["lr_lambda"] = lambda t: 1 / (t + 1)
    if "OneCycleLR" in name:
        settings["max_lr"] = 1.0
    scheduler = getattr(torch.optim.lr_scheduler, name.split()[0])(theirs, **settings)
    want = [scheduler.get_last_lr()[0]]
    for _ in range(14):
        theirs.step()
        scheduler.step()
        want.append(scheduler.get_last_lr()[0])
    # PyTorch computes some schedules recursively (lr from the last lr): rounding apart.
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


ROUND_TRIPS = {
    **TORCH_TWINS,
    "LinearLR": lambda o: S.LinearLR(o, start_factor=0.25, total_iters=6),
    "WarmupCosineLR": lambda o: S.WarmupCosineLR(o, warmup=2, total=10, min_lr=0.01),
    "OneCycleLR on Adam": None,                    # made with Adam below
}


@pytest.mark.parametrize("name", list(ROUND_TRIPS))
def test_state_dict_round_trip_resumes_the_schedule(name):
    """Four steps, then the optimizer's and the scheduler's state dicts loaded into fresh
    ones: the next lrs (and momenta) are the uninterrupted run's."""
    def fresh():
        if name == "OneCycleLR on Adam":
            opt = optim.Adam([tg.zeros(1, requires_grad=True)], lr=BASE)
            return opt, S.OneCycleLR(opt, max_lr=1.0, total_steps=15)
        opt = sgd(momentum=0.9)
        return opt, ROUND_TRIPS[name](opt)

    opt, scheduler = fresh()
    lrs(scheduler, opt, 4)
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(scheduler.state_dict())
    uninterrupted = lrs(scheduler, opt, 6)
    groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]

    opt, scheduler = fresh()
    opt.load_state_dict(saved_opt)
    scheduler.load_state_dict(saved)
    assert scheduler.last_epoch == 4 and scheduler.state_dict().keys() == saved.keys()
    assert lrs(scheduler, opt, 6) == uninterrupted
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == groups


@pytest.mark.parametrize("change, error, message", [
    (lambda sd: [], TypeError, "expected the dict state_dict"),
    (lambda sd: {**sd, "T_max": 3}, ValueError, r"entries .*T_max.*another scheduler's"),
    (lambda sd: {k: v for k, v in sd.items() if k != "gamma"}, ValueError, "entries"),
    (lambda sd: {**sd, "last_epoch": "4"}, ValueError, "last_epoch must be a whole number >= -1"),
    (lambda sd: {**sd, "base_lrs": [0.1, 0.2]}, ValueError, r"base_lrs must hold one lr >= 0 per parameter group \(1\)"),
    (lambda sd: {**sd, "gamma": -0.5}, ValueError, r"StepLR.load_state_dict: invalid gamma -0.5"),
    (lambda sd: {**sd, "step_size": 0}, ValueError, r"invalid step_size 0, expected a whole number >= 1"),
])
def test_load_state_dict_checks_what_it_loads(change, error, message):
    opt = sgd()
    scheduler = S.StepLR(opt, step_size=2)
    lrs(scheduler, opt, 3)
    before = dict(vars(scheduler))
    with pytest.raises(error, match=message):
        scheduler.load_state_dict(change(scheduler.state_dict()))
    assert vars(scheduler) == before                                    # nothing changed


@pytest.mark.parametrize("make, error, message", [
    (lambda o: S.StepLR(o, step_size=0), ValueError, r"StepLR: invalid step_size 0"),
    (lambda o: S.StepLR(o, step_size=2.5), ValueError, r"invalid step_size 2.5"),
    (lambda o: S.MultiStepLR(o, milestones=[3, -1]), ValueError, r"invalid milestone -1"),
    (lambda o: S.MultiStepLR(o, milestones=3), ValueError, r"milestones must be whole numbers"),
    (lambda o: S.ExponentialLR(o, gamma=-0.9), ValueError, r"ExponentialLR: invalid gamma -0.9, expected a number >= 0"),
    (lambda o: S.CosineAnnealingLR(o, T_max=0), ValueError, r"invalid T_max 0"),
    (lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=-1), ValueError, r"invalid eta_min -1"),
    (lambda o: S.LambdaLR(o, [lambda t: 1, lambda t: 2]), ValueError, r"expected 1 lr_lambdas"),
    (lambda o: S.LambdaLR(o, 0.5), TypeError, r"lr_lambda must be a function"),
    (lambda o: S.OneCycleLR(o, max_lr=1.0), ValueError, r"either total_steps or epochs and steps_per_epoch"),
    (lambda o: S.OneCycleLR(o, max_lr=1.0, epochs=0, steps_per_epoch=5), ValueError, r"invalid epochs 0"),
    (lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1.5), ValueError, r"invalid pct_start 1.5"),
    (lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="cosine"), ValueError,
     r"anneal_strategy must be 'cos' or 'linear'"),
    (lambda o: S.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=10), ValueError, r"expected 1 values of max_lr"),
    (lambda o: S.OneCycleLR(o, max_lr=-1.0, total_steps=10), ValueError, r"invalid max_lr -1.0"),
    (lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, div_factor=0), ValueError, r"invalid div_factor 0"),
    (lambda o: S.OneCycleLR(optim.Adagrad(o.param_groups[0]["params"]), max_lr=1.0, total_steps=10),
     ValueError, r"cycle_momentum needs an optimizer with momentum or betas, Adagrad has neither"),
])
def test_bad_settings_are_named(make, error, message):
    opt = sgd()
    with pytest.raises(error, match=message):
        make(opt)
    assert opt.param_groups[0]["lr"] == BASE and "max_lr" not in opt.param_groups[0]
