"""PyTorch's F.embedding_bag: the sum, mean or max of the embedding rows of each "bag" of
indices, without the (bag, position, dim) tensor of rows a padded batch would make.

A 2-D input (B, N) is B bags of N indices; a 1-D input with ``offsets`` is one sequence
cut into bags at the offsets (bag b is input[offsets[b]:offsets[b + 1]], the last one
running to the end; with ``include_last_offset`` the last offset stands for that end). Each position
gets its bag's number (repeat_interleave of the bag lengths); the sums are one index_add
of the rows into the bags. The maxima are taken with a doubling scan: after step s each
position holds the maximum of the 2^s positions from it within its bag, so a bag's first
position holds the bag's maximum after log2(longest bag) steps of tensor operations.
Entries equal to ``padding_idx`` count for nothing (not in a mean's count); an empty bag
gives zeros, as PyTorch. A 2-D input reads nothing into Python (a compiled step captures
it); offsets, whose bags' lengths decide the shapes of the steps, are read.
"""
from . import dtypes
from .concat import cat
from .data_checks import no_negatives
from .elementwise import where
from .factories import arange, full, ones, zeros
from .tensor import Tensor
from .views import out_of_range


def _check(input, weight, offsets, mode, per_sample_weights, padding_idx, include_last_offset):
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(f"embedding_bag: weight must be a 2-D tensor (num_embeddings, embedding_dim), got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"embedding_bag: expected row numbers (an int64 tensor) as input, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                      f"only supported for mode='sum' (got mode='{mode}'). Please open a "
                                      f"feature request on GitHub.")
        if not isinstance(per_sample_weights, Tensor) or per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: embedding_bag: If per_sample_weights ({getattr(per_sample_weights, 'shape', None)}) "
                             f"is not None, then it must have the same shape as the input ({input.shape})")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             "of fixed length sequences.")
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if not isinstance(offsets, Tensor) or offsets.ndim != 1 or offsets.dtype not in (dtypes.int64, dtypes.int32):
            raise ValueError("offsets has to be a 1D Tensor of int64")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    n = weight.shape[0]
    if padding_idx is not None:
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or not -n <= padding_idx < n:
            raise ValueError(f"embedding_bag: padding_idx must be within the number of embeddings, got {padding_idx!r}")
        padding_idx %= n
    return padding_idx


def _bags(input, offsets, include_last_offset):
    """(the flat indices, each position's bag number, the number of bags, the longest bag)."""
    if input.ndim == 2:
        b, n = input.shape
        return input.reshape(-1), arange(b, device=input.device).repeat_interleave(n), b, n
    length = input.shape[0]
    starts = offsets.to(device=input.device, dtype=dtypes.int64)
    if include_last_offset:
        if starts.shape[0] == 0:
            raise ValueError("embedding_bag: include_last_offset needs at least one offset")
        starts = starts[:-1]                  # the last offset stands for the input's length, as PyTorch's
    ends = cat([starts[1:], full((1,), length, dtype=dtypes.int64, device=input.device)])[:starts.shape[0]]
    if starts.shape[0] and starts[0].item() != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {starts[0].item()}")
    lengths = ends - starts
    if lengths.numel() and (lengths.min().item() < 0 or ends.max().item() > length):
        raise ValueError(f"embedding_bag: offsets must be non-decreasing and at most the input's length {length}")
    covered = ends[-1].item() if ends.numel() else 0
    bags = arange(starts.shape[0], device=input.device).repeat_interleave(lengths)
    longest = lengths.max().item() if lengths.numel() else 0
    return input[:covered], bags, starts.shape[0], longest


def _segment_max(rows, bags, longest):
    """Each position's maximum over itself and the positions after it in its bag (at most
    ``longest``), by doubling: its bag's maximum at the bag's first position."""
    m, step = rows, 1
    while step < longest:
        tail = full((step, rows.shape[1]), float("-inf"), dtype=rows.dtype, device=rows.device)
        shifted = cat([m[step:], tail[:min(step, m.shape[0])]])
        same = cat([bags[step:] == bags[:-step], (bags[:min(step, bags.shape[0])] * 0) != 0])
        m = where(same.unsqueeze(1), m.maximum(shifted), m)
        step *= 2
    return m


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sum, mean or max of each bag's embedding rows: (number of bags, embedding_dim)."""
    if max_norm is not None or norm_type != 2 or scale_grad_by_freq or sparse:
        raise ValueError("embedding_bag: max_norm, norm_type, scale_grad_by_freq and sparse are not supported "
                         "here; leave them at their defaults")
    padding_idx = _check(input, weight, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    flat, bags, count, longest = _bags(input, offsets, include_last_offset)
    d = weight.shape[1]
    out = zeros(count, d, dtype=weight.dtype, device=weight.device)
    if flat.shape[0] == 0:
        return out + weight.sum() * 0.0
    flat = flat.to(device=weight.device, dtype=dtypes.int64)
    bags = bags.to(device=weight.device)
    n = weight.shape[0]
    try:                                # the index kernel checks the rows (data_checks.py)
        rows = weight[no_negatives(flat, n)]                              # (L, D)
    except IndexError:
        raise IndexError(f"embedding_bag: index {out_of_range(flat, n)[1]} is out of range for a table "
                         f"of {n} rows") from None
    kept = None if padding_idx is None else (flat != padding_idx).to(dtype=weight.dtype)
    if mode == "max":
        if kept is not None:
            rows = where(kept.unsqueeze(1) > 0, rows, rows * 0.0 - float("inf"))
        m = _segment_max(rows, bags, longest)
        if input.ndim == 2:                     # bag b starts at position b * longest
            picked = m.reshape(count, longest, d)[:, 0]
        else:
            firsts = cat([ones(1, dtype=dtypes.bool_, device=flat.device), bags[1:] != bags[:-1]])
            picked = out.index_add(0, bags[firsts], m[firsts])
        present = zeros(count, dtype=weight.dtype, device=weight.device).index_add(
            0, bags, ones(flat.shape[0], dtype=weight.dtype, device=weight.device) if kept is None else kept)
        return where((present > 0).unsqueeze(1), picked, out)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[:flat.shape[0]].to(device=weight.device,
                                                                       dtype=weight.dtype).unsqueeze(1)
    if kept is not None:
        rows = rows * kept.unsqueeze(1)
    sums = out.index_add(0, bags, rows)
    if mode == "sum":
        return sums
    counts = zeros(count, dtype=weight.dtype, device=weight.device).index_add(
        0, bags, ones(flat.shape[0], dtype=weight.dtype, device=weight.device) if kept is None else kept)
    return sums / counts.maximum(1.0).unsqueeze(1)
