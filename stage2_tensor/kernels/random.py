"""Randomness a kernel draws itself: dropout's mask, a hash of (seed, element index), so the
backward pass draws the same mask again instead of keeping it; the random factories'
numbers (rand, randn, randint, nn.init), drawn from the state of Python's own generator, so
that every device gives the numbers Python's random.Random would; and multinomial's
categories, drawn from uniform numbers the caller's generator made."""
import array

from .. import dtypes
from ..contracts import LIMIT, differ, not_rows
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


# Python's random.Random (a Mersenne Twister, MT19937), whose state the random factories
# hand to a kernel (factories.py, "Random tensors"): getstate()[1], its 624 words of 32 bits
# and the position of the next word it reads (624: all are used, regenerate them first)
MT_WORDS = 624
DISTRIBUTIONS = ("uniform", "normal")           # the C kernels' codes


def mt_state(kernel_name, state):
    """Refuse a state that is not 624 words (ints in [0, 2^32)) then a position (0 to 624),
    naming what is wrong: the C kernels index the words with the position as they find it.
    Returns the state as an array.array of 625 uint32 (C's unsigned int, 32 bits on every
    platform Python runs on), which checks the words as it is made."""
    if not (isinstance(state, (tuple, list)) and len(state) == MT_WORDS + 1):
        got = f"a {type(state).__name__} of {len(state)} items" if isinstance(state, (tuple, list)) else repr(state)
        raise ValueError(f"{kernel_name}: state must be random.Random.getstate()[1], a tuple of "
                         f"{MT_WORDS} words and a position, got {got}")
    try:
        words = array.array("I", state)     # refuses what is not an int, or not in [0, 2^32)
    except (TypeError, OverflowError):
        words = None
    for i, word in enumerate(state[:MT_WORDS] if words is None else ()):
        if not (isinstance(word, int) and 0 <= word < 1 << 32):
            raise ValueError(f"{kernel_name}: state word {i} must be an int in [0, 2^32), got {word!r}")
    position = state[MT_WORDS]
    if not (isinstance(position, int) and 0 <= position <= MT_WORDS):
        raise ValueError(f"{kernel_name}: state position (its last item) must be an int from 0 to "
                         f"{MT_WORDS}, got {position!r}")
    return words


def _count(kernel_name, n):
    if not (type(n) is int and 0 <= n < LIMIT):
        raise ValueError(f"{kernel_name}: n must be an int from 0 below 2^62, got {n!r}")


@kernel(role="in", native="uint32_t *state, double *spare, i64 n, int distribution, double a, double b, T *out")
def mt19937_floats(state: "ints", spare: "float?", n: "int", distribution: "choice", a: "float", b: "float",
                   dtype: "dtype"):
    """n draws a + b * x of Python's random.Random in the state ``state`` (getstate()[1]),
    with gauss's cached number ``spare`` (getstate()[2]: gauss_next, None when it holds
    none), each rounded to dtype (float32 or float64), bit for bit what Python gives: x is
    its random() (distribution "uniform": Python's uniform(low, high) is low + (high - low)
    * random(), so a = low, b = high - low) or the standard normal z of its gauss()
    ("normal": gauss(mu, sigma) is mu + z * sigma), in double with the C math library's log,
    sqrt, cos and sin, which Python's math module calls. Returns (out, the state after, the
    spare after), for the generator to take back (setstate). The C kernel updates the 625
    words in place, and a spare of two doubles: whether one is held (1 or 0), and its value."""
    mt_state("mt19937_floats", state)
    if not (spare is None or type(spare) is float):
        raise ValueError(f"mt19937_floats: spare must be None or a float (gauss_next), got {spare!r}")
    _count("mt19937_floats", n)
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"mt19937_floats: distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    for name, value in (("a", a), ("b", b)):
        if type(value) is not float:
            raise ValueError(f"mt19937_floats: {name} must be a float, got {value!r}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"mt19937_floats: dtype must be float32 or float64 (others are converted "
                         f"from them), got {dtype}")
    return [((n,), dtype)]


@kernel(role="in", c_dtypes=("int64",), native="uint32_t *state, i64 n, i64 low, uint64_t width, T *out")
def mt19937_integers(state: "ints", n: "int", low: "int", width: "int", dtype: "dtype"):
    """n draws low + r of Python's random.Random in the state ``state`` (getstate()[1]), r
    below ``width`` as its randrange(low, low + width) draws it (getrandbits(k), k the bit
    length of width, drawn again while >= width), as int64, bit for bit what Python gives;
    low and low + width - 1 within int64. Returns (out, the state after)."""
    mt_state("mt19937_integers", state)
    _count("mt19937_integers", n)
    if not (type(low) is int and type(width) is int and -(1 << 63) <= low and 1 <= width
            and low + width - 1 < 1 << 63):
        raise ValueError(f"mt19937_integers: low and low + width - 1 must be int64s with width >= 1, "
                         f"got low={low!r}, width={width!r}")
    if dtype is not dtypes.int64:
        raise ValueError(f"mt19937_integers: dtype must be int64 (others are converted from it), got {dtype}")
    return [((n,), dtype)]
