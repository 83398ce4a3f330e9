/* Counting into bins (stage2_tensor/counting.py), declared in stage2_tensor/kernels/
 * indexing.py: bincount, how many elements of an int64 index equal each of 0..bins-1, or
 * the sum of their weights; histc, how many elements fall in each of `bins` equal ranges
 * (histc_t.h). Each is one pass over the elements after zeroing the bins. And runs: the
 * runs of equal neighbours of a row, each one's first element and length (unique's and
 * unique_consecutive's values and counts), one pass.
 *
 * bincount's element outside 0..bins-1 counts nowhere: the caller sizes the bins from the
 * largest element, so the test only keeps a bad element from writing outside `out`.
 * Contributions are added in order, on one thread (a bin's additions in any other order
 * would round floats differently).
 */
#include <string.h>
#include "tracegrad.h"

#define TEMPLATE "bincount_t.h"
#include "instantiate.h"
#undef TEMPLATE
#define TEMPLATE "histc_t.h"
#include "instantiate_float.h"
