"""Learning-rate schedules, PyTorch's ``torch.optim.lr_scheduler``: a scheduler rewrites
``lr`` in each of the optimizer's ``param_groups``; call ``scheduler.step()`` once per
training step (or epoch), after ``optimizer.step()``.
"""
import math


class LRScheduler:
    """Keeps each group's initial lr (``base_lrs``) and sets ``lr = get_lr()`` at every step;
    ``last_epoch`` counts the steps taken (0 right after construction)."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()                                   # sets the lr of step 0

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return list(self._last_lr)

    def step(self):
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor (step 0) to
    end_factor (step total_iters) and staying there:

        factor = start_factor + (end_factor - start_factor) * min(step, total_iters) / total_iters

    Linear decay to zero over a run of T steps: LinearLR(opt, 1.0, 0.0, T)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], "
                             f"got {start_factor} and {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        done = min(self.last_epoch, self.total_iters) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]


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
        if not 0 <= warmup <= total:
            raise ValueError(f"WarmupCosineLR needs 0 <= warmup <= total, got warmup {warmup} "
                             f"and total {total}")
        if min_lr < 0:
            raise ValueError(f"min_lr must be >= 0, got {min_lr}")
        self.warmup, self.total, self.min_lr = warmup, total, min_lr
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.lr_at(self.last_epoch, base) for base in self.base_lrs]

    def lr_at(self, step, base_lr):
        if step < self.warmup:
            return base_lr * (step + 1) / (self.warmup + 1)
        if step >= self.total:
            return self.min_lr
        r = (step - self.warmup) / max(self.total - self.warmup, 1)
        return self.min_lr + (base_lr - self.min_lr) * (1 + math.cos(math.pi * r)) / 2
