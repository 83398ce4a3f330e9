"""stage4's token datasets (stage4_models/tokens.py): the uint16 little-endian file with
<|endoftext|> between documents, the refusal of ids that do not fit, and the seeded
random-window stream of (x, y) batches."""
import itertools

import numpy as np
import pytest

from stage4_models import tokens
from stage4_models.tokenizer import GPT2Tokenizer, byte_unicode
from stage4_models.tokenizer.train import save, train, train_tokenizer

pytestmark = pytest.mark.stage4


@pytest.fixture(scope="module")
def small_tok(tmp_path_factory):
    """A small trained vocabulary (no data files needed); the corpus runs out of pairs
    before 300 tokens, so <|endoftext|> comes right after its last merge."""
    tok = train_tokenizer("the cat sat on the mat. the dog sat on the log.", 300,
                          tmp_path_factory.mktemp("vocab"))
    assert 260 < tok.n_vocab < 300 and tok.special["<|endoftext|>"] == tok.n_vocab - 1
    return tok


def byte_tokenizer(eot):
    """The 256 bytes, then tokens of two and three bytes up to id eot - 1 (a vocabulary's
    ids are 0..n_vocab - 1), then <|endoftext|> at id ``eot``."""
    chars = list(byte_unicode.BYTE_ENCODER.values())
    longer = itertools.chain(itertools.product(chars, repeat=2), itertools.product(chars, repeat=3))
    tokens = chars + ["".join(t) for t in itertools.islice(longer, eot - len(chars))]
    return GPT2Tokenizer({t: i for i, t in enumerate(tokens)}, {"<|endoftext|>": eot})


def test_prepare_writes_uint16_le_with_separators(tmp_path, small_tok):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat.<|endoftext|>the dog.<|endoftext|>on the mat", encoding="utf-8")
    ids = tokens.prepare(corpus, tmp_path / "out.bin", small_tok)
    raw = (tmp_path / "out.bin").read_bytes()
    assert len(raw) == 2 * len(ids)
    on_disk = [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]
    eot = small_tok.special["<|endoftext|>"]
    expected = (small_tok.encode("the cat sat.") + [eot] + small_tok.encode("the dog.") + [eot]
                + small_tok.encode("on the mat"))
    assert on_disk == expected == ids.tolist()
    np.testing.assert_array_equal(tokens.load(tmp_path / "out.bin"), expected)


def test_prepare_a_folder_one_document_per_file(tmp_path, small_tok):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.txt").write_text("the dog")
    (tmp_path / "docs" / "a.txt").write_text("the cat")
    (tmp_path / "docs" / "skip.md").write_text("not a document")
    ids = tokens.prepare(tmp_path / "docs", tmp_path / "out.bin", small_tok).tolist()
    eot = small_tok.special["<|endoftext|>"]
    assert ids == small_tok.encode("the cat") + [eot] + small_tok.encode("the dog")


def test_ids_above_uint16_are_refused(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a<|endoftext|>b")
    with pytest.raises(ValueError, match=r"ids up to 70000.*uint16 ids 0\.\.65535"):
        tokens.prepare(corpus, tmp_path / "out.bin", byte_tokenizer(70000))
    assert not (tmp_path / "out.bin").exists()
    ids = tokens.prepare(corpus, tmp_path / "out.bin", byte_tokenizer(65535))   # the largest that fits
    order = byte_unicode.byte_order()     # a byte's id is its place in GPT-2's byte order
    assert ids.tolist() == [order.index(ord("a")), 65535, order.index(ord("b"))] and ids.dtype == np.dtype("<u2")


def test_cli_prepare_and_its_errors(tmp_path, capsys):
    vocab = tmp_path / "vocab"
    save(train("the cat sat on the mat " * 3, 262), vocab)       # 5 merges: ids 256..260, eot 261
    (tmp_path / "c.txt").write_text("the cat<|endoftext|>the mat")
    assert tokens.main(["prepare", str(tmp_path / "c.txt"), str(tmp_path / "c.bin"), "--vocab", str(vocab)]) == 0
    assert "wrote" in capsys.readouterr().out
    ids = np.fromfile(tmp_path / "c.bin", dtype="<u2").tolist()
    assert ids.count(261) == 1 and max(ids) == 261 and len(ids) < len("the catthe mat") + 1
    assert tokens.main(["prepare", str(tmp_path / "none.txt"), str(tmp_path / "x.bin"), "--vocab", str(vocab)]) == 2
    assert "corpus not found" in capsys.readouterr().err
    (tmp_path / "latin1.txt").write_bytes("the café".encode("latin-1"))
    assert tokens.main(["prepare", str(tmp_path / "latin1.txt"), str(tmp_path / "x.bin"), "--char"]) == 2
    assert f"{tmp_path / 'latin1.txt'}: not UTF-8 text (byte 0xe9 at offset 7)" in capsys.readouterr().err


def test_stream_batches_are_shifted_windows_and_seeded():
    ids = np.arange(1000, dtype="<u2")
    stream = tokens.TokenStream(ids, block_size=16, batch_size=4, seed=7)
    x, y = stream.batch()
    assert x.shape == y.shape == (4, 16) and x.dtype == np.int64
    np.testing.assert_array_equal(y[:, :-1], x[:, 1:])
    np.testing.assert_array_equal(y[:, -1], x[:, -1] + 1)
    np.testing.assert_array_equal(x, x[:, :1] + np.arange(16))   # contiguous windows of the file
    again = tokens.TokenStream(ids, block_size=16, batch_size=4, seed=7)
    batches = [b for b, _ in zip(again, range(3))]
    np.testing.assert_array_equal(batches[0][0], x)
    assert not np.array_equal(batches[1][0], x)
    other = tokens.TokenStream(ids, block_size=16, batch_size=4, seed=8).batch()[0]
    assert not np.array_equal(other, x)


def test_stream_reaches_the_last_token_and_reads_files(tmp_path):
    np.arange(20, dtype="<u2").tofile(tmp_path / "t.bin")
    stream = tokens.TokenStream(tmp_path / "t.bin", block_size=19, batch_size=8, seed=0)
    x, y = stream.batch()                   # only one window fits: tokens 0..18 -> 1..19
    assert x.tolist() == [list(range(19))] * 8 and y[0].tolist() == list(range(1, 20))


def test_stream_errors(tmp_path):
    with pytest.raises(ValueError, match="too few for one window"):
        tokens.TokenStream(np.arange(8), block_size=8, batch_size=1)
    (tmp_path / "odd.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="expected an even number"):
        tokens.TokenStream(tmp_path / "odd.bin", 1, 1)
    with pytest.raises(FileNotFoundError, match="prepare CORPUS"):
        tokens.TokenStream(tmp_path / "missing.bin", 1, 1)


def test_ids_beyond_the_vocabulary_are_refused_naming_file_and_position(tmp_path):
    """A token file prepared with another tokenizer (or crafted) names its first id that
    the vocabulary has no row for, before training would index an embedding with it."""
    from stage4_models.gpt.training import TrainConfig, load_corpus
    from stage4_models.tokenizer import CharTokenizer
    path = tmp_path / "t.bin"
    np.array([1, 2, 9, 12, 3, 40], dtype="<u2").tofile(path)
    assert tokens.load(path, n_vocab=41).tolist() == [1, 2, 9, 12, 3, 40]
    with pytest.raises(ValueError, match=r"t.bin: token 3 is id 12, but the vocabulary has 10 tokens \(ids 0..9\)"):
        tokens.load(path, n_vocab=10)
    np.array([0, 60000], dtype="<u2").tofile(path)
    with pytest.raises(ValueError, match=r"t.bin: token 1 is id 60000, but the vocabulary has \d+ tokens"):
        load_corpus(TrainConfig(data=str(path)), CharTokenizer())


def test_prepare_writes_through_a_temporary_file_and_removes_stale_ones(tmp_path, monkeypatch):
    """prepare writes atomically, as tg.save does, so a killed prepare's temporary file
    is removed by the next one."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc")
    stale = tmp_path / f".out.bin.{2 ** 40}.0badcafe.tmp"          # no process has that id
    stale.write_bytes(b"half")
    tokens.prepare(corpus, tmp_path / "out.bin", byte_tokenizer(300))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "out.bin"]


def test_token_stream_batch_of_a_step_and_fine_tuning_options():
    ids = np.arange(1000)                                                       # token = its position
    stream = tokens.TokenStream(ids, block_size=8, batch_size=5, seed=3)
    x, y = stream.batch(step=12)
    np.testing.assert_array_equal(stream.batch(step=12)[0], x)                 # a step's batch repeats
    assert not np.array_equal(stream.batch(step=13)[0], x)
    starts = np.array([0, 100, 500, 995])                                       # 995: no room for a window
    scored = np.arange(1000) % 2 == 0
    masked = tokens.TokenStream(ids, block_size=8, batch_size=64, seed=3, starts=starts, scored=scored)
    x, y = masked.batch(step=0)
    assert set(x[:, 0].tolist()) <= {0, 100, 500}                              # windows begin at the starts
    positions = x[:, :1] + np.arange(1, 9)                                      # each target's index in ids
    np.testing.assert_array_equal(y, np.where(positions % 2 == 0, ids[positions], -1))
    with pytest.raises(ValueError, match="no allowed window start"):
        tokens.TokenStream(ids, block_size=8, batch_size=1, starts=[995])


def test_conversation_targets_score_all_but_the_user_lines():
    text = "User: Hi\nBot: Hello!\nUser: When?\nBot: At 7.\n\nCollege handbook: x\nThe end.\n"
    scored, starts = tokens.conversation_targets(text)
    assert len(scored) == len(text)
    kept = "".join(c for c, s in zip(text, scored) if s)
    assert kept == "Bot: Hello!\nBot: At 7.\n\nCollege handbook: x\nThe end.\n"
    lines_at = {text[i:].split("\n", 1)[0] for i in starts}
    assert lines_at == {"User: Hi", "User: When?", "", "College handbook: x", "The end."}
