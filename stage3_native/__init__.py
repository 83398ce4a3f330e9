"""stage3_native: the stage2 Tensor on native C kernels (cffi) and CUDA (thesis chapter on
performance). Not written yet: see the stage3 issues."""
