"""Device "cuda"'s matmul (stage3_native/cuda/matmul.cu, cublas.cu) against numpy.

Every variant the device can run (naive, tiled, vectorized; cuBLAS and its TF32 mode where
libcublas loads), in float32 and float64, on sizes that are not multiples of the tiled
kernels' blocks (128 x 128 tiles, k-steps of 8) and past two tiles in each direction (the
emulator's grids have two blocks per dimension, so the kernels' grid-stride loops run),
with transposed, sliced (no unit stride), offset and stride-0 operands, batched with
broadcast batch dimensions, with and without the fused bias. Devices "cuda-emu" (the same
kernels on the CPU), "cuda" (a GPU: skipped, with the reason, where there is none), and the
emulator with a stand-in for cuBLAS written for the host (HOST_CUBLAS below), so that the
way cublas.cu maps our products onto cuBLAS's calls is checked without a GPU too.

Each result is checked against numpy's float64 product of the same elements, to within
the rounding error a k-term sum of the dtype can have: 2 k eps times the sum of the
products' magnitudes (TF32 adds its rounding of the inputs, 2^-10 relative).
"""
import ctypes
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage3_native  # noqa: F401  (registers "cuda" and "cuda-emu")
from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage2_tensor.strides import make_strides
from stage3_native import cuda_build
from stage3_native.cuda import backend as cuda_backend

pytestmark = [pytest.mark.stage3, pytest.mark.slow]          # the CUDA checks: make test-slow

VARIANTS = ["naive", "tiled", "vectorized", "cublas", "cublas-tf32"]
DTYPES = {"float32": (dtypes.float32, np.float32), "float64": (dtypes.float64, np.float64)}
EPS = {dtypes.float32: np.finfo(np.float32).eps, dtypes.float64: np.finfo(np.float64).eps}

# (m, n, k): ones, primes around the tile (128) and k-step (8), and past two tiles
SHAPES = [(1, 1, 1), (1, 7, 3), (7, 1, 5), (7, 7, 7), (33, 65, 17), (65, 33, 130), (130, 129, 9),
          (3, 260, 1), (257, 5, 8), (1, 1, 300)]


# cuBLAS cannot run without a GPU, but the way cublas.cu hands it our row-major, strided,
# batched products (swapped operands, op N or T, leading dimensions, batch strides, copies,
# the bias) can: the emulator built with TG_CUBLAS_ON_HOST opens a stand-in libcublas, the C
# below: the BLAS definition of each function, column-major, on host memory, refusing (as
# cuBLAS does, CUBLAS_STATUS_INVALID_VALUE) a leading dimension too small for its matrix.
HOST_CUBLAS = "cuda-emu, cuBLAS stand-in"
HOST_CUBLAS_SOURCE = r"""
/* C (m x n) = alpha op(A) op(B) + beta C, column-major; op(A) is m x k, op(B) k x n */
template <typename T>
static int gemm(int ta, int tb, int m, int n, int k, T alpha, const T *a, int lda, long long sa,
                const T *b, int ldb, long long sb, T beta, T *c, int ldc, long long sc, int batch) {
    if (m < 0 || n < 0 || k < 0 || batch < 0 || (ta != 0 && ta != 1) || (tb != 0 && tb != 1)) return 7;
    int a_rows = ta ? k : m, b_rows = tb ? n : k;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1)) return 7;
    for (int t = 0; t < batch; t++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double sum = 0;
                for (int p = 0; p < k; p++)
                    sum += (double)(ta ? a[t * sa + p + (long long)i * lda] : a[t * sa + i + (long long)p * lda])
                         * (double)(tb ? b[t * sb + j + (long long)p * ldb] : b[t * sb + p + (long long)j * ldb]);
                T *out = &c[t * sc + i + (long long)j * ldc];
                *out = (T)(alpha * sum + (beta == 0 ? 0 : beta * *out));
            }
    return 0;
}

extern "C" {
int calls_gemm, calls_batched, calls_ex, calls_batched_ex;
static int handle_storage;
int cublasCreate_v2(void **handle) { *handle = &handle_storage; return 0; }

int cublasSgemm_v2(void *, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                   const float *b, int ldb, const float *beta, float *c, int ldc) {
    calls_gemm++;
    return gemm<float>(ta, tb, m, n, k, *alpha, a, lda, 0, b, ldb, 0, *beta, c, ldc, 0, 1);
}
int cublasDgemm_v2(void *, int ta, int tb, int m, int n, int k, const double *alpha, const double *a, int lda,
                   const double *b, int ldb, const double *beta, double *c, int ldc) {
    calls_gemm++;
    return gemm<double>(ta, tb, m, n, k, *alpha, a, lda, 0, b, ldb, 0, *beta, c, ldc, 0, 1);
}
int cublasSgemmStridedBatched(void *, int ta, int tb, int m, int n, int k, const float *alpha, const float *a,
                              int lda, long long sa, const float *b, int ldb, long long sb, const float *beta,
                              float *c, int ldc, long long sc, int batch) {
    calls_batched++;
    return gemm<float>(ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch);
}
int cublasDgemmStridedBatched(void *, int ta, int tb, int m, int n, int k, const double *alpha, const double *a,
                              int lda, long long sa, const double *b, int ldb, long long sb, const double *beta,
                              double *c, int ldc, long long sc, int batch) {
    calls_batched++;
    return gemm<double>(ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch);
}
/* float32 data (CUDA_R_32F, 0), float32 compute allowing TF32 (77), the default algorithm (-1) */
int cublasGemmEx(void *, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int at, int lda,
                 const void *b, int bt, int ldb, const void *beta, void *c, int ct, int ldc, int compute, int algo) {
    calls_ex++;
    if (at != 0 || bt != 0 || ct != 0 || compute != 77 || algo != -1) return 15;
    return gemm<float>(ta, tb, m, n, k, *(const float *)alpha, (const float *)a, lda, 0, (const float *)b, ldb,
                       0, *(const float *)beta, (float *)c, ldc, 0, 1);
}
int cublasGemmStridedBatchedEx(void *, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,
                               int at, int lda, long long sa, const void *b, int bt, int ldb, long long sb,
                               const void *beta, void *c, int ct, int ldc, long long sc, int batch, int compute,
                               int algo) {
    calls_batched_ex++;
    if (at != 0 || bt != 0 || ct != 0 || compute != 77 || algo != -1) return 15;
    return gemm<float>(ta, tb, m, n, k, *(const float *)alpha, (const float *)a, lda, sa, (const float *)b, ldb,
                       sb, *(const float *)beta, (float *)c, ldc, sc, batch);
}
}
"""


def _run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def host_cublas(tmp_path_factory):
    """(a backend of the emulator built with TG_CUBLAS_ON_HOST, with the stand-in cuBLAS
    loaded; the stand-in's call counters)."""
    from cffi import FFI
    folder = tmp_path_factory.mktemp("host_cublas")
    (folder / "cublas_stand_in.cpp").write_text(HOST_CUBLAS_SOURCE)
    stand_in = folder / "libcublas_stand_in.so"
    _run([*cuda_build.cxx().split(), "-shared", "-fPIC", "-O1", "-o", str(stand_in), str(folder / "cublas_stand_in.cpp")])
    compile_each, link = cuda_build.commands("cuda-emu", folder)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(lambda command: _run([command[0], "-DTG_CUBLAS_ON_HOST", *command[1:]]), compile_each))
    library = folder / "_cuda_emu_host_cublas.so"
    link[link.index("-o") + 1] = str(library)
    _run(link)
    ffi = FFI()
    ffi.cdef(cuda_build.declarations())
    lib = ffi.dlopen(str(library))
    saved = os.environ.get("TRACEGRAD_CUBLAS")
    os.environ["TRACEGRAD_CUBLAS"] = str(stand_in)     # tried first: never a real libcublas here
    try:
        assert lib.tg_cuda_has_cublas() == 1
    finally:
        if saved is None:
            del os.environ["TRACEGRAD_CUBLAS"]
        else:
            os.environ["TRACEGRAD_CUBLAS"] = saved
    be = cuda_backend.CudaBackend(HOST_CUBLAS, ffi, lib)
    assert be.has_cublas() and be.cublas_library() == str(stand_in)
    return be, ctypes.CDLL(str(stand_in))         # the same loaded library: its counters


# The variants each device runs: the emulator has no cuBLAS (test_emulator_never_loads_cublas),
# the stand-in is there for cuBLAS alone (its kernels are the emulator's), a GPU has all five.
DEVICE_VARIANTS = {"cuda-emu": ["naive", "tiled", "vectorized"], "cuda": VARIANTS,
                   HOST_CUBLAS: ["cublas", "cublas-tf32"]}


def pytest_generate_tests(metafunc):
    """A test that asks for `be` runs on each device and the stand-in; one that also asks
    for `variant`, with each variant that device runs (no combination that never can)."""
    if "be" not in metafunc.fixturenames:
        return
    with_variant = "variant" in metafunc.fixturenames
    params = []
    for device, variants in DEVICE_VARIANTS.items():
        marks = [] if device == HOST_CUBLAS else [pytest.mark.device(device)]
        params += ([pytest.param(device, variant, marks=marks) for variant in variants] if with_variant
                   else [pytest.param(device, marks=marks)])
    metafunc.parametrize("be, variant" if with_variant else "be", params, indirect=True)


@pytest.fixture
def be(request):
    if request.param == HOST_CUBLAS:
        return request.getfixturevalue("host_cublas")[0]
    return backend.get(request.param)


@pytest.fixture
def variant(request, be, monkeypatch):
    """The variant on the device (skipped on a GPU whose cuBLAS did not load), the default back after."""
    if request.param not in be.matmul_variants():
        pytest.skip(f"{request.param} cannot run on {be.name}: cuBLAS did not load")
    monkeypatch.setattr(be, "matmul_variant", request.param)
    return request.param


@pytest.fixture(params=list(DTYPES))
def dtype(request):
    return DTYPES[request.param]


def operand(be, rng, shape, strides, offset, dtype):
    """A device View of `shape` with these element strides and offset, into a buffer of
    random values, and a numpy copy of the elements it shows."""
    tg_dtype, np_dtype = dtype
    size = offset + sum((s - 1) * st for s, st in zip(shape, strides)) + 1 if all(shape) else offset + 1
    flat = rng.standard_normal(size).astype(np_dtype)
    host = np.lib.stride_tricks.as_strided(flat[offset:], shape, [st * flat.itemsize for st in strides])
    return View(be.from_bytes(flat.tobytes(), tg_dtype), tuple(shape), tuple(strides), offset, tg_dtype), host.copy()


def contiguous(be, rng, shape, dtype):
    return operand(be, rng, shape, make_strides(shape), 0, dtype)


def bias_operand(be, rng, n, dtype, step=1, offset=0):
    return operand(be, rng, (n,), (step,), offset, dtype)


def product(be, a, b, dtype, bias=None):
    """be.matmul's result as a numpy array of shape (batch..., m, n)."""
    shape = tuple(a.shape[:-1]) + (b.shape[-1],)
    out = be.matmul(a, b, dtype[0], bias)
    return be.as_numpy(View(out, shape, make_strides(shape), 0, dtype[0]))


def check(got, a, b, dtype, variant, bias=None):
    """got == a @ b (+ bias) to within the rounding a k-term sum in `dtype` may have."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    expected = a @ b + (0 if bias is None else bias.astype(np.float64))
    magnitude = np.abs(a) @ np.abs(b) + (0 if bias is None else np.abs(bias.astype(np.float64)))
    k = a.shape[-1]
    relative = 2 * (k + 1) * EPS[dtype[0]]
    if variant == "cublas-tf32" and dtype[0] is dtypes.float32:
        relative += 2 * 2.0 ** -10                    # TF32 keeps 10 of float32's 23 mantissa bits
    assert got.shape == expected.shape
    assert got.dtype == dtype[1]
    error = np.abs(got.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(error - relative * magnitude), error.shape) if error.size else None
    assert np.all(error <= relative * magnitude + 1e-300), \
        f"{variant}: error {error[worst]:.3g} at {worst}, allowed {relative * magnitude[worst]:.3g}"


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_every_variant_matches_numpy(be, variant, dtype, m, n, k):
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    a, ha = contiguous(be, rng, (m, k), dtype)
    b, hb = contiguous(be, rng, (k, n), dtype)
    check(product(be, a, b, dtype), ha, hb, dtype, variant)


# (shape-independent) layouts of a (rows, cols) operand: (strides, offset) from rows, cols
LAYOUTS = {
    "contiguous": lambda r, c: ((c, 1), 0),
    "transposed": lambda r, c: ((1, r), 0),                # a .T view of a contiguous (c, r)
    "offset": lambda r, c: ((c, 1), 5),                    # a view starting mid-buffer
    "padded rows": lambda r, c: ((c + 3, 1), 2),           # a column slice: row stride > cols
    "stepped": lambda r, c: ((2 * c + 3, 2), 1),           # x[:, ::2]-like: no unit stride
    "stepped transposed": lambda r, c: ((2, 2 * r + 1), 0),
    "row broadcast": lambda r, c: ((0, 1), 0),              # every row the same (stride 0)
}


@pytest.mark.parametrize("a_layout", list(LAYOUTS))
@pytest.mark.parametrize("b_layout", list(LAYOUTS))
def test_operand_layouts(be, variant, dtype, a_layout, b_layout):
    """Transposed, offset, sliced and stride-0 operands: the tiled kernel reads each along
    whichever dimension is contiguous, cuBLAS as op N / op T or from a contiguous copy."""
    m, n, k = 37, 70, 19
    rng = np.random.default_rng(1)
    a, ha = operand(be, rng, (m, k), *LAYOUTS[a_layout](m, k), dtype)
    b, hb = operand(be, rng, (k, n), *LAYOUTS[b_layout](k, n), dtype)
    check(product(be, a, b, dtype), ha, hb, dtype, variant)


# The vectorized kernel reads an operand with 128-bit loads only where every run of 4 along
# its unit stride starts on a 16-byte boundary (offset, leading stride and batch strides
# multiples of 4), else with scalar loads: layouts of a (rows, cols) operand on either side
# of that line, row-major and transposed. (strides, offset) from rows, cols.
def _up4(x):
    return (x + 3) // 4 * 4


ALIGNMENT_LAYOUTS = {
    "aligned": lambda r, c: ((_up4(c), 1), 0),
    "aligned, offset 4": lambda r, c: ((_up4(c), 1), 4),
    "offset 1": lambda r, c: ((_up4(c), 1), 1),
    "offset 2": lambda r, c: ((_up4(c), 1), 2),
    "lead not a multiple of 4": lambda r, c: ((_up4(c) + 1, 1), 0),
    "transposed aligned": lambda r, c: ((1, _up4(r) + 4), 8),
    "transposed offset 3": lambda r, c: ((1, _up4(r)), 3),
    "transposed lead not a multiple of 4": lambda r, c: ((1, _up4(r) + 2), 0),
}
FLOAT32 = DTYPES["float32"]


@pytest.mark.parametrize("a_layout", list(ALIGNMENT_LAYOUTS))
@pytest.mark.parametrize("b_layout", list(ALIGNMENT_LAYOUTS))
@pytest.mark.parametrize("m, n, k", [(72, 68, 36), (70, 130, 34)])
def test_alignment_of_vector_loads(be, variant, a_layout, b_layout, m, n, k):
    """float32, every mix of aligned and misaligned, row-major and transposed operands; k
    ends mid-slab (36: a whole run of 4 past the last full k-step, 34: part of one), and the
    second shape has rows and columns that end mid-run and n past a tile."""
    rng = np.random.default_rng(m + n + k)
    a, ha = operand(be, rng, (m, k), *ALIGNMENT_LAYOUTS[a_layout](m, k), FLOAT32)
    b, hb = operand(be, rng, (k, n), *ALIGNMENT_LAYOUTS[b_layout](k, n), FLOAT32)
    check(product(be, a, b, FLOAT32), ha, hb, FLOAT32, variant)


@pytest.mark.parametrize("m, n", [(1, 1), (127, 129), (128, 128), (129, 127), (1, 132), (256, 128)])
@pytest.mark.parametrize("k", range(1, 10))
@pytest.mark.parametrize("transposed", [False, True], ids=["rows", "transposed"])
def test_tile_edges(be, variant, m, n, k, transposed):
    """float32 around the tile's edges (127, 128, 129) and the k-step's (k = 1 .. 9, also
    k < 8, a single partial slab), operands aligned so that the vectorized kernel takes its
    128-bit loads wherever a whole run of 4 lies inside them, with the bias: output rows of
    132 are stored as float4s, odd ones element by element."""
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    layout = ALIGNMENT_LAYOUTS["transposed aligned" if transposed else "aligned"]
    a, ha = operand(be, rng, (m, k), *layout(m, k), FLOAT32)
    b, hb = operand(be, rng, (k, n), *layout(k, n), FLOAT32)
    bias, hbias = bias_operand(be, rng, n, FLOAT32)
    check(product(be, a, b, FLOAT32, bias), ha, hb, FLOAT32, variant, hbias)


@pytest.mark.parametrize("a_transposed", [False, True], ids=["a", "a.T"])
@pytest.mark.parametrize("b_transposed", [False, True], ids=["b", "b.T"])
@pytest.mark.parametrize("with_bias", [False, True], ids=["", "bias"])
def test_whole_tiles(be, variant, a_transposed, b_transposed, with_bias):
    """float32 products of whole 128 x 128 tiles and whole k-steps with every operand
    aligned, the case the vectorized kernel runs without edge checks (its WHOLE version):
    a batch of 3 with b broadcast, two tiles along n, three k-steps, each layout."""
    m, n, k = 128, 256, 24
    rng = np.random.default_rng(10 + 2 * a_transposed + b_transposed)
    a_strides = (m * k, 1, m) if a_transposed else (m * k, k, 1)
    b_strides = (0, 1, k) if b_transposed else (0, n, 1)
    a, ha = operand(be, rng, (3, m, k), a_strides, 4, FLOAT32)
    b, hb = operand(be, rng, (3, k, n), b_strides, 8, FLOAT32)
    bias, hbias = bias_operand(be, rng, n, FLOAT32) if with_bias else (None, None)
    check(product(be, a, b, FLOAT32, bias), ha, hb, FLOAT32, variant, hbias)


@pytest.mark.parametrize("a_entry", [20 * 12, 20 * 12 + 1, 0], ids=["aligned", "misaligned", "broadcast"])
@pytest.mark.parametrize("b_offset", [0, 4, 1])
@pytest.mark.parametrize("n", [36, 37])
def test_batch_alignment(be, variant, a_entry, b_offset, n):
    """A batch of 3 whose entries of a are 16-byte aligned, or every other one not (an entry
    stride not a multiple of 4), or one a shared by all (stride 0), times one b broadcast
    over the batch, aligned or not; n = 36 stores float4s, 37 cannot."""
    m, k = 20, 12
    rng = np.random.default_rng(a_entry + b_offset + n)
    a, ha = operand(be, rng, (3, m, k), (a_entry, k, 1), 4, FLOAT32)
    b, hb = operand(be, rng, (3, k, n), (0, n, 1), b_offset, FLOAT32)
    bias, hbias = bias_operand(be, rng, n, FLOAT32)
    check(product(be, a, b, FLOAT32, bias), ha, hb, FLOAT32, variant, hbias)


@pytest.mark.parametrize("a_strides", [(17, 1), (1, 1), (0, 1), (5, 3)])
@pytest.mark.parametrize("b_strides", [(1, 1), (1, 0), (3, 7), (1, 17)])
def test_row_times_column(be, variant, dtype, a_strides, b_strides):
    """A (1, k) row times a (k, 1) column, with the strides of its size-1 dimension whatever
    the view left there (1, 0, any): what matters is only the other one."""
    k = 17
    rng = np.random.default_rng(9)
    a, ha = operand(be, rng, (1, k), a_strides, 2, dtype)
    b, hb = operand(be, rng, (k, 1), b_strides, 0, dtype)
    check(product(be, a, b, dtype), ha, hb, dtype, variant)
    b, hb = operand(be, rng, (k, 3), (b_strides[0], 40), 1, dtype)     # and a row of three
    check(product(be, a, b, dtype), ha, hb, dtype, variant)


# batch shape, a's batch strides, b's batch strides (in units of one matrix; 0: broadcast)
BATCHES = [
    ((5,), (1,), (1,)),                  # 5 entries: past the emulator's two blocks in z
    ((5,), (1,), (0,)),                  # b shared by every entry (x @ W over a batch)
    ((5,), (0,), (1,)),
    ((2, 3), (3, 1), (0, 1)),            # b broadcast over the first dim: two batch dims stay
    ((2, 3), (1, 2), (3, 1)),            # a's batch dims swapped (a transposed batch)
    ((3, 1, 2), (2, 0, 1), (0, 0, 1)),   # size-1 dims, broadcast
]


@pytest.mark.parametrize("batch, a_units, b_units", BATCHES)
@pytest.mark.parametrize("with_bias", [False, True], ids=["", "bias"])
def test_batched_and_broadcast(be, variant, dtype, batch, a_units, b_units, with_bias):
    m, n, k = 19, 33, 11
    rng = np.random.default_rng(2)
    entries = int(np.prod(batch))
    # a: every batch entry is a transposed (m, k) matrix; b: row-major (k, n)
    a, ha = operand(be, rng, batch + (m, k), tuple(u * m * k for u in a_units) + (1, m), 0, dtype)
    b, hb = operand(be, rng, batch + (k, n), tuple(u * k * n for u in b_units) + (n, 1), 3, dtype)
    bias, hbias = bias_operand(be, rng, n, dtype) if with_bias else (None, None)
    got = product(be, a, b, dtype, bias)
    assert got.shape == batch + (m, n) and entries == int(np.prod(got.shape[:-2]))
    check(got, ha, hb, dtype, variant, hbias)


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (7, 9, 5), (130, 131, 17)])
def test_bias_epilogue(be, variant, dtype, m, n, k):
    """Linear's x @ W.T + b in one call: W a transposed view, the bias added to every row,
    from a strided bias too (copied to a dense one first)."""
    rng = np.random.default_rng(3)
    x, hx = contiguous(be, rng, (m, k), dtype)
    w_t, hw_t = operand(be, rng, (k, n), (1, k), 0, dtype)
    for bias, hbias in (bias_operand(be, rng, n, dtype), bias_operand(be, rng, n, dtype, step=3, offset=2)):
        got = product(be, x, w_t, dtype, bias)
        check(got, hx, hw_t, dtype, variant, hbias)


def test_empty_products(be, variant, dtype):
    """k = 0: every element is an empty sum, 0, or the bias; m or n = 0: nothing at all."""
    rng = np.random.default_rng(4)
    a, _ = contiguous(be, rng, (3, 0), dtype)
    b, _ = contiguous(be, rng, (0, 4), dtype)
    assert np.array_equal(product(be, a, b, dtype), np.zeros((3, 4)))
    bias, hbias = bias_operand(be, rng, 4, dtype)
    assert np.array_equal(product(be, a, b, dtype, bias), np.broadcast_to(hbias, (3, 4)))
    a, _ = contiguous(be, rng, (0, 5), dtype)
    b, _ = contiguous(be, rng, (5, 4), dtype)
    assert product(be, a, b, dtype).shape == (0, 4)
    a, _ = contiguous(be, rng, (2, 0, 5), dtype)
    b, _ = contiguous(be, rng, (2, 5, 0), dtype)
    assert product(be, a, b, dtype).shape == (2, 0, 0)


def test_integer_matmul_falls_back_to_python(be):
    """int64: the python backend's product (exact), then the bias added on the device."""
    rng = np.random.default_rng(5)
    ha, hb, hbias = rng.integers(-9, 9, (4, 6)), rng.integers(-9, 9, (6, 3)), rng.integers(-9, 9, 3)
    a = View(be.from_bytes(ha.tobytes(), dtypes.int64), (4, 6), (6, 1), 0, dtypes.int64)
    b = View(be.from_bytes(hb.T.copy().tobytes(), dtypes.int64), (6, 3), (1, 6), 0, dtypes.int64)
    bias = View(be.from_bytes(hbias.tobytes(), dtypes.int64), (3,), (1,), 0, dtypes.int64)
    for with_bias in (None, bias):
        out = be.matmul(a, b, dtypes.int64, with_bias)
        got = be.as_numpy(View(out, (4, 3), (3, 1), 0, dtypes.int64))
        assert np.array_equal(got, ha @ hb + (0 if with_bias is None else hbias))


def test_through_tensors_and_autograd(be, variant):
    """tracegrad's matmul (with its transpose flags) and Linear on the device: values and
    gradients (each a matmul of transposed views) against numpy, in float64."""
    if be.name == HOST_CUBLAS:
        pytest.skip("the stand-in is no registered device (its product ran in the other tests)")
    device = be.name
    rng = np.random.default_rng(6)
    hx, hw, hb = rng.standard_normal((2, 37, 20)), rng.standard_normal((45, 20)), rng.standard_normal(45)
    hy = rng.standard_normal((20, 9))
    x = tg.tensor(hx.tolist(), dtype=tg.float64, device=device, requires_grad=True)
    w = tg.tensor(hw.tolist(), dtype=tg.float64, device=device, requires_grad=True)
    b = tg.tensor(hb.tolist(), dtype=tg.float64, device=device, requires_grad=True)
    y = tg.tensor(hy.tolist(), dtype=tg.float64, device=device, requires_grad=True)
    out = tg.matmul(F.linear(x, w, b), w, transpose_a=False, transpose_b=False) @ y   # (2, 37, 9)
    expected = (hx @ hw.T + hb) @ hw @ hy
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(expected.shape)
    out.backward(tg.tensor(g.tolist(), dtype=tg.float64, device=device))
    h = hx @ hw.T + hb                                  # the Linear's output
    dh = g @ hy.T @ hw.T                                 # d out / d h
    np.testing.assert_allclose(y.grad.numpy(), np.einsum("bik,bij->kj", h @ hw, g), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(x.grad.numpy(), dh @ hw, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(b.grad.numpy(), dh.sum((0, 1)), rtol=1e-10, atol=1e-9)
    dw = np.einsum("bio,bik->ok", dh, hx) + np.einsum("bio,bij->oj", h, g @ hy.T)
    np.testing.assert_allclose(w.grad.numpy(), dw, rtol=1e-10, atol=1e-9)


def test_variant_setting(be):
    """The default is cuBLAS where it loaded, else the tiled kernel; a variant the device
    cannot run is refused, with why."""
    available = be.matmul_variants()
    assert available[:3] == ["naive", "tiled", "vectorized"]
    assert ("cublas" in available) == be.has_cublas()
    saved = be.matmul_variant
    try:
        be._matmul_variant = None                       # as a fresh backend has it
        assert be.matmul_variant == ("cublas" if be.has_cublas() else "tiled")
        with pytest.raises(ValueError, match="expected one of naive, tiled, vectorized, cublas, cublas-tf32"):
            be.matmul_variant = "blas"
        if not be.has_cublas():
            with pytest.raises(ValueError, match="emulator has no cuBLAS" if be.name == "cuda-emu" else "cuBLAS"):
                be.matmul_variant = "cublas"
    finally:
        be.matmul_variant = saved


def test_emulator_never_loads_cublas():
    """The emulator's buffers are host memory: cuBLAS is never opened there, and a product
    asked of cuBLAS is declined (TG_CUBLAS_DECLINED), so tg_cuda_matmul runs the tiled
    kernel instead and still gets it right."""
    be = backend.get("cuda-emu")
    assert not be.has_cublas() and be.cublas_library() == ""
    assert be.lib.tg_cuda_cublas_load(b"libcublas.so.12") == 0
    rng = np.random.default_rng(7)
    dtype = DTYPES["float64"]
    a, ha = contiguous(be, rng, (9, 12), dtype)
    b, hb = contiguous(be, rng, (12, 5), dtype)
    out = be.allocate(45, dtypes.float64)
    args = (0, (), (), 0, (), 0, 9, 5, 12, a.buffer, 12, 1, b.buffer, 5, 1, be.ffi.NULL, out)
    assert be.lib.tg_cuda_cublas_matmul(0, 4, *args) == be.lib.TG_CUBLAS_DECLINED
    assert be.lib.tg_cuda_matmul(be.MATMUL_VARIANTS["cublas"], 4, *args) == 0
    check(be.as_numpy(View(out, (9, 5), (5, 1), 0, dtypes.float64)), ha, hb, dtype, "tiled")


def test_cublas_errors_say_cublas(be):
    """cuBLAS's status codes are not CUDA errors: the message names cuBLAS and the status."""
    with pytest.raises(cuda_backend.CudaError, match=r"cuBLAS status 7 \(CUBLAS_STATUS_INVALID_VALUE\)"):
        be._check_matmul(be.lib.TG_CUBLAS_STATUS + 7)
    with pytest.raises(cuda_backend.CudaError, match=r"CUDA error 2"):
        be._check_matmul(2)
    be._check_matmul(0)


@pytest.mark.parametrize("batch, a_units, b_units, calls", [
    ((), (), (), {"calls_gemm": 1}),
    ((5,), (1,), (0,), {"calls_batched": 1}),                 # one strided-batched call
    ((2, 3), (3, 1), (3, 1), {"calls_batched": 1}),           # the dims collapse to one
    ((2, 3), (3, 1), (0, 1), {"calls_batched": 1}),           # b's two strides: b copied first
    ((2, 3), (1, 2), (3, 1), {"calls_batched": 1}),           # a's batch transposed: a copied
])
@pytest.mark.parametrize("tf32", [False, True])
def test_cublas_calls(host_cublas, batch, a_units, b_units, calls, tf32, monkeypatch):
    """One cuBLAS call per product, whatever the batch's layout, and TF32 through the Ex
    functions."""
    be, stand_in = host_cublas
    monkeypatch.setattr(be, "matmul_variant", "cublas-tf32" if tf32 else "cublas")
    if tf32:
        calls = {name.replace("calls_gemm", "calls_ex").replace("calls_batched", "calls_batched_ex"): count
                 for name, count in calls.items()}
    names = ("calls_gemm", "calls_batched", "calls_ex", "calls_batched_ex")
    before = {name: ctypes.c_int.in_dll(stand_in, name).value for name in names}
    m, n, k = 6, 5, 4
    rng = np.random.default_rng(8)
    dtype = DTYPES["float32"]
    a, ha = operand(be, rng, batch + (m, k), tuple(u * m * k for u in a_units) + (k, 1), 0, dtype)
    b, hb = operand(be, rng, batch + (k, n), tuple(u * k * n for u in b_units) + (1, k), 0, dtype)
    check(product(be, a, b, dtype), ha, hb, dtype, "cublas")
    made = {name: ctypes.c_int.in_dll(stand_in, name).value - before[name] for name in names}
    assert made == {name: calls.get(name, 0) for name in names}
