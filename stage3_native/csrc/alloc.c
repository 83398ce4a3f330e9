/* The caching allocator behind every cpu tensor's memory (the performance chapter).
 *
 * Why: a fresh block from the operating system costs a page fault, about a microsecond,
 * for each 4 KiB page the first time it is touched, and malloc hands large blocks back to
 * the system on free. A training loop asks for the same sizes every step, so it would pay
 * those faults every step: for a 64 MiB tensor that is longer than adding two of them.
 * Keeping freed blocks and handing them out again makes a repeated size free of faults.
 *
 * How: sizes are rounded up to a size class (a power of two up to 1 MiB, a multiple of
 * 2 MiB above). A freed block goes onto its class's list; tg_alloc takes from that list
 * before asking the system. Large blocks are 2 MiB aligned and advised as huge pages, so
 * even their first touch faults once per 2 MiB rather than once per 4 KiB. The cache keeps
 * at most CACHE_LIMIT bytes; beyond that, freed blocks go back to the system.
 * Memory is uninitialized (cpu/backend.py asks cffi to zero it where zeros are needed).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include "tracegrad.h"

/* Under AddressSanitizer (make sanitize) the cache is bypassed: every buffer is its own
 * allocation of exactly the bytes asked for, so ASan sees a read past its end (a size
 * class rounded up would hide it) and a use after free (a cached block stays valid). */
#if defined(__SANITIZE_ADDRESS__)
#define TG_ALLOC_UNCACHED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_ALLOC_UNCACHED 1
#endif
#endif

#define HEADER 64                         /* keeps the returned pointer 64-byte aligned */
#define SMALL_LIMIT ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define CACHE_LIMIT ((size_t)1 << 30)
#define N_SMALL 21                        /* classes 64 B .. 1 MiB */
#define N_LARGE 64                        /* distinct large sizes kept */

typedef struct Block { size_t size; struct Block *next; } Block;

static Block *small_free[N_SMALL];        /* one list per power of two */
static Block *large_free[N_LARGE];        /* one list per large size seen (sizes below) */
static size_t large_size[N_LARGE];
static size_t cached_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int small_class(size_t n) {        /* smallest c with 64 << c >= n */
    int c = 0;
    while (((size_t)64 << c) < n) c++;
    return c;
}

static Block **free_list(size_t size, int create) {
    if (size <= SMALL_LIMIT) return &small_free[small_class(size)];
    for (int i = 0; i < N_LARGE; i++)
        if (large_size[i] == size) return &large_free[i];
    if (create)
        for (int i = 0; i < N_LARGE; i++)
            if (large_free[i] == NULL) { large_size[i] = size; return &large_free[i]; }
    return NULL;
}

static Block *from_system(size_t size) {
    void *p = NULL;
    if (size <= SMALL_LIMIT)                  /* malloc alone would give 16-byte alignment */
        return posix_memalign(&p, HEADER, size) == 0 ? p : NULL;
    if (posix_memalign(&p, HUGE_PAGE, size) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void *tg_alloc(size_t nbytes) {
#ifdef TG_ALLOC_UNCACHED
    void *p = NULL;
    return posix_memalign(&p, HEADER, nbytes ? nbytes : 1) == 0 ? p : NULL;
#endif
    size_t need = nbytes + HEADER, size;
    size = need <= SMALL_LIMIT ? (size_t)64 << small_class(need)
                               : (need + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    pthread_mutex_lock(&lock);
    Block **list = free_list(size, 0), *b = list ? *list : NULL;
    if (b) { *list = b->next; cached_bytes -= size; }
    pthread_mutex_unlock(&lock);
    if (b == NULL && (b = from_system(size)) == NULL) return NULL;
    b->size = size;
    return (char *)b + HEADER;
}

void tg_free(void *p) {
    if (p == NULL) return;
#ifdef TG_ALLOC_UNCACHED
    free(p);
    return;
#endif
    Block *b = (Block *)((char *)p - HEADER);
    pthread_mutex_lock(&lock);
    Block **list = cached_bytes + b->size <= CACHE_LIMIT ? free_list(b->size, 1) : NULL;
    if (list) { b->next = *list; *list = b; cached_bytes += b->size; }
    pthread_mutex_unlock(&lock);
    if (list == NULL) free(b);
}

void tg_alloc_trim(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < N_SMALL + N_LARGE; i++) {
        Block **list = i < N_SMALL ? &small_free[i] : &large_free[i - N_SMALL];
        while (*list) { Block *b = *list; *list = b->next; free(b); }
    }
    memset(large_size, 0, sizeof large_size);
    cached_bytes = 0;
    pthread_mutex_unlock(&lock);
}
