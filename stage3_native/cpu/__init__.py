"""Device "cpu": stage2's backend interface on the C kernels in ../csrc/ (backend.py), built
by ../build.py; what it shares with device "cuda" is in ../native_backend.py."""
