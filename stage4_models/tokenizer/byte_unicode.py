"""GPT-2's byte-to-unicode table (thesis, "Tokenization": the ``byteEncoder`` mapping).

GPT-2's tokenizer works on UTF-8 *bytes*, so any text, in any script, is 256 symbols at
the bottom. Its files (encoder.json, vocab.bpe) are text, though, and merges in vocab.bpe
are written as two space-separated strings. So each byte is shown as one printable
character: the 188 bytes that already print as themselves in Latin-1 (``!`` to ``~``,
``¡`` to ``¬``, ``®`` to ``ÿ``) keep their character; the 68 others (control bytes, the
space, DEL, the no-break space 0xA0, the soft hyphen 0xAD) are moved, in byte order, to
U+0100, U+0101, ... That is why a leading space shows up as ``Ġ`` (U+0120): the space is
the 33rd moved byte, 0x100 + 32.

The table is a bijection, so nothing is lost: ``decode`` maps each character back to
its byte.
"""


def bytes_to_unicode():
    """{byte: character} for all 256 bytes, in GPT-2's order: the printable bytes first
    (their rank in the vocabulary is this order), then the moved ones."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    moved = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + moved)
            moved += 1
    return table


BYTE_ENCODER = bytes_to_unicode()                       # byte -> character
BYTE_DECODER = {c: b for b, c in BYTE_ENCODER.items()}  # character -> byte
# Decoded as Latin-1, byte b is the character chr(b), so str.translate with BYTE_ENCODER
# (keys are code points) turns raw bytes into GPT-2 characters in one C call.
_FROM_SYMBOLS = {ord(c): chr(b) for b, c in BYTE_ENCODER.items()}


def encode(data):
    """The GPT-2 character string of ``data`` (bytes), one character per byte."""
    return data.decode("latin-1").translate(BYTE_ENCODER)


def decode(symbols):
    """The bytes a GPT-2 character string stands for; the inverse of ``encode``."""
    try:
        return symbols.translate(_FROM_SYMBOLS).encode("latin-1")
    except UnicodeEncodeError as err:
        bad = symbols[err.start]
        raise ValueError(f"character {bad!r} (U+{ord(bad):04X}) is not in GPT-2's byte table: "
                         f"expected one of the 256 characters of bytes_to_unicode()") from None


def byte_order():
    """The 256 bytes in GPT-2's order (token ids 0..255 of encoder.json)."""
    return list(BYTE_ENCODER)
