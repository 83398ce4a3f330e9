from ..optimizer import check_number
from .scheduler import LRScheduler


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** step: the rate shrinks by gamma every step (epoch)."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        check_number(where, "gamma", self.gamma)

    def get_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]
