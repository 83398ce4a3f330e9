/* Layer normalization for device "cuda", fused (chapter on native kernels, section "CUDA"):
 * the formulas of csrc/layernorm.c, one kernel per pass instead of ~11 tensor operations
 * forward and ~25 backward. x is contiguous, viewed as (rows, n), normalized over n;
 * weight and bias hold n values, or are NULL.
 *
 *   forward        a block per row (a thread per row when n <= WARP): the row's sum, then
 *                  the sum of its squared deviations (from the centred values: sum x^2 / n
 *                  - mean^2 would cancel badly), each a tree in shared memory, in double;
 *                  then out, mean and rstd.
 *   backward, dx   the same way: two sums per row, then dx.
 *   dweight, dbias sums over the rows, down each column: a thread per column, so
 *                  neighbouring threads read neighbouring elements of a row. Atomics
 *                  (every row's block adding into dweight) would add in a different order
 *                  each run, so floats would differ in their last bits from run to run;
 *                  here the rows are cut into chunks whose partial sums a second kernel adds
 *                  in chunk order: the same bits every run, and enough threads to fill the
 *                  GPU when there are many rows and few columns.
 *
 * The statistics are in double for both dtypes; the element-wise passes that apply them
 * run in T, with the CPU's formulas (csrc/layernorm_math.h).
 */
#include "team.cuh"

/* The formulas of one element, shared with the CPU: one copy per element type, which C++
 * overloads under one name */
#define FN(name) name
#define T float
#include "../csrc/layernorm_math.h"
#undef T
#define T double
#include "../csrc/layernorm_math.h"
#undef T
#undef FN

#define MIN_CHUNK 32                /* rows per chunk of dweight and dbias, at least */
#define FILL_THREADS (1 << 18)      /* threads that keep every SM of an H100 busy */

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T, typename Team>
__global__ void layer_norm_rows(i64 rows, i64 n, const T *x, const T *weight, const T *bias, double eps,
                                T *out, T *mean, T *rstd) {
    for_each_team_row(Team, r, rows) {
        const T *xr = x + r * n;
        T *y = out + r * n;
        double sum = 0, squares = 0;
        for_each_lane(Team, j, n) sum += (double)xr[j];
        double m = Team::sum(sum) / (double)n;
        for_each_lane(Team, j, n) squares += ((double)xr[j] - m) * ((double)xr[j] - m);
        double s = 1.0 / sqrt(Team::sum(squares) / (double)n + eps);
        if (Team::leader()) {
            mean[r] = (T)m;
            rstd[r] = (T)s;
        }
        T mt = (T)m, st = (T)s;
        for_each_lane(Team, j, n) y[j] = tg_layer_norm_out(xr[j], mt, st, weight, bias, j);
    }
}

/* dx per row: the row's two means, mean(gw) and mean(gw * xhat), then dx per element */
template <typename T, typename Team>
__global__ void layer_norm_backward_rows(i64 rows, i64 n, const T *grad, const T *x, const T *mean,
                                         const T *rstd, const T *weight, T *dx) {
    for_each_team_row(Team, r, rows) {
        const T *g = grad + r * n, *xr = x + r * n;
        double m = (double)mean[r], s = (double)rstd[r], sum_gw = 0, sum_gw_xhat = 0;
        for_each_lane(Team, j, n) {
            double gw = weight ? (double)g[j] * (double)weight[j] : (double)g[j];
            sum_gw += gw;
            sum_gw_xhat += gw * (((double)xr[j] - m) * s);
        }
        T a = (T)(Team::sum(sum_gw) / (double)n), b = (T)(Team::sum(sum_gw_xhat) / (double)n);
        T mt = (T)m, st = (T)s;
        for_each_lane(Team, j, n) dx[r * n + j] = tg_layer_norm_dx(g[j], xr[j], mt, st, weight, j, a, b);
    }
}

template <typename T>
__global__ void layer_norm_columns(i64 rows, i64 n, i64 chunks, const T *grad, const T *x, const T *mean,
                                   const T *rstd, double *partial, T *dweight, T *dbias) {
    for_each_index(item, chunks * n) {
        i64 j = item % n, c = item / n;
        double w = 0, b = 0;
        for (i64 r = rows * c / chunks; r < rows * (c + 1) / chunks; r++) {
            double g = (double)grad[r * n + j];
            w += g * (((double)x[r * n + j] - (double)mean[r]) * (double)rstd[r]);
            b += g;
        }
        if (partial) {
            partial[c * 2 * n + j] = w;
            partial[c * 2 * n + n + j] = b;
        } else {
            dweight[j] = (T)w;
            dbias[j] = (T)b;
        }
    }
}

template <typename T>
__global__ void layer_norm_finish(i64 n, i64 chunks, const double *partial, T *dweight, T *dbias) {
    for_each_index(j, n) {
        double w = 0, b = 0;
        for (i64 c = 0; c < chunks; c++) {
            w += partial[c * 2 * n + j];
            b += partial[c * 2 * n + n + j];
        }
        dweight[j] = (T)w;
        dbias[j] = (T)b;
    }
}

template <typename T>
static int layer_norm(i64 rows, i64 n, const T *x, const T *weight, const T *bias, double eps, T *out,
                      T *mean, T *rstd) {
    if (n <= WARP)
        LAUNCH(blocks_for(rows), THREADS, layer_norm_rows<T, ThreadTeam>)(
            rows, n, x, weight, bias, eps, out, mean, rstd);
    else
        LAUNCH(blocks_for(rows, 1), THREADS, layer_norm_rows<T, BlockTeam>)(
            rows, n, x, weight, bias, eps, out, mean, rstd);
    return LAUNCHED();
}

template <typename T>
static int layer_norm_backward(i64 rows, i64 n, const T *grad, const T *x, const T *mean, const T *rstd,
                               const T *weight, T *dx, T *dweight, T *dbias) {
    if (rows > 0) {
        if (n <= WARP)
            LAUNCH(blocks_for(rows), THREADS, layer_norm_backward_rows<T, ThreadTeam>)(
                rows, n, grad, x, mean, rstd, weight, dx);
        else
            LAUNCH(blocks_for(rows, 1), THREADS, layer_norm_backward_rows<T, BlockTeam>)(
                rows, n, grad, x, mean, rstd, weight, dx);
        int status = LAUNCHED();
        if (status) return status;
    }
    if (!dweight || n == 0) return 0;
    /* As many chunks as fill the GPU, each of MIN_CHUNK rows at least; at least one (with
     * no rows, its sums are zeros) */
    i64 chunks = (FILL_THREADS + n - 1) / n, most = rows / MIN_CHUNK;
    chunks = chunks < most ? chunks : most;
    chunks = chunks < 1 ? 1 : chunks;
    int status = 0;
    double *partial = nullptr;
    if (chunks > 1) {
        partial = (double *)tg_cuda_malloc(chunks * 2 * n * sizeof(double), &status);
        if (!partial) return status;
    }
    LAUNCH(blocks_for(chunks * n), THREADS, layer_norm_columns<T>)(rows, n, chunks, grad, x, mean, rstd,
                                                                   partial, dweight, dbias);
    status = LAUNCHED();
    if (partial) {
        if (status == 0) {
            LAUNCH(blocks_for(n), THREADS, layer_norm_finish<T>)(n, chunks, partial, dweight, dbias);
            status = LAUNCHED();
        }
        tg_cuda_free(partial);      /* kernels run in order: the next user of it waits for finish */
    }
    return status;
}

}  // namespace

extern "C" {

int tg_cuda_layer_norm(int dtype, i64 rows, i64 n, const void *x, const void *weight, const void *bias,
                       double eps, void *out, void *mean, void *rstd) {
    if (rows == 0) return 0;
    DISPATCH_FLOAT(dtype, return layer_norm<T>(rows, n, (const T *)x, (const T *)weight, (const T *)bias, eps,
                                               (T *)out, (T *)mean, (T *)rstd))
    return 0;
}

int tg_cuda_layer_norm_backward(int dtype, i64 rows, i64 n, const void *grad, const void *x, const void *mean,
                                const void *rstd, const void *weight, void *dx, void *dweight, void *dbias) {
    DISPATCH_FLOAT(dtype, return layer_norm_backward<T>(rows, n, (const T *)grad, (const T *)x, (const T *)mean,
                                                        (const T *)rstd, (const T *)weight, (T *)dx,
                                                        (T *)dweight, (T *)dbias))
    return 0;
}

}  // extern "C"
