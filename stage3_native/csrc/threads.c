/* How many threads the kernels use (OpenMP). stage3_native sets it at import from
 * TRACEGRAD_NUM_THREADS (default: every core). A kernel parallelizes only work large
 * enough to pay for waking the threads: see TG_PARALLEL_MIN in tracegrad.h. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <time.h>
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

/* What a parallel region costs (benchmarks/gemm.py --wakeup; gemm.c, "Threads"): the
 * threads idle for idle_seconds (the calling thread sleeps: the others wait in OpenMP's
 * pool as between two kernels), then a region that does nothing, so its time is the
 * hand-off alone: waking or signalling the workers and the join. Between kernels OpenMP's
 * idle workers spin for a while (GOMP_SPINCOUNT, OMP_WAIT_POLICY), then sleep in the
 * kernel: a short gap finds them spinning, a long one asleep. */
static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

volatile int tg_parallel_sink;                  /* the region's one write, so it is kept */

double tg_parallel_region_seconds(int threads, double idle_seconds) {
    if (idle_seconds > 0) {
        double end = seconds_now() + idle_seconds;
        if (idle_seconds >= 50e-6) {            /* long gaps: sleep (nanosleep's own slack) */
            struct timespec gap = {(time_t)idle_seconds, (long)((idle_seconds - (double)(time_t)idle_seconds) * 1e9)};
            nanosleep(&gap, NULL);
        }
        while (seconds_now() < end) {}          /* short ones (and the rest): wait exactly */
    }
    double start = seconds_now();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        if (omp_get_thread_num() == 0) tg_parallel_sink = omp_get_num_threads();
    }
#else
    (void)threads;
    tg_parallel_sink = 1;
#endif
    return seconds_now() - start;
}
