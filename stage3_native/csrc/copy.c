/* Strided copy with dtype conversion: contiguous(), casts, and writes into views.
 * float16 and bfloat16 (codes 5, 6) are read through float32 and stored from it (half.h);
 * a contiguous float32 <-> half copy runs half.c's bulk conversion, on the CPU's own
 * instructions where it has them. Between integer dtypes (int32, int64 and the small ints
 * uint8, int8, int16: codes 1, 2, 7, 8, 9) a copy goes through int64, exactly, and keeps
 * the low bits where the target is narrower (two's complement wraps, as PyTorch's casts). */
#include <string.h>
#include "half.h"
#include "strided.h"

static const int itemsize[] = {1, 4, 8, 4, 8, 2, 2, 1, 1, 2};

static int is_half(int dtype) { return dtype == 5 || dtype == 6; }
static int is_int(int dtype) { return dtype == 1 || dtype == 2 || dtype >= 7; }

static int64_t load_int(const void *x, int dtype, i64 i) {
    switch (dtype) {
    case 1: return ((const int32_t *)x)[i];
    case 7: return ((const uint8_t *)x)[i];
    case 8: return ((const int8_t *)x)[i];
    case 9: return ((const int16_t *)x)[i];
    default: return ((const int64_t *)x)[i];
    }
}

/* the low bits, through the unsigned type of the width: defined for every value */
static void store_int(void *out, int dtype, i64 i, int64_t v) {
    switch (dtype) {
    case 1: ((int32_t *)out)[i] = (int32_t)(uint32_t)v; break;
    case 7: ((uint8_t *)out)[i] = (uint8_t)v; break;
    case 8: ((int8_t *)out)[i] = (int8_t)(uint8_t)v; break;
    case 9: ((int16_t *)out)[i] = (int16_t)(uint16_t)v; break;
    default: ((int64_t *)out)[i] = v;
    }
}

static double load(const void *x, int dtype, i64 i) {
    switch (dtype) {
    case 0: return ((const uint8_t *)x)[i];
    case 1: return ((const int32_t *)x)[i];
    case 2: return (double)((const int64_t *)x)[i];
    case 3: return ((const float *)x)[i];
    case 5: return tg_f16_to_f32(((const uint16_t *)x)[i]);
    case 6: return tg_bf16_to_f32(((const uint16_t *)x)[i]);
    case 7: case 8: case 9: return (double)load_int(x, dtype, i);
    default: return ((const double *)x)[i];
    }
}

static void store(void *out, int dtype, i64 i, double v) {
    switch (dtype) {
    case 0: ((uint8_t *)out)[i] = v != 0; break;
    case 1: ((int32_t *)out)[i] = (int32_t)v; break;
    case 2: ((int64_t *)out)[i] = (int64_t)v; break;
    case 3: ((float *)out)[i] = (float)v; break;
    /* through float32, as PyTorch converts a double to a half */
    case 5: ((uint16_t *)out)[i] = tg_f32_to_f16((float)v); break;
    case 6: ((uint16_t *)out)[i] = tg_f32_to_bf16((float)v); break;
    case 7: case 8: case 9: store_int(out, dtype, i, (int64_t)v); break;
    default: ((double *)out)[i] = v;
    }
}

/* A same-type copy whose rows are contiguous in both views (a slice of rows read, a write
 * into one: a convolution's band of rows, its chunk written into the output): one memcpy per
 * row, the dimensions merged first so that rows are as long as they can be. Returns 0
 * where the innermost stride of either is not 1 (the element loop then does it). */
static int copy_rows(int ndim, const i64 *shape, const char *x, const i64 *xs, i64 xo,
                     char *out, const i64 *os, i64 oo, int size) {
    i64 sh[TG_MAX_DIMS], sx[TG_MAX_DIMS], so[TG_MAX_DIMS], idx[TG_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++) {
        sh[d] = shape[d];
        sx[d] = xs[d];
        so[d] = os[d];
    }
    i64 *strides[2] = {sx, so};
    int kept = tg_collapse(ndim, sh, 2, strides);
    if (kept == 0 || sx[kept - 1] != 1 || so[kept - 1] != 1) return 0;
    i64 row = sh[kept - 1], rows = tg_numel(kept - 1, sh), px = xo, po = oo;
    for (i64 r = 0; r < rows; r++) {
        memcpy(out + po * size, x + px * size, (size_t)(row * size));
        tg_step(kept - 1, sh, idx, &px, sx, &po, so, 0, 0);
    }
    return 1;
}

void tg_copy(int ndim, const i64 *shape, const void *x, int x_dtype, const i64 *xs, i64 xo,
             void *out, int out_dtype, const i64 *os, i64 oo) {
    i64 n = tg_numel(ndim, shape), idx[TG_MAX_DIMS] = {0}, px = xo, po = oo;
    if (x_dtype == out_dtype && tg_is_contiguous(ndim, shape, xs) && tg_is_contiguous(ndim, shape, os)) {
        int size = itemsize[x_dtype];                /* same layout, same type: one memcpy */
        memcpy((char *)out + oo * size, (const char *)x + xo * size, n * size);
        return;
    }
    if (tg_is_contiguous(ndim, shape, xs) && tg_is_contiguous(ndim, shape, os)) {
        if (x_dtype == 3 && is_half(out_dtype)) {    /* float32 -> half, in bulk */
            tg_half_narrow(out_dtype, n, (const float *)x + xo, (uint16_t *)out + oo);
            return;
        }
        if (is_half(x_dtype) && out_dtype == 3) {    /* half -> float32, in bulk */
            tg_half_widen(x_dtype, n, (const uint16_t *)x + xo, (float *)out + oo);
            return;
        }
    }
    if (x_dtype == out_dtype && n > 0 &&
        copy_rows(ndim, shape, (const char *)x, xs, xo, (char *)out, os, oo, itemsize[x_dtype]))
        return;
    if (x_dtype == out_dtype && is_half(x_dtype)) {  /* half -> same half: the bits */
        for (i64 i = 0; i < n; i++) {
            ((uint16_t *)out)[po] = ((const uint16_t *)x)[px];
            tg_step(ndim, shape, idx, &px, xs, &po, os, 0, 0);
        }
        return;
    }
    if (is_int(x_dtype) && is_int(out_dtype)) {      /* exactly, not via double */
        for (i64 i = 0; i < n; i++) {
            store_int(out, out_dtype, po, load_int(x, x_dtype, px));
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
    case 7: case 8: case 9: for (i64 i = 0; i < n; i++) store_int(out, dtype, i, int_value); break;
    case 3: for (i64 i = 0; i < n; i++) ((float *)out)[i] = (float)value; break;
    case 5: case 6: {
        uint16_t h = dtype == 5 ? tg_f32_to_f16((float)value) : tg_f32_to_bf16((float)value);
        for (i64 i = 0; i < n; i++) ((uint16_t *)out)[i] = h;
        break;
    }
    default: for (i64 i = 0; i < n; i++) ((double *)out)[i] = value;
    }
}
