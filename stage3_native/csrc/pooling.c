/* Max pooling (chapter on convolutional networks): the largest value of each window, and
 * where it was, in one pass over the input, with no column matrix written in between.
 *
 * max_pool walks each window (windows.h) and keeps its maximum and the flat position of
 * the maximum in its input plane (the first one when several are equal; a NaN wins, as in
 * PyTorch, so it propagates); positions in the padding count as -inf and are never
 * picked over an input value. The positions are what max_unpool and the backward pass
 * read: max_pool_backward adds each output's gradient at its position, the gradient of a
 * maximum flowing to the element that was chosen. Threads split the planes. The maxima go
 * to row-major planes at any image and channel stride (a slice of an ONNX Concat's buffer:
 * max_pool_into), the positions only where asked (not at inference). tg_max_pool
 * dispatches in one place: the U-net's 2x2 stride-2 pool to a loop of its own (four reads
 * per output, no tables), every other geometry to the general window walk.
 *
 * The python device's loops (stage2_tensor/python_backend.py) are the definition; the
 * composite beside them in stage2_tensor/convolution.py (im2col with a -inf fill, then a
 * max over the kernel positions) computes the same and is the naive version: it writes K
 * times the output's size before reducing it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "parallel.h"
#include "windows.h"

#define TEMPLATE "pooling_t.h"
#include "instantiate_float.h"
