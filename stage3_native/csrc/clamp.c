/* Clamp between two numbers, PyTorch's torch.clamp with number bounds (stage2_tensor/clamp.py;
 * the declaration, kernels/pointwise.py, says what the arguments are): raise to low, then
 * lower to high, in one pass over contiguous x. A NaN compares false both times and stays;
 * a missing bound arrives as an infinity and changes nothing. */
#include "parallel.h"
#include "simd.h"
#include "tracegrad.h"

#define TG_CLAMP(T, S) \
    TG_SIMD(void, clamp_range_##S, (i64 lo, i64 hi, T low, T high, const T *x, T *out), \
            (lo, hi, low, high, x, out)) { \
        for (i64 i = lo; i < hi; i++) { \
            T v = x[i]; \
            v = v < low ? low : v; \
            out[i] = v > high ? high : v; \
        } \
    } \
    void tg_clamp_##S(i64 n, double low, double high, const T *view, T *out) { \
        _Pragma("omp parallel if (n >= TG_PARALLEL_MIN)") \
        { \
            i64 lo, hi; \
            tg_thread_range(n, 64 / (i64)sizeof(T), &lo, &hi); \
            if (lo < hi) clamp_range_##S(lo, hi, (T)low, (T)high, view, out); \
        } \
    }
TG_CLAMP(float, f32)
TG_CLAMP(double, f64)
