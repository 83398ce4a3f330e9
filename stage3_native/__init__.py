"""stage3_native: the stage2 Tensor on native kernels (thesis chapter on performance).

``import stage3_native`` registers device "cpu" with stage2's backend interface (asking
for ``device="cpu"`` imports it too). The kernels are C, one family per file in ``csrc/``,
compiled by the package build through cffi (``build.py``); ``cpu_backend.py`` maps stage2's
backend methods onto them. If the compiled library is missing, importing builds it and,
when the compiler fails, raises an ImportError showing the compiler's message.
"""
import subprocess
import sys


def _load_native():
    try:
        from . import _native
        return _native
    except ImportError:
        pass
    result = subprocess.run([sys.executable, "-m", "stage3_native.build"], capture_output=True, text=True)
    if result.returncode != 0:
        raise ImportError("stage3_native: the C library is not built and building it failed "
                          "(python -m stage3_native.build). The compiler said:\n"
                          + (result.stdout + result.stderr).strip())
    from . import _native
    return _native


_load_native()

from stage2_tensor import backend as _backend  # noqa: E402

from .cpu_backend import CpuBackend  # noqa: E402

_backend.register("cpu", CpuBackend())

__all__ = ["CpuBackend"]
