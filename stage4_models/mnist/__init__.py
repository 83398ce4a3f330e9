"""MNIST and the optimizers (thesis, "Mnist Training Example" and "Optimizing
optimizers"), one idea per file:

* ``idx.py``: the IDX file format, read with magic-number and size checks;
* ``data.py``: finding and loading the four MNIST files;
* ``model.py``: MnistNet and the thesis's loss;
* ``training.py``: training, evaluation, checkpoints, the thesis's optimizer settings;
* ``table.py``: the thesis's optimizer table, reproduced;
* ``predict.py``: classifying a digit from an image file;
* ``__main__.py``: ``python -m stage4_models.mnist train|evaluate|predict|table``.
"""
from .data import load
from .idx import IdxError, read_idx, write_idx
from .model import MnistNet, cross_entropy_loss, thesis_loss
from .training import THESIS, Config, evaluate, load_checkpoint, save_checkpoint, train

__all__ = ["load", "IdxError", "read_idx", "write_idx", "MnistNet", "thesis_loss",
           "cross_entropy_loss", "THESIS", "Config", "train", "evaluate", "save_checkpoint",
           "load_checkpoint"]
