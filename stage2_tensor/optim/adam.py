from ..factories import zeros_like
from .optimizer import Optimizer, fused_update


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015): m and v, running means of g and g^2, bias-corrected by
    1 - beta^t; p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    weight_decay adds weight_decay * p to g (L2 regularisation; see AdamW)."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    state_tensors = ("exp_avg", "exp_avg_sq")
    state_counts = ("step",)

    def required_state(self, group):
        return ("step", "exp_avg", "exp_avg_sq")

    def update_group(self, params, group):
        states = []
        for p in params:
            state = self.state.setdefault(p, {})
            if not state:
                state.update(step=0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
            state["step"] += 1
            states.append(state)
        (b1, b2) = group["betas"]
        fused_update("adam_update", params, [[s["exp_avg"] for s in states],
                                             [s["exp_avg_sq"] for s in states]],
                     group["lr"], b1, b2, group["eps"], group["weight_decay"], self.decoupled,
                     [s["step"] for s in states])
