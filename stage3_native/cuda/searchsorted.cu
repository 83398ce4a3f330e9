/* searchsorted for device "cuda"; compare csrc/searchsorted.c, whose search (PyTorch's,
 * test for test, so NaN gives the same answer) this is: a thread per value, a binary search
 * of its row of boundaries (one row for all when `shared`). */
#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void searchsorted_values(i64 count, i64 n, i64 m, int shared, int right, const T *boundaries,
                                    const T *values, i64 *out) {
    for_each_index(i, count) {
        const T *row = shared ? boundaries : boundaries + i / m * n;
        T value = values[i];
        i64 lo = 0, hi = n;
        while (lo < hi) {
            i64 mid = lo + (hi - lo) / 2;
            if (right ? !(row[mid] > value) : !(row[mid] >= value)) lo = mid + 1;
            else hi = mid;
        }
        out[i] = lo;
    }
}

}  // namespace

extern "C" {

int tg_cuda_searchsorted(int dtype, i64 rows, i64 n, i64 m, int shared, int right, const void *boundaries,
                         const void *values, i64 *out) {
    i64 count = rows * m;
    if (count == 0) return 0;
    DISPATCH(dtype, LAUNCH(blocks_for(count), THREADS, searchsorted_values<T>)(
                        count, n, m, shared, right, (const T *)boundaries, (const T *)values, out))
    return LAUNCHED();
}

}  // extern "C"
