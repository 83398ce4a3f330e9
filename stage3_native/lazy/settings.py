"""Fusion's settings (chapter 11, lazy execution and kernel fusion): on or off, the size
below which a group runs unfused, and ``fusion``, a with block that changes them and
kernels.py's epilogue threshold for its duration.
"""
import os
from contextlib import contextmanager

from . import kernels

# On unless TRACEGRAD_LAZY_FUSION=0; groups of fewer elements than min_elements run unfused
# (a kernel's first compile runs the C compiler; below a few thousand elements the memory
# traffic fusion saves is smaller than the Python work of planning).
FUSION = {"enabled": os.environ.get("TRACEGRAD_LAZY_FUSION", "1") != "0",
          "min_elements": int(os.environ.get("TRACEGRAD_FUSE_MIN", "4096"))}


@contextmanager
def fusion(enabled=True, min_elements=None, epilogue_min_bytes=None):
    """Fusion on or off, and its thresholds, inside a with block: ``with
    lazy.fusion(min_elements=0):`` fuses even tiny graphs (tests, the chapter);
    ``epilogue_min_bytes=0`` gives every product its element-wise epilogue
    (kernels.EPILOGUE_MIN_BYTES)."""
    saved, saved_bytes = dict(FUSION), kernels.EPILOGUE_MIN_BYTES
    FUSION["enabled"] = enabled
    if min_elements is not None:
        FUSION["min_elements"] = min_elements
    if epilogue_min_bytes is not None:
        kernels.EPILOGUE_MIN_BYTES = epilogue_min_bytes
    try:
        yield
    finally:
        FUSION.update(saved)
        kernels.EPILOGUE_MIN_BYTES = saved_bytes
