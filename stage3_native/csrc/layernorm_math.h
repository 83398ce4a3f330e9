/* LayerNorm's per-element formulas (layernorm.c states the math), written once for the C
 * kernels (layernorm_t.h) and the CUDA kernels (cuda/layernorm.cu), so that devices "cpu"
 * and "cuda" compute every element by the same formula. Only the arithmetic of one element is
 * here: the row sums that feed it (mean and rstd forward, mean(gw) and mean(gw * xhat)
 * backward) are each device's own, loops on the CPU and block reductions on the GPU.
 *
 * The formulas compute in the element type T, not in double (layernorm_t.h says why). C has
 * no templates, so this file is included once per type, as a kernel template is: T is the
 * type and FN(name) the name of its copy, name_f32 or name_f64 in C (layernorm_t.h includes
 * it), one overloaded name in C++ (cuda/layernorm.cu). Hence no include guard. */
#include <stdint.h>
#include "tg_fn.h"

/* x normalized by its row's statistics */
TG_FN T FN(tg_layer_norm_xhat)(T x, T mean, T rstd) { return (x - mean) * rstd; }

/* out = xhat * weight + bias, for element j of the row. weight and bias are NULL when the
 * layer has none; they are then left out, not taken as 1 and 0: -0 + 0 would be +0. The
 * tests are the same for every j, so the C compiler moves them out of the loop and
 * vectorizes each case. */
TG_FN T FN(tg_layer_norm_out)(T x, T mean, T rstd, const T *weight, const T *bias, int64_t j) {
    T v = FN(tg_layer_norm_xhat)(x, mean, rstd);
    if (weight) v = v * weight[j];
    return bias ? v + bias[j] : v;
}

/* dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * weight (g without
 * weight), for element j of the row; mean_gw and mean_gw_xhat are the row's two means. */
TG_FN T FN(tg_layer_norm_dx)(T g, T x, T mean, T rstd, const T *weight, int64_t j, T mean_gw,
                             T mean_gw_xhat) {
    T gw = weight ? g * weight[j] : g;
    return rstd * (gw - mean_gw - FN(tg_layer_norm_xhat)(x, mean, rstd) * mean_gw_xhat);
}
