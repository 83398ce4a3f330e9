/* Reductions over any set of dimensions. The caller splits the view into the kept
 * ("outer") dimensions, one output each, and the reduced ("inner") ones: for every outer
 * position the inner loop walks the reduced elements. Op codes: 0 sum, 1 max, 2 min for
 * tg_reduce (results in W: int64 for integer tensors, double for floating-point ones); 3 argmax, 4 argmin for tg_argreduce (row-major index
 * within the reduced dimensions; the first one on ties).
 */
#include "strided.h"

#define TEMPLATE "reduce_t.h"
#include "instantiate.h"
