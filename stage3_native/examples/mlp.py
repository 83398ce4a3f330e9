"""An MLP trained on device "cpu": the stage2 Tensor, nn and optim, with stage3's C kernels
underneath. The task is two interleaving half-moons (2-D points, two classes).

    python -m stage3_native.examples.mlp [--steps 300] [--seed 0]
"""
import argparse
import math
import time

from tqdm.auto import tqdm   # widgets in Jupyter, text in a terminal

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim
import stage3_native  # noqa: F401  (registers device "cpu")
from stage1_scalargrad.plots import loss_plot
from stage1_scalargrad.workspace import figures_dir, quick, write_loss_log


def two_moons(n, noise=0.1, seed=0):
    """n points on two interleaving half circles, with Gaussian noise; labels 0 and 1."""
    rng = tg.factories.generator()
    rng.seed(seed)
    points, labels = [], []
    for i in range(n):
        label = i % 2
        angle = math.pi * rng.random()
        x = math.cos(angle) if label == 0 else 1 - math.cos(angle)
        y = math.sin(angle) if label == 0 else 0.5 - math.sin(angle)
        points.append([x + rng.gauss(0, noise), y + rng.gauss(0, noise)])
        labels.append(label)
    return tg.tensor(points, device="cpu"), tg.tensor(labels, device="cpu")


def train(steps=300, seed=0, show=True):
    tg.manual_seed(seed)
    x, y = two_moons(256, seed=seed)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2)).to("cpu")
    opt = optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for step in tqdm(range(steps), desc="mlp on cpu", disable=None if show else True, leave=False):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if show and step % 50 == 0:
            tqdm.write(f"step = {step}, loss = {losses[-1]:.4f}")
    with tg.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    return model, losses, accuracy


def main(argv=None):
    parser = argparse.ArgumentParser(description="Train an MLP on two moons on device 'cpu'")
    parser.add_argument("--steps", type=int, default=30 if quick() else 300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    _, losses, accuracy = train(args.steps, args.seed)
    seconds = time.perf_counter() - t0
    print(f"MLP 2-32-32-2 on device 'cpu': loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
          f"training accuracy {accuracy:.3f}, {args.steps} steps in {seconds:.1f} s")
    log = write_loss_log(losses, "cpu_mlp_loss.csv")
    plot = loss_plot(losses, figures_dir() / "cpu_mlp_loss.png",
                     f"MLP on device 'cpu': cross-entropy, Adam ({args.steps} steps)")
    print(f"log: {log}\nloss plot: {plot}")
    return accuracy


if __name__ == "__main__":
    main()
