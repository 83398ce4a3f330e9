/* The math of the element-wise ops, per compute type: the helpers and MATH_* macros that
 * elementwise_t.h's formulas call. elementwise.c includes this file; the lazy backend's
 * code generator (stage3_native/lazy/codegen.py) pastes it whole into every fused kernel,
 * so a fused kernel calls the very functions the eager one does, and editing them changes
 * every fused kernel's hash. */
#ifndef TG_ELEMENTWISE_MATH_H
#define TG_ELEMENTWISE_MATH_H
#include <math.h>
#include <stdint.h>
#include "vmath.h"

/* ---- the math of each op, per compute type ---------------------------------------------
 * _Generic (C11) picks a function by the argument's type, as <tgmath.h> does: float gets
 * the vectorizable versions of vmath.h or libm's float functions, double libm's, and the
 * int64 arithmetic of integer tensors exact integer versions (stage2 converts integer
 * tensors to float before the ops that need it: exp, log, true division). */
static inline int64_t div_int(int64_t a, int64_t b) { return b ? a / b : 0; }
static inline int64_t abs_int(int64_t x) { return x < 0 ? -x : x; }
static inline int64_t pow_int(int64_t a, int64_t b) {        /* by squaring; b < 0: 0 */
    int64_t result = 1;
    if (b < 0) return a == 1 ? 1 : 0;
    for (; b; b >>= 1, a *= a) if (b & 1) result *= a;
    return result;
}
static inline double sigmoid(double x) {
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
/* exact GELU, x * Phi(x) (PyTorch's default); float tensors use vmath.h's tg_geluf */
static inline double gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static inline double gelu_grad(double x) {
    return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
}

/* GPT-2's tanh GELU as x * sigmoid(z), z = 2 sqrt(2/pi) (x + 0.044715 x^3) (why: vmath.h's
 * tg_gelu_tanhf), and its derivative s + x s (1 - s) dz/dx with s (1 - s) = e / (1 + e)^2 */
static inline double gelu_tanh_z(double x) { return 2.0 * sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }
static inline double gelu_tanh(double x) { return x * sigmoid(gelu_tanh_z(x)); }
static inline double gelu_tanh_grad(double x) {
    double z = gelu_tanh_z(x), e = exp(-fabs(z)), a = 1.0 / (1.0 + e);
    double s = z >= 0 ? a : e * a;
    return s + x * (e * a * a) * 2.0 * sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
}

#define MATH_EXP(x) _Generic((x), float: tg_expf, default: exp)(x)
#define MATH_LOG(x) _Generic((x), float: logf, default: log)(x)
#define MATH_SQRT(x) _Generic((x), float: sqrtf, default: sqrt)(x)
#define MATH_ABS(x) _Generic((x), float: fabsf, double: fabs, default: abs_int)(x)
#define MATH_SIGMOID(x) _Generic((x), float: tg_sigmoidf, default: sigmoid)(x)
#define MATH_TANH(x) _Generic((x), float: tg_tanhf, default: tanh)(x)
#define MATH_GELU(x) _Generic((x), float: tg_geluf, default: gelu)(x)
#define MATH_GELU_GRAD(x) _Generic((x), float: tg_gelu_gradf, default: gelu_grad)(x)
#define MATH_GELU_TANH(x) _Generic((x), float: tg_gelu_tanhf, default: gelu_tanh)(x)
#define MATH_GELU_TANH_GRAD(x) _Generic((x), float: tg_gelu_tanh_gradf, default: gelu_tanh_grad)(x)
#define MATH_DIV(a, b) _Generic((a), int64_t: div_int(a, b), default: (a) / (b))
#define MATH_POW(a, b) _Generic((a), float: powf, double: pow, default: pow_int)(a, b)

#endif
