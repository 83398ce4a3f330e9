"""The op codes of the native kernels, written from stage2's declaration (stage2_tensor/ops.py).

The C kernels (csrc/) and the CUDA ones (cuda/) switch on an op code that the Python side
passes. Both sides take it from the one declaration, by name: the builds (build.py,
cuda_build.py) write ``ops_generated.h`` into each source folder, one enum per kind whose
members are the names of its primitives and fused kernels in capitals (``NEG``, ``ADD``, ``EQ``, ``SUM``), and
cpu/backend.py and cuda/backend.py look codes up with ``ops.codes``. Beside each enum, a
list of the kind's ops as an X-macro (``TG_UNARY_OPS(X)`` expands to ``X(NEG, neg)
X(EXP, exp) ...``): a kernel writes its switch by expanding it, one case per op calling
that op's formula by name (csrc/elementwise_math.h's tg_neg_f32, ...), so no kernel lists
the ops itself. ``TG_UNARY_INTEGER_OPS(X)`` and ``TG_UNARY_FLOAT_ONLY_OPS(X)`` split the list by
``float_only``: an integer tensor never reaches a float_only op's kernel (stage2 converts it
first), so the integer kernels compile no loop for those. A switch written by hand over the enum has no default case, and
-Werror=switch turns an op it does not handle into a build error naming the op. The header is a build product (git ignores it): editing
ops.py makes the libraries stale (stage3_native._needs_build, cuda_build.is_stale), and
their rebuild writes it again.
"""
import importlib.util
import sys
from pathlib import Path

# The builds load this file by its path, outside the package (setup.py runs build.py so), so
# it reads the declaration by path too: ops.py imports nothing but the standard library.
DECLARATION = Path(__file__).resolve().parent.parent / "stage2_tensor" / "ops.py"
NAME = "ops_generated.h"
KERNELS_NAME = "kernels_generated.h"
ROOT = DECLARATION.parent.parent
# The C types and function suffixes of the dtypes a C kernel is written for (csrc/instantiate.h)
C_TYPES = {"bool": ("uint8_t", "u8"), "int32": ("int32_t", "i32"), "int64": ("int64_t", "i64"),
           "float32": ("float", "f32"), "float64": ("double", "f64")}


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
    def x_macro(name, members):
        return f"#define {name}(X) " + " ".join(f"X({m.upper()}, {m})" for m in members)
    for kind in ops.KINDS:
        members = ops.names(kind, fused=True)
        float_only = [name for name in members if ops.BY_NAME[name].float_only]
        lines += [f"enum tg_{kind}_op {{ {', '.join(m.upper() for m in members)} }};",
                  f"#define TG_{kind.upper()}_COUNT {len(members)}",
                  x_macro(f"TG_{kind.upper()}_OPS", members),
                  x_macro(f"TG_{kind.upper()}_INTEGER_OPS", [m for m in members if m not in float_only]),
                  x_macro(f"TG_{kind.upper()}_FLOAT_ONLY_OPS", float_only)]
    return "\n".join(lines + ["", "#endif", ""])


def _declared_kernels():
    """The kernel declarations (stage2_tensor/kernels/), which import only the standard
    library and stage2 itself."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from stage2_tensor.kernels import KERNELS
    return KERNELS


def kernel_text(cuda=False):
    """The C declarations of the kernels declared with ``native``: ``tg_NAME_f32`` ... for the
    C library (one per dtype it is written for), ``tg_cuda_NAME`` (the dtype's code first, a
    CUDA status returned) for the CUDA one."""
    lines = ["/* Generated from stage2_tensor/kernels/ by stage3_native/ops_header.py: do not edit. */",
             "#ifndef TG_KERNELS_GENERATED_H", "#define TG_KERNELS_GENERATED_H", ""]
    for k in _declared_kernels().values():
        if not k.native:
            continue
        if cuda:
            params = ", ".join(f"{ctype.replace('T *', 'void *')} {name}" for ctype, name in k.native_args)
            lines.append(f"int tg_cuda_{k.name}(int dtype, {params});")
            continue
        for dtype in k.c_dtypes or ("float32", "float64"):
            ctype_of, suffix = C_TYPES[getattr(dtype, "name", dtype)]
            params = ", ".join(f"{ctype.replace('T *', ctype_of + ' *')} {name}" for ctype, name in k.native_args)
            lines.append(f"{'int' if k.fails else 'void'} tg_{k.name}_{suffix}({params});")
    return "\n".join(lines + ["", "#endif", ""])


def _write(path, content):
    """Write ``content`` unless the file holds it already (an unchanged header keeps its time
    stamp, so nothing that includes it looks edited)."""
    if not path.exists() or path.read_text() != content:
        path.write_text(content)
    return path


def write(folder, cuda=False):
    """Write both headers into ``folder``: the op codes, and the kernels' declarations for
    the C library (or the CUDA one)."""
    _write(Path(folder) / KERNELS_NAME, kernel_text(cuda))
    return _write(Path(folder) / NAME, text())
