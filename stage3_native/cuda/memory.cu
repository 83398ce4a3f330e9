/* Devices, memory and copies for device "cuda" (chapter on native kernels, section "CUDA").
 *
 * cudaMalloc and cudaFree are slow (cudaFree waits for the GPU to finish everything), and
 * a training step allocates and frees the same sizes every step. So, like PyTorch's CUDA
 * allocator, freed blocks are kept in lists by size and handed out again: after the first
 * step, a step costs no cudaMalloc at all. Every kernel runs on the default stream, in
 * order, so a block freed here can be reused by the next kernel at once: the kernels that
 * read it before were queued before it.
 *
 * TRACEGRAD_CUDA_NO_CACHING=1 (read once, when the library loads) turns the cache off, as
 * PYTORCH_NO_CUDA_MEMORY_CACHING does PyTorch's: every block is exactly the bytes asked for
 * and goes back to cudaFree at once. Slower, but then a kernel that reads or writes past a
 * tensor's last byte leaves the allocation, where compute-sanitizer's memcheck sees it; in
 * a rounded-up or recycled block the same bug would touch memory memcheck counts as valid
 * (.ci/gpu runs the sanitizer so). */
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>
#include "runtime.cuh"

static std::mutex lock;
static std::map<size_t, std::vector<void *>> cached;     /* free blocks by size */
static std::unordered_map<void *, size_t> in_use;         /* live blocks and their sizes */
static size_t allocated, reserved;
static const bool caching = [] {
    const char *off = std::getenv("TRACEGRAD_CUDA_NO_CACHING");
    return !(off && std::strcmp(off, "1") == 0);
}();

/* Small sizes round up to 512 bytes, larger ones to 1 MiB: a few sizes reused often. */
static size_t block_size(size_t bytes) {
    if (!caching) return bytes == 0 ? 1 : bytes;
    size_t unit = bytes <= (1 << 20) ? 512 : (1 << 20);
    return bytes == 0 ? unit : (bytes + unit - 1) / unit * unit;
}

static int release_cached(void) {
    int status = cudaSuccess;
    for (auto &entry : cached)
        for (void *p : entry.second) {
            int s = (int)cudaFree(p);
            if (s != cudaSuccess) status = s;
            reserved -= entry.first;
        }
    cached.clear();
    return status;
}

extern "C" {

int tg_cuda_device_count(int *count) {
    *count = 0;
    int status = (int)cudaGetDeviceCount(count);
    if (status != cudaSuccess) *count = 0;
    return status;
}

int tg_cuda_device_name(char *name, int length) {
#ifdef TG_CUDA_EMULATE
    std::strncpy(name, "CPU (tracegrad's CUDA emulator, emulate.cuh)", length - 1);
    name[length - 1] = 0;
    return cudaSuccess;
#else
    cudaDeviceProp prop;
    int status = (int)cudaGetDeviceProperties(&prop, 0);
    if (status == cudaSuccess) {
        std::strncpy(name, prop.name, length - 1);
        name[length - 1] = 0;
    }
    return status;
#endif
}

const char *tg_cuda_error_string(int status) { return cudaGetErrorString((cudaError_t)status); }

int tg_cuda_synchronize(void) { return (int)cudaDeviceSynchronize(); }

void *tg_cuda_malloc(size_t bytes, int *status) {
    size_t size = block_size(bytes);
    std::lock_guard<std::mutex> guard(lock);
    void *p = nullptr;
    auto found = cached.find(size);
    if (found != cached.end() && !found->second.empty()) {
        p = found->second.back();
        found->second.pop_back();
        *status = cudaSuccess;
    } else {
        *status = (int)cudaMalloc(&p, size);
        if (*status != cudaSuccess) {            /* out of memory: free the cache, try again */
            cudaGetLastError();
            release_cached();
            *status = (int)cudaMalloc(&p, size);
        }
        if (*status != cudaSuccess) return nullptr;
        reserved += size;
    }
    in_use[p] = size;
    allocated += size;
    return p;
}

void tg_cuda_free(void *p) {
    std::lock_guard<std::mutex> guard(lock);
    auto found = in_use.find(p);
    if (found == in_use.end()) return;
    allocated -= found->second;
    if (caching) {
        cached[found->second].push_back(p);
    } else {
        cudaFree(p);
        reserved -= found->second;
    }
    in_use.erase(found);
}

size_t tg_cuda_memory_allocated(void) { return allocated; }
size_t tg_cuda_memory_reserved(void) { return reserved; }

int tg_cuda_empty_cache(void) {
    std::lock_guard<std::mutex> guard(lock);
    return release_cached();
}

/* cudaMemcpy waits for the kernels queued before it: a copy to the host sees their results. */
int tg_cuda_to_device(void *dst, const void *src, size_t bytes) {
    return bytes ? (int)cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) : 0;
}

int tg_cuda_to_host(void *dst, const void *src, size_t bytes) {
    return bytes ? (int)cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) : 0;
}

}  // extern "C"

/* The device word index-checking kernels write the smallest bad position into (runtime.cuh).
 * It is reset by a one-thread kernel rather than a copy from the host: only the answer
 * travels, 8 bytes back after the checking kernel. */
static i64 *bad_word;

__global__ void reset_bad_index(i64 *word) { *word = NO_BAD_INDEX; }

i64 *bad_index_word(void) {
    if (!bad_word) {
        int status;
        bad_word = (i64 *)tg_cuda_malloc(sizeof(i64), &status);
    }
    if (bad_word) LAUNCH(1, 1, reset_bad_index)(bad_word);
    return bad_word;
}

i64 read_bad_index(int *status) {
    i64 bad = NO_BAD_INDEX;
    *status = (int)cudaGetLastError();                      /* the checking kernel's launch */
    if (*status == cudaSuccess)
        *status = bad_word ? (int)cudaMemcpy(&bad, bad_word, sizeof(i64), cudaMemcpyDeviceToHost)
                           : (int)cudaErrorMemoryAllocation;
    return bad == NO_BAD_INDEX ? -1 : bad;
}
