"""PyTorch's ``torch.nn.utils.rnn``: a batch of sequences of several lengths, padded or
packed.

Padded, the sequences share one tensor (T, B, *) (or (B, T, *) with ``batch_first``), the
shorter ones filled to the longest; a recurrent network run on it would read the padding.
Packed (``PackedSequence``), sorted longest first, step t keeps only the batch_sizes[t]
sequences still running, one after another in ``data`` (N, *): nn.RNN, nn.LSTM and nn.GRU
run each step on those rows only, so each sequence's final state is its own last step's.

The lengths and batch_sizes are a few numbers per batch, held on the host as PyTorch holds
them (batch_sizes an int64 tensor on the CPU); the loops below go over time steps or over
sequences, never over a tensor's elements.
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import backend, dtypes
from ...concat import cat, stack
from ...factories import arange, full, tensor, zeros_like
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _host_tensor(values):
    """int64 values in the host's memory, as PyTorch's CPU tensors of lengths and sizes."""
    return tensor(list(values), dtype=dtypes.int64, device="cpu" if backend.available("cpu") else "python")


class PackedSequence(namedtuple("PackedSequence_", "data batch_sizes sorted_indices unsorted_indices")):
    """(data, batch_sizes, sorted_indices, unsorted_indices): the packed rows (N, *), how
    many sequences run at each step (int64, on the host), the order that sorted the batch
    longest first, and its inverse (None when the batch came sorted). Made by
    pack_padded_sequence and pack_sequence, read by the recurrent modules."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            raise TypeError(f"PackedSequence: batch_sizes must be a Tensor, got {type(batch_sizes).__name__}")
        if not batch_sizes.is_cpu:
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        """This sequence with ``data`` in place of its own, the orders moved to its device
        (batch_sizes stays on the host)."""
        if data is self.data:
            return self
        orders = (None if i is None else i.to(data.device) for i in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, *orders)

    def to(self, *args, **kwargs):
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._with_data(self.data.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._with_data(self.data.cpu(*args, **kwargs))

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def batch_sizes_of(sequence):
    """A PackedSequence's batch_sizes as a list, checked against its data: positive, never
    growing (the batch sorted longest first), adding up to its rows. Made by the functions
    here they always are; one put together by hand may not be."""
    sizes = sequence.batch_sizes.tolist() if sequence.batch_sizes.dim() == 1 else None
    rows = sequence.data.shape[0] if sequence.data.dim() else 0
    if not sizes or min(sizes) <= 0 or any(b > a for a, b in zip(sizes, sizes[1:])) or sum(sizes) != rows:
        raise RuntimeError(f"PackedSequence: batch_sizes {sequence.batch_sizes.tolist()} do not describe its data "
                           f"of shape {tuple(sequence.data.shape)}: expected a 1-D tensor of positive sizes, never "
                           "growing, adding up to its number of rows (pack_padded_sequence and pack_sequence make "
                           "them so)")
    return sizes


def invert_permutation(permutation):
    """The permutation q with q[permutation[i]] = i (None for None), by one scatter."""
    if permutation is None:
        return None
    n = permutation.numel()
    return zeros_like(permutation).scatter(0, permutation, arange(n, dtype=permutation.dtype,
                                                                 device=permutation.device))


def _lengths_list(lengths):
    """lengths, a list of numbers or a 1-D tensor on the host, as Python ints (truncated
    toward zero, as PyTorch's conversion to int64)."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or not lengths.is_cpu:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device} {lengths.dtype} tensor")
        return [int(n) for n in lengths.to(dtype=dtypes.int64).tolist()]
    try:
        return [int(n) for n in lengths]
    except (TypeError, ValueError):
        raise TypeError(f"pack_padded_sequence: lengths must be a list of ints or a 1-D int64 tensor, "
                        f"got {lengths!r}") from None


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack padded sequences input (T, B, *) (or (B, T, *) with ``batch_first``) whose
    lengths are ``lengths`` (a list or a 1-D int64 tensor on the host). With
    ``enforce_sorted`` the lengths must come longest first; otherwise the batch is sorted
    (stably) and the PackedSequence keeps the order to undo it."""
    lengths = _lengths_list(lengths)
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, got {type(input).__name__}")
    if input.dim() < 2:
        raise IndexError(f"pack_padded_sequence: input must have a time and a batch dimension, got "
                         f"shape {input.shape}")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[:2]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch})")
    if min(lengths) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if max(lengths) > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {max(lengths)} is more than the {steps} time "
                           "steps of the padded input")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(batch), key=lambda b: -lengths[b])
        lengths = [lengths[b] for b in order]
        sorted_indices = tensor(order, dtype=dtypes.int64, device=input.device)
        input = input.index_select(1, sorted_indices)
    batch_sizes = _batch_sizes(lengths)
    data = cat([input[t, :rows] for t, rows in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _host_tensor(batch_sizes), sorted_indices, None)


def _batch_sizes(lengths):
    """How many of the sorted ``lengths`` exceed each t < lengths[0]: O(T + B)."""
    sizes, running = [], len(lengths)
    for t in range(lengths[0]):
        while lengths[running - 1] <= t:
            running -= 1
        sizes.append(running)
    return sizes


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths) with the batch in
    its original order, the gaps filled with ``padding_value``, T the longest length or
    ``total_length`` (to pad to a fixed size). lengths is an int64 tensor on the host."""
    data, batch_sizes = sequence.data, batch_sizes_of(sequence)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch, rest = batch_sizes[0], tuple(data.shape[1:])

    def padding(*shape):
        return full(shape + rest, padding_value, dtype=data.dtype, device=data.device)

    rows = data.split(batch_sizes, 0)
    padded = [x if x.shape[0] == batch else cat([x, padding(batch - x.shape[0])], 0) for x in rows]
    output = stack(padded, 0)
    if steps > len(batch_sizes):
        output = cat([output, padding(steps - len(batch_sizes), batch)], 0)
    lengths = [len(batch_sizes)] * batch              # each sequence's length: when the batch left it
    for t, (before, now) in enumerate(zip(batch_sizes, batch_sizes[1:])):
        lengths[now:before] = [t + 1] * (before - now)
    if sequence.unsorted_indices is not None:
        output = output.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    return (output.transpose(0, 1) if batch_first else output), _host_tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors (L_i, *) of one trailing shape into (max L, B, *) (or (B, max L, *)
    with ``batch_first``), each filled with ``padding_value`` after its end (before its
    start with ``padding_side="left"``), in the first one's dtype and device."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for s in sequences:
        if not isinstance(s, Tensor) or s.dim() == 0:
            raise RuntimeError("pad_sequence: every sequence must be a tensor of at least one dimension (time), "
                               f"got {s if not isinstance(s, Tensor) else 'a 0-d tensor'}")
    first = sequences[0]
    rest = tuple(first.shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"pad_sequence: every sequence must have the first one's trailing shape {rest}, "
                               f"got one of shape {tuple(s.shape)}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        s = s.to(device=first.device, dtype=first.dtype)
        if s.shape[0] < longest:
            fill = full((longest - s.shape[0],) + rest, padding_value, dtype=first.dtype, device=first.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch as a list of tensors (lengths[i], *), copies of their
    unpadded rows (PyTorch's transposes a time-first input in place as it goes; this one
    leaves it as it is)."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lengths) != padded_sequences.shape[batch_dim]:
        raise ValueError(f"unpad_sequence: {len(lengths)} lengths for a batch of "
                         f"{padded_sequences.shape[batch_dim]} sequences")
    return [padded_sequences.select(batch_dim, b)[:max(n, 0)].clone() for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors (L_i, *): pad_sequence, then pack_padded_sequence."""
    sequences = list(sequences)
    lengths = [s.shape[0] if isinstance(s, Tensor) and s.dim() else 0 for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
