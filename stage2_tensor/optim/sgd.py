from ..factories import zeros_like
from .optimizer import Optimizer, check_number, fused_update


class SGD(Optimizer):
    """g += weight_decay * p; with momentum: v = momentum * v + (1 - dampening) * g (v = g
    on the first step), g = v (or g + momentum * v with nesterov); p -= lr * g."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def check_settings(self, group, where):
        super().check_settings(group, where)
        for key in ("momentum", "dampening", "weight_decay"):
            check_number(where, key, group[key])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"{where}: Nesterov momentum requires a momentum and zero dampening")

    state_tensors = ("momentum_buffer",)        # made on the first step when missing

    def update_group(self, params, group):
        momentum, buffers, first_steps = group["momentum"], [], []
        for p in params:
            state = self.state.setdefault(p, {})
            first_steps.append(bool(momentum) and "momentum_buffer" not in state)
            if first_steps[-1]:
                state["momentum_buffer"] = zeros_like(p)  # the kernel sets it to g this step
            buffers.append(state["momentum_buffer"] if momentum else None)
        fused_update("sgd_update", params, [buffers], group["lr"], momentum, group["dampening"],
                     group["weight_decay"], first_steps, group["nesterov"])
