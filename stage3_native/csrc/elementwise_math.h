/* The per-element formulas of the element-wise ops, per compute type, written once for every
 * kernel that computes them: the C kernels (elementwise_t.h's switches, through the MATH_*
 * macros below), the CUDA kernels (cuda/elementwise.cu, through the overloads below) and the
 * lazy backend's fused kernels (stage3_native/lazy/codegen.py pastes this file whole and
 * calls the functions by name, so a fused kernel calls the very functions the eager one
 * does, and editing them changes every fused kernel's hash).
 *
 * float32 tensors compute in float (the _f32 functions), float64 in double (_f64), and the
 * int64 arithmetic of integer tensors in exact integer versions (_i64); stage2 converts
 * integer tensors to float before the ops that need it (exp, log, true division), and the
 * other real functions of an integer compute in double. */
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
TG_FN double tg_exp_f64(double x) { return exp(x); }
TG_FN double tg_tanh_f64(double x) { return tanh(x); }
TG_FN float tg_log_f32(float x) { return logf(x); }
TG_FN double tg_log_f64(double x) { return log(x); }
TG_FN float tg_sqrt_f32(float x) { return sqrtf(x); }
TG_FN double tg_sqrt_f64(double x) { return sqrt(x); }
TG_FN float tg_abs_f32(float x) { return fabsf(x); }
TG_FN double tg_abs_f64(double x) { return fabs(x); }
TG_FN float tg_pow_f32(float a, float b) { return powf(a, b); }
TG_FN double tg_pow_f64(double a, double b) { return pow(a, b); }

/* ---- integers ------------------------------------------------------------------------- */
TG_FN int64_t tg_div_i64(int64_t a, int64_t b) { return b ? a / b : 0; }
TG_FN int64_t tg_abs_i64(int64_t x) { return x < 0 ? -x : x; }
TG_FN int64_t tg_pow_i64(int64_t a, int64_t b) {        /* by squaring; b < 0: 0 */
    int64_t result = 1;
    if (b < 0) return a == 1 ? 1 : 0;
    for (; b; b >>= 1, a *= a) if (b & 1) result *= a;
    return result;
}

/* ---- float32 ---------------------------------------------------------------------------
 * 1 / (1 + e^-x), from e = e^-|x| <= 1 so nothing overflows: for x < 0 the same value is
 * e / (1 + e), which keeps full relative accuracy as sigmoid(x) goes to 0. */
TG_FN float tg_sigmoid_f32(float x) {
    float e = tg_exp_f32(x < 0 ? x : -x);
    float s = 1.0f / (1.0f + e);
    return x >= 0 ? s : e * s;
}
/* GELU (exact, PyTorch's default) and its derivative Phi(x) + x phi(x) */
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

/* ---- by the argument's type ------------------------------------------------------------
 * C picks a function with _Generic (C11), as <tgmath.h> does; an int64 argument of a real
 * function (sigmoid of an integer tensor) goes to the double one. C++ (the .cu kernels)
 * overloads the same names instead. */
#ifdef __cplusplus
#define TG_REAL_BY_TYPE(name) \
    TG_FN float tg_##name(float x) { return tg_##name##_f32(x); } \
    TG_FN double tg_##name(double x) { return tg_##name##_f64(x); }
TG_REAL_BY_TYPE(exp) TG_REAL_BY_TYPE(log) TG_REAL_BY_TYPE(sqrt) TG_REAL_BY_TYPE(tanh)
TG_REAL_BY_TYPE(sigmoid) TG_REAL_BY_TYPE(gelu) TG_REAL_BY_TYPE(gelu_grad)
TG_REAL_BY_TYPE(gelu_tanh) TG_REAL_BY_TYPE(gelu_tanh_grad)
#undef TG_REAL_BY_TYPE
TG_FN float tg_abs(float x) { return tg_abs_f32(x); }
TG_FN double tg_abs(double x) { return tg_abs_f64(x); }
TG_FN int64_t tg_abs(int64_t x) { return tg_abs_i64(x); }
TG_FN float tg_div(float a, float b) { return a / b; }
TG_FN double tg_div(double a, double b) { return a / b; }
TG_FN int64_t tg_div(int64_t a, int64_t b) { return tg_div_i64(a, b); }
TG_FN float tg_pow(float a, float b) { return tg_pow_f32(a, b); }
TG_FN double tg_pow(double a, double b) { return tg_pow_f64(a, b); }
TG_FN int64_t tg_pow(int64_t a, int64_t b) { return tg_pow_i64(a, b); }
#else
#define MATH_EXP(x) _Generic((x), float: tg_exp_f32, default: tg_exp_f64)(x)
#define MATH_LOG(x) _Generic((x), float: tg_log_f32, default: tg_log_f64)(x)
#define MATH_SQRT(x) _Generic((x), float: tg_sqrt_f32, default: tg_sqrt_f64)(x)
#define MATH_ABS(x) _Generic((x), float: tg_abs_f32, double: tg_abs_f64, default: tg_abs_i64)(x)
#define MATH_SIGMOID(x) _Generic((x), float: tg_sigmoid_f32, default: tg_sigmoid_f64)(x)
#define MATH_TANH(x) _Generic((x), float: tg_tanh_f32, default: tg_tanh_f64)(x)
#define MATH_GELU(x) _Generic((x), float: tg_gelu_f32, default: tg_gelu_f64)(x)
#define MATH_GELU_GRAD(x) _Generic((x), float: tg_gelu_grad_f32, default: tg_gelu_grad_f64)(x)
#define MATH_GELU_TANH(x) _Generic((x), float: tg_gelu_tanh_f32, default: tg_gelu_tanh_f64)(x)
#define MATH_GELU_TANH_GRAD(x) _Generic((x), float: tg_gelu_tanh_grad_f32, default: tg_gelu_tanh_grad_f64)(x)
#define MATH_DIV(a, b) _Generic((a), int64_t: tg_div_i64(a, b), default: (a) / (b))
#define MATH_POW(a, b) _Generic((a), float: tg_pow_f32, double: tg_pow_f64, default: tg_pow_i64)(a, b)
#endif
#endif
