"""Saving tensors and state dicts to a file and loading them back: ``save(obj, path)``,
``load(path)``, like ``torch.save``/``torch.load`` (with weights only: tensors, and dicts,
lists and tuples of them and of plain numbers, strings, None).

The file is a small JSON header followed by the raw bytes of each tensor:

    b"TRACEGRAD\\n"  header length (8 bytes)  header (JSON)  tensor bytes ...  CRC-32

The CRC-32 checksum covers the header and the tensor bytes, so a damaged or truncated file
is reported as such instead of loading wrong numbers.

The header holds the object with each tensor replaced by {"tensor": i}, and per tensor its
dtype, shape, device and requires_grad. A tensor's bytes are its elements in row-major
order in the dtype's machine format (``array.array(typecode).tobytes()``), so values come
back bit for bit; a view is saved as the contiguous copy of what it shows. Nothing in the
file is executed when loading (no pickle).

Writing is atomic: the bytes go to a temporary file in the same folder, which is flushed to
disk and then renamed over `path` (``os.replace``). A crash or an error mid-write leaves the
previous file intact; a reader never sees half a file.
"""
import array
import json
import os
import secrets
import struct
import sys
import zlib

from . import backend, dtypes
from .tensor import Tensor

MAGIC = b"TRACEGRAD\n"
VERSION = 1


def _encode(obj, tensors):
    """obj as JSON-ready data; each tensor is appended to `tensors` and replaced by its index."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return {"tensor": len(tensors) - 1}
    if isinstance(obj, dict):                          # keys may be ints (optimizer state)
        return {"dict": [[_encode(k, tensors), _encode(v, tensors)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"tuple" if isinstance(obj, tuple) else "list": [_encode(v, tensors) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"save: cannot save an object of type {type(obj).__name__}; expected "
                    "tensors and dicts, lists, tuples, numbers, strings or None")


def _decode(data, tensors):
    if not isinstance(data, dict):
        return data
    (kind, value), = data.items()
    if kind == "tensor":
        return tensors[value]
    if kind == "dict":
        return {_decode(k, tensors): _decode(v, tensors) for k, v in value}
    items = [_decode(v, tensors) for v in value]
    return tuple(items) if kind == "tuple" else items


def _tensor_bytes(t):
    """t's elements, row-major, as the raw bytes of its dtype."""
    values = backend.get(t.device).to_flat(t.as_view())
    return array.array(t.dtype.typecode, values).tobytes()


def _describe(t):
    return {"dtype": t.dtype.name, "shape": list(t.shape), "device": t.device,
            "requires_grad": t.requires_grad, "nbytes": t.numel() * t.dtype.itemsize}


def _write(f, obj):
    tensors = []
    header = {"version": VERSION, "byteorder": sys.byteorder, "object": _encode(obj, tensors)}
    header["tensors"] = [_describe(t) for t in tensors]
    head = json.dumps(header).encode()
    f.write(MAGIC + struct.pack("<Q", len(head)) + head)
    crc = zlib.crc32(head)
    for t in tensors:                                   # one tensor at a time in memory
        data = _tensor_bytes(t)
        f.write(data)
        crc = zlib.crc32(data, crc)
    f.write(struct.pack("<I", crc))


def save(obj, path):
    """Write obj (a tensor, a state dict, nested dicts/lists of them) to path, atomically.
    `path` may also be a binary file object (then written directly, not atomically)."""
    if hasattr(path, "write"):
        _write(path, obj)
        return
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            _write(f, obj)
            f.flush()
            os.fsync(f.fileno())                        # the bytes are on disk before the rename
        os.replace(tmp, path)                           # atomic: old file or new, never half
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):                      # make the rename itself durable (POSIX)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def load(path, map_location=None):
    """The object saved at path (or read from a binary file object). Tensors come back on
    the device they were saved from, or on `map_location` (a device name) if given."""
    if hasattr(path, "read"):
        data, where = path.read(), getattr(path, "name", "<file object>")
    else:
        with open(path, "rb") as f:
            data = f.read()
        where = os.fspath(path)

    def corrupt(why):
        return RuntimeError(f"load: {where} is not a valid tracegrad file: {why}")

    if not data.startswith(MAGIC):
        raise corrupt("it does not start with the tracegrad signature")
    start = len(MAGIC) + 8
    if len(data) < start:
        raise corrupt("the file is truncated inside its header")
    length, = struct.unpack("<Q", data[len(MAGIC):start])
    try:
        header = json.loads(data[start:start + length].decode())
        specs = header["tensors"]
        total = sum(spec["nbytes"] for spec in specs)
    except (ValueError, KeyError, TypeError) as err:
        raise corrupt(f"its header cannot be read ({err})") from None
    payload = data[start + length:]
    if len(payload) != total + 4:
        raise corrupt(f"expected {total} bytes of tensor data and a 4-byte checksum after the "
                      f"header, found {len(payload)} bytes (truncated or appended to)")
    crc, = struct.unpack("<I", payload[total:])
    if zlib.crc32(payload[:total], zlib.crc32(data[start:start + length])) != crc:
        raise corrupt("its checksum does not match its contents (the file is damaged)")
    tensors, at = [], 0
    for spec in specs:
        tensors.append(_make_tensor(spec, payload[at:at + spec["nbytes"]], header["byteorder"],
                                    map_location))
        at += spec["nbytes"]
    return _decode(header["object"], tensors)


def _make_tensor(spec, raw, byteorder, map_location):
    dtype = dtypes.by_name(spec["dtype"])
    values = array.array(dtype.typecode)
    values.frombytes(raw)
    if byteorder != sys.byteorder:                      # saved on a machine of the other endianness
        values.byteswap()
    device = map_location or spec["device"]
    buffer = backend.get(device).from_flat(values.tolist(), dtype)
    t = Tensor.from_buffer(buffer, spec["shape"], dtype, device)
    return t.requires_grad_(True) if spec["requires_grad"] else t
