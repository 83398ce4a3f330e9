import math

from ..factories import zeros_like
from .optimizer import Optimizer, check_betas, check_number, fused_update


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015): m and v, running means of g and g^2, bias-corrected by
    1 - beta^t; p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    weight_decay adds weight_decay * p to g (L2 regularisation; see AdamW).
    amsgrad (Reddi, Kale & Kumar, 2018) divides by the largest v so far instead,
    v_max = max(v_max, v), so that no coordinate's step grows because its v shrank."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False):
        betas = tuple(betas) if isinstance(betas, (tuple, list)) else betas
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad))

    state_tensors = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    state_counts = ("step",)

    def check_settings(self, group, where):
        super().check_settings(group, where)
        check_betas(where, group["betas"])
        check_number(where, "eps", group["eps"])
        check_number(where, "weight_decay", group["weight_decay"])
        if not isinstance(group["amsgrad"], bool):
            raise ValueError(f"{where}: invalid amsgrad {group['amsgrad']!r}, expected True or False")

    def required_state(self, group):
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def update_group(self, params, group):
        if group["amsgrad"]:             # the fused adam_update kernel keeps no maximum
            return super().update_group(params, group)
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

    def update(self, p, g, state, group):
        """One parameter's step in tensor operations (amsgrad), the fused kernel's rule."""
        (b1, b2), lr, weight_decay = group["betas"], group["lr"], group["weight_decay"]
        if not state:
            state.update(step=0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
        if "max_exp_avg_sq" not in state:     # amsgrad switched on mid-run: max(0, v) = v
            state["max_exp_avg_sq"] = zeros_like(p)
        state["step"] += 1
        t = state["step"]
        if self.decoupled:
            p.mul_(1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * p
        state["exp_avg"].mul_(b1).add_(g, alpha=1 - b1)
        state["exp_avg_sq"].mul_(b2).add_(g * g, alpha=1 - b2)
        top = state["max_exp_avg_sq"]
        top.copy_(top.maximum(state["exp_avg_sq"]))
        denom = top.sqrt() / math.sqrt(1 - b2 ** t) + group["eps"]
        p.add_(state["exp_avg"] / denom, alpha=-lr / (1 - b1 ** t))
