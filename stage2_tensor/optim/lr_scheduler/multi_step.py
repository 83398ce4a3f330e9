import bisect

from ..optimizer import check_number
from .checks import check_count
from .scheduler import LRScheduler


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= step): the rate drops by gamma at
    each milestone (a milestone given twice drops it twice, as in PyTorch)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        try:
            self.milestones = sorted(milestones)
        except TypeError:
            raise ValueError(f"MultiStepLR: milestones must be whole numbers >= 0, got "
                             f"{milestones!r}") from None
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        if not isinstance(self.milestones, list):
            raise ValueError(f"{where}: milestones must be a list, got {self.milestones!r}")
        for milestone in self.milestones:
            check_count(where, "milestone", milestone, low=0)
        if self.milestones != sorted(self.milestones):   # bisect needs them in order
            raise ValueError(f"{where}: milestones must be sorted, got {self.milestones}")
        check_number(where, "gamma", self.gamma)

    def get_lr(self):
        drops = bisect.bisect_right(self.milestones, self.last_epoch)
        return [base * self.gamma ** drops for base in self.base_lrs]
