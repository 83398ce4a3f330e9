"""Saving matplotlib figures reproducibly: the same run writes the same bytes, so
regenerating figures/ leaves git quiet unless something really changed."""
import matplotlib

matplotlib.rcParams["svg.hashsalt"] = "tracegrad"      # stable element ids in SVG output


def save(fig, path):
    """Write `fig` to `path` (format from the suffix) without timestamps, then close it."""
    import matplotlib.pyplot as plt
    metadata = {"Date": None} if str(path).endswith((".svg", ".pdf")) else {}
    fig.savefig(path, bbox_inches="tight", dpi=120, metadata=metadata)
    plt.close(fig)
    return path


def loss_plot(losses, path, title, ylabel="loss", logy=True):
    """A training curve: one point per logged step."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(len(losses)), losses, lw=1)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return save(fig, path)
