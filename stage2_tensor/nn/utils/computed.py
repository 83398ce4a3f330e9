"""A module attribute computed when read: what parametrize, weight_norm and spectral_norm
install. The module's class is switched to a subclass of its own (one per module, so other
modules of the class are untouched) with a property under the attribute's name; the
property reads ``module._computed[name]`` (an object with ``compute(module)`` and, if the
attribute may be assigned, ``assign(module, value)``). Removing the last one restores the
class."""


def install(module, name, how, class_name=None):
    cls = type(module)
    if "_computed" not in vars(module):
        base = cls
        cls = type(class_name or base.__name__, (base,), {"_class_before_computed": base})
        cls.__module__ = base.__module__
        vars(module)["_computed"] = {}
        module.__class__ = cls
    module._computed[name] = how

    def get(self):
        return self._computed[name].compute(self)

    def put(self, value):
        self._computed[name].assign(self, value)

    setattr(type(module), name, property(get, put))


def uninstall(module, name):
    cls = type(module)
    delattr(cls, name)
    del module._computed[name]
    if not module._computed:
        del vars(module)["_computed"]
        module.__class__ = cls._class_before_computed


def installed(module, name=None):
    computed = vars(module).get("_computed", {})
    return bool(computed) if name is None else name in computed
