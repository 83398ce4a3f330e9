"""BobNet (chapter 3): Linear(1,1) -> Sigmoid -> Linear(1,1) learns f(x) = 2x^2 + 0.5 on [0, 1].

Batch 32, 4000 steps of SGD with lr 0.1, mean squared error over the batch. The thesis
trained on the first sample of each batch only and reported yHat(0.13) = 0.520 against an
"expected" 0.5169, which is 0.13^2 + 0.5; the target function gives f(0.13) = 0.5338.
Both numbers are printed.

    python -m stage1_scalargrad.examples.bobnet [--steps 4000] [--seed 0]
"""
import argparse
import random

from tqdm.auto import tqdm   # widgets in Jupyter, text in a terminal

from stage1_scalargrad import Value, nn, optim
from stage1_scalargrad.plots import loss_plot
from stage1_scalargrad.viz import draw, save
from stage1_scalargrad.workspace import figures_dir, quick, write_loss_log

THESIS_EXPECTED = 0.5169    # what the thesis printed as "expected" (0.13^2 + 0.5)
THESIS_RESULT = 0.520       # what the thesis's BobNet predicted


def target(x):
    return 2 * x * x + 0.5


class BobNet(nn.Module):
    def __init__(self, seed=0):
        self.fc1 = nn.Linear(1, 1, seed=seed)
        self.act = nn.Sigmoid()
        self.fc2 = nn.Linear(1, 1, seed=seed + 1)

    def forward(self, x):
        return self.fc2.forward(self.act.forward(self.fc1.forward(x)))


def train(steps=4000, batch=32, lr=0.1, seed=0, log_every=100, show=True):
    """Train BobNet; returns (model, per-step losses)."""
    rng = random.Random(seed)
    model = BobNet(seed)
    opt = optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in tqdm(range(steps), desc="bobnet", disable=None if show else True, leave=False):
        xs = [[rng.random()] for _ in range(batch)]
        ys = [[target(x[0])] for x in xs]
        loss = nn.mse_loss(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.data)
        if show and step % log_every == 0:
            tqdm.write(f"step = {step}, loss = {loss.data:.6g}")
    return model, losses


def draw_graph(model, x=0.13):
    """The graph of yHat(x) with its parameters named, as a graphviz.Digraph; grads are
    d yHat / d v (the training gradients are cleared first)."""
    model.zero_grad()
    x_in = Value(x)
    y_hat = model([x_in])[0]
    y_hat.backward()
    names = {x_in: "x", y_hat: "yHat", model.fc1.weight[0][0]: "w1", model.fc1.bias[0]: "b1",
             model.fc2.weight[0][0]: "w2", model.fc2.bias[0]: "b2"}
    return draw(y_hat, names=names)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Train BobNet on f(x) = 2x^2 + 0.5")
    parser.add_argument("--steps", type=int, default=40 if quick() else 4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    model, losses = train(args.steps, seed=args.seed)
    y_hat = model([0.13])[0].data
    print(f"yHat(0.13) = {y_hat:.4f}   f(0.13) = {target(0.13):.4f}   "
          f"thesis: {THESIS_RESULT:.3f} against its stated 'expected' {THESIS_EXPECTED}")
    log = write_loss_log(losses, "bobnet_loss.csv")
    plot = loss_plot(losses, figures_dir() / "bobnet_loss.png",
                     f"BobNet: batch MSE, SGD lr 0.1 ({args.steps} steps)")
    print(f"log: {log}\nloss plot: {plot}")
    try:
        print(f"graph of yHat(0.13): {save(draw_graph(model), figures_dir() / 'bobnet_graph.svg')}")
    except RuntimeError as err:
        print(f"graph not drawn: {err}")
    return y_hat


if __name__ == "__main__":
    main()
