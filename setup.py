# Everything about the package is in pyproject.toml; this file only tells setuptools to build
# stage3_native's C library with cffi (cffi_modules has no pyproject.toml spelling).
from setuptools import setup

setup(cffi_modules=["stage3_native/build.py:ffibuilder"])
