/* Matrix multiplication, three ways (the thesis's performance chapter), for float and double:
 *
 *   0 naive i-j-k: the textbook loop; the inner loop walks b down a column, jumping a whole
 *     row of b per step, so nearly every load misses the cache;
 *   1 reordered i-k-j: the same arithmetic with the two inner loops swapped: the inner loop
 *     now walks a row of b and a row of out, consecutive in memory;
 *   2 blocked (the default): i-k-j on tiles small enough to stay in cache while reused.
 *
 * Strides are in elements; a transposed operand is just swapped strides (stage2 passes
 * views). Each batch b has its own offsets a_base[b], b_base[b]; out is contiguous.
 */
#include <string.h>
#include "strided.h"

#define TILE 64

#define TEMPLATE "matmul_t.h"
#define T float
#define FN(name) name##_f32
#include TEMPLATE
#undef T
#undef FN
#define T double
#define FN(name) name##_f64
#include TEMPLATE
#undef T
#undef FN
