"""Code generation for fused kernels (chapter 11, lazy execution and kernel fusion).

A chain of element-wise ops run eagerly writes every intermediate to memory and reads it
back: gelu_tanh(x * w + b) is three kernels and two temporary tensors. Fused, it is one C
function that walks the result once and computes the whole chain per element, each
intermediate a local variable (a register). This module writes that function from the
records in expr.py, compiles it with cffi, and caches the library on disk by the hash of
its source, so a kernel is compiled once per machine rather than once per process.

Exactness. The fused kernel computes what the eager kernels compute, bit for bit:

- each op is the eager kernels' own function, tg_NAME_f32/_f64/_i64 of csrc/elementwise_math.h
  (pasted in whole, which calls csrc/vmath.h's tg_expf, ...), in the eager compute type:
  float for float32, double for float64, int64 for integers;
- each intermediate is rounded to its dtype, as the eager kernel rounds when it stores it;
- the function is compiled with the eager library's flags and TG_SIMD (csrc/simd.h), once
  per SIMD level, and its dispatch reads the eager library's level (jit.py points it
  there), so it runs the same instruction set as the eager kernels, FMA included, at
  every level and after any switch (cpu_backend.use_simd_level);
- one thing the eager kernels get from memory has to be said explicitly: gcc contracts a
  multiply whose result feeds an add into one fused multiply-add (-ffp-contract=fast, the
  GNU C default), which rounds once instead of twice. Eagerly, x * w is stored before + b
  reads it, so nothing is contracted across ops; fused, both sit in registers and gcc
  would contract them. Every float intermediate that another op reads therefore passes
  through tg_keep (below): a bitwise OR with a zero the compiler cannot see, one vector
  instruction, which the contraction cannot look through. The loop still vectorizes.
  A value that several ops read reaches each reader after the first through a keep of
  its own zero, so gcc does not merge what the readers compute alike (gelu and gelu_grad
  of one x both compute Phi(x)): merged code contracts differently. The value a sum
  reads is kept as well: it goes through a buffer on the stack, but gcc sees through the
  buffer when a row is short (its length is a constant) and would contract a last multiply
  into the lanes' additions (LayerNorm's variance over rows of 128 did; with
  -ffp-contract=off it did not).

What stays open: a NaN's sign and payload (which operand an instruction passes on; the
tests compare NaNs as NaNs). And gcc contracts a vectorized loop (conditions turned into
selects, one basic block) more than its scalar version (conditions stay branches), so
vmath.h's float32 functions can differ in the last bit between a vectorized and a scalar
loop, in the eager kernels too (their scalar epilogue). A fused float32 loop that calls
something gcc cannot vectorize (logf, powf) runs scalar throughout, and then its tg_gelu_f32
and friends may differ from the eager vectorized ones by an ulp; the tests group float32
ops the way the eager loops vectorize.

Layouts. Strides are baked into the source (the shapes of a training step repeat, so a
kernel is reused every step); offsets are arguments. Dimensions that every operand walks
as one are merged first (tg_collapse's rule). If one dimension remains and every operand is
contiguous or a single value, the kernel is one flat loop over i (the fast path, which gcc
vectorizes); otherwise it loops over rows, the innermost dimension with constant strides,
and moves between rows with the thesis's index increment (csrc/strided.h's tg_step).
Above TG_PARALLEL_MIN elements, OpenMP threads take contiguous slices, as the eager
kernels do (csrc/parallel.h).

Reductions (sum, max, min over trailing dimensions) evaluate the expression for a block of
1024 elements of a row into a buffer on the stack (L1, never main memory), then reduce it
with the eager row kernel's own order of additions (csrc/reduce_t.h: 16 float lanes per
block of 1024, blocks added in double), so a float32 sum also matches bit for bit. Each
row is reduced on one thread (the eager kernel splits a row among threads when there are
fewer rows than threads can share, and then adds in another order): the reduced dimensions
must merge into one (contiguous rows, or any single stride), else NotImplementedError.
row_function writes that per-row code; rows.py's row kernels (several reductions and
element-wise outputs per row) use it too.

Compiling, caching and loading are jit.py's.
"""
import math
import struct
from pathlib import Path

from stage2_tensor import ops
from stage2_tensor.strides import numel

from . import jit
from .expr import (
    COMPARISONS,
    DTYPES,
    REDUCTIONS,
    Const,
    Input,
    Op,
    Product,
    RowValue,
)

HERE = Path(__file__).resolve().parent
CSRC = HERE.parent / "csrc"

CTYPE = {"bool": "uint8_t", "int32": "int32_t", "int64": "int64_t", "float32": "float", "float64": "double"}
# The type an op computes in (elementwise_t.h's C), and reductions accumulate in (W)
COMPUTE = {"bool": "int64_t", "int32": "int64_t", "int64": "int64_t", "float32": "float", "float64": "double"}
WIDE = {"bool": "int64_t", "int32": "int64_t", "int64": "int64_t", "float32": "double", "float64": "double"}
FLOATS = ("float32", "float64")

# The suffix of an op's function in elementwise_math.h for each compute type: every declared
# op is tg_NAME_f32, tg_NAME_f64 and tg_NAME_i64 there, so the generated source names the
# function that runs (tg_exp_f32(t0)) from the op's name alone.
SUFFIX = {"float": "f32", "double": "f64", "int64_t": "i64"}


def _eager_helpers():
    """csrc/elementwise_math.h, the eager kernels' math helpers (tg_div_i64, tg_pow_i64, tg_sigmoid_f32,
    gelu, ...), pasted whole: the fused kernel calls the very functions the eager one
    does, and editing them changes every kernel's hash."""
    return (CSRC / "elementwise_math.h").read_text()


PREAMBLE_HEAD = """\
#include <math.h>
#include "parallel.h"
#include "simd.h"
#include "strided.h"
#include "vmath.h"

/* The SIMD level the TG_SIMD functions below dispatch on: generic until jit.py points
 * this at the eager library's own (csrc/simd.c), as it does when it loads the library. */
static const int tg_simd_generic = TG_SIMD_GENERIC;
const int *tg_simd_current = &tg_simd_generic;
"""

KEEP = """
/* tg_keep: x unchanged, but through a bitwise OR with tg_zero, which the compiler cannot
 * know is 0. A multiply feeding an add across two ops is then not contracted into one FMA,
 * which would round once where the eager kernels (storing between ops) round twice. */
static volatile uint64_t tg_zero = 0;
TG_INLINE float tg_keep_f(float x, uint64_t z) { return tg_bits_float(tg_float_bits(x) | (uint32_t)z); }
TG_INLINE double tg_keep_d(double x, uint64_t z) {
    uint64_t u;
    memcpy(&u, &x, 8);
    u |= z;
    memcpy(&x, &u, 8);
    return x;
}
"""

_PREAMBLE = None


def preamble():
    global _PREAMBLE
    if _PREAMBLE is None:
        _PREAMBLE = PREAMBLE_HEAD + "\n" + _eager_helpers() + KEEP
    return _PREAMBLE


# ---- the expression, per element ----------------------------------------------------------

def constant(value, dtype):
    """A C literal of exactly the value a tensor of dtype would hold."""
    if dtype in FLOATS:
        value = float(value)
        if dtype == "float32":
            value = struct.unpack("f", struct.pack("f", value))[0]
        suffix = "f" if dtype == "float32" else ""
        if math.isnan(value):
            return f"({CTYPE[dtype]})NAN"
        if math.isinf(value):
            return f"({'-' if value < 0 else ''}({CTYPE[dtype]})INFINITY)"
        text = repr(value)                  # shortest repr that reads back as the same double
        return f"({text}{suffix})" if value < 0 else f"{text}{suffix}"
    if dtype == "bool":
        return "1" if value else "0"
    return f"INT64_C({int(value)})"


def topological(roots):
    """The Op nodes reachable from roots, each after its arguments; equal nodes once."""
    order, seen = [], set()

    def visit(node):
        if node in seen:
            return
        seen.add(node)
        if isinstance(node, Op):
            for arg in node.args:
                visit(arg)
        order.append(node)
    for root in roots:
        visit(root)
    return order


def expression(node, names):
    """The C expression of one Op on its arguments' locals, in the eager compute type."""
    args = [names[a] for a in node.args]
    c = COMPUTE[node.dtype]
    name = node.op
    if name == "cast":
        src = node.args[0].dtype
        if src == node.dtype or (src == "int64" and node.dtype == "int64"):
            return args[0]
        # copy.c converts through double; to bool: nonzero
        if node.dtype == "bool":
            return f"(double){args[0]} != 0"
        return f"({CTYPE[node.dtype]})(double){args[0]}"
    if name == "where":
        return f"{args[0]} ? {args[1]} : {args[2]}"
    if name in COMPARISONS:       # in the operands' compute type, which holds them exactly
        c = COMPUTE[node.args[0].dtype]
    if name not in ops.BY_NAME:
        raise ValueError(f"codegen: unknown op {name!r}")
    return f"tg_{name}_{SUFFIX[c]}({', '.join(args)})"


def check_node(node, n_operands):
    if node.dtype not in DTYPES:
        raise ValueError(f"unknown dtype {node.dtype!r} in {node}")
    if isinstance(node, Input) and not 0 <= node.index < n_operands:
        raise ValueError(f"Input({node.index}) but the kernel has {n_operands} operands")


def element_body(spec_operands, roots, load, indent, leaf=None, invariant=None, outer=None):
    """The statements computing every node of roots for one element: a list of C lines, the
    name of each root's local, and how many opaque zeros (z[0], z[1], ...) they use.
    load(k) is operand k's element expression; leaf(node) that of any other leaf (a
    RowValue, a Product), for the kernels that have them.

    Two kinds of tg_keep. A float Op that other ops read is kept at once (z[0]), so no
    multiply-add is contracted across it. And a float value read by several ops reaches
    each reader after the first through a keep of its own zero: otherwise gcc would merge
    the computations the readers share (gelu and gelu_grad of one x both compute Phi(x)),
    and merged code contracts differently from the eager loops, which each run alone.

    Hoisting, for the loops over one row: ``invariant(leaf)`` says whether a leaf (an
    Input, a RowValue) has one value for the whole loop. A node whose leaves all do, and
    whose op is one IEEE rounds exactly (HOISTED: the same result scalar or vectorized), is
    computed once before the loop: its lines go to the list ``outer`` (not indented).
    LayerNorm's mean = row0 / n and std = sqrt(row1 / n + eps) are then one division and
    one square root per row, as eagerly (a (rows, 1) tensor each), not per element."""
    body, names, hoisted = [], {}, set()
    nodes = topological(roots)
    readers = {}
    for node in nodes:
        if isinstance(node, Op):
            for arg in node.args:
                readers[arg] = readers.get(arg, 0) + 1
    zeros, seen = [1], {}

    def keep(local, dtype, z):
        fn = "tg_keep_f" if dtype == "float32" else "tg_keep_d"
        return f"{fn}({local}, z[{z}])"
    for node in nodes:
        check_node(node, len(spec_operands))
        local = f"t{len(names)}"
        c = COMPUTE[node.dtype]
        lines = body
        if invariant is not None and _hoistable(node, invariant, hoisted):
            hoisted.add(node)
            lines = outer
        if isinstance(node, Input):
            operand = spec_operands[node.index]
            if operand.dtype != node.dtype:
                raise TypeError(f"Input({node.index}) is {node.dtype} but operand {node.index} is {operand.dtype}")
            lines.append(f"{c} {local} = {load(node.index)};")
        elif isinstance(node, Const):
            lines.append(f"{c} {local} = {constant(node.value, node.dtype)};")
        elif not isinstance(node, Op):
            if leaf is None:
                raise TypeError(f"{node} is not a leaf of this kernel")
            lines.append(f"{c} {local} = {leaf(node)};")
        else:
            arg_names = {}
            for arg in node.args:
                if arg in arg_names:
                    continue
                arg_names[arg] = names[arg]
                count = seen[arg] = seen.get(arg, 0) + 1
                if count > 1 and arg.dtype in FLOATS and not isinstance(arg, Const):
                    copy = f"{names[arg]}_{count}"
                    lines.append(f"{COMPUTE[arg.dtype]} {copy} = {keep(names[arg], arg.dtype, zeros[0])};")
                    zeros[0] += 1
                    arg_names[arg] = copy
            code = expression(node, arg_names)
            if COMPUTE[node.dtype] != CTYPE[node.dtype] or node.op == "cast":
                code = f"({CTYPE[node.dtype]})({code})"     # rounded to its dtype, as stored
            lines.append(f"{c} {local} = {code};  /* {node.op} */")
            if node.dtype in FLOATS and readers.get(node):
                lines.append(f"{local} = {keep(local, node.dtype, 0)};")
        names[node] = local
    return [indent + line for line in body], [names[r] for r in roots], zeros[0]


# Ops whose result is the same computed once (scalar) or per element (vectorized): those
# IEEE rounds exactly. vmath.h's exp, tanh, ... may differ in the last bit between a scalar
# and a vectorized loop (see "Exactness"), so they stay in the loop.
HOISTED = frozenset({"add", "sub", "mul", "div", "sqrt", "neg"})


def _hoistable(node, invariant, hoisted):
    """Whether node has one value for the whole loop and may be computed before it."""
    if isinstance(node, Const):
        return True
    if isinstance(node, Op):
        return node.op in HOISTED and all(a in hoisted for a in node.args)
    return bool(invariant(node))


# ---- layouts ------------------------------------------------------------------------------

def collapse(shape, strides_list):
    """csrc/strided.h's tg_collapse in Python: drop size-1 dimensions and merge neighbours
    that every operand (strides_list: one strides tuple per operand) walks as one."""
    kept_shape, kept = [], [[] for _ in strides_list]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if kept_shape and all(s[-1] == st[d] * size for s, st in zip(kept, strides_list)):
            kept_shape[-1] *= size
            for s, st in zip(kept, strides_list):
                s[-1] = st[d]
        else:
            kept_shape.append(size)
            for s, st in zip(kept, strides_list):
                s.append(st[d])
    return tuple(kept_shape), [tuple(s) for s in kept]


def c_array(values):
    return "{" + ", ".join(str(v) for v in values) + "}"


def ops_summary(roots):
    return ", ".join(n.op for n in topological(roots) if isinstance(n, Op)) or "copy"


def describe(node):
    """A node as a short formula, for the comment above the generated function."""
    if isinstance(node, Input):
        return f"in{node.index}"
    if isinstance(node, Const):
        return repr(node.value)
    if isinstance(node, RowValue):
        return f"row{node.index}"
    if isinstance(node, Product):
        return "product"
    return f"{node.op}({', '.join(describe(a) for a in node.args)})"


def zero_lines(n):
    """The opaque zeros tg_keep ORs in: each read from the volatile tg_zero, so the compiler
    knows neither that they are 0 nor that they are equal."""
    return [f"    uint64_t z[{n}];", f"    for (int k = 0; k < {n}; k++) z[k] = tg_zero;"]


def simd_function(ret, name, params):
    """The head of a TG_SIMD function (csrc/simd.h): its parameters, then the same names as
    arguments (each parameter's last word, without its pointer stars)."""
    args = ", ".join(p.split()[-1].lstrip("*") for p in params)
    return f"TG_SIMD({ret}, {name}, ({', '.join(params)}), ({args})) {{"


def signature(name):
    return f"void {name}(void *const *outs, const void *const *ins, const int64_t *offsets)"


def operand_pointers(operands, out_dtypes):
    lines = [f"    const {CTYPE[o.dtype]} *in{k} = (const {CTYPE[o.dtype]} *)ins[{k}] + offsets[{k}];"
             for k, o in enumerate(operands)]
    lines += [f"    {CTYPE[d]} *out{j} = outs[{j}];" for j, d in enumerate(out_dtypes)]
    return lines


def range_params(operands, out_dtypes):
    params = [f"const {CTYPE[o.dtype]} *restrict in{k}" for k, o in enumerate(operands)]
    params += [f"{CTYPE[d]} *restrict out{j}" for j, d in enumerate(out_dtypes)]
    return params + ["const uint64_t *restrict z"]


def range_args(operands, out_dtypes):
    return ", ".join([f"in{k}" for k in range(len(operands))] + [f"out{j}" for j in range(len(out_dtypes))]
                     + ["z"])


def generate_elementwise(spec, name):
    """The C function (without the preamble) for an ElementwiseSpec, and the path it takes."""
    shape, operands, roots = tuple(spec.shape), tuple(spec.operands), tuple(spec.outputs)
    if not roots:
        raise ValueError("an ElementwiseSpec needs at least one output")
    for o in operands:
        if len(o.strides) != len(shape):
            raise ValueError(f"operand strides {o.strides} do not match shape {shape}")
    dims, strides = collapse(shape, [o.strides for o in operands])
    out_dtypes = [r.dtype for r in roots]
    contiguous = len(dims) <= 1 and all(s[0] in (0, 1) for s in strides if s)
    n = numel(shape)
    lines = [(f"/* {name}: {len(roots)} output(s) over shape {shape}, "
              f"{'contiguous' if contiguous else 'strided'} path"),
             f" * fused: {ops_summary(roots)}"]
    lines += [f" * out{j} = {describe(r)}" for j, r in enumerate(roots)]
    lines += [" */"]
    params = ["i64 lo", "i64 hi", *range_params(operands, out_dtypes)]
    lines.append(simd_function("void", f"{name}_range", params))
    if contiguous:
        # one flat loop: every operand is read at i (contiguous) or at 0 (a single value)
        def load(k):
            return f"in{k}[i]" if strides[k] and strides[k][0] == 1 else f"in{k}[0]"
        body, results, n_zeros = element_body(operands, roots, load, "        ")
        lines.append("    for (i64 i = lo; i < hi; i++) {")
        lines += body
        lines += [f"        out{j}[i] = {r};" for j, r in enumerate(results)]
        lines.append("    }")
    else:
        nd, m = len(dims), dims[-1]
        last = [s[-1] for s in strides]

        def load(k):
            step = "" if last[k] == 0 else "(col + j)" if last[k] == 1 else f"(col + j) * {last[k]}"
            return f"in{k}[p{k}{' + ' + step if step else ''}]"
        body, results, n_zeros = element_body(operands, roots, load, "            ")
        lines.append(f"    /* rows of {m} elements; the {nd - 1} outer dimension(s) {dims[:-1]} walked by the index increment */")
        if nd > 1:
            lines.append(f"    static const i64 shape[{nd - 1}] = {c_array(dims[:-1])};")
            for k, s in enumerate(strides):
                lines.append(f"    static const i64 stride{k}[{nd - 1}] = {c_array(s[:-1])};")
            lines.append(f"    i64 idx[{nd - 1}], row = lo / {m};")
        lines.append(f"    i64 col = lo % {m}{''.join(f', p{k} = 0' for k in range(len(operands)))};")
        if nd > 1:
            lines.append(f"    for (int d = {nd - 2}; d >= 0; d--) {{          /* unravel the first row */")
            lines.append("        idx[d] = row % shape[d];")
            lines.append("        row /= shape[d];")
            lines += [f"        p{k} += idx[d] * stride{k}[d];" for k in range(len(operands))]
            lines.append("    }")
        lines.append("    for (i64 i = lo; i < hi; col = 0) {")
        lines.append(f"        i64 len = {m} - col < hi - i ? {m} - col : hi - i;")
        lines.append("        for (i64 j = 0; j < len; j++) {")
        lines += body
        lines += [f"            out{j}[i + j] = {r};" for j, r in enumerate(results)]
        lines.append("        }")
        lines.append("        i += len;")
        if nd > 1:
            lines.append("        for (int d = " + str(nd - 2) + "; d >= 0; d--) {   /* tg_step over the outer dimensions */")
            lines.append("            if (++idx[d] < shape[d]) {")
            lines += [f"                p{k} += stride{k}[d];" for k in range(len(operands))]
            lines.append("                break;")
            lines.append("            }")
            lines.append("            idx[d] = 0;")
            lines += [f"            p{k} -= stride{k}[d] * (shape[d] - 1);" for k in range(len(operands))]
            lines.append("        }")
        lines.append("    }")
    lines.append("}")
    lines.append("")
    lines.append(signature(name) + " {")
    lines += operand_pointers(operands, out_dtypes)
    lines += zero_lines(n_zeros)
    lines.append(f"    const i64 n = {n};")
    lines.append("    if (n == 0) return;")
    lines.append("    if (n < TG_PARALLEL_MIN || tg_thread_count() == 1) {")
    lines.append(f"        {name}_range(0, n, {range_args(operands, out_dtypes)});")
    lines.append("        return;")
    lines.append("    }")
    lines.append("    #pragma omp parallel")
    lines.append("    {")
    lines.append("        i64 lo, hi;")
    lines.append("        tg_thread_range(n, 16, &lo, &hi);")
    lines.append(f"        if (lo < hi) {name}_range(lo, hi, {range_args(operands, out_dtypes)});")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n", "contiguous" if contiguous else "strided"


SUM_BLOCK, SUM_LANES, LANES = 1024, 16, 32      # reduce.c's TG_SUM_BLOCK, TG_SUM_LANES, TG_LANES


def check_reduction(op, t, out_dtype):
    """A reduction the eager kernel has: sum, max or min of t's values, stored as out_dtype."""
    if op not in REDUCTIONS:
        raise ValueError(f"reduce op {op!r}: expected one of {REDUCTIONS}")
    if (t in FLOATS) != (out_dtype in FLOATS) or t == "bool":
        raise TypeError(f"reduce: {t} values into {out_dtype} (the eager kernel stores a float "
                        f"sum as a float dtype and an integer one as an integer dtype)")


def split_rows(shape, operands, dims):
    """The kept shape (the leading dims), the length m of a row (the trailing ``dims`` dims,
    merged into one) and each operand's stride along the row (0: one value per row)."""
    if not 0 < dims <= len(shape):
        raise ValueError(f"cannot reduce the last {dims} dims of shape {shape}")
    for o in operands:
        if len(o.strides) != len(shape):
            raise ValueError(f"operand strides {o.strides} do not match shape {shape}")
    split = len(shape) - dims
    inner, inner_strides = collapse(shape[split:], [o.strides[split:] for o in operands])
    if len(inner) > 1:
        raise NotImplementedError("fused reduce: the reduced dimensions must merge into one for "
                                  f"every operand (got {inner} after merging)")
    m = inner[0] if inner else numel(shape[split:])
    return shape[:split], m, [s[0] if s else 0 for s in inner_strides]


def row_function(fname, operands, expr, op, m, step, extra=(), leaf=None, inline=False):
    """A TG_SIMD C function ``W fname(in0, ..., pos, extra..., z)``: ``op`` over one row of m
    elements of ``expr`` (operand k's row starts at pos[k] and steps by step[k]), in the
    eager row order, returned in the wide type W (double for floats, int64 for integers).
    extra: more parameters (a row kernel's earlier row values), which leaf(node) may name.
    With ``inline``, a plain inline function instead, for a TG_SIMD caller to inline (it
    then compiles at the caller's instruction set). Returns the lines and how many opaque
    zeros the expression uses."""
    t = expr.dtype
    c, w, ct = COMPUTE[t], WIDE[t], CTYPE[t]
    is_nan = "isnan" if t in FLOATS else "0 &&"

    def load(k):
        s = step[k]
        return f"in{k}[p{k}{'' if s == 0 else ' + start + j' if s == 1 else f' + (start + j) * {s}'}]"
    outer = []      # what is the same for the whole row: computed before the loop
    body, (result,), n_zeros = element_body(operands, (expr,), load, "            ", leaf,
                                            lambda n: row_invariant(n, step), outer)
    params = [f"const {CTYPE[o.dtype]} *restrict in{k}" for k, o in enumerate(operands)]
    params += ["const i64 *pos", *extra, "const uint64_t *restrict z"]
    lines = [f"TG_INLINE {w} {fname}({', '.join(params)}) {{" if inline else simd_function(w, fname, params)]
    lines += [f"    const i64 p{k} = pos[{k}];" for k in range(len(operands))]
    lines += ["    " + line for line in outer]
    lines.append(f"    {ct} buf[{SUM_BLOCK}];    /* one block of the row's values: stays in L1 */")
    if op == "sum":
        lines.append(f"    {w} total = 0;")
    else:
        better = ">" if op == "max" else "<"
        lines.append(f"    {ct} acc[{LANES}], r = 0;")
        lines.append(f"    const i64 full = {m} >= {LANES} ? {m} / {LANES} * {LANES} : 0;   /* elements the lanes take */")
    lines.append(f"    for (i64 start = 0; start < {m}; start += {SUM_BLOCK}) {{")
    lines.append(f"        const i64 len = {m} - start < {SUM_BLOCK} ? {m} - start : {SUM_BLOCK};")
    lines.append("        for (i64 j = 0; j < len; j++) {")
    lines += body
    if op == "sum" and t in FLOATS:     # see below: no multiply contracted into the lanes' adds
        result = f"{'tg_keep_f' if t == 'float32' else 'tg_keep_d'}({result}, z[0])"
    lines.append(f"            buf[j] = {result};")
    lines.append("        }")
    if op == "sum":
        lines += [
            f"        /* reduce_t.h's sum_row: {SUM_LANES} accumulators, halved, then the rest in {w} */",
            f"        {c} lane[{SUM_LANES}] = {{0}};",
            "        i64 i = 0;",
            f"        for (; i + {SUM_LANES} <= len; i += {SUM_LANES})",
            f"            for (int l = 0; l < {SUM_LANES}; l++) lane[l] += ({c})buf[i + l];",
            f"        for (int h = {SUM_LANES // 2}; h > 0; h /= 2)",
            "            for (int l = 0; l < h; l++) lane[l] += lane[l + h];",
            f"        {w} sum = ({w})lane[0];",
            f"        for (; i < len; i++) sum += ({w})buf[i];",
            "        total += sum;",
            "    }",
            "    return total;",
        ]
    else:
        nan_v = f"{is_nan}(v)"
        lines += [
            f"        /* reduce_t.h's extreme_loop, carried across blocks: {LANES} running {op}ima",
            "         * over whole groups of the row, then halved, then the rest one by one */",
            "        i64 j = 0;",
            "        if (start == 0 && full) {          /* the lanes start as the row's first elements */",
            f"            for (int l = 0; l < {LANES}; l++) acc[l] = buf[l];",
            f"            j = {LANES};",
            "        }",
            "        const i64 stop = full - start < len ? full - start : len;   /* lanes' part of this block */",
            f"        for (; j < stop; j += {LANES})",
            f"            for (int l = 0; l < {LANES}; l++) {{",
            f"                {ct} v = buf[j + l];",
            f"                acc[l] = v {better} acc[l] || {nan_v} ? v : acc[l];",
            "            }",
            f"        if (start + len < {m}) continue;",
            "        if (full) {",
            f"            for (int h = {LANES // 2}; h > 0; h /= 2)",
            "                for (int l = 0; l < h; l++) {",
            f"                    {ct} v = acc[l + h];",
            f"                    acc[l] = v {better} acc[l] || {nan_v} ? v : acc[l];",
            "                }",
            "            r = acc[0];",
            "        } else {",
            "            r = buf[0];",
            "        }",
            "        for (; j < len; j++) {",
            f"            {ct} v = buf[j];",
            f"            if (v {better} r || ({nan_v} && !{is_nan}(r))) r = v;",
            "        }",
            "    }",
            f"    return ({w})r;",
        ]
    lines.append("}")
    return lines, n_zeros


def row_invariant(leaf, step):
    """element_body's ``invariant`` for a loop over a row: an operand the row does not step
    through (step 0: a value per row), or a row value (RowValue: a reduction's result)."""
    if isinstance(leaf, Input):
        return step[leaf.index] == 0
    return isinstance(leaf, RowValue)


def rows_entry(name, operands, out_dtypes, n_zeros, kept_shape, m):
    """The head of generate_reduce's entry function: the signature, operand and output pointers, the opaque zeros, and the loop over rows o
    (OpenMP threads take whole rows) down to pos[k], operand k's first element of row o.
    The caller writes the loop's body and closes the loop and the function."""
    n_rows = numel(kept_shape)
    tables, position = row_positions(kept_shape, operands)
    return ([signature(name) + " {"] + operand_pointers(operands, out_dtypes) + zero_lines(n_zeros) + tables
            + [f"    #pragma omp parallel for schedule(static) if ({n_rows} * {max(m, 1)} >= TG_PARALLEL_MIN && tg_thread_count() > 1)",
               f"    for (i64 o = 0; o < {n_rows}; o++) {{"] + position)


def row_positions(kept_shape, operands, indent="        ", declare=True):
    """The statements that set pos[k], operand k's first element of row o (kept dims of any
    strides, unravelled from o), inside a loop over o; the static tables they read go before
    the loop (returned first). With ``declare``, they declare pos, zeroed; without, they add
    to a zeroed pos the caller passes."""
    nk = len(kept_shape)
    tables = []
    if nk:
        tables.append(f"    static const i64 shape[{nk}] = {c_array(kept_shape)};")
        for k, o in enumerate(operands):
            tables.append(f"    static const i64 stride{k}[{nk}] = {c_array(o.strides[:nk])};")
    lines = [f"i64 pos[{max(len(operands), 1)}] = {{0}}, rest = o;    /* each operand's first element of row o */"
             if declare else "i64 rest = o;"]
    if nk:
        lines.append(f"for (int d = {nk - 1}; d >= 0; d--) {{")
        lines.append("    i64 id = rest % shape[d];")
        lines.append("    rest /= shape[d];")
        lines += [f"    pos[{k}] += id * stride{k}[d];" for k in range(len(operands))]
        lines.append("}")
    lines.append("(void)rest;")
    return tables, [indent + line for line in lines]


def generate_reduce(spec, name):
    """The C function for a ReduceSpec: per kept position, the expression over the reduced
    elements, a block at a time into a stack buffer, reduced in the eager row order."""
    shape, operands, root = tuple(spec.shape), tuple(spec.operands), spec.expr
    t, out_dtype = root.dtype, spec.out_dtype or root.dtype
    check_reduction(spec.op, t, out_dtype)
    kept_shape, m, step = split_rows(shape, operands, spec.dims)
    if m == 0 and spec.op != "sum":
        raise RuntimeError(f"{spec.op}: cannot reduce over an empty dimension (shape {shape})")
    n_out = numel(kept_shape)
    lines = [(f"/* {name}: {spec.op} over the last {spec.dims} dim(s) of shape {shape}, "
              f"{n_out} result(s) of {m} elements"),
             f" * fused: {ops_summary((root,))}, then {spec.op}",
             f" * out0 = {spec.op}({describe(root)})",
             " */"]
    row, n_zeros = row_function(f"{name}_row", operands, root, spec.op, m, step)
    lines += row
    lines.append("")
    lines += rows_entry(name, operands, [out_dtype], n_zeros, kept_shape, m)
    args = ", ".join([f"in{k}" for k in range(len(operands))] + ["pos", "z"])
    lines.append(f"        out0[o] = ({CTYPE[out_dtype]}){name}_row({args});")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n", "rows"


def compile_elementwise(spec):
    """The fused element-wise kernel of an ElementwiseSpec."""
    body, _ = generate_elementwise(spec, "fused")
    return jit.compile_source(preamble(), body, signature("fused"), spec)


def compile_reduce(spec):
    """The fused reduction kernel of a ReduceSpec."""
    body, _ = generate_reduce(spec, "fused_reduce")
    return jit.compile_source(preamble(), body, signature("fused_reduce"), spec)
