"""stage3_native: the stage2 Tensor on native kernels (thesis chapter on performance).

``import stage3_native`` registers device "cpu" with stage2's backend interface
(``register``; asking for ``device="cpu"`` calls it too, through the package's entry point,
so stage2 never names this package). The kernels are C, one family per file in ``csrc/``,
compiled by the package build through cffi (``build.py``); ``cpu/backend.py`` maps stage2's
backend methods onto them.

When the compiled library is missing, or older than a file in ``csrc/`` (someone edited a
kernel, or declared an op in stage2_tensor/ops.py), importing rebuilds it first; if the compiler fails, the ImportError shows what
the compiler said. ``python -m stage3_native.build`` rebuilds by hand.

Devices "cuda" (CUDA kernels in ``cuda/``, built by nvcc, on a GPU) and "cuda-emu" (the
same kernels compiled for the CPU's emulator of CUDA) are registered as loaders: their
library is built and opened when a tensor first asks for them (``cuda/backend.py``,
``cuda_build.py``).

Kernels use TRACEGRAD_NUM_THREADS threads (default: every core); ``set_num_threads``
changes it at run time.

OpenMP's waiting threads spin before they sleep (GOMP_SPINCOUNT), and the spin count
trades two costs. Too short, and a thread sleeps between two kernels and must be woken for
the next, which on a virtual machine costs more than MNIST's whole 32x784x128 product: a
training step of small kernels then runs slower on 2 threads than on one. Too long
(libgomp's default, 300000: milliseconds), and on a machine whose cores are busy with other
programs a spinning thread holds the core its partner waits for, and TinyBLAS on 2 threads
slows to a crawl. Unless it or OMP_WAIT_POLICY is set, the package sets 30000 before the library,
and with it libgomp, is loaded: long enough to span the gaps between a training step's
kernels, short enough that a 2-thread matmul keeps most of its speed beside a busy core
(the measurements behind this choice: benchmarks/RESULTS.md, "Figures behind design
choices"). On a shared machine, whose other programs keep the cores busy, a spinning
thread holds a core that the thread it waits for needs, and a parallel region costs
milliseconds instead of microseconds: there OMP_WAIT_POLICY=passive (or GOMP_SPINCOUNT=0),
which the package then leaves alone, or one thread (TRACEGRAD_NUM_THREADS=1) is faster
(benchmarks/gemm.py --wakeup measures it; benchmarks/RESULTS.md, TinyBLAS's section).
"""
import os
import subprocess
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_BUILDING = "TRACEGRAD_NATIVE_BUILDING"      # set while build.py runs: do not load or rebuild
_registered = False


def _needs_build():
    libraries = sorted(list(_HERE.glob("_native*.so")) + list(_HERE.glob("_native*.pyd")),
                       key=lambda p: p.stat().st_mtime)
    if not libraries:
        return True
    for older in libraries[:-1]:    # pip and build.py name the file differently (abi3 or not),
        older.unlink()              # and Python would load the more specific name, even if older
    libraries = libraries[-1:]
    # the kernels, and the declarations of the ops and kernels they follow (ops_header.py)
    declared = _HERE.parent / "stage2_tensor"
    sources = list((_HERE / "csrc").glob("*.[ch]")) + [declared / "ops.py", *(declared / "kernels").glob("*.py")]
    return max(p.stat().st_mtime for p in sources) > max(p.stat().st_mtime for p in libraries)


def _build():
    env = dict(os.environ, **{_BUILDING: "1"})
    result = subprocess.run([sys.executable, "-m", "stage3_native.build"], capture_output=True,
                            text=True, env=env)
    if result.returncode != 0:
        raise ImportError("stage3_native: building the C library failed "
                          "(python -m stage3_native.build). The compiler said:\n"
                          + (result.stdout + result.stderr).strip())


def _lazy_backend():
    from . import lazy
    return lazy.create(_backend.get("cpu"))


def register():
    """Register this package's devices with stage2 (its entry point in group
    "tracegrad.devices", pyproject.toml, which stage2's ``backend.load_plugins`` calls
    the first time a program asks for a device stage2 does not know). Importing the
    package registers them too; a second call changes nothing."""
    global _registered
    if _registered:
        return
    _registered = True
    _backend.register("cpu", CpuBackend())
    # "cuda" (nvcc's library, on a GPU) and "cuda-emu" (the same kernels on the CPU) are
    # built and opened on first use: most programs never ask for them (cuda/backend.py)
    _backend.register_loader("cuda", lambda: _cuda.create("cuda"),
                             unavailable=lambda: _cuda.quick_reason("cuda"))
    _backend.register_loader("cuda-emu", lambda: _cuda.create("cuda-emu"),
                             unavailable=lambda: _cuda.quick_reason("cuda-emu"))
    # "cpu:lazy": the same kernels, recorded and run when a value is read (lazy/, chapter 11)
    _backend.register_loader("cpu:lazy", lambda: _lazy_backend())


if not os.environ.get(_BUILDING):
    if _needs_build():
        _build()
    if "OMP_WAIT_POLICY" not in os.environ:             # a spin count would override it
        os.environ.setdefault("GOMP_SPINCOUNT", "30000")  # read once, when libgomp loads
    from stage2_tensor import backend as _backend

    from .cuda import backend as _cuda
    from .cpu.backend import CpuBackend, empty_cache, get_num_threads, set_num_threads

    set_num_threads(int(os.environ.get("TRACEGRAD_NUM_THREADS") or os.cpu_count() or 1))
    register()
    __all__ = ["CpuBackend", "empty_cache", "get_num_threads", "set_num_threads", "register"]
