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

# type code -> element type (big-endian, as the format stores it)
TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
         0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


MAX_DIMS = 32                   # numpy 1's limit on an array's dimensions


class IdxError(ValueError):
    """An IDX file is not what its header says (or has no valid header)."""


def read_idx(path, expect_magic=None):
    """The array stored in the IDX file ``path`` (gzipped or not), in native byte order.
    ``expect_magic`` (e.g. 2051 for MNIST images) makes any other magic number an error."""
    data = _read_bytes(path)
    if len(data) < 4:
        raise IdxError(f"{path}: {len(data)} bytes, too short for an IDX header (4-byte magic number)")
    zero, type_code, ndim = struct.unpack(">HBB", data[:4])
    magic = struct.unpack(">I", data[:4])[0]
    if zero != 0 or type_code not in TYPES:
        raise IdxError(f"{path}: magic number {magic} (0x{magic:08x}) is not an IDX header: expected "
                       f"two zero bytes, a type code in {[hex(t) for t in TYPES]} and a dimension count")
    if expect_magic is not None and magic != expect_magic:
        raise IdxError(f"{path}: magic number {magic}, expected {expect_magic}")
    if ndim > MAX_DIMS:
        raise IdxError(f"{path}: {ndim} dimensions, expected at most {MAX_DIMS} (an array's limit)")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IdxError(f"{path}: truncated header: {ndim} dimension sizes need {header} bytes, "
                       f"the file has {len(data)}")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    dtype = TYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize       # Python ints: no int64 wrap-around
    if len(data) - header != expected:
        kind = "truncated" if len(data) - header < expected else "has trailing bytes"
        raise IdxError(f"{path}: {kind}: shape {shape} of {dtype.itemsize}-byte elements needs "
                       f"{expected} bytes of data, the file has {len(data) - header}")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path, array):
    """Write ``array`` as an IDX file (gzipped when the name ends in .gz): for tests and for
    a reader's own digit sets."""
    array = np.asarray(array)
    codes = {dtype.newbyteorder("="): code for code, dtype in TYPES.items()}
    code = codes.get(array.dtype.newbyteorder("="))
    if code is None:
        raise TypeError(f"write_idx: dtype {array.dtype} has no IDX type code; expected one of "
                        f"{sorted(str(d) for d in codes)}")
    payload = struct.pack(f">HBB{array.ndim}I", 0, code, array.ndim, *array.shape)
    payload += array.astype(TYPES[code]).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(payload)


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"\x1f\x8b":                   # not gzip: the raw IDX bytes
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as e:   # cut-off or corrupt compressed stream
        raise IdxError(f"{path}: damaged gzip data ({e}); delete the file to download it again") from e
