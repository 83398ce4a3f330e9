"""Randomness: dropout's mask, which a kernel draws itself from a hash of (seed, element
index), so the backward pass draws the same mask again instead of keeping it; and
multinomial's categories, drawn from uniform numbers the caller's generator made."""
from .. import dtypes
from ..contracts import differ, not_rows
from ..strides import numel
from . import kernel


@kernel(float_only=True, native="i64 n, const T *view, uint64_t seed, double p, T *out",
        sizes=lambda view, seed, p, dtype: {"n": numel(view.shape)})
def dropout(view: "dense", seed: "int", p: "float", dtype: "dtype"):
    """Inverted dropout: element i (row-major) times 1 / (1 - p) where kept, 0 where dropped;
    kept iff output i of SplitMix64 seeded with `seed` (a 64-bit int), as a uniform
    (z >> 11) * 2^-53 in [0, 1), is >= p (python_backend.splitmix64). Also its own backward:
    the upstream gradient, the same seed and p."""
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p} (p = 1 drops everything: "
                         "F.dropout returns zeros without the kernel)")
    if not (type(seed) is int and 0 <= seed < 1 << 64):
        raise ValueError(f"dropout: seed must be a 64-bit unsigned int, got {seed!r}")
    return [(tuple(view.shape), dtype)]


@kernel("out, bad", float_only=True, fails=True,
        native="i64 rows, i64 n, i64 samples, const T *weights, const double *uniforms, int replacement, "
               "i64 *out, i64 *bad",
        sizes=lambda weights, uniforms, replacement, dtype: {"rows": weights.shape[0], "n": weights.shape[1],
                                                              "samples": uniforms.shape[1]})
def multinomial(weights: "dense", uniforms: "dense", replacement: "bool", dtype: "dtype"):
    """Category indices (int64, uniforms' shape) drawn from each row of weights (rows, n),
    one per uniform number u of the row in uniforms (rows, samples), float64 in [0, 1):
    the first index whose running sum of the row's weights (in double, from the left)
    exceeds u times the row's total, or, past the top end by rounding, the last non-zero
    weight. Without `replacement` a drawn weight counts as 0 for the row's later draws,
    whose running sums are summed again: O(n * samples) per row. bad: the first row that
    is no distribution (a weight < 0, inf or nan, no weight above 0, or without replacement
    fewer such weights than samples; backend.bad_distribution says which), else -1, as one
    int64; that row's draws are left undefined."""
    if len(weights.shape) != 2:
        not_rows("multinomial", "weights", weights.shape)
    if len(uniforms.shape) != 2 or uniforms.dtype is not dtypes.float64:
        raise ValueError(f"multinomial: uniforms must be float64 (rows, samples), got {uniforms.dtype} of "
                         f"shape {tuple(uniforms.shape)}")
    differ("multinomial", "uniforms' rows", uniforms.shape[:1], weights.shape[:1])
    if type(replacement) is not bool:
        raise ValueError(f"multinomial: replacement must be a bool, got {replacement!r}")
    return [(tuple(uniforms.shape), dtypes.int64), ((), dtypes.int64)]
