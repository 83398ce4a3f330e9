import math

from ..optimizer import check_number
from .checks import check_count
from .scheduler import LRScheduler


class CosineAnnealingLR(LRScheduler):
    """SGDR's cosine without restarts (Loshchilov & Hutter, 2017), PyTorch's closed form:

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * step / T_max)) / 2

    from base_lr at step 0 to eta_min at step T_max; past T_max the cosine goes on, back
    up, as PyTorch's does (stop stepping there, or see WarmupCosineLR, which stays)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):   # noqa: N803 (PyTorch's name)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        check_count(where, "T_max", self.T_max)
        check_number(where, "eta_min", self.eta_min)

    def get_lr(self):
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]
