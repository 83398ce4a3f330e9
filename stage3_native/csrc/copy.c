/* Strided copy with dtype conversion: contiguous(), casts, and writes into views. */
#include <string.h>
#include "strided.h"

static const int itemsize[] = {1, 4, 8, 4, 8};

static double load(const void *x, int dtype, i64 i) {
    switch (dtype) {
    case 0: return ((const uint8_t *)x)[i];
    case 1: return ((const int32_t *)x)[i];
    case 2: return (double)((const int64_t *)x)[i];
    case 3: return ((const float *)x)[i];
    default: return ((const double *)x)[i];
    }
}

static void store(void *out, int dtype, i64 i, double v) {
    switch (dtype) {
    case 0: ((uint8_t *)out)[i] = v != 0; break;
    case 1: ((int32_t *)out)[i] = (int32_t)v; break;
    case 2: ((int64_t *)out)[i] = (int64_t)v; break;
    case 3: ((float *)out)[i] = (float)v; break;
    default: ((double *)out)[i] = v;
    }
}

void tg_copy(int ndim, const i64 *shape, const void *x, int x_dtype, const i64 *xs, i64 xo,
             void *out, int out_dtype, const i64 *os, i64 oo) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, px = xo, po = oo;
    if (x_dtype == out_dtype && tg_is_contiguous(ndim, shape, xs) && tg_is_contiguous(ndim, shape, os)) {
        int size = itemsize[x_dtype];                /* same layout, same type: one memcpy */
        memcpy((char *)out + oo * size, (const char *)x + xo * size, n * size);
        return;
    }
    if (x_dtype == 2 && out_dtype == 2) {            /* int64 -> int64 exactly, not via double */
        for (i64 i = 0; i < n; i++) {
            ((int64_t *)out)[po] = ((const int64_t *)x)[px];
            tg_step(ndim, shape, idx, &px, xs, &po, os, 0, 0);
        }
        return;
    }
    for (i64 i = 0; i < n; i++) {
        store(out, out_dtype, po, load(x, x_dtype, px));
        tg_step(ndim, shape, idx, &px, xs, &po, os, 0, 0);
    }
}

/* n copies of a value, stored as the output's dtype (tensor factories: ones, full); integer
 * dtypes take int_value, which holds every int64 exactly (a double does not beyond 2^53). */
void tg_fill(void *out, int dtype, i64 n, double value, i64 int_value) {
    switch (dtype) {
    case 0: memset(out, int_value != 0, n); break;
    case 1: for (i64 i = 0; i < n; i++) ((int32_t *)out)[i] = (int32_t)int_value; break;
    case 2: for (i64 i = 0; i < n; i++) ((int64_t *)out)[i] = int_value; break;
    case 3: for (i64 i = 0; i < n; i++) ((float *)out)[i] = (float)value; break;
    default: for (i64 i = 0; i < n; i++) ((double *)out)[i] = value;
    }
}
