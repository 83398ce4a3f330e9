"""The tokenizer's figure: a text cut into its tokens, each drawn as a box with its text
and id (chapter 8, figures/tokenizer_example.png)."""


def shown(text):
    """A token's text as a reader should see it: spaces as '␣', newlines as '↵'."""
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")


def draw_tokens(tokenizer, text, path, title=None, per_row=8):
    """Draw ``text``'s tokens (``per_row`` to a row) in boxes, token text above, id below,
    and save to ``path``. A token that is not whole UTF-8 (half of "ä") shows its bytes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch
    from stage1_scalargrad.plots import save

    ids = tokenizer.encode(text)
    labels = []
    for i in ids:
        data = tokenizer.token_bytes(i)
        try:
            labels.append(shown(data.decode("utf-8")))
        except UnicodeDecodeError:
            labels.append(" ".join(f"{b:02X}" for b in data))
    rows = [list(range(r, min(r + per_row, len(ids)))) for r in range(0, len(ids), per_row)]
    widths = [max(1.0, 0.16 * len(label) + 0.4) for label in labels]
    row_width = max(sum(widths[k] for k in row) + 0.15 * len(row) for row in rows)
    fig, ax = plt.subplots(figsize=(row_width + 0.4, 1.25 * len(rows) + (0.5 if title else 0.1)))
    colours = plt.get_cmap("Pastel1").colors
    for r, row in enumerate(rows):
        x, y = 0.0, -1.25 * r
        for k in row:
            w = widths[k]
            ax.add_patch(FancyBboxPatch((x, y), w, 0.8, boxstyle="round,pad=0.02,rounding_size=0.08",
                                        facecolor=colours[k % len(colours)], edgecolor="0.4", lw=0.8))
            ax.text(x + w / 2, y + 0.52, labels[k], ha="center", va="center", fontsize=11, family="DejaVu Sans Mono")
            ax.text(x + w / 2, y + 0.18, str(ids[k]), ha="center", va="center", fontsize=9, color="0.25")
            x += w + 0.15
    ax.set_xlim(-0.1, row_width + 0.1)
    ax.set_ylim(-1.25 * (len(rows) - 1) - 0.15, 0.95)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    return save(fig, path)
