/* Ordering along one dimension for device "cuda" (sort, argsort, topk, kthvalue); compare csrc/topk.c
 * and topk_t.h, whose order, algorithms and result this follows: the first k positions of
 * each row of x, viewed as (outer, size, inner), by value (NaN last ascending, first
 * descending), then by position.
 *
 * One thread per row: a merge sort of the row's positions, or, for k much smaller than the
 * row, a heap of the k best so far, in scratch memory of two int64 entries per element that
 * the host allocates for the call. A row stays one thread's work, so a single long row (a
 * vocabulary's logits) runs on one thread; a block-wide sort per row would be faster. */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

/* Whether position p of a row (values x[first + i * inner]) comes before position q */
template <typename T>
__device__ bool before(const T *x, i64 first, i64 inner, i64 p, i64 q, int descending) {
    T a = x[first + p * inner], b = x[first + q * inner];
    bool a_nan = a != a, b_nan = b != b;
    if (a_nan != b_nan) return descending ? a_nan : b_nan;
    if (!a_nan && a != b) return descending ? a > b : a < b;
    return p < q;
}

template <typename T>
__device__ void merge_sort(const T *x, i64 first, i64 inner, i64 *idx, i64 *tmp, i64 n, int descending) {
    i64 *src = idx, *dst = tmp;
    for (i64 width = 1; width < n; width *= 2) {
        for (i64 lo = 0; lo < n; lo += 2 * width) {
            i64 mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            i64 i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = before(x, first, inner, src[j], src[i], descending) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        i64 *swap = src; src = dst; dst = swap;
    }
    if (src != idx)
        for (i64 i = 0; i < n; i++) idx[i] = src[i];
}

template <typename T>
__device__ void sift_down(const T *x, i64 first, i64 inner, i64 *heap, i64 k, i64 at, int descending) {
    for (;;) {
        i64 worst = at, left = 2 * at + 1, right = left + 1;
        if (left < k && before(x, first, inner, heap[worst], heap[left], descending)) worst = left;
        if (right < k && before(x, first, inner, heap[worst], heap[right], descending)) worst = right;
        if (worst == at) return;
        i64 swap = heap[at]; heap[at] = heap[worst]; heap[worst] = swap;
        at = worst;
    }
}

template <typename T>
__global__ void topk_rows(i64 rows, i64 size, i64 inner, i64 k, int descending, const T *x, T *values,
                          i64 *indices, i64 *scratch) {
    for_each_index(row, rows) {
        i64 first = row / inner * size * inner + row % inner, out = row / inner * k * inner + row % inner;
        i64 *idx = scratch + row * 2 * size, *tmp = idx + size;
        if (k * 8 >= size) {
            for (i64 i = 0; i < size; i++) idx[i] = i;
            merge_sort(x, first, inner, idx, tmp, size, descending);
        } else {
            for (i64 i = 0; i < k; i++) idx[i] = i;
            for (i64 i = k / 2 - 1; i >= 0; i--) sift_down(x, first, inner, idx, k, i, descending);
            for (i64 p = k; p < size; p++) {
                if (before(x, first, inner, p, idx[0], descending)) {
                    idx[0] = p;
                    sift_down(x, first, inner, idx, k, 0, descending);
                }
            }
            merge_sort(x, first, inner, idx, tmp, k, descending);
        }
        for (i64 j = 0; j < k; j++) {
            values[out + j * inner] = x[first + idx[j] * inner];
            indices[out + j * inner] = idx[j];
        }
    }
}

/* csrc/topk_t.h's quickselect on the row's positions: the k-th (from 0) of the n in idx
 * moved to idx[k]; after 2 log2(n) rounds the range left is merge-sorted (tmp: n) */
template <typename T>
__device__ void select(const T *x, i64 first, i64 inner, i64 *idx, i64 *tmp, i64 n, i64 k) {
    i64 lo = 0, hi = n - 1;
    int rounds = 2;
    for (i64 m = n; m > 1; m /= 2) rounds += 2;
    while (lo < hi) {
        if (rounds-- == 0) {
            merge_sort(x, first, inner, idx + lo, tmp, hi - lo + 1, 0);
            return;
        }
        i64 mid = lo + (hi - lo) / 2, swap;
        if (before(x, first, inner, idx[mid], idx[lo], 0)) { swap = idx[mid]; idx[mid] = idx[lo]; idx[lo] = swap; }
        if (before(x, first, inner, idx[hi], idx[mid], 0)) { swap = idx[hi]; idx[hi] = idx[mid]; idx[mid] = swap; }
        if (before(x, first, inner, idx[mid], idx[lo], 0)) { swap = idx[mid]; idx[mid] = idx[lo]; idx[lo] = swap; }
        i64 pivot = idx[mid], i = lo, j = hi;
        while (i <= j) {
            while (before(x, first, inner, idx[i], pivot, 0)) i++;
            while (before(x, first, inner, pivot, idx[j], 0)) j--;
            if (i <= j) {
                swap = idx[i]; idx[i] = idx[j]; idx[j] = swap;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

template <typename T>
__global__ void kthvalue_rows(i64 rows, i64 size, i64 inner, i64 k, const T *x, T *values, i64 *indices,
                              i64 *scratch) {
    for_each_index(row, rows) {
        i64 first = row / inner * size * inner + row % inner;
        i64 *idx = scratch + row * 2 * size, *tmp = idx + size;
        for (i64 i = 0; i < size; i++) idx[i] = i;
        select(x, first, inner, idx, tmp, size, k);
        values[row] = x[first + idx[k] * inner];
        indices[row] = idx[k];
    }
}

}  // namespace

extern "C" {

int tg_cuda_topk(int dtype, i64 outer, i64 size, i64 inner, i64 k, int descending, const void *view, void *values,
                 i64 *indices) {
    i64 rows = outer * inner;
    if (rows == 0 || k == 0) return 0;
    int status = 0;
    i64 *scratch = (i64 *)tg_cuda_malloc((size_t)rows * 2 * size * sizeof(i64), &status);
    if (status) return status;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, topk_rows<T>)(
                        rows, size, inner, k, descending, (const T *)view, (T *)values, indices, scratch))
    status = LAUNCHED();
    tg_cuda_free(scratch);          /* kernels run in order: the next user of it waits for finish */
    return status;
}

int tg_cuda_kthvalue(int dtype, i64 outer, i64 size, i64 inner, i64 k, const void *view, void *values,
                     i64 *indices) {
    i64 rows = outer * inner;
    if (rows == 0) return 0;
    int status = 0;
    i64 *scratch = (i64 *)tg_cuda_malloc((size_t)rows * 2 * size * sizeof(i64), &status);
    if (status) return status;
    DISPATCH(dtype, LAUNCH(blocks_for(rows), THREADS, kthvalue_rows<T>)(
                        rows, size, inner, k, (const T *)view, (T *)values, indices, scratch))
    status = LAUNCHED();
    tg_cuda_free(scratch);
    return status;
}

}  // extern "C"
