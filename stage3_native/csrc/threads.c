/* How many threads the kernels use (OpenMP). stage3_native sets it at import from
 * TRACEGRAD_NUM_THREADS (default: every core). A kernel parallelizes only work large
 * enough to pay for waking the threads: see TG_PARALLEL_MIN in tracegrad.h. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include "tracegrad.h"

void tg_set_num_threads(int n) {
#ifdef _OPENMP
    omp_set_num_threads(n > 0 ? n : 1);
#else
    (void)n;
#endif
}

int tg_num_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
