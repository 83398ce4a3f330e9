import types

from .scheduler import LRScheduler


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(step): any schedule, as a function of the step count (one
    function for every group, or a list of one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        groups = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(self.lr_lambdas) != groups:
            raise ValueError(f"LambdaLR: expected {groups} lr_lambdas (one per parameter "
                             f"group), got {len(self.lr_lambdas)}")
        if not all(callable(f) for f in self.lr_lambdas):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step or a list of "
                            f"them, got {lr_lambda!r}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self):
        """As PyTorch: functions are not saved (a lambda cannot be pickled); a callable
        object's attributes are, so a stateful schedule resumes."""
        state = super().state_dict()
        state["lr_lambdas"] = [None if isinstance(f, types.FunctionType) else dict(vars(f))
                               for f in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict):
            return super().load_state_dict(state_dict)       # its TypeError
        saved = state_dict.get("lr_lambdas")
        if not isinstance(saved, list) or len(saved) != len(self.lr_lambdas) or not all(
                s is None or isinstance(s, dict) for s in saved):
            raise ValueError(f"LambdaLR.load_state_dict: lr_lambdas must hold one entry per "
                             f"parameter group (None or a dict), got {saved!r}")
        super().load_state_dict({**state_dict, "lr_lambdas": self.lr_lambdas})
        for f, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                vars(f).update(attributes)
