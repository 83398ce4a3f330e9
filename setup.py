# Everything about the package is in pyproject.toml; this file only adds the native builds
# that have no pyproject.toml spelling: stage3_native's C library through cffi
# (cffi_modules), and, when nvcc and a GPU exist, its CUDA library (stage3_native/cuda_build.py).
import importlib.util
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext


class build_ext_and_cuda(build_ext):
    """build_ext, its C sources compiled side by side, then the CUDA library with nvcc
    when there is one and a GPU to run it. A failed CUDA build does not stop the install
    (devices python and cpu need none of it): it is reported, device "cuda" says why it
    cannot run, and the test suite fails on it."""

    def build_extension(self, ext):
        # distutils compiles an extension's sources one after another; each is a separate
        # compiler process, so they can as well run at once, one per core
        compile_each = self.compiler.compile

        def compile_all(sources, *args, **kwargs):
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                done = pool.map(lambda source: compile_each([source], *args, **kwargs), sources)
                return [obj for objects in done for obj in objects]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            del self.compiler.compile            # the class's own method again

    def run(self):
        super().run()
        path = Path(__file__).resolve().parent / "stage3_native" / "cuda_build.py"
        spec = importlib.util.spec_from_file_location("tracegrad_cuda_build", path)
        cuda_build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cuda_build)          # not through stage3_native/__init__.py
        if cuda_build.nvcc() is None:
            print("stage3_native: nvcc not found, device 'cuda' not built")
            return
        if cuda_build.no_gpu():             # nothing here could run it; built on first use
            print(f"stage3_native: {cuda_build.no_gpu()}, device 'cuda' not built")
            return
        try:
            library = cuda_build.build("cuda")
        except RuntimeError as err:
            print(f"stage3_native: building the CUDA library failed:\n{err}")
            return
        print(f"stage3_native: built {library}")
        if not self.inplace:                         # a regular install: ship it in the wheel
            target = Path(self.build_lib) / "stage3_native"
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(library, target / library.name)


setup(cffi_modules=["stage3_native/build.py:ffibuilder"], cmdclass={"build_ext": build_ext_and_cuda})
