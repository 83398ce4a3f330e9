"""Counting elements, as PyTorch's: unique, unique_consecutive, bincount and histc.

Each is written with kernels every device has, with no loop over elements:
- unique: the elements sorted (sort's kernel, NaN last), a group starting wherever a value
  differs from the one before it (so each NaN, unequal to itself, is a group of its own, as
  PyTorch's), the groups counted, then each one's first value and size by the runs kernel
  (kernels/indexing.py), and each element's group (the running count of group starts) put
  back at the element's place (index_add along the sort's permutation): O(n log n).
- unique_consecutive: the same groups of equal neighbours, unsorted: O(n).
- bincount and histc: a kernel each (kernels/indexing.py), one pass adding each element
  (its weight) into its bin: O(n + bins), after bincount's largest element is read to size
  the bins, and histc's smallest and largest when it takes the data's range.
None of them is differentiable, as PyTorch's: an output of an input that requires grad
requires grad too, and backward through it raises (``_not_differentiable``).
"""
import array
import math
import numbers

from . import backend as backends
from . import concat, dtypes, factories
from .gradient_function import GradientFunction
from .sorting import computed, sort
from .strides import normalize_dim
from .tensor import Tensor
from .views import IndexAdd


class _NoDerivative(GradientFunction):
    """The link of an output PyTorch computes but cannot differentiate: its backward raises
    PyTorch's error."""

    def backward(self, grad):
        raise self.error


def _not_differentiable(out, input, error):  # noqa: A002
    """out, requiring grad when input does (as PyTorch's), with a backward that raises error."""
    fn = _NoDerivative()
    fn.error = error
    return fn.link(out, (input,))


def _check_tensor(op, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(value).__name__}")


def _check_flags(op, **flags):
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{op}(): argument '{name}' must be a bool, not {type(value).__name__}")


def _true_positions(mask):
    """The positions of a 1-d bool tensor's true elements: nonzero's kernel, the count (the
    output's size) the sum of the bools."""
    count = int(mask.sum().item())
    rows = backends.launch(mask.device, "nonzero", mask.as_view(), count, dtypes.bool_, out_dtype=dtypes.int64)
    return Tensor.from_buffer(rows, (count,), dtypes.int64, mask.device)


def _groups(values, return_inverse, return_counts, order=None):
    """(unique, inverse, counts) of a 1-d tensor whose equal elements are neighbours: a
    group starts at 0 and wherever an element differs from the one before (so each NaN is
    one). The groups counted first (a comparison of neighbours, summed), then the runs
    kernel writes each group's first element and size. ``order``: where each element of
    ``values`` came from (a sort's indices), to put the inverse back there; None when
    values are in place."""
    n, device = values.shape[0], values.device
    differs = values[1:] != values[:-1]
    count = min(n, 1) + int(differs.sum().item())
    x = computed(values)
    unique, counts = backends.launch(device, "runs", x.as_view(), count, x.dtype, out_dtype=x.dtype)
    unique = Tensor.from_buffer(unique, (count,), x.dtype, device).to(dtype=values.dtype)
    inverse = None
    if return_inverse:
        inverse = factories.zeros(n, dtype=dtypes.int64, device=device)
        if n > 1:
            inverse[1:] = differs.cumsum(0)                  # the groups started before each element
        inverse = inverse if order is None else IndexAdd.apply(inverse, (n,), 0, order)
    counts = Tensor.from_buffer(counts, (count,), dtypes.int64, device) if return_counts else None
    return unique, inverse, counts


def _result(op, input, unique, inverse, counts, inverse_shape):  # noqa: A002
    """PyTorch's return: the unique values alone, or a tuple with the inverse (in the
    input's shape) and/or the counts."""
    unique = _not_differentiable(unique, input, NotImplementedError(f"the derivative for '{op}' is not implemented"))
    if inverse is None and counts is None:
        return unique
    out = (unique,)
    if inverse is not None:
        out += (inverse.reshape(inverse_shape),)
    return out + ((counts,) if counts is not None else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements of input, ascending (NaN last, each NaN distinct, as PyTorch's
    CPU), and optionally, for each element, the index of its value in them (the inverse, in
    input's shape) and how often each value occurs (the counts). ``sorted=False`` gives
    them sorted too (PyTorch leaves the order to the implementation). ``dim``: the distinct
    slices along dim, in the lexicographic order of their elements."""
    _check_tensor("unique", "input", input)
    _check_flags("unique", sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    if dim is not None:
        return _unique_dim("unique", input, dim, return_inverse, return_counts, sort_rows=True)
    flat = input.detach().reshape(-1)
    values, order = sort(flat)
    found = _groups(values, return_inverse, return_counts, order)
    return _result("_unique2", input, *found, input.shape)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The input with each run of equal consecutive elements kept once (NaN never equal),
    and optionally each element's run (the inverse, in input's shape) and the runs'
    lengths (the counts). ``dim``: runs of equal slices along dim."""
    _check_tensor("unique_consecutive", "input", input)
    _check_flags("unique_consecutive", return_inverse=return_inverse, return_counts=return_counts)
    if dim is not None:
        return _unique_dim("unique_consecutive", input, dim, return_inverse, return_counts, sort_rows=False)
    found = _groups(input.detach().reshape(-1), return_inverse, return_counts)
    return _result("unique_consecutive", input, *found, input.shape)


def _dense_ranks(columns):
    """Each element's rank among the distinct values of its column of the (n, k) tensor
    columns, from 0 in ascending order (equal values one rank; each NaN its own, last), as
    int64: one sort of all the columns, the running count of new values down each sorted
    column, put back at the elements' places (index_add at their flat positions)."""
    n, k = columns.shape
    values, order = sort(columns, 0)
    starts = factories.ones(n, k, dtype=dtypes.bool_, device=columns.device)
    if n > 1:
        starts[1:] = values[1:] != values[:-1]
    ranks = starts.cumsum(0) - 1
    places = order * k + factories.arange(k, device=columns.device)
    return IndexAdd.apply(ranks.reshape(-1), (n * k,), 0, places.reshape(-1)).reshape(n, k)


def _row_ranks(rows):
    """Each row's rank among the distinct rows of the (n, m) tensor, in lexicographic order:
    the columns' dense ranks, then neighbouring columns' ranks joined into one key (rank_a
    * n + rank_b orders the pairs as (a, b) and fits int64) and ranked again, halving the
    columns each round: log2(m) rounds of sorts of n, each of the columns left."""
    n, m = rows.shape
    if m == 0:                                              # empty slices: all equal
        return factories.zeros(n, dtype=dtypes.int64, device=rows.device)
    ranks = _dense_ranks(rows)
    while ranks.shape[1] > 1:
        pairs = ranks.shape[1] // 2
        joined = ranks[:, 0:2 * pairs:2] * n + ranks[:, 1:2 * pairs:2]
        if ranks.shape[1] % 2:
            joined = concat.cat([joined, ranks[:, -1:]], 1)
        ranks = _dense_ranks(joined)
    return ranks.reshape(n)


def _unique_dim(op, input, dim, return_inverse, return_counts, sort_rows):  # noqa: A002
    """unique and unique_consecutive along dim: the slices along dim as the rows of a
    matrix (n, m), in lexicographic order when asked (``_row_ranks``: ranked, then sorted
    by rank, the first of equal rows kept); a group starts where a row differs from the
    one before."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    dim = normalize_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        raise IndexError(f"{op}(): a 0-d tensor has no dimension {dim} to take slices along")
    moved = (dim,) + tuple(d for d in range(input.ndim) if d != dim)     # dim first, as PyTorch's moveaxis
    x = input.detach().permute(*moved)
    n, m = x.shape[0], math.prod(x.shape[1:])
    rows = x.reshape(n, m)
    starts = factories.ones(n, dtype=dtypes.bool_, device=input.device)
    order = None
    if sort_rows:
        keys, order = sort(_row_ranks(rows))
        rows = rows.index_select(0, order)
        if n > 1:
            starts[1:] = keys[1:] != keys[:-1]
    elif n > 1:
        starts[1:] = (rows[1:] != rows[:-1]).sum(1) > 0 if m else False
    first = _true_positions(starts)
    back = tuple(moved.index(d) for d in range(input.ndim))
    unique = rows.index_select(0, first).reshape(first.shape + x.shape[1:]).permute(*back)
    inverse = counts = None
    if return_inverse:
        group = starts.cumsum(0) - 1
        inverse = group if order is None else IndexAdd.apply(group, (n,), 0, order)
    if return_counts:
        ends = factories.full((first.shape[0],), n, dtype=dtypes.int64, device=input.device)
        if first.shape[0] > 1:
            ends[:-1] = first[1:]
        counts = ends - first
    return _result(op, input, unique, inverse, counts, (n,))


def bincount(input, weights=None, minlength=0):  # noqa: A002
    """How often each value 0, 1, ..., max(input) occurs in the 1-d non-negative integer
    tensor input (at least ``minlength`` bins), int64; with ``weights`` (one per element),
    the sum of the weights of each value instead, float64 (float32 for float32 weights, as
    PyTorch's). The output's size comes from the input's largest value, read first."""
    _check_tensor("bincount", "input", input)
    if isinstance(minlength, bool) or not isinstance(minlength, numbers.Integral):
        raise TypeError(f"bincount(): argument 'minlength' must be an int, not {type(minlength).__name__}")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"bincount(): not implemented for {input.dtype.name}: it counts integers")
    if input.ndim != 1 or input.dtype is dtypes.bool_:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        _check_tensor("bincount", "weights", weights)
        if weights.ndim != 1 or weights.shape[0] != input.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        if weights.device != input.device:
            raise RuntimeError(f"bincount(): weights are on device {weights.device!r}, the input on {input.device!r}")
    if input.shape[0] == 0:
        return factories.zeros(int(minlength), dtype=dtypes.int64, device=input.device)
    low, high = int(input.min().item()), int(input.max().item())
    if low < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    bins = factories.check_size("bincount", (max(high + 1, int(minlength)),), dtypes.int64)
    index = input.detach().to(dtype=dtypes.int64)
    if weights is None:
        return _bins(index, None, bins[0], dtypes.int64)
    dtype = weights.dtype if weights.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
    out = _bins(index, weights.detach().to(dtype=dtype), bins[0], dtype)
    return _not_differentiable(out, weights, RuntimeError("derivative for aten::bincount is not implemented"))


def _bins(index, weights, bins, dtype):
    """The bincount kernel's counts (the weights' sums) of index's values in 0..bins-1."""
    counts = backends.launch(index.device, "bincount", index.as_view(),
                             None if weights is None else weights.as_view(), bins, dtype,
                             out_dtype=dtype)
    return Tensor.from_buffer(counts, (bins,), dtype, index.device)


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """A histogram of input's elements in ``bins`` bins of equal width from min to max, in
    input's dtype (floating point only). Elements outside [min, max], and NaN, are left
    out; one equal to max counts in the last bin. min = max takes the data's smallest and
    largest element (and a range of one value is widened by 1 each side), as PyTorch's.
    Element x goes to bin (x - min) * bins / (max - min), rounded down, computed in
    input's dtype as PyTorch computes it."""
    _check_tensor("histc", "input", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"histc(): not implemented for {input.dtype.name}: it takes floating-point "
                                  "tensors")
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral):
        raise TypeError(f"histc(): argument 'bins' must be an int, not {type(bins).__name__}")
    for name, value in (("min", min), ("max", max)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"histc(): argument '{name}' must be a number, not {type(value).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = input.detach().reshape(-1)
    x = computed(x)
    if low == high and x.numel():
        low, high = float(x.min().item()), float(x.max().item())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    try:                                                    # the range as input's dtype holds it
        low, high = array.array(x.dtype.typecode, [low, high])
    except OverflowError:
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite in {x.dtype.name}") from None
    if not low < high:
        low, high = low - 1, high + 1
    factories.check_size("histc", (int(bins),), x.dtype)
    counts = backends.launch(x.device, "histc", x.as_view(), int(bins), low, high, x.dtype, out_dtype=x.dtype)
    return Tensor.from_buffer(counts, (int(bins),), x.dtype, x.device).to(dtype=input.dtype)
