"""Builds the C library of stage3_native with cffi's API mode (chapter on native kernels).

The package build runs this (setup.py: ``cffi_modules``), so ``pip install -e .`` compiles
the kernels in ``csrc/`` into ``stage3_native/_native*.so``. To rebuild in place after
editing a C file:

    python -m stage3_native.build

``python -m stage3_native.build --cuda`` builds device "cuda"'s library with nvcc instead
(and the emulator's, device "cuda-emu"): see cuda_build.py.

Matmul uses a system CBLAS (OpenBLAS, MKL, Accelerate) when one is found here, at build
time, and the project's own TinyBLAS otherwise; the library builds either way.

cffi needs the functions' declarations as plain C. ``csrc/tracegrad.h`` declares each
kernel once per dtype through macros, so the header is run through the C preprocessor
first and cffi reads what comes out: one header, no second list of signatures to keep.
"""
import contextlib
import ctypes
import ctypes.util
import importlib.util
import io
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cffi import FFI
from setuptools import Distribution
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
# -fno-math-errno: sqrt need not set errno, so it vectorizes; -fno-trapping-math: no kernel
# traps on floating-point exceptions, so the compiler may compute both sides of a ?: and
# select (how a loop with a condition in it vectorizes). Neither changes any result. No
# -march: the library runs on any x86-64, and wider instruction sets come from copies of
# the hot loops compiled for them and chosen at run time (csrc/simd.h, gemm_kernels.c). Those
# copies contract a * b + c into FMA (gcc's default -ffp-contract=fast), so the last bits of
# their float results may differ from the generic copy's (tests hold each to error bounds).
# -Werror=switch: a kernel's switch over an op enum (ops_header.py) that misses an op stops
# the build, naming it. -g0: Python's own flags, which setuptools puts first, ask for debug
# information, which nearly doubles the compile time of the largest kernel files; a release
# build of PyTorch has none either (make sanitize's build has it, for its reports' lines).
FLAGS = ["-O3", "-std=gnu11", "-fno-math-errno", "-fno-trapping-math", "-Werror=switch", "-g0"]
# TRACEGRAD_SANITIZE=1 (``make sanitize``, in a copy of the tree): AddressSanitizer and
# UndefinedBehaviorSanitizer check every memory access and every signed overflow, shift and
# misaligned load of the kernels as they run, and stop the program at the first one with
# its stack (-g: with file and line), instead of reading garbage or corrupting memory
# silently. Python must start with the ASan runtime preloaded (see the Makefile).
# -fno-wrapv: Python's own flags, which setuptools puts before these, say -fwrapv, under
# which a signed overflow wraps by definition and UBSan never checks one. -O1: with every
# access checked, -O3's complete unrolling of fixed-length loops (a fused kernel's rows,
# lazy/jit.py, compiled with these flags too, so that its results match the kernels' to
# the bit) takes gcc minutes per kernel instead of seconds, and -O2 still takes the library
# minutes; the same accesses are checked.
SANITIZE = (["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g",
             "-fno-wrapv", "-O1"]
            if os.environ.get("TRACEGRAD_SANITIZE") == "1" else [])


def compiler():
    return os.environ.get("CC") or (sysconfig.get_config_var("CC") or "cc")


def compiler_version():
    """The first line of ``cc --version``, such as "gcc (Debian 12.2.0-14) 12.2.0"."""
    result = subprocess.run(shlex.split(compiler()) + ["--version"], capture_output=True, text=True)
    return result.stdout.splitlines()[0] if result.returncode == 0 and result.stdout else compiler()


def declarations():
    """tracegrad.h with its macros expanded (and without system headers: TG_CDEF)."""
    command = shlex.split(compiler()) + ["-E", "-P", "-DTG_CDEF", str(CSRC / "tracegrad.h")]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the C preprocessor ({' '.join(command)}) failed:\n{result.stderr}")
    return result.stdout


def find_cblas():
    """(libraries, link args) of a system BLAS that has cblas_sgemm and cblas_dgemm, or None.
    TRACEGRAD_BLAS=tinyblas builds without one, as on a machine that has none."""
    if os.environ.get("TRACEGRAD_BLAS", "").lower() == "tinyblas":
        return None
    if sys.platform == "darwin":
        return [], ["-framework", "Accelerate"]
    for name in ("openblas", "cblas", "blas", "mkl_rt"):
        path = ctypes.util.find_library(name)
        if not path:
            continue
        try:
            found = ctypes.CDLL(path)
        except OSError:
            continue
        if hasattr(found, "cblas_sgemm") and hasattr(found, "cblas_dgemm"):
            return [name], []
    return None


CBLAS = find_cblas()


def openmp_turned_off():
    return os.environ.get("TRACEGRAD_OPENMP") == "0"


def openmp_flags():
    """-fopenmp when the compiler accepts it (gcc; Apple's clang does not), so the kernels
    can use threads (csrc/parallel.h); without it they run on one thread. TRACEGRAD_OPENMP=0
    builds without it whatever the compiler, as on a Mac (``make clang-check``)."""
    if openmp_turned_off():
        return []
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "omp.c"
        source.write_text("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        command = shlex.split(compiler()) + ["-fopenmp", str(source), "-o", str(Path(tmp) / "omp")]
        ok = subprocess.run(command, capture_output=True).returncode == 0
    return ["-fopenmp"] if ok else []


OPENMP = openmp_flags()

def ops_header():
    """ops_header.py, loaded by its path: setup.py runs this file outside the package."""
    spec = importlib.util.spec_from_file_location("tracegrad_ops_header", HERE / "ops_header.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_ffibuilder(relative):
    """The cffi builder of stage3_native._native, after writing the kernels' op codes
    (csrc/ops_generated.h, from stage2_tensor/ops.py). setuptools (pip) requires source
    paths relative to setup.py's folder; build() compiles in a temporary folder and needs
    absolute ones."""
    ops_header().write(CSRC)
    sources = sorted(CSRC.glob("*.c"))
    builder = FFI()
    builder.cdef(declarations())
    builder.set_source(
        "stage3_native._native",
        '#include "tracegrad.h"',
        sources=[str(p.relative_to(HERE.parent)) if relative else str(p) for p in sources],
        include_dirs=[str(CSRC)],
        extra_compile_args=FLAGS + OPENMP + SANITIZE,
        define_macros=[("TG_HAVE_CBLAS", "1")] if CBLAS else [],
        libraries=["m"] + (CBLAS[0] if CBLAS else []),
        extra_link_args=OPENMP + SANITIZE + (CBLAS[1] if CBLAS else []),
    )
    return builder


ffibuilder = make_ffibuilder(relative=True)       # what setup.py's cffi_modules builds


class build_ext_side_by_side(build_ext):
    """setuptools' build_ext, an extension's C sources compiled side by side: distutils
    compiles them one after another, each in a compiler process of its own, so they can as
    well run at once, one per core. setup.py's build (pip) and build() below use it."""

    def build_extension(self, ext):
        compile_each = self.compiler.compile

        def compile_all(sources, *args, **kwargs):
            # the largest first: a long compile started last would run alone at the end
            order = sorted(sources, key=lambda source: -os.path.getsize(source))
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                done = dict(zip(order, pool.map(lambda source: compile_each([source], *args, **kwargs), order)))
            return [obj for source in sources for obj in done[source]]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            del self.compiler.compile            # the class's own method again


def build():
    """Compile in a temporary folder, then move the library into the package, replacing any
    earlier build (pip's may carry another file suffix, and Python would pick one of them
    silently). A failed build leaves the old library where it was. (cffi writes the C of
    the module, setuptools compiles it with the kernels, as pip's build does.)"""
    with tempfile.TemporaryDirectory() as tmp:
        with contextlib.redirect_stdout(io.StringIO()):      # cffi's "generating ..._native.c"
            extension = make_ffibuilder(relative=False).distutils_extension(tmp, verbose=False)
        dist = Distribution({"ext_modules": [extension], "cmdclass": {"build_ext": build_ext_side_by_side}})
        command = dist.get_command_obj("build_ext")
        command.build_lib = command.build_temp = tmp
        dist.run_command("build_ext")
        built = Path(command.get_outputs()[0])
        for old in HERE.glob("_native*.so"):
            old.unlink()
        return shutil.move(str(built), str(HERE / built.name))


def build_cuda():
    from . import cuda_build
    if cuda_build.nvcc() is None:
        print("nvcc was not found (on the PATH or in $CUDA_HOME/bin): device 'cuda' not built")
    else:
        print(f"built {cuda_build.build('cuda')} with {cuda_build.nvcc()} "
              f"({' '.join(cuda_build.architectures())})")
    print(f"built {cuda_build.build('cuda-emu')}, the CPU emulator (device 'cuda-emu')")


if __name__ == "__main__":
    os.environ["TRACEGRAD_NATIVE_BUILDING"] = "1"
    if "--cuda" in sys.argv[1:]:
        build_cuda()
        sys.exit(0)
    print(f"built {build()} by {compiler_version()}, with matmul from "
          + (f"the system CBLAS ({', '.join(CBLAS[0]) or 'Accelerate'})" if CBLAS else "TinyBLAS (no system CBLAS found)")
          + (", threads from OpenMP" if OPENMP else
             ", on one thread (" + ("TRACEGRAD_OPENMP=0" if openmp_turned_off() else "the compiler has no OpenMP") + ")")
          + (", with AddressSanitizer and UndefinedBehaviorSanitizer" if SANITIZE else ""))
    sys.exit(0)
