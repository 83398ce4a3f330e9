"""Compiling generated kernels (chapter 11, lazy execution and kernel fusion): a generated
C function becomes a Kernel through cffi, compiled once per machine and cached on disk by
the hash of its source.

The cache: ``$TRACEGRAD_KERNEL_CACHE``, else ``~/.cache/tracegrad/kernels``. A library is
compiled in a temporary folder inside it and moved into place with os.replace, which is
atomic: a second process compiling the same kernel at the same time replaces a whole file
with an identical whole file, and no process ever loads half of one.
"""
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CSRC = Path(__file__).resolve().parent.parent / "csrc"

# The flags of the eager library (build.py), so the same code compiles the same way; under
# TRACEGRAD_SANITIZE=1 (make sanitize) the generated kernels are sanitized too.
_FLAGS = None


def flags():
    """(compile flags, link flags) of a generated kernel."""
    global _FLAGS
    if _FLAGS is None:
        from .. import build
        _FLAGS = (build.FLAGS + build.OPENMP + build.SANITIZE, build.OPENMP + build.SANITIZE)
    return _FLAGS


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
    from .. import build
    compile_flags, link_flags = flags()
    global _HEADERS
    if _HEADERS is None:
        _HEADERS = "".join((CSRC / h).read_text() for h in HEADERS)
    headers = _HEADERS
    text = (source + "\n/* " + build.compiler() + " flags: " + " ".join(compile_flags + link_flags)
            + " */\n" + headers)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _capture_stderr(fn):
    """Run fn() with file descriptor 2 going to a temporary file (the compiler is a child
    process writing there); return (result or exception, what was written)."""
    import sys
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as err:
        os.dup2(err.fileno(), 2)
        try:
            result = fn()
        except Exception as exc:      # noqa: BLE001 - handed back to the caller
            result = exc
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return result, err.read().decode(errors="replace")


# Every generated library has this variable (codegen's preamble): the SIMD level its
# TG_SIMD functions dispatch on, pointed at the eager library's when it is loaded.
LEVEL = "extern const int *tg_simd_current"


def _build(module, source, declaration, folder):
    """Compile ``source`` into folder/<module><suffix>, atomically; return the path."""
    from cffi import FFI
    compile_flags, link_flags = flags()
    builder = FFI()
    builder.cdef(f"{declaration};\n{LEVEL};")
    builder.set_source(module, source, include_dirs=[str(CSRC)], libraries=["m"],
                       extra_compile_args=compile_flags, extra_link_args=link_flags)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=module + ".", dir=folder)
    try:
        result, said = _capture_stderr(lambda: builder.compile(tmpdir=tmp, verbose=False))
        if isinstance(result, Exception):
            raise KernelCompileError(f"compiling fused kernel {module} failed: {result}\n"
                                     f"The compiler said:\n{said}\nThe source:\n{source}") from None
        final = folder / Path(result).name
        os.replace(result, final)         # atomic: readers see no file or the whole file
        stats["compiled"] += 1
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load(module, path):
    """The compiled module, its kernels dispatching on the eager library's SIMD level (one
    level for both, however it is switched: cpu_backend.use_simd_level)."""
    from ..cpu.backend import ffi, lib
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    address = int(ffi.cast("uintptr_t", lib.tg_simd_current))
    mod.lib.tg_simd_current = mod.ffi.cast("const int *", address)
    return mod


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
    path = folder / (module + importlib.machinery.EXTENSION_SUFFIXES[0])
    if path.exists():
        stats["loaded"] += 1
    else:
        path = _build(module, source, declaration, folder)
    mod = _load(module, str(path))
    kernel = Kernel(base, spec, body, source, str(path), getattr(mod.lib, base), mod.ffi, mod.lib)
    _LOADED[digest] = kernel
    return kernel
