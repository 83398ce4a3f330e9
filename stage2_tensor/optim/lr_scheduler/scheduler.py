"""The scheduler's frame, PyTorch's ``torch.optim.lr_scheduler.LRScheduler``: each schedule
is a subclass, in a file of its own, that says what ``get_lr()`` returns at step
``last_epoch``."""
import numbers

from ...compiled.capture import live


class LRScheduler:
    """Keeps each group's initial lr (``base_lrs``) and sets ``lr = get_lr()`` at every step;
    ``last_epoch`` counts the steps taken (0 right after construction)."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        self.check_settings(type(self).__name__)
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()                                   # sets the lr of step 0

    def check_settings(self, where):
        """ValueError, naming the setting, unless the schedule's settings (its attributes)
        are valid: run by the constructor and on what load_state_dict loads."""

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return list(self._last_lr)

    @live
    def step(self):
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def state_dict(self):
        """Every attribute but the optimizer, as PyTorch saves a scheduler: load it into one
        made for the same optimizer to resume the schedule where it was."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore what state_dict() returned. Checked before it is kept: the same entries
        as this scheduler's, a whole step count, one lr per parameter group, and the
        settings valid; on any error nothing changes. The groups' lr is the optimizer's
        state: load_state_dict the optimizer too."""
        where = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{where}: expected the dict state_dict() returns, got "
                            f"{type(state_dict).__name__}")
        mine = set(self.state_dict())
        if set(state_dict) != mine:
            raise ValueError(f"{where}: entries {sorted(map(str, state_dict))}, expected "
                             f"{sorted(mine)} (is this another scheduler's state dict?)")
        step = state_dict["last_epoch"]
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < -1:
            raise ValueError(f"{where}: last_epoch must be a whole number >= -1, got {step!r}")
        groups = len(self.optimizer.param_groups)
        for key in ("base_lrs", "_last_lr"):
            lrs = state_dict[key]
            if (not isinstance(lrs, (list, tuple)) or len(lrs) != groups
                    or not all(isinstance(lr, numbers.Real) and lr >= 0 for lr in lrs)):
                raise ValueError(f"{where}: {key} must hold one lr >= 0 per parameter group "
                                 f"({groups}), got {lrs!r}")
        before = dict(self.__dict__)
        self.__dict__.update(state_dict)
        try:
            self.check_settings(where)
        except (ValueError, TypeError):
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        self.base_lrs, self._last_lr = list(self.base_lrs), list(self._last_lr)
