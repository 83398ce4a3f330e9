"""stage4's GPT-2 tokenizer (stage4_models/tokenizer) against tiktoken, OpenAI's own, built
from the same local encoder.json and vocab.bpe (tiktoken is the tests' oracle only; the
tokenizer does not use it): the thesis's example, over a megabyte of varied text,
hypothesis-generated strings, round trips of text and of invalid UTF-8 bytes, special
tokens, errors, and BPE training whose saved files load back (into tiktoken too); pieces
of hundreds of kilobytes (one word, one run of spaces) in linear time and memory."""
import json
import random
import re
import time
import tracemalloc

import numpy as np
import pytest
import tiktoken
import tiktoken.load
from hypothesis import given
from hypothesis import strategies as st

from stage4_models import data as datafiles
from stage4_models.tokenizer import GPT2Tokenizer, byte_unicode
from stage4_models.tokenizer import __main__ as cli
import stage4_models.tokenizer.bpe as bpe_module
from stage4_models.tokenizer.bpe import WINDOW, _bpe_heap, _bpe_list, _bpe_windows, bpe, merge_steps
from stage4_models.tokenizer.gpt2 import FILES
from stage4_models.tokenizer.pretokenize import GPT2_PATTERN, pretokenize
from stage4_models.tokenizer.train import save, train, train_tokenizer
from stage4_models.tokens import SHAKESPEARE

pytestmark = pytest.mark.stage4

THESIS_TEXT = "This is an example sentence! Hällö wörld!"
THESIS_IDS = [1212, 318, 281, 1672, 6827, 0, 367, 11033, 297, 9101, 266, 30570, 335, 0]


@pytest.fixture(scope="module")
def gpt2_files():
    try:
        return datafiles.fetch(FILES, download=False)
    except FileNotFoundError as e:
        pytest.skip(f"gpt2/encoder.json and vocab.bpe are not in $TRACEGRAD_DATA or "
                    f"~/.cache/tracegrad (tests never download): {e}")


@pytest.fixture(scope="module")
def tok(gpt2_files):
    return GPT2Tokenizer.from_files(*gpt2_files)


def tiktoken_from(encoder_json, vocab_bpe, pat_str, eot):
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=str(vocab_bpe),
                                                          encoder_json_file=str(encoder_json))
    return tiktoken.Encoding("local", pat_str=pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": eot}, explicit_n_vocab=eot + 1)


@pytest.fixture(scope="module")
def oracle(gpt2_files):
    """tiktoken's gpt2 encoding, exactly as tiktoken_ext.openai_public defines it, but from
    the local files (never a download)."""
    pat = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
    return tiktoken_from(*gpt2_files, pat, 50256)


# ---- a corpus of hard cases ----------------------------------------------------------------
HARD = [
    "Hällö wörld! Ça va? naïve café Ærøskøbing Straße ÀÉÎÕÜ ñandú",
    "日本語のテキストと漢字、中文字符，한국어 텍스트。 Ελληνικά Кириллица עברית العربية हिन्दी ไทย",
    "emoji 😀😃🙂👍🏽 flags 🇫🇷🇯🇵 family 👨‍👩‍👧‍👦 ZWJ 👩🏾‍💻 🏳️‍🌈 keycap 1️⃣ ✈️",
    "def f(x):\n\treturn {'a': [1, 2, 3]} if x else None  # comment\n",
    "for (int i = 0; i < n; ++i) { s += a[i] * b[i]; }  /* C */\n#include <stdio.h>\n",
    "tabs\t\tand\t spaces   mixed \t\n  \n\n\n\n    indented\n        more\r\n\r\nCRLF",
    "numbers 0 7 42 123456789 3.14159 1e-10 -273.15 1,000,000 ١٢٣ ½ Ⅻ ²³",
    "contractions: it's don't we're I've I'm you'll he'd IT'S DON'T WE'RE I'VE I'M YOU'LL HE'D",
    "mixed It'S dOn'T 'twas rock'n'roll o'clock ''quoted'' '''triple''' 's 'd'll",
    "unicode spaces:\u00a0nbsp\u2002en\u2003em\u2009thin\u3000ideographic\u2028line\u2029para\x85nel",
    "controls \x00\x01\x1b[31m\x7f \x1c\x1d\x1e\x1f \u200b\u200c\u200d\ufeff zero-width",
    "<|endoftext|> special text <|endoftext|><|endoftext|> and <|endof text|>",
    "URLs https://example.com/a?b=c&d=e#f mail@host.org C:\\Windows\\path ~/.bashrc",
    "punctuation!!! ??? ... --- ___ *** ((( ))) [[[ ]]] {{{ }}} \"\"\" ''' ``` ;;; :::",
    "combining e\u0301 a\u0308 n\u0303 Z̷̢͉̈́a̸̛̰l̷g̶o̵ Hangul jamo \u1100\u1161\u11a8",
    " leading space", "trailing space ", "   ", "\n", "", "a", " ", "\t \n \t",
    "x" * 300 + " " + "y z" * 50 + " " * 400 + "end" + "\n" * 300 + "1" * 500,
    "\U0001F600" * 100 + "é" * 300 + "日本" * 200,
]
# Characters to mix at random: letters, digits, spaces of every kind, symbols, emoji.
ALPHABET = ("abcdeEFGXYZ ", "0123456789", " \t\n\r\u00a0\u3000\x85", "'\"!?.,;:-_()[]{}<>|/\\@#$%^&*+=~`",
            "éüßøñçÆŒ", "日本語中文한국어", "😀👍🏽🇫🇷\u200d♀️", "'s't're've'm'll'd")


def hard_text(size, seed=0):
    """Random text of about ``size`` characters built from the hard cases and ALPHABET."""
    rng = random.Random(seed)
    parts, n = [], 0
    while n < size:
        if rng.random() < 0.1:
            part = rng.choice(HARD)
        else:
            group = rng.choice(ALPHABET)
            part = "".join(rng.choice(group) for _ in range(rng.randint(1, 12)))
        parts.append(part)
        n += len(part)
    return "".join(parts)


@pytest.fixture(scope="module")
def corpus():
    """Over a megabyte of text: tiny-shakespeare plus ~200 kB of hard cases."""
    try:
        (path,) = datafiles.fetch([SHAKESPEARE], download=False)
    except FileNotFoundError as e:
        pytest.skip(f"shakespeare/input.txt is not in $TRACEGRAD_DATA (tests never download): {e}")
    return path.read_text(encoding="utf-8") + "\n".join(HARD) + hard_text(200_000)


# ---- the thesis's example and tiktoken --------------------------------------------------
def test_thesis_example(tok, oracle):
    assert tok.encode(THESIS_TEXT) == THESIS_IDS
    assert oracle.encode_ordinary(THESIS_TEXT) == THESIS_IDS
    assert tok.decode(THESIS_IDS) == THESIS_TEXT


def test_known_ids(tok):
    assert tok.encode("Hello world") == [15496, 995]
    assert tok.n_vocab == 50257 and tok.special == {"<|endoftext|>": 50256}
    assert tok.decode([50256]) == "<|endoftext|>"


def test_over_a_megabyte_identical_to_tiktoken(tok, corpus, oracle):
    assert len(corpus.encode("utf-8")) >= 1_000_000
    ours, theirs = tok.encode(corpus), oracle.encode_ordinary(corpus)
    if ours != theirs:
        i = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b) if \
            any(a != b for a, b in zip(ours, theirs)) else min(len(ours), len(theirs))
        context = tok.decode(theirs[max(0, i - 5):i + 5])
        pytest.fail(f"token {i} differs: ours {ours[i:i + 5]}, tiktoken {theirs[i:i + 5]} in {context!r}")
    assert tok.decode(ours) == corpus


@pytest.mark.parametrize("text", HARD, ids=range(len(HARD)))
def test_hard_cases_identical_to_tiktoken(tok, oracle, text):
    assert tok.encode(text) == oracle.encode_ordinary(text)
    assert tok.decode(tok.encode(text)) == text


@given(st.text(max_size=60))
def test_any_text_identical_to_tiktoken(tok, oracle, text):
    assert tok.encode(text) == oracle.encode_ordinary(text)
    assert tok.decode(tok.encode(text)) == text


@given(st.lists(st.sampled_from(["a", "b", " ", "  ", "\n", "'s", "'", "1", "é", "😀", "\t", "ab", "\u00a0"]),
                max_size=30).map("".join))
def test_whitespace_and_contraction_mixes_identical_to_tiktoken(tok, oracle, text):
    assert "".join(pretokenize(text)) == text
    assert tok.encode(text) == oracle.encode_ordinary(text)


def test_pretokenizer_pieces():
    assert pretokenize("a   b") == ["a", "  ", " b"]
    assert pretokenize("I'm here, it's 2024!\n\n") == ["I", "'m", " here", ",", " it", "'s", " 2024", "!", "\n\n"]
    assert pretokenize("DON'T") == ["DON", "'", "T"]        # contractions are lower case only
    text = hard_text(5000, seed=3)
    assert "".join(pretokenize(text)) == text


# ---- bytes ----------------------------------------------------------------------------------
def test_byte_table_is_gpt2s():
    table = byte_unicode.bytes_to_unicode()
    assert len(set(table.values())) == 256
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[ord("A")] == "A"
    assert byte_unicode.decode(byte_unicode.encode(bytes(range(256)))) == bytes(range(256))
    with pytest.raises(ValueError, match="not in GPT-2's byte table"):
        byte_unicode.decode("€")


@given(st.binary(max_size=80))
def test_any_bytes_round_trip(tok, data):
    assert tok.decode_bytes(tok.encode_bytes(data)) == data


def test_invalid_utf8_round_trips_and_valid_bytes_match_text(tok, oracle):
    bad = b"ok \xff\xfe caf\xc3 \xe6\x97 \xed\xa0\x80 end\x80" + "Hällö".encode() + b"\xf0\x9f\x98"
    ids = tok.encode_bytes(bad)
    assert tok.decode_bytes(ids) == bad
    assert oracle.decode_bytes(ids) == bad                  # the ids are real GPT-2 tokens
    assert "\ufffd" in tok.decode(ids)                      # text decoding replaces them
    text = "Hällö 日本 😀"
    assert tok.encode_bytes(text.encode()) == tok.encode(text)


def test_lone_surrogates_encode_as_tiktoken(tok, oracle):
    text = "a\ud800b \udcff"
    assert tok.encode(text) == oracle.encode_ordinary(text)


def test_long_pieces_heap_and_plain_merges_agree(tok):
    ranks = tok.encoder
    for piece in ["a" * 700, " " + "ab" * 400, "1" * 999, byte_unicode.encode("é日😀".encode() * 60)]:
        assert _bpe_heap(piece, ranks) == list(merge_steps(piece, ranks))[-1][0]
        assert bpe(piece, ranks) == _bpe_heap(piece, ranks)


# ---- long pieces: linear time and memory, the same tokens ---------------------------------
def random_text(alphabet, size, seed=0):
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(size))


LONG_PIECES = {
    "one letter": "a" * 100_003,
    "spaces, then a word": " " * 100_001 + "x",   # tiktoken's regex panics near a million
    "random letters": random_text("abcdefghijklmnopqrstuvwxyz", 30_000),
    "random frequent letters": random_text("etaoinshrdlu", 30_000, seed=1),
    "random digits": random_text("0123456789", 20_000, seed=2),
    "random symbols": random_text("!#$%&()*+,-./:;<=>?@[]^_`{|}~", 20_000, seed=3),
    "GPT-2's longest token, repeated": "\u00c3\u00c2" * 5_001,    # 128-byte tokens
    "dashes": "-" * 10_007,
    "a word repeated without spaces": "tokenization" * 3_001,
    "accents and emoji": random_text("éüßø😀日本", 10_000, seed=4),
}


@pytest.mark.parametrize("text", LONG_PIECES.values(), ids=LONG_PIECES.keys())
def test_long_pieces_identical_to_tiktoken(tok, oracle, text):
    assert tok.encode(text) == oracle.encode_ordinary(text)


def test_windows_join_into_the_merges_of_the_whole_piece(tok):
    # Tiny windows and margins: seams that hold and seams that fail (the heap then merges
    # the whole piece); either way, the tokens of the whole piece merged at once.
    rng = random.Random(0)
    for _ in range(150):
        alphabet = rng.choice(["a", "ab", "etaoin", "0123456789", " \n", "-=", "é日😀", "ing the "])
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 300)))
        piece = byte_unicode.encode(text.encode())
        window = rng.randint(2, 40)
        assert _bpe_windows(piece, tok.encoder, window, rng.randint(0, window)) == _bpe_list(piece, tok.encoder)


def test_long_pieces_are_merged_window_by_window(tok, monkeypatch):
    # The windows' seams hold on long runs (the heap never sees the whole piece), so a
    # piece costs its windows, each merged once however often it repeats.
    heap = bpe_module._bpe_heap

    def windows_only(symbols, ranks):
        assert len(symbols) <= WINDOW, "a seam failed: the whole piece went to the heap"
        return heap(symbols, ranks)
    monkeypatch.setattr(bpe_module, "_bpe_heap", windows_only)
    for text in LONG_PIECES.values():
        piece = byte_unicode.encode(text[:5_000].encode())
        assert bpe(piece, tok.encoder) == heap(piece, tok.encoder)


def cpu_seconds(tok, text):
    """The least CPU time of three encodings of ``text``, each with an empty piece cache
    (CPU time: other programs on the machine do not count)."""
    times = []
    for _ in range(3):
        tok._cache.clear()
        start = time.process_time()
        tok.encode(text)
        times.append(time.process_time() - start)
    return min(times)


@pytest.mark.parametrize("unit, small", [("a", 50_000), (" ", 50_000), ("random", 5_000)])
def test_long_pieces_encode_in_linear_time(tok, unit, small):
    # 8x the characters take about 8x the time; a merge loop that scans the whole piece per
    # merge would take 64x. The margin is generous: the machine may be busy with other work.
    text = random_text("abcdefghijklmnopqrstuvwxyz", 8 * small) if unit == "random" else unit * 8 * small
    ratio = cpu_seconds(tok, text) / cpu_seconds(tok, text[:small])
    assert ratio < 24, f"8x the input took {ratio:.1f}x the time"


def test_long_pieces_encode_in_linear_memory(tok):
    # A piece of n bytes holds a few of its windows and its tokens, not n heap entries.
    for text in ["a" * 200_000, " " * 200_000, random_text("etaoinshrdlu", 10_000)]:
        tracemalloc.start()
        try:
            tok.encode(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 64 * len(text), f"{peak / len(text):.0f} bytes per character of {text[:3]!r}..."


def test_merge_steps_on_one_word(tok):
    steps = list(merge_steps(byte_unicode.encode(b" lowest"), tok.encoder))
    assert steps[0][0] == list("Ġlowest") and steps[0][1] is None
    ranks = [rank for _, _, rank in steps[1:]]
    assert ranks == sorted(ranks)           # here each merge ranks after the one before
    assert steps[-1][0] == ["Ġlowest"] and tok.encode(" lowest") == [tok.encoder["Ġlowest"]]


# ---- special tokens ----------------------------------------------------------------------
def test_special_text_is_ordinary_by_default(tok, oracle):
    text = "a<|endoftext|>b"
    assert 50256 not in tok.encode(text)
    assert tok.encode(text) == oracle.encode_ordinary(text)


@pytest.mark.parametrize("allowed", [{"<|endoftext|>"}, "all", "<|endoftext|>"])
def test_allowed_special_gives_its_id(tok, oracle, allowed):
    text = "end.<|endoftext|>Next doc <|endoftext|><|endoftext|>"
    ids = tok.encode(text, allowed_special=allowed)
    assert ids == oracle.encode(text, allowed_special="all")
    assert ids.count(50256) == 3 and tok.decode(ids) == text


def test_unknown_special_is_an_error(tok):
    with pytest.raises(ValueError, match=r"unknown special tokens \['<\|im_start\|>'\]"):
        tok.encode("x", allowed_special={"<|im_start|>"})


# ---- errors ---------------------------------------------------------------------------------
def test_decode_unknown_id_is_a_clear_error(tok):
    with pytest.raises(ValueError, match=r"unknown token id 50257: expected an int in 0\.\.50256"):
        tok.decode([15496, 50257])
    with pytest.raises(ValueError, match="unknown token id -1"):
        tok.decode([-1])
    with pytest.raises(ValueError, match="unknown token id 'a'"):
        tok.decode([1, "a"])
    for bad in (-7, 10**12, 1.0, None):                     # 1.0 is no id, though 1.0 == 1
        with pytest.raises(ValueError, match=re.escape(f"unknown token id {bad!r}: expected an int in 0..50256")):
            tok.decode([15496, bad])
    assert tok.decode(np.array(THESIS_IDS)) == THESIS_TEXT     # numpy ids (TokenStream's) work


@pytest.mark.parametrize("bad", [-7, 10**12, 50257, "50256", 50256.0, 995])
def test_special_ids_outside_the_vocabulary_are_refused(tok, bad):
    # A vocabulary's ids are 0..n_vocab - 1, each once (tiktoken's explicit_n_vocab check).
    message = ("which 'Ġworld' has already" if bad == 995 else
               re.escape(f"special token '<|endoftext|>' has id {bad!r}: expected an int in 0..50256"))
    with pytest.raises(ValueError, match=message):
        GPT2Tokenizer(tok.encoder, {"<|endoftext|>": bad})


def test_files_that_are_not_utf8_name_the_file(tmp_path, gpt2_files):
    encoder_json, vocab_bpe = gpt2_files
    bad = tmp_path / "vocab.bpe"
    bad.write_bytes(b"#version: 0.2\n\xc4\xa0 t\n\xff\xfe\n")
    with pytest.raises(ValueError, match=re.escape(f"{bad}: not UTF-8 text (byte 0xff at offset 19); "
                                                   f"expected GPT-2's vocab.bpe")):
        GPT2Tokenizer.from_files(encoder_json, bad)
    bad = tmp_path / "encoder.json"
    bad.write_bytes(b'{"a": 0, "\xe9": 1}')
    with pytest.raises(ValueError, match=re.escape(f"{bad}: not UTF-8 text (byte 0xe9 at offset 10); "
                                                   f"expected a JSON object {{token: id}}")):
        GPT2Tokenizer.from_files(bad, vocab_bpe)


def small_vocabulary(folder):
    """encoder.json (as a dict) and vocab.bpe of a vocabulary of 261 tokens."""
    save(train(SENNRICH, 261), folder)
    return json.loads((folder / "encoder.json").read_text(encoding="utf-8")), folder / "vocab.bpe"


@pytest.mark.parametrize("content, message", [
    ("{", r"not a JSON file \(Expecting property name"),
    ("[1, 2]", r"expected a JSON object \{token: id\} \(GPT-2's encoder.json\), got list"),
    ({"Ġlo": "259"}, r"token 'Ġlo' has id '259': expected an int in 0\.\.260"),
    ({"Ġlo": 259.0}, r"token 'Ġlo' has id 259.0: expected an int in 0\.\.260"),
    ({"Ġlo": True}, r"token 'Ġlo' has id True: expected an int in 0\.\.260"),
    ({"Ġlo": 10**12}, r"token 'Ġlo' has id 1000000000000: expected an int in 0\.\.260"),
    ({"Ġlo": 0}, r"token 'Ġlo' has id 0, which '!' has already"),
    ({"<|endoftext|>": -7}, r"special token '<\|endoftext\|>' has id -7: expected an int in 0\.\.260"),
    ({"<|endoftext|>": None}, r"special token '<\|endoftext\|>' has id None: expected an int"),
])
def test_encoder_json_with_wrong_content_is_named(tmp_path, content, message):
    encoder, vocab_bpe = small_vocabulary(tmp_path)
    path = tmp_path / "encoder.json"
    path.write_text(content if isinstance(content, str) else json.dumps({**encoder, **content}), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": .*" + message):
        GPT2Tokenizer.from_files(path, vocab_bpe)


def test_vocab_bpe_with_an_unknown_merge_is_named(tmp_path):
    encoder, vocab_bpe = small_vocabulary(tmp_path)
    vocab_bpe.write_text("#version: 0.2\ne s\nx yz\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{vocab_bpe}: merge 'x' 'yz' uses 'yz', which no earlier merge made")):
        GPT2Tokenizer.from_files(tmp_path / "encoder.json", vocab_bpe)


def test_encode_wants_str(tok):
    with pytest.raises(TypeError, match="encode_bytes"):
        tok.encode(b"bytes")


def test_missing_and_mismatched_files(tmp_path, gpt2_files):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        GPT2Tokenizer.from_files(tmp_path / "missing.json", gpt2_files[1])
    (tmp_path / "vocab.bpe").write_text("no header\n")
    with pytest.raises(ValueError, match="expected '#version: 0.2'"):
        GPT2Tokenizer.from_files(gpt2_files[0], tmp_path / "vocab.bpe")
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\nĠ t\n")   # encoder.json has 50,000 more
    with pytest.raises(ValueError, match="do not match"):
        GPT2Tokenizer.from_files(gpt2_files[0], tmp_path / "vocab.bpe")


def test_default_finds_the_data_folder(monkeypatch, tmp_path, gpt2_files):
    monkeypatch.setenv("TRACEGRAD_DATA", str(gpt2_files[0].parent.parent))
    assert GPT2Tokenizer.default(download=False).encode(THESIS_TEXT) == THESIS_IDS
    monkeypatch.setenv("TRACEGRAD_DATA", str(tmp_path))
    monkeypatch.setattr(datafiles, "cache_dir", lambda: tmp_path / "cache")
    with pytest.raises(FileNotFoundError, match="gpt2/encoder.json"):
        GPT2Tokenizer.default(download=False)


# ---- BPE training ----------------------------------------------------------------------
# Sennrich et al.'s example: "low" x5, "lower" x2, "newest" x6, "widest" x3, each with
# GPT-2's leading space. Pair counts: e s 9, s t 9 (tie: byte order), then Ġ l / l o / o w 7...
SENNRICH = " " + " ".join(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3)


def test_training_learns_the_expected_merges():
    merges = train(SENNRICH, 257 + 8)
    assert merges == [("e", "s"), ("es", "t"), ("Ġ", "l"), ("Ġl", "o"), ("Ġlo", "w"),
                      ("Ġ", "n"), ("Ġn", "e"), ("Ġne", "w")]


def test_training_stops_when_pairs_run_out():
    assert train("ab ab", 1000) == [("a", "b"), ("Ġ", "ab")]
    with pytest.raises(ValueError, match="vocab_size must be an int >= 257"):
        train("ab", 256)


def test_trained_files_load_back_and_round_trip(tmp_path):
    corpus = [SENNRICH, hard_text(20_000, seed=1)]
    tok = train_tokenizer(corpus, 400, tmp_path)
    assert tok.n_vocab == 400 and tok.special == {"<|endoftext|>": 399}
    merges = train(corpus, 400)
    assert len(merges) == 400 - 257
    vocab = (tmp_path / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    assert vocab[0] == "#version: 0.2" and vocab[1:-1] == [f"{a} {b}" for a, b in merges] and vocab[-1] == ""
    encoder = json.loads((tmp_path / "encoder.json").read_text(encoding="utf-8"))
    assert all(encoder[a + b] == 256 + i for i, (a, b) in enumerate(merges))
    assert encoder["<|endoftext|>"] == 399 and encoder["Ġ"] == byte_unicode.byte_order().index(32)
    text = hard_text(3000, seed=2)
    ids = tok.encode(text)
    assert tok.decode(ids) == text and max(ids) < 400
    assert len(ids) < len(text.encode())                   # the merges compress
    oracle = tiktoken_from(tmp_path / "encoder.json", tmp_path / "vocab.bpe", GPT2_PATTERN, 399)
    assert oracle.encode_ordinary(text) == ids              # tiktoken reads our files too


VOCABULARY_FILES = ("encoder.json", "vocab.bpe")


def test_saving_removes_the_temporary_files_of_killed_saves(tmp_path):
    """save writes both files through stage2's atomic_write: a killed save's temporary
    files (process ids no process can have) are removed by the next save."""
    for name in VOCABULARY_FILES:
        (tmp_path / f".{name}.{2 ** 40}.0badcafe.tmp").write_bytes(b"half")
    save([("e", "s")], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == list(VOCABULARY_FILES)


def test_a_failing_save_keeps_the_previous_vocabulary(tmp_path, full_disk):
    for name in VOCABULARY_FILES:
        (tmp_path / name).write_text(f"previous {name}")
    with pytest.raises(OSError, match="No space left on device"):
        save([("e", "s")], tmp_path)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {n: f"previous {n}" for n in VOCABULARY_FILES}


def test_cli_encode_decode_train(tmp_path, gpt2_files, monkeypatch, capsys):
    monkeypatch.setenv("TRACEGRAD_DATA", str(gpt2_files[0].parent.parent))
    assert cli.main(["encode", THESIS_TEXT]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in THESIS_IDS]
    assert cli.main(["decode", *map(str, THESIS_IDS)]) == 0
    assert capsys.readouterr().out == THESIS_TEXT + "\n"
    assert cli.main(["decode", "99999"]) == 2
    assert "unknown token id 99999" in capsys.readouterr().err
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    assert cli.main(["encode", "--file", str(tmp_path / "latin1.txt")]) == 2
    assert f"{tmp_path / 'latin1.txt'}: not UTF-8 text (byte 0xe9 at offset 3)" in capsys.readouterr().err
    (tmp_path / "c.txt").write_text(SENNRICH)
    assert cli.main(["train", str(tmp_path / "c.txt"), "--vocab-size", "260", "--out", str(tmp_path / "v")]) == 0
    assert (tmp_path / "v" / "vocab.bpe").read_text() == "#version: 0.2\ne s\nes t\nĠ l\n"
