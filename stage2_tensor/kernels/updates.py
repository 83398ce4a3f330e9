"""Optimizer steps, in place: one call updates a whole parameter group, each parameter and
its state a view (lists of them, one per parameter)."""
from ..contracts import differ
from . import kernel


def _group(kernel_name, params, per_parameter):
    """One entry per parameter in every list, each of its parameter's shape (None allowed
    where optional). One list comparison per list; the loop that names the culprit runs
    only when it differs."""
    shapes = [p.shape for p in params]
    for what, values, optional in per_parameter:
        if len(values) != len(shapes):
            raise ValueError(f"{kernel_name}: {len(shapes)} parameters but {len(values)} {what}")
        if None not in values and [v.shape for v in values] == shapes:
            continue
        for i, (p, v) in enumerate(zip(params, values)):
            if v is None:
                if not optional:
                    raise ValueError(f"{kernel_name}: {what}[{i}] is None, expected a view of its "
                                     f"parameter's shape {tuple(p.shape)}")
            else:
                differ(kernel_name, f"{what}[{i}]", v.shape, p.shape)


@kernel("", role="in_place", float_only=True)
def sgd_update(params: "views", grads: "views", velocities: "views?", lr: "float", momentum: "float",
               dampening: "float", weight_decay: "float", first_steps: "bools", nesterov: "bool"):
    """One SGD step for a parameter group, in place on each parameter and its velocity (its
    momentum buffer; None without momentum); first_steps says, per parameter, whether its
    velocity starts now (PyTorch's momentum_buffer None)."""
    _group("sgd_update", params, [("grads", grads, False), ("velocities", velocities, not momentum)])
    if len(first_steps) != len(params):
        raise ValueError(f"sgd_update: {len(params)} parameters but {len(first_steps)} first_steps")
    return []


@kernel("", role="in_place", float_only=True)
def adam_update(params: "views", grads: "views", ms: "views", vs: "views", lr: "float", beta1: "float",
                beta2: "float", eps: "float", weight_decay: "float", decoupled: "bool", steps: "ints"):
    """One Adam step (AdamW when `decoupled`) per parameter, in place on it and its m and v;
    steps, one per parameter, count from 1."""
    _group("adam_update", params, [("grads", grads, False), ("ms", ms, False), ("vs", vs, False)])
    if len(steps) != len(params):
        raise ValueError(f"adam_update: {len(params)} parameters but {len(steps)} steps")
    if steps and min(steps) < 1:
        raise ValueError(f"adam_update: steps {list(steps)} must count from 1")
    return []
