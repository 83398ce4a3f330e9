"""The regression examples learn: short runs of linear_fit and nonlinear_fit, with bounds
measured on those runs (the full runs are slower; their results are in the docstrings)."""
import pytest

from stage1_scalargrad import nn
from stage1_scalargrad.examples import linear_fit, nonlinear_fit

pytestmark = pytest.mark.stage1


def test_linear_fit_recovers_beta_in_a_short_run():
    _, losses, true_beta, learned_beta = linear_fit.train(steps=200, show=False)
    assert max(abs(t - b) for t, b in zip(true_beta, learned_beta)) < 0.02   # measured: 0.007
    # The loss falls from about 10 to the noise variance, 0.1^2.
    assert sum(losses[-20:]) / 20 < 0.02 < 1 < losses[0]                     # measured: 0.0104


def test_he_init_lets_the_signal_through_ten_layers():
    grid = [-1 + i / 25 for i in range(51)]
    for init, lo, hi in [(lambda m: m, 0, 1e-3), (nonlinear_fit.he_init, 0.1, float("inf"))]:
        model = init(nn.MLP(1, [nonlinear_fit.WIDTH] * 9 + [1], seed=1))
        ys = nonlinear_fit.predict(model, grid)
        assert lo < max(ys) - min(ys) < hi          # measured: 8e-5 by default, 0.41 with He


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_nonlinear_fit_loss_falls_in_a_short_run():
    _, losses, _ = nonlinear_fit.train(steps=80, batch=8, show=False)
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < 0.35 * first
