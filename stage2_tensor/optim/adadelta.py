from ..factories import zeros_like
from .optimizer import Optimizer, check_number


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), as PyTorch writes it: g += weight_decay * p;
    v = rho * v + (1 - rho) * g^2; delta = sqrt(u + eps) / sqrt(v + eps) * g;
    u = rho * u + (1 - rho) * delta^2; p -= lr * delta. The step is a ratio of two running
    RMS values times g, so it has the units of p: lr=1.0 is the paper's rule."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    state_tensors = ("square_avg", "acc_delta")
    state_counts = ("step",)

    def check_settings(self, group, where):
        super().check_settings(group, where)
        check_number(where, "rho", group["rho"], 0.0, 1.0)
        check_number(where, "eps", group["eps"])
        check_number(where, "weight_decay", group["weight_decay"])

    def required_state(self, group):
        return ("step", "square_avg", "acc_delta")

    def update(self, p, g, state, group):
        rho, eps = group["rho"], group["eps"]
        if not state:
            state.update(step=0, square_avg=zeros_like(p), acc_delta=zeros_like(p))
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["square_avg"].mul_(rho).add_(g * g, alpha=1 - rho)
        delta = (state["acc_delta"] + eps).sqrt() / (state["square_avg"] + eps).sqrt() * g
        state["acc_delta"].mul_(rho).add_(delta * delta, alpha=1 - rho)
        p.add_(delta, alpha=-group["lr"])
