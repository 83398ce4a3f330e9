/* Threads for the kernels: OpenMP when the compiler has it (build.py adds -fopenmp),
 * otherwise every loop simply runs on one thread. Waking threads costs a few microseconds,
 * so a kernel splits its work only above TG_PARALLEL_MIN elements. threads.c sets the
 * thread count (TRACEGRAD_NUM_THREADS). */
#ifndef TG_PARALLEL_H
#define TG_PARALLEL_H
#ifdef _OPENMP
#include <omp.h>
#endif

#define TG_PARALLEL_MIN 65536

static inline int tg_thread_count(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
#endif
