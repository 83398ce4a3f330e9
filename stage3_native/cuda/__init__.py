"""Devices "cuda" and "cuda-emu": stage2's backend interface on the CUDA kernels in this
folder's .cu files (backend.py), built by ../cuda_build.py; what they share with device
"cpu" is in ../native_backend.py."""
