/* The squared-error loss, fused (thesis, "Mnist Training Example": the MNIST network's loss
 * is the squared error of its softmax output against the one-hot label). Written out in
 * tensor operations it is a subtraction, a square and a sum forward, and a broadcast, two
 * products and the subtraction's routing backward, each with its intermediate tensor; here
 * it is one pass each way. For float and double; a and b are contiguous and of one shape
 * (cpu/backend.py copies other views, and broadcast ones, first).
 *
 * Forward:  diff = a - b (kept for the backward pass), loss = sum of diff^2, or its mean,
 *           or diff^2 per element (reduction 1, 2, 0), summed in double.
 * Backward: d loss / d a = 2 * diff * grad * factor, grad the upstream gradient (one value,
 *           grad_step 0, or one per element, grad_step 1), factor 1/n for the mean, else 1;
 *           d loss / d b is its negative.
 */
#include "tracegrad.h"

#define TEMPLATE "mse_t.h"
#include "instantiate_float.h"
