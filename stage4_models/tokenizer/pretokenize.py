"""GPT-2's pre-tokenizer (thesis, "Tokenization": the token candidates).

Before any merge, text is cut into pieces by one regular expression, and merges never
cross a piece boundary. The pieces are: the contractions 's 't 're 've 'm 'll 'd; a run
of letters, of digits, or of other symbols, each with at most one leading space; and runs
of whitespace. ``\\s+(?!\\S)`` takes a whitespace run *but its last character* when a word
follows, so that character (usually a space) starts the next word: "a   b" is
["a", "  ", " b"], and the model sees " b", the same token as in "a b".

\\p{L} (any letter) and \\p{N} (any number) are Unicode classes that Python's ``re`` does
not have; the ``regex`` package does, which is why the project depends on it. The
contractions are matched in lower case only ("DON'T" splits as "DON", "'", "T"), as in
GPT-2.
"""
import regex

# As published in GPT-2's encoder.py.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# tiktoken writes it with possessive runs (\p{L}++) and a shared contraction prefix, which
# its Rust engine runs faster; the ``regex`` package runs this original form faster, and
# both cut every text the same way.
PATTERN = regex.compile(GPT2_PATTERN)


def pretokenize(text):
    """The list of GPT-2 pieces of ``text`` (a str); they concatenate back to ``text``."""
    return PATTERN.findall(text)
