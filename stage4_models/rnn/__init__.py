"""The character-level recurrent language model (thesis, "Recurrent neural networks"): an
embedding, a stack of RNN, LSTM or GRU layers (stage2's ``nn.RNN``, ``nn.LSTM``, ``nn.GRU``)
and a linear head, trained on tiny-shakespeare like the GPT (``python -m stage4_models.rnn``)."""
from .model import CharRNN

__all__ = ["CharRNN"]
