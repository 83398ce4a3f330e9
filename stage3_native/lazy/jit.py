"""Compiling generated kernels (chapter 11, lazy execution and kernel fusion): a generated
C function becomes a Kernel, compiled by the C compiler into a shared library once per
machine, cached on disk by the hash of its source, and called through cffi.

The cache: ``$TRACEGRAD_KERNEL_CACHE``, else ``~/.cache/tracegrad/kernels``. A library is
compiled in a temporary folder inside it and moved into place with os.replace, which is
atomic: a second process compiling the same kernel at the same time replaces a whole file
with an identical whole file, and no process ever loads half of one.
"""
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cffi import FFI

from ..cpu.backend import ffi as eager_ffi, lib as eager_lib, simd_levels

CSRC = Path(__file__).resolve().parent.parent / "csrc"

# The flags of the eager library (build.py), so the same code compiles the same way; under
# TRACEGRAD_SANITIZE=1 (make sanitize) the generated kernels are sanitized too.
_FLAGS = None
# What Python's own compile flags, which setuptools puts before build.py's when it builds
# the eager library, mean for the code: signed integers wrap, assert() is off. (Its -g
# and warnings change nothing the kernels compute, and -g costs compile time.) They come
# first, as there: SANITIZE's -fno-wrapv overrides -fwrapv.
PYTHON_SEMANTICS = ["-fwrapv", "-DNDEBUG"]


def flags():
    """(compile flags, link flags) of a generated kernel."""
    global _FLAGS
    if _FLAGS is None:
        build = _build_module()
        # no copy for a SIMD level this CPU cannot run (csrc/simd.h)
        levels = [] if "avx512" in simd_levels() else ["-DTG_SIMD_NO_AVX512"]
        _FLAGS = (PYTHON_SEMANTICS + build.FLAGS + build.OPENMP + build.SANITIZE + levels,
                  build.OPENMP + build.SANITIZE)
    return _FLAGS


def _build_module():
    """stage3_native/build.py, whose compiler and flags the kernels share; imported on first
    use, not with this module, as it imports setuptools, which a program that compiles no
    kernel has no use for."""
    from .. import build
    return build


def cache_dir():
    """Where compiled kernels live: $TRACEGRAD_KERNEL_CACHE, else ~/.cache/tracegrad/kernels."""
    folder = os.environ.get("TRACEGRAD_KERNEL_CACHE") or Path.home() / ".cache" / "tracegrad" / "kernels"
    return Path(folder)


class KernelCompileError(RuntimeError):
    """The C compiler rejected a generated kernel; the message holds what it said and the
    source."""


# what this process has done: tests count compiles against loads
stats = {"compiled": 0, "loaded": 0, "memory": 0}
_LOADED = {}


@dataclass
class Kernel:
    """A compiled fused kernel: its spec, its C source (``body`` is the generated function
    without the shared preamble), and the C function (``lib``: the compiled module's, for
    ffi.addressof when the function is handed to C as a pointer, as epilogue.py does)."""
    name: str
    spec: Any
    body: str
    source: str
    path: str
    fn: Any
    ffi: Any
    lib: Any = None

    @property
    def n_outputs(self):
        """How many buffers run() takes in outs: the spec's n_outputs where it says (a
        RowSpec: its outputs and stored reductions), else one per output (one for a reduce)."""
        if hasattr(self.spec, "n_outputs"):
            return self.spec.n_outputs
        return len(self.spec.outputs) if hasattr(self.spec, "outputs") else 1

    def run(self, outs, ins, offsets=None):
        """outs: one contiguous buffer per output (cpu_backend.allocate(n, dtype)); ins: one
        buffer per operand (a cpu tensor's storage.buffer); offsets: each operand's offset
        (default: the spec's)."""
        if len(outs) != self.n_outputs or len(ins) != len(self.spec.operands):
            raise ValueError(f"{self.name}: expected {self.n_outputs} outputs and "
                             f"{len(self.spec.operands)} inputs, got {len(outs)} and {len(ins)}")
        if offsets is None:
            offsets = [o.offset for o in self.spec.operands]
        # lists, which cffi passes as temporary arrays (of void *: any pointer converts)
        ffi = self.ffi
        self.fn(list(outs), list(ins) if ins else ffi.NULL, list(offsets) if ins else ffi.NULL)
        return outs

    def show(self, full=False):
        return show(self, full)


def show(kernel, full=False):
    """The generated C for the chapter: the fused function (``full``: with the preamble of
    includes and eager helpers it is compiled with)."""
    text = kernel.source if full else kernel.body
    return text.rstrip() + "\n"


HEADERS = ("parallel.h", "simd.h", "strided.h", "vmath.h", "tg_fn.h", "tracegrad.h")
_HEADERS = None


def kernel_hash(source):
    """The kernel's identity: its source, the compiler and its flags, and the csrc headers
    it includes (an edit to vmath.h, or CC=clang, must not find the old library in the
    cache)."""
    build = _build_module()
    compile_flags, link_flags = flags()
    global _HEADERS
    if _HEADERS is None:
        _HEADERS = "".join((CSRC / h).read_text() for h in HEADERS)
    headers = _HEADERS
    text = source + "\n/* " + build.compiler() + " flags: " + " ".join(compile_flags + link_flags) + " */\n" + headers
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Every generated library has this variable (codegen's preamble): the SIMD level its
# TG_SIMD functions dispatch on, pointed at the eager library's when it is loaded.
LEVEL = "extern const int *tg_simd_current"


def _build(module, source, folder):
    """Compile ``source`` into folder/<module>.so, atomically; return the path. A plain
    shared library, compiled by one call of the C compiler and opened by cffi in ABI mode
    (``_load``): no Python extension module around it, so no Python.h to parse."""
    build = _build_module()
    compile_flags, link_flags = flags()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=module + ".", dir=folder))
    try:
        (tmp / "kernel.c").write_text(source)
        library = tmp / (module + ".so")
        command = [*shlex.split(build.compiler()), *compile_flags, "-fPIC", "-shared",
                   "-I", str(CSRC), str(tmp / "kernel.c"), "-o", str(library), *link_flags, "-lm"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise KernelCompileError(f"compiling fused kernel {module} failed: {' '.join(command)}\n"
                                     f"The compiler said:\n{result.stdout}{result.stderr}\nThe source:\n{source}")
        final = folder / library.name
        os.replace(library, final)        # atomic: readers see no file or the whole file
        stats["compiled"] += 1
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load(declaration, path):
    """(ffi, lib) of the compiled library, its kernels dispatching on the eager library's
    SIMD level (one level for both, however it is switched: cpu_backend.use_simd_level)."""
    ffi = FFI()
    ffi.cdef(f"{declaration};\n{LEVEL};")
    lib = ffi.dlopen(path)
    address = int(eager_ffi.cast("uintptr_t", eager_lib.tg_simd_current))
    lib.tg_simd_current = ffi.cast("const int *", address)
    return ffi, lib


def compile_source(preamble, body, declaration, spec):
    """The Kernel for a generated function: ``body`` defines the function ``declaration``
    declares, after ``preamble`` (includes and helpers). Found in this process's dict, else
    in the disk cache, else compiled now."""
    source = preamble + "\n" + body
    base = declaration.split("(")[0].split()[-1]
    digest = kernel_hash(source)
    cached = _LOADED.get(digest)
    if cached is not None:
        stats["memory"] += 1
        return Kernel(cached.name, spec, cached.body, cached.source, cached.path, cached.fn, cached.ffi,
                      cached.lib)
    module = f"tg_{base}_{digest}"
    folder = cache_dir()
    path = folder / (module + ".so")
    if path.exists():
        stats["loaded"] += 1
    else:
        path = _build(module, source, folder)
    ffi, lib = _load(declaration, str(path))
    kernel = Kernel(base, spec, body, source, str(path), getattr(lib, base), ffi, lib)
    _LOADED[digest] = kernel
    return kernel
