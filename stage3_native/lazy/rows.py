"""Row kernels: reductions fused with their element-wise producers and consumers, one pass
per row (chapter 11, lazy execution and kernel fusion).

Softmax written in tensor ops is five eager kernels, and each writes a whole tensor to
memory that the next one reads back:

    m = x.max(-1, keepdim=True)     # reads x
    t = x - m                       # reads x, m; writes t
    e = t.exp()                     # reads t; writes e
    s = e.sum(-1, keepdim=True)     # reads e
    y = e / s                       # reads e, s; writes y

For a tensor of 32 MB that is about 160 MB of traffic, and LayerNorm written the same way
(mean, centre, square, mean, add eps, sqrt, divide, scale, shift: about eleven kernels)
twice that. But every one of those ops works within a row: the reductions run over the
last dimension, and the element-wise ops combine a row's elements with values of the same
row. A row is short (hundreds to a few thousand elements, kilobytes), so it fits in the L1
or L2 cache. A row kernel therefore takes one row at a time and does all of it there:

1. the reductions in order, each one a pass over the row that computes its element-wise
   expression (which may read the values of the reductions before it: softmax's sum reads
   the max) and reduces it to one value for the row;
2. the element-wise outputs over the row, which may read any of the row's values.

Only the inputs are read from memory (the first pass brings the row into cache, the later
ones find it there) and only the final outputs are written: softmax becomes one read of x
and one write of y, 64 MB instead of 160 for the example above.

The records (expr.py): a ``RowSpec`` holds the shape (kept dims, then the ``dims``
reduced ones), the operands, the ``RowReduce`` records (an expression, sum/max/min, the
dtype the result is stored as) and the output expressions, whose leaf ``RowValue(j)``
stands for reduction j's result for the current row. Softmax over the rows of x:

    x = Input(0, "float32")
    mx = RowReduce(x, "max", "float32")
    e = op("exp", op("sub", x, RowValue(0, "float32")))
    spec = RowSpec(shape=(37, 300), operands=(Operand("float32", (300, 1)),),
                   reductions=(mx, RowReduce(e, "sum", "float32")),
                   outputs=(op("div", e, RowValue(1, "float32")),))

and the C this module writes for it (abridged):

    TG_SIMD(double, rows_r0, (const float *restrict in0, const i64 *pos, ...), (in0, pos, ...)) {
        ... max over the row of in0, in reduce_t.h's order ...
    }
    TG_SIMD(double, rows_r1, (const float *restrict in0, const i64 *pos, const float row0, ...),
            (in0, pos, row0, ...)) {
        float buf[1024];                   /* one block of the row's values: in L1 */
        for (i64 start = 0; start < 300; start += 1024) {
            for (i64 j = 0; j < len; j++) {
                float t0 = in0[p0 + start + j];
                float t1 = row0;
                float t2 = t0 - t1;  /* sub */
                ...
                float t3 = tg_expf(t2);  /* exp */
                buf[j] = tg_keep_f(t3, z[0]);     /* not contracted into the sum (codegen.py) */
            }
            ... the 16 lanes of reduce_t.h's sum_row over buf, added in double ...
        }
        return total;
    }
    TG_INLINE void rows_outputs(const float *restrict in0, float *restrict out0, const i64 *pos,
                                const float row0, const float row1, ...) {
        for (i64 j = 0; j < 300; j++) {
            ... t3 = tg_expf(in0[p0 + j] - row0) as above ...
            float t5 = t3 / row1;  /* div */
            out0[j] = t5;
        }
    }
    TG_SIMD(void, rows_range, (i64 lo, i64 hi, const float *restrict in0, ...), (...)) {
        for (o = lo; o + 4 <= hi; o += 4) {        /* four rows side by side */
            ... pos[r]: row o + r's first element of each operand ...
            const float row0_0 = (float)rows_r0(in0, pos[0], z);
            ... row0_1, row0_2, row0_3, then row1_0 .. row1_3 the same way ...
            rows_outputs(in0, out0 + (o + 0) * 300, pos[0], row0_0, row1_0, z);
            ...
        }
        ... the last rows one at a time ...
    }
    void rows(void *const *outs, const void *const *ins, const int64_t *offsets) {
        ...
        #pragma omp parallel if (37 * 300 >= TG_PARALLEL_MIN && tg_thread_count() > 1)
        { ... this thread's rows [lo, hi) ...; rows_range(lo, hi, in0, out0, z); }
    }

The row functions are inlined into one TG_SIMD function (compiled once per instruction
set), which takes a few rows at a time (ROWS_AT_ONCE: four short rows, two long ones),
each step for all of them before the next: a row's reduction is a chain of dependent
additions, short when the row is (a row of 128 floats is 8 vectors), and independent
chains side by side let the processor overlap them (benchmarks/RESULTS.md, the plan cache
section, has the measurement). Each row's values are the same either way.

(exp(x - max) is computed twice per element, in the sum's pass and in the output pass:
recomputing from a row in cache is cheaper than writing e to memory and reading it back.)

Exactness: the result is what the eager kernels compute, bit for bit. Element-wise, the
expressions are codegen.py's (see its "Exactness"). Each reduction is codegen.py's
row_function, the very code generate_reduce emits: reduce_t.h's order of additions, the
sum accumulated in double. Its result is rounded to the RowReduce's dtype, as the eager
reduce stores it, and the later expressions read that rounded value, as the eager binary
op reads the stored result broadcast over the row. Like generate_reduce, each row runs on
one thread and the reduced dims must merge into one (else NotImplementedError); the
kept dims may have any strides.

Buffers: the kernel's outs are one contiguous buffer of numel(shape) per output, then one
of a value per row (numel of the kept dims) per reduction listed in ``stored``.
"""
from stage2_tensor.strides import numel

from . import jit
from .codegen import (
    CTYPE,
    row_invariant,
    check_reduction,
    describe,
    element_body,
    ops_summary,
    preamble,
    operand_pointers,
    range_args,
    range_params,
    row_function,
    row_positions,
    signature,
    simd_function,
    split_rows,
    zero_lines,
)
from .expr import RowValue


# How many rows the kernel works on side by side (see generate_rows): four short rows (at
# most SHORT_ROW elements), two longer ones, whose blocks of values (a buffer each on the
# stack) four at once would push out of the L1 cache.
ROWS_AT_ONCE = {"short": 4, "long": 2}
SHORT_ROW = 256


def _row_value_leaf(reductions, limit, what):
    """element_body's leaf hook: RowValue(j) is the local row<j>, for j < limit."""
    def leaf(node):
        if not isinstance(node, RowValue):
            raise TypeError(f"{node} is not a leaf of a row kernel")
        if not 0 <= node.index < limit:
            raise ValueError(f"{what} reads RowValue({node.index}), but only reductions "
                             f"0..{limit - 1} are computed before it")
        if node.dtype != reductions[node.index].dtype:
            raise TypeError(f"RowValue({node.index}) is {node.dtype} but reduction "
                            f"{node.index} is stored as {reductions[node.index].dtype}")
        return f"row{node.index}"
    return leaf


def _store(dtype, value):
    """A row value as the eager reduce stores it into dtype (reduce.c's STORE)."""
    return f"{value} != 0" if dtype == "bool" else f"({CTYPE[dtype]}){value}"


def generate_rows(spec, name):
    """The C function (without the preamble) for a RowSpec."""
    shape, operands = tuple(spec.shape), tuple(spec.operands)
    reductions, outputs, stored = tuple(spec.reductions), tuple(spec.outputs), tuple(spec.stored)
    if not outputs and not stored:
        raise ValueError("a RowSpec needs an output or a stored reduction")
    for r in reductions:
        check_reduction(r.op, r.expr.dtype, r.dtype)
    for s in stored:
        if not 0 <= s < len(reductions):
            raise ValueError(f"stored reduction {s}: there are {len(reductions)} reductions")
    kept_shape, m, step = split_rows(shape, operands, spec.dims)
    if m == 0 and any(r.op != "sum" for r in reductions):
        raise RuntimeError(f"max, min: cannot reduce over an empty dimension (shape {shape})")
    n_rows = numel(kept_shape)
    ins = [f"in{k}" for k in range(len(operands))]
    in_params = [f"const {CTYPE[o.dtype]} *restrict in{k}" for k, o in enumerate(operands)]
    row_params = [f"const {CTYPE[r.dtype]} row{j}" for j, r in enumerate(reductions)]

    lines = [(f"/* {name}: {len(reductions)} reduction(s) and {len(outputs)} output(s) per row, "
              f"{n_rows} row(s) of {m} elements (shape {shape})")]
    lines += [f" * row{j} = {r.op}({describe(r.expr)})  [{ops_summary((r.expr,))}]"
              for j, r in enumerate(reductions)]
    lines += [f" * out{i} = {describe(e)}" for i, e in enumerate(outputs)]
    lines += [f" * out{len(outputs) + i} = row{s}  (one per row)" for i, s in enumerate(stored)]
    lines += [" */"]
    n_zeros = 1
    for j, r in enumerate(reductions):
        leaf = _row_value_leaf(reductions, j, f"reduction {j}")
        fn, used = row_function(f"{name}_r{j}", operands, r.expr, r.op, m, step, row_params[:j], leaf,
                                inline=True)
        lines += fn + [""]
        n_zeros = max(n_zeros, used)
    if outputs:
        def load(k):
            s = step[k]
            return f"in{k}[p{k}{'' if s == 0 else ' + j' if s == 1 else f' + j * {s}'}]"
        leaf = _row_value_leaf(reductions, len(reductions), "an output")
        outer = []      # what is the same for the whole row: computed before the loop
        body, results, used = element_body(operands, outputs, load, "        ", leaf,
                                           lambda n: row_invariant(n, step), outer)
        n_zeros = max(n_zeros, used)
        out_params = [f"{CTYPE[e.dtype]} *restrict out{i}" for i, e in enumerate(outputs)]
        params = in_params + out_params + ["const i64 *pos"] + row_params + ["const uint64_t *restrict z"]
        lines.append("/* the outputs over one row: out<i> points at the row's first element */")
        lines.append(f"TG_INLINE void {name}_outputs({', '.join(params)}) {{")
        lines += [f"    const i64 p{k} = pos[{k}];" for k in range(len(operands))]
        lines += ["    " + line for line in outer]
        lines.append(f"    for (i64 j = 0; j < {m}; j++) {{")
        lines += body
        lines += [f"        out{i}[j] = {r};" for i, r in enumerate(results)]
        lines.append("    }")
        lines.append("}")
        lines.append("")

    out_dtypes = [e.dtype for e in outputs] + [reductions[s].dtype for s in stored]
    tables, position = row_positions(kept_shape, operands, "    ", declare=False)
    n_pos = max(len(operands), 1)
    lines.append("/* pos[k]: operand k's first element of row o */")
    lines.append(f"TG_INLINE void {name}_pos(i64 o, i64 *pos) {{")
    if len(kept_shape) == 1:        # one kept dim: no unravelling
        lines += [f"    pos[{k}] = o * {o.strides[0]};" for k, o in enumerate(operands)]
    else:
        lines += tables + position
    lines.append("}")
    lines.append("")

    def rows_at_once(count, indent):
        """Rows o .. o + count - 1, each step for all of them before the next step."""
        out = [f"{indent}i64 pos[{count}][{n_pos}] = {{{{0}}}};"]
        out += [f"{indent}{name}_pos(o + {r}, pos[{r}]);" for r in range(count)]
        for j, red in enumerate(reductions):
            for r in range(count):
                args = ", ".join(ins + [f"pos[{r}]"] + [f"row{i}_{r}" for i in range(j)] + ["z"])
                out.append(f"{indent}const {CTYPE[red.dtype]} row{j}_{r} = "
                           f"{_store(red.dtype, f'{name}_r{j}({args})')};")
        for r in range(count):
            if outputs:
                args = ", ".join(ins + [f"out{i} + (o + {r}) * {m}" for i in range(len(outputs))] + [f"pos[{r}]"]
                                 + [f"row{j}_{r}" for j in range(len(reductions))] + ["z"])
                out.append(f"{indent}{name}_outputs({args});")
            out += [f"{indent}out{len(outputs) + i}[o + {r}] = row{s}_{r};" for i, s in enumerate(stored)]
        return out

    # The rows of a range, a few at a time (ROWS_AT_ONCE): each row's reductions are a chain of
    # dependent additions, short when rows are (a row of 128 floats is 8 vectors); with
    # several rows' chains side by side the processor overlaps them.
    lines.append(simd_function("void", f"{name}_range", ["i64 lo", "i64 hi"] + range_params(operands, out_dtypes)))
    at_once = ROWS_AT_ONCE["short" if m <= SHORT_ROW else "long"]
    lines.append("    i64 o = lo;")
    lines.append(f"    for (; o + {at_once} <= hi; o += {at_once}) {{")
    lines += rows_at_once(at_once, "        ")
    lines.append("    }")
    lines.append("    for (; o < hi; o++) {")
    lines += rows_at_once(1, "        ")
    lines.append("    }")
    lines.append("}")
    lines.append("")
    lines.append(signature(name) + " {")
    lines += operand_pointers(operands, out_dtypes) + zero_lines(n_zeros)
    lines.append(f"    #pragma omp parallel if ({n_rows} * {max(m, 1)} >= TG_PARALLEL_MIN && tg_thread_count() > 1)")
    lines.append("    {")
    lines.append("        i64 lo, hi;     /* this thread's rows: whole rows, so the order within each is kept */")
    lines.append(f"        tg_thread_range({n_rows}, 1, &lo, &hi);")
    lines.append(f"        {name}_range(lo, hi, {range_args(operands, out_dtypes)});")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def compile_rows(spec):
    """The row kernel of a RowSpec (a jit.Kernel: run(outs, ins, offsets) with outs one
    buffer per output, then one per stored reduction)."""
    body = generate_rows(spec, "fused_rows")
    return jit.compile_source(preamble(), body, signature("fused_rows"), spec)

