/* The recurrent cells, fused: one time step of an LSTM or a GRU after its two matrix
 * products, forward and backward each one pass over the gates, for float and double
 * (PyTorch's _thnn_fused_lstm_cell and _thnn_fused_gru_cell; stage2_tensor/kernels/
 * recurrent.py declares them). Every operand is contiguous (cpu/backend.py copies other
 * views first): input_gates x W_ih^T and hidden_gates h W_hh^T are (batch, k * hidden),
 * the gates of unit j at columns j, H + j, ..., the biases k * hidden values each, or both
 * NULL.
 *
 * LSTM (k = 4, gates i, f, g, o), per unit, with each product's gate plus its bias:
 *     i, f, o = sigmoid, g = tanh;   cy = f * cx + i * g;   hy = o * tanh(cy)
 * state holds every hy, then every cy; workspace the activated gates, (batch, 4 hidden).
 * Backward, from grad (hy's, then cy's) and tanh(cy) computed again from cx and the gates:
 *     dc = grad_hy * o * (1 - tanh(cy)^2) + grad_cy,   dcx = dc * f,
 *     di = dc * g * i (1 - i),  df = dc * cx * f (1 - f),  dg = dc * i (1 - g^2),
 *     do = grad_hy * tanh(cy) * o (1 - o);
 * dgates is both products' gradient, and dbias (the sum of its rows) both biases'.
 *
 * GRU (k = 3, gates r, z, n):
 *     r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r * h_n),
 *     hy = n + z * (hx - n)                     ((1 - z) n + z hx, as PyTorch computes it)
 * workspace (batch, 5 hidden): r, z, n, hx, h_n. Backward: dn = grad (1 - z)(1 - n^2),
 * dz = grad (hx - n) z (1 - z), dr = dn * h_n * r (1 - r), dhx = grad * z; the input's
 * gates get (dr, dz, dn), the hidden's (dr, dz, dn * r), each bias the sum of its rows.
 *
 * Written with tensor operations a step is about a dozen operations forward (the sums, the
 * gates cut apart, three sigmoids and two tanhs, three products and a sum) and twice as
 * many backward, each a pass over memory with a tensor of its own; here each unit reads
 * its gates once and writes its results once. The activations are the element-wise ops'
 * (elementwise_math.h, vectorized for float by vmath.h), in the element type, so the
 * results are those of the composite up to the rounding of a product and a sum contracted
 * into one FMA. The rows run in a TG_SIMD loop (compiled once per instruction set),
 * split among threads above TG_PARALLEL_MIN gate values; a bias's gradient sums a block
 * of columns down the rows in double, each column in row order, so the result is the same
 * bits on any thread count.
 */
#include <math.h>
#include "elementwise_math.h"   /* sigmoid and tanh, the element-wise ops' own */
#include "parallel.h"
#include "simd.h"
#include "tracegrad.h"

#define SUM_BLOCK 64            /* columns a bias gradient sums at once, in a stack array of doubles */

#define TEMPLATE "recurrent_t.h"
#include "instantiate_float.h"
