/* The ordering kernel for one element type T (topk.c includes this per type). */

typedef struct { T value; i64 position; } FN(entry);      /* an element of a row, where it was */

/* Whether entry a comes before entry b: by value, in the order asked (a NaN, the only value
 * unequal to itself, last ascending and first descending), then by position. */
static inline int FN(before)(FN(entry) a, FN(entry) b, int descending) {
    int a_nan = IS_NAN(a.value), b_nan = IS_NAN(b.value);
    if (a_nan != b_nan) return descending ? a_nan : b_nan;
    if (!a_nan && a.value != b.value) return descending ? a.value > b.value : a.value < b.value;
    return a.position < b.position;
}

/* The n entries of e ordered by FN(before): bottom-up merge sort through tmp (n entries). */
static void FN(merge_sort)(FN(entry) *e, FN(entry) *tmp, i64 n, int descending) {
    FN(entry) *src = e, *dst = tmp;
    for (i64 width = 1; width < n; width *= 2) {
        for (i64 lo = 0; lo < n; lo += 2 * width) {
            i64 mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            i64 i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = FN(before)(src[j], src[i], descending) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        FN(entry) *swap = src; src = dst; dst = swap;
    }
    if (src != e)
        for (i64 i = 0; i < n; i++) e[i] = src[i];
}

/* The n entries of e ordered by FN(before), as merge_sort orders them: a stable LSD radix
 * sort on the entries' keys (topk.c's RADIX_KEY, complemented descending), a byte at a
 * time through tmp (n entries), skipping each byte every key shares. Equal keys keep
 * their order, which is their positions' on entry: ties by position, as FN(before). */
static void FN(radix_sort)(FN(entry) *e, FN(entry) *tmp, i64 n, int descending) {
    i64 counts[sizeof(T)][256];
    uint64_t flip = descending ? ~(uint64_t)0 : 0;
    memset(counts, 0, sizeof counts);
    for (i64 i = 0; i < n; i++) {
        uint64_t key = RADIX_KEY(e[i].value) ^ flip;
        for (size_t b = 0; b < sizeof(T); b++) counts[b][(key >> (8 * b)) & 255]++;
    }
    FN(entry) *src = e, *dst = tmp;
    for (size_t b = 0; b < sizeof(T); b++) {
        i64 *start = counts[b];
        if (start[((RADIX_KEY(src[0].value) ^ flip) >> (8 * b)) & 255] == n) continue;   /* one digit: shared */
        for (i64 d = 0, sum = 0; d < 256; d++) {
            i64 count = start[d];
            start[d] = sum;
            sum += count;
        }
        for (i64 i = 0; i < n; i++)
            dst[start[((RADIX_KEY(src[i].value) ^ flip) >> (8 * b)) & 255]++] = src[i];
        FN(entry) *swap = src; src = dst; dst = swap;
    }
    if (src != e) memcpy(e, src, (size_t)n * sizeof(FN(entry)));
}

/* Move heap[at] down until neither child comes after it: the heap's top is the entry that
 * comes last of the k kept. */
static void FN(sift_down)(FN(entry) *heap, i64 k, i64 at, int descending) {
    for (;;) {
        i64 worst = at, left = 2 * at + 1, right = left + 1;
        if (left < k && FN(before)(heap[worst], heap[left], descending)) worst = left;
        if (right < k && FN(before)(heap[worst], heap[right], descending)) worst = right;
        if (worst == at) return;
        FN(entry) swap = heap[at]; heap[at] = heap[worst]; heap[worst] = swap;
        at = worst;
    }
}

/* The first k positions of the row x[first + i * inner] (n of them) in order, into e[0..k):
 * a heap of the k best so far, worst on top, which each later element replaces when it
 * comes first; the k kept then merge-sorted (tmp: k entries). */
static void FN(first_k)(const T *x, i64 first, i64 inner, i64 n, i64 k, FN(entry) *e, FN(entry) *tmp,
                        int descending) {
    for (i64 i = 0; i < k; i++) e[i] = (FN(entry)){x[first + i * inner], i};
    for (i64 i = k / 2 - 1; i >= 0; i--) FN(sift_down)(e, k, i, descending);
    for (i64 p = k; p < n; p++) {
        FN(entry) next = {x[first + p * inner], p};
        if (FN(before)(next, e[0], descending)) {
            e[0] = next;
            FN(sift_down)(e, k, 0, descending);
        }
    }
    FN(merge_sort)(e, tmp, k, descending);
}

int FN(tg_topk)(i64 outer, i64 size, i64 inner, i64 k, int descending, const T *view, T *values,
                i64 *indices) {
    i64 rows = outer * inner;
    int failed = 0, whole = k * 8 >= size;          /* most of the row: sort all of it */
    i64 kept = whole ? size : k;                    /* entries a thread holds for a row */
    if (rows == 0 || k == 0) return 0;
    #pragma omp parallel if (rows > 1 && rows * size >= TG_PARALLEL_MIN) reduction(|: failed)
    {
        FN(entry) *e = tg_alloc((size_t)kept * sizeof(FN(entry))), *tmp = tg_alloc((size_t)kept * sizeof(FN(entry)));
        int ok = e && tmp;
        failed |= !ok;
        #pragma omp for schedule(static)
        for (i64 row = 0; row < rows; row++) {
            if (!ok) continue;
            i64 first = row / inner * size * inner + row % inner;     /* the row's element 0 */
            i64 out = row / inner * k * inner + row % inner;
            if (whole) {
                for (i64 i = 0; i < size; i++) e[i] = (FN(entry)){view[first + i * inner], i};
                if (size >= RADIX_MIN) FN(radix_sort)(e, tmp, size, descending);
                else FN(merge_sort)(e, tmp, size, descending);
            } else {
                FN(first_k)(view, first, inner, size, k, e, tmp, descending);
            }
            for (i64 j = 0; j < k; j++) {
                values[out + j * inner] = e[j].value;
                indices[out + j * inner] = e[j].position;
            }
        }
        if (e) tg_free(e);
        if (tmp) tg_free(tmp);
    }
    return failed;
}

/* Move the entry that comes k-th (from 0) of the n entries of e to e[k]: quickselect, a
 * median-of-three pivot and Hoare's partition, O(n) expected; after 2 log2(n) rounds that
 * have not closed in, the range left is merge-sorted (tmp: n entries), so O(n log n) at
 * worst. The order is total (ties by position), so which entry lands at k does not depend
 * on the pivots. */
static void FN(select)(FN(entry) *e, FN(entry) *tmp, i64 n, i64 k) {
    i64 lo = 0, hi = n - 1;
    int rounds = 2;
    for (i64 m = n; m > 1; m /= 2) rounds += 2;
    while (lo < hi) {
        if (rounds-- == 0) {
            FN(merge_sort)(e + lo, tmp, hi - lo + 1, 0);
            return;
        }
        i64 mid = lo + (hi - lo) / 2;
        FN(entry) swap;
        if (FN(before)(e[mid], e[lo], 0)) { swap = e[mid]; e[mid] = e[lo]; e[lo] = swap; }
        if (FN(before)(e[hi], e[mid], 0)) { swap = e[hi]; e[hi] = e[mid]; e[mid] = swap; }
        if (FN(before)(e[mid], e[lo], 0)) { swap = e[mid]; e[mid] = e[lo]; e[lo] = swap; }
        FN(entry) pivot = e[mid];
        i64 i = lo, j = hi;
        while (i <= j) {
            while (FN(before)(e[i], pivot, 0)) i++;
            while (FN(before)(pivot, e[j], 0)) j--;
            if (i <= j) {
                swap = e[i]; e[i] = e[j]; e[j] = swap;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;                 /* e[lo..j] come before the pivot, e[i..hi] after */
        else if (k >= i) lo = i;
        else return;                        /* j < k < i: e[k] is the pivot, in its place */
    }
}

int FN(tg_kthvalue)(i64 outer, i64 size, i64 inner, i64 k, const T *view, T *values, i64 *indices) {
    i64 rows = outer * inner;
    int failed = 0;
    if (rows == 0) return 0;
    #pragma omp parallel if (rows > 1 && rows * size >= TG_PARALLEL_MIN) reduction(|: failed)
    {
        FN(entry) *e = tg_alloc((size_t)size * sizeof(FN(entry))), *tmp = tg_alloc((size_t)size * sizeof(FN(entry)));
        int ok = e && tmp;
        failed |= !ok;
        #pragma omp for schedule(static)
        for (i64 row = 0; row < rows; row++) {
            if (!ok) continue;
            i64 first = row / inner * size * inner + row % inner;     /* the row's element 0 */
            for (i64 i = 0; i < size; i++) e[i] = (FN(entry)){view[first + i * inner], i};
            FN(select)(e, tmp, size, k);
            values[row] = e[k].value;
            indices[row] = e[k].position;
        }
        if (e) tg_free(e);
        if (tmp) tg_free(tmp);
    }
    return failed;
}
