"""Convolution speed of tracegrad (device "cpu", float32, im2col and one matrix product:
stage2_tensor/convolution.py, with the C window kernels of csrc/convolution.c and
pooling.c) against PyTorch on the CPU (pip install torch), in the same process, with the
same number of threads.

(a) conv2d forward and forward + backward at the MNIST CNN's two shapes, a U-net's
    (64 channels, 3x3, padding 1) and a ResNet's last two stages at 2x2 and 1x1: GFLOPS = 2 N C_out H_out W_out C_in K / seconds
    (backward counts twice the forward's work: input and weight gradients).
(b) One training step of PyTorch's MNIST example network (stage4_models/mnist/cnn.py;
    the same architecture written in PyTorch below), batch 64, Adadelta: steps per second.

Each figure is the median over rounds; in each round the two engines run one after the
other, the first alternating, so a busy neighbour slows both. Ratio = tracegrad / PyTorch.

    python benchmarks/conv.py [--rounds 5] [--threads 2]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402
import stage2_tensor.nn.functional as F  # noqa: E402
import stage3_native  # noqa: E402
from stage4_models.mnist.cnn import MnistCNN  # noqa: E402

SHAPES = {            # name: (N, C_in, H, W, C_out, k, padding)
    "MNIST conv1 (64, 1, 28, 28) -> 32": (64, 1, 28, 28, 32, 3, 0),
    "MNIST conv2 (64, 32, 26, 26) -> 64": (64, 32, 26, 26, 64, 3, 0),
    "U-net (4, 64, 64, 64) -> 64, pad 1": (4, 64, 64, 64, 64, 3, 1),
    # a ResNet-18's last two stages on MNIST-sized inputs (the siamese network example)
    "ResNet layer3 (64, 256, 2, 2) -> 256, pad 1": (64, 256, 2, 2, 256, 3, 1),
    "ResNet layer4 (64, 512, 1, 1) -> 512, pad 1": (64, 512, 1, 1, 512, 3, 1),
}


def seconds(fn, reps=3):
    fn()                                              # warm-up (tables, caches)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def conv_cases(torch):
    rng = np.random.default_rng(0)
    for name, (n, c, h, w, o, k, p) in SHAPES.items():
        x, wt = rng.normal(size=(n, c, h, w)).astype(np.float32), rng.normal(size=(o, c, k, k)).astype(np.float32)
        flops = 2 * n * o * (h + 2 * p - k + 1) * (w + 2 * p - k + 1) * c * k * k
        ours = [tg.from_numpy(a, device="cpu") for a in (x, wt)]
        theirs = [torch.tensor(a) for a in (x, wt)]
        for t in ours + theirs:
            t.requires_grad = True

        def step(engine_f, a, b, backward):
            y = engine_f(a, b, padding=p)
            if backward:
                y.sum().backward()
        for backward in (False, True):
            label = f"{name}{', fwd+bwd' if backward else ''}"
            yield label, flops * (3 if backward else 1), (
                lambda: step(F.conv2d, *ours, backward), lambda: step(torch.nn.functional.conv2d, *theirs, backward))


def torch_cnn(torch):
    nn, Fn = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
            self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = Fn.max_pool2d(Fn.relu(self.conv2(Fn.relu(self.conv1(x)))), 2)
            x = Fn.relu(self.fc1(self.dropout1(x).flatten(1)))
            return Fn.log_softmax(self.fc2(self.dropout2(x)), dim=1)
    return Net()


def training_steps(torch):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=64)
    ours, theirs = MnistCNN(device="cpu"), torch_cnn(torch)
    opt_ours, opt_theirs = tg.optim.Adadelta(ours.parameters()), torch.optim.Adadelta(theirs.parameters())
    xo, yo = tg.from_numpy(x, device="cpu"), tg.from_numpy(y, device="cpu")
    xt, yt = torch.tensor(x), torch.tensor(y)

    def ours_step():
        loss = F.nll_loss(ours(xo), yo)
        opt_ours.zero_grad()
        loss.backward()
        opt_ours.step()

    def theirs_step():
        loss = torch.nn.functional.nll_loss(theirs(xt), yt)
        opt_theirs.zero_grad()
        loss.backward()
        opt_theirs.step()
    return ours_step, theirs_step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("error: benchmarks/conv.py compares against PyTorch: pip install torch")
    stage3_native.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"conv2d and the MNIST CNN, float32, {args.threads} thread(s), median of {args.rounds} rounds; "
          f"PyTorch {torch.__version__}")
    print(f"  {'case':48} {'tracegrad':>10} {'PyTorch':>10} {'ratio':>7}")
    for label, flops, (ours, theirs) in conv_cases(torch):
        rates = {"ours": [], "theirs": []}
        for r in range(args.rounds):
            for who in (("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")):
                rates[who].append(flops / seconds(ours if who == "ours" else theirs, reps=1) / 1e9)
        a, b = statistics.median(rates["ours"]), statistics.median(rates["theirs"])
        print(f"  {label + ' GFLOPS':48} {a:10.1f} {b:10.1f} {a / b:7.2f}")
    ours, theirs = training_steps(torch)
    rates = {"ours": [], "theirs": []}
    for r in range(args.rounds):
        for who in (("ours", "theirs") if r % 2 == 0 else ("theirs", "ours")):
            rates[who].append(1 / seconds(ours if who == "ours" else theirs, reps=2))
    a, b = statistics.median(rates["ours"]), statistics.median(rates["theirs"])
    print(f"  {'MNIST CNN training step, batch 64, steps/s':48} {a:10.2f} {b:10.2f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
