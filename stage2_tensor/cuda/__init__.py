"""PyTorch's ``torch.cuda``, as a module (``import torch.cuda``, ``from torch.cuda.amp import
GradScaler``): whether a GPU is there, how many, which. Tracegrad's GPU is device "cuda"
(stage 3's plugin), so the answer is whether that device can run here. What PyTorch's
module does beyond that (streams, memory statistics) is not here.
"""
from .. import backend
from . import amp

__all__ = ["is_available", "device_count", "current_device", "set_device", "is_bf16_supported", "synchronize",
           "manual_seed", "manual_seed_all", "amp"]


def is_available():
    """Whether device "cuda" can run on this machine (a GPU, its driver, the library built)."""
    return backend.available("cuda")


def device_count():
    """1 where "cuda" runs (tracegrad drives one GPU), else 0."""
    return 1 if is_available() else 0


def current_device():
    """The GPU in use: always 0, the one tracegrad drives."""
    return 0


def set_device(device):
    """Accepted for "cuda" and "cuda:0", the one GPU tracegrad drives; another is an error."""
    if str(device) not in ("cuda", "cuda:0", "0"):
        raise ValueError(f"cuda.set_device: tracegrad drives one GPU, device 'cuda' (or 'cuda:0'), "
                         f"got {device!r}")


def is_bf16_supported():
    """Whether bfloat16 tensors can live on "cuda": where the GPU is, as PyTorch on recent GPUs."""
    return is_available()


def synchronize(device=None):
    """Wait for the GPU's work: tracegrad's kernel calls already return when done, so there is
    nothing to wait for."""


def manual_seed(seed):
    """Seed the random numbers: tracegrad draws every device's from one generator."""
    from ..factories import seed as _seed
    _seed(seed)


manual_seed_all = manual_seed
