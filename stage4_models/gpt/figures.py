"""The GPT chapter's figures (thesis, "Training a GPT-like model"): the training loss with
the periodic train and validation estimates (figures/tinygpt2-lossplot.png and the
character model's curve), and one head's attention weights over a prompt
(figures/attention_matrix_gpt2.png)."""
import numpy as np

import stage2_tensor as tg
from stage1_scalargrad.plots import save


def loss_plot(losses, history, path, title, window=None):
    """Every step's training loss (faint), its running mean, and the evaluations (train
    and validation loss on fixed batches) as markers."""
    import matplotlib.pyplot as plt
    losses = np.asarray(losses, dtype=np.float64)
    window = window or max(1, len(losses) // 50)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    ax.plot(np.arange(len(losses)), losses, color="#1f77b4", alpha=0.25, lw=0.8, label="training loss (one batch)")
    if len(losses) >= window:
        mean = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window - 1, len(losses)), mean, color="#1f77b4", lw=1.8,
                label=f"mean of {window} steps")
    steps = [row["step"] for row in history]
    ax.plot(steps, [row["train"] for row in history], "o", color="#2ca02c", ms=5, label="train (fixed batches)")
    ax.plot(steps, [row["val"] for row in history], "s", color="#d62728", ms=5, label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, path)
    return path


@tg.no_grad()
def attention_weights(model, ids, layer, head):
    """The softmax weights (T, T) with which ``head`` of block ``layer`` mixes the values
    while the model reads ``ids``: row t is what position t takes from positions 0..t."""
    attn = model.transformer.h[layer].attn
    attn.keep_attention = True
    try:
        model.eval()
        device = model.transformer.wte.weight.device
        model(tg.tensor([ids], device=device))
        return np.array(attn.last_attention[0, head].numpy())
    finally:
        attn.keep_attention, attn.last_attention = False, None


def attention_matrix(weights, labels, path, title):
    """A (T, T) attention matrix with the tokens on both axes: query (the reading
    position) down, key (the position read) across."""
    import matplotlib.pyplot as plt
    T = len(labels)
    size = max(6.0, 0.2 * T + 2)
    fig, ax = plt.subplots(figsize=(size, size))
    image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=max(weights.max(), 1e-9))
    shown = [{"\n": "\\n", " ": "\u2423"}.get(s, s) for s in labels]     # newline and space made visible
    ax.set_xticks(range(T), shown, fontsize=7, rotation=90)
    ax.set_yticks(range(T), shown, fontsize=7)
    ax.set_xlabel("key: the position attended to")
    ax.set_ylabel("query: the position reading")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="attention weight")
    save(fig, path)
    return path
