"""The keyed and parameter containers of PyTorch: ``ModuleDict``, ``ParameterList`` and
``ParameterDict`` (``Sequential`` and ``ModuleList`` are in modules.py).

Each holds its items under the names PyTorch gives them ("0", "1", ... or the dict's
keys), so a model built with them has PyTorch's state_dict keys (``heads.q.weight``,
``scales.0``). Like ModuleList they have no forward: the owner's forward uses them.
"""
from ..tensor import Tensor
from .modules import Module, Parameter


def _as_parameter(value, where):
    """A Parameter for `value`: a Parameter itself, a plain tensor wrapped (sharing its
    storage), as PyTorch's ParameterList and ParameterDict do; anything else is an error."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{where}: expected a Parameter or a Tensor, got {type(value).__name__}")


def _as_module(value, where):
    if not isinstance(value, Module):
        raise TypeError(f"{where}: expected a Module, got {type(value).__name__}")
    return value


class _KeyedContainer(Module):
    """Items kept under string keys in insertion order, with dict's methods. A subclass
    says what an item must be (``_convert``)."""

    def __init__(self, items=None):
        super().__init__()
        self._items = {}
        if items is not None:
            self.update(items)

    def _convert(self, value, key):
        raise NotImplementedError

    def _members(self):
        return iter(list(self._items.items()))

    def __setitem__(self, key, value):
        if not isinstance(key, str) or not key or "." in key:
            # the key becomes one level of a state_dict name, where dots separate levels
            raise KeyError(f"{type(self).__name__}: a key must be a non-empty string "
                           f"without '.', got {key!r}")
        self._items[key] = self._convert(value, key)

    def __getitem__(self, key):
        try:
            return self._items[key]
        except KeyError:
            raise KeyError(f"{type(self).__name__} has no key {key!r}; its keys are "
                           f"{list(self._items)}") from None

    def __getattr__(self, name):
        # only for names that are no attribute: an item by its key, as PyTorch registers
        # each as a sub-module (``transformer.wte`` for ModuleDict(dict(wte=...)))
        items = vars(self).get("_items")
        if items is not None and name in items:
            return items[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute or key {name!r}")

    def __delitem__(self, key):
        self[key]                                   # the error above for a missing key
        del self._items[key]

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __contains__(self, key):
        return key in self._items

    def keys(self):
        return self._items.keys()

    def values(self):
        return self._items.values()

    def items(self):
        return self._items.items()

    def pop(self, key):
        value = self[key]
        del self._items[key]
        return value

    def clear(self):
        self._items.clear()

    def update(self, items):
        """Add (or replace) items from a mapping or an iterable of (key, value) pairs."""
        pairs = items.items() if hasattr(items, "items") else items
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{type(self).__name__}.update: expected a mapping or "
                                f"(key, value) pairs, got an element {pair!r}")
            self[pair[0]] = pair[1]


class ModuleDict(_KeyedContainer):
    """Modules under string keys: ``ModuleDict({"q": Linear(8, 8), "k": Linear(8, 8)})``,
    their parameters named ``q.weight``, ``k.bias``..."""

    def _convert(self, value, key):
        return _as_module(value, f"ModuleDict[{key!r}]")


class ParameterDict(_KeyedContainer):
    """Parameters under string keys; a plain tensor given is made a Parameter (sharing its
    storage), as in PyTorch."""

    def _convert(self, value, key):
        return _as_parameter(value, f"ParameterDict[{key!r}]")


class ParameterList(Module):
    """Parameters in order, named "0", "1", ...; a plain tensor given is made a Parameter
    (sharing its storage), as in PyTorch."""

    def __init__(self, values=None):
        super().__init__()
        self._params = []
        if values is not None:
            self.extend(values)

    def _members(self):
        return ((str(i), p) for i, p in enumerate(self._params))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList(self._params[i])
        return self._params[i]

    def __setitem__(self, i, value):
        self._params[i] = _as_parameter(value, f"ParameterList[{i}]")

    def __len__(self):
        return len(self._params)

    def __iter__(self):
        return iter(self._params)

    def append(self, value):
        self._params.append(_as_parameter(value, f"ParameterList[{len(self._params)}]"))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self
