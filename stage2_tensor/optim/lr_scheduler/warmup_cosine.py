import math

from ..optimizer import check_number
from .scheduler import LRScheduler


class WarmupCosineLR(LRScheduler):
    """GPT training's schedule: a linear warm-up, then a cosine decay to a floor.

        step < warmup:           lr = base_lr * (step + 1) / (warmup + 1)
        warmup <= step < total:  lr = min_lr + (base_lr - min_lr) * (1 + cos(pi * r)) / 2,
                                 r = (step - warmup) / (total - warmup) going from 0 to 1
        step >= total:           lr = min_lr

    Warm-up: Adam's second-moment estimates start from few samples, so the first updates
    are noisy; small steps until they settle keep them from throwing the weights off. The
    cosine then spends more steps near the high rate than a linear decay and lands softly.
    (PyTorch composes this from LinearLR, CosineAnnealingLR and SequentialLR.)"""

    def __init__(self, optimizer, warmup, total, min_lr=0.0, last_epoch=-1):
        self.warmup, self.total, self.min_lr = warmup, total, min_lr
        super().__init__(optimizer, last_epoch)

    def check_settings(self, where):
        if not 0 <= self.warmup <= self.total:
            raise ValueError(f"{where} needs 0 <= warmup <= total, got warmup {self.warmup} "
                             f"and total {self.total}")
        check_number(where, "min_lr", self.min_lr)

    def get_lr(self):
        return [self.lr_at(self.last_epoch, base) for base in self.base_lrs]

    def lr_at(self, step, base_lr):
        if step < self.warmup:
            return base_lr * (step + 1) / (self.warmup + 1)
        if step >= self.total:
            return self.min_lr
        r = (step - self.warmup) / max(self.total - self.warmup, 1)
        return self.min_lr + (base_lr - self.min_lr) * (1 + math.cos(math.pi * r)) / 2
