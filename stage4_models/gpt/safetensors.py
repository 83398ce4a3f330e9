"""Reading and writing safetensors files, the format Hugging Face publishes weights in
(GPT-2's ``model.safetensors``; thesis, section "GPT", loading GPT-2's weights).

A file is three parts:

    N (8 bytes, little-endian u64)   header (N bytes of UTF-8 JSON)   data (the rest)

The header maps each tensor's name to {"dtype": "F32", "shape": [768, 2304],
"data_offsets": [begin, end]}, byte offsets into the data part; an optional
"__metadata__" entry maps strings to strings. A tensor's bytes are its elements in
row-major order, little-endian; a BOOL is one byte, 0 or 1. Nothing in the file is
executed (unlike a pickled PyTorch checkpoint), and the header says where every tensor is,
so a reader can check the whole layout before trusting a single number, as ``read_numpy``
does, with the reference implementation's rules: a header of at most 100 MB, each name
once, and tensors that tile the data part exactly, in some order, without gaps or overlaps.

``load`` gives stage2 tensors, ``read_numpy`` numpy arrays (the 16-bit floats F16 and BF16
become float32, which holds each of their values exactly), ``save`` writes a file.
"""
import json
import math
import os
import struct
from collections import Counter

import numpy as np

import stage2_tensor as tg
from stage2_tensor.atomic import atomic_write

from ..data import MAX_DIMS

# safetensors' dtype names -> the numpy dtype of the bytes in the file (little-endian).
# BF16 has no numpy dtype: its 16 bits are the high half of a float32, read as uint16.
FILE_DTYPES = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
               "BF16": np.dtype("<u2"), "I64": np.dtype("<i8"), "I32": np.dtype("<i4"),
               "BOOL": np.dtype("bool")}
# numpy dtypes that save writes -> their safetensors name (the engine's dtypes, and float16)
SAVED_DTYPES = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32",
                np.dtype(np.float16): "F16", np.dtype(np.int64): "I64",
                np.dtype(np.int32): "I32", np.dtype(np.bool_): "BOOL"}
METADATA = "__metadata__"
MAX_NUMEL = 2 ** 63 - 1         # what numpy (and a native kernel) can index
MAX_HEADER = 100_000_000        # the reference implementation's limit on the header's bytes


class _Corrupt:
    """Makes the ValueErrors of one file, each naming the file (and the tensor)."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def __call__(self, why, name=None):
        where = f"tensor {name!r} of " if name is not None else ""
        return ValueError(f"safetensors: {where}{self.path}: {why}")


class _Object(dict):
    """A JSON object that remembers the keys written in it more than once. Python's json
    keeps the last silently; the reference implementation refuses such a header, since two
    readers could then disagree on which tensor a name means."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.repeated = [key for key, n in Counter(key for key, _ in pairs).items() if n > 1]


def read_header(path):
    """(tensors, metadata, data_start) of the file at path: tensors maps each name to
    (dtype name, shape tuple, begin, end) with absolute byte positions, in the header's
    order; metadata is the "__metadata__" dict (empty if absent). Every check of the layout
    happens here; a ValueError names the file, the tensor and what was expected."""
    corrupt = _Corrupt(path)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise corrupt(f"the file has {size} bytes; expected at least 8 (the header length)")
        n, = struct.unpack("<Q", head)
        if n > MAX_HEADER:
            raise corrupt(f"the header length {n} is more than {MAX_HEADER} bytes, the most the "
                          "reference implementation reads")
        if n > size - 8:
            raise corrupt(f"the header length {n} reaches beyond the file: expected at most "
                          f"{size - 8} (the file's {size} bytes less the 8 of the length)")
        text = f.read(n)
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_Object)
    except (UnicodeDecodeError, ValueError) as err:
        raise corrupt(f"the header is not UTF-8 JSON ({err})") from None
    except RecursionError:
        raise corrupt("the header is JSON nested too deeply to read") from None
    if not isinstance(header, dict):
        raise corrupt(f"the header is a JSON {type(header).__name__}; expected an object "
                      "mapping tensor names to their dtype, shape and data_offsets")
    if header.repeated:
        name = header.repeated[0]
        raise corrupt("the header has two entries of this name; expected one (a name means one "
                      "tensor)", None if name == METADATA else name)
    metadata = header.pop(METADATA, {})
    if isinstance(metadata, _Object) and metadata.repeated:
        raise corrupt(f"{METADATA} gives {metadata.repeated[0]!r} more than once; expected each key once")
    if not (isinstance(metadata, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise corrupt(f"{METADATA} is {metadata!r}; expected an object of strings to strings")
    data_start, data_size = 8 + n, size - 8 - n
    tensors = {name: _entry(corrupt, name, info, data_start) for name, info in header.items()}
    _check_tiling(corrupt, tensors, data_start, data_size)
    return tensors, metadata, data_start


def _entry(corrupt, name, info, data_start):
    """One header entry, checked on its own: (dtype, shape, begin, end), absolute."""
    if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
        raise corrupt(f"its entry is {info!r}; expected an object with dtype, shape and "
                      "data_offsets", name)
    if info.repeated:
        raise corrupt(f"its entry gives {info.repeated[0]!r} more than once; expected each "
                      "field once", name)
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(dtype, str) or dtype not in FILE_DTYPES:
        raise corrupt(f"dtype {dtype!r} is not supported; expected one of "
                      f"{', '.join(FILE_DTYPES)}", name)
    if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
        raise corrupt(f"shape {shape!r} is not a list of non-negative integers", name)
    if len(shape) > MAX_DIMS or math.prod(max(d, 1) for d in shape) > MAX_NUMEL:  # 0 hides the rest
        raise corrupt(f"shape {shape!r} is too large: expected at most {MAX_DIMS} sizes whose "
                      f"product (ignoring zeros) is at most {MAX_NUMEL}", name)
    if not (isinstance(offsets, list) and len(offsets) == 2
            and all(type(o) is int and o >= 0 for o in offsets) and offsets[0] <= offsets[1]):
        raise corrupt(f"data_offsets {offsets!r} are not [begin, end] with 0 <= begin <= end", name)
    begin, end = offsets
    expected = math.prod(shape) * FILE_DTYPES[dtype].itemsize
    if end - begin != expected:
        raise corrupt(f"data_offsets [{begin}, {end}] hold {end - begin} bytes; expected "
                      f"{expected} for shape {tuple(shape)} of {dtype} "
                      f"({FILE_DTYPES[dtype].itemsize} bytes each)", name)
    return dtype, tuple(shape), data_start + begin, data_start + end


def _check_tiling(corrupt, tensors, data_start, data_size):
    """The tensors' byte ranges, sorted, must follow each other from the data part's first
    byte to its last: an overlap would let two tensors share bytes, a gap or a tail would
    be bytes no tensor accounts for (a sign of a damaged or hand-edited file)."""
    position = data_start
    previous = None
    for name, (_, _, begin, end) in sorted(tensors.items(), key=lambda item: item[1][2:]):
        relative = [begin - data_start, end - data_start]
        if end > data_start + data_size:
            raise corrupt(f"data_offsets {relative} reach beyond the data: expected at most "
                          f"{data_size}, the bytes after the header", name)
        if begin < position:
            raise corrupt(f"data_offsets {relative} overlap tensor {previous!r}, which ends at "
                          f"{position - data_start}", name)
        if begin > position:
            raise corrupt(f"data_offsets {relative} leave bytes {position - data_start}.."
                          f"{begin - data_start} unused; expected each tensor to begin where "
                          "the previous one ends", name)
        previous, position = name, end
    if position != data_start + data_size:
        raise corrupt(f"the tensors end at data offset {position - data_start}, but the data "
                      f"part has {data_size} bytes; expected them to cover it exactly")


def read_numpy(path):
    """{name: numpy array} of the file at path, in the header's order, in the machine's
    byte order; F16 and BF16 tensors come back as float32 (exactly)."""
    corrupt = _Corrupt(path)
    tensors, _, _ = read_header(path)
    arrays = {}
    with open(path, "rb") as f:
        for name, (dtype, shape, begin, end) in tensors.items():
            raw = np.empty(end - begin, dtype=np.uint8)      # written in place, no copy
            f.seek(begin)
            if f.readinto(raw) != len(raw):
                raise corrupt("the file ended inside this tensor's bytes", name)
            if dtype == "BOOL" and raw.max(initial=0) > 1:
                # numpy would take any byte as a bool, and a sum would count its value
                at = int(np.argmax(raw > 1))
                raise corrupt(f"element {at} is the byte {raw[at]}; expected 0 (false) or 1 "
                              "(true), one byte per bool", name)
            arrays[name] = _decode(raw, dtype).reshape(shape)
    return arrays


def _decode(raw, dtype):
    """The file's little-endian bytes of one tensor as a native numpy array."""
    values = raw.view(FILE_DTYPES[dtype])
    if dtype == "BF16":                 # bfloat16: the upper 16 bits of a float32
        return (values.astype(np.uint32) << 16).view(np.float32)
    if dtype == "F16":
        return values.astype(np.float32)
    return values.astype(values.dtype.newbyteorder("="), copy=False)


def load(path, device=None):
    """{name: stage2 Tensor} of the safetensors file at path, on ``device`` (default:
    the default device). F16 and BF16 become float32; the engine computes in float32 and float64."""
    return {name: tg.from_numpy(array, device=device)
            for name, array in read_numpy(path).items()}


def save(tensors, path, metadata=None):
    """Write {name: stage2 Tensor or numpy array} to path as a safetensors file, atomically
    (stage2's ``atomic_write``: a temporary file in the same folder, renamed over path).
    dtypes: float64, float32, int64, int32, bool, and float16 numpy arrays. ``metadata``: {str: str}, stored as the
    header's "__metadata__". The header is padded with spaces to a multiple of 8 bytes and
    the tensors are laid out largest element first, as the reference implementation does,
    so every tensor starts at a multiple of its element size (aligned for readers that map
    the file)."""
    arrays = {name: _as_array(name, value) for name, value in tensors.items()}
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError(f"save: metadata must be a dict of str to str, got {metadata!r}")
    order = sorted(arrays, key=lambda name: -arrays[name].dtype.itemsize)    # stable
    offsets, position = {}, 0
    for name in order:
        offsets[name] = [position, position + arrays[name].nbytes]
        position += arrays[name].nbytes
    header = {METADATA: dict(metadata)} if metadata else {}
    header.update({name: {"dtype": SAVED_DTYPES[a.dtype], "shape": list(a.shape),
                          "data_offsets": offsets[name]} for name, a in arrays.items()})
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)

    def write(f):
        f.write(struct.pack("<Q", len(text)) + text)
        for name in order:                              # little-endian, row-major
            f.write(arrays[name].astype(arrays[name].dtype.newbyteorder("<"), copy=False).tobytes())
    atomic_write(path, write)


def _as_array(name, value):
    if not isinstance(name, str) or name == METADATA:
        raise ValueError(f"save: tensor names are strings other than {METADATA!r}, got {name!r}")
    if isinstance(value, tg.Tensor):
        value = value.detach().numpy()
    if not isinstance(value, np.ndarray):
        raise TypeError(f"save: {name!r} is a {type(value).__name__}; expected a stage2 Tensor "
                        "or a numpy array")
    dtype = value.dtype.newbyteorder("=") if value.dtype.byteorder not in "=|" else value.dtype
    if dtype not in SAVED_DTYPES:
        raise TypeError(f"save: {name!r} has dtype {value.dtype}; expected one of "
                        f"{', '.join(str(d) for d in SAVED_DTYPES)}")
    return np.asarray(value, dtype=dtype, order="C")     # (ascontiguousarray makes 0-d 1-d)

