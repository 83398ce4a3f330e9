/* cat for device "cuda" (chapter on native kernels, section "CUDA"); compare csrc/cat.c:
 * count views side by side along dimension dim into a contiguous output of `shape`, whose
 * row o (the elements from dim on, at outer position o) holds every view's row o in order.
 * One kernel for all the views: the host copies a table of them to the device (where each
 * starts in a row, its pointer, offset, whether it is contiguous, its strides), and a thread
 * per output element finds its view by bisecting the starts, then reads the element in
 * place: at its row-major index in a contiguous view, through the strides in another.
 * Elements are only moved, so the kernel is compiled per element size, not per dtype. */
#include <cstdlib>

#include "runtime.cuh"

namespace {         /* private to this file: other .cu files may use the same names */

struct Joined {
    int ndim, dim;
    i64 shape[TG_MAX_DIMS];             /* the output's */
    i64 count, inner, row;
};

/* The table, count views: starts (count + 1, in a row's elements), then per view its
 * pointer (as an integer), offset, contiguous flag, then ndim strides per view */
template <typename E>
__global__ void cat_elements(i64 n, Joined j, const i64 *table, E *out) {
    const i64 *starts = table, *pointers = table + j.count + 1, *offsets = pointers + j.count;
    const i64 *contiguous = offsets + j.count, *strides = contiguous + j.count;
    for_each_index(i, n) {
        i64 o = i / j.row, at = i % j.row, lo = 0, hi = j.count - 1;   /* the last view starting at or before at */
        while (lo < hi) {
            i64 mid = (lo + hi + 1) / 2;
            if (starts[mid] <= at) lo = mid;
            else hi = mid - 1;
        }
        i64 width = starts[lo + 1] - starts[lo], k = o * width + at - starts[lo], pos = offsets[lo];
        if (contiguous[lo]) {
            pos += k;
        } else {
            for (int d = j.ndim - 1; d >= 0; d--) {
                i64 size = d == j.dim ? width / j.inner : j.shape[d];
                pos += k % size * strides[lo * j.ndim + d];
                k /= size;
            }
        }
        out[i] = ((const E *)(uintptr_t)pointers[lo])[pos];
    }
}

}  // namespace

extern "C" {

/* buffers: a host array of device pointers; the rest as csrc/tracegrad.h's tg_cat */
int tg_cuda_cat(int ndim, const i64 *shape, int dim, i64 count, void *const *buffers, const i64 *offsets,
                const i64 *sizes, const i64 *strides, int shared_strides, int itemsize, void *out) {
    Joined j;
    j.ndim = ndim;
    j.dim = dim;
    j.count = count;
    j.inner = 1;
    for (int d = 0; d < ndim; d++) j.shape[d] = shape[d];
    for (int d = dim + 1; d < ndim; d++) j.inner *= shape[d];
    j.row = shape[dim] * j.inner;
    i64 n = numel(ndim, shape);
    if (n == 0) return 0;
    size_t entries = (size_t)(count + 1) + 3 * (size_t)count + (size_t)count * ndim;
    i64 *table = (i64 *)malloc(entries * sizeof(i64));
    if (!table) return (int)cudaErrorMemoryAllocation;
    i64 *starts = table, *pointers = table + count + 1, *offs = pointers + count, *contiguous = offs + count;
    i64 *strides_out = contiguous + count;
    starts[0] = 0;
    for (i64 p = 0; p < count; p++) {
        const i64 *s = strides + (shared_strides ? 0 : p * ndim);
        i64 expected = 1;
        contiguous[p] = 1;
        for (int d = ndim - 1; d >= 0; d--) {     /* row-major, size-1 dimensions aside */
            i64 size = d == dim ? sizes[p] : shape[d];
            if (size != 1 && s[d] != expected) contiguous[p] = 0;
            expected *= size;
            strides_out[p * ndim + d] = s[d];
        }
        starts[p + 1] = starts[p] + sizes[p] * j.inner;
        pointers[p] = (i64)(uintptr_t)buffers[p];
        offs[p] = offsets ? offsets[p] : 0;
    }
    int status = 0;
    i64 *on_device = (i64 *)tg_cuda_malloc(entries * sizeof(i64), &status);
    if (!status) status = tg_cuda_to_device(on_device, table, entries * sizeof(i64));
    if (!status) {
#define CAT(E) LAUNCH(blocks_for(n), THREADS, cat_elements<E>)(n, j, on_device, (E *)out)
        switch (itemsize) {
        case 1: CAT(uint8_t); break;
        case 2: CAT(uint16_t); break;               /* float16, bfloat16: their bits */
        case 4: CAT(uint32_t); break;
        default: CAT(uint64_t);
        }
#undef CAT
        status = LAUNCHED();
    }
    if (on_device) tg_cuda_free(on_device);      /* kernels run in order: the next user of it waits */
    free(table);
    return status;
}

}  // extern "C"
