"""GPT-2's byte-level BPE tokenizer and BPE training (thesis, "Tokenization"), one idea
per file:

* ``byte_unicode.py``: the byte-to-unicode table that lets bytes be written as text;
* ``pretokenize.py``: GPT-2's pattern that cuts text into pieces before any merge;
* ``bpe.py``: merging one piece's symbols by rank;
* ``gpt2.py``: ``GPT2Tokenizer`` (encode, decode, special tokens), byte-identical to tiktoken;
* ``char.py``: ``CharTokenizer``, one token per character (newline and printable ASCII);
* ``train.py``: learning merges from a corpus and saving them as encoder.json and vocab.bpe;
* ``figures.py``: a text drawn as its tokens (chapter 8's figure);
* ``__main__.py``: ``python -m stage4_models.tokenizer encode|decode|train``.
"""
from .char import CharTokenizer
from .gpt2 import ENDOFTEXT, GPT2Tokenizer

__all__ = ["ENDOFTEXT", "CharTokenizer", "GPT2Tokenizer"]
