/* The running log-sum-exp for one floating-point type T, in double (cumsum.c includes this
 * for float and double). m is the largest element so far and s the sum of e^(x - m): a
 * larger x rescales s by e^(m - x) before adding its own 1, so no exponent is positive and
 * nothing overflows; an x equal to m (an infinite one too, where x - m is nan) adds 1, and
 * a NaN makes s NaN, which every later sum keeps. */

void FN(tg_logcumsumexp)(i64 outer, i64 size, i64 inner, const T *x, T *out) {
    #pragma omp parallel for schedule(static) if (outer * size * inner >= TG_PARALLEL_MIN)
    for (i64 row = 0; row < outer * inner; row++) {
        i64 first = row / inner * size * inner + row % inner;
        double m = -INFINITY, s = 0;
        for (i64 i = 0; i < size; i++) {
            double v = x[first + i * inner];
            if (v > m) {
                s = s * exp(m - v) + 1;
                m = v;
            } else {
                s += v == m ? 1 : exp(v - m);
            }
            out[first + i * inner] = (T)(m + log(s));
        }
    }
}
