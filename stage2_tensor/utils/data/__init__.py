"""Datasets and batches, PyTorch's ``torch.utils.data``, laid out as PyTorch's modules so that
their imports port too (``from torch.utils.data.dataloader import DataLoader``):
``dataset.py`` (Dataset, TensorDataset), ``sampler.py`` (SequentialSampler, RandomSampler),
``dataloader.py`` (DataLoader, default_collate).

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    for xb, yb in loader:           # one pass over the data in random order: an epoch
        ...
"""
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, TensorDataset
from .sampler import RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate", "Sampler", "SequentialSampler",
           "RandomSampler"]
