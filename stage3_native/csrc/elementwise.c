/* Element-wise kernels: unary, binary (broadcast through stride-0 views), comparisons and
 * where. The op codes are the positions of the names in stage2_tensor/backend.py's
 * UNARY_OPS and BINARY_OPS. Each element is computed in W (double for floating-point
 * tensors, int64_t for integer ones, see instantiate.h) and stored as T, which keeps one
 * formula per op for every dtype (a later chapter specializes the hot ones).
 */
#include <math.h>
#include "strided.h"

static double unary_op_real(int op, double x) {
    switch (op) {
    case 0: return -x;
    case 1: return exp(x);
    case 2: return log(x);                       /* log(0) = -inf, log(<0) = nan, as in numpy */
    case 3: return sqrt(x);
    case 4: return fabs(x);
    case 5: return (x > 0 || x != x) ? x : 0.0;  /* relu; nan stays nan */
    case 6: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case 7: return tanh(x);
    case 8: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));                    /* gelu */
    case 9: return x > 0 ? 1.0 : 0.0;                                         /* relu_grad */
    case 10: return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
    default: return (x > 0) - (x < 0);                                        /* sign */
    }
}

static double binary_op_real(int op, double a, double b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return pow(a, b);
    case 5: return b > a ? b : a;                /* maximum: ties and nan keep a, like Python's max */
    default: return b < a ? b : a;               /* minimum */
    }
}

/* Integer tensors: exact integer arithmetic. stage2 converts integer operands to float for
 * the ops that need it (exp, log, true division), so only these reach here. */
static int64_t unary_op_int(int op, int64_t x) {
    switch (op) {
    case 0: return -x;
    case 4: return x < 0 ? -x : x;
    case 5: return x > 0 ? x : 0;                  /* relu */
    case 9: return x > 0;                          /* relu_grad */
    case 11: return (x > 0) - (x < 0);             /* sign */
    default: return (int64_t)unary_op_real(op, (double)x);
    }
}

static int64_t binary_op_int(int op, int64_t a, int64_t b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return b ? a / b : 0;
    case 4: {                                      /* pow by squaring; negative powers: 0 */
        int64_t result = 1;
        if (b < 0) return a == 1 ? 1 : 0;
        for (; b; b >>= 1, a *= a) if (b & 1) result *= a;
        return result;
    }
    case 5: return b > a ? b : a;
    default: return b < a ? b : a;
    }
}

#define TEMPLATE "elementwise_t.h"
#include "instantiate.h"
