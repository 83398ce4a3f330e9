"""save/load: bit-exact round trips, state dicts, atomic writes, damaged files."""
import io
import math
import os

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
from stage2_tensor import serialization
from stage2_tensor.serialization import load, save

pytestmark = pytest.mark.stage2

VALUES = {
    tg.float32: [[0.1, -0.0, math.inf], [-math.inf, 1e-45, 3.4e38]],   # 1e-45: a subnormal
    tg.float64: [[0.1, -0.0, math.inf], [5e-324, 1 / 3, -1.7976931348623157e308]],
    tg.int64: [[0, -1, 2 ** 63 - 1], [-2 ** 63, 7, 42]],
    tg.int32: [[0, -1, 2 ** 31 - 1], [-2 ** 31, 7, 42]],
    tg.bool: [[True, False, True], [False, False, True]],
}


def raw(t):
    """The exact bytes of t's elements (row-major), via numpy."""
    return np.array(t.tolist(), dtype=t.dtype.name).tobytes()


@pytest.mark.parametrize("dtype", list(VALUES), ids=lambda d: d.name)
def test_round_trip_is_bit_exact_for_every_dtype(dtype, tmp_path):
    t = tg.tensor(VALUES[dtype], dtype=dtype)
    views = {"whole": t, "transposed": t.T, "strided": t[:, ::2], "row": t[1],
             "broadcast": t[0].expand(4, 3), "scalar": t[1, 2], "empty": t[:0]}
    save(views, tmp_path / "t.tg")
    back = load(tmp_path / "t.tg")
    assert list(back) == list(views)
    for name, view in views.items():
        got = back[name]
        assert (got.shape, got.dtype, got.device) == (view.shape, view.dtype, view.device), name
        assert raw(got) == raw(view), name
        assert got.is_contiguous() and not got.requires_grad


def test_nan_and_requires_grad_survive(tmp_path):
    t = tg.tensor([math.nan, 1.5], dtype=tg.float64, requires_grad=True)
    save(t, tmp_path / "t.tg")
    back = load(tmp_path / "t.tg", map_location="python")
    assert math.isnan(back.tolist()[0]) and back.tolist()[1] == 1.5
    assert back.requires_grad and back.is_leaf


def test_state_dict_and_nested_objects_round_trip(tmp_path):
    tg.seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    checkpoint = {"model": model.state_dict(), "step": 12, "lr": 0.1, "name": "mlp",
                  "history": [0.5, 0.25], "shape": (3, 4), "note": None, 7: tg.arange(3)}
    path = tmp_path / "ckpt.tg"
    save(checkpoint, path)
    back = load(path)
    assert {k: v for k, v in back.items() if k not in ("model", 7)} == \
        {k: v for k, v in checkpoint.items() if k not in ("model", 7)}
    assert back[7].tolist() == [0, 1, 2] and isinstance(back["shape"], tuple)
    tg.seed(1)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    fresh.load_state_dict(back["model"])
    x = tg.randn(5, 3)
    assert fresh(x).tolist() == model(x).tolist()


def test_file_objects_and_unsupported_types():
    buffer = io.BytesIO()
    save({"w": tg.ones(2)}, buffer)
    buffer.seek(0)
    assert load(buffer)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot save an object of type set"):
        save({1, 2}, io.BytesIO())


def test_a_failing_write_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "model.tg"
    save({"a": tg.ones(3), "b": tg.zeros(2)}, path)
    before = path.read_bytes()
    calls = []

    def fail_on_second_tensor(t):
        calls.append(t)
        if len(calls) == 2:
            raise OSError("disk full")              # half the new file is written by now
        return real(t)

    real = serialization._tensor_bytes
    monkeypatch.setattr(serialization, "_tensor_bytes", fail_on_second_tensor)
    with pytest.raises(OSError, match="disk full"):
        save({"a": tg.full((3,), 5.0), "b": tg.full((2,), 5.0)}, path)
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert load(path)["a"].tolist() == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == ["model.tg"]      # the temporary file is gone


def test_damaged_files_raise_errors_naming_the_file(tmp_path):
    path = tmp_path / "w.tg"
    save({"w": tg.arange(10, dtype=tg.float64)}, path)
    data = path.read_bytes()
    cases = {
        "truncated": data[:-9],
        "flipped": data[:-12] + bytes([data[-12] ^ 1]) + data[-11:],
        "header": data[:20] + b"#" + data[21:],
        "foreign": b"PK\x03\x04 not ours",
        "empty": b"",
    }
    for name, content in cases.items():
        bad = tmp_path / f"{name}.tg"
        bad.write_bytes(content)
        with pytest.raises(RuntimeError, match="is not a valid tracegrad file") as err:
            load(bad)
        assert str(bad) in str(err.value), name
    path.write_bytes(data[:-9])
    with pytest.raises(RuntimeError, match="truncated"):
        load(path)
