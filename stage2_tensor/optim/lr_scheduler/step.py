from ..optimizer import check_number
from .checks import check_count
from .scheduler import LRScheduler


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (step // step_size): the rate drops by gamma every
    step_size steps (epochs), PyTorch's closed form."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        check_count(where, "step_size", self.step_size)
        check_number(where, "gamma", self.gamma)

    def get_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]
