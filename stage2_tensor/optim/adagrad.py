from ..factories import full_like
from .optimizer import Optimizer, check_number


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan & Singer, 2011), as PyTorch writes it: g += weight_decay * p;
    clr = lr / (1 + (t - 1) * lr_decay); s += g^2; p -= clr * g / (sqrt(s) + eps), s starting
    at initial_accumulator_value: each coordinate's step shrinks with the sum of its own
    squared gradients, so rarely-seen features keep large steps."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps))

    state_tensors = ("sum",)
    state_counts = ("step",)

    def check_settings(self, group, where):
        super().check_settings(group, where)
        for key in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_number(where, key, group[key])

    def required_state(self, group):
        return ("step", "sum")

    def update(self, p, g, state, group):
        if not state:      # PyTorch makes it in the constructor; here on the first step
            state.update(step=0, sum=full_like(p, group["initial_accumulator_value"]))
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"].add_(g * g)
        p.add_(g / (state["sum"].sqrt() + group["eps"]), alpha=-clr)
