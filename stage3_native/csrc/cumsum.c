/* Running sums (cumsum) along one dimension: out[j] = x[0] + ... + x[j] along each row, one
 * addition per element (stage2_tensor/cumulative.py explains why not a matrix product).
 *
 * x and out are contiguous, viewed as (outer, size, inner) with the summed dimension in the
 * middle: each of the outer * inner rows is `size` elements `inner` apart. A row is summed
 * in order in W (int64_t for the integer types, double for float and double, as PyTorch's
 * CPU kernel and stage2's python device do), each running sum rounded to T as it is
 * stored: so both devices give the same bits, and a nan or an infinity reaches the sums
 * from its position on, and no earlier one. Rows are split across threads above
 * TG_PARALLEL_MIN elements; each is summed by one thread, in order, so the result is the
 * same on any thread count.
 */
#include "parallel.h"
#include "tracegrad.h"

#define TEMPLATE "cumsum_t.h"
#include "instantiate.h"
