"""The chatbot chapter's figure (thesis, "Chatbots"): a conversation with the fine-tuned
model drawn as a chat transcript (figures/chatbot_transcript.png), where the thesis shows
screenshots of GPT-3."""
import textwrap

from stage1_scalargrad.plots import save

USER, BOT = "#dbeafe", "#f1f5f9"          # bubble colours: the user's, the bot's


def transcript(turns, path, title, width=38):
    """``turns``: (question, answer, correct) triples; correct is True, False or None (not
    scored). Questions on the right, answers on the left, a tick or cross beside scored
    answers."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch
    lines = [(who, textwrap.wrap(text, width) or [""], mark)
             for q, a, mark in turns for who, text, mark in (("User", q, None), ("Bot", a, mark))]
    height = sum(len(wrapped) + 1.6 for _, wrapped, _ in lines) * 0.24 + 0.9
    fig, ax = plt.subplots(figsize=(7.5, height))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, height)
    ax.axis("off")
    ax.set_title(title, fontsize=11)
    y = height - 0.3
    for who, wrapped, mark in lines:
        box_h = len(wrapped) * 0.24 + 0.2
        left = 0.36 if who == "User" else 0.02
        ax.add_patch(FancyBboxPatch((left, y - box_h), 0.62, box_h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=USER if who == "User" else BOT, edgecolor="#94a3b8", lw=0.8))
        ax.text(left + 0.015, y - 0.12, f"{who}:", fontsize=8, color="#475569", va="top", weight="bold")
        ax.text(left + 0.11, y - 0.1, "\n".join(wrapped), fontsize=9, va="top", family="monospace",
                linespacing=1.35)
        if mark is not None:
            ax.text(left + 0.65, y - box_h / 2, "\u2713" if mark else "\u2717", fontsize=14, va="center",
                    color="#16a34a" if mark else "#dc2626")
        y -= box_h + 0.25
    save(fig, path)
    return path
