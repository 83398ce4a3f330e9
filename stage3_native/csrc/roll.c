/* Roll: a tensor's elements moved along its dimensions, those leaving one end coming back at
 * the other, as PyTorch's torch.roll (stage2_tensor/reorder.py; the declaration,
 * kernels/indexing.py, says what the arguments are).
 *
 * x and out are contiguous. Output element (i_0, ..., i_n) reads x at ((i_d - shifts[d])
 * mod shape[d]) in each dimension d, with 0 <= shifts[d] < shape[d]. The output is written a
 * row (its last dimension) at a time: the source row takes one division per dimension, and
 * along the row the shift only splits it in two, each piece one memcpy. Elements are only
 * moved, so one copy per element size serves every dtype. Rows are split across threads
 * above TG_PARALLEL_MIN elements. */
#include <string.h>

#include "parallel.h"
#include "tracegrad.h"

static void roll_rows(int ndim, const i64 *shape, const i64 *shifts, const char *x, char *out, size_t itemsize) {
    i64 width = ndim ? shape[ndim - 1] : 1, shift = ndim ? shifts[ndim - 1] : 0, rows = 1;
    for (int d = 0; d < ndim - 1; d++) rows *= shape[d];
    if (width == 0 || rows == 0) return;
    size_t row_bytes = (size_t)width * itemsize, head = (size_t)shift * itemsize;
    #pragma omp parallel for schedule(static) if (rows > 1 && rows * width >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < rows; row++) {
        i64 source = 0, rest = row, step = 1;       /* the source row, row-major over shape[:-1] */
        for (int d = ndim - 2; d >= 0; d--) {
            i64 i = rest % shape[d];
            rest /= shape[d];
            i = i >= shifts[d] ? i - shifts[d] : i - shifts[d] + shape[d];
            source += i * step;
            step *= shape[d];
        }
        const char *from = x + (size_t)source * row_bytes;
        char *to = out + (size_t)row * row_bytes;
        memcpy(to, from + row_bytes - head, head);                  /* the last `shift` come first */
        memcpy(to + head, from, row_bytes - head);
    }
}

#define TG_ROLL(T, S) \
    void tg_roll_##S(int ndim, const i64 *shape, const i64 *shifts, const T *view, T *out) { \
        roll_rows(ndim, shape, shifts, (const char *)view, (char *)out, sizeof(T)); \
    }
TG_ROLL(uint8_t, u8)
TG_ROLL(int32_t, i32)
TG_ROLL(int64_t, i64)
TG_ROLL(float, f32)
TG_ROLL(double, f64)
