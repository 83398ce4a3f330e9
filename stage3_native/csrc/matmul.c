/* Matrix multiplication, the ladder of the thesis's performance chapter, for float and
 * double; each rung is a variant (cpu/backend.py's MATMUL_VARIANTS):
 *
 *   0 naive i-j-k: the textbook loop; the inner loop walks b down a column, jumping a whole
 *     row of b per step, so nearly every load misses the cache;
 *   1 reordered i-k-j: the same arithmetic with the two inner loops swapped: the inner loop
 *     now walks a row of b and a row of out, consecutive in memory;
 *   2 blocked: i-k-j on tiles small enough to stay in cache;
 *   3 a system CBLAS (cblas_sgemm / cblas_dgemm of OpenBLAS, MKL, Accelerate) when build.py
 *     found one (TG_HAVE_CBLAS); operands it cannot describe (no unit stride) use TinyBLAS;
 *   4 TinyBLAS, the project's own BLAS (gemm.c): packed operands, cache blocking, a SIMD
 *     micro-kernel chosen at run time, threads.
 *
 * Strides are in elements; a transposed operand is just swapped strides (stage2 passes
 * views). Each batch b has its own offsets a_base[b], b_base[b]; out is contiguous. bias
 * (NULL or n values) is added to every row of out: Linear's x @ W.T + b in one call.
 */
#include <string.h>
#include "gemm.h"
#include "strided.h"

#define TILE 64
#define ROW_MAJOR 101        /* CBLAS's enum values */
#define NO_TRANS 111
#define TRANS 112

#ifdef TG_HAVE_CBLAS
/* The two CBLAS functions, declared here so that no cblas.h is needed at build time. */
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc);

/* How BLAS can read a (rows x cols) operand with these strides: row-major, element (i, j)
 * at i * ld + j, or transposed, at j * ld + i, with ld at least the row length; -1 when
 * neither fits (a broadcast or sliced operand), and TinyBLAS takes the call. */
static int blas_layout(i64 rows, i64 cols, i64 s_row, i64 s_col, i64 *ld) {
    if ((s_col == 1 || cols == 1) && (rows == 1 || s_row >= (cols > 1 ? cols : 1))) {
        *ld = rows == 1 ? (cols > 1 ? cols : 1) : s_row;
        return NO_TRANS;
    }
    if ((s_row == 1 || rows == 1) && (cols == 1 || s_col >= (rows > 1 ? rows : 1))) {
        *ld = cols == 1 ? (rows > 1 ? rows : 1) : s_col;
        return TRANS;
    }
    return -1;
}
#endif

int tg_has_cblas(void) {
#ifdef TG_HAVE_CBLAS
    return 1;
#else
    return 0;
#endif
}

#define TEMPLATE "matmul_t.h"
#include "instantiate_float.h"
