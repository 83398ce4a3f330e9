/* The recurrent cells for device "cuda", fused: one time step of an LSTM or a GRU after its
 * two matrix products; compare csrc/recurrent.c, which states the math. A thread per hidden
 * unit, each with the CPU's formulas (csrc/recurrent_math.h, the element-wise ops' sigmoid
 * and tanh): neighbouring threads take neighbouring units of a row, so each of a gate's
 * reads and each of the outputs' writes is one coalesced sweep.
 *
 * A bias's gradient, the sum of the gate gradients' rows, is a thread per column adding
 * down the rows in double in row order, as the CPU does: no atomics, so the same bits
 * every run and on both devices. The rows of a cell's batch are few enough that one
 * thread per column keeps up with the pass that wrote them. */
#include "ops_generated.h"              /* the op codes, which elementwise_math.h overloads by */
#include "runtime.cuh"
#include "../csrc/elementwise_math.h"   /* sigmoid and tanh, shared with the C kernels */

/* One unit's formulas, shared with the CPU: one copy per element type, which C++ overloads
 * under one name */
#define FN(name) name
#define T float
#include "../csrc/recurrent_math.h"
#undef T
#define T double
#include "../csrc/recurrent_math.h"
#undef T
#undef FN

namespace {         /* private to this file: other .cu files may use the same names */

template <typename T>
__global__ void lstm_units(i64 units, i64 hidden, const T *ig, const T *hg, const T *cx, const T *ib, const T *hb,
                           T *hy, T *cy, T *ws) {
    for_each_index(u, units) {
        i64 b = u / hidden, j = u % hidden;
        const T *x = ig + b * 4 * hidden, *h = hg + b * 4 * hidden;
        T *w = ws + b * 4 * hidden;
        int biased = ib != nullptr;
        T p[4];
        for (int k = 0; k < 4; k++)
            p[k] = tg_cell_biased(x[k * hidden + j], ib, k * hidden + j, biased)
                   + tg_cell_biased(h[k * hidden + j], hb, k * hidden + j, biased);
        tg_lstm_unit(p[0], p[1], p[2], p[3], cx[u], &w[j], &w[hidden + j], &w[2 * hidden + j], &w[3 * hidden + j],
                     &cy[u], &hy[u]);
    }
}

template <typename T>
__global__ void lstm_backward_units(i64 units, i64 hidden, const T *grad_hy, const T *grad_cy, const T *cx,
                                    const T *ws, T *dgates, T *dcx) {
    for_each_index(u, units) {
        i64 b = u / hidden, j = u % hidden;
        const T *w = ws + b * 4 * hidden;
        T *d = dgates + b * 4 * hidden;
        tg_lstm_unit_backward(grad_hy[u], grad_cy[u], cx[u], w[j], w[hidden + j], w[2 * hidden + j],
                              w[3 * hidden + j], &d[j], &d[hidden + j], &d[2 * hidden + j], &d[3 * hidden + j],
                              &dcx[u]);
    }
}

template <typename T>
__global__ void gru_units(i64 units, i64 hidden, const T *ig, const T *hg, const T *hx, const T *ib, const T *hb,
                          T *hy, T *ws) {
    for_each_index(u, units) {
        i64 b = u / hidden, j = u % hidden, at = 2 * hidden + j;
        const T *x = ig + b * 3 * hidden, *h = hg + b * 3 * hidden;
        T *w = ws + b * 5 * hidden;
        int biased = ib != nullptr;
        T p[2];
        for (int k = 0; k < 2; k++)
            p[k] = tg_cell_biased(x[k * hidden + j], ib, k * hidden + j, biased)
                   + tg_cell_biased(h[k * hidden + j], hb, k * hidden + j, biased);
        T h_n = tg_cell_biased(h[at], hb, at, biased);
        tg_gru_unit(p[0], p[1], tg_cell_biased(x[at], ib, at, biased), h_n, hx[u], &w[j], &w[hidden + j], &w[at],
                    &hy[u]);
        w[3 * hidden + j] = hx[u];
        w[4 * hidden + j] = h_n;
    }
}

template <typename T>
__global__ void gru_backward_units(i64 units, i64 hidden, const T *grad, const T *ws, T *dx, T *dh, T *dhx) {
    for_each_index(u, units) {
        i64 b = u / hidden, j = u % hidden;
        const T *w = ws + b * 5 * hidden;
        T *di = dx + b * 3 * hidden, *dj = dh + b * 3 * hidden;
        T dr, dz, dn, dh_n;
        tg_gru_unit_backward(grad[u], w[j], w[hidden + j], w[2 * hidden + j], w[3 * hidden + j], w[4 * hidden + j],
                             &dr, &dz, &dn, &dh_n, &dhx[u]);
        di[j] = dj[j] = dr;
        di[hidden + j] = dj[hidden + j] = dz;
        di[2 * hidden + j] = dn;
        dj[2 * hidden + j] = dh_n;
    }
}

/* The sum over the rows of each column of x (rows, width), in double, in row order */
template <typename T>
__global__ void column_sums(i64 rows, i64 width, const T *x, T *sums) {
    for_each_index(k, width) {
        double s = 0;
        for (i64 r = 0; r < rows; r++) s += (double)x[r * width + k];
        sums[k] = (T)s;
    }
}

template <typename T>
static int sums(i64 rows, i64 width, const T *x, T *out) {
    if (width == 0) return 0;
    LAUNCH(blocks_for(width), THREADS, column_sums<T>)(rows, width, x, out);
    return LAUNCHED();
}

template <typename T>
static int lstm_cell_backward(i64 batch, i64 hidden, const T *grad, const T *cx, const T *ws, T *dgates, T *dcx,
                              T *dbias) {
    i64 units = batch * hidden;
    if (units > 0) {
        LAUNCH(blocks_for(units), THREADS, lstm_backward_units<T>)(units, hidden, grad, grad + units, cx, ws,
                                                                   dgates, dcx);
        int status = LAUNCHED();
        if (status) return status;
    }
    return dbias ? sums(batch, 4 * hidden, (const T *)dgates, dbias) : 0;
}

template <typename T>
static int gru_cell_backward(i64 batch, i64 hidden, const T *grad, const T *ws, T *dx, T *dh, T *dhx, T *dx_bias,
                             T *dh_bias) {
    i64 units = batch * hidden;
    if (units > 0) {
        LAUNCH(blocks_for(units), THREADS, gru_backward_units<T>)(units, hidden, grad, ws, dx, dh, dhx);
        int status = LAUNCHED();
        if (status) return status;
    }
    if (!dx_bias) return 0;
    int status = sums(batch, 3 * hidden, (const T *)dx, dx_bias);
    return status ? status : sums(batch, 3 * hidden, (const T *)dh, dh_bias);
}

}  // namespace

extern "C" {

/* gates (batch, 4 hidden), cx (batch, hidden), biases 4 hidden values or NULL -> state (hy,
 * then cy), workspace (batch, 4 hidden) */
int tg_cuda_lstm_cell(int dtype, i64 batch, i64 hidden, const void *input_gates, const void *hidden_gates,
                      const void *cx, const void *input_bias, const void *hidden_bias, void *state, void *workspace) {
    i64 units = batch * hidden;
    if (units == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(units), THREADS, lstm_units<T>)(
                              units, hidden, (const T *)input_gates, (const T *)hidden_gates, (const T *)cx,
                              (const T *)input_bias, (const T *)hidden_bias, (T *)state, (T *)state + units,
                              (T *)workspace))
    return LAUNCHED();
}

/* grad (2, batch, hidden): hy's, then cy's -> dgates, dcx and, unless NULL, dbias */
int tg_cuda_lstm_cell_backward(int dtype, i64 batch, i64 hidden, const void *grad, const void *cx,
                               const void *workspace, void *dgates, void *dcx, void *dbias) {
    DISPATCH_FLOAT(dtype, return lstm_cell_backward<T>(batch, hidden, (const T *)grad, (const T *)cx,
                                                       (const T *)workspace, (T *)dgates, (T *)dcx, (T *)dbias))
    return 0;
}

/* gates (batch, 3 hidden), hx (batch, hidden), biases 3 hidden values or NULL -> hy,
 * workspace (batch, 5 hidden): r, z, n, hx, h_n */
int tg_cuda_gru_cell(int dtype, i64 batch, i64 hidden, const void *input_gates, const void *hidden_gates,
                     const void *hx, const void *input_bias, const void *hidden_bias, void *hy, void *workspace) {
    i64 units = batch * hidden;
    if (units == 0) return 0;
    DISPATCH_FLOAT(dtype, LAUNCH(blocks_for(units), THREADS, gru_units<T>)(
                              units, hidden, (const T *)input_gates, (const T *)hidden_gates, (const T *)hx,
                              (const T *)input_bias, (const T *)hidden_bias, (T *)hy, (T *)workspace))
    return LAUNCHED();
}

int tg_cuda_gru_cell_backward(int dtype, i64 batch, i64 hidden, const void *grad, const void *workspace,
                              void *dinput_gates, void *dhidden_gates, void *dhx, void *dinput_bias,
                              void *dhidden_bias) {
    DISPATCH_FLOAT(dtype, return gru_cell_backward<T>(batch, hidden, (const T *)grad, (const T *)workspace,
                                                      (T *)dinput_gates, (T *)dhidden_gates, (T *)dhx,
                                                      (T *)dinput_bias, (T *)dhidden_bias))
    return 0;
}

}  // extern "C"
