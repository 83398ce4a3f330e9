"""Character language models on 32,033 names (thesis, "Bi-gram language modelling" and
"Language Modelling using Neural Networks"), one idea per file:

* ``data.py``: finding and checking names.txt, the vocabulary, the seeded 80/10/10 split,
  (previous, next) pairs and the sliding windows;
* ``bigram.py``: the bigram model: counts, the probability matrix, smoothing, the loss;
* ``sampling.py``: drawing names from either model, optionally from a prompt;
* ``mlp.py``: the MLP language model (Bengio et al. 2003) and its parameter count;
* ``training.py``: training it, the loss per split, checkpoints, sampling from it;
* ``figures.py``: the bigram count matrix and the loss curve;
* ``__main__.py``: ``python -m stage4_models.names train|sample|bigram``.
"""
from .bigram import Bigram, count_pairs
from .data import Vocabulary, load, split, windows
from .mlp import MLPLanguageModel, parameter_count
from .training import Config, evaluate, load_checkpoint, sample, save_checkpoint, train

__all__ = ["Bigram", "count_pairs", "Vocabulary", "load", "split", "windows", "MLPLanguageModel",
           "parameter_count", "Config", "train", "evaluate", "sample", "save_checkpoint",
           "load_checkpoint"]
