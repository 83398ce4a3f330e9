/* Scaled dot-product attention, fused (flash-attention style), forward and backward, for
 * float and double (chapter on language models, "Self-attention").
 *
 * For each of bh (batch * heads) independent heads, queries q (t, d), keys k (s, d) and
 * values v (s, dv):
 *
 *     out_i = sum_j p_ij v_j,   p_ij = e^(x_ij - lse_i),   x_ij = scale * q_i . k_j,
 *     lse_i = log sum_j e^(x_ij)          (j over the keys query i sees)
 *
 * With causal != 0, query i sees keys 0 .. i + offset only (offset 0: PyTorch's is_causal,
 * aligned at the top left; offset s - t: the last t of s positions, as with a KV cache);
 * offset >= 0, so every query sees at least key 0.
 *
 * Written with tensor operations (nn/functional.py's attention_weights, then @ v), each
 * head's (t, s) scores, their mask, their softmax and its gradient are whole tensors,
 * written and read again by one kernel after the other and kept for the backward pass.
 * Here they never exist whole:
 *
 *   forward   per block of ATT_BQ queries, the keys are visited ATT_BK at a time; each
 *             block's scores live in a small tile, and a running max m_i and sum l_i
 *             (the online softmax) rescale what was accumulated so far whenever a new
 *             block raises the max. Kept: out and lse_i = m_i + log l_i, one per query.
 *   backward  recomputes p_ij = e^(x_ij - lse_i) block by block from q, k and lse, with
 *             D_i = sum_c dout_ic out_ic (= sum_j p_ij dp_ij) computed first:
 *                 dv_j += p_ij dout_i,  dp_ij = dout_i . v_j,  ds_ij = p_ij (dp_ij - D_i),
 *                 dq_i += scale ds_ij k_j,  dk_j += scale ds_ij q_i.
 *
 * Two variants, picked by `variant` (cpu/backend.py's ATTENTION_VARIANTS): 0, naive, the
 * straightforward per-row formulas in double (three passes over a query's keys, no
 * blocks), kept as the tests' reference and for reading; 1, blocked, the flash version
 * above. The dispatch is tg_attention / tg_attention_backward at the end of
 * attention_t.h; the blocks' tile products run the copy of the current SIMD level (att_mm
 * there).
 *
 * Layout: q, k, v, dout and the backward's out are read in place (their last dimension
 * contiguous): head b's rows start at x + x_base[b], x_row elements apart, as the views
 * stage2 makes by splitting one (B, T, 3C) projection into heads. The outputs out, dq, dk
 * and dv are written with their heads interleaved (att_at: (B, t, H, dv) for out when
 * heads = H), so that putting the heads side by side again, (B, H, t, dv) -> (B, t, H dv),
 * is a view and not a copy; lse is (bh, t).
 *
 * Threads: the forward pass splits (head, query block) pairs among the threads, heaviest
 * first (under a causal mask the last query blocks see the most keys); the backward pass
 * splits the heads, each thread owning its heads' dk and dv, so no two threads add into one
 * row. Blocks run plain loops whose innermost one walks a contiguous row (of a tile, of v
 * or of an accumulator) for gcc to vectorize, once per SIMD level (simd.h's TG_SIMD); their
 * tiles' products keep blocks of the result in vector registers of the level's own width
 * (attention_tile_t.h, attention_kernel_t.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "parallel.h"
#include "vmath.h"

#define ATT_BQ 64          /* queries per block */
#define ATT_BK 64          /* keys per block: a (ATT_BQ, ATT_BK) tile of scores, 16 KiB of floats */
#define ATT_R 4            /* rows of a tile product kept in registers at once */
#define ATT_ALL ((i64)1 << 60)   /* a tile product's staircase: no limit (attention_tile_t.h) */

typedef struct {
    i64 bh, t, s, d, dv;
    int causal;
    i64 offset;
    double scale;
} AttentionShape;

/* How many keys query i sees: all s, or 0 .. i + offset under the causal mask. */
static inline i64 att_visible(const AttentionShape *g, i64 i) {
    if (!g->causal) return g->s;
    i64 n = i + g->offset + 1;
    return n < g->s ? n : g->s;
}

/* Where head b's rows of an output of (rows, cols) per head start, the outputs laid out
 * (bh / heads, rows, heads, cols): with heads = H of (B, H) heads, row t of every head of
 * one batch element side by side, as the concatenation of the heads wants them (PyTorch's
 * CPU kernels do the same); heads = 1: (bh, rows, cols). A row is heads * cols long. */
static inline i64 att_at(i64 b, i64 heads, i64 rows, i64 cols) {
    return (b / heads) * rows * heads * cols + (b % heads) * cols;
}

/* e^x in the element type: vmath.h's vectorizable one for float, libm's for double. */
TG_INLINE float att_exp_f32(float x) { return tg_expf(x); }
TG_INLINE double att_exp_f64(double x) { return exp(x); }

/* The tile products' micro-kernel (attention_kernel_t.h), for vectors of 8 to 64 bytes. */
#define TEMPLATE "attention_kernel_t.h"
#define ATT_BYTES 8
#include "instantiate_float.h"
#undef ATT_BYTES
#define ATT_BYTES 16
#include "instantiate_float.h"
#undef ATT_BYTES
#define ATT_BYTES 32
#include "instantiate_float.h"
#undef ATT_BYTES
#define ATT_BYTES 64
#include "instantiate_float.h"
#undef ATT_BYTES
#undef TEMPLATE

/* The tile products (attention_tile_t.h), the hot loops, once per SIMD level: its vectors
 * one register each, SSE's (or NEON's) 16 bytes, AVX2's 32, AVX-512's 64. */
#define TEMPLATE "attention_tile_t.h"
#if TG_SIMD_LEVELS > 1
#define ATT_LEVEL _avx512
#define ATT_TARGET __attribute__((target("arch=x86-64-v4")))
#define ATT_BYTES 64
#define ATT_HALF 32
#include "instantiate_float.h"
#undef ATT_LEVEL
#undef ATT_TARGET
#undef ATT_BYTES
#undef ATT_HALF
#define ATT_LEVEL _avx2
#define ATT_TARGET __attribute__((target("arch=x86-64-v3")))
#define ATT_BYTES 32
#define ATT_HALF 16
#include "instantiate_float.h"
#undef ATT_LEVEL
#undef ATT_TARGET
#undef ATT_BYTES
#undef ATT_HALF
#endif
#define ATT_LEVEL _generic
#define ATT_TARGET
#define ATT_BYTES 16
#define ATT_HALF 8
#include "instantiate_float.h"
#undef ATT_LEVEL
#undef ATT_TARGET
#undef ATT_BYTES
#undef ATT_HALF
#undef TEMPLATE

#define TEMPLATE "attention_t.h"
#include "instantiate_float.h"
