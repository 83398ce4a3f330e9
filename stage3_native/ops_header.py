"""The op codes of the native kernels, written from stage2's declaration (stage2_tensor/ops.py).

The C kernels (csrc/) and the CUDA ones (cuda/) switch on an op code that the Python side
passes. Both sides take it from the one declaration, by name: the builds (build.py,
cuda_build.py) write ``ops_generated.h`` into each source folder, one enum per kind whose
members are the names of its primitives and fused kernels in capitals (``NEG``, ``ADD``, ``EQ``, ``SUM``), and
cpu/backend.py and cuda/backend.py look codes up with ``ops.codes``. Beside each enum, a
list of the kind's ops as an X-macro (``TG_UNARY_OPS(X)`` expands to ``X(NEG, neg)
X(EXP, exp) ...``): a kernel writes its switch by expanding it, one case per op calling
that op's formula by name (csrc/elementwise_math.h's tg_neg_f32, ...), so no kernel lists
the ops itself. A switch written by hand over the enum has no default case, and
-Werror=switch turns an op it does not handle into a build error naming the op. The header is a build product (git ignores it): editing
ops.py makes the libraries stale (stage3_native._needs_build, cuda_build.is_stale), and
their rebuild writes it again.
"""
import importlib.util
from pathlib import Path

# The builds load this file by its path, outside the package (setup.py runs build.py so), so
# it reads the declaration by path too: ops.py imports nothing but the standard library.
DECLARATION = Path(__file__).resolve().parent.parent / "stage2_tensor" / "ops.py"
NAME = "ops_generated.h"


def _declaration():
    spec = importlib.util.spec_from_file_location("tracegrad_ops_declaration", DECLARATION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text():
    """The header: per kind an enum (``enum tg_unary_op { NEG, EXP, ... };``), its count
    (``#define TG_UNARY_COUNT 13``) and its X-macro (``#define TG_UNARY_OPS(X) X(NEG, neg) ...``)."""
    ops = _declaration()
    constants = [name.upper() for name in ops.names(*ops.KINDS, fused=True)]
    duplicated = sorted({c for c in constants if constants.count(c) > 1})
    if duplicated:          # C's enum constants share one namespace
        raise ValueError(f"stage2_tensor/ops.py: op names {duplicated} clash as C constants")
    lines = ["/* Generated from stage2_tensor/ops.py by stage3_native/ops_header.py: do not edit. */",
             "#ifndef TG_OPS_GENERATED_H", "#define TG_OPS_GENERATED_H", ""]
    for kind in ops.KINDS:
        members = [name.upper() for name in ops.names(kind, fused=True)]
        lines += [f"enum tg_{kind}_op {{ {', '.join(members)} }};",
                  f"#define TG_{kind.upper()}_COUNT {len(members)}",
                  f"#define TG_{kind.upper()}_OPS(X) "
                  + " ".join(f"X({name.upper()}, {name})" for name in ops.names(kind, fused=True))]
    return "\n".join(lines + ["", "#endif", ""])


def write(folder):
    """Write the header into ``folder`` unless it holds this text already (an unchanged
    header keeps its time stamp, so nothing that includes it looks edited)."""
    path = Path(folder) / NAME
    content = text()
    if not path.exists() or path.read_text() != content:
        path.write_text(content)
    return path
