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
 * - the whole row sorted: a stable radix sort of its entries by a key that orders them as
 *   the comparisons do (RADIX_KEY), a pass per byte of the element type, O(size), or for a
 *   row of fewer than RADIX_MIN elements a bottom-up merge sort, O(size log size);
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
#include <string.h>
#include "nan.h"
#include "parallel.h"
#include "tracegrad.h"

#define RADIX_MIN 256           /* rows this long sort by radix: a few passes beat log2(size) */

/* Each value as an unsigned key in the order FN(before) gives values, ascending: integers
 * with the sign bit flipped; floats by their bits (negative ones complemented), -0.0 as 0.0
 * (they compare equal) and every NaN above +inf (last ascending, ties by position). */
static inline uint64_t radix_key_u8(uint8_t v) { return v; }
static inline uint64_t radix_key_i32(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
static inline uint64_t radix_key_i64(int64_t v) { return (uint64_t)v ^ 0x8000000000000000u; }
static inline uint64_t radix_key_f32(float v) {
    uint32_t bits;
    if (isnan(v)) return 0xFFFFFFFFu;
    if (v == 0) v = 0;
    memcpy(&bits, &v, sizeof bits);
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}
static inline uint64_t radix_key_f64(double v) {
    uint64_t bits;
    if (isnan(v)) return 0xFFFFFFFFFFFFFFFFu;
    if (v == 0) v = 0;
    memcpy(&bits, &v, sizeof bits);
    return bits & 0x8000000000000000u ? ~bits : bits | 0x8000000000000000u;
}
#define RADIX_KEY(v) _Generic((v), uint8_t: radix_key_u8, int32_t: radix_key_i32, int64_t: radix_key_i64, \
                              float: radix_key_f32, double: radix_key_f64)(v)

#define TEMPLATE "topk_t.h"
#include "instantiate.h"
