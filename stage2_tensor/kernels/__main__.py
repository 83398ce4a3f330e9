"""``python -m stage2_tensor.kernels``: print the kernel interface (KERNELS.md is its output)."""
from . import interface

print(interface())
