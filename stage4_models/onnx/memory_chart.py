"""The memory plan as a chart (chapter 13, "13_inference_compiler", section 5, "The memory
plan"): each buffer of a plan's arena (passes/memory.py) as a box from the step that writes it
to the last step that reads it, at its offset; a Concat's buffer split at the offsets of the
inputs written into it; the arena's peak as a line.
"""
import numpy as np


def memory_chart(memory, info, steps, path, title):
    """Draw ``memory`` (a plan's ``memory``: buffers, peak_bytes) to ``path`` and return it.
    ``info``: {value: (shape, itemsize)} of the plan (to size a Concat's slices); ``steps``:
    the plan's nodes, whose op types label the steps."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from stage1_scalargrad.plots import save
    if not memory.buffers:
        raise ValueError("memory_chart: the plan has no buffers to draw")
    fig, ax = plt.subplots(figsize=(10, 4.8))
    last = max(b.end for b in memory.buffers)       # the outputs live past the last step: to the end
    colours = plt.cm.tab10.colors
    for k, b in enumerate(memory.buffers):
        ax.add_patch(Rectangle((b.start - 0.45, b.offset / 1e3), b.end - b.start + 0.9, b.size / 1e3,
                               facecolor=colours[k % 10], alpha=0.55, edgecolor="black"))
        slices = [(name, off) for name, off in b.members if name != b.name]     # a Concat's buffer: its inputs
        for name, off in slices:
            shape, itemsize = info[name]
            ax.plot([b.start - 0.45, b.end + 0.45], [(b.offset + off) / 1e3] * 2, "k--", lw=0.8)
            ax.text((b.start + b.end) / 2, (b.offset + off + np.prod(shape) * itemsize / 2) / 1e3,
                    f"{name} (slice of {b.name})", ha="center", va="center", fontsize=8)
        if not slices:
            ax.text((b.start + b.end) / 2, (b.offset + b.size / 2) / 1e3, b.name, ha="center", va="center",
                    fontsize=8)
    ax.axhline(memory.peak_bytes / 1e3, color="#c03000", lw=1)
    ax.text(last + 0.6, memory.peak_bytes / 1e3, f" peak {memory.peak_bytes / 1e3:,.0f} kB", color="#c03000",
            va="bottom", ha="right", fontsize=8)
    ax.set_xlim(-0.7, last + 0.7)
    ax.set_ylim(0, memory.peak_bytes / 1e3 * 1.12)
    ax.set_xticks(range(last + 1), [f"{i}\n{steps[i].op_type if i < len(steps) else '(returned)'}"
                                    for i in range(last + 1)], fontsize=8)
    ax.set_xlabel("step (the op that runs)")
    ax.set_ylabel("offset in the arena (kB)")
    ax.set_title(title)
    return save(fig, path)
