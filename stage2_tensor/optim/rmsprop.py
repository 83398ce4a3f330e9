from ..factories import zeros_like
from .optimizer import Optimizer, check_number


class RMSprop(Optimizer):
    """s = alpha * s + (1 - alpha) * g^2; p -= lr * g / (sqrt(s) + eps): each parameter's
    step is scaled by the running size of its own gradients. ``centered`` divides by the
    running standard deviation instead; ``momentum`` smooths the scaled step."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def check_settings(self, group, where):
        super().check_settings(group, where)
        check_number(where, "alpha", group["alpha"], 0.0, 1.0)
        for key in ("eps", "weight_decay", "momentum"):
            check_number(where, key, group[key])

    state_tensors = ("square_avg", "momentum_buffer", "grad_avg")

    def required_state(self, group):
        return (("square_avg",) + (("momentum_buffer",) if group["momentum"] else ())
                + (("grad_avg",) if group["centered"] else ()))

    def update(self, p, g, state, group):
        alpha = group["alpha"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        if not state:
            state["square_avg"] = zeros_like(p)
            if group["momentum"]:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        state["square_avg"].mul_(alpha).add_(g * g, alpha=1 - alpha)
        avg = state["square_avg"]
        if group["centered"]:
            state["grad_avg"].mul_(alpha).add_(g, alpha=1 - alpha)
            avg = avg - state["grad_avg"] * state["grad_avg"]
        avg = avg.sqrt() + group["eps"]
        if group["momentum"]:
            state["momentum_buffer"].mul_(group["momentum"]).add_(g / avg)
            p.add_(state["momentum_buffer"], alpha=-group["lr"])
        else:
            p.add_(g / avg, alpha=-group["lr"])
