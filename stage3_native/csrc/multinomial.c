/* Multinomial sampling (stage2_tensor/factories.py's multinomial; the declaration,
 * kernels/random.py, says what the arguments are): category indices drawn from each row of
 * non-negative weights, one per uniform number in [0, 1) that Python's generator made.
 *
 * The draws are the ones the python device makes, to the bit, so a seed gives the same
 * samples on every device: a row's running sums are taken in double, from the left, one
 * addition per weight (never reassociated or split across threads), and a draw is the first
 * index whose running sum exceeds u times the row's total (a bisection, as Python's
 * bisect_right), or the last non-zero weight when rounding puts u * total past every sum.
 * One pass per row sums, checks and counts its weights together; a row that is no
 * distribution (a weight < 0, inf or nan, none above 0, or without replacement fewer above 0
 * than draws) is reported, the first such row in *bad, and left undrawn.
 *
 * Without replacement a drawn weight becomes 0 and the running sums from it on are summed
 * again (those before it are unchanged): O(n) per draw. Rows are split across threads, each
 * thread with scratch memory for one row's sums (and its weights not drawn yet). */
#include <float.h>
#include <stdlib.h>
#include "parallel.h"
#include "tracegrad.h"

/* The first i with x < cum[i] in the non-decreasing cum[0..n), or n - 1 when there is none
 * (Python's bisect_right, then min(i, n - 1)). */
static i64 first_above(const double *cum, i64 n, double x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = lo + (hi - lo) / 2;
        if (x < cum[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo < n ? lo : n - 1;
}

#define TEMPLATE "multinomial_t.h"
#include "instantiate_float.h"
