"""Linear regression by gradient descent: one Linear(5, 1) recovers the coefficients that
generated 10,000 noisy rows, y = x . beta + bias + N(0, 0.1^2).

Minibatches of 32 rows, 2000 steps of SGD with momentum 0.9, mean squared error. The
learning rate decays linearly to zero: at a constant rate each step still follows one
batch's noise, and the weights jitter around the answer by more than the 0.01 we ask for.

    python -m stage1_scalargrad.examples.linear_fit [--steps 2000] [--seed 0]
"""
import argparse
import random

from tqdm.auto import tqdm   # widgets in Jupyter, text in a terminal

from stage1_scalargrad import nn, optim
from stage1_scalargrad.plots import loss_plot
from stage1_scalargrad.workspace import figures_dir, quick, write_loss_log

TRUE_BETA = [1.5, -2.0, 0.5, 3.0, -1.0]
TRUE_BIAS = 0.7
NOISE = 0.1         # standard deviation of the Gaussian noise added to each target
ROWS = 10_000


def make_data(rows=ROWS, seed=0):
    """Rows of standard-normal features and their noisy targets, as lists of lists."""
    rng = random.Random(seed)
    xs = [[rng.gauss(0, 1) for _ in TRUE_BETA] for _ in range(rows)]
    ys = [[sum(b * xi for b, xi in zip(TRUE_BETA, x)) + TRUE_BIAS + rng.gauss(0, NOISE)]
          for x in xs]
    return xs, ys


def train(steps=2000, batch=32, lr=0.02, momentum=0.9, seed=0, log_every=200, show=True):
    """Fit Linear(5, 1); returns (model, per-step losses, true beta, learned beta)."""
    xs, ys = make_data(seed=seed)
    rng = random.Random(seed + 1)
    model = nn.Linear(len(TRUE_BETA), 1, seed=seed)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    for step in tqdm(range(steps), desc="linear_fit", disable=None if show else True, leave=False):
        rows = rng.sample(range(len(xs)), batch)
        loss = nn.mse_loss(model([xs[i] for i in rows]), [ys[i] for i in rows])
        opt.zero_grad()
        loss.backward()
        opt.lr = lr * (1 - step / steps)
        opt.step()
        losses.append(loss.data)
        if show and step % log_every == 0:
            tqdm.write(f"step = {step}, loss = {loss.data:.6g}, lr = {opt.lr:.4g}")
    learned_beta = [w.data for w in model.weight[0]]
    return model, losses, TRUE_BETA, learned_beta


def main(argv=None):
    parser = argparse.ArgumentParser(description="Recover linear-regression coefficients with SGD")
    parser.add_argument("--steps", type=int, default=200 if quick() else 2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    model, losses, true_beta, learned_beta = train(args.steps, seed=args.seed)
    print("       true    learned")
    for i, (t, b) in enumerate(zip(true_beta, learned_beta)):
        print(f"beta{i}  {t:6.3f}  {b:9.5f}")
    print(f"bias   {TRUE_BIAS:6.3f}  {model.bias[0].data:9.5f}")
    max_error = max(abs(t - b) for t, b in zip(true_beta, learned_beta))
    print(f"max |beta - learned| = {max_error:.5f}")

    log = write_loss_log(losses, "linear_fit_loss.csv")
    plot = loss_plot(losses, figures_dir() / "linear_fit_loss.png",
                     f"Linear(5, 1): batch MSE, SGD momentum 0.9 ({args.steps} steps)")
    print(f"log: {log}\nloss plot: {plot}")
    return max_error


if __name__ == "__main__":
    main()
