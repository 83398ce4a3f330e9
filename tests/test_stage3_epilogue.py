"""A matmul with a fused element-wise epilogue (chapter 11, lazy execution and kernel fusion):
TinyBLAS's product with the generated epilogue applied block by block must be exactly what
device "cpu" computes eagerly, the matmul (bias included) and then each op, bit for bit.

The eager reference is the cpu backend itself, called op by op on Views. Few kernels are
compiled (an epilogue's source depends on the product's shape, not on the operands of the
product, so one kernel serves several layouts of a and b); all tests share one cache folder.
"""

import numpy as np
import pytest

import stage3_native
from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage3_native.cpu import backend as cpu
from stage3_native.lazy.epilogue import compile_epilogue, generate_epilogue
from stage3_native.lazy.expr import Const, EpilogueSpec, Input, Operand, Product, op

BE = backend.get("cpu")
DT = {"float32": dtypes.float32, "float64": dtypes.float64}
NP = {"float32": np.float32, "float64": np.float64}


@pytest.fixture(scope="module", autouse=True)
def tinyblas(kernel_cache):
    """The file's kernel cache (conftest.py), and the eager matmul on TinyBLAS (the product
    the epilogue kernel computes; TRACEGRAD_BLAS=blas would pick the system one)."""
    variant, BE.matmul_variant = BE.matmul_variant, "tinyblas"
    yield
    BE.matmul_variant = variant


@pytest.fixture
def two_threads():
    before = stage3_native.get_num_threads()
    stage3_native.set_num_threads(2)
    yield
    stage3_native.set_num_threads(before)


# ---- data, buffers, the eager reference ---------------------------------------------------

def values(dtype, n, seed):
    return np.random.default_rng(seed).standard_normal(n).astype(NP[dtype])


def buffer(array, dtype):
    return BE.from_bytes(np.ascontiguousarray(array, dtype=NP[dtype]).tobytes(), DT[dtype])


def read(buf, n, dtype):
    return np.frombuffer(cpu.ffi.buffer(buf, n * np.dtype(NP[dtype]).itemsize), NP[dtype]).copy()


def matrix(dtype, rows, cols, seed, transposed=False):
    """A (rows, cols) View: row-major, or the transpose of a row-major (cols, rows) matrix
    (strides (1, rows): Linear's W.T, nn.functional's _transposed)."""
    buf = buffer(values(dtype, rows * cols, seed), dtype)
    strides = (1, rows) if transposed else (cols, 1)
    return View(buf, (rows, cols), strides, 0, DT[dtype])


def vector(dtype, n, seed, offset=0):
    return View(buffer(values(dtype, n + offset, seed), dtype), (n,), (1,), offset, DT[dtype])


def flat(buf, dtype, m, n):
    return View(buf, (m, n), (n, 1), 0, DT[dtype])


def same_bits(got, want, what):
    """Equal bit for bit (NaNs compared as NaNs, as in test_stage3_codegen.py)."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    both = np.isnan(got) & np.isnan(want)
    got, want = np.where(both, np.nan, got), np.where(both, np.nan, want)
    if got.tobytes() != want.tobytes():
        i = int(np.flatnonzero(got.view(np.uint8).reshape(got.size, -1)
                               != want.view(np.uint8).reshape(want.size, -1))[0] // got.itemsize)
        pytest.fail(f"{what}: element {i} is {got[i]!r}, eager gives {want[i]!r}")


def several_blocks():
    """(m, n) of a float32 product that TinyBLAS cuts into at least two blocks of rows on
    each of two threads, whichever micro-kernel runs: more than twice its MC rows (a thread
    gets at least half of them), and more columns than rows (so the threads take bands of
    columns, each with all the rows)."""
    mc = cpu.gemm_blocking(dtypes.float32)["mc"]
    return 2 * mc + 13, 2 * mc + 80


def gelu_spec(dtype, m, n):
    return EpilogueSpec(m, n, dtype, (), (op("gelu_tanh", Product(dtype)),))


def run(spec, a, b, bias, ins=(), outs=None):
    """The fused kernel's outputs (and its product buffer), read back. outs: which buffer each
    output goes to: "own" a buffer of its own, "product" the product's (in place)."""
    m, n = spec.m, spec.n
    product = cpu.allocate(m * n, DT[spec.dtype])
    outs = outs or ["own"] * len(spec.outputs)
    bufs = [product if o == "product" else cpu.allocate(m * n, DT[r.dtype])
            for o, r in zip(outs, spec.outputs)]
    compile_epilogue(spec).run(a, b, bias, product, bufs, list(ins))
    return ([read(buf, m * n, r.dtype) for buf, r in zip(bufs, spec.outputs)],
            read(product, m * n, spec.dtype))


# ---- GELU(x @ W + b) -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_of_linear_matches_eager_bit_for_bit(dtype):
    """Sizes that are no multiple of any block (67 rows, 130 columns, k = 33); W contiguous,
    then transposed as Linear passes it (the same kernel: a and b are not in its source).
    float32 holds bit for bit too: the epilogue's rows vectorize as the eager loop does."""
    m, n, k, d = 67, 130, 33, DT[dtype]
    spec = gelu_spec(dtype, m, n)
    x, bias = matrix(dtype, m, k, 1), vector(dtype, n, 2, offset=3)
    for w in (matrix(dtype, k, n, 3), matrix(dtype, k, n, 4, transposed=True)):
        (got,), product = run(spec, x, w, bias)
        eager = BE.matmul(x, w, d, bias)
        same_bits(product, read(eager, m * n, dtype), f"{dtype} product, W strides {w.strides}")
        want = BE.unary("gelu_tanh", flat(eager, dtype, m, n), d)
        same_bits(got, read(want, m * n, dtype), f"{dtype} gelu_tanh(x @ W + b), W strides {w.strides}")


def test_in_place_and_without_bias():
    """The output written over the product itself (the product is not needed afterwards):
    each element is read before it is written, and each block gets one call only (a
    second would apply GELU twice)."""
    m, n, k, dtype = 67, 130, 33, "float32"
    x, w = matrix(dtype, m, k, 5), matrix(dtype, k, n, 6, transposed=True)
    (got,), product = run(gelu_spec(dtype, m, n), x, w, None, outs=["product"])
    same_bits(got, product, "the output is the product buffer")
    eager = BE.matmul(x, w, DT[dtype])
    want = BE.unary("gelu_tanh", flat(eager, dtype, m, n), DT[dtype])
    same_bits(got, read(want, m * n, dtype), "gelu_tanh(x @ W) in place")


def test_k_zero_is_the_bias_then_the_epilogue():
    m, n, dtype = 67, 130, "float32"
    x, w, bias = matrix(dtype, m, 0, 7), matrix(dtype, 0, n, 8), vector(dtype, n, 9)
    (got,), product = run(gelu_spec(dtype, m, n), x, w, bias)
    eager = BE.matmul(x, w, DT[dtype], bias)
    same_bits(product, read(eager, m * n, dtype), "k = 0: the bias rows")
    want = BE.unary("gelu_tanh", flat(eager, dtype, m, n), DT[dtype])
    same_bits(got, read(want, m * n, dtype), "k = 0: gelu_tanh(b)")


# ---- more operands, more outputs, blocks and threads ----------------------------------------

def test_residual_two_outputs_many_blocks_on_two_threads(two_threads):
    """GELU(x @ W + b + r) and x @ W + b + r on a product that TinyBLAS cuts into several
    blocks on each of two threads (several_blocks, k = 64): the residual r is a contiguous
    (m, n) operand, the first output has a buffer of its own and the second is written over
    the product."""
    (m, n), k, dtype = several_blocks(), 64, "float32"
    d = DT[dtype]
    P, R = Product(dtype), Input(0, dtype)
    s = op("add", P, R)
    spec = EpilogueSpec(m, n, dtype, (Operand(dtype, (n, 1)),), (op("gelu_tanh", s), s))
    x, w, bias = matrix(dtype, m, k, 10), matrix(dtype, k, n, 11, transposed=True), vector(dtype, n, 12)
    r = buffer(values(dtype, m * n, 13), dtype)
    (got, summed), product = run(spec, x, w, bias, ins=[r], outs=["own", "product"])
    same_bits(summed, product, "the second output is the product buffer")
    eager = BE.binary("add", flat(BE.matmul(x, w, d, bias), dtype, m, n), flat(r, dtype, m, n), d)
    same_bits(summed, read(eager, m * n, dtype), "x @ W + b + r")
    want = BE.unary("gelu_tanh", flat(eager, dtype, m, n), d)
    same_bits(got, read(want, m * n, dtype), "gelu_tanh(x @ W + b + r)")


def test_broadcast_operands_and_several_passes_over_k():
    """k past the micro-kernel's KC takes two passes over k: the epilogue, written over the
    product, must run on the final sums only. Operands broadcast along either dimension (a
    row with an offset, a column), a constant, and a multiply feeding an add (which tg_keep
    keeps from contracting)."""
    m, n, dtype = 40, 72, "float64"
    k = cpu.gemm_blocking(dtypes.float64)["kc"] + 44
    d = DT[dtype]
    P, row, col = Product(dtype), Input(0, dtype), Input(1, dtype)
    out = op("sub", op("mul", P, row), op("mul", col, Const(0.5, dtype)))
    spec = EpilogueSpec(m, n, dtype, (Operand(dtype, (0, 1), 2), Operand(dtype, (1, 0))), (out,))
    x, w = matrix(dtype, m, k, 14, transposed=True), matrix(dtype, k, n, 15)
    row_buf, col_buf = buffer(values(dtype, n + 2, 16), dtype), buffer(values(dtype, m, 17), dtype)
    (got,), _ = run(spec, x, w, None, ins=[row_buf, col_buf], outs=["product"])
    half = View(buffer(np.array([0.5]), dtype), (m, n), (0, 0), 0, d)
    row_v, col_v = View(row_buf, (m, n), (0, 1), 2, d), View(col_buf, (m, n), (1, 0), 0, d)
    pr = BE.binary("mul", flat(BE.matmul(x, w, d), dtype, m, n), row_v, d)
    ch = BE.binary("mul", col_v, half, d)
    want = BE.binary("sub", flat(pr, dtype, m, n), flat(ch, dtype, m, n), d)
    same_bits(got, read(want, m * n, dtype), "(x @ W) * row - col * 0.5")


@pytest.mark.parametrize("shape", ["several_blocks", "several_passes", "turned"])
def test_every_element_is_in_exactly_one_final_block(shape, gemm_kernel, two_threads):
    """The C interface alone, with a Python callback, on every micro-kernel this CPU runs:
    the blocks cover the product once, none is larger than the kernel's cache blocks (so
    the big product has several: more rows than two of them hold), and each is final when
    its call comes (k past KC: after the last of several passes; a turned product: after
    its transpose)."""
    dtype, d = "float32", dtypes.float32
    blocking = cpu.gemm_blocking(d)
    m, n, k = {"several_blocks": (*several_blocks(), 64), "several_passes": (40, 72, blocking["kc"] + 44),
               # few columns: computed turned, then transposed into out in bands of rows
               "turned": (3 * blocking["mc"] + 5, blocking["nr"] + 1, 30)}[shape]
    x, w = matrix(dtype, m, k, 18), matrix(dtype, k, n, 19)
    final = read(BE.matmul(x, w, d), m * n, dtype).reshape(m, n)
    product = cpu.allocate(m * n, d)
    blocks, early = [], []

    @cpu.ffi.callback("tg_epilogue")
    def epilogue(ctx, row0, rows, col0, cols):      # runs on TinyBLAS's threads
        got = read(product, m * n, dtype).reshape(m, n)[row0:row0 + rows, col0:col0 + cols]
        if got.tobytes() != final[row0:row0 + rows, col0:col0 + cols].tobytes():
            early.append((row0, col0))
        blocks.append((row0, rows, col0, cols))
    cpu.lib.tg_matmul_epilogue_f32(m, n, k, x.buffer, k, 1, w.buffer, n, 1, cpu.ffi.NULL, product,
                                   epilogue, cpu.ffi.NULL)
    covered = np.zeros((m, n), np.int64)
    for row0, rows, col0, cols in blocks:
        covered[row0:row0 + rows, col0:col0 + cols] += 1
    assert (covered == 1).all() and not early
    assert all(rows <= blocking["mc"] and cols <= blocking["nc"] for _, rows, _, cols in blocks)
    assert len(blocks) >= -(-m // blocking["mc"]) * -(-n // blocking["nc"])


def test_generated_source_reads_in_place_safely():
    """Nothing restrict against the product (an output may be it), offsets are arguments,
    strides are in the source."""
    dtype = "float32"
    spec = EpilogueSpec(4, 6, dtype, (Operand(dtype, (0, 1), 5),), (op("add", Product(dtype), Input(0, dtype)),))
    source = generate_epilogue(spec, "f")
    assert "restrict product" not in source and "restrict out" not in source
    assert "offsets[0]" in source and "i * 6" in source and "#pragma GCC ivdep" in source
    with pytest.raises(TypeError):
        generate_epilogue(EpilogueSpec(4, 6, dtype, (), (op("neg", Product("float64")),)), "f")
