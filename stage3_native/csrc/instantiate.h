/* Include the kernel template named by TEMPLATE once per dtype: inside it, T is the element
 * type and FN(name) gives name_<suffix>, e.g. FN(tg_unary) -> tg_unary_f32. */
#define T uint8_t
#define FN(name) name##_u8
#include TEMPLATE
#undef T
#undef FN
#define T int32_t
#define FN(name) name##_i32
#include TEMPLATE
#undef T
#undef FN
#define T int64_t
#define FN(name) name##_i64
#include TEMPLATE
#undef T
#undef FN
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
