/* Running scans along one dimension: sums (cumsum), products (cumprod), extremes with their
 * positions (cummax, cummin) and log-sum-exps (logcumsumexp), each one pass over a row in
 * order (stage2_tensor/cumulative.py explains why not a matrix product).
 *
 * x and out are contiguous, viewed as (outer, size, inner) with the scanned dimension in
 * the middle: each of the outer * inner rows is `size` elements `inner` apart. A row is
 * summed or multiplied in order in W (int64_t for the integer types, double for float and
 * double, as PyTorch's CPU kernel and stage2's python device do), each running result
 * rounded to T as it is stored: so both devices give the same bits, and a nan or an
 * infinity reaches the results from its position on, and no earlier one. Rows are split
 * across threads above TG_PARALLEL_MIN elements; each is scanned by one thread, in order,
 * so the result is the same on any thread count.
 */
#include <math.h>
#include "nan.h"
#include "parallel.h"
#include "tracegrad.h"

#define TEMPLATE "cumsum_t.h"
#include "instantiate.h"
#undef TEMPLATE
#define TEMPLATE "logcumsumexp_t.h"
#include "instantiate_float.h"
