"""PyTorch's ``torch.backends``: switches for PyTorch's GPU libraries (cuDNN, TF32 matrix
products), as modules (``import torch.backends.cudnn as cudnn``). Tracegrad has neither
library; the switches are kept so that ``torch.backends.cudnn.benchmark = True`` runs, and
change nothing: its float32 products are computed in float32. (The devices' kernels are
backend.py's.)
"""
from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
