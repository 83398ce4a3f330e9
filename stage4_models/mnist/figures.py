"""The MNIST chapter's figures (thesis, "Mnist Training Example" and "Optimizing
optimizers"): the network's graph, loss curves, and a grid of classified test digits."""
import numpy as np

import stage2_tensor as tg
from stage1_scalargrad.plots import save
from stage2_tensor import viz

from .data import as_inputs
from .model import thesis_loss


def net_graph(model, images, labels, path):
    """Write the graph of MnistNet's forward pass and the thesis's loss on a batch to
    ``path`` (.svg or .png); returns the path."""
    x = tg.from_numpy(as_inputs(images), device=model.fc1.weight.device)
    onehot = tg.from_numpy(np.eye(10, dtype=np.float32)[labels], device=x.device)
    loss = thesis_loss(model(x), onehot)
    names = {"x": x, "onehot": onehot, "loss": loss, **dict(model.named_parameters())}
    return viz.save(viz.draw(loss, names=names), path)


def moving_average(values, window):
    """Mean of each run of ``window`` consecutive values (one point per window)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values) // window * window
    return values[:n].reshape(-1, window).mean(1) if n else values


def loss_curves(curves, path, title, average=100, logy=False):
    """{label: per-step losses} as lines; with ``average``, each point is the mean of that
    many steps (drawn at the window's last step)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for label, losses in curves.items():
        ys = moving_average(losses, average) if average else np.asarray(losses)
        step = average if average else 1
        ax.plot(np.arange(1, len(ys) + 1) * step, ys, lw=0.6 if not average else 1.2, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("loss" + (f" ({average}-step average)" if average else " (every step)"))
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(curves) > 1:
        ax.legend()
    return save(fig, path)


def inference_grid(model, images, labels, path, rows=4, cols=8):
    """Test digits with the predicted and the true label; wrong ones in red."""
    import matplotlib.pyplot as plt
    n = rows * cols
    with tg.no_grad():
        probs = model(tg.from_numpy(as_inputs(images[:n]), device=model.fc1.weight.device)).numpy()
    predicted = probs.argmax(1)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.1, rows * 1.35))
    for i, ax in enumerate(axes.flat):
        ax.imshow(images[i], cmap="gray", vmin=0, vmax=255)
        ok = predicted[i] == labels[i]
        ax.set_title(f"{predicted[i]} ({probs[i, predicted[i]]:.2f})\ntrue {labels[i]}", fontsize=8,
                     color="black" if ok else "#c0392b")
        ax.axis("off")
    fig.suptitle(f"MnistNet on the first {n} test images: predicted (probability), true label", fontsize=9)
    return save(fig, path)
