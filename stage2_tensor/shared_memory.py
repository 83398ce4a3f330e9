"""Tensors in memory several processes share, and tensors crossing to another process:
PyTorch's ``Tensor.share_memory_()`` (``Module.share_memory()`` for a model's parameters and
buffers) and the pickling behind ``torch.multiprocessing`` (multiprocessing.py).

``share_memory_`` moves a tensor's elements into a block of shared memory from Python's
multiprocessing (``sharedctypes.RawArray``: a memory-mapped file, unlinked, that a forked
process inherits and a spawned one maps again), and points the tensor at it, as
``Module.to`` moves a parameter: the same tensor object with a new storage, so a model's
optimizer keeps updating it (its other views, if any, keep the old memory). The device
must be able to wrap foreign memory as a buffer (``from_numpy``: device "cpu"); device
"python" keeps its elements in Python arrays, which cannot live there.

A shared tensor given to a process (``Process(target=train, args=(model,))``) is rebuilt
there over the same memory: what one process writes, the others read (the "hogwild"
training of PyTorch's example). Any other tensor is pickled by value: its bytes, rebuilt
as a copy; a tensor inside an autograd graph is refused, as in PyTorch.
"""
import array
import ctypes
import weakref
from multiprocessing import sharedctypes

from . import backend, dtypes
from .tensor import Storage, Tensor

_SHARED = {}         # id(buffer) -> (a weak reference to the buffer, the RawArray it views)


def _shared_block(buffer):
    entry = _SHARED.get(id(buffer))
    return entry[1] if entry is not None and entry[0]() is buffer else None


def _wrap(block, dtype, device):
    """A device buffer over the shared block's bytes, remembered as shared."""
    import numpy as np
    buffer = backend.get(device).from_numpy(np.frombuffer(block, dtype=np.uint8), dtype)
    key = id(buffer)
    _SHARED[key] = (weakref.ref(buffer, lambda _: _SHARED.pop(key, None)), block)
    return buffer


def is_shared(t):
    """Whether t's elements are in memory other processes can share (share_memory_)."""
    return _shared_block(t.storage.buffer) is not None


def share_memory_(t):
    """Move t's elements into shared memory, in place (t keeps its identity); t itself."""
    if is_shared(t):
        return t
    if not backend.get(t.device).has("from_numpy"):
        raise RuntimeError(
            f"share_memory_: device {t.device!r} keeps its elements in Python arrays, which "
            "processes cannot share; move the tensor (or model) to device 'cpu' first, e.g. "
            "model.to('cpu').share_memory(), whose buffers can live in shared memory")
    block = sharedctypes.RawArray(ctypes.c_char, max(t.numel() * t.dtype.itemsize, 1))
    buffer = _wrap(block, t.dtype, t.device)
    shared = Tensor.from_buffer(buffer, t.shape, t.dtype, t.device)
    backend.launch(t.device, "write", shared.as_view(), t.as_view())
    t.set_layout(shared.storage, shared.shape, shared.strides, 0, t.dtype)
    return t


# ---- pickling ---------------------------------------------------------------------------------
def _check_leaf(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries; call "
                           "detach() on it first to send its values")


def reduce_by_value(t):
    """(rebuild, arguments) of a copy of t: its bytes, shape, dtype, device."""
    _check_leaf(t)
    be = backend.get(t.device)
    if be.has("to_bytes"):
        data = be.to_bytes(t.as_view())
    else:
        data = array.array(t.dtype.typecode, map(t.dtype.encode, be.to_flat(t.as_view()))).tobytes()
    return rebuild_copy, (data, t.shape, t.dtype.name, t.device, t.requires_grad, type(t))


def reduce_for_process(t):
    """For multiprocessing's pickler: a shared tensor by reference to its memory (valid
    while a process is being started), any other by value."""
    block = _shared_block(t.storage.buffer)
    if block is None:
        return reduce_by_value(t)
    _check_leaf(t)
    from multiprocessing.context import get_spawning_popen
    if get_spawning_popen() is None:
        raise RuntimeError("a tensor in shared memory reaches another process as an argument of "
                           "Process (or inherited by fork); through a Queue or a Pipe it would "
                           "arrive as a copy: send t.clone() for a copy, or pass it to the Process")
    return rebuild_shared, (block, t.shape, t.strides, t.offset, t.dtype.name, t.device,
                            t.requires_grad, type(t))


def _finish(t, requires_grad, kind):
    """A rebuilt tensor as the kind it was (a Parameter stays one)."""
    if kind is not Tensor:
        return kind(t, requires_grad)
    return t.requires_grad_(True) if requires_grad else t


def rebuild_copy(data, shape, dtype_name, device, requires_grad, kind):
    dtype = dtypes.by_name(dtype_name)
    be = backend.get(device)
    if be.has("from_bytes"):
        buffer = be.from_bytes(data, dtype)
    else:
        values = array.array(dtype.typecode)
        values.frombytes(data)
        buffer = be.from_flat(list(map(dtype.decode, values)), dtype)
    return _finish(Tensor.from_buffer(buffer, shape, dtype, device), requires_grad, kind)


def rebuild_shared(block, shape, strides, offset, dtype_name, device, requires_grad, kind):
    dtype = dtypes.by_name(dtype_name)
    storage = Storage(_wrap(block, dtype, device), device)
    return _finish(Tensor(storage, shape, strides, offset, dtype), requires_grad, kind)
