"""Optimizers on tensors (thesis chapter on optimizers; the tensor form of stage1's
``optim.py``), with PyTorch's names, arguments and update rules:
``import stage2_tensor.optim as optim``.

Each ``step()`` reads ``p.grad`` and changes every parameter in place under ``no_grad()``
(SGD, Adam and AdamW in one fused kernel call per parameter group, ``sgd_update`` /
``adam_update`` in backend.py, which also update the state tensors in place; RMSprop,
Adagrad, Adadelta and Adam's amsgrad in tensor operations):
the parameter objects keep their identity and storage, so a model and its optimizer keep
pointing at the same tensors. Per-parameter state (momentum, running averages) lives in
``optimizer.state[p]``; settings live in ``optimizer.param_groups`` (a list of dicts, so a
learning-rate scheduler can change ``lr``). ``lr_scheduler.LinearLR`` decays ``lr``.

One file per optimizer, as in PyTorch: ``optimizer.py`` (the frame: groups, state,
state_dict), ``sgd.py``, ``rmsprop.py``, ``adagrad.py``, ``adadelta.py``, ``adam.py``, ``adamw.py``; and
``lbfgs.py``, a quasi-Newton method whose ``step(closure)`` evaluates the model several times.
"""
from . import lr_scheduler  # optim.lr_scheduler.LinearLR, as in PyTorch
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer, fused_update
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adam", "AdamW", "LBFGS", "lr_scheduler", "fused_update"]
