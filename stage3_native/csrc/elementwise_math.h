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

/* ---- the rest of PyTorch's element-wise math (stage2_tensor/ops.py's MATH, where each
 * formula is also written on Python numbers and explained) ---------------------------------
 * libm's functions in float and double; the special functions in double (a float32's value
 * rounded from it), as PyTorch computes them; the bitwise and number-theoretic ops on
 * integers, nan on floats (stage2 refuses floats before a kernel runs). */
#define TG_LIBM_1(name, libm) \
    TG_FN float tg_##name##_f32(float x) { return libm##f(x); } \
    TG_FN double tg_##name##_f64(double x) { return libm(x); } \
    TG_REAL_ON_INTEGERS(name)
#define TG_LIBM_2(name, libm) \
    TG_FN float tg_##name##_f32(float x, float y) { return libm##f(x, y); } \
    TG_FN double tg_##name##_f64(double x, double y) { return libm(x, y); }
TG_LIBM_1(tan, tan) TG_LIBM_1(asin, asin) TG_LIBM_1(acos, acos) TG_LIBM_1(atan, atan)
TG_LIBM_1(sinh, sinh) TG_LIBM_1(cosh, cosh) TG_LIBM_1(asinh, asinh) TG_LIBM_1(acosh, acosh)
TG_LIBM_1(atanh, atanh) TG_LIBM_1(log2, log2) TG_LIBM_1(log10, log10) TG_LIBM_1(exp2, exp2)
TG_LIBM_1(erfc, erfc)
TG_LIBM_2(atan2, atan2) TG_LIBM_2(copysign, copysign) TG_LIBM_2(hypot, hypot) TG_LIBM_2(fmod, fmod)
/* stage2 gives atan2, copysign, hypot and polygamma floats, but their integer versions are
 * defined for every input all the same (the kernels' tests run every op on integers): a
 * double converted saturating, nan as 0, where C's cast of nan or of a number out of range
 * is undefined. fmod keeps integers (sign of a; b == 0 is refused first, and INT64_MIN % -1,
 * undefined in C, is 0) */
TG_FN int64_t tg_saturate_i64(double d) {
    return d != d ? 0 : d >= 9223372036854775807.0 ? INT64_MAX : d <= -9223372036854775807.0 ? INT64_MIN : (int64_t)d;
}
TG_FN int64_t tg_atan2_i64(int64_t a, int64_t b) { return tg_saturate_i64(atan2((double)a, (double)b)); }
TG_FN int64_t tg_copysign_i64(int64_t a, int64_t b) {
    uint64_t magnitude = a < 0 ? -(uint64_t)a : (uint64_t)a;          /* INT64_MIN's wraps, as abs's */
    return (int64_t)(b < 0 ? -magnitude : magnitude);
}
TG_FN int64_t tg_hypot_i64(int64_t a, int64_t b) { return tg_saturate_i64(hypot((double)a, (double)b)); }
TG_FN int64_t tg_fmod_i64(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }

/* log |Gamma(x)|, inf at the poles; lgamma_r on the CPU, as lgamma writes the global signgam */
TG_FN double tg_lgamma_f64(double x) {
#if defined(TG_CUDA_SOURCE) && !defined(TG_CUDA_EMULATE)
    return lgamma(x);
#else
    int sign;
    return lgamma_r(x, &sign);
#endif
}

TG_FN double tg_digamma_f64(double x) {
    const double A[] = {8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                        -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                        8.33333333333333333333e-2};
    double result = 0, y = 0;
    if (x == 0) return copysign(INFINITY, -x);
    if (x < 0) {
        if (x == floor(x)) return NAN;
        result = -M_PI / tan(M_PI * fmod(x, 1.0));
        x = 1 - x;
    }
    while (x < 10) { result -= 1 / x; x += 1; }
    if (x == 10) return result + 2.25175258906672110764;
    if (x < 1e17) {
        double z = 1 / (x * x), p = 0;
        for (int i = 0; i < 7; i++) p = p * z + A[i];
        y = z * p;
    }
    return result + log(x) - 0.5 / x - y;
}

TG_FN double tg_trigamma_f64(double x) {
    double sign = 1, result = 0;
    if (x < 0.5) {
        double s = sin(M_PI * x);
        sign = -1;
        result = -M_PI * M_PI / (s * s);
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++) { result += 1 / (x * x); x += 1; }
    double ixx = 1 / (x * x);
    result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x;
    return sign * result;
}

/* Hurwitz's zeta (Cephes'); q below -100000 (that many terms before the tail) gives nan */
TG_FN double tg_zeta_f64(double x, double q) {
    const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                        1.8152105401943546773e17, -7.1661652561756670113e18};
    const double MACHEP = 1.11022302462515654042e-16;
    if (x == 1) return INFINITY;
    if (x < 1 || q != q) return NAN;
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (x != floor(x) || q < -100000.0) return NAN;
    }
    double s = pow(q, -x), a = q, b = 0, w, k = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i += 1;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-MACHEP * s < b && b < MACHEP * s) return s;
    }
    w = a;
    s += b * w / (x - 1) - 0.5 * b;
    a = 1;
    for (int j = 0; j < 12; j++) {
        a *= x + k;
        b /= w;
        double t = a * b / A[j];
        s += t;
        if (fabs(t / s) < MACHEP) break;
        k += 1;
        a *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}

TG_FN double tg_polygamma_f64(double n, double x) {
    if (!(n >= 0 && n == floor(n)) || n == INFINITY) return NAN;
    if (n == 0) return tg_digamma_f64(x);
    if (n == 1) return tg_trigamma_f64(x);
    return (fmod(n, 2.0) != 0 ? 1.0 : -1.0) * exp(tg_lgamma_f64(n + 1)) * tg_zeta_f64(n + 1, x);
}

/* The modified Bessel functions I0, I1 of |x|: the power series up to 30, Hankel's
 * asymptotic series beyond (each stops where its terms fall below 1e-17); nan at inf, as
 * PyTorch's; I1(-0.0) is 0.0, as PyTorch's */
TG_FN double tg_bessel_f64(double x, int order) {
    if (x <= 30) {
        double t = order ? 0.5 * x : 1.0, s = t, q = 0.25 * x * x;
        for (int k = 1; t > 1e-17 * s; k++) { t *= q / (k * (k + order)); s += t; }
        return s;
    }
    if (x == INFINITY) return NAN;
    double mu = 4.0 * order * order, t = 1, s = 1;
    for (int k = 1; fabs(t) > 1e-17 && k <= 40; k++) { t *= -(mu - (2 * k - 1) * (2 * k - 1)) / (k * 8 * x); s += t; }
    return exp(x) / sqrt(2 * M_PI * x) * s;
}
TG_FN double tg_i0_f64(double x) { return x != x ? x : tg_bessel_f64(fabs(x), 0); }
TG_FN double tg_i1_f64(double x) { return x != x ? x : x < 0 ? -tg_bessel_f64(-x, 1) : tg_bessel_f64(x, 1); }

/* erfinv: Giles' approximation, then Newton's steps (on log erfc for |y| >= 1/2) */
TG_FN double tg_erfinv_f64(double y) {
    const double central[] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
    const double tail[] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                           -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
    if (!(y > -1 && y < 1)) return fabs(y) == 1 ? copysign(INFINITY, y) : NAN;
    double a = fabs(y), w = -log((1 - a) * (1 + a)), p = 0, x;
    const double *c = central;
    if (w < 5) w -= 2.5;
    else { w = sqrt(w) - 3; c = tail; }
    for (int i = 0; i < 9; i++) p = p * w + c[i];
    x = p * a;
    for (int i = 0; i < 4; i++) {
        double slope = 1.1283791670955126 * exp(-x * x);      /* 2 / sqrt(pi) e^(-x^2) */
        if (a < 0.5) x -= (erf(x) - a) / slope;
        else { double e = erfc(x); x += (log(e) - log1p(-a)) * e / slope; }
    }
    return copysign(x, y);
}

#define TG_SPECIAL_1(name) \
    TG_FN float tg_##name##_f32(float x) { return (float)tg_##name##_f64((double)x); } \
    TG_REAL_ON_INTEGERS(name)
TG_SPECIAL_1(lgamma) TG_SPECIAL_1(digamma) TG_SPECIAL_1(i0) TG_SPECIAL_1(i1) TG_SPECIAL_1(erfinv)
TG_FN float tg_polygamma_f32(float n, float x) { return (float)tg_polygamma_f64(n, x); }
TG_FN int64_t tg_polygamma_i64(int64_t n, int64_t x) { return tg_saturate_i64(tg_polygamma_f64((double)n, (double)x)); }

/* bitwise and number-theoretic: integers only, in uint64_t where a signed result would
 * overflow (wrapping, as PyTorch); a shift by 64 or more, or a negative one, shifts every
 * bit out (0, or the sign's bits to the right), as PyTorch */
#define TG_INTEGERS_ONLY_1(name, expr) \
    TG_FN float tg_##name##_f32(float x) { (void)x; return NAN; } \
    TG_FN double tg_##name##_f64(double x) { (void)x; return NAN; } \
    TG_FN int64_t tg_##name##_i64(int64_t x) { return expr; }
#define TG_INTEGERS_ONLY_2(name, expr) \
    TG_FN float tg_##name##_f32(float x, float y) { (void)x; (void)y; return NAN; } \
    TG_FN double tg_##name##_f64(double x, double y) { (void)x; (void)y; return NAN; } \
    TG_FN int64_t tg_##name##_i64(int64_t x, int64_t y) { return expr; }
TG_FN uint64_t tg_gcd_u64(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
    while (y) { uint64_t r = x % y; x = y; y = r; }
    return x;
}
TG_FN int64_t tg_lcm_value(int64_t a, int64_t b) {
    uint64_t g = tg_gcd_u64(a, b);
    if (!g) return 0;
    uint64_t m = (uint64_t)(a / (int64_t)g) * (uint64_t)b;     /* a / g exact; g = 2^63 only for a or b INT64_MIN */
    return (int64_t)m < 0 ? (int64_t)(-m) : (int64_t)m;
}
TG_INTEGERS_ONLY_1(bitwise_not, ~x)
TG_INTEGERS_ONLY_2(bitwise_and, x & y)
TG_INTEGERS_ONLY_2(bitwise_or, x | y)
TG_INTEGERS_ONLY_2(bitwise_xor, x ^ y)
TG_INTEGERS_ONLY_2(bitwise_left_shift, y >= 0 && y < 64 ? (int64_t)((uint64_t)x << y) : 0)
TG_INTEGERS_ONLY_2(bitwise_right_shift, x >> (y >= 0 && y < 64 ? y : 63))
TG_INTEGERS_ONLY_2(gcd, (int64_t)tg_gcd_u64(x, y))
TG_INTEGERS_ONLY_2(lcm, tg_lcm_value(x, y))

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
