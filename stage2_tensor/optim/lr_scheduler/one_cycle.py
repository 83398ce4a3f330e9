import math

from ..optimizer import check_number
from .checks import check_count
from .scheduler import LRScheduler


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), PyTorch's: lr rises from max_lr / div_factor
    to max_lr over the first pct_start of total_steps, then anneals to
    initial_lr / final_div_factor; momentum (or Adam's beta1) moves the opposite way,
    max_momentum -> base_momentum -> max_momentum. Each phase anneals from its start value
    s to its end value e over a fraction x in [0, 1] of it:

        'cos':    e + (s - e) * (1 + cos(pi * x)) / 2        'linear':  s + (e - s) * x

    three_phase: up, back down to initial_lr over as many steps, then down to the floor.
    Call step() after each batch, total_steps times at most."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        where, groups = "OneCycleLR", optimizer.param_groups
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(f"{where}: give either total_steps or epochs and steps_per_epoch")
            check_count(where, "epochs", epochs)
            check_count(where, "steps_per_epoch", steps_per_epoch)
            total_steps = epochs * steps_per_epoch
        self.total_steps, self.pct_start, self.anneal_strategy = total_steps, pct_start, anneal_strategy
        self.three_phase, self.cycle_momentum = three_phase, cycle_momentum
        self.div_factor, self.final_div_factor = div_factor, final_div_factor
        self.use_beta1 = "betas" in optimizer.defaults      # Adam's beta1 is its momentum
        max_lrs = per_group(where, "max_lr", max_lr, len(groups))
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"{where}: cycle_momentum needs an optimizer with momentum or "
                                 f"betas, {type(optimizer).__name__} has neither; pass "
                                 "cycle_momentum=False")
            max_momentums = per_group(where, "max_momentum", max_momentum, len(groups), high=1.0)
            base_momentums = per_group(where, "base_momentum", base_momentum, len(groups), high=1.0)
        self.check_settings(where)               # before the groups change
        if last_epoch == -1:                     # a fresh run: the groups get the cycle's ends
            for i, group in enumerate(groups):
                group["initial_lr"] = max_lrs[i] / div_factor
                group["max_lr"] = max_lrs[i]
                group["min_lr"] = group["initial_lr"] / final_div_factor
                if cycle_momentum:
                    self._set_momentum(group, max_momentums[i])
                    group["max_momentum"], group["base_momentum"] = max_momentums[i], base_momentums[i]
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        check_count(where, "total_steps", self.total_steps)
        check_number(where, "pct_start", self.pct_start, 0.0, 1.0)
        if self.anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{where}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{self.anneal_strategy!r}")
        for key in ("div_factor", "final_div_factor"):
            check_number(where, key, getattr(self, key), low=math.ulp(0.0))   # divisors: > 0

    def phases(self):
        """(last step, start key, end key) per phase, PyTorch's steps (floats, as its are)."""
        up = float(self.pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if self.three_phase:
            return [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                    (last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        return [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (last, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is "
                             f"{self.total_steps}")
        anneal = annealing_cos if self.anneal_strategy == "cos" else annealing_linear
        phases, lrs = self.phases(), []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(phases):
                if step <= end or i == len(phases) - 1:
                    x = (step - start) / (end - start) if end != start else 1.0  # empty phase
                    lrs.append(anneal(group[lr_from], group[lr_to], x))
                    if self.cycle_momentum:
                        self._set_momentum(group, anneal(group[m_from], group[m_to], x))
                    break
                start = end
        return lrs

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum


def annealing_cos(start, end, x):
    return end + (start - end) / 2 * (math.cos(math.pi * x) + 1)


def annealing_linear(start, end, x):
    return (end - start) * x + start


def per_group(where, key, value, groups, high=math.inf):
    """One value of a setting per parameter group: a number for all, or a list of them."""
    values = list(value) if isinstance(value, (list, tuple)) else [value] * groups
    if len(values) != groups:
        raise ValueError(f"{where}: expected {groups} values of {key} (one per parameter group), "
                         f"got {len(values)}")
    for v in values:
        check_number(where, key, v, high=high)
    return values
