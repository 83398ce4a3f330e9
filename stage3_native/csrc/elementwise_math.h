/* The per-element formulas of the element-wise ops, written once for every kernel that
 * computes them: the C kernels (elementwise_t.h), the CUDA kernels (cuda/elementwise.cu)
 * and the lazy backend's fused kernels (stage3_native/lazy/codegen.py pastes this file whole
 * and calls the functions by name, so a fused kernel calls the very functions the eager one
 * does, and editing them changes every fused kernel's hash).
 *
 * Every op declared in stage2_tensor/ops.py, primitive or fused kernel (the GELUs), has three
 * functions here, named after it:
 * tg_NAME_f32 computes in float (float32 tensors), tg_NAME_f64 in double (float64) and
 * tg_NAME_i64 in int64_t (every integer dtype and bool). The kernels find them by that name
 * alone (TG_BY_TYPE below; the generated ops_generated.h lists the ops), so this file is the
 * only native one an op adds to, and an op declared without its functions is a compile
 * error naming them ("'tg_NAME_f32' undeclared"). stage2 converts integer tensors to float
 * before the float_only ops (exp, log, true division); the other real functions of an
 * integer compute in double (TG_REAL_ON_INTEGERS). */
#ifndef TG_ELEMENTWISE_MATH_H
#define TG_ELEMENTWISE_MATH_H
#include <math.h>
#include <stdint.h>
#include "tg_fn.h"

/* ---- the elementary float functions: the only part that differs between the kernels -----
 * e^x, tanh and Phi(x) (the standard normal distribution function, erfc(-x / sqrt 2) / 2):
 * the C kernels use vmath.h's, straight-line code that a loop vectorizes; CUDA's math
 * library has its own, fast on the GPU. */
#ifdef TG_CUDA_SOURCE
TG_FN float tg_exp_f32(float x) { return expf(x); }
TG_FN float tg_tanh_f32(float x) { return tanhf(x); }
TG_FN float tg_phi_f32(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
#else
#include "vmath.h"
TG_FN float tg_exp_f32(float x) { return tg_expf(x); }
TG_FN float tg_tanh_f32(float x) { return tg_tanhf(x); }
TG_FN float tg_phi_f32(float x) { return tg_phif(x); }
#endif

/* ---- writing an op's three functions --------------------------------------------------
 * TG_ANY_TYPE: one expression of x (and y) that means the same in every type.
 * TG_REAL_ON_INTEGERS: an integer's value of a real function, computed in double. */
#define TG_ANY_TYPE_1(name, expr) \
    TG_FN float tg_##name##_f32(float x) { return expr; } \
    TG_FN double tg_##name##_f64(double x) { return expr; } \
    TG_FN int64_t tg_##name##_i64(int64_t x) { return expr; }
#define TG_ANY_TYPE_2(name, expr) \
    TG_FN float tg_##name##_f32(float x, float y) { return expr; } \
    TG_FN double tg_##name##_f64(double x, double y) { return expr; } \
    TG_FN int64_t tg_##name##_i64(int64_t x, int64_t y) { return expr; }
#define TG_COMPARISON(name, expr) \
    TG_FN int tg_##name##_f32(float x, float y) { return expr; } \
    TG_FN int tg_##name##_f64(double x, double y) { return expr; } \
    TG_FN int tg_##name##_i64(int64_t x, int64_t y) { return expr; }
#define TG_REAL_ON_INTEGERS(name) \
    TG_FN int64_t tg_##name##_i64(int64_t x) { return (int64_t)tg_##name##_f64((double)x); }

/* ---- operators ------------------------------------------------------------------------- */
TG_ANY_TYPE_1(neg, -x)
TG_ANY_TYPE_1(relu, x > 0 || x != x ? x : 0)            /* nan stays nan */
TG_ANY_TYPE_1(sign, (x > 0) - (x < 0))
TG_ANY_TYPE_2(add, x + y)
TG_ANY_TYPE_2(sub, x - y)
TG_ANY_TYPE_2(mul, x * y)
TG_ANY_TYPE_2(maximum, y > x || y != y ? y : x)         /* a nan on either side wins, as in PyTorch */
TG_ANY_TYPE_2(minimum, y < x || y != y ? y : x)
TG_ANY_TYPE_2(relu_backward, y > 0 ? x : 0)             /* the upstream x where the input y > 0 */
TG_COMPARISON(eq, x == y)
TG_COMPARISON(ne, x != y)
TG_COMPARISON(lt, x < y)
TG_COMPARISON(le, x <= y)
TG_COMPARISON(gt, x > y)
TG_COMPARISON(ge, x >= y)

/* ---- libm's functions ------------------------------------------------------------------ */
TG_FN double tg_exp_f64(double x) { return exp(x); }
TG_FN double tg_tanh_f64(double x) { return tanh(x); }
TG_FN float tg_log_f32(float x) { return logf(x); }       /* log(0) = -inf, log(<0) = nan, as numpy */
TG_FN double tg_log_f64(double x) { return log(x); }
TG_FN float tg_sqrt_f32(float x) { return sqrtf(x); }
TG_FN double tg_sqrt_f64(double x) { return sqrt(x); }
TG_FN float tg_abs_f32(float x) { return fabsf(x); }
TG_FN double tg_abs_f64(double x) { return fabs(x); }
TG_FN int64_t tg_abs_i64(int64_t x) { return x < 0 ? -x : x; }
TG_FN float tg_erf_f32(float x) { return erff(x); }
TG_FN double tg_erf_f64(double x) { return erf(x); }
TG_FN float tg_log1p_f32(float x) { return log1pf(x); }
TG_FN double tg_log1p_f64(double x) { return log1p(x); }
TG_FN float tg_expm1_f32(float x) { return expm1f(x); }
TG_FN double tg_expm1_f64(double x) { return expm1(x); }
TG_FN float tg_sin_f32(float x) { return sinf(x); }
TG_FN double tg_sin_f64(double x) { return sin(x); }
TG_FN float tg_cos_f32(float x) { return cosf(x); }
TG_FN double tg_cos_f64(double x) { return cos(x); }
TG_REAL_ON_INTEGERS(exp) TG_REAL_ON_INTEGERS(tanh) TG_REAL_ON_INTEGERS(log) TG_REAL_ON_INTEGERS(sqrt)
TG_REAL_ON_INTEGERS(erf) TG_REAL_ON_INTEGERS(log1p) TG_REAL_ON_INTEGERS(expm1)
TG_REAL_ON_INTEGERS(sin) TG_REAL_ON_INTEGERS(cos)

/* ---- rounding to an integer: exact in every type; an integer is itself. rint rounds halves
 * to even in the default rounding mode, as PyTorch's round ------------------------------- */
#define TG_INTEGRAL(name, libm) \
    TG_FN float tg_##name##_f32(float x) { return libm##f(x); } \
    TG_FN double tg_##name##_f64(double x) { return libm(x); } \
    TG_FN int64_t tg_##name##_i64(int64_t x) { return x; }
TG_INTEGRAL(floor, floor) TG_INTEGRAL(ceil, ceil) TG_INTEGRAL(trunc, trunc) TG_INTEGRAL(round, rint)

/* ---- division and powers --------------------------------------------------------------- */
TG_FN float tg_div_f32(float a, float b) { return a / b; }
TG_FN double tg_div_f64(double a, double b) { return a / b; }
TG_FN int64_t tg_div_i64(int64_t a, int64_t b) { return b ? a / b : 0; }
TG_FN float tg_pow_f32(float a, float b) { return powf(a, b); }
TG_FN double tg_pow_f64(double a, double b) { return pow(a, b); }
/* Integer powers by squaring, in uint64_t: a product too large for int64 wraps around (the
 * result modulo 2^64, as PyTorch's and numpy's), where a signed one would be undefined
 * behaviour, as would the square left over after the last bit, never used. b < 0: 0. */
TG_FN int64_t tg_pow_i64(int64_t a, int64_t b) {
    uint64_t result = 1, x = (uint64_t)a;
    if (b < 0) return a == 1 ? 1 : 0;
    for (; b; b >>= 1, x *= x) if (b & 1) result *= x;
    return (int64_t)result;
}
/* d(x^y)/dx, Pow's local gradient (x^0 is the constant 1), the product in double (int64_t
 * for integers): one rounding, as pow's */
TG_FN float tg_pow_grad_f32(float x, float y) { return y == 0 ? 0 : (float)((double)y * tg_pow_f64(x, (double)y - 1)); }
TG_FN double tg_pow_grad_f64(double x, double y) { return y == 0 ? 0 : y * tg_pow_f64(x, y - 1); }
TG_FN int64_t tg_pow_grad_i64(int64_t x, int64_t y) {
    return y == 0 ? 0 : (int64_t)((uint64_t)y * (uint64_t)tg_pow_i64(x, y - 1));
}

/* ---- float32 ---------------------------------------------------------------------------
 * 1 / (1 + e^-x), from e = e^-|x| <= 1 so nothing overflows: for x < 0 the same value is
 * e / (1 + e), which keeps full relative accuracy as sigmoid(x) goes to 0. */
TG_FN float tg_sigmoid_f32(float x) {
    float e = tg_exp_f32(x < 0 ? x : -x);
    float s = 1.0f / (1.0f + e);
    return x >= 0 ? s : e * s;
}
/* The fused GELU kernels (ops.py's FUSED): exact GELU, PyTorch's default, and its derivative
 * Phi(x) + x phi(x) */
TG_FN float tg_gelu_f32(float x) { return x * tg_phi_f32(x); }
TG_FN float tg_gelu_grad_f32(float x) {
    return tg_phi_f32(x) + x * 0.39894228040143268f * tg_exp_f32(-0.5f * x * x);
}
/* GPT-2's GELU, PyTorch's approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * As x * sigmoid(z) with z = 2 sqrt(2/pi) (x + 0.044715 x^3), the same number since
 * 0.5 (1 + tanh(u)) = sigmoid(2u): for x < 0, 1 + tanh(u) cancels and sigmoid does not. */
#define TG_GELU_TANH_K 1.5957691216057308f        /* 2 sqrt(2/pi) */
#define TG_GELU_TANH_C 0.044715f
TG_FN float tg_gelu_tanh_f32(float x) {
    return x * tg_sigmoid_f32(TG_GELU_TANH_K * (x + TG_GELU_TANH_C * x * x * x));
}
/* Its derivative s + x s (1 - s) dz/dx, s = sigmoid(z). s (1 - s) = e / (1 + e)^2 with
 * e = e^-|z|, so neither factor is 1 - (a number near 1), and one exp gives both. */
TG_FN float tg_gelu_tanh_grad_f32(float x) {
    float z = TG_GELU_TANH_K * (x + TG_GELU_TANH_C * x * x * x);
    float e = tg_exp_f32(z < 0 ? z : -z);
    float a = 1.0f / (1.0f + e);
    float s = z >= 0 ? a : e * a;
    return s + x * (e * a * a) * TG_GELU_TANH_K * (1.0f + 3.0f * TG_GELU_TANH_C * x * x);
}

/* ---- float64 (libm's functions throughout) -------------------------------------------- */
TG_FN double tg_sigmoid_f64(double x) {
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
/* exact GELU, x * Phi(x), as PyTorch computes it in double */
TG_FN double tg_gelu_f64(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
TG_FN double tg_gelu_grad_f64(double x) {
    return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
}
TG_FN double tg_gelu_tanh_z_f64(double x) { return 2.0 * sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }
TG_FN double tg_gelu_tanh_f64(double x) { return x * tg_sigmoid_f64(tg_gelu_tanh_z_f64(x)); }
TG_FN double tg_gelu_tanh_grad_f64(double x) {
    double z = tg_gelu_tanh_z_f64(x), e = exp(-fabs(z)), a = 1.0 / (1.0 + e);
    double s = z >= 0 ? a : e * a;
    return s + x * (e * a * a) * 2.0 * sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
}

/* ---- softplus, log(1 + e^x), x itself above 20 as in PyTorch (stage2_tensor/ops.py) --- */
TG_FN float tg_softplus_f32(float x) { return x > 20.0f ? x : log1pf(tg_exp_f32(x)); }
TG_FN double tg_softplus_f64(double x) { return x > 20.0 ? x : log1p(exp(x)); }

/* ---- the integers' values of the real functions above -------------------------------- */
TG_REAL_ON_INTEGERS(sigmoid) TG_REAL_ON_INTEGERS(gelu) TG_REAL_ON_INTEGERS(gelu_grad)
TG_REAL_ON_INTEGERS(gelu_tanh) TG_REAL_ON_INTEGERS(gelu_tanh_grad) TG_REAL_ON_INTEGERS(softplus)

/* ---- finding an op's function by the argument's type --------------------------------------
 * TG_BY_TYPE(name, x) is tg_name_f32, _f64 or _i64, for x of type float, double or int64_t.
 * C picks with _Generic (C11), as <tgmath.h> does; C++ (the .cu kernels) overloads tg_NAME
 * instead, for every op the generated header lists (ops_generated.h, which the including
 * .cu file has included first, from its own folder). */
#ifdef __cplusplus
#define TG_OVERLOAD_1(CODE, name) \
    TG_FN float tg_##name(float x) { return tg_##name##_f32(x); } \
    TG_FN double tg_##name(double x) { return tg_##name##_f64(x); } \
    TG_FN int64_t tg_##name(int64_t x) { return tg_##name##_i64(x); }
#define TG_OVERLOAD_2(CODE, name) \
    TG_FN auto tg_##name(float x, float y) -> decltype(tg_##name##_f32(x, y)) { return tg_##name##_f32(x, y); } \
    TG_FN auto tg_##name(double x, double y) -> decltype(tg_##name##_f64(x, y)) { return tg_##name##_f64(x, y); } \
    TG_FN auto tg_##name(int64_t x, int64_t y) -> decltype(tg_##name##_i64(x, y)) { return tg_##name##_i64(x, y); }
TG_UNARY_OPS(TG_OVERLOAD_1)
TG_BINARY_OPS(TG_OVERLOAD_2)
TG_COMPARISON_OPS(TG_OVERLOAD_2)
#undef TG_OVERLOAD_1
#undef TG_OVERLOAD_2
#define TG_BY_TYPE(name, x) tg_##name
#else
#define TG_BY_TYPE(name, x) _Generic((x), float: tg_##name##_f32, double: tg_##name##_f64, default: tg_##name##_i64)
#endif
#endif
