/* TinyBLAS's micro-kernels and the run-time choice among them (the thesis's performance
 * chapter; gemm.c explains the design, gemm.h the kernels' contract).
 *
 *   generic  plain C, 4 x 8, any machine
 *   avx2     AVX2 + FMA: float 6 x 16, double 6 x 8 (12 accumulator registers of 16)
 *   avx512   AVX-512F: float 14 x 32, double 14 x 16 (28 accumulator registers of 32)
 *
 * The SIMD kernels are compiled with __attribute__((target(...))), so one library built
 * for baseline x86-64 carries all of them; the first matmul asks the CPU which it supports
 * (__builtin_cpu_supports) and takes the widest, unless TRACEGRAD_GEMM_KERNEL names one
 * (generic, avx2 or avx512; a name the CPU cannot run falls back to the widest). On other
 * architectures only the generic kernel exists.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gemm.h"

#define TEMPLATE "gemm_generic_t.h"
#include "instantiate_float.h"
#undef TEMPLATE

enum { GENERIC, AVX2, AVX512, N_KINDS };
static const char *const KIND_NAMES[N_KINDS] = {"generic", "avx2", "avx512"};

#ifdef TG_GEMM_X86
#include <immintrin.h>

/* ---- AVX2 + FMA: 16 ymm registers of 8 floats (4 doubles) ----------------------------
 * 6 x 16 floats: 6 rows x 2 vectors = 12 accumulators, 2 for the B row, 1 broadcast: 15.
 * 12 independent FMAs per k step also cover the FMA latency (4-5 cycles x 2 units). */
#define TARGET __attribute__((target("avx2,fma")))
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_load_ps(p)
#define VLOADU(p) _mm256_loadu_ps(p)
#define VSTOREU(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
#define T float
#define VEC __m256
#define VLEN 8
#define MR 6
#define NR 16
#define KERNEL avx2_kernel_f32
#include "gemm_simd_t.h"      /* which #undefs its parameters */

#define VZERO() _mm256_setzero_pd()
#define VLOAD(p) _mm256_load_pd(p)
#define VLOADU(p) _mm256_loadu_pd(p)
#define VSTOREU(p, v) _mm256_storeu_pd(p, v)
#define VBCAST(p) _mm256_broadcast_sd(p)
#define VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define VADD(a, b) _mm256_add_pd(a, b)
#define T double
#define VEC __m256d
#define VLEN 4
#define MR 6
#define NR 8
#define KERNEL avx2_kernel_f64
#include "gemm_simd_t.h"      /* which #undefs its parameters */
#undef TARGET                   /* this instruction set's two types are done */

/* ---- AVX-512F: 32 zmm registers of 16 floats (8 doubles) -----------------------------
 * 14 x 32 floats: 14 rows x 2 vectors = 28 accumulators, 2 for the B row, 1 broadcast: 31. */
#define TARGET __attribute__((target("avx512f")))
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_load_ps(p)
#define VLOADU(p) _mm512_loadu_ps(p)
#define VSTOREU(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define T float
#define VEC __m512
#define VLEN 16
#define MR 14
#define NR 32
#define KERNEL avx512_kernel_f32
#include "gemm_simd_t.h"      /* which #undefs its parameters */

#define VZERO() _mm512_setzero_pd()
#define VLOAD(p) _mm512_load_pd(p)
#define VLOADU(p) _mm512_loadu_pd(p)
#define VSTOREU(p, v) _mm512_storeu_pd(p, v)
#define VBCAST(p) _mm512_set1_pd(*(p))
#define VFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define VADD(a, b) _mm512_add_pd(a, b)
#define T double
#define VEC __m512d
#define VLEN 8
#define MR 14
#define NR 16
#define KERNEL avx512_kernel_f64
#include "gemm_simd_t.h"      /* which #undefs its parameters */
#undef TARGET                   /* this instruction set's two types are done */
#endif /* TG_GEMM_X86 */

#ifdef TG_GEMM_X86
/* ---- SIMD packing (gemm.h's PackPanel) for float: AVX2, also used by the AVX-512 kernel --
 * Two layouts are worth a fast path: a step's values side by side (s_lane = 1: B row-major,
 * or A transposed) is a copy of runs; each lane contiguous along k (s_step = 1: A
 * row-major, or B transposed as in Linear's x @ W.T) is a transpose, done 8 x 8 in
 * registers. Where the width is not a multiple of 8 (A panels of 6 or 14 rows), a whole
 * vector is stored anyway and its extra lanes land on the next step's first values, which
 * the next store overwrites (lanes are stored from the highest group down for that reason);
 * past a panel's end they land on the next panel, packed after it by the same thread, or
 * on the buffer's slack (TG_GEMM_PACK_SLACK). */
#define AVX2_TARGET __attribute__((target("avx2,fma")))

/* v[i][j] becomes v[j][i]: pairs, then quads, then the two 128-bit halves. */
AVX2_TARGET static inline void transpose_8x8(__m256 v[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {            /* t0 = v00 v10 v01 v11 | v04 v14 v05 v15 */
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {            /* u0 = v00 v10 v20 v30 | v04 v14 v24 v34 */
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {               /* column i: low halves; column i + 4: high */
        v[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        v[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

/* The first n (< 8) of 8 lanes: a mask for _mm256_maskload_ps, which reads no others. */
AVX2_TARGET static inline __m256i first_lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Lanes [bottom, top + 8) of a panel (top, bottom multiples of 8), packed from lanes
 * contiguous along k (s_step = 1): 8 steps x 8 lanes at a time, transposed in registers;
 * lane groups from the highest down (see above). */
AVX2_TARGET static inline __attribute__((always_inline)) void transpose_lanes(
        int top, int bottom, int width, int lanes, i64 kc, const float *x, i64 s_lane,
        float *dst) {
    i64 p = 0;
    for (; p + 8 <= kc; p += 8)
        for (int l0 = top; l0 >= bottom; l0 -= 8) {
            __m256 v[8];
            for (int i = 0; i < 8; i++)
                v[i] = l0 + i < lanes ? _mm256_loadu_ps(x + (l0 + i) * s_lane + p)
                                      : _mm256_setzero_ps();
            transpose_8x8(v);
            for (int i = 0; i < 8; i++) _mm256_storeu_ps(dst + (p + i) * width + l0, v[i]);
        }
    for (; p < kc; p++)                                 /* the last kc % 8 steps */
        for (int l = bottom; l < top + 8 && l < width; l++)
            dst[p * width + l] = l < lanes ? x[l * s_lane + p] : 0;
}

/* The packer's body, for a width and a count of lanes that are constants where it is
 * inlined (always_inline), so its loops unroll and its lane checks disappear. */
AVX2_TARGET static inline __attribute__((always_inline)) int pack_f32(
        int width, int lanes, i64 kc, const float *x, i64 s_step, i64 s_lane, float *dst) {
    if (s_lane == 1 && lanes == width) {                /* copy runs of `width` values */
        __m256i tail = first_lanes(width % 8);
        for (i64 p = 0; p < kc; p++) {
            const float *run = x + p * s_step;
            float *d = dst + p * width;
            int l = 0;
            for (; l + 8 <= width; l += 8) _mm256_storeu_ps(d + l, _mm256_loadu_ps(run + l));
            if (l < width) _mm256_storeu_ps(d + l, _mm256_maskload_ps(run + l, tail));
        }
        return 1;
    }
    if (s_step == 1) {                                  /* transpose 8 steps x 8 lanes */
        /* Rows of x a multiple of 1 KiB apart (a 512-wide operand: 2 KiB) fall into the
         * same few sets of L1 (64 sets of 8 lines; 2 KiB apart: 2 of them, 16 lines), fewer
         * than a panel's 14 or 32 rows read in step need: then 8 lanes at a time along the
         * whole of k, 8 rows read at once. Otherwise all the lanes step by step, which
         * writes the panel in order. */
        if ((s_lane * (i64)sizeof(float)) % 1024 == 0)
#pragma GCC unroll 4
            for (int l0 = (width - 1) / 8 * 8; l0 >= 0; l0 -= 8)
                transpose_lanes(l0, l0, width, lanes, kc, x, s_lane, dst);
        else transpose_lanes((width - 1) / 8 * 8, 0, width, lanes, kc, x, s_lane, dst);
        return 1;
    }
    return 0;
}

AVX2_TARGET static int avx2_pack_f32(int width, int lanes, i64 kc, const float *x, i64 s_step,
                                     i64 s_lane, float *dst) {
    if (lanes == width)                     /* whole panels: the register blocks' widths */
        switch (width) {
        case 6: return pack_f32(6, 6, kc, x, s_step, s_lane, dst);
        case 16: return pack_f32(16, 16, kc, x, s_step, s_lane, dst);
        case 14: return pack_f32(14, 14, kc, x, s_step, s_lane, dst);
        case 32: return pack_f32(32, 32, kc, x, s_step, s_lane, dst);
        }
    return pack_f32(width, lanes, kc, x, s_step, s_lane, dst);   /* edge panels */
}
#endif

/* Each kernel with its block sizes (why these: the comment at the top of gemm.c).
 *                          name     mr  nr   mc    kc    nc  micro-kernels (tile, rows)  packing */
static const GemmKernel_f32 KERNELS_F32[N_KINDS] = {
    [GENERIC] = {"generic",  4,  8, 128,  256, 4096, generic_kernel_f32, NULL, NULL},
#ifdef TG_GEMM_X86
    [AVX2]    = {"avx2",     6, 16, 144,  256, 4096, avx2_kernel_f32, avx2_kernel_f32_rows, avx2_pack_f32},
    [AVX512]  = {"avx512",  14, 32, 168, 1024, 2048, avx512_kernel_f32, avx512_kernel_f32_rows, avx2_pack_f32},
#endif
};
static const GemmKernel_f64 KERNELS_F64[N_KINDS] = {
    [GENERIC] = {"generic",  4,  8,  96,  256, 2048, generic_kernel_f64, NULL, NULL},
#ifdef TG_GEMM_X86
    [AVX2]    = {"avx2",     6,  8,  96,  256, 2048, avx2_kernel_f64, avx2_kernel_f64_rows, NULL},
    [AVX512]  = {"avx512",  14, 16, 168,  192, 2048, avx512_kernel_f64, avx512_kernel_f64_rows, NULL},
#endif
};

static int cpu_supports(int kind) {
#ifdef TG_GEMM_X86
    __builtin_cpu_init();
    if (kind == AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (kind == AVX512) return __builtin_cpu_supports("avx512f");
#endif
    return kind == GENERIC;
}

static int widest_supported(void) {
    for (int kind = N_KINDS - 1; kind > GENERIC; kind--)
        if (cpu_supports(kind)) return kind;
    return GENERIC;
}

static int kind_named(const char *name) {
    for (int kind = 0; kind < N_KINDS; kind++)
        if (name && strcmp(name, KIND_NAMES[kind]) == 0) return kind;
    return -1;
}

static int chosen = -1;             /* index into the tables; -1 until the first matmul */

static int current_kind(void) {
    if (chosen < 0) {
        int asked = kind_named(getenv("TRACEGRAD_GEMM_KERNEL"));
        chosen = asked >= 0 && cpu_supports(asked) ? asked : widest_supported();
    }
    return chosen;
}

const GemmKernel_f32 *tg_gemm_kernel_f32(void) { return &KERNELS_F32[current_kind()]; }
const GemmKernel_f64 *tg_gemm_kernel_f64(void) { return &KERNELS_F64[current_kind()]; }

const char *tg_gemm_kernel(void) { return KIND_NAMES[current_kind()]; }

const char *tg_gemm_kernels(int i) {
    int seen = 0;
    for (int kind = 0; kind < N_KINDS; kind++)
        if (cpu_supports(kind) && seen++ == i) return KIND_NAMES[kind];
    return NULL;
}

tg_gemm_blocks tg_gemm_blocking(int dtype) {
    if (dtype == 3) {
        const GemmKernel_f32 *k = tg_gemm_kernel_f32();
        return (tg_gemm_blocks){k->mr, k->nr, k->mc, k->kc, k->nc};
    }
    const GemmKernel_f64 *k = tg_gemm_kernel_f64();
    return (tg_gemm_blocks){k->mr, k->nr, k->mc, k->kc, k->nc};
}

int tg_gemm_use_kernel(const char *name) {
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
        chosen = widest_supported();
        return 1;
    }
    int kind = kind_named(name);
    if (kind < 0 || !cpu_supports(kind)) return 0;
    chosen = kind;
    return 1;
}

/* ---- the ceiling: one core's FMA peak, measured ---------------------------------------
 * GFLOPS of a loop doing nothing but fused multiply-adds on registers, 12 independent
 * chains (as many as the AVX2 micro-kernel has accumulators), at the vector width of the
 * kernel in use: what a micro-kernel could reach if loads and the loops around it were
 * free (benchmarks/gemm.py prints it beside TinyBLAS and OpenBLAS). Best of a few runs of
 * 2^20 steps each; 0 for the generic kernel (its speed depends on what the compiler made). */
#define PEAK_CHAINS 12

#ifdef TG_GEMM_X86
__attribute__((target("avx2,fma"))) static float avx2_fma_loop(i64 iterations) {
    __m256 acc[PEAK_CHAINS], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int j = 0; j < PEAK_CHAINS; j++) acc[j] = _mm256_set1_ps((float)j);
    for (i64 i = 0; i < iterations; i++)
#pragma GCC unroll 12
        for (int j = 0; j < PEAK_CHAINS; j++) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
    float lanes[8], sum = 0;
    for (int j = 0; j < PEAK_CHAINS; j++) {         /* use every result, or none is computed */
        _mm256_storeu_ps(lanes, acc[j]);
        for (int l = 0; l < 8; l++) sum += lanes[l];
    }
    return sum;
}

__attribute__((target("avx512f"))) static float avx512_fma_loop(i64 iterations) {
    __m512 acc[PEAK_CHAINS], x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (int j = 0; j < PEAK_CHAINS; j++) acc[j] = _mm512_set1_ps((float)j);
    for (i64 i = 0; i < iterations; i++)
#pragma GCC unroll 12
        for (int j = 0; j < PEAK_CHAINS; j++) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
    float sum = 0;
    for (int j = 0; j < PEAK_CHAINS; j++) sum += _mm512_reduce_add_ps(acc[j]);
    return sum;
}
#endif

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

volatile float tg_gemm_peak_sink;               /* keeps the loops' results alive */

double tg_gemm_peak_gflops(void) {
    int kind = current_kind();
    if (kind == GENERIC) return 0;
    int lanes = kind == AVX512 ? 16 : 8;
    i64 iterations = 1 << 20;
    double best = 0;
    for (int run = 0; run < 5; run++) {
        double start = seconds_now();
#ifdef TG_GEMM_X86
        tg_gemm_peak_sink = kind == AVX512 ? avx512_fma_loop(iterations) : avx2_fma_loop(iterations);
#endif
        double gflops = 2.0 * lanes * PEAK_CHAINS * (double)iterations / (seconds_now() - start) / 1e9;
        if (gflops > best) best = gflops;
    }
    return best;
}
