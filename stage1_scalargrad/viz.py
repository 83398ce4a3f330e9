"""Drawing computation graphs with Graphviz (chapter 3 figures; stage2 reuses the helpers).

``to_dot`` returns DOT text and needs nothing installed; ``render`` turns DOT text into an
SVG or PNG with Graphviz's ``dot`` program, chosen by the path's suffix.
"""
import shutil
import subprocess
from pathlib import Path

from .backward import topological_order

INSTALL_HINT = "install Graphviz, e.g. `sudo apt-get install graphviz` (or `brew install graphviz`)"


def escape(text):
    """Text made safe inside a double-quoted DOT string or a record label."""
    out = str(text).replace("\\", "\\\\").replace('"', '\\"')
    for ch in "{}|<>":
        out = out.replace(ch, "\\" + ch)
    return out


def render(dot_text, path):
    """Write ``dot_text`` as an image at ``path`` (.svg or .png)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("svg", "png"):
        raise ValueError(f"render: path must end in .svg or .png, got {path.name!r}")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(f"render: Graphviz's `dot` program was not found on PATH; {INSTALL_HINT}")
    path.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=dot_text.encode(),
                            capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"render: dot failed: {result.stderr.decode(errors='replace').strip()}")
    return path


def to_dot(root, names=None, rankdir="LR"):
    """The graph below ``root``: a record node per Value (its data and grad) and an
    ellipse per operation. ``names`` maps Values to labels shown beside their numbers."""
    names = names or {}
    lines = ["digraph G {", f"  rankdir={rankdir};",
             '  node [fontname="Helvetica", fontsize=11];']
    number = {}                     # stable node ids: the same graph gives the same text
    for i, v in enumerate(topological_order(root)):
        number[v] = i
        label = f"data {v.data:.4g} | grad {v.grad:.4g}"
        if v in names:
            label = f"{escape(names[v])} | {label}"
        lines.append(f'  v{i} [shape=record, label="{{ {label} }}"];')
        if v.op is not None:
            lines.append(f'  op{i} [label="{escape(v.op.symbol)}", shape=ellipse, '
                         f'style=filled, fillcolor="#eef3fb"];')
            lines.append(f"  op{i} -> v{i};")
            for x in v.inputs:
                lines.append(f"  v{number[x]} -> op{i};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(root, path, names=None):
    """Render the graph below ``root`` to ``path`` (.svg or .png)."""
    return render(to_dot(root, names), path)
