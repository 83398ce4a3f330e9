"""stage4's MNIST program (stage4_models/mnist): the IDX reader on files written here, the
data lookup, mini-batches, the thesis's loss and each optimizer's first steps against
numpy, a short training run on the shared data, checkpoints, and predicting from a PNG."""
import gzip
import json
import struct
from dataclasses import replace

import numpy as np
import pytest

import stage2_tensor as tg
import stage4_models.data as datafiles
from stage4_models.mnist import __main__ as cli
from stage4_models.mnist import data, idx, predict
from stage4_models.mnist.model import MnistNet, thesis_loss
from stage4_models.mnist.training import Config, evaluate, load_checkpoint, make_optimizer, train

pytestmark = pytest.mark.stage4


# ---- the IDX format ----------------------------------------------------------------------
def idx_bytes(array, code=0x08):
    header = bytes([0, 0, code, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(">u1" if code == 0x08 else ">i4").tobytes()


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gzip"])
def test_idx_reads_what_was_written(tmp_path, gz):
    images = np.random.default_rng(0).integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    path = tmp_path / ("images.gz" if gz else "images")
    (gzip.open if gz else open)(path, "wb").write(idx_bytes(images))
    out = idx.read_idx(path, expect_magic=2051)
    assert out.shape == (5, 28, 28) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, images)


def test_idx_round_trip_of_write_idx_with_ints(tmp_path):
    values = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    idx.write_idx(tmp_path / "v.gz", values)
    np.testing.assert_array_equal(idx.read_idx(tmp_path / "v.gz"), values)


@pytest.mark.parametrize("name", ["v.idx", "v.gz"])
def test_a_failing_write_idx_keeps_the_previous_file(tmp_path, full_disk, name):
    """write_idx writes through stage2's atomic_write: the old file whole, no temporary."""
    (tmp_path / name).write_bytes(b"previous")
    with pytest.raises(OSError, match="No space left on device"):
        idx.write_idx(tmp_path / name, np.zeros(3, np.uint8))
    assert [(p.name, p.read_bytes()) for p in tmp_path.iterdir()] == [(name, b"previous")]


def test_truncated_idx_is_an_error_naming_file_and_sizes(tmp_path):
    path = tmp_path / "short"
    path.write_bytes(idx_bytes(np.zeros((3, 28, 28), np.uint8))[:-10])
    with pytest.raises(idx.IdxError, match=r"short.*truncated.*2352 bytes.*2342"):
        idx.read_idx(path)


def test_trailing_bytes_and_cut_header_are_errors(tmp_path):
    path = tmp_path / "long"
    path.write_bytes(idx_bytes(np.zeros((2, 3), np.uint8)) + b"\0")
    with pytest.raises(idx.IdxError, match="trailing bytes"):
        idx.read_idx(path)
    path.write_bytes(bytes([0, 0, 8, 3, 0, 0]))
    with pytest.raises(idx.IdxError, match="truncated header"):
        idx.read_idx(path)


def test_a_gzip_bomb_is_read_no_further_than_its_header_says(tmp_path, monkeypatch):
    """A 10-byte image in a gzip stream followed by 256 MiB of zeros (about 256 KiB
    compressed): the reader stops one byte past the 10 the header declares."""
    path = tmp_path / "bomb.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(struct.pack(">HBB1I", 0, 0x08, 1, 10) + bytes(10))
        for _ in range(256):
            f.write(bytes(1 << 20))
    asked = []
    read = gzip.GzipFile.read
    monkeypatch.setattr(gzip.GzipFile, "read", lambda self, n=-1: asked.append(n) or read(self, n))
    with pytest.raises(idx.IdxError, match="bomb.gz: has trailing bytes"):
        idx.read_idx(path)
    assert asked and max(asked) == 11


def test_sizes_whose_product_overflows_int64_and_too_many_dimensions(tmp_path):
    """65536 ** 4 = 2 ** 64 wraps to 0 in int64: no data would have matched the sizes."""
    path = tmp_path / "crafted"
    path.write_bytes(struct.pack(">HBB4I", 0, 0x08, 4, *[65536] * 4))
    with pytest.raises(idx.IdxError, match=r"crafted: shape .* needs 18446744073709551616 bytes, more than"):
        idx.read_idx(path)
    path.write_bytes(struct.pack(">HBB70I", 0, 0x08, 70, *[1] * 70) + b"\0")
    with pytest.raises(idx.IdxError, match="crafted: 70 dimensions, expected at most 32"):
        idx.read_idx(path)


def test_wrong_magic_is_an_error(tmp_path):
    path = tmp_path / "labels"
    path.write_bytes(idx_bytes(np.zeros(4, np.uint8)))          # magic 2049 (labels)
    with pytest.raises(idx.IdxError, match="magic number 2049, expected 2051"):
        idx.read_idx(path, expect_magic=2051)
    path.write_bytes(b"PK\x03\x04 not an idx file")
    with pytest.raises(idx.IdxError, match="not an IDX header"):
        idx.read_idx(path)


def test_cut_gzip_stream_is_an_error(tmp_path):
    path = tmp_path / "cut.gz"
    path.write_bytes(gzip.compress(idx_bytes(np.arange(200, dtype=np.uint8)))[:-12])
    with pytest.raises(idx.IdxError, match="cut.gz: damaged gzip"):
        idx.read_idx(path)


def test_images_and_labels_must_match(tmp_path):
    idx.write_idx(tmp_path / "i.gz", np.zeros((4, 28, 28), np.uint8))
    idx.write_idx(tmp_path / "l.gz", np.zeros(3, np.uint8))
    with pytest.raises(idx.IdxError, match="4 images but .* 3 labels"):
        data.read_pair(tmp_path / "i.gz", tmp_path / "l.gz")


# ---- finding the files -------------------------------------------------------------------
def fake_mnist(folder, n=4):
    folder = folder / "mnist"
    folder.mkdir(parents=True)
    for prefix in ("train", "t10k"):
        idx.write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", np.full((n, 28, 28), 7, np.uint8))
        idx.write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", np.arange(n, dtype=np.uint8) % 10)


def test_loader_reads_from_tracegrad_data_first(tmp_path, monkeypatch):
    fake_mnist(tmp_path / "data")
    monkeypatch.setenv("TRACEGRAD_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    paths = datafiles.fetch(data.files("test"), download=False)
    assert all(str(p).startswith(str(tmp_path / "data")) for p in paths)
    with pytest.raises(idx.IdxError, match="4 images, expected 10000"):   # sizes are checked
        data.load("test", download=False)


def test_loader_falls_back_to_the_cache(tmp_path, monkeypatch):
    fake_mnist(tmp_path / "home" / ".cache" / "tracegrad")
    monkeypatch.delenv("TRACEGRAD_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    paths = datafiles.fetch(data.files("train"), download=False)
    assert all(".cache/tracegrad/mnist" in str(p) for p in paths)


def test_offline_error_names_the_files_and_the_variable(offline):
    with pytest.raises(FileNotFoundError) as err:
        data.load("train")
    message = str(err.value)
    assert "mnist/train-images-idx3-ubyte.gz" in message and "TRACEGRAD_DATA" in message
    assert not list(offline.rglob("*idx*")), "a failed download left a file behind"


def test_download_with_wrong_checksum_is_rejected(offline, monkeypatch):
    import io
    monkeypatch.setattr(datafiles.urllib.request, "urlopen", lambda *a, **k: io.BytesIO(b"<html>moved</html>"))
    with pytest.raises(FileNotFoundError, match="t10k-labels"):
        datafiles.fetch([data.files("test")[1]])
    assert not list(offline.rglob("*t10k*")), "bytes with a wrong checksum were kept"


def test_a_download_is_checked_and_written_atomically(offline, monkeypatch):
    """The bytes go through stage2's atomic_write: the file appears whole or not at all, and
    a killed download's temporary file (a process id no process can have) is removed by
    the next download of that file."""
    import hashlib
    import io

    class CutOff(io.BytesIO):
        def read(self, n=-1):
            if self.tell():
                raise ConnectionResetError("connection reset by peer")
            return super().read(4)
    payload = b"the file's bytes"
    file = datafiles.DataFile("test", "f.bin", ("https://example.invalid/f.bin",),
                              hashlib.sha256(payload).hexdigest())
    folder = offline / ".cache" / "tracegrad" / "test"
    folder.mkdir(parents=True)
    (folder / f".f.bin.{2 ** 40}.0badcafe.tmp").write_bytes(b"half")
    monkeypatch.setattr(datafiles.urllib.request, "urlopen", lambda *a, **k: CutOff(payload))
    with pytest.raises(FileNotFoundError, match="test/f.bin"):
        datafiles.fetch([file])
    assert not list(folder.iterdir())
    monkeypatch.setattr(datafiles.urllib.request, "urlopen", lambda *a, **k: io.BytesIO(payload))
    [path] = datafiles.fetch([file])
    assert path.read_bytes() == payload and [p.name for p in folder.iterdir()] == ["f.bin"]


def test_a_table_write_that_fails_keeps_the_previous_table(tmp_path, full_disk):
    from stage4_models.mnist import table
    path = tmp_path / "mnist_results.json"
    path.write_text("{}\n")
    with pytest.raises(OSError, match="No space left on device"):
        table.write({"sgd": {"accuracy": 0.9}}, path)
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [(path.name, "{}\n")]


# ---- the loss and the optimizers, one step at a time, against numpy ----------------------
def numpy_step_gradients(W, x, onehot):
    """The thesis's loss and its gradients for MnistNet, derived by hand."""
    B = len(x)
    h = x @ W["fc1.weight"].T + W["fc1.bias"]
    a = np.maximum(h, 0)
    z = a @ W["fc2.weight"].T + W["fc2.bias"]
    e = np.exp(z - z.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    loss = ((p - onehot) ** 2).sum() / B
    dp = 2 * (p - onehot) / B
    dz = p * (dp - (dp * p).sum(1, keepdims=True))               # softmax's Jacobian
    da = dz @ W["fc2.weight"]
    dh = da * (h > 0)
    return loss, {"fc2.weight": dz.T @ a, "fc2.bias": dz.sum(0), "fc1.weight": dh.T @ x, "fc1.bias": dh.sum(0)}


def numpy_update(name, W, G, state, t, lr):
    out = {}
    for k in W:
        w, g, s = W[k], G[k], state.setdefault(k, {})
        if name == "sgd":
            out[k] = w - lr * g
        elif name == "momentum":                                 # PyTorch's rule: buffer = g at first
            s["b"] = g if t == 1 else 0.9 * s["b"] + (1 - 0.1) * g
            out[k] = w - lr * s["b"]
        elif name == "rmsprop":
            s["v"] = 0.99 * s.get("v", 0) + 0.01 * g * g
            out[k] = w - lr * g / (np.sqrt(s["v"]) + 1e-8)
        else:
            s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
            s["v"] = 0.999 * s.get("v", 0) + 0.001 * g * g
            m_hat, v_hat = s["m"] / (1 - 0.9 ** t), s["v"] / (1 - 0.999 ** t)
            out[k] = w - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
    return out


@pytest.mark.parametrize("device,name", [("python", "sgd"), ("cpu", "sgd"), ("cpu", "momentum"),
                                         ("cpu", "rmsprop"), ("cpu", "adam")])
def test_loss_and_two_optimizer_steps_match_numpy(device, name):
    rng = np.random.default_rng(3)
    tg.seed(0)
    model = MnistNet(device=device).double()
    x = rng.random((3, 784))
    onehot = np.eye(10)[rng.integers(0, 10, 3)]
    W = {k: v.numpy().astype(np.float64) for k, v in model.state_dict().items()}
    lr = 0.05
    opt = make_optimizer(name, model.parameters(), lr)
    state = {}
    for t in (1, 2):
        loss = thesis_loss(model(tg.tensor(x.tolist(), device=device, dtype=tg.float64)),
                           tg.tensor(onehot.tolist(), device=device, dtype=tg.float64))
        expected_loss, G = numpy_step_gradients(W, x, onehot)
        assert loss.item() == pytest.approx(expected_loss, rel=1e-12)
        opt.zero_grad()
        loss.backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(p.grad.numpy(), G[k], rtol=1e-9, atol=1e-12, err_msg=f"grad of {k}")
        opt.step()
        W = numpy_update(name, W, G, state, t, lr)
        for k, p in model.named_parameters():
            np.testing.assert_allclose(p.detach().numpy(), W[k], rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name} step {t}: {k}")


def test_thesis_loss_is_squared_error_summed_and_divided_by_batch():
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    onehot = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    # by hand: (0.09 + 0.04 + 0.01 + 0.01 + 0.81 + 0.64) / 2 = 0.8
    loss = thesis_loss(tg.tensor(probs.tolist(), dtype=tg.float64), tg.tensor(onehot.tolist(), dtype=tg.float64))
    assert loss.item() == pytest.approx(0.8, abs=1e-12)


# ---- training on the real data -----------------------------------------------------------
@pytest.fixture(scope="module")
def mnist():
    try:
        return {split: data.load(split, download=False) for split in ("train", "test")}
    except FileNotFoundError as e:
        pytest.skip(f"MNIST is not in $TRACEGRAD_DATA or ~/.cache/tracegrad (tests never download): {e}")


@pytest.fixture(scope="module")
def trained(mnist):
    config = Config(optim="adam", steps=400, subset=6000, seed=1)
    return train(config, mnist, progress=False), config


SHORT_RUN_FLOOR = 0.85       # 400 Adam steps on 6,000 images reach 0.906-0.915 on seeds 1-6


def test_a_compiled_run_takes_eagers_steps(mnist):
    """Config.compile (the default) trains through tg.compile: eager's losses and weights."""
    config = Config(optim="momentum", steps=12, subset=640, seed=2)
    compiled = train(config, mnist, progress=False, test_limit=100)
    eager = train(replace(config, compile=False), mnist, progress=False, test_limit=100)
    assert compiled.losses == eager.losses and compiled.accuracy == eager.accuracy
    for p, q in zip(compiled.model.parameters(), eager.model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_real_files_load_with_the_published_first_labels(mnist):
    (train_x, train_y), (test_x, test_y) = mnist["train"], mnist["test"]
    assert train_x.shape == (60000, 28, 28) and test_x.shape == (10000, 28, 28)
    assert list(train_y[:10]) == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert list(test_y[:10]) == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]


def test_short_training_run_learns(trained):
    result, config = trained
    assert len(result.losses) == config.steps and all(np.isfinite(result.losses))
    assert np.mean(result.losses[-50:]) < 0.5 * np.mean(result.losses[:50])
    assert result.accuracy >= SHORT_RUN_FLOOR, f"test accuracy {result.accuracy:.4f} after {config.steps} steps"


def test_checkpoint_round_trip_is_bit_exact(trained, mnist, tmp_path):
    result, config = trained
    from stage4_models.mnist.training import save_checkpoint
    save_checkpoint(result.model, config, tmp_path / "ck.tg")
    model, saved_config = load_checkpoint(tmp_path / "ck.tg")
    assert saved_config["optim"] == "adam" and saved_config["steps"] == 400
    for (k, a), (_, b) in zip(result.model.state_dict().items(), model.state_dict().items()):
        assert a.numpy().tobytes() == b.numpy().tobytes(), k
    images, labels = mnist["test"]
    assert evaluate(model, images[:500], labels[:500]) == evaluate(result.model, images[:500], labels[:500])
    (tmp_path / "bad.tg").write_bytes(b"")
    tg.save({"weights": tg.zeros(2)}, tmp_path / "other.tg")
    with pytest.raises(ValueError, match="not an MNIST checkpoint"):
        load_checkpoint(tmp_path / "other.tg")


def good_checkpoint():
    from stage4_models.mnist.training import CHECKPOINT_KIND
    return {"kind": CHECKPOINT_KIND, "config": {"optim": "adam", "steps": 5},
            "model": MnistNet().state_dict()}


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


BAD_CHECKPOINTS = {   # name: (what the file holds, given a good checkpoint; the error)
    "a list": (lambda good: [good], "not an MNIST checkpoint"),
    "no weights": (lambda good: {**good, "model": None}, r"'model' is a NoneType \(None\), expected dict"),
    "no config": (lambda good: without(good, "config"), "'config' is missing"),
    "weights not tensors": (lambda good: {**good, "model": {"fc1.weight": [1.0]}},
                            "'model' is not a state dict"),
    "config of the wrong types": (lambda good: {**good, "config": {"optim": 3, "steps": "5"}},
                                  r"config's optim is an int \(3\), expected str; steps is a str"),
    "config out of range": (lambda good: {**good, "config": {"optim": "lbfgs"}}, "unknown optimizer 'lbfgs'"),
    "a misshapen weight": (lambda good: {**good, "model": {**good["model"], "fc2.bias": tg.zeros(3)}},
                           r"size mismatch for fc2.bias: .*\(3,\)"),
}


@pytest.mark.parametrize("case", BAD_CHECKPOINTS)
def test_wrong_checkpoint_contents_are_value_errors_naming_the_file(case, tmp_path):
    content, message = BAD_CHECKPOINTS[case]
    path = tmp_path / "ck.tg"
    tg.save(content(good_checkpoint()), path)
    with pytest.raises(ValueError, match=message) as err:
        load_checkpoint(path)
    assert str(path) in str(err.value)


def test_damaged_checkpoint_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "cut.tg"
    tg.save(good_checkpoint(), path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ValueError, match="cut.tg is not a valid tracegrad file"):
        load_checkpoint(path)
    assert cli.main(["evaluate", "--checkpoint", str(path)]) == 2
    assert "error: load: " in capsys.readouterr().err


def test_predict_a_resized_inverted_test_digit(trained, mnist, tmp_path, capsys):
    import matplotlib.image as mpimg
    result, config = trained
    images, labels = mnist["test"]
    pick = next(i for i in range(100)
                if np.argmax(predict.predict(result.model, images[i] / 255.0)) == labels[i])
    # the digit as a reader would draw it: dark on white paper, 3x larger, in a wider frame
    big = np.kron(255 - images[pick], np.ones((3, 3))).astype(np.uint8)
    paper = np.full((100, 120), 255, np.uint8)
    paper[8:92, 20:104] = big
    png = tmp_path / "digit.png"
    mpimg.imsave(png, paper, cmap="gray", vmin=0, vmax=255)
    grey = predict.read_image(png)
    assert grey.shape == (100, 120) and 0 <= grey.min() and grey.max() <= 1
    assert predict.to_mnist(grey).shape == (28, 28)
    from stage4_models.mnist.training import save_checkpoint
    save_checkpoint(result.model, config, tmp_path / "ck.tg")
    assert cli.main(["predict", "--checkpoint", str(tmp_path / "ck.tg"), str(png)]) == 0
    out = capsys.readouterr().out
    assert f"digit {labels[pick]}" in out, out
    probabilities = [float(part.split(": ")[1]) for part in out.split("probabilities: ")[1].split("  ")]
    assert len(probabilities) == 10 and sum(probabilities) == pytest.approx(1, abs=0.01)


def test_area_resize_keeps_the_mean_and_an_mnist_image_passes_through():
    image = np.random.default_rng(0).random((37, 53))
    small = predict.area_resize(image, 10, 7)
    assert small.shape == (10, 7) and small.mean() == pytest.approx(image.mean(), rel=1e-9)
    np.testing.assert_allclose(predict.area_resize(image, 37, 53), image, atol=1e-12)
    digit = np.zeros((28, 28))
    digit[5:20, 12:15] = 1.0
    np.testing.assert_array_equal(predict.to_mnist(digit), digit)


def test_unreadable_image_is_a_clear_error(tmp_path):
    path = tmp_path / "x.png"
    path.write_bytes(b"not a png")
    with pytest.raises(ValueError, match="x.png: cannot read an image"):
        predict.read_image(path)


def test_cli_train_then_evaluate(mnist, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", "--optim", "momentum", "--steps", "150", "--subset", "2000",
                     "--test-limit", "1000", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "momentum: 150 steps of 32 on cpu" in line and "examples/s" in line and "test accuracy" in line
    rows = (out / "loss.csv").read_text().splitlines()
    assert rows[0] == "step,loss" and len(rows) == 151
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 150 and summary["thesis_accuracy"] == 0.9778 and 0 < summary["accuracy"] <= 1
    assert cli.main(["evaluate", "--checkpoint", str(out / "checkpoint.tg")]) == 0
    assert "test accuracy" in capsys.readouterr().out


def test_cli_rejects_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--optim", "lbfgs"])
    assert "invalid choice: 'lbfgs'" in capsys.readouterr().err
    assert cli.main(["evaluate", "--checkpoint", str(tmp_path / "missing.tg")]) == 2
    assert "missing.tg" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        train(Config(device="tpu", steps=1), {"train": (np.zeros((1, 28, 28), np.uint8), np.zeros(1, np.uint8))})


# ---- the convolutional network (cnn.py) ----------------------------------------------------
CNN_SHORT_RUN_FLOOR = 0.4    # 10 Adadelta steps of 64 on 640 images: well above chance (0.1)


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_cli_train_cnn_then_evaluate_and_predict(mnist, tmp_path, capsys):
    import matplotlib.image as mpimg
    from stage4_models.mnist.cnn import MnistCNN, load_cnn_checkpoint, predict_cnn
    out = tmp_path / "cnn"
    assert cli.main(["train-cnn", "--subset", "640", "--test-limit", "400", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "cnn: 1 epoch(s), 10 steps of 64 on cpu" in line and "test accuracy" in line
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 10 and summary["accuracy"] >= CNN_SHORT_RUN_FLOOR, summary
    rows = (out / "loss.csv").read_text().splitlines()
    assert rows[0] == "step,loss" and len(rows) == 11
    assert float(rows[-1].split(",")[1]) < float(rows[1].split(",")[1])       # the loss fell
    # the checkpoint loads back bit-exact, in eval mode, and the CLI's evaluate reads it
    model, config = load_cnn_checkpoint(out / "checkpoint.tg")
    assert isinstance(model, MnistCNN) and not model.training and config["batch"] == 64
    assert cli.main(["evaluate", "--checkpoint", str(out / "checkpoint.tg"), "--test-limit", "200"]) == 0
    assert "(cnn, 1 epoch(s)): test accuracy" in capsys.readouterr().out
    images, labels = mnist["test"]
    pick = next(i for i in range(200) if np.argmax(predict_cnn(model, images[i] / 255.0)) == labels[i])
    png = tmp_path / "digit.png"
    mpimg.imsave(png, images[pick], cmap="gray", vmin=0, vmax=255)
    assert cli.main(["predict", "--checkpoint", str(out / "checkpoint.tg"), str(png)]) == 0
    assert f"digit {labels[pick]}" in capsys.readouterr().out
    # a file of neither kind is one error line naming both programs
    tg.save({"kind": "something else"}, tmp_path / "other.tg")
    assert cli.main(["evaluate", "--checkpoint", str(tmp_path / "other.tg")]) == 2
    assert "neither an MNIST nor an MNIST CNN checkpoint" in capsys.readouterr().err


def test_cnn_training_steps_match_pytorchs_example_where_installed():
    """MnistCNN and its Adadelta steps are PyTorch's example's: fresh layers start with
    PyTorch's bounds 1/sqrt(fan_in), and from the same weights, on the same batch (eval mode:
    no dropout), the losses and the updated weights agree over three steps. Both run in
    float64: in float32 a ReLU whose input lies within rounding of zero (this batch has one
    in conv2) takes either side in either engine, moving that gradient by its whole upstream
    value; float64's rounding (~1e-16) flips none, so the agreement left is the arithmetic's."""
    torch = pytest.importorskip("torch")
    import stage2_tensor.nn.functional as F
    import stage2_tensor.optim as optim
    from stage4_models.mnist.cnn import MnistCNN
    tg.manual_seed(0)
    ours = MnistCNN(device="cpu")
    for name, fan_in in (("conv1", 9), ("conv2", 32 * 9), ("fc1", 9216), ("fc2", 128)):
        for p in (getattr(ours, name).weight, getattr(ours, name).bias):
            top = np.abs(p.detach().numpy()).max()
            assert 0.9 / fan_in ** 0.5 < top <= 1 / fan_in ** 0.5, (name, top)
    ours.double()
    tn = torch.nn
    ref = tn.ModuleDict(dict(conv1=tn.Conv2d(1, 32, 3), conv2=tn.Conv2d(32, 64, 3),
                             fc1=tn.Linear(9216, 128), fc2=tn.Linear(128, 10))).double()
    with torch.no_grad():
        for name, module in ref.items():
            module.weight.copy_(torch.from_numpy(getattr(ours, name).weight.detach().numpy()))
            module.bias.copy_(torch.from_numpy(getattr(ours, name).bias.detach().numpy()))

    def reference(x):
        tF = torch.nn.functional
        x = tF.max_pool2d(tF.relu(ref["conv2"](tF.relu(ref["conv1"](x)))), 2)
        return tF.log_softmax(ref["fc2"](tF.relu(ref["fc1"](torch.flatten(x, 1)))), dim=1)

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 1, 28, 28)), rng.integers(0, 10, 8)
    ours.eval()
    opt, ref_opt = optim.Adadelta(ours.parameters(), lr=1.0), torch.optim.Adadelta(ref.parameters(), lr=1.0)
    for _ in range(3):
        loss = F.nll_loss(ours(tg.from_numpy(x, device="cpu")), tg.from_numpy(y, device="cpu"))
        opt.zero_grad()
        loss.backward()
        opt.step()
        ref_loss = torch.nn.functional.nll_loss(reference(torch.from_numpy(x)), torch.from_numpy(y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
        assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-12)
        for name, module in ref.items():
            np.testing.assert_allclose(getattr(ours, name).weight.detach().numpy(), module.weight.detach().numpy(),
                                       rtol=0, atol=1e-10, err_msg=name)
