/* cuBLAS, NVIDIA's BLAS for the GPU, behind device "cuda"'s matmul (chapter on native
 * kernels, section "CUDA"): the yardstick for the hand-written kernels of matmul.cu, and
 * the default when it is there.
 *
 * It is opened at run time (dlopen), never linked: the library builds without cuBLAS's
 * headers or libraries, and runs without them, with the tiled kernel instead. So the few
 * types and constants it needs are declared here, with the values of NVIDIA's cublas_api.h
 * and library_types.h (checked against NVIDIA's documentation; a wrong one would show only
 * on a GPU).
 *
 * cuBLAS speaks Fortran's column-major order, where tracegrad's matrices are row-major.
 * A row-major matrix read as column-major is its transpose, so the row-major product
 * C = A B is the column-major C^T = B^T A^T: the same call with the operands swapped, and
 * C comes out row-major with nothing transposed (see cublas_gemm below). */
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include "runtime.cuh"

typedef void *cublasHandle_t;                     /* an opaque struct cublasContext * */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };        /* cublasOperation_t */
enum { R_32F = 0 };          /* cudaDataType's CUDA_R_32F (a name cuda_runtime.h declares) */
enum { CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };       /* cublasComputeType_t */
enum { CUBLAS_GEMM_DEFAULT = -1 };                /* cublasGemmAlgo_t */
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_SUPPORTED = 15 };

/* The functions used, as cublas_api.h declares them (enums passed as int: the same in C's
 * calling convention). alpha and beta point to host memory, cuBLAS's default. */
typedef int (*create_fn)(cublasHandle_t *handle);
typedef int (*sgemm_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const float *alpha,
                        const float *a, int lda, const float *b, int ldb, const float *beta, float *c, int ldc);
typedef int (*dgemm_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const double *alpha,
                        const double *a, int lda, const double *b, int ldb, const double *beta, double *c, int ldc);
typedef int (*sgemm_batched_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const float *alpha,
                                const float *a, int lda, long long stride_a, const float *b, int ldb,
                                long long stride_b, const float *beta, float *c, int ldc, long long stride_c,
                                int batch);
typedef int (*dgemm_batched_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const double *alpha,
                                const double *a, int lda, long long stride_a, const double *b, int ldb,
                                long long stride_b, const double *beta, double *c, int ldc, long long stride_c,
                                int batch);
typedef int (*gemm_ex_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const void *alpha,
                          const void *a, int a_type, int lda, const void *b, int b_type, int ldb,
                          const void *beta, void *c, int c_type, int ldc, int compute, int algo);
typedef int (*gemm_batched_ex_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const void *alpha,
                                  const void *a, int a_type, int lda, long long stride_a, const void *b,
                                  int b_type, int ldb, long long stride_b, const void *beta, void *c, int c_type,
                                  int ldc, long long stride_c, int batch, int compute, int algo);

static struct {
    bool tried;                   /* the default names were tried (once) */
    void *library;
    const char *path;
    create_fn create;
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    sgemm_batched_fn sgemm_batched;
    dgemm_batched_fn dgemm_batched;
    gemm_ex_fn gemm_ex;                           /* these two for TF32; optional */
    gemm_batched_ex_fn gemm_batched_ex;
    cublasHandle_t handle;
} cublas;
static std::mutex cublas_lock;

/* Open one candidate; true when it has every function needed. */
static bool open_cublas(const char *path) {
#if defined(TG_CUDA_EMULATE) && !defined(TG_CUBLAS_ON_HOST)
    (void)path;
    return false;                 /* the emulator's "device" memory is host memory, which no
                                     cuBLAS reads (the tests build with TG_CUBLAS_ON_HOST to
                                     load a stand-in written for the host) */
#else
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) return false;
    create_fn create = (create_fn)dlsym(library, "cublasCreate_v2");
    sgemm_fn sgemm = (sgemm_fn)dlsym(library, "cublasSgemm_v2");
    dgemm_fn dgemm = (dgemm_fn)dlsym(library, "cublasDgemm_v2");
    sgemm_batched_fn sgemm_batched = (sgemm_batched_fn)dlsym(library, "cublasSgemmStridedBatched");
    dgemm_batched_fn dgemm_batched = (dgemm_batched_fn)dlsym(library, "cublasDgemmStridedBatched");
    if (!create || !sgemm || !dgemm || !sgemm_batched || !dgemm_batched) {
        dlclose(library);
        return false;
    }
    cublas.library = library;
    cublas.path = path;
    cublas.create = create;
    cublas.sgemm = sgemm;
    cublas.dgemm = dgemm;
    cublas.sgemm_batched = sgemm_batched;
    cublas.dgemm_batched = dgemm_batched;
    cublas.gemm_ex = (gemm_ex_fn)dlsym(library, "cublasGemmEx");
    cublas.gemm_batched_ex = (gemm_batched_ex_fn)dlsym(library, "cublasGemmStridedBatchedEx");
    return true;
#endif
}

/* The handle, made at the first product (cublasCreate needs the GPU). */
static int cublas_handle(cublasHandle_t *handle) {
    std::lock_guard<std::mutex> guard(cublas_lock);
    int status = cublas.handle ? CUBLAS_STATUS_SUCCESS : cublas.create(&cublas.handle);
    *handle = cublas.handle;
    return status;
}

/* How cuBLAS can read X, a (rows x cols) operand with these strides. cuBLAS is handed X^T
 * (see cublas_gemm), and X's memory read column-major, with leading dimension ld, is
 *   - X^T itself when X's rows are contiguous (element (r, c) at r * ld + c): CUBLAS_OP_N;
 *   - X when its columns are (element (r, c) at c * ld + r): transposed, CUBLAS_OP_T.
 * ld must be at least the length of the contiguous runs; a dimension of size 1 has no
 * stride worth keeping. false: neither (a slice with a step, a stride-0 broadcast inside
 * the matrix), and the operand is copied first. */
static bool blas_layout(i64 rows, i64 cols, i64 s_row, i64 s_col, int *op, i64 *ld) {
    i64 row_len = cols > 1 ? cols : 1, col_len = rows > 1 ? rows : 1;
    if ((s_col == 1 || cols == 1) && (rows == 1 || s_row >= row_len)) {
        *op = CUBLAS_OP_N;
        *ld = rows == 1 ? row_len : s_row;
    } else if ((s_row == 1 || rows == 1) && (cols == 1 || s_col >= col_len)) {
        *op = CUBLAS_OP_T;
        *ld = cols == 1 ? col_len : s_col;
    } else {
        return false;
    }
    return *ld <= INT_MAX;
}

/* One operand as cuBLAS reads it: its first matrix, the step from one batch entry's matrix
 * to the next, and how each matrix is laid out (op, ld). */
template <typename T>
struct Operand {
    const T *first;
    i64 step;                     /* elements; 0: one matrix for every entry (broadcast) */
    int op;
    i64 ld;
    T *copy;                      /* a contiguous copy made for cuBLAS, freed after the call */
};

/* The strided-batched functions take one stride per operand: fine when its batch
 * dimensions collapse to one (runtime.cuh's strided), as they do for contiguous batches,
 * broadcasts of a whole batch and x @ W's W. Otherwise (the heads of attention, views of
 * q, k and v, walk two strides), or when cuBLAS cannot read its matrices, the operand is
 * copied to a contiguous (batch, rows, cols) first: one copy kernel, and the product is
 * still a single cuBLAS call instead of one per entry of the outer dimensions. */
template <typename T>
static int prepare(Operand<T> *x, int dtype, int batch_ndim, const i64 *batch_shape, const i64 *batch_strides,
                   i64 offset, i64 rows, i64 cols, const T *data, i64 s_row, i64 s_col) {
    i64 zero = 0;
    Strided<1> batch = strided<1>(batch_ndim, batch_shape, &batch_strides, &zero);
    x->first = data + offset;
    x->step = batch.ndim == 1 ? batch.strides[0][0] : 0;
    x->copy = NULL;
    if (batch.ndim <= 1 && blas_layout(rows, cols, s_row, s_col, &x->op, &x->ld)) return 0;
    i64 shape[TG_MAX_DIMS + 2], from[TG_MAX_DIMS + 2], to[TG_MAX_DIMS + 2];
    int ndim = batch_ndim + 2;
    for (int d = 0; d < batch_ndim; d++) {
        shape[d] = batch_shape[d];
        from[d] = batch_strides[d];
    }
    shape[batch_ndim] = rows;
    shape[batch_ndim + 1] = cols;
    from[batch_ndim] = s_row;
    from[batch_ndim + 1] = s_col;
    i64 size = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        to[d] = size;
        size *= shape[d];
    }
    int status;
    x->copy = (T *)tg_cuda_malloc((size_t)size * sizeof(T), &status);
    if (!x->copy) return status;
    status = tg_cuda_copy(ndim, shape, data, dtype, from, offset, x->copy, dtype, to, 0);
    x->first = x->copy;
    x->step = rows * cols;
    blas_layout(rows, cols, cols, 1, &x->op, &x->ld);
    return status;
}

/* batch products C_t = A_t B_t, C_t at c + t * m * n, as the column-major C_t^T (n x m) =
 * op(B_t) op(A_t): cuBLAS's "A" is our b, its "B" our a. One call: the plain gemm for a
 * single product, the strided-batched one for several. */
static int cublas_gemm(cublasHandle_t handle, bool tf32, i64 batch, int m, int n, int k,
                       const Operand<float> &a, const Operand<float> &b, float beta, float *c) {
    const float one = 1;
    if (tf32) {                   /* float32 in and out, products on TF32 tensor cores */
        if (!cublas.gemm_ex || !cublas.gemm_batched_ex) return CUBLAS_STATUS_NOT_SUPPORTED;
        if (batch == 1)
            return cublas.gemm_ex(handle, b.op, a.op, n, m, k, &one, b.first, R_32F, (int)b.ld, a.first, R_32F,
                                  (int)a.ld, &beta, c, R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32,
                                  CUBLAS_GEMM_DEFAULT);
        return cublas.gemm_batched_ex(handle, b.op, a.op, n, m, k, &one, b.first, R_32F, (int)b.ld, b.step,
                                      a.first, R_32F, (int)a.ld, a.step, &beta, c, R_32F, n,
                                      (long long)m * n, (int)batch, CUBLAS_COMPUTE_32F_FAST_TF32,
                                      CUBLAS_GEMM_DEFAULT);
    }
    if (batch == 1)
        return cublas.sgemm(handle, b.op, a.op, n, m, k, &one, b.first, (int)b.ld, a.first, (int)a.ld, &beta, c, n);
    return cublas.sgemm_batched(handle, b.op, a.op, n, m, k, &one, b.first, (int)b.ld, b.step, a.first,
                                (int)a.ld, a.step, &beta, c, n, (long long)m * n, (int)batch);
}

static int cublas_gemm(cublasHandle_t handle, bool, i64 batch, int m, int n, int k,
                       const Operand<double> &a, const Operand<double> &b, double beta, double *c) {
    const double one = 1;         /* TF32 is for float32: float64 stays float64 */
    if (batch == 1)
        return cublas.dgemm(handle, b.op, a.op, n, m, k, &one, b.first, (int)b.ld, a.first, (int)a.ld, &beta, c, n);
    return cublas.dgemm_batched(handle, b.op, a.op, n, m, k, &one, b.first, (int)b.ld, b.step, a.first,
                                (int)a.ld, a.step, &beta, c, n, (long long)m * n, (int)batch);
}

/* out = the bias row repeated: cuBLAS then adds the product to it (beta = 1) */
template <typename T>
__global__ void bias_rows_kernel(i64 total, i64 n, const T *bias, T *out) {
    for_each_index(i, total) out[i] = bias[i % n];
}

template <typename T>
static int cublas_matmul(bool tf32, int dtype, int batch_ndim, const i64 *batch_shape,
                         const i64 *a_batch_strides, i64 a_offset, const i64 *b_batch_strides, i64 b_offset,
                         i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                         const T *bias, T *out) {
    i64 batch = numel(batch_ndim, batch_shape);
    if (batch > INT_MAX) return TG_CUBLAS_DECLINED;
    cublasHandle_t handle;
    int status = cublas_handle(&handle);
    if (status) return TG_CUBLAS_STATUS + status;
    Operand<T> ao, bo;
    bo.copy = NULL;
    status = prepare(&ao, dtype, batch_ndim, batch_shape, a_batch_strides, a_offset, m, k, a, sa_i, sa_p);
    if (!status)
        status = prepare(&bo, dtype, batch_ndim, batch_shape, b_batch_strides, b_offset, k, n, b, sb_p, sb_j);
    if (!status && bias) {
        LAUNCH(blocks_for(batch * m * n), THREADS, bias_rows_kernel<T>)(batch * m * n, n, bias, out);
        status = LAUNCHED();
    }
    if (!status) {
        status = cublas_gemm(handle, tf32, batch, (int)m, (int)n, (int)k, ao, bo, bias ? (T)1 : (T)0, out);
        if (status) status += TG_CUBLAS_STATUS;
    }
    /* The copies go back to the allocator's cache: the kernels queued on the stream that
     * read them run before anything that could reuse them (memory.cu). */
    if (ao.copy) tg_cuda_free(ao.copy);
    if (bo.copy) tg_cuda_free(bo.copy);
    return status;
}

extern "C" {

int tg_cuda_has_cublas(void) {
    std::lock_guard<std::mutex> guard(cublas_lock);
    if (!cublas.tried) {
        cublas.tried = true;
        /* the newest first; TRACEGRAD_CUBLAS, a path, before them all */
        const char *names[] = {getenv("TRACEGRAD_CUBLAS"), "libcublas.so.13", "libcublas.so.12",
                               "libcublas.so.11", "libcublas.so"};
        for (const char *name : names)
            if (name && *name && !cublas.library && open_cublas(name)) break;
    }
    return cublas.library != NULL;
}

/* One more candidate (cuda/backend.py offers pip's nvidia-cublas wheels): 1 once loaded */
int tg_cuda_cublas_load(const char *path) {
    if (tg_cuda_has_cublas()) return 1;
    std::lock_guard<std::mutex> guard(cublas_lock);
    static char kept[4096];       /* cublas.path outlives the caller's string */
    snprintf(kept, sizeof kept, "%s", path);
    return open_cublas(kept);
}

int tg_cuda_has_cublas_tf32(void) {
    return tg_cuda_has_cublas() && cublas.gemm_ex && cublas.gemm_batched_ex;
}

const char *tg_cuda_cublas_library(void) { return tg_cuda_has_cublas() ? cublas.path : ""; }

const char *tg_cuda_cublas_status_name(int status) {
    switch (status) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "unknown cuBLAS status";
    }
}

/* matmul.cu's product through cuBLAS; TG_CUBLAS_DECLINED when cuBLAS is not loaded or the
 * product does not fit its int sizes (or k = 0, which BLAS leaves to the caller). */
int tg_cuda_cublas_matmul(int tf32, int dtype, int batch_ndim, const i64 *batch_shape,
                          const i64 *a_batch_strides, i64 a_offset, const i64 *b_batch_strides, i64 b_offset,
                          i64 m, i64 n, i64 k, const void *a, i64 sa_i, i64 sa_p,
                          const void *b, i64 sb_p, i64 sb_j, const void *bias, void *out) {
    if (!tg_cuda_has_cublas() || m > INT_MAX || n > INT_MAX || k > INT_MAX || k == 0)
        return TG_CUBLAS_DECLINED;
    if (numel(batch_ndim, batch_shape) == 0 || m == 0 || n == 0) return 0;
    DISPATCH_FLOAT(dtype, return cublas_matmul<T>(tf32 != 0, dtype, batch_ndim, batch_shape, a_batch_strides,
                                                  a_offset, b_batch_strides, b_offset, m, n, k, (const T *)a,
                                                  sa_i, sa_p, (const T *)b, sb_p, sb_j, (const T *)bias, (T *)out))
    return 0;
}

}  // extern "C"
