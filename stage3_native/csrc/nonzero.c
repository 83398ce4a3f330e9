/* nonzero: the coordinates of a tensor's nonzero elements (stage2_tensor/advanced_index.py:
 * x[mask] reads with them; the declaration is kernels/indexing.py's).
 *
 * x is contiguous, of `shape`. One pass in row-major order writes, for each nonzero element
 * (a NaN is nonzero), its ndim coordinates as a row of out (count, ndim), stopping after
 * `count` rows: the caller counted the nonzero elements first (a sum), as the count decides
 * the output's shape. Rows a smaller count of them would leave are zeros. One thread: each
 * row's place depends on every element before it. */
#include <string.h>

#include "tracegrad.h"

#define TG_NONZERO(T, S) \
    void tg_nonzero_##S(int ndim, const i64 *shape, i64 count, const T *view, i64 *out) { \
        i64 n = 1, found = 0; \
        for (int d = 0; d < ndim; d++) n *= shape[d]; \
        for (i64 i = 0; i < n && found < count; i++) { \
            if (view[i] == 0) continue; \
            for (i64 rest = i, d = ndim - 1; d >= 0; d--) { \
                out[found * ndim + d] = rest % shape[d]; \
                rest /= shape[d]; \
            } \
            found++; \
        } \
        if (found < count) memset(out + found * ndim, 0, (size_t)((count - found) * ndim) * sizeof(i64)); \
    }
TG_NONZERO(uint8_t, u8)
TG_NONZERO(int32_t, i32)
TG_NONZERO(int64_t, i64)
TG_NONZERO(float, f32)
TG_NONZERO(double, f64)
