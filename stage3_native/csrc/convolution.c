/* Convolution's kernels (chapter on convolutional networks): im2col, its adjoint col2im,
 * and the naive direct convolution kept beside them for the chapter and as an oracle.
 *
 * im2col ("image to columns") writes, for each plane (one channel of one image), each
 * kernel position k and each output position l, the input value that window l reads at k:
 * cols (planes, K, L). A convolution is then one matrix product of the kernels, flattened
 * to rows (C_out, C_in * K), with those columns: the GEMM that TinyBLAS (gemm.c) runs fast.
 * Window positions are computed arithmetically (windows.h), so there is no index table to
 * read, and one in the padding reads `fill` (0 for a convolution, -inf for a max) instead
 * of a padded copy of the input.
 *
 * col2im adds each column element back at the input position it was read from (those in
 * the padding dropped): im2col's transpose, so the gradient of im2col, and with it the
 * input gradient of a convolution (a transposed convolution) and F.fold. Threads split
 * the planes: no two write the same element, and each element adds its contributions in
 * the same order whatever the thread count.
 *
 * conv_bands is the inference convolution: im2col and TinyBLAS's product a band of output
 * rows at a time, each thread its own bands in one parallel region, bias and ReLU added as
 * the product is stored (into a slice of a larger buffer if asked: an ONNX Concat's).
 *
 * conv_direct is the definition, the seven nested loops (image, output channel, output
 * position, input channel of the group, kernel position), accumulating in double: slow,
 * and there to be compared with.
 */
#include <string.h>
#include "gemm.h"
#include "parallel.h"
#include "windows.h"

#define TEMPLATE "convolution_t.h"
#include "instantiate_float.h"
