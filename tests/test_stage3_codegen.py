"""Fused kernels generated as C (chapter 11, lazy execution and kernel fusion): each fused
kernel must compute exactly what device "cpu"'s eager kernels compute, op by op, and be
compiled once per source, then found in memory or on disk.

The eager reference is the cpu backend itself (backend.unary, binary, where, reduce on
Views), called op by op as an eager program would. Kernels are grouped (one kernel with many
outputs checks many ops) so that the file compiles few of them; all tests share one cache
folder for the session, except those that test the cache itself.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import stage3_native
from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage3_native.cpu import backend as cpu
from stage3_native.lazy import codegen, jit
from stage3_native.lazy.expr import (      # the ops a kernel computes: primitives and fused
    BINARY_OPS,
    COMPARISONS,
    UNARY_OPS,
    Const,
    ElementwiseSpec,
    Input,
    Operand,
    ReduceSpec,
    cast,
    op,
)

from .optable import PRIMITIVES

ROOT = Path(__file__).resolve().parent.parent
BE = backend.get("cpu")
DT = {"bool": dtypes.bool_, "int32": dtypes.int32, "int64": dtypes.int64,
      "float32": dtypes.float32, "float64": dtypes.float64}
NP = {"bool": np.uint8, "int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}
SHAPE = (6, 37)
INT_UNARY = ("neg", "abs", "relu", "sign")        # what integer tensors run without a float cast


pytestmark = pytest.mark.usefixtures("kernel_cache")      # conftest.py: one folder per file


# ---- data, buffers, the two ways of computing ---------------------------------------------

def values(dtype, n, seed):
    """n values of dtype: random ones with the awkward ones mixed in (nan, inf, -0, large)."""
    rng = np.random.default_rng(seed)
    if dtype in ("float32", "float64"):
        x = rng.standard_normal(n) * 3
        special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 80.0, -80.0, 100.0,
                   -120.0, 0.5, 2.0, -2.5, 7.0]
        x[: min(n, len(special))] = special[:n]
        rng.shuffle(x)
        return x.astype(NP[dtype])
    return rng.integers(-5, 6, n).astype(NP[dtype])


def buffer(array, dtype):
    """A cpu buffer holding array's values (a copy)."""
    return BE.from_bytes(np.ascontiguousarray(array, dtype=NP[dtype]).tobytes(), DT[dtype])


def read(buf, n, dtype):
    return np.frombuffer(cpu.ffi.buffer(buf, n * np.dtype(NP[dtype]).itemsize), NP[dtype]).copy()


class Arg:
    """An operand both ways: a View for the eager backend, an Operand for the spec."""
    def __init__(self, dtype, buf, shape, strides, offset=0):
        self.dtype, self.buf = dtype, buf
        self.view = View(buf, shape, strides, offset, DT[dtype])
        self.operand = Operand(dtype, strides, offset)


def contiguous(dtype, seed, shape=SHAPE):
    n = int(np.prod(shape))
    return Arg(dtype, buffer(values(dtype, n, seed), dtype), shape, (shape[1], 1))


def transposed(dtype, seed, shape=SHAPE):
    """shape's transpose stored contiguously, viewed as shape: strides (1, rows)."""
    n = int(np.prod(shape))
    return Arg(dtype, buffer(values(dtype, n, seed), dtype), shape, (1, shape[0]))


def row(dtype, seed, shape=SHAPE, offset=3):
    """One row broadcast over the leading dimension (stride 0), after `offset` other values."""
    return Arg(dtype, buffer(values(dtype, shape[1] + offset, seed), dtype), shape, (0, 1), offset)


def column(dtype, seed, shape=SHAPE):
    return Arg(dtype, buffer(values(dtype, shape[0], seed), dtype), shape, (1, 0))


def scalar(dtype, value, shape=SHAPE):
    return Arg(dtype, buffer(np.array([value]), dtype), shape, (0, 0))


def eager(buf, dtype, shape=SHAPE):
    return read(buf, int(np.prod(shape)), dtype)


def fused(args, outputs, shape=SHAPE, path=None):
    spec = ElementwiseSpec(shape, tuple(a.operand for a in args), tuple(outputs))
    if path is not None:
        assert codegen.generate_elementwise(spec, "f")[1] == path
    kernel = codegen.compile_elementwise(spec)
    n = int(np.prod(shape))
    outs = [cpu.allocate(n, DT[r.dtype]) for r in outputs]
    kernel.run(outs, [a.buf for a in args])
    return [read(o, n, r.dtype) for o, r in zip(outs, outputs)]


def same_bits(got, want, what):
    """Equal bit for bit, except that a NaN's sign and payload are not compared: they depend
    on which operand an instruction passes on (and IEEE 754 leaves them open), not on the
    arithmetic. Where one side is NaN, the other must be too."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind == "f":
        both = np.isnan(got) & np.isnan(want)
        got, want = np.where(both, np.nan, got), np.where(both, np.nan, want)
    if got.tobytes() != want.tobytes():
        bad = np.flatnonzero(got.view(np.uint8).reshape(got.size, -1) != want.view(np.uint8).reshape(want.size, -1))
        i = bad[0] // got.itemsize if len(bad) else 0
        pytest.fail(f"{what}: element {i} is {got[i]!r}, eager gives {want[i]!r}")


def leaf(arg, k):
    return Input(k, arg.dtype)


# ---- every op alone, on every layout ------------------------------------------------------

@pytest.mark.parametrize("dtype,ops", [
    ("float32", tuple(o for o in UNARY_OPS if PRIMITIVES[o].vectorizes)),      # loops gcc vectorizes...
    ("float32", tuple(o for o in UNARY_OPS if not PRIMITIVES[o].vectorizes)),  # ...and logf's, which stay scalar
    ("float64", UNARY_OPS), ("int32", INT_UNARY), ("int64", INT_UNARY)])
def test_unary_ops_match_eager_bit_for_bit(dtype, ops):
    """float32's ops are grouped as the eager loops vectorize: see codegen.py, "Exactness"."""
    # the fast path: one contiguous operand
    x = contiguous(dtype, 1)
    got = fused([x], [op(name, leaf(x, 0)) for name in ops], path="contiguous")
    for name, g in zip(ops, got):
        same_bits(g, eager(BE.unary(name, x.view, DT[dtype]), dtype), f"{name} {dtype} contiguous")
    # the strided path: a transposed operand and a broadcast row (with an offset)
    xt, xb = transposed(dtype, 2), row(dtype, 3)
    got = fused([xt, xb], [op(name, leaf(a, k)) for name in ops for k, a in enumerate((xt, xb))],
                path="strided")
    for i, name in enumerate(ops):
        for k, a in enumerate((xt, xb)):
            same_bits(got[2 * i + k], eager(BE.unary(name, a.view, DT[dtype]), dtype),
                      f"{name} {dtype} {('transposed', 'broadcast')[k]}")


def test_a_kernel_follows_the_eager_simd_level(simd_level):
    """One compiled kernel, on every SIMD level this CPU runs: its dispatch reads the eager
    library's level (jit.py points it there), so it matches the eager kernels of that level
    bit for bit (float32's GELUs round differently with FMA than without)."""
    x = contiguous("float32", 21)
    ops = ("gelu", "gelu_grad", "gelu_tanh", "tanh", "exp")
    got = fused([x], [op(name, leaf(x, 0)) for name in ops], path="contiguous")
    for name, g in zip(ops, got):
        same_bits(g, eager(BE.unary(name, x.view, dtypes.float32), "float32"), f"{name} at {simd_level}")


def binary_eager(name, a, b, dtype):
    out_dtype = "bool" if name in COMPARISONS else dtype
    return eager(BE.binary(name, a.view, b.view, DT[out_dtype]), out_dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", *(pytest.param(d, marks=pytest.mark.slow)
                                                            for d in ("int32", "int64"))])
def test_binary_ops_match_eager_bit_for_bit(dtype):
    # contiguous with contiguous, and contiguous with a single value: the flat loop
    a, b, s = contiguous(dtype, 4), contiguous(dtype, 5), scalar(dtype, 2)
    pairs = [(0, 1), (0, 2), (2, 1)]
    args = [a, b, s]
    got = fused(args, [op(name, leaf(args[i], i), leaf(args[j], j)) for name in BINARY_OPS for i, j in pairs],
                path="contiguous")
    for n, name in enumerate(BINARY_OPS):
        for p, (i, j) in enumerate(pairs):
            same_bits(got[len(pairs) * n + p], binary_eager(name, args[i], args[j], dtype),
                      f"{name} {dtype} operands {i},{j}")
    # transposed with a broadcast row, and a column with the transposed
    at, bb, cc = transposed(dtype, 6), row(dtype, 7), column(dtype, 8)
    args, pairs = [at, bb, cc], [(0, 1), (2, 0)]
    got = fused(args, [op(name, leaf(args[i], i), leaf(args[j], j)) for name in BINARY_OPS for i, j in pairs],
                path="strided")
    for n, name in enumerate(BINARY_OPS):
        for p, (i, j) in enumerate(pairs):
            same_bits(got[len(pairs) * n + p], binary_eager(name, args[i], args[j], dtype),
                      f"{name} {dtype} strided operands {i},{j}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_where_and_cast_match_eager(dtype):
    x, y = transposed(dtype, 9), row(dtype, 10)
    i32 = contiguous("int32", 11)
    cond = op("gt", leaf(x, 0), leaf(y, 1))
    outputs = [op("where", cond, leaf(x, 0), leaf(y, 1)),
               cast(leaf(i32, 2), dtype), cast(leaf(x, 0), "int32"), cast(leaf(x, 0), "bool"),
               cast(leaf(x, 0), "float64" if dtype == "float32" else "float32")]
    got = fused([x, y, i32], outputs)
    c = BE.binary("gt", x.view, y.view, dtypes.bool_)
    cview = View(c, SHAPE, (SHAPE[1], 1), 0, dtypes.bool_)
    same_bits(got[0], eager(BE.where(cview, x.view, y.view, DT[dtype]), dtype), "where")
    same_bits(got[1], eager(BE.contiguous(i32.view, DT[dtype]), dtype), "int32 -> float")
    for out, to in zip(got[2:], ("int32", "bool", outputs[4].dtype)):
        same_bits(out, eager(BE.contiguous(x.view, DT[to]), to), f"{dtype} -> {to}")


# ---- chains -------------------------------------------------------------------------------

def flat_view(buf, dtype, shape=SHAPE):
    return View(buf, shape, (shape[1], 1), 0, DT[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chains_match_the_eager_chain_bit_for_bit(dtype):
    """Chains with a multiply feeding an add: without tg_keep gcc would contract them into
    one fused multiply-add (one rounding where the eager kernels round twice), and the
    results would differ in the last bit for many elements."""
    d = DT[dtype]
    x, w, b = transposed(dtype, 12), row(dtype, 13), row(dtype, 14)
    y, z = contiguous(dtype, 15), column(dtype, 16)
    X, W, B, Y, Z = (leaf(a, k) for k, a in enumerate((x, w, b, y, z)))
    xw = op("mul", X, W)
    outputs = [
        op("gelu_tanh", op("add", xw, B)),                     # GELU-tanh(x * w + b)
        op("sub", op("mul", op("sigmoid", X), Y), Z),           # sigmoid(x) * y - z
        op("where", op("gt", X, Const(0, dtype)), X, op("mul", Const(0.1, dtype), X)),  # leaky relu
        xw,                                                     # an intermediate, stored too
        op("neg", op("sub", B, op("mul", X, X))),               # -(b - x * x)
    ]
    got = fused([x, w, b, y, z], outputs)

    def v(buf):
        return flat_view(buf, dtype)
    xw_e = BE.binary("mul", x.view, w.view, d)
    same_bits(got[0], eager(BE.unary("gelu_tanh", v(BE.binary("add", v(xw_e), b.view, d)), d), dtype), "gelu_tanh(x*w+b)")
    t = BE.binary("mul", v(BE.unary("sigmoid", x.view, d)), y.view, d)
    same_bits(got[1], eager(BE.binary("sub", v(t), z.view, d), dtype), "sigmoid(x)*y-z")
    zero, tenth = scalar(dtype, 0), scalar(dtype, 0.1)
    cond = View(BE.binary("gt", x.view, zero.view, dtypes.bool_), SHAPE, (SHAPE[1], 1), 0, dtypes.bool_)
    leaky = BE.where(cond, x.view, v(BE.binary("mul", tenth.view, x.view, d)), d)
    same_bits(got[2], eager(leaky, dtype), "where(x > 0, x, 0.1 * x)")
    same_bits(got[3], eager(xw_e, dtype), "the stored intermediate x * w")
    t = BE.binary("sub", b.view, v(BE.binary("mul", x.view, x.view, d)), d)
    same_bits(got[4], eager(BE.unary("neg", v(t), d), dtype), "-(b - x*x)")
    # the multiply-adds above would have caught a contraction only if there are elements
    # where it changes the result: check that there are, computing x * w + b with one rounding
    if dtype == "float64":
        xs, ws, bs = (eager(BE.contiguous(a.view, d), dtype) for a in (x, w, b))
        finite = np.isfinite(xs * ws + bs)
        exact = np.array([float(np.longdouble(p) * np.longdouble(q) + np.longdouble(r))
                          for p, q, r in zip(xs[finite], ws[finite], bs[finite])])
        assert np.any(exact != (xs * ws + bs)[finite])


def test_chain_on_integers_and_casts():
    """Integers compute in int64 and store int32 after each op (division by 0 gives 0)."""
    a, b = contiguous("int32", 17), transposed("int32", 18)
    A, B = Input(0, "int32"), Input(1, "int32")
    out = op("add", op("div", op("mul", A, B), op("sub", B, Const(1, "int32"))), op("pow", A, Const(3, "int32")))
    f = op("exp", cast(op("abs", A), "float32"))
    got = fused([a, b], [out, f])
    d = dtypes.int32
    ab = BE.binary("mul", a.view, b.view, d)
    one = scalar("int32", 1)
    bm1 = BE.binary("sub", b.view, one.view, d)
    q = BE.binary("div", flat_view(ab, "int32"), flat_view(bm1, "int32"), d)
    p = BE.binary("pow", a.view, scalar("int32", 3).view, d)
    same_bits(got[0], eager(BE.binary("add", flat_view(q, "int32"), flat_view(p, "int32"), d), "int32"), "int chain")
    absf = BE.contiguous(flat_view(BE.unary("abs", a.view, d), "int32"), dtypes.float32)
    same_bits(got[1], eager(BE.unary("exp", flat_view(absf, "float32"), dtypes.float32), "float32"), "exp(float(|a|))")


def test_large_chain_runs_on_threads_like_eager():
    """Above TG_PARALLEL_MIN elements the kernel splits among threads: same result."""
    shape = (300, 257)
    x, w = contiguous("float32", 19, shape), row("float32", 20, shape)
    before = stage3_native.get_num_threads()
    stage3_native.set_num_threads(2)
    try:
        (got,) = fused([x, w], [op("tanh", op("mul", Input(0, "float32"), Input(1, "float32")))], shape)
    finally:
        stage3_native.set_num_threads(before)
    d = dtypes.float32
    want = BE.unary("tanh", flat_view(BE.binary("mul", x.view, w.view, d), "float32", shape), d)
    same_bits(got, eager(want, "float32", shape), "tanh(x * w) on 2 threads")


# ---- reductions ---------------------------------------------------------------------------

def fused_reduce(args, expr, op_name, shape, dims=1, out_dtype=None):
    spec = ReduceSpec(shape, tuple(a.operand for a in args), expr, op_name, dims, out_dtype)
    kernel = codegen.compile_reduce(spec)
    n = int(np.prod(shape[: len(shape) - dims]))
    out_dtype = out_dtype or expr.dtype
    out = cpu.allocate(n, DT[out_dtype])
    kernel.run([out], [a.buf for a in args])
    return read(out, n, out_dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sum_of_exp_x_minus_max_matches_eager(dtype):
    """softmax's denominator: rows of 2500 (two blocks of 1024 and a tail), m broadcast."""
    shape, d = (5, 2500), DT[dtype]
    x = contiguous(dtype, 21, shape)
    xs = eager(BE.contiguous(x.view, d), dtype, shape).reshape(shape)
    m = Arg(dtype, buffer(np.nanmax(np.where(np.isinf(xs), 0, xs), axis=1), dtype), shape, (1, 0))
    expr = op("exp", op("sub", Input(0, dtype), Input(1, dtype)))
    got = fused_reduce([x, m], expr, "sum", shape)
    e = BE.unary("exp", flat_view(BE.binary("sub", x.view, m.view, d), dtype, shape), d)
    want = eager(BE.reduce("sum", flat_view(e, dtype, shape), (1,), d), dtype, (5,))
    same_bits(got, want, f"sum(exp(x - m)) {dtype}")
    assert np.isinf(got).any() and np.isfinite(got).any()     # the rows with inf in them, and not


@pytest.mark.parametrize("op_name", ["max", "min"])
def test_max_min_of_an_expression_match_eager(op_name):
    """NaN propagates, and the lanes keep eager's order (ties of -0 and 0 included); the
    reduced operand is transposed: a row of the reduction is strided in memory."""
    shape, d = (7, 100), dtypes.float64
    x = transposed("float64", 22, shape)
    expr = op("mul", Input(0, "float64"), Const(2.0, "float64"))
    got = fused_reduce([x], expr, op_name, shape)
    t = BE.binary("mul", x.view, scalar("float64", 2.0, shape).view, d)
    want = eager(BE.reduce(op_name, flat_view(t, "float64", shape), (1,), d), "float64", (7,))
    same_bits(got, want, f"{op_name}(2x)")
    assert np.isnan(got).any()
    # rows of several blocks of 1024 (the lanes carry across blocks: 2048 is two whole
    # blocks, 2100 two and a tail)
    for long in ((5, 2048), (5, 2100)):
        x = contiguous("float32", 26, long)
        got = fused_reduce([x], Input(0, "float32"), op_name, long)
        want = eager(BE.reduce(op_name, x.view, (1,), dtypes.float32), "float32", (5,))
        same_bits(got, want, f"{op_name} over rows of {long[1]}")
    # integers, two reduced dims that merge into one, int64 output
    shape3 = (3, 4, 10)
    i = Arg("int32", buffer(values("int32", 120, 23), "int32"), shape3, (40, 10, 1))
    got = fused_reduce([i], op("neg", Input(0, "int32")), op_name, shape3, dims=2, out_dtype="int64")
    n = BE.unary("neg", i.view, dtypes.int32)
    want = eager(BE.reduce(op_name, View(n, shape3, (40, 10, 1), 0, dtypes.int32), (1, 2), dtypes.int64), "int64", (3,))
    same_bits(got, want, f"{op_name}(-i) int")


def test_reduce_rejects_dims_that_do_not_merge():
    x = transposed("float32", 24, (3, 4, 5))
    arg = Arg("float32", x.buf, (3, 4, 5), (20, 1, 4))
    with pytest.raises(NotImplementedError):
        codegen.generate_reduce(ReduceSpec((3, 4, 5), (arg.operand,), Input(0, "float32"), "sum", 2), "g")


# ---- the cache ----------------------------------------------------------------------------

def small_spec(tag):
    """A spec no other test compiles (the constant differs)."""
    x = Input(0, "float64")
    return ElementwiseSpec((4, 5), (Operand("float64", (5, 1)),), (op("add", op("exp", x), Const(tag, "float64")),))


def test_compiled_once_per_source_then_from_memory():
    spec = small_spec(0.125)
    before = dict(jit.stats)
    k1 = codegen.compile_elementwise(spec)
    k2 = codegen.compile_elementwise(spec)
    # another offset is the same source: no new kernel
    moved = ElementwiseSpec(spec.shape, (Operand("float64", (5, 1), 7),), spec.outputs)
    k3 = codegen.compile_elementwise(moved)
    assert jit.stats["compiled"] == before["compiled"] + 1
    assert jit.stats["memory"] == before["memory"] + 2
    assert k1.fn is k2.fn is k3.fn and k3.spec is moved
    # and it computes: exp(x) + 0.125 at offset 7
    data = np.arange(27, dtype=np.float64) / 10
    out = cpu.allocate(20, dtypes.float64)
    k3.run([out], [buffer(data, "float64")])
    np.testing.assert_allclose(read(out, 20, "float64"), np.exp(data[7:]) + 0.125, rtol=1e-15)


SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {root!r})
    from tests.test_stage3_codegen import small_spec
    from stage3_native.lazy import codegen, jit
    kernel = codegen.compile_elementwise(small_spec({tag!r}))
    print(json.dumps(dict(jit.stats, path=kernel.path)))
""")


def run_process(cache, tag):
    env = dict(os.environ, TRACEGRAD_KERNEL_CACHE=str(cache), PYTHONPATH=str(ROOT))
    script = SCRIPT.format(root=str(ROOT), tag=tag)
    return subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result(process):
    import json
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_new_process_loads_from_disk_without_compiling(tmp_path):
    cache = tmp_path / "cache"
    first = result(run_process(cache, 0.25))
    assert first["compiled"] == 1 and first["loaded"] == 0
    assert Path(first["path"]).parent == cache and Path(first["path"]).exists()
    second = result(run_process(cache, 0.25))
    assert second["compiled"] == 0 and second["loaded"] == 1 and second["path"] == first["path"]
    assert [p.name for p in cache.iterdir()] == [Path(first["path"]).name]    # no temporary left


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_two_processes_compiling_at_once_leave_one_whole_file(tmp_path):
    cache = tmp_path / "cache"
    processes = [run_process(cache, 0.375) for _ in range(2)]
    results = [result(p) for p in processes]
    assert results[0]["path"] == results[1]["path"]
    assert [p.name for p in cache.iterdir()] == [Path(results[0]["path"]).name]
    # the file in place loads and runs in a third process, without compiling
    assert result(run_process(cache, 0.375))["compiled"] == 0


def test_a_failed_write_leaves_no_file(tmp_path, monkeypatch):
    """The library reaches its name only through os.replace: if that fails, nothing is there."""
    monkeypatch.setenv("TRACEGRAD_KERNEL_CACHE", str(tmp_path))

    def broken(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(jit.os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        codegen.compile_elementwise(small_spec(0.5))
    assert list(tmp_path.iterdir()) == []


def test_compile_error_shows_the_compiler_and_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEGRAD_KERNEL_CACHE", str(tmp_path))
    body = codegen.signature("broken") + " { undeclared_thing += 1; }\n"
    with pytest.raises(jit.KernelCompileError) as info:
        jit.compile_source(codegen.preamble(), body, codegen.signature("broken"), None)
    message = str(info.value)
    assert "undeclared_thing" in message and "error" in message
    assert body.strip() in message
    assert not any(p.suffix == ".so" for p in tmp_path.iterdir())


def test_cache_folder_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("TRACEGRAD_KERNEL_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert jit.cache_dir() == tmp_path / ".cache" / "tracegrad" / "kernels"
    monkeypatch.setenv("TRACEGRAD_KERNEL_CACHE", str(tmp_path / "elsewhere"))
    assert jit.cache_dir() == tmp_path / "elsewhere"


def test_another_compiler_is_another_kernel(monkeypatch):
    """A library clang compiled (CC=clang, make clang-check) is not the one gcc compiled from
    the same source and flags: the compiler is part of the cache's key."""
    source = codegen.signature("same") + " { }\n"
    keys = set()
    for compiler in ("gcc", "clang"):
        monkeypatch.setenv("CC", compiler)
        keys.add(jit.kernel_hash(source))
    assert len(keys) == 2


# ---- the pretty-printer -------------------------------------------------------------------

def test_show_prints_the_fused_function():
    x, w, b = contiguous("float32", 25), row("float32", 26), row("float32", 27)
    X, W, B = Input(0, "float32"), Input(1, "float32"), Input(2, "float32")
    spec = ElementwiseSpec(SHAPE, (x.operand, w.operand, b.operand),
                           (op("gelu_tanh", op("add", op("mul", X, W), B)),))
    text = jit.show(codegen.compile_elementwise(spec))
    assert "fused: mul, add, gelu_tanh" in text
    assert "out0 = gelu_tanh(add(mul(in0, in1), in2))" in text
    for expr in ("tg_mul_f32(t0, t1);", "tg_add_f32(t2, t3);", "tg_gelu_tanh_f32(t4)", "tg_keep_f(t2, z[0])"):
        assert expr in text, expr
    assert "TG_FN int64_t tg_div_i64" not in text          # the preamble is left out
    assert "TG_FN int64_t tg_div_i64" in jit.show(codegen.compile_elementwise(spec), full=True)
    lines = text.splitlines()
    assert all(line.count(";") <= 1 or line.lstrip().startswith("for") for line in lines)
    # float64 names elementwise_math.h's double functions
    spec64 = ElementwiseSpec((3,), (Operand("float64", (1,)),), (op("gelu", op("exp", Input(0, "float64"))),))
    body, _ = codegen.generate_elementwise(spec64, "f")
    assert "tg_exp_f64(t0)" in body and "tg_gelu_f64(t1)" in body and "tg_keep_d(t1, z[0])" in body


def test_empty_shape_writes_nothing():
    spec = ElementwiseSpec((0, 5), (Operand("float32", (1, 0)),), (op("exp", Input(0, "float32")),))
    kernel = codegen.compile_elementwise(spec)
    out = cpu.allocate(1, dtypes.float32)
    out[0] = 42.0
    kernel.run([out], [buffer(np.zeros(1), "float32")])
    assert out[0] == 42.0
