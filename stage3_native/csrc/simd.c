/* The SIMD level the element-wise kernels run at (simd.h explains the levels and TG_SIMD,
 * whose copies this chooses between). Chosen when the library is loaded: the widest level
 * the CPU runs (__builtin_cpu_supports asks the CPU itself, cpuid), or TRACEGRAD_SIMD's
 * ("generic", "avx2", "avx512") where the CPU runs that one. tg_simd_use switches later,
 * as tg_gemm_use_kernel does for TinyBLAS's micro-kernel (gemm_kernels.c).
 */
#include <stdlib.h>
#include <string.h>
#include "simd.h"

static const char *const LEVEL_NAMES[] = {"generic", "avx2", "avx512"};

static int runs(int level) {
#if TG_SIMD_LEVELS > 1
    __builtin_cpu_init();             /* may run before libgcc's own initializer: say so */
    if (level == TG_SIMD_AVX512) return __builtin_cpu_supports("x86-64-v4");
    if (level == TG_SIMD_AVX2) return __builtin_cpu_supports("x86-64-v3");
#endif
    return level == TG_SIMD_GENERIC;
}

static int widest(void) {
    int level = TG_SIMD_LEVELS - 1;
    while (!runs(level)) level--;
    return level;
}

static int named(const char *name) {
    for (int level = 0; level < TG_SIMD_LEVELS; level++)
        if (name && strcmp(name, LEVEL_NAMES[level]) == 0) return level;
    return -1;
}

static int level = TG_SIMD_GENERIC;
const int *tg_simd_current = &level;

#if TG_SIMD_LEVELS > 1
/* Before any kernel runs: a constructor runs when the library is loaded. */
__attribute__((constructor)) static void choose_at_load(void) {
    int asked = named(getenv("TRACEGRAD_SIMD"));
    level = asked >= 0 && runs(asked) ? asked : widest();
}
#endif

const char *tg_simd_level(void) { return LEVEL_NAMES[level]; }

const char *tg_simd_levels(int i) {
    int seen = 0;
    for (int l = 0; l < TG_SIMD_LEVELS; l++)
        if (runs(l) && seen++ == i) return LEVEL_NAMES[l];
    return NULL;
}

int tg_simd_use(const char *name) {
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
        level = widest();
        return 1;
    }
    int asked = named(name);
    if (asked < 0 || !runs(asked)) return 0;
    level = asked;
    return 1;
}
