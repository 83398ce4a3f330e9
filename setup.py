# Everything about the package is in pyproject.toml; this file only adds the native builds
# that have no pyproject.toml spelling: stage3_native's C library through cffi
# (cffi_modules), and, when nvcc and a GPU exist, its CUDA library (stage3_native/cuda_build.py).
import importlib.util
import shutil
from pathlib import Path

from setuptools import setup


def load(name):
    """stage3_native/<name>.py, loaded by its path: not through stage3_native/__init__.py,
    which would load (or build) the library this builds."""
    path = Path(__file__).resolve().parent / "stage3_native" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"tracegrad_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class build_ext_and_cuda(load("build").build_ext_side_by_side):
    """build_ext, its C sources compiled side by side (stage3_native/build.py), then the
    CUDA library with nvcc when there is one and a GPU to run it. A failed CUDA build does
    not stop the install (devices python and cpu need none of it): it is reported, device
    "cuda" says why it cannot run, and the test suite fails on it."""

    def run(self):
        super().run()
        cuda_build = load("cuda_build")
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
