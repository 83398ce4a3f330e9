/* Element-wise kernels for one element type T (included by elementwise.c per dtype): the
 * row kernels that every level of the hierarchy ends up calling, and the entry points.
 *
 * A row kernel handles n elements whose operands are each contiguous (step 1) or one value
 * repeated (step 0). It switches on the op once, then runs a loop whose body is one
 * formula: that is what the compiler vectorizes. The cases are written by expanding the
 * generated list of the ops declared in stage2_tensor/ops.py (TG_UNARY_OPS, ops_header.py),
 * each calling its formula in elementwise_math.h by the op's name, so nothing here names an
 * op. TG_SIMD compiles each row kernel once per instruction set (simd.h). */

/* The loops live in the TG_SIMD function itself: a helper it called would be compiled
 * once, for the baseline instruction set, unless inlined. */
TG_SIMD(void, FN(unary_row), (int op, i64 n, const void *const *in, const int *step, void *out_),
        (op, n, in, step, out_)) {
    const T *x = in[0];
    T *restrict out = out_;
    i64 len = step[0] ? n : 1;                     /* one value repeated: computed once */
#define UNARY(CODE, name) \
    case CODE: for (i64 i = 0; i < len; i++) { C v = (C)x[i]; out[i] = (T)TG_BY_TYPE(name, v)(v); } break;
#if TG_FLOATING
    switch ((enum tg_unary_op)op) { TG_UNARY_OPS(UNARY) }
#else   /* stage2 converts an integer tensor to float before a float_only op: no loops for those */
#define NEVER(CODE, name) case CODE:
    switch ((enum tg_unary_op)op) { TG_UNARY_INTEGER_OPS(UNARY) TG_UNARY_FLOAT_ONLY_OPS(NEVER) break; }
#undef NEVER
#endif
#undef UNARY
    for (i64 i = len; i < n; i++) out[i] = out[0];
}

TG_SIMD(void, FN(binary_row), (int op, i64 n, const void *const *in, const int *step, void *out_),
        (op, n, in, step, out_)) {
    const T *a = in[0], *b = in[1];
    T *restrict out = out_;
    int sa = step[0], sb = step[1];
    i64 len = sa || sb ? n : 1;                    /* both one value: computed once */
    if (len == 1) sa = sb = 1;
#define BINARY(CODE, name) \
    case CODE: \
        if (sa && sb) for (i64 i = 0; i < len; i++) { C x = (C)a[i], y = (C)b[i]; out[i] = (T)TG_BY_TYPE(name, x)(x, y); } \
        else if (sa) { C y = (C)b[0]; for (i64 i = 0; i < len; i++) { C x = (C)a[i]; out[i] = (T)TG_BY_TYPE(name, x)(x, y); } } \
        else { C x = (C)a[0]; for (i64 i = 0; i < len; i++) { C y = (C)b[i]; out[i] = (T)TG_BY_TYPE(name, x)(x, y); } } \
        break;
    switch ((enum tg_binary_op)op) { TG_BINARY_OPS(BINARY) }
#undef BINARY
    for (i64 i = len; i < n; i++) out[i] = out[0];
}

/* comparisons, in the compute type (exact for every dtype); out is bool (uint8) */
TG_SIMD(void, FN(compare_row), (int op, i64 n, const void *const *in, const int *step, void *out_),
        (op, n, in, step, out_)) {
    const T *a = in[0], *b = in[1];
    uint8_t *restrict out = out_;
    int sa = step[0], sb = step[1];
    /* each layout its own loop, as binary_row's: a loop with a runtime step is not vectorized */
#define COMPARE(CODE, name) \
    case CODE: \
        if (sa && sb) for (i64 i = 0; i < n; i++) { C x = (C)a[i], y = (C)b[i]; out[i] = TG_BY_TYPE(name, x)(x, y); } \
        else if (sa) { C y = (C)b[0]; for (i64 i = 0; i < n; i++) { C x = (C)a[i]; out[i] = TG_BY_TYPE(name, x)(x, y); } } \
        else if (sb) { C x = (C)a[0]; for (i64 i = 0; i < n; i++) { C y = (C)b[i]; out[i] = TG_BY_TYPE(name, x)(x, y); } } \
        else { C x = (C)a[0], y = (C)b[0]; uint8_t v = TG_BY_TYPE(name, x)(x, y); for (i64 i = 0; i < n; i++) out[i] = v; } \
        break;
    switch ((enum tg_comparison_op)op) { TG_COMPARISON_OPS(COMPARE) }
#undef COMPARE
}

/* cond ? a : b, in[0] the bool condition */
TG_SIMD(void, FN(where_row), (int op, i64 n, const void *const *in, const int *step, void *out_),
        (op, n, in, step, out_)) {
    const uint8_t *c = in[0];
    const T *a = in[1], *b = in[2];
    T *restrict out = out_;
    i64 sc = step[0], sa = step[1], sb = step[2];
    (void)op;
    /* both sides read before the choice: `c[i] ? a[i] : b[i]` reads only one, which the
     * compiler keeps with masked loads, slower than two loads and a blend */
    if (sc && sa && sb) for (i64 i = 0; i < n; i++) { T x = a[i], y = b[i]; out[i] = c[i] ? x : y; }
    else if (sc && sa) { T y = b[0]; for (i64 i = 0; i < n; i++) { T x = a[i]; out[i] = c[i] ? x : y; } }
    else if (sc && sb) { T x = a[0]; for (i64 i = 0; i < n; i++) { T y = b[i]; out[i] = c[i] ? x : y; } }
    else for (i64 i = 0; i < n; i++) out[i] = c[i * sc] ? a[i * sa] : b[i * sb];
}

void FN(tg_unary)(int op, int ndim, const i64 *shape, const T *x, const i64 *xs, i64 xo, T *out) {
    elementwise(op, ndim, shape, 1, (const void *[]){x + xo}, (const i64 *[]){xs},
                (int[]){sizeof(T)}, out, sizeof(T), FN(unary_row));
}

void FN(tg_binary)(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao,
                   const T *b, const i64 *bs, i64 bo, T *out) {
    elementwise(op, ndim, shape, 2, (const void *[]){a + ao, b + bo}, (const i64 *[]){as, bs},
                (int[]){sizeof(T), sizeof(T)}, out, sizeof(T), FN(binary_row));
}

void FN(tg_compare)(int op, int ndim, const i64 *shape, const T *a, const i64 *as, i64 ao,
                    const T *b, const i64 *bs, i64 bo, uint8_t *out) {
    elementwise(op, ndim, shape, 2, (const void *[]){a + ao, b + bo}, (const i64 *[]){as, bs},
                (int[]){sizeof(T), sizeof(T)}, out, 1, FN(compare_row));
}

void FN(tg_where)(int ndim, const i64 *shape, const uint8_t *c, const i64 *cs, i64 co,
                  const T *a, const i64 *as, i64 ao, const T *b, const i64 *bs, i64 bo, T *out) {
    elementwise(0, ndim, shape, 3, (const void *[]){c + co, a + ao, b + bo}, (const i64 *[]){cs, as, bs},
                (int[]){1, sizeof(T), sizeof(T)}, out, sizeof(T), FN(where_row));
}
