"""torch.backends.cuda's switches, kept and changing nothing (backends/__init__.py)."""
from types import SimpleNamespace

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)


def is_built():
    """False: this is not PyTorch built with CUDA (tracegrad's GPU is stage 3's device "cuda")."""
    return False
