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
     * final (tracegrad.h's tg_epilogue), its rows and columns counted from out's corner;
     * threads call it at once on blocks of their own */
    tg_epilogue epilogue;
    void *ctx;
    int add_to_out;             /* the first pass over k adds to out's values (else stores) */
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

/* Panels [first, last) of an operand with `size` lanes, panel q at dst + (q - first) *
 * width * kc: the kernel's SIMD packer where it has one and can, the portable one
 * otherwise. */
static void FN(pack_panels)(const FN(GemmKernel) *kr, int width, i64 first, i64 last,
                            i64 size, i64 kc, const T *x, i64 s_step, i64 s_lane, T *dst) {
    for (i64 q = first; q < last; q++) {
        i64 l0 = q * width;
        int lanes = size - l0 < width ? (int)(size - l0) : width;
        const T *src = x + l0 * s_lane;
        T *panel = dst + (q - first) * width * kc;
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

/* One pass over k (depth kc from pc) of the rows [i0, i0 + m) that fit in one block, their
 * A block packed in a_pack, against the columns [j0, j0 + n): each B micro-panel packed just
 * before the micro-kernels read it, into the start of b_pack, so that it is in L1 when they
 * do. With one block of rows nothing else reads a packed B panel: packing the whole B block
 * ahead would only send it to L3 and back when it outgrows L2 (a 64 x 3136 convolution's
 * 3136 x kc block, or a turned product's). */
static void FN(panels_as_read)(const FN(GemmKernel) *kr, const FN(Problem) *g, i64 i0, i64 m,
                               i64 j0, i64 n, i64 pc, i64 kc, const T *a_pack, T *b_pack) {
    int first = pc == 0;
    for (i64 jr = 0; jr < n; jr += kr->nr) {
        i64 cols = n - jr < kr->nr ? n - jr : kr->nr;
        FN(pack_panels)(kr, kr->nr, 0, 1, cols, kc, g->b + pc * g->sb_p + (j0 + jr) * g->sb_j,
                        g->sb_p, g->sb_j, b_pack);
        FN(macro_kernel)(kr, m, cols, kc, a_pack, b_pack, g->out + i0 * g->ldc + j0 + jr, g->ldc,
                         first && g->bias ? g->bias + j0 + jr : NULL, !first || g->add_to_out);
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

/* The depth of each pass over k: k cut into equal blocks of at most the kernel's kc, the
 * same whatever the thread count (every thread count sums over k in the same blocks: the
 * same bits). */
static i64 FN(kc_block)(const FN(GemmKernel) *kr, i64 k) {
    return FN(even_block)(k, kr->kc, 1);
}

/* Packing buffers for a product, in elements: one block each (even_block never exceeds the
 * kernel's sizes; kc is kc_block's), plus the slack SIMD packers may write into (gemm.h). */
static i64 FN(b_pack_size)(const FN(GemmKernel) *kr, i64 n, i64 kc) {
    i64 nc = n < kr->nc ? n : kr->nc;
    return (nc + kr->nr - 1) / kr->nr * kr->nr * kc + TG_GEMM_PACK_SLACK;
}

static i64 FN(a_pack_size)(const FN(GemmKernel) *kr, i64 m, i64 kc) {
    i64 mc = m < kr->mc ? m : kr->mc;
    return (mc + kr->mr - 1) / kr->mr * kr->mr * kc + TG_GEMM_PACK_SLACK;
}

/* out = a @ b (+ bias): jc, pc, ic here, jr and ir in the macro-kernel (gemm.c's diagram).
 * A block of out is final after the last pass over k: the epilogue, if any, runs on it
 * then, while the macro-kernel's stores are still in cache. */
static void FN(gemm_serial)(const FN(GemmKernel) *kr, const FN(Problem) *g, T *b_pack,
                            T *a_pack) {
    i64 nc_block = FN(even_block)(g->n, kr->nc, kr->nr);
    i64 kc_block = FN(kc_block)(kr, g->k);
    i64 mc_block = FN(even_block)(g->m, kr->mc, kr->mr);
    for (i64 jc = 0; jc < g->n; jc += nc_block) {
        i64 nc = g->n - jc < nc_block ? g->n - jc : nc_block;
        for (i64 pc = 0; pc < g->k; pc += kc_block) {
            i64 kc = g->k - pc < kc_block ? g->k - pc : kc_block;
            int first = pc == 0;                /* first pass over k: store, add the bias */
            int last = pc + kc == g->k;         /* last pass: the block is final */
            if (g->m <= mc_block) {             /* one block of rows: B packed as read */
                FN(pack_panels)(kr, kr->mr, 0, (g->m + kr->mr - 1) / kr->mr, g->m, kc,
                                g->a + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                FN(panels_as_read)(kr, g, 0, g->m, jc, nc, pc, kc, a_pack, b_pack);
                if (last && g->epilogue) g->epilogue(g->ctx, 0, g->m, jc, nc);
                continue;
            }
            FN(pack_panels)(kr, kr->nr, 0, (nc + kr->nr - 1) / kr->nr, nc, kc,
                            g->b + pc * g->sb_p + jc * g->sb_j, g->sb_p, g->sb_j, b_pack);
            for (i64 ic = 0; ic < g->m; ic += mc_block) {
                i64 mc = g->m - ic < mc_block ? g->m - ic : mc_block;
                FN(pack_panels)(kr, kr->mr, 0, (mc + kr->mr - 1) / kr->mr, mc, kc,
                                g->a + ic * g->sa_i + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                FN(macro_kernel)(kr, mc, nc, kc, a_pack, b_pack, g->out + ic * g->ldc + jc,
                                 g->ldc, first && g->bias ? g->bias + jc : NULL,
                                 !first || g->add_to_out);
                if (last && g->epilogue) g->epilogue(g->ctx, ic, mc, jc, nc);
            }
        }
    }
}

/* Buffers from the caching allocator (no page faults after the first product), then the
 * five loops. */
static void FN(gemm_with_buffers)(const FN(GemmKernel) *kr, const FN(Problem) *g) {
    i64 kc = FN(kc_block)(kr, g->k);
    T *b_pack = tg_alloc(sizeof(T) * FN(b_pack_size)(kr, g->n, kc));
    T *a_pack = tg_alloc(sizeof(T) * FN(a_pack_size)(kr, g->m, kc));
    FN(gemm_serial)(kr, g, b_pack, a_pack);
    tg_free(a_pack);
    tg_free(b_pack);
}

/* ---- threads: the B block shared, BLIS style (gemm.c, "Threads") ---------------------
 * The threads form a grid of t_m x t_n: t_m ways over the rows of out (each thread walks
 * the ic loop over its own band of rows, a multiple of mr), t_n ways over the columns of
 * each B block (each thread walks the jr loop over its own share of the B micro-panels).
 * Per (jc, pc) block the threads pack the B micro-panels, then each packs its own A block
 * and runs the macro-kernel on its rows and its panels. Where bands of rows are narrow
 * (share_b) the B panels go into one shared buffer, each thread packing its share, so B
 * is packed once rather than once per band; elsewhere each thread packs the panels it
 * reads. A is packed once per column way (t_n times, each time by the thread that reads
 * it, into its own L2). */
typedef struct { i64 lo, hi; } FN(Range);

/* Part `part` of `parts` of [0, size), cut at multiples of `unit`. */
static FN(Range) FN(share)(i64 size, int unit, int part, int parts) {
    i64 units = (size + unit - 1) / unit;
    FN(Range) r = {units * part / parts * unit, units * (part + 1) / parts * unit};
    if (r.hi > size) r.hi = size;
    if (r.lo > size) r.lo = size;
    return r;
}

/* A packed value costs about what this many multiply-adds of the micro-kernel do (a load
 * and a store, or a share of an 8 x 8 transpose, against FMAs doing a vector of
 * multiply-adds each): an estimate, to weigh packing against computing below. */
#define PACK_COST 4

/* How many ways over rows (t_m; t_n = threads / t_m): the grid whose busiest thread has
 * the least to do, counting per step of k the multiply-adds of its rows times its columns
 * (a band is a whole number of micro-tiles, and the last band has what is left: m = 16 on
 * two ways is 14 rows and 2) and the values it packs. Tall-skinny products go to the loop
 * that has the work: a convolution's (Cout x K) @ (K x H*W) with few output channels
 * splits the H*W columns, ResNet's last (2048 x 512) @ (512 x 49) the rows. On a tie,
 * columns: each thread then packs what it reads and never waits for another. */
static int FN(row_ways)(const FN(GemmKernel) *kr, i64 m, i64 n, int threads) {
    if (forced_split() != SPLIT_AUTO) return forced_split() == SPLIT_ROWS ? threads : 1;
    i64 tiles_m = (m + kr->mr - 1) / kr->mr, tiles_n = (n + kr->nr - 1) / kr->nr;
    int best = 1;
    double best_cost = -1;
    for (int t_m = 1; t_m <= threads; t_m++) {
        if (threads % t_m) continue;
        int t_n = threads / t_m;
        i64 rows = (tiles_m + t_m - 1) / t_m * kr->mr, cols = (tiles_n + t_n - 1) / t_n * kr->nr;
        if (rows > m) rows = m;
        if (cols > n) cols = n;
        double cost = (double)rows * (double)cols + PACK_COST * ((double)rows + (double)cols);
        if (best_cost < 0 || cost < best_cost) best = t_m, best_cost = cost;
    }
    return best;
}

/* Whether the threads of a row split share one packing of B (BLIS) or each packs the
 * panels it reads (t_m copies, as when each thread ran a block of out alone): sharing saves packing
 * and costs a barrier per block, which is cheap while every thread runs but a whole time
 * slice when the operating system has paused one (a machine shared with other programs).
 * The copy costs PACK_COST per value against `rows` multiply-adds per value of a
 * thread's own work: share where that is more than an eighth, narrow bands of rows, as
 * on a machine with many cores. */
static int FN(share_b)(int t_m, i64 rows) {
    return t_m > 1 && (rows < 8 * PACK_COST || forced_split() == SPLIT_ROWS);
}

/* out = a @ b (+ bias) for one matrix on `threads` threads, the B block shared where
 * share_b says so.
 *
 * Synchronization: a thread may read a B panel only once the thread that packed it is
 * done, so after packing comes a barrier, and a buffer may be packed again only once
 * every thread is done reading it. Two buffers, used in turn by consecutive (jc, pc)
 * blocks, need one barrier per block instead of two: a thread that passes block p's
 * barrier knows every thread has finished block p - 1, the last reader of the buffer it
 * packs next. Where the B block is not shared (t_m = 1, or wide bands of rows: share_b)
 * each thread packs exactly the panels it reads, into a buffer of its own, and never
 * waits. (One buffer for all would not do: a block with a smaller kc or nc puts a thread's
 * panels where another's were, which that thread may still be reading.)
 *
 * All the threads walk the same jc and pc loops (the barriers need every one of them),
 * whether or not they have rows and panels of their own (more threads than micro-tiles).
 * Where two threads' shares of B meet, the SIMD packer writes no lane past a panel: B
 * panels are nr wide, a multiple of its 8-lane stores (gemm_kernels.c). Each element of
 * out is summed over k in the same blocks and order as on one thread: the same bits. */
static void FN(gemm_shared)(const FN(GemmKernel) *kr, const FN(Problem) *g, int threads) {
    i64 nc_block = FN(even_block)(g->n, kr->nc, kr->nr);
    i64 kc_block = FN(kc_block)(kr, g->k);
    i64 b_size = FN(b_pack_size)(kr, g->n, kc_block);
    int blocks = (int)(((g->n + nc_block - 1) / nc_block) * ((g->k + kc_block - 1) / kc_block));
    T *b_shared = NULL;                         /* the buffers all threads read, if any */
#pragma omp parallel num_threads(threads)
    {
        int id = tg_thread_index(), team = tg_team_size();
        int t_m = FN(row_ways)(kr, g->m, g->n, team), t_n = team / t_m;
        FN(Range) rows = FN(share)(g->m, kr->mr, id / t_n, t_m);
        FN(Range) band = FN(share)(g->m, kr->mr, 0, t_m);    /* bands differ by a tile at most */
        int shared = FN(share_b)(t_m, band.hi - band.lo);  /* read panels others packed */
        T *b_own = NULL;                        /* else each packs its panels here */
        if (shared) {
#pragma omp single
            b_shared = tg_alloc(sizeof(T) * b_size * (blocks > 1 ? 2 : 1));
        } else {
            i64 most = ((nc_block + kr->nr - 1) / kr->nr + t_n - 1) / t_n;   /* its panels */
            b_own = tg_alloc(sizeof(T) * (most * kr->nr * kc_block + TG_GEMM_PACK_SLACK));
        }
        i64 m_own = rows.hi - rows.lo;
        i64 mc_block = m_own > 0 ? FN(even_block)(m_own, kr->mc, kr->mr) : 1;
        T *a_pack = m_own > 0 ? tg_alloc(sizeof(T) * FN(a_pack_size)(kr, m_own, kc_block)) : NULL;
        const T *a = g->a + rows.lo * g->sa_i;
        int block = 0;
        for (i64 jc = 0; jc < g->n; jc += nc_block) {
            i64 nc = g->n - jc < nc_block ? g->n - jc : nc_block;
            i64 panels = (nc + kr->nr - 1) / kr->nr;
            FN(Range) mine = FN(share)(panels, 1, id % t_n, t_n);   /* panels it reads */
            FN(Range) packs = shared ? FN(share)(panels, 1, id, team) : mine;  /* packs */
            i64 j0 = mine.lo * kr->nr, cols = (mine.hi * kr->nr < nc ? mine.hi * kr->nr : nc) - j0;
            for (i64 pc = 0; pc < g->k; pc += kc_block, block++) {
                i64 kc = g->k - pc < kc_block ? g->k - pc : kc_block;
                int first = pc == 0, last = pc + kc == g->k;
                if (!shared && m_own > 0 && m_own <= mc_block && cols > 0) {
                    /* its rows in one block, its own panels: B packed as read */
                    FN(pack_panels)(kr, kr->mr, 0, (m_own + kr->mr - 1) / kr->mr, m_own, kc,
                                    a + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                    FN(panels_as_read)(kr, g, rows.lo, m_own, jc + j0, cols, pc, kc, a_pack, b_own);
                    if (last && g->epilogue) g->epilogue(g->ctx, rows.lo, m_own, jc + j0, cols);
                    continue;
                }
                /* the block's panel 0 (shared), or the thread's first (its own buffer) */
                T *b_pack = shared ? b_shared + (block % 2) * b_size : b_own;
                FN(pack_panels)(kr, kr->nr, packs.lo, packs.hi, nc, kc,
                                g->b + pc * g->sb_p + jc * g->sb_j, g->sb_p, g->sb_j,
                                shared ? b_pack + packs.lo * kr->nr * kc : b_pack);
                if (shared) {
#pragma omp barrier
                }
                const T *b_mine = shared ? b_pack + j0 * kc : b_pack;
                for (i64 ic = 0; ic < m_own && cols > 0; ic += mc_block) {
                    i64 mc = m_own - ic < mc_block ? m_own - ic : mc_block;
                    FN(pack_panels)(kr, kr->mr, 0, (mc + kr->mr - 1) / kr->mr, mc, kc,
                                    a + ic * g->sa_i + pc * g->sa_p, g->sa_p, g->sa_i, a_pack);
                    FN(macro_kernel)(kr, mc, cols, kc, a_pack, b_mine,
                                     g->out + (rows.lo + ic) * g->ldc + jc + j0, g->ldc,
                                     first && g->bias ? g->bias + jc + j0 : NULL,
                                     !first || g->add_to_out);
                    if (last && g->epilogue) g->epilogue(g->ctx, rows.lo + ic, mc, jc + j0, cols);
                }
            }
        }
        if (a_pack) tg_free(a_pack);
        if (b_own) tg_free(b_own);
    }
    if (b_shared) tg_free(b_shared);
}

/* ---- narrow products, computed turned ----------------------------------------------
 * Columns come in whole vectors: n = 49 (ResNet's last stage, 2048 x 512 @ 512 x 49) runs
 * as 64 columns on the avx512 kernel, a quarter of the multiply-adds on padding. Rows cost
 * no padding (a bottom-edge tile computes just its rows: run_rows). So where the padding
 * costs more than a transpose, the product runs turned, out^T = b^T @ a^T, into a scratch
 * n x m block (the same loops and threads, with the operands' strides swapped), which is
 * then transposed into out. A bias becomes the scratch block's rows, which the first pass
 * over k adds to (add_to_out): the kernel's own bias is the same one addition. */
static int FN(turning_pays)(const FN(GemmKernel) *kr, i64 m, i64 n, i64 k) {
    double padded = (double)m * (double)((n + kr->nr - 1) / kr->nr * kr->nr) * (double)k;
    double turned = (double)n * (double)((m + kr->nr - 1) / kr->nr * kr->nr) * (double)k;
    return turned + 2 * PACK_COST * (double)m * (double)n < padded;
}

/* out[i, j] = t[j * m + i] (out's rows ldc apart), in bands of 16 rows of out: for each
 * column j the band's 16 values are one cache line of t, read once. (t's rows are m apart,
 * often a power of two: walking several of them at once would keep missing in L1, as in
 * the packer, gemm_kernels.c.) The band's lines of out stay in L1 while its columns fill
 * in. The bands are shared among the threads; each is final once written, and the
 * epilogue, if any, runs on it then, on that thread. */
static void FN(untranspose)(const FN(Problem) *g, const T *t, int threads) {
    i64 m = g->m, n = g->n;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (i64 i0 = 0; i0 < m; i0 += 16) {
        i64 i1 = m - i0 < 16 ? m : i0 + 16;
        for (i64 j = 0; j < n; j++)
            for (i64 i = i0; i < i1; i++) g->out[i * g->ldc + j] = t[j * m + i];
        if (g->epilogue) g->epilogue(g->ctx, i0, i1 - i0, 0, n);
    }
}

/* One product turned (above); its epilogue, if any, on bands of out's rows (untranspose). */
static void FN(gemm_turned)(const FN(GemmKernel) *kr, const FN(Problem) *g, int threads) {
    T *t = tg_alloc(sizeof(T) * (size_t)(g->m * g->n));
    if (g->bias)
        for (i64 j = 0; j < g->n; j++)
            for (i64 i = 0; i < g->m; i++) t[j * g->m + i] = g->bias[j];
    FN(Problem) turned = {g->n, g->m, g->k, g->b, g->sb_j, g->sb_p, g->a, g->sa_p, g->sa_i,
                          NULL, t, g->m, NULL, NULL, g->bias != NULL};
    if (threads > 1) FN(gemm_shared)(kr, &turned, threads);
    else FN(gemm_with_buffers)(kr, &turned);
    FN(untranspose)(g, t, threads);
    tg_free(t);
}

/* A row times a column (x @ y of two vectors): k multiply-adds into one number, where a
 * micro-kernel would fill a whole tile to keep one element of it. Contiguous operands add
 * in TG_DOT_LANES independent sums (vectorized, overlapping in the pipeline), as sum_row. */
#define TG_DOT_LANES 16
static void FN(dot)(const FN(Problem) *g) {
    const T *a = g->a, *b = g->b;
    i64 k = g->k, sa = g->sa_p, sb = g->sb_p, p = 0;
    T sum = 0;
    if (sa == 1 && sb == 1) {
        T acc[TG_DOT_LANES] = {0};
        for (; p + TG_DOT_LANES <= k; p += TG_DOT_LANES)
            for (int l = 0; l < TG_DOT_LANES; l++) acc[l] += a[p + l] * b[p + l];
        for (int w = TG_DOT_LANES / 2; w > 0; w /= 2)
            for (int l = 0; l < w; l++) acc[l] += acc[l + w];
        sum = acc[0];
    }
    for (; p < k; p++) sum += a[p * sa] * b[p * sb];
    g->out[0] = (g->add_to_out ? g->out[0] : 0) + (g->bias ? g->bias[0] + sum : sum);
    if (g->epilogue) g->epilogue(g->ctx, 0, 1, 0, 1);
}

/* One product on `threads` threads: a dot product for one row and one column, turned where
 * that pays, else the five loops on one thread or the threads' grid (gemm_shared). */
static void FN(gemm_one)(const FN(GemmKernel) *kr, const FN(Problem) *g, int threads) {
    if (g->m == 1 && g->n == 1) FN(dot)(g);
    else if (FN(turning_pays)(kr, g->m, g->n, g->k)) FN(gemm_turned)(kr, g, threads);
    else if (threads > 1) FN(gemm_shared)(kr, g, threads);
    else FN(gemm_with_buffers)(kr, g);
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

/* Many matrices (attention's heads, a batch of small products), at least one per thread:
 * whole products to each thread, each with its own packing buffers. No barriers, and
 * nothing packed twice. */
static void FN(gemm_batch)(const FN(GemmKernel) *kr, i64 batch, const i64 *a_base,
                           const i64 *b_base, const FN(Problem) *g, int threads) {
#pragma omp parallel num_threads(threads)
    {
        i64 kc = FN(kc_block)(kr, g->k);
        T *b_pack = tg_alloc(sizeof(T) * FN(b_pack_size)(kr, g->n, kc));
        T *a_pack = tg_alloc(sizeof(T) * FN(a_pack_size)(kr, g->m, kc));
#pragma omp for schedule(static)
        for (i64 t = 0; t < batch; t++) {
            FN(Problem) one = *g;
            one.a = g->a + a_base[t];
            one.b = g->b + b_base[t];
            one.out = g->out + t * g->m * g->n;
            FN(gemm_serial)(kr, &one, b_pack, a_pack);
        }
        tg_free(a_pack);
        tg_free(b_pack);
    }
}

/* ---- the dispatch: how a product runs, decided here and nowhere else ------------------
 *   k == 0                          the bias rows (no product)
 *   one row times one column        a dot product (dot), each of a batch in turn
 *   few columns, many rows          turned (gemm_turned: out^T = b^T @ a^T, then a
 *                                   transpose), where turning_pays; then as below
 *   one thread, or a small product  the five loops on the calling thread: below
 *                                   GEMM_PARALLEL_MIN, waking a thread costs more than it
 *                                   saves
 *   a batch of whole products for   gemm_batch: a product per thread at a time, no barriers
 *   every thread (a multiple of the    (a batch that does not divide evenly only when long
 *   threads, or at least 4 each)       enough that the last round's idle threads matter little)
 *   anything else                   each product on every thread (gemm_shared), one after
 *                                   another; inside it, the grid (row_ways: rows, columns
 *                                   or both) and whether B is shared (share_b) */
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
    FN(Problem) g = {m, n, k, a, sa_i, sa_p, b, sb_p, sb_j, bias, out, n};
    if (threads > 1 && batch >= threads && (batch % threads == 0 || batch >= 4 * threads) && m * n > 1) {
        FN(gemm_batch)(kr, batch, a_base, b_base, &g, threads);
        return;
    }
    for (i64 t = 0; t < batch; t++) {
        FN(Problem) one = g;
        one.a = a + a_base[t];
        one.b = b + b_base[t];
        one.out = out + t * m * n;
        FN(gemm_one)(kr, &one, threads);
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
    const FN(GemmKernel) *kr = FN(tg_gemm_kernel)();
    FN(Problem) g = {m, n, k, a, sa_i, sa_p, b, sb_p, sb_j, bias, out, n, epilogue, ctx};
    FN(gemm_one)(kr, &g, FN(threads_for)((double)m * n * k));
}
