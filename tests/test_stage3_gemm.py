"""TinyBLAS (stage3_native/csrc/gemm.c) and the other matmul variants against numpy.

Every variant, and every micro-kernel this CPU can run, on sizes that are not multiples of
any block (so every edge tile runs), on sizes past KC and NC (so every blocking loop runs),
with transposed, strided, batched and broadcast operands, with and without the fused bias,
in float32 and float64, on one, two and three threads (three: a thread count that divides
no power-of-two size, and more threads than this machine may have cores).
"""
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native
from stage2_tensor import backend
from stage2_tensor.tensor import Tensor
from stage3_native.cpu import backend as cpu_backend

pytestmark = pytest.mark.stage3


@pytest.fixture(params=[1, 2, 3], ids=["1thread", "2threads", "3threads"])
def threads(request):
    """This file's tests that ask for ``threads`` run on 1, 2 and 3 kernel threads (conftest's
    fixture has 1 and 2): the shared-B partition's grid differs for each (gemm_t.h)."""
    before = stage3_native.get_num_threads()
    stage3_native.set_num_threads(request.param)
    yield request.param
    stage3_native.set_num_threads(before)

CPU = backend.get("cpu")
HAS_CBLAS = bool(cpu_backend.lib.tg_has_cblas())
VARIANTS = ["naive", "reordered", "blocked", "tinyblas"] + (["blas"] if HAS_CBLAS else [])
DTYPES = {"float32": (tg.float32, np.float32), "float64": (tg.float64, np.float64)}


# (m, n, k): ones and primes around the register blocks (4 x 8, 6 x 16, 14 x 32) ...
SMALL_SHAPES = [(1, 1, 1), (1, 7, 3), (3, 1, 7), (2, 5, 9), (6, 16, 8), (10, 31, 12), (7, 17, 33),
                (17, 33, 65), (65, 129, 17), (33, 65, 129)]


def block_shapes(dtype):
    """... and shapes past every cache block of the micro-kernel in use (its own MC, KC, NC:
    cpu_backend.gemm_blocking), none a multiple of a block: bands of rows on two threads
    (m > n) with more than MC rows each and k past KC; bands of columns (n > m); several
    passes over k; n past NC, on one thread and on two. All but the third are big enough
    (m n k > GEMM_PARALLEL_MIN, about 1M) for two threads."""
    blocks = cpu_backend.gemm_blocking(dtype)
    mc, kc, nc = blocks["mc"], blocks["kc"], blocks["nc"]
    return [(2 * mc + 11, 80, kc + 9), (40, 520, kc + 18), (29, 33, 2 * kc + 88), (7, nc + 5, 9),
            (13, nc + 5, 100)]


def use_variant(monkeypatch, variant):
    monkeypatch.setattr(CPU, "matmul_variant", variant)


def on_cpu(array, layout):
    """A cpu tensor with array's values, laid out as asked: contiguous, transposed (the last
    two strides swapped) or strided (every other row and column of a bigger tensor)."""
    if layout == "contiguous":
        return tg.from_numpy(np.ascontiguousarray(array), device="cpu")
    if layout == "transposed":
        return tg.from_numpy(np.ascontiguousarray(np.swapaxes(array, -1, -2)), device="cpu").transpose(-1, -2)
    big = np.zeros(array.shape[:-2] + (2 * array.shape[-2], 2 * array.shape[-1] + 1), array.dtype)
    big[..., ::2, 1::2] = array
    every_other = (slice(None),) * (array.ndim - 2) + (slice(None, None, 2), slice(1, None, 2))
    return tg.from_numpy(big, device="cpu")[every_other]


def operands(rng, m, n, k, np_dtype, batch=()):
    a = rng.uniform(-1, 1, batch + (m, k)).astype(np_dtype)
    b = rng.uniform(-1, 1, batch + (k, n)).astype(np_dtype)
    return a, b


def reference(a, b, bias=None):
    """a @ b (+ bias) in float64, and how far a product in a's dtype may be from it. Each
    output is a sum of k products and the bias, rounded k + 1 times (or fewer, with FMA),
    each time by at most eps/2 of what has been summed: whatever the order of the additions
    (the blocks, the lanes, the threads), it is within (k + 1) eps/2 of the sum of the
    magnitudes, |a| @ |b| + |bias| (Higham, Accuracy and Stability of Numerical
    Algorithms, section 3.1). Twice that: a float64 reference rounds as much."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    out, magnitudes = np.matmul(a64, b64), np.matmul(np.abs(a64), np.abs(b64))
    if bias is not None:
        out, magnitudes = out + bias.astype(np.float64), magnitudes + np.abs(bias.astype(np.float64))
    return out, (a.shape[-1] + 1) * np.finfo(a.dtype).eps * magnitudes


def assert_within(out, want, bound):
    assert out.shape == want.shape
    error = np.abs(out.astype(np.float64) - want)
    assert (error <= bound).all(), f"off by {(error / np.maximum(bound, 1e-300)).max():.2f} times the bound"


def assert_close(out, a, b, bias=None):
    assert out.dtype == a.dtype
    assert_within(out, *reference(a, b, bias))


@functools.lru_cache(maxsize=None)
def product_case(m, n, k, dtype_name, with_bias):
    """Operands of an m x n x k product (and a bias), its reference and bound: the same for
    every micro-kernel, thread count and layout, so made once."""
    rng = np.random.default_rng((m, n, k))
    a, b = operands(rng, m, n, k, DTYPES[dtype_name][1])
    bias = rng.uniform(-1, 1, n).astype(a.dtype) if with_bias else None
    return (a, b, bias, *reference(a, b, bias))


def matmul_with_bias(a, b, bias, dtype):
    """CpuBackend.matmul with its fused bias, called directly (stage2's Linear will)."""
    view = bias.as_view() if bias is not None else None
    buffer = CPU.matmul(a.as_view(), b.as_view(), dtype, bias=view)
    return Tensor.from_buffer(buffer, a.shape[:-1] + (b.shape[-1],), dtype, "cpu").numpy()


LAYOUT_PAIRS = [("contiguous", "contiguous"), ("transposed", "contiguous"),
                ("contiguous", "transposed"), ("transposed", "transposed"),
                ("strided", "strided"), ("strided", "transposed")]


@pytest.mark.parametrize("with_bias", [False, True], ids=["", "bias"])
@pytest.mark.parametrize("layouts", LAYOUT_PAIRS, ids="-".join)
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_agrees_with_numpy(variant, dtype_name, layouts, with_bias, monkeypatch):
    use_variant(monkeypatch, variant)
    dtype, np_dtype = DTYPES[dtype_name]
    rng = np.random.default_rng(1)
    for m, n, k in SMALL_SHAPES:
        a, b = operands(rng, m, n, k, np_dtype)
        ta, tb = on_cpu(a, layouts[0]), on_cpu(b, layouts[1])
        if with_bias:
            bias = rng.uniform(-1, 1, n).astype(np_dtype)
            out = matmul_with_bias(ta, tb, tg.from_numpy(bias, device="cpu"), dtype)
        else:
            bias, out = None, (ta @ tb).numpy()
        assert out.dtype == np_dtype and out.shape == (m, n)
        assert_close(out, a, b, bias)


@pytest.mark.parametrize("with_bias", [False, True], ids=["", "bias"])
@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "transposed"),
                                     ("strided", "transposed")], ids="-".join)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_every_micro_kernel_through_every_block(gemm_kernel, threads, dtype_name, layouts, with_bias,
                                                monkeypatch):
    use_variant(monkeypatch, "tinyblas")
    dtype, np_dtype = DTYPES[dtype_name]
    for m, n, k in SMALL_SHAPES + block_shapes(dtype):
        a, b, bias, want, bound = product_case(m, n, k, dtype_name, with_bias)
        ta, tb = on_cpu(a, layouts[0]), on_cpu(b, layouts[1])
        out = matmul_with_bias(ta, tb, None if bias is None else tg.from_numpy(bias, device="cpu"), dtype)
        assert_within(out, want, bound)


def partition_shapes(dtype):
    """Edge shapes of the threads' partition (gemm_t.h, gemm_shared), from the kernel's own
    blocks: n narrower than a micro-panel per thread (the rows are split, each band packing
    the B panels it reads), with three passes over k; a few micro-tiles of rows against a
    very narrow B, over many passes (the rows are split in bands so narrow that the B block
    is packed once and shared: every thread reads panels another packed, the two buffers
    taken in turn, a barrier per block); m below mr with many panels (the columns are
    split, each thread packs the one A panel); more threads than micro-tiles, over many
    passes (idle threads still walk the loops); a B block past NC. Each is above
    GEMM_PARALLEL_MIN (about 1M multiply-adds), so it runs on every thread."""
    blocks = cpu_backend.gemm_blocking(dtype)
    mr, nr, mc, kc, nc = (blocks[key] for key in ("mr", "nr", "mc", "kc", "nc"))
    return [(3 * mc + 7, nr + 3, 3 * kc + 5), (3 * mr, 5, 100 * kc + 3), (3 * mc + 1, 5, 6 * kc + 1),
            (max(mr - 1, 1), 64 * nr + 5, 4 * kc + 9), (2, 20, 200 * kc + 3), (4 * mr + 1, nc + 5, 100)]


@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("strided", "transposed")],
                         ids="-".join)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_partition_edge_shapes(gemm_kernel, threads, dtype_name, layouts, monkeypatch):
    use_variant(monkeypatch, "tinyblas")
    dtype, np_dtype = DTYPES[dtype_name]
    for m, n, k in partition_shapes(dtype):
        assert m * n * k >= 64 * 64 * 256
        a, b, bias, want, bound = product_case(m, n, k, dtype_name, True)
        ta, tb = on_cpu(a, layouts[0]), on_cpu(b, layouts[1])
        out = matmul_with_bias(ta, tb, tg.from_numpy(bias, device="cpu"), dtype)
        assert_within(out, want, bound)


def turns(m, n, k, nr):
    """Whether TinyBLAS computes an m x n x k product turned (gemm_t.h, turning_pays): the
    columns' padding to whole micro-panels costs more than the rows' plus a transpose."""
    padded = m * (-(-n // nr) * nr) * k
    turned = n * (-(-m // nr) * nr) * k
    return turned + 8 * m * n < padded


def turned_shapes(dtype):
    """Few columns, many rows, for the kernel in use: n just past a micro-panel, or a few
    columns, or one; over one pass of k and several (k past KC). TinyBLAS runs each turned,
    out^T = b^T @ a^T into a scratch block, then a transpose into out."""
    blocks = cpu_backend.gemm_blocking(dtype)
    nr, mc, kc = blocks["nr"], blocks["mc"], blocks["kc"]
    return [(2 * mc + 3 * nr, nr + 1, 40), (3 * nr, 3, kc + 9), (97, 1, 50),
            (4 * nr + 5, 2 * nr + 3, 2 * kc + 7)]


@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "transposed"),
                                     ("strided", "transposed")], ids="-".join)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_narrow_products_run_turned(gemm_kernel, threads, dtype_name, layouts, monkeypatch):
    """The turned path with a bias (the scratch block's rows, added on the first pass over
    k), on every micro-kernel, 1, 2 and 3 threads, any strides: within the float bound."""
    use_variant(monkeypatch, "tinyblas")
    dtype, np_dtype = DTYPES[dtype_name]
    nr = cpu_backend.gemm_blocking(dtype)["nr"]
    for m, n, k in turned_shapes(dtype):
        assert turns(m, n, k, nr), (m, n, k)
        a, b, bias, want, bound = product_case(m, n, k, dtype_name, True)
        ta, tb = on_cpu(a, layouts[0]), on_cpu(b, layouts[1])
        assert_within(matmul_with_bias(ta, tb, tg.from_numpy(bias, device="cpu"), dtype), want, bound)
        assert_within((ta @ tb).numpy(), *reference(a, b))


@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("contiguous", "transposed"),
                                     ("transposed", "transposed")], ids="-".join)
def test_rows_a_power_of_two_apart(gemm_kernel, threads, layouts, monkeypatch):
    """Operands whose rows are a multiple of 1 KiB apart (k = 256, 512, 1024 floats): the
    SIMD packer transposes them 8 lanes at a time along k instead of all lanes step by step
    (gemm_kernels.c), with the edge lanes, the last k % 8 steps and every panel width."""
    use_variant(monkeypatch, "tinyblas")
    for m, n, k in [(37, 45, 256), (70, 40, 512), (29, 100, 1024), (3, 33, 512)]:
        a, b, bias, want, bound = product_case(m, n, k, "float32", True)
        ta, tb = on_cpu(a, layouts[0]), on_cpu(b, layouts[1])
        assert_within(matmul_with_bias(ta, tb, tg.from_numpy(bias, device="cpu"), tg.float32), want, bound)


def test_every_thread_count_gives_the_same_bits_as_one(gemm_kernel, monkeypatch):
    """Each output element is summed in the same order whatever the split between threads:
    any difference would be a race (a B panel read before it is packed, or packed over
    while read), or a tile computed twice or never."""
    use_variant(monkeypatch, "tinyblas")
    rng = np.random.default_rng(3)
    before = stage3_native.get_num_threads()
    try:
        for m, n, k in ([(301, 77, 300), (32, 4100, 40), (4, 100, 3)] + partition_shapes(tg.float32)
                        + turned_shapes(tg.float32)):
            a, b = operands(rng, m, n, k, np.float32)
            ta, tb = on_cpu(a, "contiguous"), on_cpu(b, "transposed")
            results = []
            for count in (1, 2, 3, 4):
                stage3_native.set_num_threads(count)
                results.append((ta @ tb).numpy())
            for result in results[1:]:
                np.testing.assert_array_equal(results[0], result)
    finally:
        stage3_native.set_num_threads(before)


FORCED_SPLIT = """
import numpy as np, stage3_native, stage2_tensor as tg
from stage2_tensor import backend
backend.get("cpu").matmul_variant = "tinyblas"
rng = np.random.default_rng(7)
for m, n, k in {shapes}:
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (n, k)).astype(np.float32)
    ta, tb = tg.from_numpy(a, device="cpu"), tg.from_numpy(b, device="cpu").T
    results = []
    for count in (1, 2, 3):
        stage3_native.set_num_threads(count)
        results.append((ta @ tb).numpy())
    assert all(np.array_equal(results[0], r) for r in results[1:]), (m, n, k)
    want = a.astype(np.float64) @ b.T.astype(np.float64)
    bound = (k + 1) * np.finfo(np.float32).eps * (np.abs(a).astype(np.float64) @ np.abs(b.T))
    assert (np.abs(results[0] - want) <= bound).all(), (m, n, k)
print("ok")
"""


@pytest.mark.parametrize("split", ["rows", "columns"])
def test_a_forced_split_gives_the_same_bits(split):
    """TRACEGRAD_GEMM_SPLIT (read once per process, so in a fresh one) forces every product
    on several threads to split its rows, B shared by all (BLIS's parallel ic loop), or its
    columns: on square products and on the partition's edge shapes, the same bits on 1, 2 and
    3 threads, within the float32 bound of numpy's float64 product."""
    shapes = [(300, 301, 302)] + partition_shapes(tg.float32)
    env = dict(os.environ, TRACEGRAD_GEMM_SPLIT=split)
    result = subprocess.run([sys.executable, "-c", FORCED_SPLIT.format(shapes=shapes)], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok"]


BATCHES = {(2,): (150, 120, 130), (3,): (110, 120, 130), (8,): (96, 80, 72), (2, 3): (17, 33, 65)}


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_and_broadcast_operands(variant, batch, threads, monkeypatch):
    """Batches of products: on two threads, a batch of 2 or 8 goes one whole product per
    thread, a batch of 3 splits each product instead (on three threads, the reverse; the
    small (2, 3) batch stays on one thread); a broadcast operand (stride 0 over the batch)
    is read in place."""
    use_variant(monkeypatch, variant)
    rng = np.random.default_rng(4)
    m, n, k = BATCHES[batch]
    a, b = operands(rng, m, n, k, np.float32, batch)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    assert_close((on_cpu(a, "contiguous") @ on_cpu(b, "transposed")).numpy(), a, b)
    shared = b[(0,) * len(batch)]                               # one b for every a
    broadcast = on_cpu(shared, "contiguous").expand(*batch, k, n)
    assert broadcast.strides[0] == 0
    out = matmul_with_bias(on_cpu(a, "strided"), broadcast, tg.from_numpy(bias, device="cpu"),
                           tg.float32)
    assert out.shape == batch + (m, n)
    assert_close(out, a, shared, bias)


@pytest.mark.parametrize("variant", VARIANTS)
def test_bias_is_converted_and_made_contiguous(variant, monkeypatch):
    """A bias of another dtype, or a strided view, is copied into a dense one first."""
    use_variant(monkeypatch, variant)
    rng = np.random.default_rng(5)
    a, b = operands(rng, 5, 9, 11, np.float32)
    bias = rng.uniform(-1, 1, 18)
    strided_bias = tg.from_numpy(bias, device="cpu")[::2]      # float64, stride 2
    out = matmul_with_bias(on_cpu(a, "contiguous"), on_cpu(b, "contiguous"), strided_bias, tg.float32)
    assert out.dtype == np.float32
    assert_close(out, a, b, bias[::2])


def test_bias_when_k_is_zero_and_for_integers(monkeypatch):
    use_variant(monkeypatch, "tinyblas")
    bias = tg.from_numpy(np.array([1.5, -2.0, 3.0]), device="cpu")
    empty_a, empty_b = tg.zeros((4, 0), dtype=tg.float64, device="cpu"), tg.zeros((0, 3), dtype=tg.float64, device="cpu")
    assert matmul_with_bias(empty_a, empty_b, bias, tg.float64).tolist() == [[1.5, -2.0, 3.0]] * 4
    a = tg.tensor([[1, 2], [3, 4]], device="cpu")              # int64: the python kernel, then + bias
    out = matmul_with_bias(a, a, tg.tensor([10, 20], device="cpu"), tg.int64)
    assert out.tolist() == [[17, 30], [25, 42]]


def test_bias_of_the_wrong_length_is_refused():
    a, b = tg.ones((2, 3), device="cpu"), tg.ones((3, 4), device="cpu")
    with pytest.raises(ValueError, match=r"bias must have shape \(4,\)"):
        CPU.matmul(a.as_view(), b.as_view(), tg.float32, bias=tg.ones(3, device="cpu").as_view())


def test_the_default_kernel_is_the_widest_this_cpu_runs():
    kernels = cpu_backend.gemm_kernels()
    assert kernels[0] == "generic" and len(set(kernels)) == len(kernels)
    assert set(kernels) <= {"generic", "avx2", "avx512"}
    if not os.environ.get("TRACEGRAD_GEMM_KERNEL"):
        assert cpu_backend.gemm_kernel() == kernels[-1]
    with pytest.raises(ValueError, match="cannot run the 'sse9'"):
        cpu_backend.use_gemm_kernel("sse9")
    with pytest.raises(TypeError, match="str"):
        cpu_backend.use_gemm_kernel(None)


def test_blocking_belongs_to_the_kernel_in_use(gemm_kernel):
    """What tests about blocks read: the register block fits in the cache blocks."""
    for dtype in (tg.float32, tg.float64):
        blocks = cpu_backend.gemm_blocking(dtype)
        assert 1 <= blocks["mr"] <= blocks["mc"] and 1 <= blocks["nr"] <= blocks["nc"] and blocks["kc"] >= 1
    with pytest.raises(TypeError, match="float32 or float64"):
        cpu_backend.gemm_blocking(tg.int32)


def test_kernel_can_be_forced_from_the_environment():
    """TRACEGRAD_GEMM_KERNEL picks the kernel; and importing the package sets OpenMP's spin
    count (GOMP_SPINCOUNT) when the environment has none."""
    code = ("import os; from stage3_native.cpu import backend as cpu_backend; "
            "print(cpu_backend.gemm_kernel(), os.environ['GOMP_SPINCOUNT'])")
    env = dict(os.environ, TRACEGRAD_GEMM_KERNEL="generic")
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["generic", "30000"]
    env["TRACEGRAD_GEMM_KERNEL"] = "sse9"              # none this CPU runs: the widest, and a warning
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.stdout.split() == [cpu_backend.gemm_kernels()[-1], "30000"]
    assert "TRACEGRAD_GEMM_KERNEL='sse9': this CPU cannot run it" in result.stderr
    # OpenMP's own wait policy is left alone: a spin count, set or not, would override it
    env["OMP_WAIT_POLICY"] = "passive"
    code = "import os, stage3_native; print(os.environ.get('GOMP_SPINCOUNT'))"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None"]


def test_a_parallel_region_is_timed(threads):
    """What benchmarks/gemm.py --wakeup reads: the seconds of an empty parallel region after
    an idle gap (threads.c), a positive time shorter than a second even on a loaded machine."""
    for gap in (0.0, 1e-5, 2e-3):
        seconds = cpu_backend.lib.tg_parallel_region_seconds(threads, gap)
        assert 0 < seconds < 1


def test_tinyblas_is_the_default_and_the_system_blas_is_opt_in(monkeypatch):
    monkeypatch.delenv("TRACEGRAD_BLAS", raising=False)
    assert stage3_native.CpuBackend().matmul_variant == "tinyblas"
    monkeypatch.setenv("TRACEGRAD_BLAS", "blas")
    assert stage3_native.CpuBackend().matmul_variant == ("blas" if HAS_CBLAS else "tinyblas")


def test_the_benchmark_keeps_openblas_threads_out_of_tinyblas_workers():
    """benchmarks/gemm.py: a TinyBLAS worker's OpenBLAS (its float64 references only) runs on
    one thread, or its idle threads spin on the cores TinyBLAS's threads need; OpenBLAS's
    own worker gets the thread count measured; --tail reports the slowest calls."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        import gemm as bench
    finally:
        sys.path.pop(0)
    args = bench.argparse.Namespace(blas_threads_in_ours=False, baseline=None, baseline_env=["X=1"])
    assert bench.worker_env("tinyblas", 2, args)["OPENBLAS_NUM_THREADS"] == "1"
    assert bench.worker_env("baseline", 2, args)["OPENBLAS_NUM_THREADS"] == "1"
    assert bench.worker_env("baseline", 2, args)["X"] == "1"
    openblas = bench.worker_env("openblas", 2, args)
    assert openblas["OPENBLAS_NUM_THREADS"] == "2" and openblas["OMP_NUM_THREADS"] == "2"
    args.blas_threads_in_ours = True
    assert bench.worker_env("tinyblas", 2, args)["OPENBLAS_NUM_THREADS"] == "2"
    slow = [100.0] * 98 + [1.0, 2.0]                    # 2 of 100 calls stalled
    table = bench.format_tail({"case": {"tinyblas": {"raw": slow}, "openblas": {"raw": [50.0] * 100}}})
    row = table.splitlines()[1].split()
    assert row[0] == "case" and float(row[2]) < 3 and float(row[1]) == 100.0 and row[-1] == "100"
