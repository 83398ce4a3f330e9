/* Matrix multiplication for device "cuda" (chapter on native kernels, section "CUDA"):
 * out (batch, m, n) = a (batch, m, k) @ b (batch, k, n), plus an optional bias row added to
 * every row of out (Linear's x @ W.T + b in one pass). a and b are any strided views: a
 * transposed operand is only swapped strides, a broadcast batch dimension has stride 0,
 * and a view may start at any element. out is contiguous.
 *
 * Three ways to compute it, as on the CPU (csrc/matmul.c), slowest first:
 *
 *   naive  one thread per output element, reading its row of a and its column of b
 *          straight from global memory: the textbook kernel. Every element of a and b is
 *          read from memory m or n times over, so memory, not arithmetic, sets its speed.
 *   tiled  each block computes a 128 x 128 tile of out. It stages the 128 x 8 slab of a and
 *          the 8 x 128 slab of b it needs next in shared memory (loaded once, by all 256
 *          threads together, with consecutive threads reading consecutive addresses), and
 *          each thread computes an 8 x 8 block of outputs from there, its accumulators in
 *          registers: every value read from shared memory feeds 8 multiply-adds.
 *   cuBLAS NVIDIA's library (cublas.cu), when it loads; the tiled kernel takes what it
 *          declines (the emulator, products too large for its int sizes, k = 0).
 *
 * tg_cuda_matmul at the bottom is the one place that picks among them.
 *
 * The batch: blockIdx.z walks the batch entries, each block finding its operands' offsets
 * from the batch index (Strided::locate), so a batch of any layout is one launch. Every
 * grid dimension is capped (blocks_for) and walked with a grid-stride loop, so any size
 * fits any grid (the emulator's grids of two blocks per dimension exercise those loops). */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

enum { NAIVE, TILED, CUBLAS, CUBLAS_TF32 };     /* cuda/backend.py's MATMUL_VARIANTS */

/* ---- naive: one output element per thread ----------------------------------------------- */

#define NAIVE_SIDE 16                             /* 16 x 16 threads per block */

/* Threads along x take neighbouring columns j: a warp reads neighbouring elements of a row
 * of b (coalesced when b's rows are contiguous) and one element of a, the same for all. */
template <typename T>
__global__ void naive_kernel(i64 batch, Strided<2> batches, i64 m, i64 n, i64 k,
                             const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                             const T *bias, T *out) {
    for (i64 z = blockIdx.z; z < batch; z += gridDim.z) {
        i64 base[2];
        batches.locate(z, base);
        const T *az = a + base[0], *bz = b + base[1];
        T *oz = out + z * m * n;
        for (i64 i = (i64)blockIdx.y * blockDim.y + threadIdx.y; i < m; i += (i64)gridDim.y * blockDim.y)
            for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (i64)gridDim.x * blockDim.x) {
                T acc = bias ? bias[j] : (T)0;
                for (i64 p = 0; p < k; p++) acc += az[i * sa_i + p * sa_p] * bz[p * sb_p + j * sb_j];
                oz[i * n + j] = acc;
            }
    }
}

/* ---- tiled: shared-memory tiles and an 8 x 8 register block per thread --------------------- */

#define BM 128                    /* rows of out per block */
#define BN 128                    /* columns of out per block */
#define BK 8                      /* the depth of one k-step: a is staged BM x BK, b BK x BN */
#define TM 8                      /* rows of out per thread */
#define TN 8                      /* columns of out per thread */
#define TILED_THREADS ((BM / TM) * (BN / TN))       /* 256 */
#define LOADS_PER_THREAD (BM * BK / TILED_THREADS)  /* 4 elements of a, 4 of b per k-step */
#define PAD 4                     /* see the loads: keeps the shared-memory stores conflict-free */

/* One block: the tile of out at rows [row0, row0 + BM), columns [col0, col0 + BN).
 *
 * Who computes what: thread (tx, ty), tx = tid % 16, ty = tid / 16, owns the 8 rows
 * ty + 16 r and the 8 columns tx + 16 c (r, c < 8), spread out rather than 8 neighbours,
 * so that the 16 threads of a half-warp (consecutive tx) read 16 consecutive words of
 * b's tile (no two in one shared-memory bank) and write 16 consecutive elements of out.
 *
 * Who loads what: the 256 threads load the k-step's 128 x 8 slab of a, 4 elements each,
 * in the order a's memory has: along k when a's rows are contiguous (A_ALONG_K: 8 threads
 * per row, a warp reading 4 runs of 8 neighbours), else along m (a warp reading 32
 * neighbours of a column: a transposed view). b likewise, along n or along k (B_ALONG_N).
 * The slab of a is stored transposed, As[p][i], so that the inner loop reads a row of As
 * and a row of Bs. Each row of As and Bs is 132 elements long (PAD): a warp storing along
 * k then hits 32 different banks instead of 4.
 *
 * The k loop overlaps memory and arithmetic: the next slab's loads are issued into
 * registers before the multiply-adds on the current one start, and stored to shared memory
 * at the top of the next k-step, between two barriers: the first waits until every thread
 * is done reading the old slab, the second until the new one is complete. */
template <typename T, bool A_ALONG_K, bool B_ALONG_N>
__device__ __forceinline__ void tiled_tile(i64 row0, i64 col0, i64 m, i64 n, i64 k,
                                           const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                                           const T *bias, T *out) {
    __shared__ T As[BK][BM + PAD];                /* a's slab, transposed: As[p][i] */
    __shared__ T Bs[BK][BN + PAD];                /* b's slab: Bs[p][j] */
    const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);

    /* The first of this thread's 4 elements of a's slab, at (ai, ap) in the slab; the next
     * ones are A_DI rows or A_DP steps of k further on. Likewise for b. */
    const int ai = A_ALONG_K ? tid / BK : tid % BM, ap = A_ALONG_K ? tid % BK : tid / BM;
    const int A_DI = A_ALONG_K ? TILED_THREADS / BK : 0, A_DP = A_ALONG_K ? 0 : TILED_THREADS / BM;
    const int bj = B_ALONG_N ? tid % BN : tid / BK, bp = B_ALONG_N ? tid / BN : tid % BK;
    const int B_DJ = B_ALONG_N ? 0 : TILED_THREADS / BK, B_DP = B_ALONG_N ? TILED_THREADS / BN : 0;
    const T *a_at = a + (row0 + ai) * sa_i + ap * sa_p, *b_at = b + bp * sb_p + (col0 + bj) * sb_j;
    const i64 a_step = A_DI * sa_i + A_DP * sa_p, b_step = B_DP * sb_p + B_DJ * sb_j;
    /* how much of the tile lies inside out (the last tiles of a row or column are cut) */
    const int rows = (int)(m - row0 < BM ? m - row0 : BM), cols = (int)(n - col0 < BN ? n - col0 : BN);

    /* Past the edges of a and b: zeros, which add nothing to the products. */
    T a_next[LOADS_PER_THREAD], b_next[LOADS_PER_THREAD];
    auto load = [&](i64 k0) {
        int depth = (int)(k - k0 < BK ? k - k0 : BK);
#pragma unroll
        for (int l = 0; l < LOADS_PER_THREAD; l++) {
            a_next[l] = ai + l * A_DI < rows && ap + l * A_DP < depth ? a_at[l * a_step] : (T)0;
            b_next[l] = bj + l * B_DJ < cols && bp + l * B_DP < depth ? b_at[l * b_step] : (T)0;
        }
        a_at += BK * sa_p;
        b_at += BK * sb_p;
    };

    T acc[TM][TN];
#pragma unroll
    for (int r = 0; r < TM; r++)
#pragma unroll
        for (int c = 0; c < TN; c++) acc[r][c] = 0;

    load(0);
    for (i64 k0 = 0; k0 < k; k0 += BK) {
        __syncthreads();                          /* every thread is done with the last slab */
#pragma unroll
        for (int l = 0; l < LOADS_PER_THREAD; l++) {
            As[ap + l * A_DP][ai + l * A_DI] = a_next[l];
            Bs[bp + l * B_DP][bj + l * B_DJ] = b_next[l];
        }
        __syncthreads();                          /* the slab is complete */
        if (k0 + BK < k) load(k0 + BK);           /* in flight during the arithmetic below */
#pragma unroll
        for (int p = 0; p < BK; p++) {
            T a_col[TM], b_row[TN];
#pragma unroll
            for (int r = 0; r < TM; r++) a_col[r] = As[p][ty + r * (BM / TM)];
#pragma unroll
            for (int c = 0; c < TN; c++) b_row[c] = Bs[p][tx + c * (BN / TN)];
#pragma unroll
            for (int r = 0; r < TM; r++)
#pragma unroll
                for (int c = 0; c < TN; c++) acc[r][c] += a_col[r] * b_row[c];
        }
    }

#pragma unroll
    for (int r = 0; r < TM; r++) {
        int i = ty + r * (BM / TM);
        if (i >= rows) continue;
        T *out_row = out + (row0 + i) * n + col0;
#pragma unroll
        for (int c = 0; c < TN; c++) {
            int j = tx + c * (BN / TN);
            if (j < cols) out_row[j] = bias ? acc[r][c] + bias[col0 + j] : acc[r][c];
        }
    }
}

/* Every tile of every batch entry, the grid's blocks taking turns (grid-stride loops in
 * all three dimensions). The loops depend on the block only, so all its threads reach
 * the same barriers. */
template <typename T, bool A_ALONG_K, bool B_ALONG_N>
__global__ void tiled_kernel(i64 batch, Strided<2> batches, i64 m, i64 n, i64 k,
                             const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                             const T *bias, T *out) {
    i64 tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    for (i64 z = blockIdx.z; z < batch; z += gridDim.z) {
        i64 base[2];
        batches.locate(z, base);
        for (i64 tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
            for (i64 tn = blockIdx.x; tn < tiles_n; tn += gridDim.x)
                tiled_tile<T, A_ALONG_K, B_ALONG_N>(tm * BM, tn * BN, m, n, k, a + base[0], sa_i, sa_p,
                                                    b + base[1], sb_p, sb_j, bias, out + z * m * n);
    }
}

/* ---- the dispatch ------------------------------------------------------------------------ */

template <typename T>
static int launch_matmul(int variant, i64 batch, const Strided<2> &batches, i64 m, i64 n, i64 k,
                         const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                         const T *bias, T *out) {
    if (variant == NAIVE) {
        dim3 grid(blocks_for(n, NAIVE_SIDE), blocks_for(m, NAIVE_SIDE), blocks_for(batch, 1));
        LAUNCH(grid, dim3(NAIVE_SIDE, NAIVE_SIDE), naive_kernel<T>)(batch, batches, m, n, k, a, sa_i, sa_p,
                                                                    b, sb_p, sb_j, bias, out);
    } else {
        /* Which way each operand's slab is read: along its contiguous dimension. A view with
         * neither stride 1 (a slice with a step) is read along k, correct either way. */
        bool a_along_k = sa_p == 1 || sa_i != 1, b_along_n = sb_j == 1 || sb_p != 1;
        dim3 grid(blocks_for(n, BN), blocks_for(m, BM), blocks_for(batch, 1)), block(TILED_THREADS);
#define TILED(A_ALONG_K, B_ALONG_N) \
        LAUNCH(grid, block, tiled_kernel<T, A_ALONG_K, B_ALONG_N>)(batch, batches, m, n, k, a, sa_i, sa_p, \
                                                                  b, sb_p, sb_j, bias, out)
        if (a_along_k && b_along_n) TILED(true, true);
        else if (a_along_k) TILED(true, false);
        else if (b_along_n) TILED(false, true);
        else TILED(false, false);
#undef TILED
    }
    return LAUNCHED();
}

}  // namespace

extern "C" {

/* The one entry point: variant NAIVE, TILED, CUBLAS or CUBLAS_TF32. cuBLAS gets the call
 * first when asked for; what it declines (TG_CUBLAS_DECLINED) falls through to the tiled
 * kernel, which takes any product. */
int tg_cuda_matmul(int variant, int dtype, int batch_ndim, const i64 *batch_shape,
                   const i64 *a_batch_strides, i64 a_offset, const i64 *b_batch_strides, i64 b_offset,
                   i64 m, i64 n, i64 k, const void *a, i64 sa_i, i64 sa_p,
                   const void *b, i64 sb_p, i64 sb_j, const void *bias, void *out) {
    i64 batch = numel(batch_ndim, batch_shape);
    if (batch == 0 || m == 0 || n == 0) return 0;
    if (variant == CUBLAS || variant == CUBLAS_TF32) {
        int status = tg_cuda_cublas_matmul(variant == CUBLAS_TF32, dtype, batch_ndim, batch_shape,
                                           a_batch_strides, a_offset, b_batch_strides, b_offset, m, n, k,
                                           a, sa_i, sa_p, b, sb_p, sb_j, bias, out);
        if (status != TG_CUBLAS_DECLINED) return status;
        variant = TILED;
    }
    const i64 *strides[2] = {a_batch_strides, b_batch_strides}, offsets[2] = {a_offset, b_offset};
    Strided<2> batches = strided<2>(batch_ndim, batch_shape, strides, offsets);
    DISPATCH_FLOAT(dtype, return launch_matmul<T>(variant, batch, batches, m, n, k, (const T *)a, sa_i, sa_p,
                                                  (const T *)b, sb_p, sb_j, (const T *)bias, (T *)out))
    return 0;
}

}  // extern "C"
