/* The histc kernel for float and double (bincount.c includes this for both): each element's
 * bin by PyTorch's formula, in T, so an element near a bin's edge lands where PyTorch puts
 * it; high itself in the last bin; NaN fails both tests of the range and counts nowhere. */

void FN(tg_histc)(i64 n, const T *x, i64 bins, double low, double high, T *out) {
    T lo = (T)low, hi = (T)high, width = hi - lo, count = (T)bins;
    memset(out, 0, (size_t)bins * sizeof(T));
    for (i64 i = 0; i < n; i++) {
        T v = x[i];
        if (!(v >= lo && v <= hi)) continue;
        i64 bin = (i64)((v - lo) * count / width);
        out[bin < bins ? bin : bins - 1] += 1;
    }
}
