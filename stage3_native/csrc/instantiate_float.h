/* Include the kernel template named by TEMPLATE for the two floating-point types only
 * (kernels that make no sense for integers: matmul, softmax, optimizer updates). Inside it,
 * T is float or double, FN(name) gives name_f32 or name_f64, and GEMM the matching CBLAS
 * function (used by matmul when TG_HAVE_CBLAS is set). */
#define T float
#define FN(name) name##_f32
#define GEMM cblas_sgemm
#include TEMPLATE
#undef T
#undef FN
#undef GEMM
#define T double
#define FN(name) name##_f64
#define GEMM cblas_dgemm
#include TEMPLATE
#undef T
#undef FN
#undef GEMM
