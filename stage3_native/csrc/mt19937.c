/* The random factories' numbers, drawn from the state of Python's own generator
 * (mt19937.h explains the generator and the draws): n of them into out, the state and
 * gauss's spare updated in place, for the caller to hand back to Python. */
#include "mt19937.h"
#include "tracegrad.h"

void tg_mt19937_floats_f32(uint32_t *state, double *spare, i64 n, int distribution, double a, double b,
                           float *out) {
    for (i64 i = 0; i < n; i++)
        out[i] = (float)tg_mt_draw(state, spare, distribution, a, b);      /* to nearest, as Python */
}

void tg_mt19937_floats_f64(uint32_t *state, double *spare, i64 n, int distribution, double a, double b,
                           double *out) {
    for (i64 i = 0; i < n; i++)
        out[i] = tg_mt_draw(state, spare, distribution, a, b);
}

/* low + r wraps nowhere: the declaration keeps low + width - 1 within int64; the sum is
 * taken unsigned, where it is defined whatever the signs */
void tg_mt19937_integers_i64(uint32_t *state, i64 n, i64 low, uint64_t width, int64_t *out) {
    int k = tg_mt_bit_length(width);
    for (i64 i = 0; i < n; i++)
        out[i] = (int64_t)((uint64_t)low + tg_mt_below(state, width, k));
}
