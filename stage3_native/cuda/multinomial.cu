/* Multinomial sampling for device "cuda" (chapter on native kernels, section "CUDA");
 * compare csrc/multinomial.c, whose draws this makes to the bit: each row's running sums in
 * double, from the left, bisected at u times the row's total (the last non-zero weight when
 * rounding puts that past every sum); without replacement a drawn weight becomes 0 and the
 * sums from it on are summed again. A row that is no distribution (a weight < 0, inf or nan,
 * none above 0, or without replacement fewer above 0 than draws) is left undrawn, and the
 * first such row reported in *bad (-1: none).
 *
 * One thread per row, in scratch memory of n doubles per row (2n without replacement: the
 * weights not drawn yet) that the host allocates for the call: the sums must be taken in
 * order to give the CPU's bits, so a long row (a vocabulary) is one thread's work. */
#include <cfloat>

#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

/* The first i with x < cum[i] in the non-decreasing cum[0..n), or n - 1 when there is none */
__device__ i64 first_above(const double *cum, i64 n, double x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = lo + (hi - lo) / 2;
        if (x < cum[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo < n ? lo : n - 1;
}

__global__ void no_bad_row(i64 *bad) { *bad = NO_BAD_INDEX; }
__global__ void bad_row_or_none(i64 *bad) {
    if (*bad == NO_BAD_INDEX) *bad = -1;
}

template <typename T>
__global__ void multinomial_rows(i64 rows, i64 n, i64 samples, const T *weights, const double *uniforms,
                                 int replacement, i64 *out, i64 *bad, double *scratch) {
    for_each_index(r, rows) {
        const T *w = weights + r * n;
        const double *u = uniforms + r * samples;
        double *cum = scratch + r * n * (replacement ? 1 : 2);
        double sum = 0;
        i64 above = 0;
        bool valid = true;
        for (i64 i = 0; i < n; i++) {
            double x = (double)w[i];
            valid = valid && x >= 0 && x <= DBL_MAX;            /* false for nan */
            above += x > 0;
            sum += x;
            cum[i] = sum;
        }
        if (!valid || above == 0 || (!replacement && above < samples)) {
            atomicMin((long long *)bad, (long long)r);
            continue;
        }
        if (replacement) {
            for (i64 s = 0; s < samples; s++) {
                i64 at = first_above(cum, n, u[s] * cum[n - 1]);
                while (at > 0 && w[at] == 0) at--;
                out[r * samples + s] = at;
            }
            continue;
        }
        double *left = cum + n;
        for (i64 i = 0; i < n; i++) left[i] = (double)w[i];
        for (i64 s = 0; s < samples; s++) {
            i64 at = first_above(cum, n, u[s] * cum[n - 1]);
            while (at > 0 && left[at] == 0) at--;
            out[r * samples + s] = at;
            left[at] = 0;
            sum = at > 0 ? cum[at - 1] : 0;
            for (i64 i = at; i < n; i++) {
                sum += left[i];
                cum[i] = sum;
            }
        }
    }
}

}  // namespace

extern "C" {

int tg_cuda_multinomial(int dtype, i64 rows, i64 n, i64 samples, const void *weights, const double *uniforms,
                        int replacement, i64 *out, i64 *bad) {
    int status = 0;
    LAUNCH(1, 1, no_bad_row)(bad);
    if (rows > 0) {
        size_t per_row = (size_t)(n > 0 ? n : 1) * (replacement ? 1 : 2);
        double *scratch = (double *)tg_cuda_malloc((size_t)rows * per_row * sizeof(double), &status);
        if (status) return status;
        DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(rows), THREADS, multinomial_rows<T>)(
                                  rows, n, samples, (const T *)weights, uniforms, replacement, out, bad, scratch))
        status = LAUNCHED();
        tg_cuda_free(scratch);      /* kernels run in order: the next user of it waits for finish */
    }
    LAUNCH(1, 1, bad_row_or_none)(bad);
    return status ? status : LAUNCHED();
}

}  // extern "C"
