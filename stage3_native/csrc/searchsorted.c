/* searchsorted and bucketize (stage2_tensor/searching.py), declared in
 * stage2_tensor/kernels/ordering.py: for each value, a binary search of its row of sorted
 * boundaries, O(log n) per value.
 *
 * values are contiguous, `rows` rows of m; boundaries contiguous, one row of n for every
 * value (`shared`) or one per row of values. The search is PyTorch's, test for test, so a
 * NaN gives the same answer: the first position whose boundary is not below the value,
 * `!(boundary >= value)` going right (`!(boundary > value)` when `right`), which a NaN on
 * either side always does. Values are split across threads above TG_PARALLEL_MIN; each is
 * searched alone, so the result is the same on any thread count.
 */
#include "parallel.h"
#include "tracegrad.h"

#define TEMPLATE "searchsorted_t.h"
#include "instantiate.h"
