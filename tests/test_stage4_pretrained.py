"""stage4's safetensors reader and writer (stage4_models/gpt/safetensors.py) and
GPT.from_pretrained (stage4_models/gpt/pretrained.py): round trips bit for bit, files
written byte by byte here (struct, not the writer), every corruption's error, and a tiny
GPT-2 checkpoint in Hugging Face's exact layout loaded on devices "python" and "cpu" and
compared with a numpy GPT-2 that reads the Conv1D weights as they are stored."""
import json
import math
import os
import re
import struct

import numpy as np
import pytest

import stage2_tensor as tg
from stage4_models.gpt import GPT
from stage4_models.gpt import safetensors as st

from .engines import device_params

pytestmark = pytest.mark.stage4

DEVICES = device_params("python", "cpu")


# ---- a safetensors writer by hand: struct, one value at a time ----------------------------
PACK = {"F64": "d", "F32": "f", "F16": "e", "I64": "q", "I32": "i", "BOOL": "?"}


def pack(dtype, values):
    """Little-endian bytes of values in a safetensors dtype; BF16 is a float32's upper half
    (the values must be exact in bfloat16)."""
    if dtype == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return b"".join(struct.pack("<" + PACK[dtype], v) for v in values)


def hand_file(path, header, data, length=None):
    """8-byte length, the header as JSON, the data; length overrides the true length."""
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


def bits(a):
    """An array's bit patterns, so -0.0 differs from 0.0 and NaN equals itself."""
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


# ---- round trips ------------------------------------------------------------------------------
def special_values(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, info.max, info.tiny,
                     info.tiny / 4, 1 / 3], dtype=dtype)              # tiny / 4: subnormal


ARRAYS = {
    "f64": special_values(np.float64).reshape(1, 11),
    "f32": special_values(np.float32),
    "f16": special_values(np.float16),
    "i64": np.array([[0, -1], [2**63 - 1, -2**63]], dtype=np.int64),
    "i32": np.array([7, -2**31, 2**31 - 1], dtype=np.int32),
    "bool": np.array([True, False, True]),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float64),
}


def test_round_trip_is_bit_exact_for_each_dtype(tmp_path):
    path = tmp_path / "all.safetensors"
    st.save(ARRAYS, path, metadata={"format": "np", "note": "round trip"})
    back = st.read_numpy(path)
    assert list(back) == list(ARRAYS)                       # the caller's order comes back
    for name, a in ARRAYS.items():
        b = back[name]
        assert b.shape == a.shape, name
        if a.dtype == np.float16:                           # read as float32, every value exact
            assert b.dtype == np.float32
            b = b.astype(np.float16)
        assert b.dtype == a.dtype, name
        np.testing.assert_array_equal(bits(b), bits(a), err_msg=name)
    tensors, metadata, data_start = st.read_header(path)
    assert metadata == {"format": "np", "note": "round trip"}
    assert data_start % 8 == 0                              # header padded like the reference
    for name, (dtype, shape, begin, end) in tensors.items():
        assert begin % ARRAYS[name].dtype.itemsize == 0, name      # each tensor aligned
    assert not [f for f in os.listdir(tmp_path) if f != "all.safetensors"]   # no temp file left


@pytest.mark.parametrize("device", DEVICES)
def test_save_and_load_stage2_tensors(tmp_path, device):
    rng = np.random.default_rng(0)
    tensors = {"w": tg.from_numpy(rng.normal(size=(3, 4)).astype(np.float32), device=device),
               "d": tg.from_numpy(rng.normal(size=(5,)), device=device),
               "n": tg.tensor([[1, -2, 3]], device=device)}
    tensors["t"] = tensors["w"].T                          # a non-contiguous view
    st.save(tensors, tmp_path / "t.safetensors")
    loaded = st.load(tmp_path / "t.safetensors", device=device)
    for name, t in tensors.items():
        assert loaded[name].device == device and loaded[name].dtype is t.dtype, name
        np.testing.assert_array_equal(loaded[name].numpy(), t.numpy(), err_msg=name)


def test_reads_a_file_written_by_hand(tmp_path):
    values = {"f32": ("F32", [2, 2], [1.0, -2.5, 3.25, 1e-30]),
              "f64": ("F64", [3], [math.pi, -0.0, 1e300]),
              "f16": ("F16", [2], [0.0999755859375, -65504.0]),       # exact in float16
              "bf16": ("BF16", [3], [1.5, -2.0 ** -100, 3.0 * 2.0 ** 100]),   # exact in bfloat16
              "i64": ("I64", [2], [-(2 ** 40), 12345]),
              "i32": ("I32", [1, 1], [-7]),
              "bool": ("BOOL", [2], [True, False]),
              "scalar": ("F32", [], [0.5]),
              "empty": ("F64", [0, 2], [])}
    offsets, data = {}, b""
    for name in reversed(values):          # the data in the header's reverse order: the
        raw = pack(values[name][0], values[name][2])      # offsets, not the order, say where
        offsets[name] = [len(data), len(data) + len(raw)]
        data += raw
    header = {"__metadata__": {"source": "hand"}}
    header.update({name: {"dtype": dtype, "shape": shape, "data_offsets": offsets[name]}
                   for name, (dtype, shape, _) in values.items()})
    path = hand_file(tmp_path / "hand.safetensors", header, data)
    arrays = st.read_numpy(path)
    assert list(arrays) == list(values)
    expected_dtype = {"F32": np.float32, "F64": np.float64, "F16": np.float32, "BF16": np.float32,
                      "I64": np.int64, "I32": np.int32, "BOOL": np.bool_}
    for name, (dtype, shape, v) in values.items():
        a = arrays[name]
        assert a.dtype == expected_dtype[dtype] and a.shape == tuple(shape), name
        np.testing.assert_array_equal(bits(a.reshape(-1)), bits(np.array(v, dtype=a.dtype)), err_msg=name)
    assert st.read_header(path)[1] == {"source": "hand"}
    on_cpu = st.load(path, device="cpu")
    assert on_cpu["bf16"].dtype is tg.float32 and on_cpu["bf16"].tolist()[0] == 1.5


# ---- corrupt files: each check, its error naming the file and the tensor ---------------------
def good_header():
    return {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
            "b": {"dtype": "I64", "shape": [1], "data_offsets": [8, 16]}}


DATA = pack("F32", [1.0, 2.0]) + pack("I64", [3])
EMPTY = b'{"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}'       # an entry with no bytes


def with_entry(name, **changes):
    header = good_header()
    header[name] = dict(header[name], **changes)
    return header


CORRUPTIONS = {
    "header length beyond the file": (dict(header=good_header(), data=DATA, length=10 ** 6),
                                      r"header length 1000000 reaches beyond the file: expected at most"),
    "header not JSON": (dict(header=None, data=b"{not json"), "not UTF-8 JSON"),
    "header not an object": (dict(header=[1, 2], data=b""), "JSON list; expected an object"),
    "unknown dtype": (dict(header=with_entry("a", dtype="Q4"), data=DATA),
                      r"tensor 'a' of .*dtype 'Q4' is not supported; expected one of F64, F32"),
    "bytes not matching the shape": (dict(header=with_entry("a", shape=[3]), data=DATA),
                                     r"tensor 'a' of .*hold 8 bytes; expected 12 for shape \(3,\) of F32"),
    "negative shape": (dict(header=with_entry("a", shape=[-2]), data=DATA), "tensor 'a' of .*shape"),
    "offsets reversed": (dict(header=with_entry("a", data_offsets=[8, 0]), data=DATA),
                         r"tensor 'a' of .*0 <= begin <= end"),
    "offsets beyond the data": (dict(header=with_entry("b", data_offsets=[16, 24]), data=DATA + bytes(4)),
                                r"tensor 'b' of .*reach beyond the data: expected at most 20"),
    "overlapping tensors": (dict(header=with_entry("b", data_offsets=[4, 12]), data=DATA),
                            r"tensor 'b' of .*overlap tensor 'a', which ends at 8"),
    "a gap between tensors": (dict(header=with_entry("b", data_offsets=[12, 20]), data=DATA + bytes(4)),
                              r"tensor 'b' of .*leave bytes 8..12 unused"),
    "bytes after the last tensor": (dict(header=good_header(), data=DATA + bytes(8)),
                                    r"end at data offset 16, but the data part has 24 bytes"),
    "entry without offsets": (dict(header={"a": {"dtype": "F32", "shape": [2]}}, data=DATA[:8]),
                              r"tensor 'a' of .*expected an object with dtype, shape and data_offsets"),
    "metadata not strings": (dict(header=dict(good_header(), __metadata__={"n": 1}), data=DATA),
                             r"__metadata__ is \{'n': 1\}; expected an object of strings to strings"),
    "dtype a list": (dict(header=with_entry("a", dtype=["F32"]), data=DATA),
                     r"tensor 'a' of .*dtype \['F32'\] is not supported"),
    "header nested too deeply": (dict(header=None, data=b"[" * 100_000 + b"]" * 100_000),
                                 "nested too deeply"),
    "more dimensions than numpy has": (dict(header=with_entry("a", shape=[1] * 70 + [2]), data=DATA),
                                       r"tensor 'a' of .*shape \[1, .* is too large"),
    "huge sizes hidden by a zero": (dict(header=dict(with_entry("a", shape=[0, 2 ** 70], data_offsets=[0, 0]),
                                                     b={"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}),
                                         data=DATA[8:]),
                                    r"tensor 'a' of .*shape \[0, 1180591620717411303424\] is too large"),
    # A bool is one byte, 0 or 1: numpy would take bytes 2 and 255 as True, and sum them as 258.
    "a bool byte neither 0 nor 1": (dict(header={"a": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}},
                                         data=bytes([1, 2, 255])),
                                    r"tensor 'a' of .*element 1 is the byte 2; expected 0 \(false\) or 1 \(true\)"),
    "header longer than the reference reads": (dict(header=good_header(), data=DATA, length=10 ** 8 + 1),
                                               r"header length 100000001 is more than 100000000 bytes"),
    # json.loads would keep the second "a" silently (raw JSON text: a dict cannot hold it twice)
    "a name given twice": (dict(header=None, data=b'{"a": ' + EMPTY + b', "b": ' + EMPTY + b', "a": ' + EMPTY + b'}'),
                           r"tensor 'a' of .*the header has two entries of this name; expected one"),
    "a field given twice": (dict(header=None, data=b'{"a": {"dtype": "F32", "shape": [0], "dtype": "I64", '
                                                   b'"data_offsets": [0, 0]}}'),
                            r"tensor 'a' of .*its entry gives 'dtype' more than once"),
    "a metadata key given twice": (dict(header=None, data=b'{"__metadata__": {"k": "1", "k": "2"}}'),
                                   r"__metadata__ gives 'k' more than once"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_corrupt_files_raise_naming_file_and_tensor(tmp_path, case):
    spec, message = CORRUPTIONS[case]
    path = tmp_path / "bad.safetensors"
    if spec["header"] is None:
        path.write_bytes(struct.pack("<Q", len(spec["data"])) + spec["data"])
    else:
        hand_file(path, spec["header"], spec["data"], spec.get("length"))
    with pytest.raises(ValueError, match=message) as err:
        st.read_numpy(path)
    assert str(path) in str(err.value)


def test_file_shorter_than_its_length_field(tmp_path):
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x01\x02\x03")
    with pytest.raises(ValueError, match=r"short.safetensors: the file has 3 bytes; expected at least 8"):
        st.load(path)


def test_save_refuses_bad_input_and_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.safetensors"
    st.save({"a": np.ones(2, np.float32)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=r"'c' has dtype complex128; expected one of float64"):
        st.save({"b": np.ones(2), "c": np.ones(2, complex)}, path)
    with pytest.raises(TypeError, match="'d' is a list; expected a stage2 Tensor or a numpy array"):
        st.save({"d": [1.0]}, path)
    with pytest.raises(ValueError, match="names are strings other than '__metadata__'"):
        st.save({"__metadata__": np.ones(1)}, path)
    with pytest.raises(TypeError, match="metadata must be a dict of str to str"):
        st.save({"a": np.ones(1)}, path, metadata={"version": 2})

    def fail(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", fail)              # the rename fails: nothing changes
    with pytest.raises(OSError, match="disk full"):
        st.save({"a": np.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["keep.safetensors"]


def test_the_reference_implementation_agrees(tmp_path):
    """Optional oracle: Hugging Face's safetensors package reads our file and we read its."""
    reference = pytest.importorskip("safetensors.numpy")
    arrays = ARRAYS
    st.save(arrays, tmp_path / "ours.safetensors", metadata={"format": "np"})
    theirs = reference.load_file(str(tmp_path / "ours.safetensors"))
    assert theirs.keys() == arrays.keys()
    for name, a in arrays.items():
        np.testing.assert_array_equal(bits(theirs[name]), bits(a), err_msg=name)
    reference.save_file(arrays, str(tmp_path / "theirs.safetensors"), metadata={"format": "np"})
    ours = st.read_numpy(tmp_path / "theirs.safetensors")
    for name, a in arrays.items():
        b = ours[name].astype(np.float16) if a.dtype == np.float16 else ours[name]
        np.testing.assert_array_equal(bits(b), bits(a), err_msg=name)


# ---- from_pretrained: a tiny GPT-2 in Hugging Face's layout ----------------------------------
SIZES = dict(vocab_size=11, n_positions=8, n_layer=2, n_head=2, n_embd=8)


def hf_config(**changes):
    """config.json as Hugging Face writes GPT-2's (its keys, the small sizes)."""
    config = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
              "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
              "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
              "n_ctx": SIZES["n_positions"], "resid_pdrop": 0.1, "summary_activation": None,
              "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
              "summary_type": "cls_index", "summary_use_proj": True,
              "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
              **SIZES}
    config.update(changes)
    return {k: v for k, v in config.items() if v is not ...}          # ...: leave the key out


def hf_weights(seed=0, std=0.5):
    """GPT-2's tensors under Hugging Face's names, Conv1D weights (in, out), with the
    causal-mask buffers old checkpoints carry. Random N(0, std^2) (LayerNorm weights around
    1), large enough that attention is far from uniform."""
    rng = np.random.default_rng(seed)
    V, P, C = SIZES["vocab_size"], SIZES["n_positions"], SIZES["n_embd"]

    def draw(*shape, mean=0.0):
        return rng.normal(mean, std, size=shape).astype(np.float32)

    W = {"wte.weight": draw(V, C), "wpe.weight": draw(P, C)}
    for i in range(SIZES["n_layer"]):
        h = f"h.{i}."
        W.update({h + "ln_1.weight": draw(C, mean=1.0), h + "ln_1.bias": draw(C),
                  h + "attn.bias": np.tril(np.ones((P, P), np.float32)).reshape(1, 1, P, P),
                  h + "attn.masked_bias": np.array(-1e4, np.float32),
                  h + "attn.c_attn.weight": draw(C, 3 * C), h + "attn.c_attn.bias": draw(3 * C),
                  h + "attn.c_proj.weight": draw(C, C), h + "attn.c_proj.bias": draw(C),
                  h + "ln_2.weight": draw(C, mean=1.0), h + "ln_2.bias": draw(C),
                  h + "mlp.c_fc.weight": draw(C, 4 * C), h + "mlp.c_fc.bias": draw(4 * C),
                  h + "mlp.c_proj.weight": draw(4 * C, C), h + "mlp.c_proj.bias": draw(C)})
    W.update({"ln_f.weight": draw(C, mean=1.0), "ln_f.bias": draw(C)})
    return W


def write_checkpoint(folder, weights, config=None):
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or hf_config(), indent=2))
    st.save(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def np_gpt2(W, idx, n_head, eps):
    """GPT-2's forward pass on Hugging Face's tensors as stored: Conv1D is x @ W + b, the
    mask is the checkpoint's own attn.bias buffer, GELU the tanh approximation."""
    W = {k: v.astype(np.float64) for k, v in W.items()}

    def ln(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * W[name + ".weight"] + W[name + ".bias"]

    def conv1d(x, name):
        return x @ W[name + ".weight"] + W[name + ".bias"]

    B, T = idx.shape
    x = W["wte.weight"][idx] + W["wpe.weight"][:T]
    C = x.shape[-1]
    hd = C // n_head
    for i in range(SIZES["n_layer"]):
        h = f"h.{i}."
        q, k, v = (a.reshape(B, T, n_head, hd).transpose(0, 2, 1, 3)
                   for a in np.split(conv1d(ln(x, h + "ln_1"), h + "attn.c_attn"), 3, axis=-1))
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        att = np.where(W[h + "attn.bias"][:, :, :T, :T] > 0, att, -np.inf)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        x = x + conv1d((att @ v).transpose(0, 2, 1, 3).reshape(B, T, C), h + "attn.c_proj")
        a = conv1d(ln(x, h + "ln_2"), h + "mlp.c_fc")
        a = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
        x = x + conv1d(a, h + "mlp.c_proj")
    return ln(x, "ln_f") @ W["wte.weight"].T


def tokens(B=2, T=8, seed=1):
    return np.random.default_rng(seed).integers(0, SIZES["vocab_size"], size=(B, T))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["hf", "prefixed_with_lm_head"])
def test_from_pretrained_matches_numpy_gpt2(tmp_path, device, layout):
    W = hf_weights()
    stored, eps = dict(W), 1e-5
    if layout == "prefixed_with_lm_head":      # as saved from GPT2LMHeadModel; another eps
        stored = {"transformer." + k: v for k, v in W.items()}
        stored["lm_head.weight"], eps = W["wte.weight"].copy(), 0.1
    folder = write_checkpoint(tmp_path / "gpt2", stored, hf_config(layer_norm_epsilon=eps))
    model = GPT.from_pretrained(folder, device=device)
    assert not model.training
    assert model.config.block_size == SIZES["n_positions"] and model.config.n_layer == SIZES["n_layer"]
    assert all(p.device == device and p.dtype is tg.float32 for p in model.parameters())
    assert model.lm_head.weight is model.transformer.wte.weight          # still tied
    idx = tokens()
    logits = model(tg.tensor(idx.tolist(), device=device)).detach().numpy()
    np.testing.assert_allclose(logits, np_gpt2(W, idx, SIZES["n_head"], eps), rtol=1e-4, atol=1e-5)
    assert tg.rand(4).numpy().any()                        # random factories are themselves again


def test_from_pretrained_in_float64_is_exact_to_the_reference(tmp_path):
    W = hf_weights(seed=3)
    model = GPT.from_pretrained(write_checkpoint(tmp_path / "gpt2", W), device="cpu", dtype=tg.float64)
    assert all(p.dtype is tg.float64 for p in model.parameters())
    np.testing.assert_array_equal(model.transformer.h[1].mlp.c_fc.weight.detach().numpy(),
                                  W["h.1.mlp.c_fc.weight"].T)          # Conv1D transposed
    idx = tokens(seed=4)
    logits = model(tg.tensor(idx.tolist(), device="cpu")).detach().numpy()
    np.testing.assert_allclose(logits, np_gpt2(W, idx, SIZES["n_head"], 1e-5), rtol=1e-10, atol=1e-12)


def broken(W, drop=(), add=None, transpose=()):
    W = {k: v for k, v in W.items() if k not in drop}
    W.update(add or {})
    W.update({k: np.ascontiguousarray(W[k].T) for k in transpose})
    return W


BAD_CHECKPOINTS = {
    "missing": (dict(drop=["h.1.mlp.c_fc.bias", "ln_f.weight"]), r"missing: h.1.mlp.c_fc.bias, ln_f.weight"),
    "unexpected": (dict(add={"h.0.attn.rotary": np.zeros(2, np.float32)}), r"unexpected: h.0.attn.rotary"),
    "Linear layout instead of Conv1D": (
        dict(transpose=["h.0.attn.c_attn.weight"]),
        r"h.0.attn.c_attn.weight: expected shape \(8, 24\) \(Conv1D: in, out\), found \(24, 8\)"),
    "wrong size": (dict(add={"wpe.weight": np.zeros((4, 8), np.float32)}),
                   r"wpe.weight: expected shape \(8, 8\), found \(4, 8\)"),
    "untied lm_head": (dict(add={"lm_head.weight": np.ones((11, 8), np.float32)}),
                       r"lm_head.weight differs from wte.weight"),
}


@pytest.mark.parametrize("case", BAD_CHECKPOINTS)
def test_checkpoints_that_do_not_fit_are_refused_listing_why(tmp_path, case):
    changes, message = BAD_CHECKPOINTS[case]
    folder = write_checkpoint(tmp_path / "gpt2", broken(hf_weights(), **changes))
    with pytest.raises(ValueError, match=message) as err:
        GPT.from_pretrained(folder)
    assert "model.safetensors does not fit GPT-2 with n_layer=2, n_embd=8" in str(err.value)


BAD_CONFIGS = {
    "exact gelu": (dict(activation_function="gelu"), r"activation_function is 'gelu'; .*'gelu_new'"),
    "no n_embd": (dict(n_embd=...), r"missing key\(s\) n_embd"),
    "no n_positions": (dict(n_positions=..., n_ctx=...), r"missing key\(s\) n_positions"),
    "other model": (dict(model_type="llama"), r"model_type is 'llama'; expected 'gpt2'"),
    "wider mlp": (dict(n_inner=64), r"n_inner is 64; this GPT's MLP is 4 \* n_embd = 32 wide"),


    "no heads": (dict(n_head=0), r"n_head must be at least 1, got 0"),
    "heads not dividing the width": (dict(n_head=3), r"n_embd \(8\) must be a multiple of n_head \(3\)"),
    "a size as a string": (dict(n_embd="8"), r"n_embd must be an int, got '8'"),
    "a size as a bool": (dict(vocab_size=True), r"vocab_size must be an int, got True"),
    "no positions": (dict(n_positions=-1), r"n_positions must be at least 1, got -1"),
    "no positions, under the old key": (dict(n_positions=..., n_ctx=0), r"n_ctx must be at least 1, got 0"),
    "epsilon not a number": (dict(layer_norm_epsilon="1e-5"), r"layer_norm_epsilon is '1e-5'; expected a positive"),
    "epsilon zero": (dict(layer_norm_epsilon=0), r"layer_norm_epsilon is 0; expected a positive number"),
}


@pytest.mark.parametrize("case", BAD_CONFIGS)
def test_configs_this_gpt_cannot_compute_are_refused(tmp_path, case):
    changes, message = BAD_CONFIGS[case]
    folder = write_checkpoint(tmp_path / "gpt2", hf_weights(), hf_config(**changes))
    with pytest.raises(ValueError, match=message) as err:
        GPT.from_pretrained(folder)
    assert "config.json" in str(err.value)


def test_a_config_json_that_is_no_object_is_refused(tmp_path):
    folder = write_checkpoint(tmp_path / "gpt2", hf_weights())
    (folder / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"config.json: it holds a JSON list; expected an object"):
        GPT.from_pretrained(folder)
    (folder / "config.json").write_text("[" * 100_000)
    with pytest.raises(ValueError, match=r"config.json is not JSON"):
        GPT.from_pretrained(folder)


CONFIG_LIES = {   # config.json's sizes against a small checkpoint's weights
    "wide": (dict(n_embd=65536), r"wte.weight: expected shape \(11, 65536\), found \(11, 8\)"),
    "long": (dict(n_positions=2 ** 40), r"wpe.weight: expected shape \(1099511627776, 8\), found \(8, 8\)"),
    "large vocabulary": (dict(vocab_size=10 ** 9), r"wte.weight: expected shape \(1000000000, 8\)"),
    "deep": (dict(n_layer=10 ** 9), r"holds 32 tensor\(s\), fewer than the 12 \* n_layer \+ 4 = 12000000004"),
    "one more layer": (dict(n_layer=3), r"holds 32 tensor\(s\), fewer than the 12 \* n_layer \+ 4 = 40"),
}


@pytest.mark.parametrize("case", CONFIG_LIES)
def test_config_sizes_are_checked_against_the_weights_before_the_model_is_built(tmp_path, monkeypatch, case):
    """config.json says how large a model to build: sizes the weights file does not hold
    are refused from its header, before a model of that size (gigabytes) is allocated."""
    from stage4_models.gpt import pretrained

    def never(*args, **kwargs):
        raise AssertionError("the model was built before config.json was checked against the weights")
    monkeypatch.setattr(pretrained, "GPT", never)
    changes, message = CONFIG_LIES[case]
    folder = write_checkpoint(tmp_path / "gpt2", hf_weights(), hf_config(**changes))
    with pytest.raises(ValueError, match=message) as err:
        GPT.from_pretrained(folder)
    assert "model.safetensors does not fit GPT-2" in str(err.value)


def test_a_four_byte_weights_file_is_refused_before_allocating(tmp_path, monkeypatch):
    """The sweep's case: n_embd 65536 in config.json beside a weights file of one float."""
    from stage4_models.gpt import pretrained
    monkeypatch.setattr(pretrained, "GPT", None)          # building it would raise a TypeError
    folder = write_checkpoint(tmp_path / "gpt2", {"wte.weight": np.ones(1, np.float32)},
                              hf_config(n_embd=65536))
    with pytest.raises(ValueError, match=r"holds 1 tensor\(s\), fewer than the 12 \* n_layer \+ 4 = 28") as err:
        GPT.from_pretrained(folder)
    assert "(103,082,295,296 parameters, 412,329,181,184 bytes in float32)" in str(err.value)


def test_parameter_shapes_are_those_of_a_built_model():
    """pretrained.parameter_shapes works out from a config what GPT(config) would hold,
    without building it; the two must agree."""
    from stage4_models.gpt import pretrained
    from stage4_models.gpt.model import GPTConfig
    config = GPTConfig(vocab_size=7, block_size=5, n_layer=3, n_head=2, n_embd=4)
    built = {name: tuple(t.shape) for name, t in GPT(config).state_dict().items() if name != "lm_head.weight"}
    assert pretrained.parameter_shapes(config) == built
    assert pretrained.parameter_count(config) == sum(math.prod(shape) for shape in built.values())


def test_missing_files_say_where_to_get_them(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config.json not found.*pretrained.py"):
        GPT.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(hf_config()))
    with pytest.raises(FileNotFoundError, match=r"model.safetensors not found"):
        GPT.from_pretrained(tmp_path)


def test_hugging_face_gpt2_gives_the_same_logits(tmp_path):
    """Optional oracle: transformers' own GPT2LMHeadModel, written by its save_pretrained."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=11, n_positions=8, n_embd=8, n_layer=2, n_head=2,
                                     bos_token_id=0, eos_token_id=0)
    hf = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for p in hf.parameters():
            p.normal_(0.0, 0.5)
    hf.save_pretrained(tmp_path)
    idx = tokens()
    with torch.no_grad():
        expected = hf.double()(torch.tensor(idx)).logits.numpy()
    model = GPT.from_pretrained(tmp_path, device="cpu", dtype=tg.float64)
    logits = model(tg.tensor(idx.tolist(), device="cpu")).detach().numpy()
    np.testing.assert_allclose(logits, expected, rtol=1e-10, atol=1e-12)


# ---- save_pretrained: the inverse of from_pretrained -------------------------------------------
def is_buffer(name):
    """h.{i}.attn.bias and h.{i}.attn.masked_bias: the causal-mask buffers (not c_attn.bias)."""
    return re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)", name) is not None


def small_gpt(device, seed=5):
    """Our GPT at the test checkpoint's sizes, with GPT-2's random initialisation."""
    from stage4_models.gpt import GPTConfig
    tg.seed(seed)
    config = GPTConfig(vocab_size=SIZES["vocab_size"], block_size=SIZES["n_positions"],
                       n_layer=SIZES["n_layer"], n_head=SIZES["n_head"], n_embd=SIZES["n_embd"])
    return GPT(config, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_save_pretrained_round_trips_bit_exact(tmp_path, device):
    from stage4_models.gpt.pretrained import save_pretrained
    model = small_gpt(device)
    with tg.no_grad():                                      # biases and LayerNorms not 0 and 1
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.copy_(tg.normal(p.shape, 0.5, 0.5, device=device))
    folder = save_pretrained(model, tmp_path / "ours")
    assert sorted(os.listdir(folder)) == ["config.json", "model.safetensors"]
    loaded = GPT.from_pretrained(folder, device=device)
    assert loaded.config == model.config
    assert loaded.lm_head.weight is loaded.transformer.wte.weight
    theirs = loaded.state_dict()
    for name, t in model.state_dict().items():
        np.testing.assert_array_equal(bits(theirs[name].numpy()), bits(t.numpy()), err_msg=name)
    idx = tg.tensor(tokens().tolist(), device=device)
    model.eval()
    np.testing.assert_array_equal(loaded(idx).detach().numpy(), model(idx).detach().numpy())


def test_save_pretrained_writes_hugging_faces_layout(tmp_path):
    """Names, shapes, dtypes and config keys as the HF-layout writer above (hf_weights,
    hf_config) has them, less the mask buffers, which transformers no longer saves."""
    from stage4_models.gpt.pretrained import save_pretrained
    folder = save_pretrained(small_gpt("cpu"), tmp_path / "ours")
    tensors, metadata, _ = st.read_header(folder / "model.safetensors")
    expected = {name: (a.shape, "F32") for name, a in hf_weights().items() if not is_buffer(name)}
    assert {name: (shape, dtype) for name, (dtype, shape, _, _) in tensors.items()} == expected
    assert metadata == {"format": "pt"}
    config = json.loads((folder / "config.json").read_text())
    reference = hf_config()
    for key in ("activation_function", "model_type", "layer_norm_epsilon", "n_ctx", *SIZES):
        assert config[key] == reference[key], key
    assert config.get("n_inner") is None and "bos_token_id" not in config    # not GPT-2's vocabulary


def test_save_pretrained_of_a_loaded_checkpoint_gives_its_tensors_back(tmp_path):
    """HF folder -> from_pretrained -> save_pretrained: every tensor as it was stored (the
    Conv1D weights transposed twice), bit for bit."""
    from stage4_models.gpt.pretrained import save_pretrained
    W = hf_weights(seed=7)
    model = GPT.from_pretrained(write_checkpoint(tmp_path / "hf", W), device="cpu")
    back = st.read_numpy(save_pretrained(model, tmp_path / "again") / "model.safetensors")
    kept = {k: v for k, v in W.items() if not is_buffer(k)}
    assert back.keys() == kept.keys()
    for name, a in kept.items():
        np.testing.assert_array_equal(bits(back[name]), bits(a), err_msg=name)


def test_save_pretrained_refuses_what_gpt2_cannot_hold(tmp_path):
    from stage4_models.gpt import GPTConfig
    from stage4_models.gpt.pretrained import save_pretrained
    no_bias = GPT(GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=1, n_embd=4, bias=False))
    with pytest.raises(ValueError, match="bias=False"):
        save_pretrained(no_bias, tmp_path / "x")
    model = small_gpt("python")
    model.transformer.ln_f.eps = 1e-3
    with pytest.raises(ValueError, match="different epsilons"):
        save_pretrained(model, tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_save_pretrained_writes_config_json_whole_or_not_at_all(tmp_path, monkeypatch):
    """config.json rewritten in place would keep only part of it after a kill mid-write."""
    from stage4_models.gpt import GPTConfig
    from stage4_models.gpt.pretrained import save_pretrained
    folder = save_pretrained(small_gpt("python"), tmp_path / "gpt2")
    before = (folder / "config.json").read_bytes()
    rename = os.replace

    def killed(src, dst):
        if str(dst).endswith("config.json"):
            raise OSError("killed before the rename")
        return rename(src, dst)
    monkeypatch.setattr(os, "replace", killed)
    shallower = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8))
    with pytest.raises(OSError, match="killed"):
        save_pretrained(shallower, folder)
    assert (folder / "config.json").read_bytes() == before
    assert sorted(os.listdir(folder)) == ["config.json", "model.safetensors"]


def test_hugging_face_reads_what_save_pretrained_writes(tmp_path):
    """Optional oracle: transformers' GPT2LMHeadModel loads our folder and computes our logits."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from stage4_models.gpt.pretrained import save_pretrained
    model = small_gpt("cpu")
    folder = save_pretrained(model, tmp_path / "ours")
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(folder)).eval()
    idx = tokens()
    with torch.no_grad():
        expected = hf(torch.tensor(idx)).logits.numpy()
    logits = model.eval()(tg.tensor(idx.tolist(), device="cpu")).detach().numpy()
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)
