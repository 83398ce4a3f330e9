"""A matmul with a fused element-wise epilogue (chapter 11, lazy execution and kernel fusion).

Linear followed by an activation, GELU(x @ W + b), is two kernels eagerly: TinyBLAS writes
the product (the bias already added inside it), then the activation reads the whole (m, n)
output back from memory and writes it again. Once the product is larger than the caches,
that second pass costs a full round trip to main memory for a few arithmetic operations
per element.

TinyBLAS finishes its output block by block (csrc/gemm_t.h): a block of MC rows by NC
columns is final after its last pass over k, and at that moment the macro-kernel has just
stored it, so it is still in cache. tg_matmul_epilogue_<dtype> (csrc/tracegrad.h) calls a
function with each block as soon as it is final, on the thread that computed it; this
module writes that function as C from an EpilogueSpec (expr.py), with codegen.py's
machinery, so the activation, a residual add, or any element-wise expression of the
product runs on the block while it is in cache: one kernel, one pass over memory.

Exactness is codegen.py's: each intermediate rounded to its dtype, tg_keep against
multiply-add contraction, the eager formulas. The product is TinyBLAS's eager one bit for
bit (same blocks, threads and order over k). The epilogue loops over the rows of a block
and, inside, its columns, so gcc vectorizes the inner loop as it vectorizes the eager
element-wise loop.

    y = op("gelu_tanh", Product("float32"))
    kernel = compile_epilogue(EpilogueSpec(m, n, "float32", (), (y,)))
    kernel.run(x_view, w_t_view, b_view, product, [out], [])   # out = gelu_tanh(x @ W.T + b)
"""
from stage2_tensor import backend, dtypes

from ..cpu import backend as cpu
from . import codegen, jit
from .codegen import CTYPE, FLOATS, describe, element_body, ops_summary, zero_lines
from .expr import Product

NAME = "fused_epilogue"
DTYPES = {"float32": dtypes.float32, "float64": dtypes.float64}


def declaration(name):
    """The generated function, with csrc/tracegrad.h's tg_epilogue signature."""
    return f"void {name}(void *ctx, int64_t row0, int64_t rows, int64_t col0, int64_t cols)"


def check(spec):
    if spec.dtype not in FLOATS:
        raise TypeError(f"epilogue: the product must be float32 or float64, got {spec.dtype}")
    if not spec.outputs:
        raise ValueError("an EpilogueSpec needs at least one output")
    for o in spec.operands:
        if len(o.strides) != 2:
            raise ValueError(f"epilogue operand strides {o.strides}: expected two, over (m, n)")


def generate_epilogue(spec, name=NAME):
    """The C source (without codegen's preamble) of an EpilogueSpec: ``name``, a tg_epilogue
    computing every output on the block out[row0:row0+rows, col0:col0+cols].

    ctx points to four pointers, in this order (compile_epilogue's run builds them):
    the product (m x n, row-major), the outputs (``void *const *``: one contiguous m x n
    buffer each), the operands (``const void *const *``: one buffer each) and their offsets
    (``const int64_t *``). An output may be the product's buffer: every element's inputs
    are read before its outputs are written, and nothing is declared restrict against the
    product. The inner loop is marked ivdep: element j reads and writes at column j only
    (or reads a broadcast value), so consecutive columns are independent even in place."""
    check(spec)
    m, n, operands, roots = spec.m, spec.n, tuple(spec.operands), tuple(spec.outputs)
    t = CTYPE[spec.dtype]
    out_dtypes = [r.dtype for r in roots]

    def leaf(node):
        if not isinstance(node, Product) or node.dtype != spec.dtype:
            raise TypeError(f"{node} in an epilogue of a {spec.dtype} product")
        return "prow[j]"

    def load(k):
        col = operands[k].strides[1]
        return f"r{k}[{'0' if col == 0 else 'j' if col == 1 else f'j * {col}'}]"
    body, results, n_zeros = element_body(operands, roots, load, "            ", leaf)
    params = [f"const {t} *product"]
    params += [f"const {CTYPE[o.dtype]} *in{k}" for k, o in enumerate(operands)]
    params += [f"{CTYPE[d]} *out{j}" for j, d in enumerate(out_dtypes)]
    lines = [f"/* {name}: epilogue of a {spec.dtype} product of shape ({m}, {n}), block by block",
             f" * fused: {ops_summary(roots)}"]
    lines += [f" * out{j} = {describe(r)}" for j, r in enumerate(roots)]
    lines += [" */"]
    block_params = ["i64 row0", "i64 rows", "i64 col0", "i64 cols", *params, "const uint64_t *restrict z"]
    lines.append(codegen.simd_function("void", f"{name}_block", block_params))
    lines.append("    for (i64 i = row0; i < row0 + rows; i++) {")
    lines.append(f"        const {t} *prow = product + i * {n};")
    for k, o in enumerate(operands):
        row = o.strides[0]
        step = "" if row == 0 else f" + i * {row}"
        lines.append(f"        const {CTYPE[o.dtype]} *r{k} = in{k}{step};")
    lines += [f"        {CTYPE[d]} *o{j} = out{j} + i * {n};" for j, d in enumerate(out_dtypes)]
    lines.append("        #pragma GCC ivdep")
    lines.append("        for (i64 j = col0; j < col0 + cols; j++) {")
    lines += body
    lines += [f"            o{j}[j] = {r};" for j, r in enumerate(results)]
    lines.append("        }")
    lines.append("    }")
    lines.append("}")
    lines.append("")
    lines.append(declaration(name) + " {")
    lines.append("    /* ctx: the product, the outputs, the operands, their offsets */")
    lines.append("    void *const *c = ctx;")
    lines.append("    void *const *outs = c[1];")
    lines.append("    const void *const *ins = c[2];")
    lines.append("    const int64_t *offsets = c[3];")
    lines += zero_lines(n_zeros)
    args = [f"(const {t} *)c[0]"]
    args += [f"(const {CTYPE[o.dtype]} *)ins[{k}] + offsets[{k}]" for k, o in enumerate(operands)]
    args += [f"({CTYPE[d]} *)outs[{j}]" for j, d in enumerate(out_dtypes)]
    lines.append("    (void)ins, (void)offsets;")
    lines.append(f"    {name}_block(row0, rows, col0, cols, {', '.join(args + ['z'])});")
    lines.append("}")
    return "\n".join(lines) + "\n"


class EpilogueKernel:
    """A compiled epilogue and the product it follows: ``run`` multiplies with TinyBLAS and
    applies the epilogue to each block of the product once it is final."""

    def __init__(self, kernel):
        self.kernel, self.spec, self.name = kernel, kernel.spec, kernel.name
        # The generated module has its own FFI: its function reaches the native library's
        # as a plain address, cast to the library's own tg_epilogue type.
        address = int(kernel.ffi.cast("uintptr_t", kernel.ffi.addressof(kernel.lib, kernel.name)))
        self.pointer = cpu.ffi.cast("tg_epilogue", address)

    def show(self, full=False):
        return self.kernel.show(full)

    def run(self, a, b, bias, product, outs, ins, offsets=None):
        """product = a @ b (+ bias), then each output from it, block by block. a (m, k),
        b (k, n): device "cpu" Views, any strides, as CpuBackend.matmul takes them; bias:
        None or a View of n values; product: a cpu buffer of m * n elements; outs: one
        contiguous (m, n) cpu buffer per output (``product`` itself may be one); ins: one
        cpu buffer per operand; offsets: each operand's (default: the spec's)."""
        spec = self.spec
        dtype = DTYPES[spec.dtype]
        (m, k), (k_b, n) = a.shape, b.shape
        if (m, n) != (spec.m, spec.n) or k != k_b:
            raise ValueError(f"{self.name}: a {tuple(a.shape)} @ b {tuple(b.shape)}, but the "
                             f"epilogue is for a ({spec.m}, {spec.n}) product")
        if a.dtype is not dtype or b.dtype is not dtype:
            raise TypeError(f"{self.name}: operands of {a.dtype} and {b.dtype} for a {spec.dtype} product")
        if len(outs) != len(spec.outputs) or len(ins) != len(spec.operands):
            raise ValueError(f"{self.name}: expected {len(spec.outputs)} outputs and "
                             f"{len(spec.operands)} inputs, got {len(outs)} and {len(ins)}")
        if bias is not None and tuple(bias.shape) != (n,):
            raise ValueError(f"{self.name}: bias must have shape ({n},), got {tuple(bias.shape)}")
        if offsets is None:
            offsets = [o.offset for o in spec.operands]
        ffi = cpu.ffi
        dense_bias = ffi.NULL if bias is None else backend.get("cpu")._dense(bias, dtype)
        # ctx and the arrays it points to live in these locals until the call returns
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", o) for o in outs])
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", i) for i in ins] or [ffi.NULL])
        offset_values = ffi.new("int64_t[]", list(offsets) or [0])
        ctx = ffi.new("void *[4]", [ffi.cast("void *", product), out_ptrs, in_ptrs, offset_values])
        getattr(cpu.lib, f"tg_matmul_epilogue_{cpu.SUFFIX[dtype]}")(
            m, n, k, a.buffer + a.offset, a.strides[0], a.strides[1],
            b.buffer + b.offset, b.strides[0], b.strides[1], dense_bias, product, self.pointer, ctx)
        return outs


def compile_epilogue(spec):
    """The EpilogueKernel of an EpilogueSpec (compiled once per source: jit.py's cache)."""
    body = generate_epilogue(spec, NAME)
    return EpilogueKernel(jit.compile_source(codegen.preamble(), body, declaration(NAME), spec))
