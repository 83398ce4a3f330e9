"""The IDX file format MNIST is distributed in (thesis, "Mnist Training Example").

    magic   4 bytes: 0, 0, the element type code, the number of dimensions
    sizes   one big-endian uint32 per dimension
    data    the elements, big-endian, row-major

MNIST's images are type 0x08 (unsigned byte) with 3 dimensions (magic 2051), its labels
type 0x08 with 1 dimension (magic 2049). The files usually come gzipped; ``read_idx``
reads either. A file whose data is shorter or longer than its sizes say, a wrong magic
number, too many dimensions or a damaged gzip stream raises IdxError naming the file: a silently short
dataset would train and report accuracies on the wrong thing.
"""
import gzip
import math
import struct
import zlib

import numpy as np

from stage2_tensor.atomic import atomic_write

from ..data import MAX_DIMS

# type code -> element type (big-endian, as the format stores it)
TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
         0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


MAX_BYTES = 4 << 30             # far above any data set read here (MNIST's largest file: 47 MB)


class IdxError(ValueError):
    """An IDX file is not what its header says (or has no valid header)."""


def read_idx(path, expect_magic=None):
    """The array stored in the IDX file ``path`` (gzipped or not), in native byte order.
    ``expect_magic`` (e.g. 2051 for MNIST images) makes any other magic number an error.

    The file is read as a stream, header first, and never more than the header says plus
    one byte (to see a longer file): a small gzip file that would decompress to gigabytes
    (a "gzip bomb") costs no more memory than its honest header allows, and a header
    claiming more than MAX_BYTES is refused before anything is read."""
    with _open(path) as f:
        head = _read(f, path, 4)
        if len(head) < 4:
            raise IdxError(f"{path}: {len(head)} bytes, too short for an IDX header (4-byte magic number)")
        zero, type_code, ndim = struct.unpack(">HBB", head)
        magic = struct.unpack(">I", head)[0]
        if zero != 0 or type_code not in TYPES:
            raise IdxError(f"{path}: magic number {magic} (0x{magic:08x}) is not an IDX header: expected "
                           f"two zero bytes, a type code in {[hex(t) for t in TYPES]} and a dimension count")
        if expect_magic is not None and magic != expect_magic:
            raise IdxError(f"{path}: magic number {magic}, expected {expect_magic}")
        if ndim > MAX_DIMS:
            raise IdxError(f"{path}: {ndim} dimensions, expected at most {MAX_DIMS} (an array's limit)")
        sizes = _read(f, path, 4 * ndim)
        if len(sizes) < 4 * ndim:
            raise IdxError(f"{path}: truncated header: {ndim} dimension sizes need {4 + 4 * ndim} bytes, "
                           f"the file has {4 + len(sizes)}")
        shape = struct.unpack(f">{ndim}I", sizes)
        dtype = TYPES[type_code]
        expected = math.prod(shape) * dtype.itemsize       # Python ints: no int64 wrap-around
        if expected > MAX_BYTES:
            raise IdxError(f"{path}: shape {shape} of {dtype.itemsize}-byte elements needs {expected} "
                           f"bytes, more than the {MAX_BYTES} an IDX file may hold here")
        data = _read(f, path, expected + 1)
    if len(data) != expected:
        kind = "truncated" if len(data) < expected else "has trailing bytes"
        found = len(data) if len(data) < expected else "more"
        raise IdxError(f"{path}: {kind}: shape {shape} of {dtype.itemsize}-byte elements needs "
                       f"{expected} bytes of data, the file has {found}")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path, array):
    """Write ``array`` as an IDX file (gzipped when the name ends in .gz), atomically: for
    tests and for a reader's own digit sets."""
    array = np.asarray(array)
    codes = {dtype.newbyteorder("="): code for code, dtype in TYPES.items()}
    code = codes.get(array.dtype.newbyteorder("="))
    if code is None:
        raise TypeError(f"write_idx: dtype {array.dtype} has no IDX type code; expected one of "
                        f"{sorted(str(d) for d in codes)}")
    payload = struct.pack(f">HBB{array.ndim}I", 0, code, array.ndim, *array.shape)
    payload += array.astype(TYPES[code]).tobytes()
    if str(path).endswith(".gz"):
        payload = gzip.compress(payload)
    atomic_write(path, lambda f: f.write(payload))     # the old file or the whole new one


def _open(path):
    """The file, or its decompressed stream when it is gzipped (the magic bytes 1f 8b)."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def _read(f, path, n):
    """Up to n bytes of the stream f; a damaged gzip stream is an IdxError naming the file."""
    try:
        return f.read(n)
    except (EOFError, OSError, zlib.error) as e:   # cut-off or corrupt compressed stream
        raise IdxError(f"{path}: damaged gzip data ({e}); delete the file to download it again") from e
