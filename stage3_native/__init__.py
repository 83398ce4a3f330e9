"""stage3_native: the stage2 Tensor on native kernels (thesis chapter on performance).

``import stage3_native`` registers device "cpu" with stage2's backend interface (asking
for ``device="cpu"`` imports it too). The kernels are C, one family per file in ``csrc/``,
compiled by the package build through cffi (``build.py``); ``cpu_backend.py`` maps stage2's
backend methods onto them.

When the compiled library is missing, or older than a file in ``csrc/`` (someone edited a
kernel), importing rebuilds it first; if the compiler fails, the ImportError shows what
the compiler said. ``python -m stage3_native.build`` rebuilds by hand.

Kernels use TRACEGRAD_NUM_THREADS threads (default: every core); ``set_num_threads``
changes it at run time.
"""
import os
import subprocess
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_BUILDING = "TRACEGRAD_NATIVE_BUILDING"      # set while build.py runs: do not load or rebuild


def _needs_build():
    libraries = sorted(list(_HERE.glob("_native*.so")) + list(_HERE.glob("_native*.pyd")),
                       key=lambda p: p.stat().st_mtime)
    if not libraries:
        return True
    for older in libraries[:-1]:    # pip and build.py name the file differently (abi3 or not),
        older.unlink()              # and Python would load the more specific name, even if older
    libraries = libraries[-1:]
    sources = list((_HERE / "csrc").glob("*.[ch]"))
    return max(p.stat().st_mtime for p in sources) > max(p.stat().st_mtime for p in libraries)


def _build():
    env = dict(os.environ, **{_BUILDING: "1"})
    result = subprocess.run([sys.executable, "-m", "stage3_native.build"], capture_output=True,
                            text=True, env=env)
    if result.returncode != 0:
        raise ImportError("stage3_native: building the C library failed "
                          "(python -m stage3_native.build). The compiler said:\n"
                          + (result.stdout + result.stderr).strip())


if not os.environ.get(_BUILDING):
    if _needs_build():
        _build()
    from stage2_tensor import backend as _backend

    from .cpu_backend import CpuBackend, get_num_threads, set_num_threads

    set_num_threads(int(os.environ.get("TRACEGRAD_NUM_THREADS") or os.cpu_count() or 1))
    _backend.register("cpu", CpuBackend())
    __all__ = ["CpuBackend", "get_num_threads", "set_num_threads"]
