"""Builds device "cuda"'s library from the CUDA C sources in ``cuda/`` (chapter on native
kernels, section "CUDA").

Two libraries come from the same sources:

- ``_cuda.so``: compiled by NVIDIA's ``nvcc`` for the GPU, when nvcc is on the PATH (or in
  $CUDA_HOME/bin). It carries the CUDA runtime inside (nvcc links it statically), so it
  loads on any machine; only running a kernel needs a GPU and its driver. cuBLAS is not
  linked: ``cuda/cublas.cu`` opens libcublas at run time, when there is one.
- ``_cuda_emu.so``: compiled by the host C++ compiler with ``-DTG_CUDA_EMULATE``, which
  runs every kernel on the CPU (``cuda/emulate.cuh``): device "cuda-emu", so a machine
  without a GPU runs the kernels' logic through the whole test suite.

Both are plain shared libraries that cffi opens in ABI mode (``ffi.dlopen``), with the
declarations of ``cuda/tracegrad_cuda.h``. The package install builds ``_cuda.so`` when
nvcc exists and so does a GPU to run it (setup.py; ``no_gpu``); ``python -m stage3_native.build --cuda`` builds both by hand, and
first use of a device rebuilds its library when a source, or the declaration of the ops
(stage2_tensor/ops.py, whose op codes the build writes into cuda/ops_generated.h), is newer.

TRACEGRAD_CUDA_ARCH lists the GPU generations to compile for (default "80,90": A100 and
H100/H200 machine code; the newest also as PTX, which the driver compiles for later GPUs).
"""
import ctypes
import importlib.util
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "cuda"
DECLARATION = HERE.parent / "stage2_tensor" / "ops.py"     # the ops, whose codes the kernels use
KERNEL_DECLARATIONS = HERE.parent / "stage2_tensor" / "kernels"    # the kernels, their C declarations
# the formula headers of csrc/ that the .cu files include too (csrc/tg_fn.h): each formula once
SHARED = [HERE / "csrc" / name for name in ("tg_fn.h", "elementwise_math.h", "dropout_math.h", "optim_math.h",
                                             "layernorm_math.h", "half.h", "mt19937.h")]
LIBRARIES = {"cuda": HERE / "_cuda.so", "cuda-emu": HERE / "_cuda_emu.so"}
DRIVER = "nvcuda.dll" if os.name == "nt" else "libcuda.so.1"   # what the CUDA runtime opens


def nvcc():
    """The path of nvcc, or None."""
    found = shutil.which("nvcc")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = Path(home) / "bin" / "nvcc"
    return str(candidate) if candidate.exists() else None


def no_gpu():
    """Why no GPU can run device "cuda" here (NVIDIA's driver library is missing), or None."""
    try:
        ctypes.CDLL(DRIVER)
    except OSError:
        return f"no CUDA GPU: NVIDIA's driver library ({DRIVER}) was not found"
    return None


def cxx():
    return os.environ.get("CXX") or (sysconfig.get_config_var("CXX") or "c++")


def architectures():
    archs = [a.strip() for a in os.environ.get("TRACEGRAD_CUDA_ARCH", "80,90").split(",") if a.strip()]
    flags = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    return flags + [f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}"]


def commands(device, objects_dir):
    """(compile commands, one per .cu file, and the link command) for device "cuda" or "cuda-emu"."""
    sources = sorted(SOURCES.glob("*.cu"))
    objects = [Path(objects_dir) / (s.stem + ".o") for s in sources]
    output = LIBRARIES[device]
    if device == "cuda":
        compiler = [nvcc(), "-O3", "-std=c++17", "-Xcompiler", "-fPIC", *architectures()]
        link = [nvcc(), "-shared", "-o", str(output), *map(str, objects), "-ldl"]
    else:
        compiler = shlex.split(cxx()) + ["-x", "c++", "-std=c++17", "-O2", "-fPIC", "-DTG_CUDA_EMULATE",
                                         "-Werror=switch"]      # an op a kernel misses: ops_header.py
        link = shlex.split(cxx()) + ["-shared", "-o", str(output), *map(str, objects), "-ldl"]
    compile_each = [compiler + ["-I", str(SOURCES), "-c", str(s), "-o", str(o)] for s, o in zip(sources, objects)]
    return compile_each, link


def is_stale(device):
    library = LIBRARIES[device]
    if not library.exists():
        return True
    # the C and CUDA sources only: the folder also holds backend.py, which calls the library
    sources = [p for p in SOURCES.iterdir() if p.suffix in (".cu", ".cuh", ".h")]
    newest = max(p.stat().st_mtime for p in [*sources, *SHARED, DECLARATION, *KERNEL_DECLARATIONS.glob("*.py")])
    return newest > library.stat().st_mtime


def build(device):
    """Compile the sources (in parallel, one process per file) and link LIBRARIES[device].
    Raises RuntimeError with the compiler's message when a step fails."""
    if device == "cuda" and nvcc() is None:
        raise RuntimeError("nvcc was not found (on the PATH or in $CUDA_HOME/bin)")
    write_ops_header()
    with tempfile.TemporaryDirectory() as tmp:
        compile_each, link = commands(device, tmp)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            results = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), compile_each))
        for command, result in zip(compile_each, results):
            if result.returncode != 0:
                raise RuntimeError(f"compiling {command[-3]} failed:\n{' '.join(command)}\n"
                                   f"{result.stdout}{result.stderr}")
        temporary = LIBRARIES[device].with_suffix(".so.tmp")
        link[link.index("-o") + 1] = str(temporary)
        result = subprocess.run(link, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"linking failed:\n{' '.join(link)}\n{result.stdout}{result.stderr}")
        os.replace(temporary, LIBRARIES[device])       # a half-written library is never loaded
    return LIBRARIES[device]


def write_ops_header():
    """cuda/ops_generated.h and kernels_generated.h, the kernels' op codes and declarations from
    stage2_tensor/ops.py and stage2_tensor/kernels/ (ops_header.py,
    loaded by its path: setup.py loads this file outside the package)."""
    spec = importlib.util.spec_from_file_location("tracegrad_ops_header", HERE / "ops_header.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write(SOURCES, cuda=True)


def ensure_built(device):
    """LIBRARIES[device], rebuilt first when missing or older than a source."""
    if is_stale(device):
        build(device)
    return LIBRARIES[device]


def declarations():
    """tracegrad_cuda.h as cffi reads it: macros expanded, system headers left out (TG_CDEF),
    the generated headers it includes written first."""
    write_ops_header()
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "cc")
    command = shlex.split(cc) + ["-E", "-P", "-DTG_CDEF", str(SOURCES / "tracegrad_cuda.h")]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the C preprocessor ({' '.join(command)}) failed:\n{result.stderr}")
    return result.stdout
