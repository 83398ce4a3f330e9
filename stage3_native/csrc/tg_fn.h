/* TG_FN: how a per-element formula is declared so that every kind of kernel can call it.
 * The C kernels, the CUDA kernels (nvcc, or the host compiler for device "cuda-emu") and
 * the lazy backend's generated kernels include the same formula headers (elementwise_math.h,
 * optim_math.h, dropout_math.h, layernorm_math.h), so each formula is written once.
 *
 * Under nvcc a function runs on the GPU only if it says __device__, and on the CPU only if
 * it says __host__; a formula says both. In C it is always_inline: TG_SIMD (simd.h)
 * compiles a kernel once per instruction set, and a call it did not inline would run the
 * baseline instruction set's copy, one element at a time. */
#ifndef TG_FN_H
#define TG_FN_H
#if defined(__CUDACC__)
#define TG_FN static inline __host__ __device__
#else
#define TG_FN static inline __attribute__((always_inline))
#endif

/* Device "cuda" and "cuda-emu" compile the same .cu source; either way the formulas call
 * the math library's functions (expf), which the GPU has in hardware, where the C kernels
 * call vmath.h's vectorizable ones (tg_expf). */
#if defined(__CUDACC__) || defined(TG_CUDA_EMULATE)
#define TG_CUDA_SOURCE 1
#endif
#endif
