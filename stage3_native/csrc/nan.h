/* Whether a value of any element type is NaN: integers never are. A template written once
 * over T (instantiate.h) asks through IS_NAN, where `v != v` would be a comparison the
 * compiler calls always false for the integer types (and clang's -Werror stops on). */
#ifndef TG_NAN_H
#define TG_NAN_H
#include <math.h>
#include <stdint.h>

static inline int isnan_float(float v) { return isnan(v); }
static inline int isnan_double(double v) { return isnan(v); }
static inline int isnan_int(int64_t v) { (void)v; return 0; }
#define IS_NAN(v) _Generic((v), float: isnan_float, double: isnan_double, default: isnan_int)(v)

#endif
