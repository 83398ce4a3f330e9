from .checks import check_count
from .scheduler import LRScheduler


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor (step 0) to
    end_factor (step total_iters) and staying there:

        factor = start_factor + (end_factor - start_factor) * min(step, total_iters) / total_iters

    Linear decay to zero over a run of T steps: LinearLR(opt, 1.0, 0.0, T)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        if not 0 < self.start_factor <= 1 or not 0 <= self.end_factor <= 1:
            raise ValueError(f"{where}: start_factor must be in (0, 1] and end_factor in [0, 1], "
                             f"got {self.start_factor} and {self.end_factor}")
        check_count(where, "total_iters", self.total_iters)

    def get_lr(self):
        done = min(self.last_epoch, self.total_iters) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]
