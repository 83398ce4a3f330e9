/* Triangle: tril and triu, PyTorch's torch.tril and torch.triu, and so their gradients
 * (stage2_tensor/masks.py; the declaration, kernels/indexing.py, says what the arguments are).
 *
 * x and out are contiguous (batch, rows, cols). Element (i, j) lies on diagonal j - i; tril
 * keeps those with j - i <= diagonal, a prefix of each row (j < i + diagonal + 1), and triu
 * those with j - i >= diagonal, a suffix (j >= i + diagonal). So each row is one copy and one
 * fill of zeros, whatever the dtype (zero is all bits zero in each), split among threads by
 * rows above TG_PARALLEL_MIN elements. */
#include <string.h>

#include "parallel.h"
#include "tracegrad.h"

static i64 clamp_to(i64 v, i64 hi) { return v < 0 ? 0 : v > hi ? hi : v; }

static void triangle_rows(i64 batch, i64 rows, i64 cols, i64 diagonal, int upper, const char *x, char *out,
                          size_t itemsize) {
    i64 n = batch * rows;
    #pragma omp parallel for schedule(static) if (n * cols >= TG_PARALLEL_MIN)
    for (i64 r = 0; r < n; r++) {
        i64 i = r % rows;
        /* the kept columns are [lo, hi) */
        i64 lo = upper ? clamp_to(i + diagonal, cols) : 0, hi = upper ? cols : clamp_to(i + diagonal + 1, cols);
        size_t row = (size_t)r * (size_t)cols * itemsize;
        memset(out + row, 0, (size_t)lo * itemsize);
        memcpy(out + row + (size_t)lo * itemsize, x + row + (size_t)lo * itemsize, (size_t)(hi - lo) * itemsize);
        memset(out + row + (size_t)hi * itemsize, 0, (size_t)(cols - hi) * itemsize);
    }
}

#define TG_TRIANGLE(T, S) \
    void tg_triangle_##S(i64 batch, i64 rows, i64 cols, i64 diagonal, int upper, const T *view, T *out) { \
        triangle_rows(batch, rows, cols, diagonal, upper, (const char *)view, (char *)out, sizeof(T)); \
    }
TG_TRIANGLE(uint8_t, u8)
TG_TRIANGLE(int32_t, i32)
TG_TRIANGLE(int64_t, i64)
TG_TRIANGLE(float, f32)
TG_TRIANGLE(double, f64)
