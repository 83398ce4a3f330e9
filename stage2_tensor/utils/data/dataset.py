"""Datasets, PyTorch's ``torch.utils.data.dataset``: ``Dataset`` (map-style: ``dataset[i]``,
``len(dataset)``) and ``TensorDataset`` (samples as rows of tensors)."""
from ...tensor import Tensor


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample i, ``len(dataset)`` how many there are.
    Subclasses define both."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (and __len__)")


class TensorDataset(Dataset):
    """Samples as slices of tensors along their first dimension: sample i is
    ``tuple(t[i] for t in tensors)``, e.g. (image, label) from TensorDataset(images, labels)."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} must be a Tensor, got "
                                f"{type(t).__name__}")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset: argument {i} is a 0-d tensor; each tensor "
                                 f"needs a first dimension to index samples along")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: size mismatch between tensors: their first "
                             f"dimensions must be equal (one per sample), got {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]
