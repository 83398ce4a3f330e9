/* One hidden unit of an LSTM or GRU cell, forward and backward (recurrent.c states the
 * math), written once for the C kernels (recurrent_t.h) and the CUDA kernels
 * (cuda/recurrent.cu), so that devices "cpu" and "cuda" compute every unit by the same
 * formulas. The activations are the element-wise ops' own, sigmoid and tanh of
 * elementwise_math.h (which the including file has included), so a fused cell computes
 * what the same cell written with tensor operations does.
 *
 * The formulas compute in the element type T, as the element-wise kernels do. Included once
 * per type, as a kernel template is: T is the type and FN(name) the name of its copy,
 * name_f32 or name_f64 in C (recurrent_t.h includes it), one overloaded name in C++
 * (cuda/recurrent.cu). Hence no include guard. */
#include <stdint.h>
#include "tg_fn.h"

TG_FN T FN(tg_cell_sigmoid)(T x) { return TG_BY_TYPE(sigmoid, x)(x); }
TG_FN T FN(tg_cell_tanh)(T x) { return TG_BY_TYPE(tanh, x)(x); }

/* A product's gate at column k with its bias when the cell has biases (added only then, as
 * a composite would: -0 + 0 would be +0). `biased` is a constant where the C kernels inline
 * this, so their loops carry no test (one would stop their vectorizing). */
TG_FN T FN(tg_cell_biased)(T x, const T *bias, int64_t k, int biased) { return biased ? x + bias[k] : x; }

/* LSTM: the pre-activations of gates i, f, g, o and the unit's cx in; the activated gates
 * (the workspace), cy = f * cx + i * g and hy = o * tanh(cy) out. */
TG_FN void FN(tg_lstm_unit)(T pi, T pf, T pg, T po, T cx, T *i, T *f, T *g, T *o, T *cy, T *hy) {
    *i = FN(tg_cell_sigmoid)(pi);
    *f = FN(tg_cell_sigmoid)(pf);
    *g = FN(tg_cell_tanh)(pg);
    *o = FN(tg_cell_sigmoid)(po);
    T c = *f * cx + *i * *g;
    *cy = c;
    *hy = *o * FN(tg_cell_tanh)(c);
}

/* Its gradients from the upstream grad_hy and grad_cy, with tanh(cy) computed again from
 * the saved gates and cx: each gate's before its activation (a sigmoid's derivative s (1 -
 * s), tanh's 1 - t^2, as the element-wise ops' gradients) and cx's. */
TG_FN void FN(tg_lstm_unit_backward)(T grad_hy, T grad_cy, T cx, T i, T f, T g, T o, T *di, T *df, T *dg,
                                     T *d_o, T *dcx) {
    T t = FN(tg_cell_tanh)(f * cx + i * g);
    T dc = grad_hy * o * (1 - t * t) + grad_cy;
    *di = dc * g * (i * (1 - i));
    *df = dc * cx * (f * (1 - f));
    *dg = dc * i * (1 - g * g);
    *d_o = grad_hy * t * (o * (1 - o));
    *dcx = dc * f;
}

/* GRU: the pre-activations of r and z, the input's n part x_n and the hidden's h_n (each
 * with its bias) and the unit's hx in; r, z, n = tanh(x_n + r * h_n) and hy = n + z * (hx -
 * n) out. */
TG_FN void FN(tg_gru_unit)(T pr, T pz, T x_n, T h_n, T hx, T *r, T *z, T *n, T *hy) {
    *r = FN(tg_cell_sigmoid)(pr);
    *z = FN(tg_cell_sigmoid)(pz);
    *n = FN(tg_cell_tanh)(x_n + *r * h_n);
    *hy = *n + *z * (hx - *n);
}

/* Its gradients from the upstream grad and the saved r, z, n, hx and h_n: r's, z's and the
 * input's n part's before their activations (dr, dz, dn), the hidden's n part's (dh_n =
 * dn * r) and hx's. */
TG_FN void FN(tg_gru_unit_backward)(T grad, T r, T z, T n, T hx, T h_n, T *dr, T *dz, T *dn, T *dh_n,
                                    T *dhx) {
    T d = grad * (1 - z) * (1 - n * n);
    *dz = grad * (hx - n) * (z * (1 - z));
    *dr = d * h_n * (r * (1 - r));
    *dn = d;
    *dh_n = d * r;
    *dhx = grad * z;
}
