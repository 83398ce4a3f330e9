"""The names chapter's figures (thesis, "Bi-gram language modelling" and "Language
Modelling using Neural Networks"): the bigram count matrix with its character pairs, and
the MLP language model's loss curve."""
import numpy as np

from stage1_scalargrad.plots import save


def bigram_counts(counts, vocab, path, title=None):
    """The |V| x |V| count matrix as a grid: row = previous character, column = next; each
    cell shows its pair ("em") and its count, shaded by the count's square root (so the
    rare pairs still show next to the thousands of names that end in "n.")."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm
    counts = np.asarray(counts)
    n = len(vocab)
    fig, ax = plt.subplots(figsize=(0.62 * n, 0.62 * n))
    norm = PowerNorm(0.5, vmin=0, vmax=counts.max())
    ax.imshow(counts, cmap="Blues", norm=norm)
    for i, a in enumerate(vocab.chars):
        for j, b in enumerate(vocab.chars):
            dark = norm(counts[i, j]) > 0.6
            colour = "white" if dark else ("#b0b0b0" if counts[i, j] == 0 else "#303030")
            ax.text(j, i - 0.18, a + b, ha="center", va="center", fontsize=9, color=colour)
            ax.text(j, i + 0.22, f"{counts[i, j]}", ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(n), list(vocab.chars))
    ax.set_yticks(range(n), list(vocab.chars))
    ax.tick_params(length=0, labeltop=True, labelbottom=False)
    ax.set_xlabel("next character")
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("previous character")
    ax.set_title(title or f"Bigram counts: how often the column's character follows the row's "
                 f"({counts.sum():,} pairs; '.' = start or end of a name)", fontsize=12, pad=10)
    save(fig, path)
    if str(path).endswith(".png"):          # 729 cells of text: a 256-colour palette is a
        from PIL import Image               # third of the bytes and looks the same
        Image.open(path).convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE).save(path, optimize=True)
    return path


def window_means(values, window):
    """Mean of each run of ``window`` consecutive values (one point per window)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values) // window * window
    return values[:n].reshape(-1, window).mean(1) if n else values


def loss_curve(losses, path, window=1000, levels=None, title=None):
    """Training loss: the mean of every ``window`` steps, and a band from the 5th to the
    95th percentile of the steps in the window (one batch of 32 is a noisy estimate).
    ``levels`` ({label: loss}) adds dashed horizontal lines, e.g. the dev losses."""
    import matplotlib.pyplot as plt
    losses = np.asarray(losses, dtype=np.float64)
    window = max(1, min(window, len(losses) // 10 or 1))
    n = len(losses) // window * window
    blocks = losses[:n].reshape(-1, window)
    steps = (np.arange(len(blocks)) + 1) * window
    fig, ax = plt.subplots(figsize=(7.5, 4))
    low, high = np.percentile(blocks, [5, 95], axis=1)
    ax.fill_between(steps, low, high, color="#1f77b4", alpha=0.18, lw=0,
                    label="5th-95th percentile of the batch losses")
    ax.plot(steps, blocks.mean(1), color="#1f77b4", lw=1.4, label=f"training loss, {window}-step mean")
    for (label, value), colour in zip((levels or {}).items(), ("#d62728", "#2ca02c", "#7f7f7f")):
        ax.axhline(value, ls="--", lw=1, color=colour, label=f"{label}: {value:.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    top = min(float(high.max()), 3.4) if len(high) else 3.4
    ax.set_ylim(max(0.0, float(low.min()) - 0.1) if len(low) else 0, top + 0.05)
    ax.set_title(title or "MLP language model: training loss")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def embedding_map(weight, vocab, path, title=None):
    """The learned embedding table (|V|, E) projected on its two principal directions
    (numpy's SVD of the centred table, for looking at it only): characters the model
    treats alike land close together."""
    import matplotlib.pyplot as plt
    table = np.asarray(weight, dtype=np.float64)
    centred = table - table.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    xy = centred @ vt[:2].T
    share = (s[:2] ** 2).sum() / (s ** 2).sum()
    fig, ax = plt.subplots(figsize=(6, 5.5))
    vowels = set("aeiouy")
    for (x, y), c in zip(xy, vocab.chars):
        colour = "#d62728" if c in vowels else ("#2ca02c" if c == "." else "#1f77b4")
        ax.scatter(x, y, s=260, color=colour, alpha=0.25, lw=0)
        ax.text(x, y, c, ha="center", va="center", fontsize=11, color=colour, weight="bold")
    ax.set_xlabel("first principal direction")
    ax.set_ylabel("second principal direction")
    ax.set_title(title or f"Learned character embeddings, 2 of {table.shape[1]} dimensions "
                 f"({share:.0%} of the variance); vowels in red", fontsize=10)
    ax.grid(alpha=0.3)
    return save(fig, path)
