/* Include the kernel template named by TEMPLATE once per dtype: inside it, T is the element
 * type, FN(name) gives name_<suffix> (FN(tg_unary) -> tg_unary_f32), W the wide type sums
 * accumulate in: int64_t for the integer types (exact, even beyond 2^53), double for the
 * floating-point ones. C is the type vectorized kernels compute in: W, except float for
 * float32, whose SIMD registers hold twice as many floats as doubles (and float arithmetic
 * on float32 inputs rounds + - * / exactly as double arithmetic rounded back to float).
 * TG_FLOATING is 1 for the floating-point types, 0 for the integer ones. */
#define T uint8_t
#define TG_FLOATING 0
#define FN(name) name##_u8
#define W int64_t
#define C int64_t
#include TEMPLATE
#undef T
#undef FN
#undef W
#undef C
#undef TG_FLOATING
#define T int32_t
#define TG_FLOATING 0
#define FN(name) name##_i32
#define W int64_t
#define C int64_t
#include TEMPLATE
#undef T
#undef FN
#undef W
#undef C
#undef TG_FLOATING
#define T int64_t
#define TG_FLOATING 0
#define FN(name) name##_i64
#define W int64_t
#define C int64_t
#include TEMPLATE
#undef T
#undef FN
#undef W
#undef C
#undef TG_FLOATING
#define T float
#define TG_FLOATING 1
#define FN(name) name##_f32
#define W double
#define C float
#include TEMPLATE
#undef T
#undef FN
#undef W
#undef C
#undef TG_FLOATING
#define T double
#define TG_FLOATING 1
#define FN(name) name##_f64
#define W double
#define C W
#include TEMPLATE
#undef T
#undef FN
#undef W
#undef C
#undef TG_FLOATING
