/* Matrix multiplication for device "cuda" (chapter on native kernels, section "CUDA"):
 * out (batch, m, n) = a (batch, m, k) @ b (batch, k, n), plus an optional bias row added to
 * every row of out (Linear's x @ W.T + b in one pass). a and b are any strided views: a
 * transposed operand is only swapped strides, a broadcast batch dimension has stride 0,
 * and a view may start at any element. out is contiguous.
 *
 * Four ways to compute it, slowest first, each a step up the same ladder (the CPU has its
 * own, csrc/matmul.c):
 *
 *   naive      one thread per output element, reading its row of a and its column of b
 *              straight from global memory: the textbook kernel. Every element of a and b
 *              is read from memory m or n times over, so memory, not arithmetic, sets its
 *              speed.
 *   tiled      each block computes a 128 x 128 tile of out. It stages the 128 x 8 slab of a
 *              and the 8 x 128 slab of b it needs next in shared memory (loaded once, by all
 *              256 threads together, with consecutive threads reading consecutive
 *              addresses), and each thread computes an 8 x 8 block of outputs from there,
 *              its accumulators in registers: every value read from shared memory feeds 8
 *              multiply-adds. Now shared memory, not global memory, is the bottleneck:
 *              16 32-bit loads per 64 multiply-adds, and two barriers per k-step.
 *   vectorized the same tile and the same 8 x 8 outputs per thread, arranged so that a
 *              thread's 8 values of each slab are two runs of 4 neighbours: 4 128-bit
 *              shared loads per 64 multiply-adds instead of 16. Global loads and the stores
 *              of out are 128-bit too where the layout allows, and the slabs are
 *              double-buffered (one barrier per k-step). float32 only.
 *   cuBLAS     NVIDIA's library (cublas.cu), when it loads; the tiled kernel takes what it
 *              declines (the emulator, products too large for its int sizes, k = 0). Among
 *              what it adds beyond the vectorized kernel: tile shapes tuned per GPU and size,
 *              asynchronous copies into shared memory (cp.async, TMA), deeper pipelines.
 *
 * tg_cuda_matmul at the bottom is the one place that picks among them.
 *
 * The batch: blockIdx.z walks the batch entries, each block finding its operands' offsets
 * from the batch index (Strided::locate), so a batch of any layout is one launch. Every
 * grid dimension is capped (blocks_for) and walked with a grid-stride loop, so any size
 * fits any grid (the emulator's grids of two blocks per dimension exercise those loops). */
#include "runtime.cuh"
#include <type_traits>

namespace {         /* private to this file: other .cu files may use the same names */

enum { NAIVE, TILED, VECTORIZED, CUBLAS, CUBLAS_TF32 };   /* cuda/backend.py's MATMUL_VARIANTS */

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
 * all three dimensions): tile(row0, col0, z, base), base[0] and base[1] the offsets of
 * batch entry z's a and b. The loops depend on the block only, so all its threads reach
 * the same barriers. Both tiled kernels walk their tiles so. */
template <typename Tile>
__device__ __forceinline__ void for_each_tile(i64 batch, const Strided<2> &batches, i64 m, i64 n, Tile tile) {
    i64 tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    for (i64 z = blockIdx.z; z < batch; z += gridDim.z) {
        i64 base[2];
        batches.locate(z, base);
        for (i64 tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
            for (i64 tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) tile(tm * BM, tn * BN, z, base);
    }
}

template <typename T, bool A_ALONG_K, bool B_ALONG_N>
__global__ void tiled_kernel(i64 batch, Strided<2> batches, i64 m, i64 n, i64 k,
                             const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                             const T *bias, T *out) {
    for_each_tile(batch, batches, m, n, [=](i64 row0, i64 col0, i64 z, const i64 *base) {
        tiled_tile<T, A_ALONG_K, B_ALONG_N>(row0, col0, m, n, k, a + base[0], sa_i, sa_p, b + base[1], sb_p, sb_j,
                                            bias, out + z * m * n);
    });
}

/* ---- vectorized: 128-bit accesses and double-buffered shared memory (float32) -------------- */

#define VEC 4                     /* floats per 128-bit access (float4) */
#define HALF_M (BM / 2)           /* a thread's rows: ty * 4 + r and HALF_M + ty * 4 + r, r < 4 */
#define HALF_N (BN / 2)           /* its columns: tx * 4 + c and HALF_N + tx * 4 + c, c < 4 */

/* The float4 at p, which must be 16-byte aligned: the GPU faults otherwise, and the
 * emulator checks (emulate.cuh). */
#ifdef TG_CUDA_EMULATE
#define CHECK_ALIGNED(p) emu::check_aligned((p), 16)
#else
#define CHECK_ALIGNED(p)
#endif
__device__ __forceinline__ const float4 &as_float4(const float *p) {
    CHECK_ALIGNED(p);
    return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ float4 &as_float4(float *p) {
    CHECK_ALIGNED(p);
    return *reinterpret_cast<float4 *>(p);
}

/* The 4 elements p[0], p[step], p[2 step], p[3 step] of which the first `valid` exist (the
 * rest, past an edge of a or b, are zeros): one 128-bit load when the host said the run is
 * aligned (vec: then step is 1) and all 4 exist, else up to 4 scalar loads. */
__device__ __forceinline__ float4 fetch4(const float *p, i64 step, int valid, bool vec) {
    if (vec && valid == VEC) return as_float4(p);
    return make_float4(valid > 0 ? p[0] : 0.f, valid > 1 ? p[step] : 0.f,
                       valid > 2 ? p[2 * step] : 0.f, valid > 3 ? p[3 * step] : 0.f);
}

__device__ __forceinline__ int clamp4(int count) { return count < 0 ? 0 : count > VEC ? VEC : count; }

/* One block: the tile of out at rows [row0, row0 + BM), columns [col0, col0 + BN), as in
 * tiled_tile, with the same 256 threads and 64 outputs each. What changes:
 *
 * Who computes what: thread (tx, ty) owns 2 x 2 groups of 4 x 4 outputs, rows ty*4 + r and
 * HALF_M + ty*4 + r, columns tx*4 + c and HALF_N + tx*4 + c (r, c < 4). Per step p of k it
 * needs 8 values of a's slab, As[p][ty*4 .. +3] and As[p][HALF_M + ty*4 .. +3], and 8 of b's:
 * two 128-bit loads (LDS.128) per operand instead of eight 32-bit ones. No bank conflicts:
 * the hardware serves a warp's 128-bit shared loads a quarter-warp (8 threads, 128 bytes,
 * all 32 banks once) at a time. The 8 threads of a quarter-warp have consecutive tx and the
 * same ty: in Bs they read 8 consecutive float4s, 32 different banks; in As they all read
 * the same float4, which is one broadcast. Rows of 132 floats (PAD) keep every float4 on a
 * 16-byte boundary.
 *
 * Who loads what: each thread fetches one run of 4 neighbours of a's slab and one of b's,
 * along the operand's contiguous dimension: a along k (A_ALONG_K) is 128 rows of two runs
 * (thread tid: row tid / 2, k-steps (tid % 2) * 4 ..), a along m 8 columns of 32 runs (step
 * tid / 32, rows (tid % 32) * 4 ..); b alike. One 128-bit global load per run where the
 * host found every run 16-byte aligned (a_vec, b_vec), scalar loads otherwise and at the
 * edges. A run along m or n is stored to shared memory as one float4; a run along k is
 * stored as 4 scalars down a column of As (or Bs), conflict-free thanks to PAD: the two
 * threads of one row write 4 rows of As apart, 4 x 132 floats, which is 16 banks apart, and
 * the 16 rows of a warp take 16 consecutive banks: all 32 banks once.
 *
 * WHOLE: the host found every tile whole (m, n multiples of 128), every k-step whole (k a
 * multiple of 8) and every access aligned, so nothing is checked: the same code with the
 * edges compiled out, which leaves it enough registers for two blocks per SM.
 *
 * The k loop: two slabs in shared memory. While the block multiplies from one, the next
 * slab's loads are in flight into registers and are then stored into the other; a single
 * barrier per k-step then says both "the new slab is complete" and "everyone is done with
 * the old one", which tiled_tile needs two barriers for. */
template <bool A_ALONG_K, bool B_ALONG_N, bool WHOLE>
__device__ __forceinline__ void vectorized_tile(i64 row0, i64 col0, i64 m, i64 n, i64 k,
                                                const float *a, i64 sa_i, i64 sa_p, bool a_vec,
                                                const float *b, i64 sb_p, i64 sb_j, bool b_vec,
                                                const float *bias, float *out, bool out_vec) {
    __shared__ __align__(16) float As[2][BK][BM + PAD];   /* two slabs of a, transposed: As[s][p][i] */
    __shared__ __align__(16) float Bs[2][BK][BN + PAD];   /* two slabs of b: Bs[s][p][j] */
    const int tid = threadIdx.x, tx = tid % (HALF_N / VEC), ty = tid / (HALF_N / VEC);

    /* This thread's run: it starts at (ai, ap) of a's slab, its elements a_e apart in memory. */
    const int ai = A_ALONG_K ? tid / (BK / VEC) : tid % (BM / VEC) * VEC;
    const int ap = A_ALONG_K ? tid % (BK / VEC) * VEC : tid / (BM / VEC);
    const int bj = B_ALONG_N ? tid % (BN / VEC) * VEC : tid / (BK / VEC);
    const int bp = B_ALONG_N ? tid / (BN / VEC) : tid % (BK / VEC) * VEC;
    const i64 a_e = A_ALONG_K ? sa_p : sa_i, b_e = B_ALONG_N ? sb_j : sb_p;
    const float *a_at = a + (row0 + ai) * sa_i + ap * sa_p, *b_at = b + bp * sb_p + (col0 + bj) * sb_j;
    const int rows = (int)(m - row0 < BM ? m - row0 : BM), cols = (int)(n - col0 < BN ? n - col0 : BN);

    float4 a_next, b_next;
    auto load = [&](i64 k0) {
        if (WHOLE) {                              /* every run inside and aligned */
            a_next = as_float4(a_at);
            b_next = as_float4(b_at);
        } else {
            int depth = (int)(k - k0 < BK ? k - k0 : BK);
            int a_valid = A_ALONG_K ? (ai < rows ? clamp4(depth - ap) : 0)
                                    : (ap < depth ? clamp4(rows - ai) : 0);
            int b_valid = B_ALONG_N ? (bp < depth ? clamp4(cols - bj) : 0)
                                    : (bj < cols ? clamp4(depth - bp) : 0);
            a_next = fetch4(a_at, a_e, a_valid, a_vec);
            b_next = fetch4(b_at, b_e, b_valid, b_vec);
        }
        a_at += BK * sa_p;
        b_at += BK * sb_p;
    };
    auto store = [&](int s) {
        if (A_ALONG_K) {
            As[s][ap][ai] = a_next.x, As[s][ap + 1][ai] = a_next.y;
            As[s][ap + 2][ai] = a_next.z, As[s][ap + 3][ai] = a_next.w;
        } else {
            as_float4(&As[s][ap][ai]) = a_next;
        }
        if (B_ALONG_N) {
            as_float4(&Bs[s][bp][bj]) = b_next;
        } else {
            Bs[s][bp][bj] = b_next.x, Bs[s][bp + 1][bj] = b_next.y;
            Bs[s][bp + 2][bj] = b_next.z, Bs[s][bp + 3][bj] = b_next.w;
        }
    };

    float acc[2 * VEC][2 * VEC];      /* acc[r][c]: r < 4 the upper rows, r >= 4 the lower ones */
#pragma unroll
    for (int r = 0; r < 2 * VEC; r++)
#pragma unroll
        for (int c = 0; c < 2 * VEC; c++) acc[r][c] = 0;

    load(0);
    store(0);
    __syncthreads();                              /* the first slab is complete */
    int s = 0;
    for (i64 k0 = 0; k0 < k; k0 += BK) {
        const bool more = k0 + BK < k;            /* the same for the whole block */
        if (more) load(k0 + BK);                  /* in flight during the arithmetic below */
#pragma unroll
        for (int p = 0; p < BK; p++) {
            const float4 a0 = as_float4(&As[s][p][ty * VEC]);
            const float4 a1 = as_float4(&As[s][p][HALF_M + ty * VEC]);
            const float4 b0 = as_float4(&Bs[s][p][tx * VEC]);
            const float4 b1 = as_float4(&Bs[s][p][HALF_N + tx * VEC]);
            const float a_col[2 * VEC] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b_row[2 * VEC] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int r = 0; r < 2 * VEC; r++)
#pragma unroll
                for (int c = 0; c < 2 * VEC; c++) acc[r][c] += a_col[r] * b_row[c];
        }
        if (more) store(s ^ 1);                   /* the other slab: last read a k-step ago */
        __syncthreads();                          /* it is complete, and this one is free */
        s ^= 1;
    }

    /* Each row of 4 outputs as one 128-bit store where it lies whole inside out and the host
     * found rows of out 16-byte aligned (n a multiple of 4), else element by element. */
#pragma unroll
    for (int r = 0; r < 2 * VEC; r++) {
        const int i = (r < VEC ? 0 : HALF_M) + ty * VEC + r % VEC;
        if (!WHOLE && i >= rows) continue;
        float *out_row = out + (row0 + i) * n + col0;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int j = h * HALF_N + tx * VEC;
            float v[VEC];
#pragma unroll
            for (int c = 0; c < VEC; c++)
                v[c] = bias && (WHOLE || j + c < cols) ? acc[r][h * VEC + c] + bias[col0 + j + c]
                                                       : acc[r][h * VEC + c];
            if (WHOLE || (out_vec && j + VEC <= cols)) {
                as_float4(out_row + j) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int c = 0; c < VEC; c++)
                    if (j + c < cols) out_row[j + c] = v[c];
            }
        }
    }
}

/* Every tile of every batch entry (for_each_tile). __launch_bounds__ tells
 * nvcc the block size, so it budgets registers for 256 threads; for the kernel without
 * edges (WHOLE), two blocks per SM, 128 registers a thread: it needs no more, and while one
 * block waits at its barrier the other's warps keep the SM busy. */
template <bool A_ALONG_K, bool B_ALONG_N, bool WHOLE>
__global__ void __launch_bounds__(TILED_THREADS, WHOLE ? 2 : 1)
vectorized_kernel(i64 batch, Strided<2> batches, i64 m, i64 n, i64 k,
                  const float *a, i64 sa_i, i64 sa_p, bool a_vec, const float *b, i64 sb_p, i64 sb_j,
                  bool b_vec, const float *bias, float *out, bool out_vec) {
    for_each_tile(batch, batches, m, n, [=](i64 row0, i64 col0, i64 z, const i64 *base) {
        vectorized_tile<A_ALONG_K, B_ALONG_N, WHOLE>(row0, col0, m, n, k, a + base[0], sa_i, sa_p, a_vec,
                                                     b + base[1], sb_p, sb_j, b_vec, bias, out + z * m * n, out_vec);
    });
}

/* Whether every run of 4 that the vectorized kernel reads from an operand along its unit
 * stride starts on a 16-byte boundary, in every batch entry: the buffer is (cudaMalloc
 * aligns to 256 bytes), and the view's offset, its batch strides and its other stride
 * (the leading dimension) are multiples of 4 elements. Runs start at multiples of 4 along
 * the unit stride (tile corners and k-steps are multiples of 8). */
static bool runs_aligned(const void *base, const Strided<2> &batches, int which, i64 other_stride) {
    if ((uintptr_t)base % 16 != 0 || batches.offset[which] % VEC != 0 || other_stride % VEC != 0)
        return false;
    for (int d = 0; d < batches.ndim; d++)
        if (batches.strides[which][d] % VEC != 0) return false;
    return true;
}

/* ---- the dispatch ------------------------------------------------------------------------ */

template <typename T>
static int launch_matmul(int variant, i64 batch, const Strided<2> &batches, i64 m, i64 n, i64 k,
                         const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                         const T *bias, T *out) {
    /* Which way each operand's slab is read (tiled and vectorized): along its contiguous
     * dimension. A view with neither stride 1 (a slice with a step) is read along k, correct
     * either way. */
    const bool a_along_k = sa_p == 1 || sa_i != 1, b_along_n = sb_j == 1 || sb_p != 1;
    const dim3 tiles(blocks_for(n, BN), blocks_for(m, BM), blocks_for(batch, 1)), block(TILED_THREADS);
    /* LAUNCH_AS(A_ALONG_K, B_ALONG_N), a launch macro, for this product's way of reading each
     * operand: one instantiation of the four, as the tiled and the vectorized kernels have. */
#define BY_LAYOUT(LAUNCH_AS) \
    do { \
        if (a_along_k && b_along_n) LAUNCH_AS(true, true); \
        else if (a_along_k) LAUNCH_AS(true, false); \
        else if (b_along_n) LAUNCH_AS(false, true); \
        else LAUNCH_AS(false, false); \
    } while (0)
    if (variant == NAIVE) {
        dim3 grid(blocks_for(n, NAIVE_SIDE), blocks_for(m, NAIVE_SIDE), blocks_for(batch, 1));
        LAUNCH(grid, dim3(NAIVE_SIDE, NAIVE_SIDE), naive_kernel<T>)(batch, batches, m, n, k, a, sa_i, sa_p,
                                                                    b, sb_p, sb_j, bias, out);
        return LAUNCHED();
    }
    if constexpr (std::is_same<T, float>::value) {
        if (variant == VECTORIZED) {
            /* 128-bit global loads only from an operand whose runs of 4 along the unit stride
             * are all 16-byte aligned (a stepped view has no unit stride: scalar loads). */
            bool a_vec = (a_along_k ? sa_p == 1 : sa_i == 1)
                         && runs_aligned(a, batches, 0, a_along_k ? sa_i : sa_p);
            bool b_vec = (b_along_n ? sb_j == 1 : sb_p == 1)
                         && runs_aligned(b, batches, 1, b_along_n ? sb_p : sb_j);
            bool out_vec = n % VEC == 0 && (uintptr_t)out % 16 == 0;
            /* Whole tiles, whole k-steps, every access 128-bit: the kernel without edges. */
            bool whole = m % BM == 0 && n % BN == 0 && k % BK == 0 && k > 0 && a_vec && b_vec && out_vec;
#define VECTORIZED_AS(A_ALONG_K, B_ALONG_N) \
            do { \
                if (whole) \
                    LAUNCH(tiles, block, vectorized_kernel<A_ALONG_K, B_ALONG_N, true>)(batch, batches, m, n, \
                        k, a, sa_i, sa_p, a_vec, b, sb_p, sb_j, b_vec, bias, out, out_vec); \
                else \
                    LAUNCH(tiles, block, vectorized_kernel<A_ALONG_K, B_ALONG_N, false>)(batch, batches, m, n, \
                        k, a, sa_i, sa_p, a_vec, b, sb_p, sb_j, b_vec, bias, out, out_vec); \
            } while (0)
            BY_LAYOUT(VECTORIZED_AS);
#undef VECTORIZED_AS
            return LAUNCHED();
        }
    }
    /* TILED, and VECTORIZED for float64: the vectorized kernel is float32 only (a float4 of
     * doubles would be 32 bytes, two 128-bit accesses, and twice the registers). */
#define TILED_AS(A_ALONG_K, B_ALONG_N) \
    LAUNCH(tiles, block, tiled_kernel<T, A_ALONG_K, B_ALONG_N>)(batch, batches, m, n, k, a, sa_i, sa_p, \
                                                               b, sb_p, sb_j, bias, out)
    BY_LAYOUT(TILED_AS);
#undef TILED_AS
#undef BY_LAYOUT
    return LAUNCHED();
}

}  // namespace

extern "C" {

/* The one entry point: variant NAIVE, TILED, VECTORIZED, CUBLAS or CUBLAS_TF32. cuBLAS gets
 * the call first when asked for; what it declines (TG_CUBLAS_DECLINED) falls through to the
 * tiled kernel, which takes any product. */
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
