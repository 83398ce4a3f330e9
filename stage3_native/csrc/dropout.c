/* Dropout, fused: the mask is never stored. Written in tensor operations, dropout draws a
 * uniform number per element (rand), compares it with p, converts the comparison to the
 * dtype, scales it and multiplies: four passes and three intermediate tensors forward, and
 * the saved mask multiplied in backward. Here each direction is one pass, and the backward
 * pass regenerates the mask from the seed instead of reading a saved one.
 *
 * The random numbers come from a counter-based generator: element i of a call is decided by
 * a hash of (seed, i) alone, not by a generator's state, so any thread can decide any
 * element, in any order, with the same result. The hash is SplitMix64's output function
 * (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014; the
 * generator java.util.SplittableRandom and xoshiro's seeding use):
 *
 *     z = seed + (i + 1) * 0x9E3779B97F4A7C15           (mod 2^64; the golden-ratio gamma)
 *     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
 *     z = (z ^ (z >> 27)) * 0x94D049BB133111EB
 *     z =  z ^ (z >> 31)
 *
 * which is exactly output i of a SplitMix64 generator seeded with `seed`: a stream any
 * position of which can be computed directly. The top 53 bits make a uniform
 * u = (z >> 11) * 2^-53 in [0, 1) (exact in double), and the element is kept iff u >= p.
 * stage2_tensor/python_backend.py computes the same bits in Python, so devices "python" and
 * "cpu" drop the same elements for the same seed.
 *
 *     out_i = x_i * scale   where kept, else x_i * 0,     scale = 1 / (1 - p)
 *
 * (x_i * 0, not 0: a nan or infinity stays nan, as in PyTorch's x * mask). The product is
 * taken in double and rounded to T once (as the python device does), so the two devices
 * give the same bits. The same kernel is the backward pass: dx = dy * keep * scale is this
 * function of dy with the same seed. x is contiguous (cpu/backend.py copies other views
 * first), i counts its elements in row-major order. Elements are split across threads
 * above TG_PARALLEL_MIN; each element depends on nothing else, so the result is the same
 * on any thread count.
 */
#include <math.h>
#include "parallel.h"
#include "tracegrad.h"
#include "dropout_math.h"   /* the generator and keep-test, shared with cuda/dropout.cu */

#define TEMPLATE "dropout_t.h"
#include "instantiate_float.h"
