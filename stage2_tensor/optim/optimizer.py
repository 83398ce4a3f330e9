"""The optimizer's frame, PyTorch's ``torch.optim.Optimizer``: parameter groups (a list of
dicts of settings, so a learning-rate scheduler can change ``lr``), per-parameter state in
``optimizer.state[p]``, ``step()``, ``zero_grad()``, ``state_dict()`` and a checked
``load_state_dict()``; and ``fused_update``, which runs a device's in-place update kernel
once for a whole group. Each optimizer is a subclass in a file of its own.
"""
import math
import numbers

from .. import backend
from ..compiled.capture import live
from ..grad_mode import no_grad
from ..tensor import Tensor


def fused_update(kernel, params, states, *settings):
    """Run an in-place update kernel of the device once for a group of parameters: their
    gradients, and ``states``, one list per kind of state tensor (a None stays None).
    A setting that is a list holds one value per parameter. Parameters on several devices
    or of several dtypes get one call per (device, dtype). Every tensor the kernel wrote
    gets a new version, as after any in-place operation."""
    buckets = {}
    for i, p in enumerate(params):
        buckets.setdefault((p.storage.device, p.dtype), []).append(i)
    for (device, dtype), picked in buckets.items():
        if len(buckets) == 1:           # the usual case: every parameter in one call, as given
            ps, kinds, values = params, states, settings
        else:
            ps = [params[i] for i in picked]
            kinds = [[kind[i] for i in picked] for kind in states]
            values = [[s[i] for i in picked] if isinstance(s, list) else s for s in settings]
        grads = [p.grad for p in ps]
        grads = [g if g.dtype is dtype and g.storage.device == device else g.to(device=device, dtype=dtype)
                 for g in grads]
        views = [[t.as_view() if t is not None else None for t in kind] for kind in kinds]
        arguments = ([p.as_view() for p in ps], [g.as_view() for g in grads], *views, *values)
        update = getattr(backend.get(device), kernel, None)
        if update is not None and dtype.compute is dtype:     # no half to widen: launch's scan skipped
            update(*arguments)
        else:
            backend.launch(device, kernel, *arguments)
        for t in ps:
            t.storage.version += 1
        for kind in kinds:
            for t in kind:
                if t is not None:
                    t.storage.version += 1


class Optimizer:
    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of tensors or of "
                            "parameter groups (dicts), got a single tensor; pass [tensor]")
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]             # one group holding every parameter
        self.defaults = defaults
        self.param_groups = []
        self.state = {}                                # tensor -> its state (keyed by identity)
        for group in params:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group of parameters with settings of its own (a dict: "params" and any of
        the defaults' keys; what it leaves out comes from the defaults), as PyTorch does, e.g.
        to train layers unfrozen later. Its settings are checked like the constructor's; a
        parameter may be in one group only, since each parameter has one state."""
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{name}: a parameter group must be a dict with a 'params' entry, "
                            f"got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor) or not p.requires_grad or not p.is_leaf:
                raise ValueError(f"{name} can only optimize leaf tensors that require grad; got "
                                 + (f"one of shape {p.shape}" if isinstance(p, Tensor)
                                    else f"a {type(p).__name__}"))
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or taken & {id(p) for p in params}:
            raise ValueError(f"{name}: some parameters appear more than once in the parameter "
                             "groups; each parameter may be in one group, once")
        group = {**self.defaults, **param_group, "params": params}
        self.check_settings(group, name)
        self.param_groups.append(group)

    def check_settings(self, group, where):
        """ValueError, naming the setting, unless a group's settings are valid; subclasses
        add theirs. Every group is checked, its own settings and loaded ones too, since the
        update kernels trust them."""
        check_number(where, "lr", group["lr"])

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.zero_()

    @live
    def step(self, closure=None):
        """One update of every parameter that has a gradient (others are skipped).
        `closure`, if given, recomputes the loss (with gradients) first and is returned."""
        loss = closure() if closure is not None else None
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    self.update_group(params, group)
        return loss

    def update_group(self, params, group):
        """Update every parameter of a group (those with a gradient): one at a time here;
        SGD and Adam override it with one fused kernel call for the whole group."""
        for p in params:
            self.update(p, p.grad, self.state.setdefault(p, {}), group)

    def update(self, p, g, state, group):
        raise NotImplementedError

    def state_dict(self):
        """The settings and the per-parameter state, parameters named by their position
        (0, 1, ... over all groups), as in PyTorch: save it to resume training later."""
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        groups = [{**g, "params": [index[id(p)] for p in g["params"]]} for g in self.param_groups]
        state = {index[id(p)]: {k: v.detach().clone() if hasattr(v, "detach") else v
                                for k, v in s.items()} for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    # The per-parameter state an optimizer keeps: tensors of the parameter's shape, and
    # step counts. load_state_dict accepts these names only.
    state_tensors = ()
    state_counts = ()

    def required_state(self, group):
        """The state a parameter of ``group`` must have once it has any (its update reads
        them without creating them); a loaded state is checked against them."""
        return ()

    def load_state_dict(self, state_dict):
        """Restore what state_dict() returned, onto this optimizer's parameters (in order).
        Everything is checked before anything changes, since the update kernels trust it:
        as many groups, of as many parameters; each parameter's state holds this
        optimizer's entries (ValueError naming the parameter otherwise), its tensors of the
        parameter's shape, copied to its device and dtype as in PyTorch, its step count a
        whole number."""
        name = type(self).__name__
        try:
            groups, states = list(state_dict["param_groups"]), dict(state_dict["state"])
            sizes = [len(g["params"]) for g in groups]
        except (KeyError, TypeError):
            raise ValueError(f"{name}.load_state_dict: expected what state_dict() returns, a dict "
                             "with 'state' and 'param_groups' (dicts with 'params')") from None
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups: "
                             f"{len(groups)}, this {name} has {len(self.param_groups)}")
        if sizes != [len(g["params"]) for g in self.param_groups]:
            raise ValueError(f"loaded state dict contains a parameter group that doesn't match "
                             f"the size of optimizer's group: sizes {sizes}, this {name}'s "
                             f"{[len(g['params']) for g in self.param_groups]}")
        settings = [{**mine, **{k: v for k, v in theirs.items() if k != "params"}}
                    for mine, theirs in zip(self.param_groups, groups)]
        for i, group in enumerate(settings):
            self.check_settings(group, f"{name}.load_state_dict: parameter group {i}")
        params = [(p, group) for g, group in zip(self.param_groups, settings) for p in g["params"]]
        state = {}
        for key, saved in states.items():
            index = _parameter_index(name, key, len(params))
            p, group = params[index]
            state[p] = self._loaded_state(f"{name}.load_state_dict: parameter {index} (shape "
                                          f"{p.shape})", p, saved, group)
        for mine, loaded in zip(self.param_groups, settings):
            mine.update(loaded)
        self.state = state

    def _loaded_state(self, where, p, state, group):
        """One parameter's loaded state, checked, its tensors on p's device and dtype."""
        if not isinstance(state, dict):
            raise TypeError(f"{where}: its state must be a dict, got {type(state).__name__}")
        unknown = sorted(set(state) - set(self.state_tensors) - set(self.state_counts), key=str)
        if unknown:
            raise ValueError(f"{where}: unknown state {unknown}; {type(self).__name__} keeps "
                             f"{list(self.state_tensors + self.state_counts)} (is this another "
                             "optimizer's state dict?)")
        missing = [k for k in self.required_state(group) if k not in state]
        if state and missing:
            raise ValueError(f"{where}: its state lacks {missing}")
        return {k: _step_count(where, k, v) if k in self.state_counts else _state_tensor(where, k, v, p)
                for k, v in state.items()}


def check_number(where, key, value, low=0.0, high=math.inf, high_open=False):
    """ValueError unless ``value`` is a real number in [low, high] ([low, high) with
    ``high_open``): an optimizer's or a scheduler's setting."""
    is_number = (isinstance(value, numbers.Real) and not isinstance(value, bool)
                 and not math.isnan(value))
    if not is_number or not low <= value <= high or (high_open and value == high):
        expected = (f"a number >= {low:g}" if high == math.inf
                    else f"a number in [{low:g}, {high:g}{')' if high_open else ']'}")
        raise ValueError(f"{where}: invalid {key} {value!r}, expected {expected}")


def check_betas(where, betas):
    """Adam's (beta1, beta2): two numbers in [0, 1)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"{where}: invalid betas {betas!r}, expected two numbers in [0, 1)")
    for i, beta in enumerate(betas):
        check_number(where, f"beta at index {i}", beta, 0.0, 1.0, high_open=True)


def _parameter_index(name, key, count):
    """A state dict's key for a parameter: its position over all groups."""
    try:
        index = int(key)
    except (TypeError, ValueError):
        index = None
    if index is None or not 0 <= index < count:
        raise ValueError(f"{name}.load_state_dict: state for parameter {key!r}, but this "
                         f"optimizer has parameters 0 to {count - 1}")
    return index


def _state_tensor(where, key, value, p):
    if not isinstance(value, Tensor):
        raise TypeError(f"{where}: {key} must be a tensor, got {type(value).__name__}")
    if value.shape != p.shape:
        raise ValueError(f"{where}: {key} has shape {value.shape}, expected the parameter's "
                         f"{p.shape}")
    value = value.detach()
    moved = value.to(device=p.device, dtype=p.dtype)
    return moved.clone() if moved is value else moved         # never shared with the caller's


def _step_count(where, key, value):
    """A step count as an int: a whole, finite, non-negative number that fits the update
    kernels' int64 (or a one-element tensor of one, as PyTorch saves it)."""
    number = value.item() if isinstance(value, Tensor) and value.numel() == 1 else value
    if isinstance(number, float) and math.isfinite(number) and number.is_integer():
        number = int(number)
    if isinstance(number, bool) or not isinstance(number, numbers.Integral) or not 0 <= number < 1 << 63:
        raise ValueError(f"{where}: {key} must be a whole number of steps (an int64), got {value!r}")
    return int(number)
