/* TinyBLAS: the project's own matrix multiplication, BLIS/Goto style (the thesis's
 * performance chapter; matmul.c's variant 4, "tinyblas"). out = a @ b (+ bias on every
 * row), float or double, any strides, one or many matrices.
 *
 * Why the blocked loops of matmul.c stay at a tenth of the machine's FMA peak: a
 * fused multiply-add unit finishes two 8-float FMAs per cycle only when it is fed from
 * registers. The blocked loop loads and stores out[i, j] for every FMA, and walks b with
 * whatever strides it has. The fix has three parts:
 *
 * 1. A micro-kernel (gemm_kernels.c) keeps an MR x NR tile of out in vector registers for
 *    the whole k loop. Per step it loads one row of B (NR/8 vectors), broadcasts MR values
 *    of A and does MR * NR/8 FMAs; AVX2's 6 x 16 uses 12 of the 16 ymm registers as
 *    accumulators, 2 for B and 1 for the broadcast. 12 independent FMAs in flight cover the
 *    FMA latency (4 cycles x 2 units = 8 needed). Loads per FMA: 8 for 12.
 *
 * 2. Packing: the micro-kernel wants its operands as contiguous, aligned micro-panels
 *    (kc steps of MR values of A; kc steps of NR values of B). gemm_t.h copies blocks into
 *    that order first. The copy reads any strides, so a transposed (x @ W.T) or sliced
 *    operand costs what a contiguous one does, and edge panels are padded with zeros. The
 *    SIMD kernels bring SIMD packers: a contiguous run is copied a vector at a time, a
 *    transposed operand is transposed 8 x 8 in registers (a scalar loop would make packing
 *    Linear's W.T a large share of a product as small as the MNIST forward's).
 *
 * 3. Cache blocking, five loops around the micro-kernel (Goto; Van Zee and van de Geijn's
 *    BLIS), each sized so that what is reused stays in the cache level it is reused from:
 *
 *      for jc in steps of NC over n            B block kc x NC       -> L3
 *        for pc in steps of KC over k          pack B[pc, jc]
 *          for ic in steps of MC over m        A block MC x kc       -> L2, packed
 *            for jr in steps of NR over nc     B micro-panel kc x NR -> L1, reused by every ir
 *              for ir in steps of MR over mc   A micro-panel kc x MR, streamed from L2
 *                micro-kernel: out[ir:ir+MR, jr:jr+NR] (+)= A panel @ B panel
 *
 *    For AVX2 float, sized for an L1d of 32 KiB, an L2 of 512 KiB per core and a shared
 *    L3 of tens of MiB: KC = 256 makes a B micro-panel 16 KiB (half of L1, the rest for
 *    the A panel streaming past and out's tile); MC = 144 makes the A block 144 KiB (a
 *    good part of L2, leaving room for B panels on their way to L1); NC = 4096 makes the
 *    B block 4 MiB (L3). gemm_kernels.c has every kernel's sizes. Bigger KC also means
 *    fewer passes that reload and re-store out's tile: for an L2 of 1 MiB the avx512
 *    kernel takes KC = 1024 and MC = 168 (the A block 672 KiB in L2, B micro-panels
 *    streamed from L2, not kept in L1; benchmarks/RESULTS.md, TinyBLAS, has the
 *    measurements). With one block of rows, each B micro-panel is packed just before it
 *    is read (panels_as_read) rather than the whole B block ahead, which would go out to
 *    L3 and come back (a cost a deep KC would pay).
 *
 *    Columns come in whole vectors, rows do not (a bottom-edge tile computes just its
 *    rows): a product with few columns and many rows (n = 49: 64 columns' work on the
 *    avx512 kernel) runs turned, out^T = b^T @ a^T, then a transpose (gemm_turned).
 *
 * The first pass over k stores the tile (and adds the bias: Linear's x @ W.T + b costs
 * no second pass over out); later passes add to it. After the last pass an MC x NC block
 * of out is final, and tg_matmul_epilogue hands it to a callback then (the lazy device's
 * GELU(x @ W + b) as one kernel: the activation reads the block from cache). A tile at the bottom edge runs a copy
 * of the micro-kernel compiled for just the rows there are (m = 32, a batch, is 5 tiles of
 * 6 rows and one of 2); a tile at the right edge goes through a scratch tile. Block sizes
 * are evened out (k = 784 runs as 4 x 196, not 3 x 256 + 16).
 *
 * Threads (OpenMP, tg_thread_count()), as BLIS does it (Smith, van de Geijn et al.,
 * "Anatomy of high-performance many-threaded matrix multiplication"): the threads share
 * the loops above rather than each running them on a block of its own. They form a grid of
 * t_m ways over the ic loop (bands of rows of out) times t_n ways over the jr loop (shares
 * of each B block's micro-panels). For each (jc, pc) block the threads pack the B block
 * into one shared buffer, each its share of the micro-panels; then each packs its own A
 * block (its rows) and runs the macro-kernel over its rows and its panels. B is packed once
 * instead of once per thread, and the threads read one copy of it from the shared L3.
 * The grid puts the threads on the loop that has the work (gemm_t.h's row_ways): a
 * convolution's (Cout x K) @ (K x H*W) with few channels splits the H*W columns, one with
 * many channels and a small image (ResNet's last layers: 2048 x 49) the rows. A thread
 * that reads panels another packed must wait until they are packed (a barrier per block,
 * with two B buffers used in turn so that one barrier also says the older buffer is free).
 * A barrier costs little while every thread runs, and a whole time slice when the
 * operating system has paused one, as on a machine shared with other programs; so B is
 * shared only where a private copy would cost a good share of a thread's work (narrow
 * bands of rows, share_b), and otherwise each thread packs the panels it reads and never
 * waits (with columns only, t_m = 1, nothing is packed twice anyway).
 *
 * Where it is better, whole products instead: a batch of at least as many products as
 * threads (attention's heads) gives whole products to threads, no barriers, nothing packed
 * twice. Products below GEMM_PARALLEL_MIN multiply-adds run on one thread: waking the
 * others costs more. gemm_t.h's tg_gemm is the one place that picks among these.
 *
 * benchmarks/gemm.py measures it against OpenBLAS and the FMA peak (benchmarks/RESULTS.md).
 */
#include <stdlib.h>
#include <string.h>
#include "gemm.h"
#include "parallel.h"

/* m * n * k (over the whole batch) below which a product runs on one thread: a few tens of
 * microseconds of work on one core. A second thread still spinning from the previous
 * kernel (see GOMP_SPINCOUNT in stage3_native/__init__.py) joins within microseconds,
 * so MNIST's 32x784x128 products gain from it; a sleeping one costs more to wake on a
 * virtual machine than such a product takes (benchmarks/RESULTS.md, "Figures behind
 * design choices"). */
#define GEMM_PARALLEL_MIN (64.0 * 64 * 256)

/* TRACEGRAD_GEMM_SPLIT, read at the first product, overrides the threads' grid for
 * measurements (benchmarks/gemm.py --baseline-env): "rows" splits the rows only and shares
 * the B block (BLIS's parallel ic loop), "columns" splits the columns only (each thread
 * packs its own panels); anything else, or nothing, lets the shape decide (row_ways,
 * share_b). Which is faster for square products depends on the machine and on whether
 * its cores are free, hence the switch. */
enum { SPLIT_AUTO, SPLIT_ROWS, SPLIT_COLUMNS };

static int forced_split(void) {
    static int split = -1;                      /* one value per process: a race is benign */
    if (split < 0) {
        const char *name = getenv("TRACEGRAD_GEMM_SPLIT");
        split = !name ? SPLIT_AUTO : strcmp(name, "rows") == 0 ? SPLIT_ROWS
              : strcmp(name, "columns") == 0 ? SPLIT_COLUMNS : SPLIT_AUTO;
    }
    return split;
}

#define TEMPLATE "gemm_t.h"
#include "instantiate_float.h"
