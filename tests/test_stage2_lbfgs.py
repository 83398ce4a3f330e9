"""optim.LBFGS: it minimizes Rosenbrock's function with and without the strong Wolfe line
search, its first iteration is steepest descent of PyTorch's length, its settings and
closure are checked, its state survives state_dict; PyTorch's iterates as an optional
oracle."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import optim

pytestmark = pytest.mark.stage2


def rosenbrock(xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def minimize(lib, steps, start=(-1.5, 2.0), **settings):
    """The iterates of LBFGS on Rosenbrock's function from ``start``, one per step; lib is
    stage2_tensor or torch."""
    p = lib.tensor(list(start), dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([p], **settings)
    evaluations = []

    def closure():
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        evaluations.append(float(loss))
        return loss
    iterates = []
    for _ in range(steps):
        opt.step(closure)
        iterates.append(p.detach().tolist())
    return np.array(iterates), evaluations


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_minimizes_rosenbrock(line_search_fn):
    settings = dict(lr=1, max_iter=50, line_search_fn=line_search_fn) if line_search_fn else \
        dict(lr=0.5, max_iter=50, history_size=10)
    iterates, losses = minimize(tg, 4 if line_search_fn else 10, **settings)
    np.testing.assert_allclose(iterates[-1], [1.0, 1.0], atol=1e-4)
    assert losses[-1] < 1e-8 < losses[0]


def test_first_iteration_is_steepest_descent_of_pytorchs_length():
    """With no history yet, d = -g and t = min(1, 1 / |g|_1) lr."""
    p = tg.tensor([-1.5, 2.0], dtype=tg.float64, requires_grad=True)
    g = np.array([2 * (-1.5 - 1) - 400 * -1.5 * (2.0 - 2.25), 200 * (2.0 - 2.25)])
    opt = optim.LBFGS([p], lr=0.5, max_iter=1)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        return loss
    first = opt.step(closure)
    assert first.item() == pytest.approx(rosenbrock([-1.5, 2.0]))       # the loss before the step
    np.testing.assert_allclose(p.detach().tolist(), np.array([-1.5, 2.0]) - min(1, 1 / np.abs(g).sum()) * 0.5 * g,
                               rtol=1e-12)
    state = opt.state[p]
    assert state["n_iter"] == 1 and state["func_evals"] == 1


def test_stops_at_once_where_the_gradient_is_zero():
    p = tg.tensor([1.0, 1.0], dtype=tg.float64, requires_grad=True)
    opt = optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        return loss
    opt.step(closure)
    assert len(calls) == 1 and p.tolist() == [1.0, 1.0]


def test_settings_and_closure_are_checked():
    p = tg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        optim.LBFGS([p], line_search_fn="armijo")
    with pytest.raises(ValueError, match="invalid history_size 0"):
        optim.LBFGS([p], history_size=0)
    with pytest.raises(ValueError, match="invalid lr -1"):
        optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [tg.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError, match="needs a closure"):
        optim.LBFGS([p]).step()
    assert optim.LBFGS([p], max_iter=8).param_groups[0]["max_eval"] == 10      # max_iter * 5 // 4


def test_state_dict_resumes_the_same_iterates():
    straight, _ = minimize(tg, 3, max_iter=3, line_search_fn="strong_wolfe")
    p = tg.tensor([-1.5, 2.0], dtype=tg.float64, requires_grad=True)
    opt = optim.LBFGS([p], max_iter=3, line_search_fn="strong_wolfe")

    def closure(opt_p):
        opt, p = opt_p
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        return loss
    opt.step(lambda: closure((opt, p)))
    saved = opt.state_dict()
    q = tg.tensor(p.tolist(), dtype=tg.float64, requires_grad=True)
    resumed = optim.LBFGS([q], max_iter=3, line_search_fn="strong_wolfe")
    resumed.load_state_dict(saved)
    for _ in range(2):
        resumed.step(lambda: closure((resumed, q)))
    np.testing.assert_allclose(q.detach().tolist(), straight[-1], rtol=1e-12)
    saved["state"][0]["d"] = tg.zeros(3)
    with pytest.raises(ValueError, match=r"d must be a tensor of shape \(2,\)"):
        resumed.load_state_dict(saved)


# Rounding differs in the last bits (PyTorch's kernels fuse a multiply-add), which
# Rosenbrock's narrow valley magnifies over many iterations: a few steps are compared.
@pytest.mark.parametrize("line_search_fn, lr, steps", [(None, 0.1, 4), ("strong_wolfe", 1, 3)])
def test_iterates_match_pytorch(line_search_fn, lr, steps):
    torch = pytest.importorskip("torch")
    settings = dict(lr=lr, max_iter=10, history_size=5, line_search_fn=line_search_fn)
    want, want_losses = minimize(torch, steps, **settings)
    got, losses = minimize(tg, steps, **settings)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)
    assert len(losses) == len(want_losses)                                      # the same evaluations
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
