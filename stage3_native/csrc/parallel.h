/* Threads for the kernels: OpenMP when the compiler has it (build.py adds -fopenmp),
 * otherwise every loop simply runs on one thread. Handing work to another thread costs
 * microseconds when it is still spinning and tens of microseconds when it sleeps (see
 * GOMP_SPINCOUNT in stage3_native/__init__.py), so a kernel splits its work only above
 * TG_PARALLEL_MIN elements. threads.c sets the
 * thread count (TRACEGRAD_NUM_THREADS). */
#ifndef TG_PARALLEL_H
#define TG_PARALLEL_H
#include "tracegrad.h"
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

/* The calling thread's number within the enclosing parallel region (0 outside one). */
static inline int tg_thread_index(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* How many threads the enclosing parallel region has (1 outside one): OpenMP may give a
 * region fewer than it asked for. */
static inline int tg_team_size(void) {
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* The calling thread's share [lo, hi) of n items split evenly among the threads of the
 * enclosing parallel region (all of them outside one), boundaries rounded to multiples
 * of `align` items, so two threads never write into the same cache line (false sharing):
 * align 16 for elements of 4 bytes makes each boundary a 64-byte line boundary. */
static inline void tg_thread_range(i64 n, i64 align, i64 *lo, i64 *hi) {
#ifdef _OPENMP
    i64 t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    i64 t = 0, nt = 1;
#endif
    i64 blocks = (n + align - 1) / align;
    *lo = blocks * t / nt * align;
    *hi = blocks * (t + 1) / nt * align;
    if (*lo > n) *lo = n;
    if (*hi > n) *hi = n;
}
#endif
