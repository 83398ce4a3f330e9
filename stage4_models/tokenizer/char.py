"""A character-level tokenizer (thesis, "Tokenization": the simplest choice, one token per
character), used by the character GPT on tiny-shakespeare and by the chatbot.

The vocabulary is fixed, not read off a corpus: newline and the 95 printable ASCII
characters, 96 tokens. A model trained on Shakespeare can then be fine-tuned on text with
characters Shakespeare never used (digits, '@' in an e-mail address), which a vocabulary
built from the corpus (65 characters for tiny-shakespeare) would not let it read.
"""

from .gpt2 import look_up

CHARACTERS = "\n" + "".join(chr(c) for c in range(32, 127))


class CharTokenizer:
    """encode/decode between text and ids 0..95; a character outside the vocabulary is an
    error naming it. No special tokens: a corpus is one running text."""

    name = "char"
    special = {}

    def __init__(self):
        self.id_of = {c: i for i, c in enumerate(CHARACTERS)}
        # A table, not CHARACTERS[i]: a string would read id -1 as its last character.
        self.char_of = dict(enumerate(CHARACTERS))
        self.n_vocab = len(CHARACTERS)

    def encode(self, text):
        try:
            return [self.id_of[c] for c in text]
        except KeyError as err:
            where = text.index(err.args[0])
            raise ValueError(f"character {err.args[0]!r} at offset {where} is not in the character "
                             f"vocabulary (newline and printable ASCII)") from None

    encode_ordinary = encode

    def decode(self, ids):
        """The text of ``ids``; an id outside 0..95 is a ValueError naming it."""
        return "".join(look_up(self.char_of, ids))
