"""``torch.device`` and ``torch.accelerator``, as scripts name where tensors go (chapter 4,
"Devices"). Tracegrad names a device by a string ("python", "cpu", "cpu:lazy", "cuda",
"cuda-emu"); ``device("cpu")`` is that string, so it goes wherever a device name goes
(``x.to(device)``, ``zeros(3, device=device)``), with PyTorch's ``type`` and ``index``.

    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \\
        else torch.device("cpu")
"""
from types import SimpleNamespace

from . import backend


class device(str):  # noqa: N801  (PyTorch's name)
    """A device name, a str: ``device("cuda")``, ``device("cuda", 0)``, ``device("cuda:0")``
    (tracegrad drives one GPU, so "cuda:0" is "cuda")."""

    def __new__(cls, type, index=None):  # noqa: A002  (PyTorch's argument name)
        if isinstance(type, device):
            return type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a device name such as 'cpu' or 'cuda', got "
                            f"{builtins_type(type).__name__}")
        name, _, given = type.partition(":") if type.startswith("cuda") else (type, "", "")
        if given:
            if index is not None:
                raise ValueError(f"device(): type {type!r} already names an index, and index={index} was given")
            index = int(given) if given.isdigit() else given
        if index not in (None, 0):
            raise ValueError(f"device(): tracegrad drives one GPU, index 0; got index {index!r} for {name!r}")
        self = super().__new__(cls, name)
        self._index = index
        return self

    @property
    def type(self):
        return str(self).split(":")[0]

    @property
    def index(self):
        return self._index

    def __repr__(self):
        return f"device(type={self.type!r}" + (f", index={self._index})" if self._index is not None else ")")


builtins_type = type


def _accelerator_available():
    return backend.available("cuda")


def _current_accelerator():
    """device("cuda") where the GPU runs, else None (as PyTorch without an accelerator)."""
    return device("cuda") if _accelerator_available() else None


accelerator = SimpleNamespace(is_available=_accelerator_available,
                              current_accelerator=_current_accelerator,
                              device_count=lambda: 1 if _accelerator_available() else 0)
