/* TinyBLAS's packed driver for one element type T (included by gemm.c for float and
 * double; FN(name) gives name_f32 or name_f64). The design is explained in gemm.c. */

typedef struct {
    i64 m, n, k;
    const T *a;
    i64 sa_i, sa_p;             /* a[i, p] = a[i * sa_i + p * sa_p] */
    const T *b;
    i64 sb_p, sb_j;             /* b[p, j] = b[p * sb_p + j * sb_j] */
    const T *bias;              /* NULL, or n values added to every row of out */
    T *out;                     /* m x n, row-major: out[i, j] = out[i * ldc + j] */
    i64 ldc;
    /* NULL (the eager products leave it out), or called with each block of out once it is
     * final (tracegrad.h's tg_epilogue), its rows and columns counted from the whole
     * product's corner: out[0, 0] here is element (row0, col0) of it (a thread's block is a
     * Problem of its own) */
    tg_epilogue epilogue;
    void *ctx;
    i64 row0, col0;
} FN(Problem);

/* ---- packing ------------------------------------------------------------------------
 * Copy a block of an operand into the order the micro-kernel reads it: one micro-panel
 * after another, each a run of kc steps of `width` values (gemm.h: the same job for A and
 * B). The copy reads any strides, so a transposed or sliced operand costs what a
 * contiguous one does; a panel running past the operand's edge is padded with zeros
 * (those rows or columns compute zeros, and are never written back). */

/* The portable packer: dst[p * width + l] = x[p * s_step + l * s_lane], l < lanes. */
static void FN(pack_panel)(int width, int lanes, i64 kc, const T *x, i64 s_step, i64 s_lane,
                           T *dst) {
    if (s_lane == 1) {                          /* a step's values are side by side */
        for (i64 p = 0; p < kc; p++, dst += width) {
            const T *run = x + p * s_step;
            for (int l = 0; l < lanes; l++) dst[l] = run[l];
            for (int l = lanes; l < width; l++) dst[l] = 0;
        }
        return;
    }
    for (int l = 0; l < width; l++) {           /* else walk each lane along k: reads */
        const T *lane = x + l * s_lane;         /* in order when s_step is 1 */
        for (i64 p = 0; p < kc; p++) dst[p * width + l] = l < lanes ? lane[p * s_step] : 0;
    }
}

/* Panels [first, last) of an operand with `size` lanes, each at dst + panel * width * kc:
 * the kernel's SIMD packer where it has one and can, the portable one otherwise. */
static void FN(pack_panels)(const FN(GemmKernel) *kr, int width, i64 first, i64 last,
                            i64 size, i64 kc, const T *x, i64 s_step, i64 s_lane, T *dst) {
    for (i64 q = first; q < last; q++) {
        i64 l0 = q * width;
        int lanes = size - l0 < width ? (int)(size - l0) : width;
        const T *src = x + l0 * s_lane;
        T *panel = dst + l0 * kc;
        if (!(kr->pack && kr->pack(width, lanes, kc, src, s_step, s_lane, panel)))
            FN(pack_panel)(width, lanes, kc, src, s_step, s_lane, panel);
    }
}

/* ---- the macro-kernel: one packed block of A against one packed block of B -----------
 * jr walks the B panels (each stays in L1 while ir walks every A panel under it). */

/* A tile at the bottom or right edge. With all nr columns, the kernel's row-edge variant
 * computes just the rows there are; otherwise the tile is computed whole into a scratch
 * tile and only its rows x cols corner is written back (with the same accumulate and bias
 * as the kernel). */
static void FN(edge_tile)(const FN(GemmKernel) *kr, int rows, int cols, i64 kc, const T *ap,
                          const T *bp, T *c, i64 ldc, const T *bias, int accumulate) {
    if (cols == kr->nr && kr->run_rows) {
        kr->run_rows(rows, kc, ap, bp, c, ldc, bias, accumulate);
        return;
    }
    T tile[TG_GEMM_MAX_MR * TG_GEMM_MAX_NR] __attribute__((aligned(64)));
    kr->run(kc, ap, bp, tile, kr->nr, NULL, 0);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) {
            T v = tile[r * kr->nr + j];
            if (accumulate) v += c[r * ldc + j];
            if (bias) v += bias[j];
            c[r * ldc + j] = v;
        }
}

static void FN(macro_kernel)(const FN(GemmKernel) *kr, i64 mc, i64 nc, i64 kc, const T *a_pack,
                             const T *b_pack, T *c, i64 ldc, const T *bias, int accumulate) {
    int mr = kr->mr, nr = kr->nr;
    for (i64 jr = 0; jr < nc; jr += nr) {
        int cols = nc - jr < nr ? (int)(nc - jr) : nr;
        const T *bp = b_pack + jr * kc, *bias_j = bias ? bias + jr : NULL;
        for (i64 ir = 0; ir < mc; ir += mr) {
            int rows = mc - ir < mr ? (int)(mc - ir) : mr;
            const T *ap = a_pack + ir * kc;
            T *cp = c + ir * ldc + jr;
            if (rows == mr && cols == nr) kr->run(kc, ap, bp, cp, ldc, bias_j, accumulate);
            else FN(edge_tile)(kr, rows, cols, kc, ap, bp, cp, ldc, bias_j, accumulate);
        }
    }
}

/* ---- the five loops, on one thread ----------------------------------------------------- */

/* The block size for cutting `size` into equal blocks of at most `most` (a multiple of
 * `unit`), rounded up to `unit`: k = 784 in blocks of 196 rather than 256, 256, 256, 16. */
static i64 FN(even_block)(i64 size, i64 most, int unit) {
    i64 blocks = (size + most - 1) / most;
    i64 block = (size + blocks - 1) / blocks;
    return (block + unit - 1) / unit * unit;
}

/* Packing buffers for a product, in elements: one block each (even_block never exceeds the
 * kernel's sizes), plus the slack SIMD packers may write into (gemm.h). */
static i64 FN(b_pack_size)(const FN(GemmKernel) *kr, i64 n, i64 k) {
    i64 nc = n < kr->nc ? n : kr->nc, kc = k < kr->kc ? k : kr->kc;
    return (nc + kr->nr - 1) / kr->nr * kr->nr * kc + TG_GEMM_PACK_SLACK;
}

static i64 FN(a_pack_size)(const FN(GemmKernel) *kr, i64 m, i64 k) {
    i64 mc = m < kr->mc ? m : kr->mc, kc = k < kr->kc ? k : kr->kc;
    return (mc + kr->mr - 1) / kr->mr * kr->mr * kc + TG_GEMM_PACK_SLACK;
}

/* out = a @ b (+ bias): jc, pc, ic here, jr and ir in the macro-kernel (gemm.c's diagram).
 * A block of out is final after the last pass over k: the epilogue, if any, runs on it
 * then, while the macro-kernel's stores are still in cache. */
static void FN(gemm_serial)(const FN(GemmKernel) *kr, const FN(Problem) *g, T *b_pack,
                            T *a_pack) {
    i64 nc_block = FN(even_block)(g->n, kr->nc, kr->nr);
    i64 kc_block = FN(even_block)(g->k, kr->kc, 1);
    i64 mc_block = FN(even_block)(g->m, kr->mc, kr->mr);
    for (i64 jc = 0; jc < g->n; jc += nc_block) {
        i64 nc = g->n - jc < nc_block ? g->n - jc : nc_block;
        for (i64 pc = 0; pc < g->k; pc += kc_block) {
            i64 kc = g->k - pc < kc_block ? g->k - pc : kc_block;
            int first = pc == 0;                /* first pass over k: store, add the bias */
            int last = pc + kc == g->k;         /* last pass: the block is final */
            FN(pack_panels)(kr, kr->nr, 0, (nc + kr->nr - 1) / kr->nr, nc, kc,
                            g->b + pc * g->sb_p + jc * g->sb_j, g->sb_p, g->sb_j, b_pack);
            for (i64 ic = 0; ic < g->m; ic += mc_block) {
                i64 mc = g->m - ic < mc_block ? g->m - ic : mc_block;
                FN(pack_panels)(kr, kr->mr, 0, (mc + kr->mr - 1) / kr->mr, mc, kc,
                                g->a + ic * g->sa_i + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                FN(macro_kernel)(kr, mc, nc, kc, a_pack, b_pack, g->out + ic * g->ldc + jc,
                                 g->ldc, first && g->bias ? g->bias + jc : NULL, !first);
                if (last && g->epilogue) g->epilogue(g->ctx, g->row0 + ic, mc, g->col0 + jc, nc);
            }
        }
    }
}

/* Buffers from the caching allocator (no page faults after the first product), then the
 * five loops. */
static void FN(gemm_with_buffers)(const FN(GemmKernel) *kr, const FN(Problem) *g) {
    T *b_pack = tg_alloc(sizeof(T) * FN(b_pack_size)(kr, g->n, g->k));
    T *a_pack = tg_alloc(sizeof(T) * FN(a_pack_size)(kr, g->m, g->k));
    FN(gemm_serial)(kr, g, b_pack, a_pack);
    tg_free(a_pack);
    tg_free(b_pack);
}

/* ---- threads: one block of out each ------------------------------------------------------
 * out is cut into a grid of t_m x t_n blocks (bands of rows, a multiple of mr, times bands
 * of columns, a multiple of nr), and each thread computes its block with the one-thread
 * loops above and its own packing buffers: out[rows, cols] = a[rows, :] @ b[:, cols]. The
 * threads share nothing but the operands they read, so they never wait for each other
 * until the end. The price: each thread packs its rows of A and its columns of B, so with
 * t_n bands of columns A is packed t_n times (and B t_m times). Cutting the longer side
 * of out keeps that small: for m = 128, n = 784 (a batch of 128 times Linear's 784
 * inputs) each thread packs all 128 rows of A, a few percent of its work. */
typedef struct { i64 lo, hi; } FN(Range);

/* Part `part` of `parts` of [0, size), cut at multiples of `unit`. */
static FN(Range) FN(share)(i64 size, int unit, int part, int parts) {
    i64 units = (size + unit - 1) / unit;
    FN(Range) r = {units * part / parts * unit, units * (part + 1) / parts * unit};
    if (r.hi > size) r.hi = size;
    if (r.lo > size) r.lo = size;
    return r;
}

/* How many bands of rows (t_m; t_n = threads / t_m): the longer side of out is cut, when it
 * has a micro-tile for every thread; otherwise the grid that gives the busiest thread the
 * fewest micro-tiles. */
static int FN(row_bands)(const FN(GemmKernel) *kr, i64 m, i64 n, int threads) {
    i64 tiles_m = (m + kr->mr - 1) / kr->mr, tiles_n = (n + kr->nr - 1) / kr->nr;
    if (n >= m && tiles_n >= threads) return 1;
    if (m > n && tiles_m >= threads) return threads;
    int best = 1;
    i64 best_cost = -1;
    for (int t_m = 1; t_m <= threads; t_m++) {
        if (threads % t_m) continue;
        int t_n = threads / t_m;
        i64 cost = ((tiles_m + t_m - 1) / t_m) * ((tiles_n + t_n - 1) / t_n);
        if (best_cost < 0 || cost < best_cost) best = t_m, best_cost = cost;
    }
    return best;
}

/* Thread `id`'s block of out, as a product of its own (empty when there are more threads
 * than micro-tiles). */
static FN(Problem) FN(block_of)(const FN(GemmKernel) *kr, const FN(Problem) *g, int id,
                                int threads, int t_m) {
    int t_n = threads / t_m;
    FN(Range) rows = FN(share)(g->m, kr->mr, id / t_n, t_m);
    FN(Range) cols = FN(share)(g->n, kr->nr, id % t_n, t_n);
    FN(Problem) block = *g;
    block.m = rows.hi - rows.lo;
    block.n = cols.hi - cols.lo;
    block.a = g->a + rows.lo * g->sa_i;
    block.b = g->b + cols.lo * g->sb_j;
    block.bias = g->bias ? g->bias + cols.lo : NULL;
    block.out = g->out + rows.lo * g->ldc + cols.lo;
    block.row0 = g->row0 + rows.lo;
    block.col0 = g->col0 + cols.lo;
    return block;
}

/* out = a @ b (+ bias) for one matrix, on up to `threads` threads. */
static void FN(gemm_one)(const FN(GemmKernel) *kr, const FN(Problem) *g, int threads) {
    if (threads <= 1) {
        FN(gemm_with_buffers)(kr, g);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int id = 0, team = 1;
#ifdef _OPENMP
        id = omp_get_thread_num();
        team = omp_get_num_threads();
#endif
        FN(Problem) block = FN(block_of)(kr, g, id, team, FN(row_bands)(kr, g->m, g->n, team));
        if (block.m > 0 && block.n > 0) FN(gemm_with_buffers)(kr, &block);
    }
}

/* out = bias on every row (or zeros): the product when k is 0. */
static void FN(fill_bias)(i64 m, i64 n, const T *bias, T *out) {
    for (i64 i = 0; i < m; i++)
        for (i64 j = 0; j < n; j++) out[i * n + j] = bias ? bias[j] : 0;
}

/* The threads for `work` multiply-adds: one below GEMM_PARALLEL_MIN (gemm.c). */
static int FN(threads_for)(double work) {
    return work < GEMM_PARALLEL_MIN ? 1 : tg_thread_count();
}

void FN(tg_gemm)(i64 batch, const i64 *a_base, const i64 *b_base, i64 m, i64 n, i64 k,
                 const T *a, i64 sa_i, i64 sa_p, const T *b, i64 sb_p, i64 sb_j,
                 const T *bias, T *out) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        FN(fill_bias)(batch * m, n, bias, out);
        return;
    }
    const FN(GemmKernel) *kr = FN(tg_gemm_kernel)();
    int threads = FN(threads_for)((double)batch * m * n * k);

    if (threads > 1 && batch >= threads && (batch % threads == 0 || batch >= 4 * threads)) {
        /* Many matrices (attention's heads, a batch of small products): whole products to
         * each thread, with one set of packing buffers per thread. */
#pragma omp parallel num_threads(threads)
        {
            T *b_pack = tg_alloc(sizeof(T) * FN(b_pack_size)(kr, n, k));
            T *a_pack = tg_alloc(sizeof(T) * FN(a_pack_size)(kr, m, k));
#pragma omp for schedule(static)
            for (i64 t = 0; t < batch; t++) {
                FN(Problem) g = {m, n, k, a + a_base[t], sa_i, sa_p, b + b_base[t], sb_p, sb_j,
                                 bias, out + t * m * n, n};
                FN(gemm_serial)(kr, &g, b_pack, a_pack);
            }
            tg_free(a_pack);
            tg_free(b_pack);
        }
        return;
    }
    for (i64 t = 0; t < batch; t++) {
        FN(Problem) g = {m, n, k, a + a_base[t], sa_i, sa_p, b + b_base[t], sb_p, sb_j,
                         bias, out + t * m * n, n};
        FN(gemm_one)(kr, &g, threads);
    }
}

/* One product with an epilogue (tracegrad.h): the path tg_gemm takes for a batch of one,
 * same blocks, same threads, same order over k, so out is bit for bit the eager product
 * before the epilogue sees it. */
void FN(tg_matmul_epilogue)(i64 m, i64 n, i64 k, const T *a, i64 sa_i, i64 sa_p,
                            const T *b, i64 sb_p, i64 sb_j, const T *bias, T *out,
                            tg_epilogue epilogue, void *ctx) {
    if (m == 0 || n == 0) return;
    if (k == 0) {                               /* no blocks: the bias rows, then one call */
        FN(fill_bias)(m, n, bias, out);
        if (epilogue) epilogue(ctx, 0, m, 0, n);
        return;
    }
    FN(Problem) g = {m, n, k, a, sa_i, sa_p, b, sb_p, sb_j, bias, out, n, epilogue, ctx, 0, 0};
    FN(gemm_one)(FN(tg_gemm_kernel)(), &g, FN(threads_for)((double)m * n * k));
}
