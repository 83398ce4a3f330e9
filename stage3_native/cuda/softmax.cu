/* Softmax, log-softmax and cross-entropy for device "cuda", fused (chapter on native
 * kernels, section "CUDA"): one kernel per row-wise pass instead of the five tensor
 * operations (max, subtract, exp, sum, divide) stage2 would launch. Compare csrc/softmax.c:
 * the same formulas, in double for both dtypes as there (these kernels wait on memory, not
 * on arithmetic), and the same results for NaN and infinite logits.
 *
 * x is contiguous, viewed as (outer, size, inner) with the softmax dimension in the
 * middle: row (o, k) is `size` elements `inner` apart. Each kernel is written once for a
 * "team", whoever works on one row:
 *
 *   BlockTeam    a block per row, for long contiguous rows: the block's threads read
 *                neighbouring elements, then combine their maxima and sums in a tree in
 *                shared memory.
 *   ThreadTeam   a thread per row, for short rows (a block would leave most of its threads
 *                idle) and for rows along a dimension that is not the last, inner >= WARP:
 *                there neighbouring threads take rows k, k + 1, whose elements are
 *                neighbours in memory, so a warp's reads still come in one piece.
 *
 * Every row is shifted by its max first: e^(x - max) <= 1 cannot overflow, and the sum of
 * the exponentials is at least 1, so its log is finite.
 */
#include "team.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

/* NaN is not kept by the max: it reaches every output through the sum of exponentials. An
 * all -inf row gets m = -inf and x - m = NaN, as on the CPU. */
__device__ __forceinline__ double larger(double a, double b) { return b > a ? b : a; }

/* The first element of row r of the (outer, size, inner) layout */
__device__ __forceinline__ i64 row_start(i64 r, i64 size, i64 inner) { return r / inner * size * inner + r % inner; }

template <typename T, typename Team>
__global__ void softmax_rows(i64 rows, i64 size, i64 inner, const T *x, int log_softmax, T *out) {
    for_each_team_row(Team, r, rows) {
        const T *row = x + row_start(r, size, inner);
        T *dst = out + row_start(r, size, inner);
        double m = -INFINITY, sum = 0;
        for_each_lane(Team, i, size) m = larger(m, (double)row[i * inner]);
        m = Team::max(m);
        for_each_lane(Team, i, size) sum += exp((double)row[i * inner] - m);
        double log_sum = log(Team::sum(sum));
        for_each_lane(Team, i, size) {
            double shifted = (double)row[i * inner] - m - log_sum;      /* log-softmax */
            dst[i * inner] = (T)(log_softmax ? shifted : exp(shifted));
        }
    }
}

/* The gradient from the upstream g and the output y, per row: softmax dx = y * (g - sum g y),
 * log-softmax dx = g - e^y * sum g (e^y is the softmax) */
template <typename T, typename Team>
__global__ void softmax_backward_rows(i64 rows, i64 size, i64 inner, const T *grad, const T *y,
                                      int log_softmax, T *dx) {
    for_each_team_row(Team, r, rows) {
        i64 start = row_start(r, size, inner);
        double sum = 0;
        for_each_lane(Team, i, size) {
            double g = (double)grad[start + i * inner];
            sum += log_softmax ? g : g * (double)y[start + i * inner];
        }
        sum = Team::sum(sum);
        for_each_lane(Team, i, size) {
            i64 p = start + i * inner;
            double g = (double)grad[p], yp = (double)y[p];
            dx[p] = (T)(log_softmax ? g - exp(yp) * sum : yp * (g - sum));
        }
    }
}

/* Cross-entropy over the rows of the (n, c) logits: the row's softmax into probs (the
 * backward pass needs probs - onehot) and loss_i = log sum e^(x - m) - (x_target - m) into
 * row_losses, 0 for a row whose target is ignore_index (when ignoring). A target that is
 * neither a class index nor ignored records its row in *bad (the smallest such row wins:
 * the CPU reports the first) and gives no loss. */
template <typename T, typename Team>
__global__ void cross_entropy_rows(i64 n, i64 c, const T *logits, const i64 *targets, int ignoring,
                                   i64 ignore_index, T *row_losses, T *probs, i64 *bad) {
    for_each_team_row(Team, i, n) {
        const T *row = logits + i * c;
        double m = -INFINITY, sum = 0;
        for_each_lane(Team, j, c) m = larger(m, (double)row[j]);
        m = Team::max(m);
        for_each_lane(Team, j, c) sum += exp((double)row[j] - m);
        double log_sum = log(Team::sum(sum));
        for_each_lane(Team, j, c) probs[i * c + j] = (T)exp((double)row[j] - m - log_sum);
        if (Team::leader()) {
            i64 t = targets[i];
            if (ignoring && t == ignore_index) {
                row_losses[i] = 0;
            } else if (t < 0 || t >= c) {
                atomicMin((long long *)bad, (long long)i);
                row_losses[i] = 0;
            } else {
                row_losses[i] = (T)(log_sum - ((double)row[t] - m));
            }
        }
    }
}

/* The sum (mean over the rows kept, their count into kept[0]) of the n rounded row losses,
 * as the CPU adds them, into loss[0]. Launched as one block, so the order of the additions
 * is fixed (no atomics: the same bits every run); the losses are few (one per row), so one
 * block is enough. */
template <typename T>
__global__ void sum_losses(i64 n, const T *row_losses, const i64 *targets, int ignoring, i64 ignore_index,
                           int mean, T *loss, T *kept) {
    double sum = 0, count = 0;
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
        sum += (double)row_losses[i];
        count += !(ignoring && targets[i] == ignore_index);
    }
    sum = BlockTeam::sum(sum);
    if (mean) count = BlockTeam::sum(count);                /* exact: integers below 2^53 */
    if (threadIdx.x == 0) {
        loss[0] = (T)(mean ? sum / count : sum);              /* none kept: 0/0, nan */
        if (mean) kept[0] = (T)count;
    }
}

/* (probs - onehot(targets)) * scale[i * scale_step] / kept[0] (kept NULL: 1), element by
 * element; 0 for a row whose target is ignore_index (when ignoring) */
template <typename T>
__global__ void cross_entropy_backward_kernel(i64 n, i64 c, const T *probs, const i64 *targets,
                                              const T *scale, i64 scale_step, const T *kept, int ignoring,
                                              i64 ignore_index, T *out) {
    for_each_index(k, n * c) {
        i64 i = k / c, j = k % c;
        if (ignoring && targets[i] == ignore_index) {
            out[k] = 0;
            continue;
        }
        double s = (double)scale[i * scale_step] / (kept ? (double)kept[0] : 1.0);
        out[k] = (T)(((double)probs[k] - (j == targets[i])) * s);
    }
}

/* A thread per row for short rows, and for rows whose elements are >= WARP apart */
static bool by_threads(i64 size, i64 inner) { return size <= WARP || inner >= WARP; }

template <typename T>
static int softmax(i64 outer, i64 size, i64 inner, const T *x, int log_softmax, T *out) {
    i64 rows = outer * inner;
    if (by_threads(size, inner))
        LAUNCH(blocks_for(rows), THREADS, softmax_rows<T, ThreadTeam>)(rows, size, inner, x, log_softmax, out);
    else
        LAUNCH(blocks_for(rows, 1), THREADS, softmax_rows<T, BlockTeam>)(rows, size, inner, x, log_softmax, out);
    return LAUNCHED();
}

template <typename T>
static int softmax_backward(i64 outer, i64 size, i64 inner, const T *grad, const T *y, int log_softmax, T *dx) {
    i64 rows = outer * inner;
    if (by_threads(size, inner))
        LAUNCH(blocks_for(rows), THREADS, softmax_backward_rows<T, ThreadTeam>)(
            rows, size, inner, grad, y, log_softmax, dx);
    else
        LAUNCH(blocks_for(rows, 1), THREADS, softmax_backward_rows<T, BlockTeam>)(
            rows, size, inner, grad, y, log_softmax, dx);
    return LAUNCHED();
}

/* reduction 0: the n losses into losses; 1, 2: their sum, mean into losses[0] (2: the count
 * kept into kept[0]) */
template <typename T>
static int cross_entropy(i64 n, i64 c, const T *logits, const i64 *targets, int reduction, int ignoring,
                         i64 ignore_index, T *losses, T *probs, T *kept, i64 *bad) {
    int status = 0;
    *bad = -1;
    T *row_losses = losses;
    if (reduction != 0 && n > 0) {
        row_losses = (T *)tg_cuda_malloc(n * sizeof(T), &status);
        if (!row_losses) return status;
    }
    if (n > 0) {
        i64 *word = bad_index_word();
        if (by_threads(c, 1))
            LAUNCH(blocks_for(n), THREADS, cross_entropy_rows<T, ThreadTeam>)(
                n, c, logits, targets, ignoring, ignore_index, row_losses, probs, word);
        else
            LAUNCH(blocks_for(n, 1), THREADS, cross_entropy_rows<T, BlockTeam>)(
                n, c, logits, targets, ignoring, ignore_index, row_losses, probs, word);
        *bad = read_bad_index(&status);                       /* waits for the kernel */
    }
    if (status == 0 && *bad < 0 && reduction != 0) {          /* a mean of nothing is NaN, as on the CPU */
        LAUNCH(1, THREADS, sum_losses<T>)(n, row_losses, targets, ignoring, ignore_index, reduction == 2,
                                          losses, kept);
        status = LAUNCHED();
    }
    if (row_losses != losses) tg_cuda_free(row_losses);
    return status;
}

}  // namespace

extern "C" {

int tg_cuda_softmax(int dtype, i64 outer, i64 size, i64 inner, const void *x, int log_softmax, void *out) {
    if (outer * size * inner == 0) return 0;
    DISPATCH_FLOAT(dtype, return softmax<T>(outer, size, inner, (const T *)x, log_softmax, (T *)out))
    return 0;
}

int tg_cuda_softmax_backward(int dtype, i64 outer, i64 size, i64 inner, const void *grad, const void *y,
                             int log_softmax, void *dx) {
    if (outer * size * inner == 0) return 0;
    DISPATCH_FLOAT(dtype, return softmax_backward<T>(outer, size, inner, (const T *)grad, (const T *)y,
                                                     log_softmax, (T *)dx))
    return 0;
}

int tg_cuda_cross_entropy(int dtype, i64 n, i64 c, const void *logits, const i64 *targets, int reduction,
                          int ignoring, i64 ignore_index, void *losses, void *probs, void *kept, i64 *bad) {
    DISPATCH_FLOAT(dtype, return cross_entropy<T>(n, c, (const T *)logits, targets, reduction, ignoring,
                                                  ignore_index, (T *)losses, (T *)probs, (T *)kept, bad))
    return 0;
}

int tg_cuda_cross_entropy_backward(int dtype, i64 n, i64 c, const void *probs, const i64 *targets,
                                   const void *scale, i64 scale_step, const void *kept, int ignoring,
                                   i64 ignore_index, void *out) {
    if (n * c == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(n * c), THREADS, cross_entropy_backward_kernel<T>)(
        n, c, (const T *)probs, targets, (const T *)scale, scale_step, (const T *)kept, ignoring, ignore_index,
        (T *)out))
    return LAUNCHED();
}

}  // extern "C"
