"""Saving tensors and state dicts to a file and loading them back: ``save(obj, path)``,
``load(path)``, like ``torch.save``/``torch.load`` (with weights only: tensors, and dicts,
lists and tuples of them and of plain numbers, strings, None).

The file is a small JSON header followed by the raw bytes of each tensor:

    b"TRACEGRAD\\n"  header length (8 bytes)  header (JSON)  tensor bytes ...  CRC-32

The CRC-32 checksum covers the header and the tensor bytes, so a damaged or truncated file
is reported as such instead of loading wrong numbers. It is no defence against a crafted
file (anyone can compute it), so ``load`` also checks every field before it allocates
anything: above all that each tensor's byte count is what its shape and dtype need, since
a native buffer shorter than its shape would let kernels read and write past its end.

The header holds the object with each tensor replaced by {"tensor": i}, and per tensor its
dtype, shape, device and requires_grad. A tensor's bytes are its elements in row-major
order in the dtype's machine format (``array.array(typecode).tobytes()``), so values come
back bit for bit; a view is saved as the contiguous copy of what it shows. Nothing in the
file is executed when loading (no pickle).

Writing is atomic (``atomic.py``): a crash or an error mid-write leaves the previous file
intact; a reader never sees half a file.
"""
import array
import json
import math
import os
import struct
import sys
import zlib
from typing import Any, NamedTuple

from . import backend, dtypes
from .atomic import atomic_write
from .tensor import Tensor

MAGIC = b"TRACEGRAD\n"
VERSION = 1
# What load accepts, each limit stated once:
HEADER_KEYS = {"version", "byteorder", "object", "tensors"}
RECORD_KEYS = {"dtype", "shape", "device", "requires_grad", "nbytes"}
MAX_NUMEL = 2 ** 63 - 1         # sizes a native kernel can index with int64
MAX_DEPTH = 64                  # nesting of dicts, lists and tuples (a training checkpoint: 4)
NODE_KINDS = ("tensor", "dict", "list", "tuple")


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
    be = backend.get(t.device)
    if t.dtype.is_half:                 # its bits, NaN payloads included (dtypes.py)
        if be.has("to_bytes"):
            return be.to_bytes(t.as_view())
        return array.array("H", map(t.dtype.encode, be.to_flat(t.as_view()))).tobytes()
    values = be.to_flat(t.as_view())
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
    """Write obj (a tensor, a state dict, nested dicts/lists of them) to path, atomically
    (``atomic.atomic_write``). `path` may also be a binary file object (then written
    directly, not atomically)."""
    if hasattr(path, "write"):
        _write(path, obj)
    else:
        atomic_write(path, lambda f: _write(f, obj))


def load(path, map_location=None):
    """The object saved at path (or read from a binary file object). Tensors come back on
    the device they were saved from, or on `map_location` (a device name) if given.

    The file is untrusted input: every field is checked before anything is allocated, and
    a file that is damaged, truncated or crafted raises RuntimeError naming the file and
    the field."""
    if map_location is not None:
        if not isinstance(map_location, str):
            raise TypeError(f"load: map_location must be a device name such as 'python', got "
                            f"{type(map_location).__name__}")
        backend.get(map_location)                       # an unknown device fails before reading
    if hasattr(path, "read"):
        data, where = path.read(), getattr(path, "name", "<file object>")
    else:
        with open(path, "rb") as f:
            data = f.read()
        where = os.fspath(path)

    def corrupt(why):
        return RuntimeError(f"load: {where} is not a valid tracegrad file: {why}")

    header, start = _read_header(data, corrupt)
    records = [_check_record(i, spec, corrupt) for i, spec in enumerate(header["tensors"])]
    total = sum(record.nbytes for record in records)
    payload = memoryview(data)[start:]
    if len(payload) != total + 4:
        raise corrupt(f"expected {total} bytes of tensor data and a 4-byte checksum after the "
                      f"header, found {len(payload)} bytes (truncated or appended to)")
    crc, = struct.unpack("<I", payload[total:])
    if zlib.crc32(memoryview(data)[len(MAGIC) + 8:-4]) != crc:
        raise corrupt("its checksum does not match its contents (the file is damaged)")
    _decode(header["object"], [None] * len(records), corrupt)   # the tree checked, no tensors yet
    devices = _devices(records, map_location, where, corrupt)
    tensors, at = [], 0
    for record, device in zip(records, devices):
        raw = payload[at:at + record.nbytes]
        if record.dtype is dtypes.bool_ and bytes(raw).translate(None, b"\x00\x01"):
            # save writes a bool as one byte, 0 or 1; another byte would read as True
            i, byte = next((i, b) for i, b in enumerate(raw) if b > 1)
            raise corrupt(f"tensor {record.index} is bool, but its element {i} is the byte {byte}; "
                          "expected 0 or 1")
        tensors.append(_make_tensor(record, raw, header["byteorder"], device))
        at += record.nbytes
    return _decode(header["object"], tensors, corrupt)


class Record(NamedTuple):
    """One tensor's entry in the header, checked."""
    index: int
    dtype: Any
    shape: list
    device: str
    requires_grad: bool
    nbytes: int


def _short(value, limit=80):
    """repr(value), cut to `limit` characters (a crafted field may be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _read_header(data, corrupt):
    """(the header, where the tensor bytes start): magic, length and the header's own
    fields checked."""
    if not data.startswith(MAGIC):
        raise corrupt("it does not start with the tracegrad signature")
    start = len(MAGIC) + 8
    if len(data) < start:
        raise corrupt("the file is truncated inside its header")
    length, = struct.unpack("<Q", data[len(MAGIC):start])
    if length > len(data) - start - 4:                 # the checksum follows at least
        raise corrupt(f"its header length {length} reaches beyond the end of the file "
                      f"({len(data)} bytes)")
    try:
        header = json.loads(data[start:start + length].decode())
    except RecursionError:
        raise corrupt("its header cannot be read (nested too deeply)") from None
    except ValueError as err:                           # JSON and UTF-8 errors alike
        raise corrupt(f"its header cannot be read ({err})") from None
    if not isinstance(header, dict) or header.keys() != HEADER_KEYS:
        raise corrupt(f"its header is {_short(header)}, expected an object with keys "
                      f"{', '.join(sorted(HEADER_KEYS))}")
    version = header["version"]
    if type(version) is not int or version != VERSION:
        raise corrupt(f"its format version is {_short(version)}, expected {VERSION}")
    if header["byteorder"] not in ("little", "big"):
        raise corrupt(f"its byteorder is {_short(header['byteorder'])}, expected 'little' or 'big'")
    if not isinstance(header["tensors"], list):
        raise corrupt(f"its list of tensors is {_short(header['tensors'])}, expected a list")
    return header, start + length


def _check_record(i, spec, corrupt):
    """Tensor i's record, every field checked; above all that nbytes is what the shape and
    dtype need, since the bytes are copied into a buffer of the shape's size."""
    if not isinstance(spec, dict) or spec.keys() != RECORD_KEYS:
        raise corrupt(f"tensor {i}'s record is {_short(spec)}, expected an object with keys "
                      f"{', '.join(sorted(RECORD_KEYS))}")
    names = [d.name for d in dtypes.ALL]
    if spec["dtype"] not in names:
        raise corrupt(f"tensor {i}'s dtype is {_short(spec['dtype'])}, expected one of {names}")
    dtype = dtypes.by_name(spec["dtype"])
    shape = spec["shape"]
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise corrupt(f"tensor {i}'s shape is {_short(shape)}, expected a list of "
                      "non-negative integers")
    if math.prod(max(n, 1) for n in shape) > MAX_NUMEL:    # a 0 would hide the others
        raise corrupt(f"tensor {i}'s shape {_short(shape)} is too large: its sizes multiply "
                      f"to more than {MAX_NUMEL}")
    if not isinstance(spec["device"], str):
        raise corrupt(f"tensor {i}'s device is {_short(spec['device'])}, expected a device "
                      "name such as 'python'")
    requires_grad = spec["requires_grad"]
    if not isinstance(requires_grad, bool):
        raise corrupt(f"tensor {i}'s requires_grad is {_short(requires_grad)}, expected true "
                      "or false")
    if requires_grad and not dtype.is_floating_point:
        raise corrupt(f"tensor {i} is {dtype.name} with requires_grad true; only "
                      "floating-point tensors can require gradients")
    nbytes, expected = spec["nbytes"], math.prod(shape) * dtype.itemsize
    if type(nbytes) is not int or nbytes != expected:
        raise corrupt(f"tensor {i}'s nbytes is {_short(nbytes)}, expected {expected} "
                      f"(shape {shape}, {dtype.name})")
    return Record(i, dtype, shape, spec["device"], requires_grad, nbytes)


def _devices(records, map_location, where, corrupt):
    """The device each tensor goes to: map_location, or the one it was saved from, which
    must exist and run here; checked for all before any tensor is made."""
    devices = []
    for record in records:
        device = map_location or record.device
        try:
            limit = backend.get(device).max_dims
        except ValueError as err:                       # a name no device has
            raise corrupt(f"tensor {record.index}'s device: {err}") from None
        except RuntimeError as err:                     # a device this machine cannot run
            raise RuntimeError(f"load: {where}: tensor {record.index} was saved on device "
                               f"{device!r}, which cannot run here ({err}); pass map_location "
                               "(a device that runs here, e.g. 'python') to load it elsewhere") from None
        if limit is not None and len(record.shape) > limit:
            raise RuntimeError(f"load: {where}: tensor {record.index} has {len(record.shape)} "
                               f"dimensions; device {device!r} supports at most {limit}")
        devices.append(device)
    return devices


def _decode(node, tensors, corrupt, depth=0):
    """The object the header's tree `node` stands for, each {"tensor": i} replaced by
    tensors[i]; every node is checked, so a first pass with placeholders for the tensors
    validates the whole tree before any tensor is made."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if depth >= MAX_DEPTH:
        raise corrupt(f"its object is nested more than {MAX_DEPTH} levels deep")
    if not (isinstance(node, dict) and len(node) == 1 and next(iter(node)) in NODE_KINDS):
        raise corrupt(f"its object holds {_short(node)}, expected null, true, false, a number, "
                      'a string, or an object {"KIND": value} with KIND one of '
                      f"{', '.join(NODE_KINDS)}")
    (kind, value), = node.items()
    if kind == "tensor":
        if type(value) is not int or not 0 <= value < len(tensors):
            valid = f"0 to {len(tensors) - 1}" if tensors else "none: the file has no tensors"
            raise corrupt(f"its object refers to tensor {_short(value)}, expected an index "
                          f"({valid})")
        return tensors[value]
    if not isinstance(value, list):
        raise corrupt(f'its object holds a "{kind}" of {_short(value)}, expected a list')
    if kind != "dict":
        items = [_decode(v, tensors, corrupt, depth + 1) for v in value]
        return tuple(items) if kind == "tuple" else items
    out = {}
    for entry in value:
        if not (isinstance(entry, list) and len(entry) == 2):
            raise corrupt(f"its object has a dict entry {_short(entry)}, expected a [key, value] pair")
        key = _decode(entry[0], tensors, corrupt, depth + 1)
        try:
            hash(key)
        except TypeError:                               # a list, say
            raise corrupt(f"its object has a dict key of type {type(key).__name__}, which "
                          "cannot be a dict key") from None
        out[key] = _decode(entry[1], tensors, corrupt, depth + 1)
    return out


def _make_tensor(record, raw, byteorder, device):
    values = array.array(record.dtype.typecode)
    values.frombytes(raw)
    if byteorder != sys.byteorder:                      # saved on a machine of the other endianness
        values.byteswap()
    # _check_record made nbytes = numel * itemsize; a native buffer shorter than its shape
    # would let kernels read and write past its end.
    assert len(values) == math.prod(record.shape), "nbytes was checked against the shape"
    be = backend.get(device)
    if record.dtype.is_half:            # bits, not numbers: moved as bytes
        if be.has("from_bytes"):
            buffer = be.from_bytes(values.tobytes(), record.dtype)
        else:
            buffer = be.from_flat(list(map(record.dtype.decode, values)), record.dtype)
    else:
        buffer = be.from_flat(values.tolist(), record.dtype)
    t = Tensor.from_buffer(buffer, record.shape, record.dtype, device)
    return t.requires_grad_(True) if record.requires_grad else t
