"""Samplers, PyTorch's ``torch.utils.data.sampler``: which dataset indices a DataLoader reads,
in which order. ``SequentialSampler`` 0, 1, ..., n - 1; ``RandomSampler`` a random order
(a permutation, a new one each pass), or with ``replacement=True`` independent draws, as
many as ``num_samples`` (minGPT's endless stream, ``num_samples=int(1e10)``: drawn as they
are read, never listed). ``DataLoader(shuffle=True)`` is ``sampler=RandomSampler(dataset)``.
"""
from ... import factories
from ...generators import Generator


class Sampler:
    """Indices to read: ``iter(sampler)`` gives them, ``len(sampler)`` says how many."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement!r}")
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, int)
                                        or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples!r}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"RandomSampler: generator must be a stage2_tensor.Generator or None, got "
                            f"{type(generator).__name__}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            rng = factories.generator() if self.generator is None else self.generator._rng
            return (rng.randrange(n) for _ in range(self.num_samples))
        return self._permutations(n)

    def _permutations(self, n):
        """Whole permutations of 0..n-1, then the start of one more, num_samples in all."""
        left = self.num_samples
        while left > 0:
            order = factories.randperm(n, generator=self.generator).tolist()[:left]
            yield from order
            left -= len(order)
