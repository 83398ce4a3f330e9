"""Batches, PyTorch's ``torch.utils.data.dataloader``: ``DataLoader`` and ``default_collate``
(the datasets are dataset.py's, the samplers sampler.py's).

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    for xb, yb in loader:           # one pass over the data in random order: an epoch
        ...

A DataLoader asks the dataset for samples by index (``dataset[i]``, a map-style dataset),
groups the indices into batches, and turns each list of samples into one batch with its
``collate_fn``. Everything runs in the calling process (PyTorch's worker processes are
not offered; ``num_workers`` is accepted and changes nothing).
"""
import math
import numbers

from ...concat import cat
from ...factories import tensor
from ...generators import Generator
from ...tensor import Tensor
from ... import dtypes
from .dataset import TensorDataset
from .sampler import RandomSampler, SequentialSampler


def _stack(batch):
    """Tensors of one shape as one tensor with a new first dimension (torch.stack(batch))."""
    first = batch[0]
    for i, t in enumerate(batch):
        if t.shape != first.shape or t.device != first.device:
            raise RuntimeError(f"default_collate: stack expects each tensor to be equal size "
                               f"and on one device, but sample 0 is {first.shape} on "
                               f"{first.device!r} and sample {i} is {t.shape} on {t.device!r}")
    dtype = first.dtype
    for t in batch:
        dtype = dtypes.promote(dtype, t.dtype)
    return cat([t.to(dtype=dtype).unsqueeze(0) for t in batch], dim=0)


def default_collate(batch):
    """A list of samples as one batch, as PyTorch's default_collate: tensors stacked along a
    new first dimension; Python floats as a float64 tensor, ints (and bools) as an int64
    (bool) tensor; strings left as a list; dicts key by key and sequences position by
    position, recursively. A tuple of fields collates to a list of batches (PyTorch's
    behaviour, kept for compatibility), a namedtuple to the same namedtuple."""
    if not isinstance(batch, (list, tuple)) or not batch:
        raise TypeError(f"default_collate: expected a non-empty list of samples, got "
                        f"{batch!r:.80}")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if hasattr(elem, "__array__") and not isinstance(elem, (str, bytes)):   # numpy arrays
        return _stack([tensor(x) for x in batch])
    if isinstance(elem, float):
        return tensor(list(batch), dtype=dtypes.float64)
    if isinstance(elem, (bool, numbers.Integral)):
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, dict):
        missing = [i for i, d in enumerate(batch) if not isinstance(d, dict) or d.keys() != elem.keys()]
        if missing:
            raise RuntimeError(f"default_collate: every sample must be a dict with the keys "
                               f"{list(elem)}; sample {missing[0]} is not")
        return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, (tuple, list)):
        if any(len(s) != len(elem) for s in batch):
            raise RuntimeError(f"default_collate: each element in list of batch should be of "
                               f"equal size; lengths {[len(s) for s in batch]}")
        fields = [default_collate(list(samples)) for samples in zip(*batch)]
        if isinstance(elem, tuple) and hasattr(elem, "_fields"):          # a namedtuple
            return type(elem)(*fields)
        return fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"DataLoader: {name} must be a positive int, got {value!r}")


class DataLoader:
    """Batches of a dataset, PyTorch's DataLoader: ``for batch in loader`` runs one epoch.

    The indices 0..len(dataset)-1, in order or (``shuffle=True``) a new random permutation
    each epoch, drawn from ``generator`` when given, else from the package's generator (so
    ``manual_seed(n)`` makes the order repeat), are cut into batches of ``batch_size``; the
    last, shorter batch is kept unless ``drop_last``. Each batch is
    ``collate_fn([dataset[i] for i in indices])``, ``default_collate`` by default. A
    TensorDataset with the default collation is gathered instead, one index tensor per
    tensor (``t[indices]``): the same batch as stacking its samples, at the cost of one
    operation instead of batch_size of them. (``batch_size=None``, PyTorch's unbatched
    loading and iterable datasets are not offered; ``sampler`` picks the indices.)"""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, *, drop_last=False, generator=None,
                 collate_fn=None, num_workers=0, pin_memory=False, persistent_workers=False,
                 prefetch_factor=None, worker_init_fn=None):
        # num_workers, pin_memory, persistent_workers, prefetch_factor and worker_init_fn are
        # checked as PyTorch does and accepted: batches are made in this process, in order
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader: dataset must support dataset[i] and len(dataset) "
                            f"(a map-style Dataset), got {type(dataset).__name__}")
        _positive_int(batch_size, "batch_size")
        shuffle = False if shuffle is None else shuffle                   # PyTorch's None: False
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last), ("pin_memory", pin_memory)):
            if not isinstance(flag, bool):
                raise ValueError(f"DataLoader: {name} must be True or False, got {flag!r}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"DataLoader: generator must be a stage2_tensor.Generator or None, "
                            f"got {type(generator).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable, got {type(collate_fn).__name__}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be a non-negative int, got {num_workers!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in "
                             "multiprocessing; let num_workers > 0 to enable multiprocessing")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader: worker_init_fn must be callable, got {type(worker_init_fn).__name__}")
        if sampler is not None:
            if shuffle:
                raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
            if not hasattr(sampler, "__iter__"):
                raise TypeError(f"DataLoader: sampler must be iterable (a Sampler), got {type(sampler).__name__}")
        elif shuffle:
            sampler = RandomSampler(dataset, generator=generator)
        else:
            sampler = SequentialSampler(dataset)
        self.sampler = sampler
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.generator, self.num_workers = drop_last, generator, num_workers
        self.collate_fn = default_collate if collate_fn is None else collate_fn

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _gathered(self):
        """Whether a batch can be gathered whole: a TensorDataset whose __getitem__ is its
        own, collated by default_collate."""
        return (isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate
                and type(self.dataset).__getitem__ is TensorDataset.__getitem__)

    def __iter__(self):
        # the sampler's indices are read as batches are made: a sampler may be endless
        indices = []
        for i in self.sampler:
            indices.append(i)
            if len(indices) == self.batch_size:
                yield self._batch(indices)
                indices = []
        if indices and not self.drop_last:
            yield self._batch(indices)

    def _batch(self, indices):
        if self._gathered():
            return [t[tensor(indices, dtype=dtypes.int64, device=t.device)] for t in self.dataset.tensors]
        return self.collate_fn([self.dataset[i] for i in indices])


__all__ = ["DataLoader", "default_collate"]
