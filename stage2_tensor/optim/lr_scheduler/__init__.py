"""Learning-rate schedules, PyTorch's ``torch.optim.lr_scheduler``: a scheduler rewrites
``lr`` in each of the optimizer's ``param_groups``; call ``scheduler.step()`` once per
training step (or epoch), after ``optimizer.step()``. ``state_dict()`` and
``load_state_dict()`` save and resume a schedule, ``get_last_lr()`` reads it.

One file per schedule: ``scheduler.py`` (the frame), ``linear.py``, ``step.py`` (StepLR),
``multi_step.py``, ``exponential.py``, ``cosine_annealing.py``, ``lambda_lr.py``,
``one_cycle.py``, ``warmup_cosine.py`` (GPT training's, no PyTorch counterpart).
"""
from .cosine_annealing import CosineAnnealingLR
from .exponential import ExponentialLR
from .lambda_lr import LambdaLR
from .linear import LinearLR
from .multi_step import MultiStepLR
from .one_cycle import OneCycleLR
from .scheduler import LRScheduler
from .step import StepLR
from .warmup_cosine import WarmupCosineLR

__all__ = ["LRScheduler", "LinearLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "LambdaLR", "OneCycleLR", "WarmupCosineLR"]
