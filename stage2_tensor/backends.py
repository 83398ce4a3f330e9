"""``torch.backends`` as training scripts set it: switches for PyTorch's GPU libraries
(cuDNN, TF32 matrix products). Tracegrad has neither library; the switches are kept so that
``torch.backends.cuda.matmul.allow_tf32 = True`` runs, and change nothing: its float32
products are computed in float32. Not to be confused with backend.py, the devices.
"""
from types import SimpleNamespace

cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
                       is_built=lambda: False)
cudnn = SimpleNamespace(allow_tf32=True, benchmark=False, deterministic=False, enabled=True,
                        is_available=lambda: False)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
