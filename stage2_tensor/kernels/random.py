"""Randomness a kernel draws itself: dropout's mask, a hash of (seed, element index), so the
backward pass draws the same mask again instead of keeping it."""
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
