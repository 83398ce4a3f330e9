"""Saving tensors and state dicts to a file and loading them back: ``save(obj, path)``,
``load(path)``, like ``torch.save``/``torch.load``: tensors (a Parameter stays one), numpy
arrays, dtypes, and dicts, lists and tuples of them and of plain numbers, strings, None;
and whole models (``save(model, path)``), below.

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

An object saved twice (a weight tied between two layers) is one tensor in the file and one
object when loaded. A model, an ``nn.Module``, is saved as PyTorch pickles one: its class,
by name, and its attributes (tensors, sub-modules, plain values, and functions such as
``F.relu`` by name). Loading makes the object without running any of its code
(``__init__`` included) and sets its attributes; but calling it runs its class's code on the
file's data, so ``load`` makes only tracegrad's own classes (and functions), as PyTorch's
``weights_only=True`` makes only the classes it knows: a model of the user's own class
needs ``load(path, weights_only=False)`` (the class's module is imported, as pickle does)
or the class allowed with ``add_safe_globals([Net])`` (safe_globals.py). A state dict needs
neither.
"""
import array
import json
import math
import os
import struct
import sys
import zlib
from types import FunctionType
from typing import Any, NamedTuple

from . import backend, dtypes
from .atomic import atomic_write
from .interop import from_numpy
from .nn.modules import Module, Parameter
from .safe_globals import (add_safe_globals, clear_safe_globals, get_safe_globals, path_of, resolve,  # noqa: F401
                           safe_globals)
from .safe_globals import short as _short
from .tensor import Tensor

MAGIC = b"TRACEGRAD\n"
VERSION = 1
# What load accepts, each limit stated once:
HEADER_KEYS = {"version", "byteorder", "object", "tensors"}
RECORD_KEYS = {"dtype", "shape", "device", "requires_grad", "nbytes"}
MAX_NUMEL = 2 ** 63 - 1         # sizes a native kernel can index with int64
MAX_DEPTH = 64                  # nesting of dicts, lists and tuples (a training checkpoint: 4)
NODE_KINDS = ("tensor", "dict", "list", "tuple", "parameter", "ndarray", "dtype", "module", "ref",
              "function")


class _Encoder:
    """An object as JSON-ready data, each tensor replaced by its index in ``tensors`` (an
    object seen twice, once), each module after the first sight of it by {"ref": k}."""

    def __init__(self):
        self.tensors, self.indices, self.modules = [], {}, {}

    def tensor(self, t):
        if id(t) not in self.indices:
            self.indices[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return self.indices[id(t)]

    def encode(self, obj, where):
        if isinstance(obj, Tensor):
            return {"parameter" if isinstance(obj, Parameter) else "tensor": self.tensor(obj)}
        if isinstance(obj, dict):                      # keys may be ints (optimizer state)
            return {"dict": [[self.encode(k, where), self.encode(v, f"{where}[{k!r}]")]
                             for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {"tuple" if isinstance(obj, tuple) else "list":
                    [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, dtypes.DType):
            return {"dtype": obj.name}
        if isinstance(obj, Module):
            return self.module(obj, where)
        if isinstance(obj, FunctionType):
            return {"function": path_of(obj, "function", where)}
        numpy = sys.modules.get("numpy")               # no numpy loaded: obj is no array
        if numpy is not None and isinstance(obj, numpy.ndarray):
            return {"ndarray": self.tensor(from_numpy(numpy.ascontiguousarray(obj)))}
        raise TypeError(f"save: cannot save an object of type {type(obj).__name__} ({where}); "
                        "expected tensors, numpy arrays, modules and dicts, lists, tuples, numbers, "
                        "strings or None")

    def module(self, m, where):
        if id(m) in self.modules:
            return {"ref": self.modules[id(m)]}
        self.modules[id(m)] = len(self.modules)
        state = getattr(m, "__dict__", None)
        if state is None:
            raise TypeError(f"save: {where} ({type(m).__name__}) has no attribute dict to save")
        return {"module": [path_of(type(m), "class", where),
                           {"dict": [[k, self.encode(v, f"{where}.{k}")] for k, v in state.items()]}]}


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
    encoder = _Encoder()
    header = {"version": VERSION, "byteorder": sys.byteorder, "object": encoder.encode(obj, "the object")}
    tensors = encoder.tensors
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
    """Write obj (a tensor, a state dict, nested dicts/lists of them, a numpy array, a whole
    model) to path, atomically (``atomic.atomic_write``). `path` may also be a binary file
    object (then written directly, not atomically)."""
    if hasattr(path, "write"):
        _write(path, obj)
    else:
        atomic_write(path, lambda f: _write(f, obj))


def load(path, map_location=None, *, weights_only=None):
    """The object saved at path (or read from a binary file object). Tensors come back on
    the device they were saved from, or on `map_location` (a device name) if given.

    The file is untrusted input: every field is checked before anything is allocated, and
    a file that is damaged, truncated or crafted raises RuntimeError naming the file and
    the field. A saved model is made only of tracegrad's classes and functions and those
    ``add_safe_globals`` allows, unless ``weights_only=False`` (trusting the file: any
    Module class, its module imported as pickle does; the module docstring says why)."""
    if weights_only not in (None, True, False):
        raise TypeError(f"load: weights_only must be True, False or None, got {weights_only!r}")
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
    trusted = weights_only is False
    _Decoder([None] * len(records), corrupt, trusted, where).decode(header["object"])  # checked, no tensors yet
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
    return _Decoder(tensors, corrupt, trusted, where).decode(header["object"])


class Record(NamedTuple):
    """One tensor's entry in the header, checked."""
    index: int
    dtype: Any
    shape: list
    device: str
    requires_grad: bool
    nbytes: int


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


class _Decoder:
    """The object the header's tree stands for, each {"tensor": i} replaced by tensors[i];
    every node is checked, so a first pass with None for the tensors validates the whole
    tree before any tensor is made."""

    def __init__(self, tensors, corrupt, trusted, where):
        self.tensors, self.corrupt, self.trusted, self.where = tensors, corrupt, trusted, where
        self.parameters, self.modules = {}, []

    def index(self, value, what, count):
        if type(value) is not int or not 0 <= value < count:
            valid = f"0 to {count - 1}" if count else f"none: the file has no {what}s"
            raise self.corrupt(f"its object refers to {what} {_short(value)}, expected an index ({valid})")
        return value

    def decode(self, node, depth=0):
        corrupt = self.corrupt
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if depth >= MAX_DEPTH:
            raise corrupt(f"its object is nested more than {MAX_DEPTH} levels deep")
        if not (isinstance(node, dict) and len(node) == 1 and next(iter(node)) in NODE_KINDS):
            raise corrupt(f"its object holds {_short(node)}, expected null, true, false, a number, "
                          'a string, or an object {"KIND": value} with KIND one of '
                          f"{', '.join(NODE_KINDS)}")
        (kind, value), = node.items()
        if kind in ("tensor", "parameter", "ndarray"):
            t = self.tensors[self.index(value, "tensor", len(self.tensors))]
            if kind == "tensor" or t is None:
                return t
            if kind == "ndarray":
                return t.detach().numpy()
            if value not in self.parameters:            # one Parameter object per tensor
                self.parameters[value] = Parameter(t, t.requires_grad)
            return self.parameters[value]
        if kind == "dtype":
            if value not in [d.name for d in dtypes.ALL]:
                raise corrupt(f"its object names the dtype {_short(value)}, expected one of "
                              f"{[d.name for d in dtypes.ALL]}")
            return dtypes.by_name(value)
        if kind == "ref":
            return self.modules[self.index(value, "module", len(self.modules))]
        if kind == "function":
            return resolve(value, "function", self)
        if not isinstance(value, list):
            raise corrupt(f'its object holds a "{kind}" of {_short(value)}, expected a list')
        if kind == "module":
            return self.module(value, depth)
        if kind != "dict":
            items = [self.decode(v, depth + 1) for v in value]
            return tuple(items) if kind == "tuple" else items
        out = {}
        for entry in value:
            if not (isinstance(entry, list) and len(entry) == 2):
                raise corrupt(f"its object has a dict entry {_short(entry)}, expected a [key, value] pair")
            key = self.decode(entry[0], depth + 1)
            try:
                hash(key)
            except TypeError:                           # a list, say
                raise corrupt(f"its object has a dict key of type {type(key).__name__}, which "
                              "cannot be a dict key") from None
            out[key] = self.decode(entry[1], depth + 1)
        return out

    def module(self, value, depth):
        """A Module of the named class, made without running its code, then its attributes."""
        if len(value) != 2 or not (isinstance(value[1], dict) and list(value[1]) == ["dict"]):
            raise self.corrupt(f"its object holds a module {_short(value)}, expected [class, "
                               '{"dict": attributes}]')
        cls = resolve(value[0], "class", self)
        try:
            obj = object.__new__(cls)
        except TypeError as err:                        # a class built on another base's layout
            raise self.corrupt(f"its module class {value[0]} cannot be made ({err})") from None
        self.modules.append(obj)                        # before its attributes: they may refer to it
        state = self.decode(value[1], depth + 1)
        if not all(isinstance(k, str) for k in state):
            raise self.corrupt(f"its module of class {value[0]} has attribute names that are not strings")
        vars(obj).update(state)
        return obj


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
