/* Ordering along one dimension: sort, argsort and topk (stage2_tensor/sorting.py), one
 * kernel, and kthvalue (median's too), declared in stage2_tensor/kernels/ordering.py.
 *
 * x is contiguous, viewed as (outer, size, inner) with the ordered dimension in the middle:
 * each of the outer * inner rows is `size` elements `inner` apart. For each row the kernel
 * writes the first k of its positions in order, and their values: ascending (descending
 * when asked), NaN after every number ascending and before every number descending (as
 * PyTorch's), and equal values in the order of their positions, so the result is one
 * total order whatever the algorithm: sort and argsort are k = size.
 *
 * Two ways to the first k, chosen per call:
 * - the whole row sorted: a bottom-up merge sort of its positions, O(size log size);
 * - k much smaller than the row (topk(50) of a vocabulary): a heap of the k best positions
 *   so far, the worst on top, which each later position replaces when it comes first,
 *   O(size log k); the k kept are then merge-sorted.
 * To sort, a thread copies the row into memory of its own first (tg_alloc's, kept between
 * calls), each value beside its position (a row along a middle dimension is strided), so
 * the sort moves contiguous entries; the heap reads the row in place. Rows
 * are split across threads above TG_PARALLEL_MIN elements; each is ordered by one thread,
 * so the result is the same on any thread count. Returns 1 when out of memory for a
 * thread's row, else 0.
 *
 * kthvalue finds one position of the same order, the k-th, without sorting the row: a
 * quickselect over the row's entries (topk_t.h's FN(select)), O(size) expected.
 */
#include "nan.h"
#include "parallel.h"
#include "tracegrad.h"

#define TEMPLATE "topk_t.h"
#include "instantiate.h"
