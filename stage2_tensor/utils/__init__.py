"""Utilities beside the tensor, PyTorch's ``torch.utils``: ``data`` (Dataset, TensorDataset,
DataLoader)."""
from . import data

__all__ = ["data"]
