"""save/load: bit-exact round trips, state dicts, atomic writes, damaged files."""
import io
import json
import math
import os
import struct
import subprocess
import sys
import zlib

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


# Crafted files: the checksum is right (anyone can compute it), a field lies. Each must be
# refused before anything is allocated, naming the file and the field.

def crafted(path, header, payload=b""):
    """Write a tracegrad file with this header and tensor bytes, and a valid checksum."""
    head = json.dumps(header).encode()
    crc = zlib.crc32(payload, zlib.crc32(head))
    path.write_bytes(serialization.MAGIC + struct.pack("<Q", len(head)) + head + payload
                     + struct.pack("<I", crc))
    return path


def one_tensor(**record):
    """A header of one float32 tensor of shape [2] on "python", with `record`'s fields."""
    spec = {"dtype": "float32", "shape": [2], "device": "python", "requires_grad": False,
            "nbytes": 8, **record}
    return {"version": 1, "byteorder": sys.byteorder, "object": {"tensor": 0}, "tensors": [spec]}


def test_a_valid_crafted_file_loads(tmp_path):
    """The crafting itself is right: the cases below fail for their one lie only."""
    path = crafted(tmp_path / "ok.tg", one_tensor(), struct.pack("=2f", 1.5, -2.0))
    assert load(path).tolist() == [1.5, -2.0]


def with_header(**fields):
    return {**one_tensor(), **fields}


LIES = {   # name: (header, payload bytes, what the error says)
    "fewer bytes than the shape": (one_tensor(shape=[64], nbytes=8), 8,
                                   r"tensor 0's nbytes is 8, expected 256 \(shape \[64\], float32\)"),
    "more bytes than the shape": (one_tensor(nbytes=16), 16, r"tensor 0's nbytes is 16, expected 8"),
    "negative nbytes": (one_tensor(shape=[0], nbytes=-8), 0, r"tensor 0's nbytes is -8, expected 0"),
    "nbytes a float": (one_tensor(nbytes=8.0), 8, r"tensor 0's nbytes is 8.0"),
    "newer version": (with_header(version=99), 8, r"format version is 99, expected 1"),
    "version true": (with_header(version=True), 8, r"format version is True"),
    "unknown byteorder": (with_header(byteorder="middle"), 8, r"byteorder is 'middle'"),
    "unknown dtype": (one_tensor(dtype="complex64"), 8, r"tensor 0's dtype is 'complex64'"),
    "negative size": (one_tensor(shape=[-2], nbytes=-8), 0, r"tensor 0's shape is \[-2\]"),
    "bool size": (one_tensor(shape=[True, 2]), 8, r"tensor 0's shape is \[True, 2\]"),
    "shape not a list": (one_tensor(shape=2), 8, r"tensor 0's shape is 2"),
    "huge shape of no elements": (one_tensor(shape=[0, 2 ** 63], nbytes=0), 0,
                                  r"tensor 0's shape \[0, 9223372036854775808\] is too large"),
    "device not a string": (one_tensor(device=["cpu"]), 8, r"tensor 0's device is \['cpu'\]"),
    "unknown device": (one_tensor(device="gpu"), 8, r"tensor 0's device: unknown device 'gpu'"),
    "requires_grad a string": (one_tensor(requires_grad="yes"), 8, r"requires_grad is 'yes'"),
    "integer requiring grad": (one_tensor(dtype="int32", requires_grad=True), 8,
                               r"tensor 0 is int32 with requires_grad true"),
    "record missing a field": ({**one_tensor(), "tensors": [{"dtype": "float32"}]}, 8,
                               r"tensor 0's record is \{'dtype': 'float32'\}"),
    "tensors not a list": (with_header(tensors={"0": 1}), 0, r"list of tensors is \{'0': 1\}"),
    "header not an object": (["a", "list"], 0, r"its header is \['a', 'list'\]"),
    "tensor index out of range": (with_header(object={"tensor": 1}), 8,
                                  r"refers to tensor 1, expected an index \(0 to 0\)"),
    "tensor index a bool": (with_header(object={"tensor": False}), 8, r"refers to tensor False"),
    "tensor index a string": (with_header(object={"tensor": "0"}), 8, r"refers to tensor '0'"),
    "dict entry not a pair": (with_header(object={"dict": [["a", 1, 2]]}), 8,
                              r"dict entry \['a', 1, 2\], expected a \[key, value\] pair"),
    "dict key a list": (with_header(object={"dict": [[{"list": []}, 1]]}), 8,
                        r"dict key of type list"),
    "unknown node kind": (with_header(object={"set": [1]}), 8, r"its object holds \{'set': \[1\]\}"),
    "bare JSON list": (with_header(object=[1, 2]), 8, r"its object holds \[1, 2\]"),
    "list of a number": (with_header(object={"list": 3}), 8, r'a "list" of 3, expected a list'),
    "nested too deep": (with_header(object=json.loads('{"list": [' * 200 + "]}" * 200)), 8,
                        r"nested more than \d+ levels deep"),
}


@pytest.mark.parametrize("case", list(LIES))
def test_crafted_files_are_refused_naming_the_file_and_the_field(case, tmp_path):
    header, nbytes, message = LIES[case]
    path = crafted(tmp_path / "ckpt.tg", header, bytes(nbytes))
    with pytest.raises(RuntimeError, match=message) as err:
        load(path)
    assert str(err.value).startswith(f"load: {path} is not a valid tracegrad file: ")


def test_a_bool_byte_other_than_0_or_1_is_refused(tmp_path):
    """save writes a bool as one byte, 0 or 1: a crafted 2 or 255 must not load as True."""
    path = crafted(tmp_path / "b.tg", one_tensor(dtype="bool", shape=[3], nbytes=3), bytes([1, 2, 255]))
    with pytest.raises(RuntimeError, match=r"b.tg .*tensor 0 is bool, but its element 1 is the byte 2; expected 0 or 1"):
        load(path)


def test_header_length_beyond_the_file_and_json_nested_too_deep(tmp_path):
    path = tmp_path / "h.tg"
    path.write_bytes(serialization.MAGIC + struct.pack("<Q", 2 ** 40) + b"{}" + bytes(4))
    with pytest.raises(RuntimeError, match=f"{path} .*header length 1099511627776 reaches beyond"):
        load(path)
    head = b"[" * 100_000 + b"]" * 100_000                  # too deep for the JSON parser
    path.write_bytes(serialization.MAGIC + struct.pack("<Q", len(head)) + head
                     + struct.pack("<I", zlib.crc32(head)))
    with pytest.raises(RuntimeError, match=f"{path} .*nested too deeply"):
        load(path)


def test_short_native_tensor_is_refused_instead_of_reading_the_heap(tmp_path):
    """The reproduction on device "cpu": 8 bytes for 64 floats, unchecked, would give a
    tensor whose values are whatever follows its buffer (and a segfault for a larger shape)."""
    pytest.importorskip("stage3_native")
    path = crafted(tmp_path / "heap.tg", one_tensor(shape=[64], nbytes=8, device="cpu"), bytes(8))
    with pytest.raises(RuntimeError, match="tensor 0's nbytes is 8, expected 256"):
        load(path)
    with pytest.raises(RuntimeError, match="nbytes is 8, expected 256"):
        load(path, map_location="cpu")


def test_map_location_must_be_a_known_device_name(tmp_path):
    path = tmp_path / "t.tg"
    save(tg.ones(2), path)
    with pytest.raises(TypeError, match="map_location must be a device name"):
        load(path, map_location=["cpu"])
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        load(path, map_location="gpu")


posix_locks = pytest.mark.skipif(os.name != "posix", reason="temporaries are swept where files can be locked")


@posix_locks
def test_a_save_removes_temporary_files_of_killed_saves_only(tmp_path):
    """A save killed mid-write leaves its .NAME.PID.HEX.tmp; the next save to that path
    removes it. A write in progress holds a lock on its file, so such a file stays (so
    does an empty one of a running process: a writer between creating and locking it),
    and so does every other file. The id in the name is no proof of life: one of a
    running process (an id handed out again) with bytes in an unlocked file is stale."""
    import fcntl
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".w.tg.{dead.pid}.0badcafe.tmp"
    reused = tmp_path / f".w.tg.{os.getpid()}.0badf00d.tmp"         # a live id, nobody writing
    writing = tmp_path / f".w.tg.{os.getpid()}.00c0ffee.tmp"
    created = tmp_path / f".w.tg.{os.getpid()}.0000beef.tmp"
    other = tmp_path / f".v.tg.{dead.pid}.0badcafe.tmp"             # another file's
    for path in (stale, reused, writing, other, tmp_path / "notes.tmp"):
        path.write_bytes(b"half a file")
    created.write_bytes(b"")
    with open(writing, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)                             # as atomic_write does
        save(tg.ones(2), tmp_path / "w.tg")
    assert sorted(os.listdir(tmp_path)) == sorted([writing.name, created.name, other.name, "notes.tmp", "w.tg"])


def test_atomic_write_text_writes_encoded_text_or_leaves_the_file_as_it_was(tmp_path):
    from stage2_tensor.atomic import atomic_write_text
    path = tmp_path / "notes.txt"
    atomic_write_text(path, "café\n")
    assert path.read_bytes() == "café\n".encode("utf-8")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "naïve\n", encoding="ascii")
    assert os.listdir(tmp_path) == ["notes.txt"] and path.read_text(encoding="utf-8") == "café\n"


KILLED_MID_WRITE = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("atomic", sys.argv[1])   # atomic.py alone: quick
atomic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(atomic)

def write(f):
    f.write(b"half a checkpoint")
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
atomic.atomic_write(sys.argv[2], write)
"""


@posix_locks
@pytest.mark.skipif(not hasattr(os, "waitid"), reason="os.waitid: wait for an exit without reaping it")
def test_a_save_killed_by_a_parent_that_has_not_reaped_it_is_swept(tmp_path):
    """The sweep's case: a trainer killed mid-save by the program that started it, which
    has not yet waited for it. The dead process is a zombie whose id still answers
    os.kill(pid, 0), so a check by id kept its temporary file; its lock is gone."""
    from stage2_tensor import atomic
    target = tmp_path / "checkpoint.tg"
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, atomic.__file__, str(target)],
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"writing\n"
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)      # dead, not reaped: a zombie
        [left] = [p.name for p in tmp_path.iterdir()]
        assert left.startswith(f".checkpoint.tg.{child.pid}.") and left.endswith(".tmp")
        save(tg.ones(2), target)
        assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.tg"]
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


# ---- numpy arrays, Parameters, whole models -----------------------------------------------------
def test_numpy_arrays_round_trip(tmp_path):
    arrays = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "i64": np.array([-1, 2 ** 62]),
              "bool": np.array([True, False]), "strided": np.arange(10.0)[::3], "scalar": np.array(2.5),
              "f16": np.array([1.5, -0.0], dtype=np.float16)}
    save(arrays, tmp_path / "a.tg")
    back = load(tmp_path / "a.tg")
    for name, a in arrays.items():
        assert isinstance(back[name], np.ndarray) and back[name].dtype == a.dtype
        np.testing.assert_array_equal(back[name], a)
    with pytest.raises(TypeError, match="numpy dtype complex128 is not supported"):
        save(np.zeros(2, dtype=np.complex128), tmp_path / "c.tg")


def test_a_parameter_and_a_tensor_saved_twice_come_back_as_one(tmp_path):
    p = nn.Parameter(tg.ones(2))
    t = tg.zeros(3)
    save({"p": p, "again": [p, t, t]}, tmp_path / "p.tg")
    back = load(tmp_path / "p.tg")
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert back["again"][0] is back["p"] and back["again"][1] is back["again"][2]
    assert len(json.loads(_header(tmp_path / "p.tg"))["tensors"]) == 2


def _header(path):
    data = path.read_bytes()
    start = len(serialization.MAGIC) + 8
    length, = struct.unpack("<Q", data[len(serialization.MAGIC):start])
    return data[start:start + length]


class Net(nn.Module):                                   # a user's model, of a class of its own
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.body(x))


def test_a_model_of_tracegrads_classes_loads_whole(tmp_path):
    tg.manual_seed(0)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, activation="gelu"), 2)
    model.eval()
    save(model, tmp_path / "m.tg")
    back = load(tmp_path / "m.tg")
    assert type(back) is nn.TransformerEncoder and back.training is False
    assert back.layers[0].activation is nn.functional.gelu and back.layers[0].training is False
    x = tg.randn(3, 2, 8)
    assert back(x).tolist() == model(x).tolist()
    assert [n for n, _ in back.named_parameters()] == [n for n, _ in model.named_parameters()]
    assert all(isinstance(p, nn.Parameter) for p in back.parameters())
    tied = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 5, bias=False))
    tied[1].weight = tied[0].weight
    save(tied, tmp_path / "tied.tg")
    loaded = load(tmp_path / "tied.tg")
    assert loaded[1].weight is loaded[0].weight                       # still one parameter
    opt = tg.optim.SGD(loaded.parameters(), lr=0.1)                   # and trainable
    loaded(tg.tensor([1, 2])).sum().backward()
    opt.step()
    assert loaded[1].weight.tolist() != tied[1].weight.tolist()


def test_a_model_of_the_users_class_needs_weights_only_false_or_allowing(tmp_path):
    tg.manual_seed(0)
    model = Net()
    save({"model": model, "step": 3}, tmp_path / "net.tg")
    with pytest.raises(RuntimeError, match=r"class tests.test_stage2_serialization.Net, which is not "
                                           r"tracegrad's own.*weights_only=False.*add_safe_globals\(\[Net\]\)"):
        load(tmp_path / "net.tg")
    x = tg.randn(2, 3)
    trusted = load(tmp_path / "net.tg", weights_only=False)["model"]
    assert type(trusted) is Net and trusted(x).tolist() == model(x).tolist()
    serialization.add_safe_globals([Net])
    try:
        assert type(load(tmp_path / "net.tg")["model"]) is Net
    finally:
        serialization.clear_safe_globals()
    with serialization.safe_globals([Net, tg.nn.modules.linear.Linear]):     # for the block only
        assert type(load(tmp_path / "net.tg")["model"]) is Net
    with pytest.raises(RuntimeError, match="not tracegrad's own"):
        load(tmp_path / "net.tg")
    with pytest.raises(TypeError, match="defined inside a function or as a lambda"):
        save(nn.TransformerEncoderLayer(4, 2, activation=lambda t: t), tmp_path / "l.tg")


def test_a_model_of_a_scripts_own_class_loads_back(tmp_path, monkeypatch):
    """A class defined in the script run (module __main__), as PyTorch's examples define
    theirs: allowed by safe_globals, or with weights_only=False."""
    import sys
    script = type("ScriptNet", (Net,), {"__module__": "__main__"})
    monkeypatch.setattr(sys.modules["__main__"], "ScriptNet", script, raising=False)
    model = script()
    save(model, tmp_path / "script.tg")
    with pytest.raises(RuntimeError, match="class __main__.ScriptNet, which is not tracegrad's own"):
        load(tmp_path / "script.tg")
    with serialization.safe_globals([script]):
        back = load(tmp_path / "script.tg")
    x = tg.randn(2, 3)
    assert type(back) is script and back(x).tolist() == model(x).tolist()
    assert type(load(tmp_path / "script.tg", weights_only=False)) is script


@pytest.mark.parametrize("node, message", [
    ({"function": "os:system"}, r"holds a model of the function os.system, which is not tracegrad's own"),
    ({"module": ["builtins:dict", {"dict": []}]}, r"class builtins.dict, which is not tracegrad's own"),
    ({"module": ["stage2_tensor.nn.modules:Module.__subclasses__", {"dict": []}]}, r"expected 'module:name'"),
    ({"module": ["stage2_tensor.nn.functional:relu", {"dict": []}]}, r"which is not an nn.Module class here"),
    ({"function": "stage2_tensor.nn.layers:Linear"}, r"which is not a function here"),
    ({"module": ["stage2_tensor.nn.layers:ReLU", {"dict": [[1, 2]]}]}, r"attribute names that are not strings"),
    ({"ref": 0}, r"refers to module 0, expected an index \(none: the file has no modules\)"),
    ({"dtype": "float128"}, r"names the dtype 'float128'"),
])
def test_crafted_models_are_refused_without_running_anything(node, message, tmp_path):
    path = crafted(tmp_path / "evil.tg", {**one_tensor(), "object": {"list": [{"tensor": 0}, node]}}, bytes(8))
    with pytest.raises(RuntimeError, match=message):
        load(path)


def test_even_trusted_a_file_makes_only_modules_and_functions(tmp_path):
    for node, message in [({"module": ["builtins:dict", {"dict": []}]}, "not an nn.Module class here"),
                          ({"function": "os:system"}, "not a function here"),
                          ({"function": "no_such_module_here:f"}, "cannot be imported here")]:
        path = crafted(tmp_path / "t.tg", {**one_tensor(), "object": node}, bytes(8))
        with pytest.raises(RuntimeError, match=message):
            load(path, weights_only=False)
