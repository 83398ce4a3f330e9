/* TinyBLAS's packed driver for one element type T (included by gemm.c for float and
 * double; FN(name) gives name_f32 or name_f64). The design is explained in gemm.c. */

typedef struct {
    i64 m, n, k;
    const T *a;
    i64 sa_i, sa_p;             /* a[i, p] = a[i * sa_i + p * sa_p] */
    const T *b;
    i64 sb_p, sb_j;             /* b[p, j] = b[p * sb_p + j * sb_j] */
    const T *bias;              /* NULL, or n values added to every row of out */
    T *out;                     /* m x n, row-major */
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

/* ---- one thread's share of one matrix product --------------------------------------
 * The threads form a grid of t_m x t_n: thread `id` computes its band of rows (a multiple
 * of mr) and, inside every nc block, its band of columns (a multiple of nr).
 * With one band of rows (t_m = 1) every thread packs the B panels of its own columns and
 * needs nobody else's: the threads never wait for each other (each packs all of A, which
 * costs little next to its share of the products when its band is wide).
 * With several bands of rows, all threads pack the shared B block together, then wait for
 * each other (the barrier) before using it, and again before it is overwritten. */
typedef struct { i64 lo, hi; } FN(Range);

/* Part `part` of `parts` of [0, size), cut at multiples of `unit`. */
static FN(Range) FN(share)(i64 size, int unit, int part, int parts) {
    i64 units = (size + unit - 1) / unit;
    FN(Range) r = {units * part / parts * unit, units * (part + 1) / parts * unit};
    if (r.hi > size) r.hi = size;
    if (r.lo > size) r.lo = size;
    return r;
}

static void FN(barrier)(int threads) {
#ifdef _OPENMP
    if (threads > 1) {
#pragma omp barrier
    }
#else
    (void)threads;
#endif
}

/* The block size for cutting `size` into equal blocks of at most `most` (a multiple of
 * `unit`), rounded up to `unit`: k = 784 in blocks of 196 rather than 256, 256, 256, 16. */
static i64 FN(even_block)(i64 size, i64 most, int unit) {
    i64 blocks = (size + most - 1) / most;
    i64 block = (size + blocks - 1) / blocks;
    return (block + unit - 1) / unit * unit;
}

static void FN(gemm_thread)(const FN(GemmKernel) *kr, const FN(Problem) *g, T *b_pack, T *a_pack,
                            int id, int threads, int t_m) {
    int t_n = threads / t_m, shared_b = t_m > 1;
    FN(Range) rows = FN(share)(g->m, kr->mr, id / t_n, t_m);
    i64 nc_block = FN(even_block)(g->n, kr->nc, kr->nr), kc_block = FN(even_block)(g->k, kr->kc, 1);
    i64 mc_block = rows.hi > rows.lo ? FN(even_block)(rows.hi - rows.lo, kr->mc, kr->mr) : kr->mr;
    for (i64 jc = 0; jc < g->n; jc += nc_block) {
        i64 nc = g->n - jc < nc_block ? g->n - jc : nc_block;
        i64 panels = (nc + kr->nr - 1) / kr->nr;
        FN(Range) cols = FN(share)(nc, kr->nr, id % t_n, t_n);
        for (i64 pc = 0; pc < g->k; pc += kc_block) {
            i64 kc = g->k - pc < kc_block ? g->k - pc : kc_block;
            int first = pc == 0;                /* first pass over k: store, add the bias */
            i64 first_panel = shared_b ? panels * id / threads : cols.lo / kr->nr;
            i64 last_panel = shared_b ? panels * (id + 1) / threads : (cols.hi + kr->nr - 1) / kr->nr;
            FN(pack_panels)(kr, kr->nr, first_panel, last_panel, nc, kc,
                            g->b + pc * g->sb_p + jc * g->sb_j, g->sb_p, g->sb_j, b_pack);
            if (shared_b) FN(barrier)(threads);
            for (i64 ic = rows.lo; ic < rows.hi && cols.lo < cols.hi; ic += mc_block) {
                i64 mc = rows.hi - ic < mc_block ? rows.hi - ic : mc_block;
                FN(pack_panels)(kr, kr->mr, 0, (mc + kr->mr - 1) / kr->mr, mc, kc,
                                g->a + ic * g->sa_i + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                FN(macro_kernel)(kr, mc, cols.hi - cols.lo, kc, a_pack, b_pack + cols.lo * kc,
                                 g->out + ic * g->n + jc + cols.lo, g->n,
                                 first && g->bias ? g->bias + jc + cols.lo : NULL, !first);
            }
            if (shared_b) FN(barrier)(threads);
        }
    }
}

/* The thread grid t_m x t_n (t_m * t_n = threads). Bands of columns only (t_m = 1: no
 * waiting, see above) when b has at least as many columns as a has rows, so that packing
 * all of A in every thread stays cheap, and there is a panel for every thread. Otherwise
 * the grid that gives the busiest thread the fewest micro-tiles; on a tie, more bands of
 * rows (each thread's A block then sits in its own core's L2). */
static int FN(rows_split)(const FN(GemmKernel) *kr, i64 m, i64 n, int threads) {
    i64 tiles_m = (m + kr->mr - 1) / kr->mr;
    i64 tiles_n = ((n < kr->nc ? n : kr->nc) + kr->nr - 1) / kr->nr;
    if (n >= m && tiles_n >= threads) return 1;
    int best = 1;
    i64 best_cost = -1;
    for (int t_m = threads; t_m >= 1; t_m--) {
        if (threads % t_m) continue;
        int t_n = threads / t_m;
        i64 cost = ((tiles_m + t_m - 1) / t_m) * ((tiles_n + t_n - 1) / t_n);
        if (best_cost < 0 || cost < best_cost) best = t_m, best_cost = cost;
    }
    return best;
}

/* Packing buffers for one product, in elements: at most one block each (even_block never
 * exceeds the kernel's sizes), plus the slack SIMD packers may write into (gemm.h). */
static i64 FN(b_pack_size)(const FN(GemmKernel) *kr, const FN(Problem) *g) {
    i64 nc = g->n < kr->nc ? g->n : kr->nc, kc = g->k < kr->kc ? g->k : kr->kc;
    return (nc + kr->nr - 1) / kr->nr * kr->nr * kc + TG_GEMM_PACK_SLACK;
}

static i64 FN(a_pack_size)(const FN(GemmKernel) *kr, const FN(Problem) *g) {
    i64 mc = g->m < kr->mc ? g->m : kr->mc, kc = g->k < kr->kc ? g->k : kr->kc;
    return (mc + kr->mr - 1) / kr->mr * kr->mr * kc + TG_GEMM_PACK_SLACK;
}

/* out = a @ b (+ bias) for one matrix, on up to `threads` threads. */
static void FN(gemm_one)(const FN(GemmKernel) *kr, const FN(Problem) *g, int threads) {
    i64 a_size = FN(a_pack_size)(kr, g);
    T *b_pack = tg_alloc(sizeof(T) * FN(b_pack_size)(kr, g));
    T *a_packs = tg_alloc(sizeof(T) * a_size * threads);
    if (threads <= 1) {
        FN(gemm_thread)(kr, g, b_pack, a_packs, 0, 1, 1);
    } else {
#pragma omp parallel num_threads(threads)
        {
            int id = 0, team = 1;
#ifdef _OPENMP
            id = omp_get_thread_num();
            team = omp_get_num_threads();
#endif
            FN(gemm_thread)(kr, g, b_pack, a_packs + a_size * id, id, team,
                            FN(rows_split)(kr, g->m, g->n, team));
        }
    }
    tg_free(a_packs);
    tg_free(b_pack);
}

/* out = bias on every row (or zeros): the product when k is 0. */
static void FN(fill_bias)(i64 m, i64 n, const T *bias, T *out) {
    for (i64 i = 0; i < m; i++)
        for (i64 j = 0; j < n; j++) out[i * n + j] = bias ? bias[j] : 0;
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
    int threads = tg_thread_count();
    if ((double)batch * m * n * k < GEMM_PARALLEL_MIN) threads = 1;

    if (threads > 1 && batch >= threads && (batch % threads == 0 || batch >= 4 * threads)) {
        /* Many matrices (attention heads, a batch of small products): one whole product
         * per thread at a time, no synchronization inside. */
#pragma omp parallel for num_threads(threads) schedule(static)
        for (i64 t = 0; t < batch; t++) {
            FN(Problem) g = {m, n, k, a + a_base[t], sa_i, sa_p, b + b_base[t], sb_p, sb_j,
                             bias, out + t * m * n};
            FN(gemm_one)(kr, &g, 1);
        }
        return;
    }
    for (i64 t = 0; t < batch; t++) {
        FN(Problem) g = {m, n, k, a + a_base[t], sa_i, sa_p, b + b_base[t], sb_p, sb_j,
                         bias, out + t * m * n};
        FN(gemm_one)(kr, &g, threads);
    }
}
