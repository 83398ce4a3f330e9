"""PyTorch's ``torch.nn.parameter``: ``Parameter`` (modules.py), ``Buffer``, and the
placeholders of lazy modules, ``UninitializedParameter`` and ``UninitializedBuffer``.

``Buffer`` (PyTorch 2.5's): ``self.stats = nn.Buffer(t)`` in a module's ``__init__``
registers ``t`` as a buffer, as ``register_buffer("stats", t)`` does (``persistent=False``
keeps it out of the state_dict). An uninitialized parameter or buffer holds no elements
until ``materialize(shape)`` gives it storage, in place, so references to it (an
optimizer's, a module's) see the materialized tensor; it then is a plain Parameter or
Tensor.
"""
from .. import dtypes
from ..factories import empty
from ..tensor import Tensor
from .modules import Parameter


def _plain(data):
    return Tensor(data.storage, data.shape, data.strides, data.offset, data.dtype, data.requires_grad)


class Buffer(Tensor):
    """A tensor to be registered as a buffer when assigned to a module's attribute."""
    registers_as_buffer = True

    def __init__(self, data=None, *, persistent=True):
        data = empty(0) if data is None else data
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        super().__init__(data.storage, data.shape, data.strides, data.offset, data.dtype, data.requires_grad)
        self.persistent = persistent

    def plain(self):
        """The same storage as a plain Tensor (what the module holds)."""
        return _plain(self)


class _Uninitialized:
    """Materializing in place: the object takes a fresh tensor's storage and becomes the
    class it stands for."""
    __slots__ = ()
    becomes = None

    def materialize(self, shape, device=None, dtype=None):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        fresh = empty(*shape, dtype=dtype or self.dtype, device=device or self.device)
        self.take(fresh)

    def take(self, fresh):
        """Become ``fresh`` (its storage and layout), a ``becomes`` from now on."""
        requires_grad = self.requires_grad
        Tensor.__init__(self, fresh.storage, fresh.shape, fresh.strides, fresh.offset, fresh.dtype, requires_grad)
        self.__class__ = self.becomes

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, before its first call)."""
    becomes = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, empty(0, dtype=dtype or dtypes.float32, device=device), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (a lazy module's, before its first call).
    (No attributes of its own: it becomes a plain Tensor, which has none.)"""
    __slots__ = ()
    becomes = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        data = empty(0, dtype=dtype or dtypes.float32, device=device)
        Tensor.__init__(self, data.storage, data.shape, data.strides, data.offset, data.dtype, requires_grad)


__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]
