"""Utilities beside the tensor, PyTorch's ``torch.utils``: ``data`` (Dataset, TensorDataset,
DataLoader) and ``tensorboard`` (SummaryWriter, through tensorboardX; imported when asked
for, as PyTorch's, since it needs that package)."""
from . import data

__all__ = ["data"]
from . import checkpoint  # noqa: E402, F401  (torch.utils.checkpoint)
