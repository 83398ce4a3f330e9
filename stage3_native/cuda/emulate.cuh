/* CUDA's execution model on the CPU, so that a machine without a GPU (CI, a reader's
 * laptop) runs the very kernel source the GPU runs: device "cuda-emu" (chapter on native
 * kernels, section "CUDA").
 *
 * cuda_build.py compiles the .cu files with the host C++ compiler and -DTG_CUDA_EMULATE,
 * and runtime.cuh includes this header instead of cuda_runtime.h. A kernel launch runs the
 * grid one block after another. Each thread of a block is a fiber, a function with a stack
 * of its own: it runs until it ends or reaches __syncthreads(), which switches back to the
 * block's scheduler; once every thread of the block has arrived, they all go on. That is
 * what a barrier means, so kernels that share memory through __shared__ arrays (tiled
 * matmul, tree reductions) work unchanged, one thread at a time. __shared__ becomes
 * `static`: one copy per kernel that every fiber of the running block sees, as the threads
 * of a block share theirs.
 *
 * What this checks is the kernels' logic: indexing, tiling, barriers, grid-stride loops.
 * It says nothing about speed, and it runs threads in a fixed order, so a race that a GPU
 * would show can pass here; the GPU runs of the suite (device "cuda") are the real test.
 * TRACEGRAD_CUDA_EMU_ORDER=reverse (read once, when the library loads) runs every block's
 * threads, and the grid's blocks, last to first instead. A thread that reads what another
 * writes between the same two barriers (a missing __syncthreads, a warp assumed to run in
 * lockstep) or a block that counts on another having run sees the other's old value in one
 * of the two orders, so a kernel must give the same results in both (tests/
 * test_stage3_cuda_emulator.py runs the kernel tests so).
 * Launches are serialized by a mutex: one grid at a time, like a single CUDA stream.
 * -DTG_EMU_UCONTEXT switches fibers with ucontext on x86-64 Linux too (see start()). */
#ifndef TG_EMULATE_CUH
#define TG_EMULATE_CUH
#include <cmath>
#include <math.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)                    /* a register budget for nvcc: nothing here */

/* CUDA's 128-bit vector of floats (matmul's vectorized kernel): 16-byte aligned as on the
 * GPU, and may_alias because a kernel reads float arrays through it, which CUDA allows and
 * the host compiler's type-based alias analysis otherwise would not. */
struct __attribute__((aligned(16), may_alias)) float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
namespace emu {
/* A GPU faults on a vector access not aligned to its size ("misaligned address"); the CPU
 * would read the right values anyway. Kernels' vector accesses call this here (matmul.cu's
 * as_float4), so that the emulator stops where the GPU would. */
inline void check_aligned(const void *p, size_t bytes) {
    if ((uintptr_t)p % bytes == 0) return;
    std::fprintf(stderr, "emulate.cuh: misaligned address %p for a %zu-byte vector access\n", p, bytes);
    std::abort();
}
}  // namespace emu

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace emu {
inline dim3 thread_idx, block_idx, block_dim, grid_dim;   /* what the running fiber sees */
inline std::vector<char> done;
inline std::vector<char> stacks;
inline int current;
inline std::function<void()> body;                          /* the kernel, arguments bound */
inline std::mutex one_grid_at_a_time;
constexpr size_t STACK = 64 << 10;

inline bool in_fiber;                                       /* false: a plain call (see run_block) */
inline const bool reverse_order = [] {
    const char *order = std::getenv("TRACEGRAD_CUDA_EMU_ORDER");
    return order && std::strcmp(order, "reverse") == 0;
}();

/* ---- fibers: a stack per thread, and switching between stacks ----------------------------
 * start(t) readies thread t to run the kernel from the top of its own stack, resume(t)
 * runs it until it reaches a barrier or ends, pause() (a barrier) goes back to the
 * scheduler. On x86-64 Linux a switch is a dozen instructions of our own: push the
 * registers a function must preserve, store the stack pointer, load the other one, pop
 * its registers, return into it. ucontext's swapcontext, used elsewhere, also saves the
 * signal mask, a system call per switch: far too slow for kernels that switch at every
 * barrier. */
#if defined(__x86_64__) && defined(__linux__) && !defined(TG_EMU_UCONTEXT)
extern "C" void tg_emu_switch(void **save_sp, void *next_sp);
__asm__(".text\n"
        ".weak tg_emu_switch\n"             /* each file includes this header: one copy is kept */
        ".hidden tg_emu_switch\n"
        ".type tg_emu_switch, @function\n"
        "tg_emu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n");

inline void *scheduler_sp;
inline std::vector<void *> fiber_sp;

inline void fiber_entry() {
    body();
    done[current] = 1;
    tg_emu_switch(&fiber_sp[current], scheduler_sp);        /* never resumed */
}

inline void start(unsigned t) {
    if (fiber_sp.size() < done.size()) fiber_sp.resize(done.size());
    /* The stack as tg_emu_switch leaves one: six saved registers, then the address it
     * returns to, fiber_entry's first instruction, on a 16-byte boundary (the ABI's
     * alignment at a call), then fiber_entry's own return address, which it never uses. */
    uintptr_t top = (uintptr_t)(stacks.data() + (t + 1) * STACK) & ~(uintptr_t)15;
    void **frame = (void **)(top - 16);
    frame[1] = nullptr;
    frame[0] = (void *)&fiber_entry;
    for (int r = 1; r <= 6; r++) frame[-r] = nullptr;
    fiber_sp[t] = frame - 6;
}
inline void resume(unsigned t) { tg_emu_switch(&scheduler_sp, fiber_sp[t]); }
inline void pause() { tg_emu_switch(&fiber_sp[current], scheduler_sp); }
#else
inline ucontext_t scheduler;
inline std::vector<ucontext_t> fibers;

inline void fiber_entry() {
    body();
    done[current] = 1;                                      /* uc_link returns to the scheduler */
}

inline void start(unsigned t) {
    if (fibers.size() < done.size()) fibers.resize(done.size());
    getcontext(&fibers[t]);
    fibers[t].uc_stack.ss_sp = stacks.data() + t * STACK;
    fibers[t].uc_stack.ss_size = STACK;
    fibers[t].uc_link = &scheduler;
    makecontext(&fibers[t], fiber_entry, 0);
}
inline void resume(unsigned t) { swapcontext(&scheduler, &fibers[t]); }
inline void pause() { swapcontext(&fibers[current], &scheduler); }
#endif

inline void set_thread(unsigned t) {
    current = (int)t;
    thread_idx = dim3(t % block_dim.x, t / block_dim.x % block_dim.y, t / (block_dim.x * block_dim.y));
}

/* Every thread of the block until all have ended. Thread 0 runs first, as a fiber: if it
 * ends without reaching a barrier, the kernel has none on its path (every thread of a
 * block must reach each __syncthreads), and the others run as plain calls, which costs far
 * less than switching stacks. Otherwise every thread becomes a fiber, and each pass
 * resumes every live thread once: it runs to its next __syncthreads() (or its end), so
 * after a pass all live threads wait at the same barrier. In reverse order every thread
 * is a fiber from the start and each pass runs them from the last to the first. */
inline void run_block(unsigned n) {
    if (done.size() < n) {
        done.resize(n);
        stacks.resize(n * STACK);
    }
    for (unsigned t = 0; t < n; t++) done[t] = 0;
    in_fiber = true;
    unsigned first = 0;                                     /* the first pass starts here */
    if (!reverse_order) {
        start(0);
        set_thread(0);
        resume(0);
        if (done[0]) {                                      /* no barrier: plain calls */
            in_fiber = false;
            for (unsigned t = 1; t < n; t++) {
                set_thread(t);
                body();
            }
            return;
        }
        /* Thread 0 already waits at the first barrier: the first pass starts at thread 1,
         * so that no thread runs a barrier ahead of the others. */
        first = 1;
    }
    for (unsigned t = first; t < n; t++) start(t);
    for (unsigned live = n; live > 0; first = 0) {
        for (unsigned i = first; i < n; i++) {
            unsigned t = reverse_order ? n - 1 - i : i;
            if (done[t]) continue;
            set_thread(t);
            resume(t);
            if (done[t]) live--;
        }
    }
}

/* emu::launch(grid, block, kernel)(arguments...): what kernel<<<grid, block>>>(arguments...) does */
template <typename Kernel>
struct Launch {
    dim3 grid, block;
    Kernel kernel;
    template <typename... Args>
    void operator()(Args... args) const {
        std::lock_guard<std::mutex> lock(one_grid_at_a_time);
        grid_dim = grid;
        block_dim = block;
        body = [&] { kernel(args...); };
        unsigned blocks = grid.x * grid.y * grid.z;
        for (unsigned i = 0; i < blocks; i++) {
            unsigned b = reverse_order ? blocks - 1 - i : i;
            block_idx = dim3(b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y));
            run_block(block.x * block.y * block.z);
        }
        body = nullptr;
    }
};
template <typename Kernel>
Launch<Kernel> launch(dim3 grid, dim3 block, Kernel kernel) { return Launch<Kernel>{grid, block, kernel}; }
}  // namespace emu

#define threadIdx emu::thread_idx
#define blockIdx emu::block_idx
#define blockDim emu::block_dim
#define gridDim emu::grid_dim

inline void __syncthreads() {
    if (!emu::in_fiber) {       /* thread 0 passed no barrier, yet this thread reached one */
        std::fprintf(stderr, "emulate.cuh: __syncthreads() reached by thread %d but not by thread 0 "
                             "of the block (a barrier every thread of a block must reach)\n", emu::current);
        std::abort();
    }
    emu::pause();
}

/* Atomics: fibers switch only at barriers, so a plain read-modify-write is atomic here. */
template <typename T> inline T atomicAdd(T *address, T value) { T old = *address; *address = old + value; return old; }
template <typename T> inline T atomicMin(T *address, T value) { T old = *address; if (value < old) *address = value; return old; }
template <typename T> inline T atomicMax(T *address, T value) { T old = *address; if (value > old) *address = value; return old; }
template <typename T> inline T atomicOr(T *address, T value) { T old = *address; *address = old | value; return old; }
template <typename T> inline T atomicCAS(T *address, T compare, T value) {
    T old = *address;
    if (old == compare) *address = value;
    return old;
}

/* The runtime API calls memory.cu makes, on host memory. */
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
inline cudaError_t cudaMalloc(void **p, size_t bytes) {
    *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);   /* cudaMalloc aligns to 256 */
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
}
inline cudaError_t cudaMemset(void *p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
inline const char *cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory" : "invalid argument";
}
#endif
