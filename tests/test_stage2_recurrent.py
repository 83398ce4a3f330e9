"""nn.RNN, nn.LSTM (with proj_size), nn.GRU, their cells and nn.utils.rnn (padded and packed
sequences): gradients against central differences of the same networks written in numpy,
on every engine; PyTorch's modules as the oracle (its state_dict loaded) for the outputs,
the states and every gradient at settings drawn at random; the parameters, their
initialisation, dropout between layers, the packing helpers, and PyTorch's errors."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
from stage2_tensor.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence,
                                        pad_packed_sequence, pad_sequence, unpack_sequence, unpad_sequence)

from .engines import engine_params, engines_on
from .gradcheck import gradcheck

pytestmark = pytest.mark.stage2

try:
    import torch
except ImportError:
    torch = None

TENSOR_ENGINES = engine_params(engines_on("python", "cpu", "cpu:lazy", "cuda-emu", "cuda"))


def f64(a, device=None, requires_grad=False):
    return tg.tensor(np.asarray(a).tolist(), dtype=tg.float64, device=device, requires_grad=requires_grad)


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


# ---- the same networks in numpy ----------------------------------------------------------
def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_step(mode, x, state, w):
    """One step on vectors: state (h,) or (h, c); w the layer's weights by kind."""
    x_gates = w["weight_ih"] @ x + w.get("bias_ih", 0.0)
    h_gates = w["weight_hh"] @ state[0] + w.get("bias_hh", 0.0)
    if mode == "LSTM":
        i, f, g, o = np.split(x_gates + h_gates, 4)
        c = sigmoid(f) * state[1] + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return (w["weight_hr"] @ h if "weight_hr" in w else h), c
    if mode == "GRU":
        (x_r, x_z, x_n), (h_r, h_z, h_n) = np.split(x_gates, 3), np.split(h_gates, 3)
        r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
        n = np.tanh(x_n + r * h_n)
        return ((1 - z) * n + z * state[0],)
    pre = x_gates + h_gates
    return (np.maximum(pre, 0.0) if mode == "RNN_RELU" else np.tanh(pre),)


def np_sequence(mode, x, states, weights, layers, directions):
    """One sequence x (L, I) through the stack: (outputs (L, D * size), final states)."""
    finals = []
    for layer in range(layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            state, out = tuple(s[k] for s in states), [None] * len(x)
            for t in (reversed(range(len(x))) if d else range(len(x))):
                state = np_step(mode, x[t], state, weights[k])
                out[t] = state[0]
            outputs.append(np.array(out))
            finals.append(state)
        x = np.concatenate(outputs, 1)
    return x, [np.array([f[i] for f in finals]) for i in range(len(states))]


def np_network(model, x, states, flat, lengths=None):
    """The model's stack on time-first x (T, B, I), each sequence b alone over its first
    lengths[b] steps (zeros after), from states [(layers * D, B, size)] and flat weights
    in the model's order. Returns (output (T, B, D * size), final states)."""
    weights, it = [], iter(flat)
    for names in model._all_weights:
        weights.append({name.split("_l")[0]: next(it) for name in names})
    directions = 2 if model.bidirectional else 1
    lengths = lengths or [x.shape[0]] * x.shape[1]
    outputs, finals = [], []
    for b, n in enumerate(lengths):
        out, final = np_sequence(model.mode, x[:n, b], [s[:, b] for s in states], weights, model.num_layers,
                                 directions)
        outputs.append(np.concatenate([out, np.zeros((x.shape[0] - n, out.shape[1]))]))
        finals.append(final)
    return np.stack(outputs, 1), [np.stack([f[i] for f in finals], 1) for i in range(len(states))]


# ---- gradients on every engine ------------------------------------------------------------
def state_sizes(model):
    """The sizes of the states' last dimension: (h,), or (h, c) for the LSTM."""
    return model._state_sizes()


GRADIENT_CASES = {
    "rnn-tanh": ("RNN", dict(), "padded"),
    "rnn-tanh-unbatched": ("RNN", dict(), "unbatched"),
    "rnn-relu-2layers-nobias": ("RNN", dict(nonlinearity="relu", num_layers=2, bias=False), "padded"),
    "lstm-proj-bidirectional": ("LSTM", dict(proj_size=1, bidirectional=True), "padded"),
    "gru-2layers-batch-first": ("GRU", dict(num_layers=2, batch_first=True), "padded"),
    "lstm-bidirectional-packed": ("LSTM", dict(bidirectional=True), "packed"),
    "gru-packed": ("GRU", dict(), "packed"),
}
T, B, I, H = 3, 2, 2, 2


@pytest.mark.parametrize("case", GRADIENT_CASES)
@pytest.mark.parametrize("engine", TENSOR_ENGINES)
def test_gradients_match_central_differences(engine, case):
    """d(output, h_n[, c_n]) / d(input, initial states, every weight), through time."""
    kind, settings, layout = GRADIENT_CASES[case]
    model = getattr(nn, kind)(I, H, dtype=tg.float64, device=engine.device, **settings)
    rng = np.random.default_rng(0)
    layers = model.num_layers * (2 if model.bidirectional else 1)
    x = rng.normal(size=(T, B, I))
    states = [rng.normal(size=(layers, B, size)) * 0.5 for size in state_sizes(model)]
    flat = [rng.normal(size=w.shape) * 0.7 for w in model._flat_weights]
    lengths = [2, 3] if layout == "packed" else None
    n_states = len(states)
    if layout == "unbatched":
        x, states = x[:, :1], [s[:, :1] for s in states]

    def run(x, *rest):
        states, weights = rest[:n_states], rest[n_states:]
        for name, w in zip(model._flat_weights_names, weights):
            setattr(model, name, w)             # the leaves stand in for the parameters
        hx = tuple(states) if kind == "LSTM" else states[0]
        if layout == "packed":
            out, hx = model(pack_padded_sequence(x, lengths, enforce_sorted=False), hx)
            out = pad_packed_sequence(out, total_length=T)[0]
        elif layout == "unbatched":
            out, hx = model(x[:, 0], tuple(s[:, 0] for s in hx) if kind == "LSTM" else hx[:, 0])
        else:
            out, hx = model(x.transpose(0, 1) if model.batch_first else x, hx)
            out = out.transpose(0, 1) if model.batch_first else out
        return tg.cat([t.reshape(-1) for t in (out, *(hx if kind == "LSTM" else (hx,)))])

    def reference(x, *rest):
        out, finals = np_network(model, x, rest[:n_states], rest[n_states:], lengths)
        return np.concatenate([a.reshape(-1) for a in (out, *finals)])

    gradcheck(engine, run, [x, *states, *flat], reference=reference)


CELL_KINDS = {"RNNCell": "RNN_TANH", "LSTMCell": "LSTM", "GRUCell": "GRU"}


@pytest.mark.parametrize("cell", CELL_KINDS)
@pytest.mark.parametrize("engine", TENSOR_ENGINES)
def test_cell_gradients_match_central_differences(engine, cell):
    mode = CELL_KINDS[cell]
    module = getattr(nn, cell)(I, H, dtype=tg.float64, device=engine.device)
    rng = np.random.default_rng(1)
    names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    flat = [rng.normal(size=getattr(module, n).shape) * 0.7 for n in names]
    x = rng.normal(size=(B, I))
    states = [rng.normal(size=(B, H)) for _ in range(2 if mode == "LSTM" else 1)]
    n_states = len(states)

    def run(x, *rest):
        for name, w in zip(names, rest[n_states:]):
            setattr(module, name, w)            # the leaves stand in for the parameters
        states = rest[:n_states]
        out = module(x, tuple(states) if mode == "LSTM" else states[0])
        return tg.cat([t.reshape(-1) for t in (out if mode == "LSTM" else (out,))])

    def reference(x, *rest):
        states, weights = rest[:n_states], dict(zip(names, rest[n_states:]))
        rows = [np_step(mode, x[b], tuple(s[b] for s in states), weights) for b in range(B)]
        return np.concatenate([np.stack([r[i] for r in rows]).reshape(-1) for i in range(n_states)])

    gradcheck(engine, run, [x, *states, *flat], reference=reference)


# ---- PyTorch as the oracle ------------------------------------------------------------------
KINDS, LAYOUTS = ("RNN", "LSTM", "GRU"), ("padded", "unbatched", "packed")


def random_setting(i):
    """Setting i: every kind with every layout twice over the 18 settings, the rest drawn."""
    rng = np.random.default_rng(100 + i)
    kind, layout = KINDS[i % 3], LAYOUTS[(i // 3) % 3]
    settings = dict(input_size=int(rng.integers(1, 4)), hidden_size=int(rng.integers(2, 5)),
                    num_layers=int(rng.integers(1, 4)), bias=bool(rng.integers(2)),
                    batch_first=bool(rng.integers(2)), bidirectional=bool(rng.integers(2)))
    if kind == "RNN":
        settings["nonlinearity"] = ["tanh", "relu"][int(rng.integers(2))]
    if kind == "LSTM" and rng.integers(2):
        settings["proj_size"] = int(rng.integers(1, settings["hidden_size"]))
    return kind, settings, layout, bool(rng.integers(2)), rng


@pytest.mark.parametrize("i", range(18))
def test_matches_pytorch(i):
    """Outputs, final states and the gradients of the input, the initial states and every
    parameter, in float64, against PyTorch's module with the same state_dict."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    kind, settings, layout, given_states, rng = random_setting(i)
    twin = getattr(torch.nn, kind)(**settings).double()
    model = getattr(nn, kind)(**settings, dtype=tg.float64)
    state = {k: v.numpy() for k, v in twin.state_dict().items()}
    assert list(model.state_dict()) == list(state)
    model.load_state_dict({k: f64(v) for k, v in state.items()})
    steps, batch = 4, 3
    x = rng.normal(size=(batch, steps, settings["input_size"]) if settings["batch_first"]
                   else (steps, batch, settings["input_size"]))
    if layout == "unbatched":
        x = x[0] if settings["batch_first"] else x[:, 0]
    layers = settings["num_layers"] * (2 if settings["bidirectional"] else 1)
    shape = (layers,) if layout == "unbatched" else (layers, batch)
    states = [rng.normal(size=shape + (size,)) for size in state_sizes(model)] if given_states else []
    lengths = [int(n) for n in rng.permutation(np.arange(1, steps + 1))[:batch]]   # unsorted, distinct

    def call(lib, module, x, states):
        hx = (tuple(states) if kind == "LSTM" else states[0]) if states else None
        if layout != "packed":
            return module(x, hx)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, settings["batch_first"], enforce_sorted=False)
        out, hx = module(packed, hx)
        padded = lib.nn.utils.rnn.pad_packed_sequence(out, settings["batch_first"], total_length=steps)[0]
        return (out.data, padded), hx

    def flat(out, hx):
        outs = out if layout == "packed" else (out,)
        return [*outs, *(hx if kind == "LSTM" else (hx,))]

    t_leaves = [torch.tensor(a, requires_grad=True) for a in (x, *states)]
    g_leaves = [f64(a, requires_grad=True) for a in (x, *states)]
    want = flat(*call(torch, twin, t_leaves[0], t_leaves[1:]))
    got = flat(*call(tg, model, g_leaves[0], g_leaves[1:]))
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(array(g), w.detach().numpy(), rtol=1e-10, atol=1e-10)
    upstream = [rng.normal(size=tuple(w.shape)) for w in want]
    sum((w * torch.tensor(u)).sum() for w, u in zip(want, upstream)).backward()
    sum((g * f64(u)).sum() for g, u in zip(got, upstream)).backward()
    for g, w in zip(g_leaves, t_leaves):
        np.testing.assert_allclose(array(g.grad), w.grad.numpy(), rtol=1e-10, atol=1e-10)
    for (name, g), (_, w) in zip(model.named_parameters(), twin.named_parameters()):
        np.testing.assert_allclose(array(g.grad), w.grad.numpy(), rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_pytorch(cell, batched):
    if torch is None:
        pytest.skip("PyTorch is not installed")
    settings = dict(nonlinearity="relu", bias=False) if cell == "RNNCell" else {}
    twin = getattr(torch.nn, cell)(3, 4, **settings).double()
    module = getattr(nn, cell)(3, 4, **settings, dtype=tg.float64)
    module.load_state_dict({k: f64(v.numpy()) for k, v in twin.state_dict().items()})
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 3) if batched else (3,))
    hx = [rng.normal(size=(2, 4) if batched else (4,)) for _ in range(2 if cell == "LSTMCell" else 1)]
    for given in (True, False):
        t_leaves = [torch.tensor(a, requires_grad=True) for a in (x, *hx)]
        g_leaves = [f64(a, requires_grad=True) for a in (x, *hx)]

        def call(module, leaves):
            state = (tuple(leaves[1:]) if cell == "LSTMCell" else leaves[1]) if given else None
            out = module(leaves[0], state)
            return list(out) if cell == "LSTMCell" else [out]

        want, got = call(twin, t_leaves), call(module, g_leaves)
        for g, w in zip(got, want):
            np.testing.assert_allclose(array(g), w.detach().numpy(), rtol=1e-12, atol=1e-12)
        sum(w.sum() for w in want).backward()
        sum(g.sum() for g in got).backward()
        for g, w in zip(g_leaves, t_leaves):
            if w.grad is not None:
                np.testing.assert_allclose(array(g.grad), w.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_packing_matches_pytorch():
    if torch is None:
        pytest.skip("PyTorch is not installed")
    rng = np.random.default_rng(3)
    seqs = [rng.normal(size=(n, 2)) for n in (2, 4, 1, 3)]
    for lib_out, t_out in [
        (pad_sequence([f64(s) for s in seqs], True, -1.0, "left"),
         torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], True, -1.0, "left")),
        (pad_sequence([f64(s) for s in seqs]), torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs]))]:
        np.testing.assert_array_equal(array(lib_out), t_out.numpy())
    got = pack_sequence([f64(s) for s in seqs], enforce_sorted=False)
    want = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(array(got.data), want.data.numpy())
    for g, w in zip(got[1:], want[1:]):
        assert g.tolist() == w.tolist()
    padded, lengths = pad_packed_sequence(got, batch_first=True, padding_value=9.0, total_length=5)
    t_padded, t_lengths = torch.nn.utils.rnn.pad_packed_sequence(want, True, 9.0, 5)
    np.testing.assert_array_equal(array(padded), t_padded.numpy())
    assert lengths.tolist() == t_lengths.tolist() and lengths.dtype is tg.int64


# ---- parameters, initialisation, settings ---------------------------------------------------
def test_parameters_are_named_shaped_and_ordered_as_pytorch():
    model = nn.LSTM(2, 3, num_layers=2, proj_size=1, bidirectional=True)
    names = [n for n, _ in model.named_parameters()]
    assert names == [f"{kind}_l{layer}{suffix}" for layer in (0, 1) for suffix in ("", "_reverse")
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
    assert [[tuple(p.shape) for p in ws] for ws in model.all_weights] == [[(12, 2), (12, 1), (12,), (12,), (1, 3)]] * 4
    assert all(w is getattr(model, n) for ws, ns in zip(model.all_weights, model._all_weights) for w, n in zip(ws, ns))
    assert [n for n, _ in nn.GRU(2, 3, bias=False).named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert [n for n, _ in nn.RNNCell(2, 3, bias=False).named_parameters()] == ["weight_ih", "weight_hh"]
    assert nn.RNNCell(2, 3, bias=False).bias_ih is None
    assert tuple(nn.GRUCell(2, 5).weight_hh.shape) == (15, 5)
    assert tuple(nn.RNN(4, 3, num_layers=2, bidirectional=True).weight_ih_l1_reverse.shape) == (3, 6)


@pytest.mark.parametrize("make", [lambda: nn.LSTM(4, 16, num_layers=2), lambda: nn.GRUCell(4, 16)])
def test_initialisation_is_uniform_on_one_over_sqrt_hidden(make):
    tg.manual_seed(0)
    values = np.concatenate([array(p).reshape(-1) for p in make().parameters()])
    bound = 1 / math.sqrt(16)
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound and abs(values.mean()) < 0.02


def test_repr_names_the_settings_pytorch_does():
    assert repr(nn.LSTM(2, 3)) == "LSTM(2, 3)"
    assert repr(nn.LSTM(2, 3, 2, proj_size=1, bidirectional=True)) == \
        "LSTM(2, 3, proj_size=1, num_layers=2, bidirectional=True)"
    assert repr(nn.RNN(2, 3, 2, "relu", bias=False, batch_first=True, dropout=0.2)) == \
        "RNN(2, 3, num_layers=2, bias=False, batch_first=True, dropout=0.2)"
    assert repr(nn.RNNCell(2, 3, bias=False, nonlinearity="relu")) == "RNNCell(2, 3, bias=False, nonlinearity=relu)"
    assert repr(nn.GRUCell(2, 3)) == "GRUCell(2, 3)"


def test_device_dtype_to_and_flatten_parameters():
    model = nn.GRU(2, 3, device="python", dtype=tg.float64)
    assert all(p.device == "python" and p.dtype is tg.float64 for p in model.parameters())
    model.flatten_parameters()                                    # nothing to do, as on a CPU
    model.float()
    assert all(w.dtype is tg.float32 for ws in model.all_weights for w in ws)
    out, h = model(tg.randn(4, 2, 2, device="python"))
    assert out.shape == (4, 2, 3) and h.shape == (1, 2, 3) and out.dtype is tg.float32


def test_dropout_between_layers_only_while_training():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, but got "
                                         "dropout=0.5 and num_layers=1"):
        nn.LSTM(2, 3, dropout=0.5)
    tg.manual_seed(0)
    model = nn.RNN(2, 3, num_layers=2, dropout=1.0)
    x1, x2 = tg.randn(4, 2, 2), tg.randn(4, 2, 2)
    (out1, h1), (out2, h2) = model(x1), model(x2)
    # every output of layer 0 is dropped: layer 1 sees zeros, whatever the input
    np.testing.assert_allclose(array(out1), array(out2))
    assert not np.allclose(array(h1[0]), array(h2[0]))           # layer 0 still reads the input
    model.eval()
    assert not np.allclose(array(model(x1)[0]), array(model(x2)[0]))


def test_initial_states_default_to_zeros():
    tg.manual_seed(0)
    model = nn.LSTM(2, 3, proj_size=2, num_layers=2, batch_first=True)
    x = tg.randn(2, 5, 2)
    out, (h, c) = model(x)
    assert out.shape == (2, 5, 2) and h.shape == (2, 2, 2) and c.shape == (2, 2, 3)
    out0, (h0, c0) = model(x, (tg.zeros(2, 2, 2), tg.zeros(2, 2, 3)))
    np.testing.assert_array_equal(array(out), array(out0))
    np.testing.assert_array_equal(array(out[:, -1]), array(h[-1]))   # the last layer's last step


def test_packed_input_gives_each_sequence_its_own_last_state():
    """A packed batch runs each sequence as if alone: its output rows and its final state
    are those of the sequence run unbatched over its own length."""
    tg.manual_seed(0)
    model = nn.GRU(2, 3, num_layers=2, bidirectional=True, dtype=tg.float64)
    seqs = [tg.randn(n, 2, dtype=tg.float64) for n in (3, 5, 1)]
    out, h = model(pack_sequence(seqs, enforce_sorted=False))
    assert isinstance(out, PackedSequence) and out.data.shape == (9, 6)
    for b, (seq, unpacked) in enumerate(zip(seqs, unpack_sequence(out))):
        alone, h_alone = model(seq)
        np.testing.assert_allclose(array(unpacked), array(alone), atol=1e-14)
        np.testing.assert_allclose(array(h[:, b]), array(h_alone), atol=1e-14)


def test_clip_grad_value_on_a_recurrent_model():
    model = nn.LSTM(2, 3)
    (model(tg.randn(5, 2, 2))[0] * 100).sum().backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.01)
    assert all(np.abs(array(p.grad)).max() <= 0.01 for p in model.parameters())


# ---- the packing helpers ---------------------------------------------------------------------
def test_pack_and_pad_round_trip():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 3, 2))                 # (T, B, *), lengths 2, 4, 3
    packed = pack_padded_sequence(f64(x), tg.tensor([2, 4, 3]), enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed       # a named tuple
    assert batch_sizes.tolist() == [3, 3, 2, 1] and batch_sizes.dtype is tg.int64 and batch_sizes.is_cpu
    assert sorted_indices.tolist() == [1, 2, 0] and unsorted_indices.tolist() == [2, 0, 1]
    np.testing.assert_array_equal(array(data), np.concatenate([x[0, [1, 2, 0]], x[1, [1, 2, 0]], x[2, [1, 2]],
                                                               x[3, [1]]]))
    padded, lengths = pad_packed_sequence(packed, padding_value=-5.0)
    assert lengths.tolist() == [2, 4, 3]
    want = x.copy()
    want[2:, 0], want[3:, 2] = -5.0, -5.0
    np.testing.assert_array_equal(array(padded), want)
    assert [array(s).tolist() for s in unpad_sequence(padded, lengths)] == \
        [x[:n, b].tolist() for b, n in enumerate([2, 4, 3])]
    assert pad_packed_sequence(packed, batch_first=True, total_length=6)[0].shape == (3, 6, 2)
    assert invert_permutation(tg.tensor([2, 0, 1])).tolist() == [1, 2, 0] and invert_permutation(None) is None
    as_double = PackedSequence(data.float(), batch_sizes, sorted_indices).double()
    assert as_double.data.dtype is tg.float64 and as_double.batch_sizes is batch_sizes
    assert as_double.unsorted_indices.tolist() == [2, 0, 1]


def test_pad_sequence_sides_and_layouts():
    a, b = tg.tensor([[1.0], [2.0]]), tg.tensor([[3.0]])
    assert pad_sequence([a, b]).tolist() == [[[1.0], [3.0]], [[2.0], [0.0]]]
    assert pad_sequence([a, b], batch_first=True, padding_value=7).tolist() == [[[1.0], [2.0]], [[3.0], [7.0]]]
    assert pad_sequence([a, b], batch_first=True, padding_side="left").tolist() == [[[1.0], [2.0]], [[0.0], [3.0]]]


def test_packing_gradients_reach_the_padded_input_only_where_it_is_read():
    x = tg.randn(3, 2, 1, requires_grad=True)
    pad_packed_sequence(pack_padded_sequence(x, [3, 1]))[0].sum().backward()
    assert x.grad.reshape(-1).tolist() == [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]


# ---- errors, as PyTorch's ---------------------------------------------------------------------
def x5(lib, *shape):
    return lib.randn(*(shape or (5, 4, 2)))


ERRORS = {
    "dropout-range": (lambda lib: lib.nn.LSTM(2, 3, dropout=1.5), ValueError,
                      r"dropout should be a number in range \[0, 1\]"),
    "bias-type": (lambda lib: lib.nn.LSTM(2, 3, bias=1), TypeError, "bias should be of type bool, got: int"),
    "input-size-type": (lambda lib: lib.nn.LSTM(2.0, 3), TypeError, "input_size should be of type int, got: float"),
    "hidden-size": (lambda lib: lib.nn.GRU(2, 0), ValueError, "hidden_size must be greater than zero"),
    "num-layers": (lambda lib: lib.nn.RNN(2, 3, num_layers=0), ValueError, "num_layers must be greater than zero"),
    "proj-size": (lambda lib: lib.nn.LSTM(2, 3, proj_size=3), ValueError, "proj_size has to be smaller than hidden_size"),
    "proj-size-gru": (lambda lib: lib.nn.GRU(2, 3, proj_size=1), ValueError,
                      "proj_size argument is only supported for LSTM, not RNN or GRU"),
    "nonlinearity": (lambda lib: lib.nn.RNN(2, 3, nonlinearity="sigmoid"), ValueError,
                     "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."),
    "input-size": (lambda lib: lib.nn.LSTM(2, 3)(x5(lib, 5, 4, 3)), RuntimeError,
                   r"input.size\(-1\) must be equal to input_size. Expected 2, got 3"),
    "input-dims-lstm": (lambda lib: lib.nn.LSTM(2, 3)(x5(lib, 5)), ValueError,
                        "LSTM: Expected input to be 2D or 3D, got 1D instead"),
    "input-dims-rnn": (lambda lib: lib.nn.RNN(2, 3)(x5(lib, 5, 4, 2, 1)), ValueError,
                       "RNN: Expected input to be 2D or 3D, got 4D tensor instead"),
    "input-dtype": (lambda lib: lib.nn.RNN(2, 3)(x5(lib).to(lib.float64)), ValueError,
                    r"RNN input dtype \(\w+.float64\) does not match weight dtype \(\w+.float32\)"),
    "empty-sequence": (lambda lib: lib.nn.RNN(2, 3)(x5(lib, 0, 4, 2)), RuntimeError,
                       "Expected sequence length to be larger than 0 in RNN"),
    "lstm-h-size": (lambda lib: lib.nn.LSTM(2, 3, proj_size=1)(x5(lib), (lib.zeros(1, 4, 3), lib.zeros(1, 4, 3))),
                    RuntimeError, r"Expected hidden\[0\] size \(1, 4, 1\), got \[1, 4, 3\]"),
    "lstm-c-size": (lambda lib: lib.nn.LSTM(2, 3)(x5(lib), (lib.zeros(1, 4, 3), lib.zeros(1, 3, 3))),
                    RuntimeError, r"Expected hidden\[1\] size \(1, 4, 3\), got \[1, 3, 3\]"),
    "lstm-hx-dims": (lambda lib: lib.nn.LSTM(2, 3)(x5(lib), (lib.zeros(1, 4, 3), lib.zeros(4, 3))), RuntimeError,
                     r"For batched 3-D input, hx and cx should also be 3-D but got \(3-D, 2-D\) tensors"),
    "gru-h-size": (lambda lib: lib.nn.GRU(2, 3)(x5(lib), lib.zeros(1, 4, 2)), RuntimeError,
                   r"Expected hidden size \(1, 4, 3\), got \[1, 4, 2\]"),
    "gru-hx-dims": (lambda lib: lib.nn.GRU(2, 3)(x5(lib), lib.zeros(4, 3)), RuntimeError,
                    "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    "rnn-unbatched-hx-dims": (lambda lib: lib.nn.RNN(2, 3)(x5(lib, 4, 2), lib.zeros(1, 4, 3)), RuntimeError,
                              "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    "packed-h-size": (lambda lib: lib.nn.GRU(2, 3)(lib.nn.utils.rnn.pack_sequence([x5(lib, 3, 2), x5(lib, 2, 2)]),
                                                   lib.zeros(1, 3, 3)), RuntimeError,
                      r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"),
    "cell-input-size": (lambda lib: lib.nn.LSTMCell(2, 3)(x5(lib, 4, 3)), RuntimeError,
                        "input has inconsistent input_size: got 3 expected 2"),
    "cell-batch": (lambda lib: lib.nn.LSTMCell(2, 3)(x5(lib, 4, 2), (lib.zeros(5, 3), lib.zeros(5, 3))),
                   RuntimeError, "Input batch size 4 doesn't match hidden0 batch size 5"),
    "cell-hidden-size": (lambda lib: lib.nn.GRUCell(2, 3)(x5(lib, 4, 2), lib.zeros(4, 2)), RuntimeError,
                         "hidden0 has inconsistent hidden_size: got 2, expected 3"),
    "cell-c-size": (lambda lib: lib.nn.LSTMCell(2, 3)(x5(lib, 4, 2), (lib.zeros(4, 3), lib.zeros(4, 2))),
                    RuntimeError, "hidden1 has inconsistent hidden_size: got 2, expected 3"),
    "cell-input-dims": (lambda lib: lib.nn.GRUCell(2, 3)(x5(lib, 4, 2, 1)), ValueError,
                        "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
    "cell-hidden-dims": (lambda lib: lib.nn.RNNCell(2, 3)(x5(lib, 4, 2), lib.zeros(4, 3, 1)), ValueError,
                         "RNNCell: Expected hidden to be 1D or 2D, got 3D instead"),
    "cell-hx1-dims": (lambda lib: lib.nn.LSTMCell(2, 3)(x5(lib, 4, 2), (lib.zeros(4, 3), lib.zeros(4, 3, 1))),
                      ValueError, r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"),
    "cell-nonlinearity": (lambda lib: lib.nn.RNNCell(2, 3, nonlinearity="foo")(x5(lib, 4, 2)), RuntimeError,
                          "Unknown nonlinearity: foo"),
    "lengths-count": (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(x5(lib, 4, 3, 2), [4, 3]), RuntimeError,
                      r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    "lengths-positive": (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(x5(lib, 4, 3, 2), [4, 3, 0]),
                         RuntimeError, "Length of all samples has to be greater than 0"),
    "lengths-sorted": (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(x5(lib, 4, 3, 2), [2, 3, 2]), RuntimeError,
                       "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"),
    "lengths-dims": (lambda lib: lib.nn.utils.rnn.pack_padded_sequence(x5(lib, 4, 3, 2), lib.tensor([[3, 2, 1]])),
                     RuntimeError, "'lengths' argument should be a 1D CPU int64 tensor, but got 2D"),
    "total-length": (lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
                         lib.nn.utils.rnn.pack_sequence([x5(lib, 3, 2)]), total_length=2), ValueError,
                     "Expected total_length to be at least the length of the longest sequence in input, but got "
                     "total_length=2 and max sequence length being 3"),
    "pad-empty": (lambda lib: lib.nn.utils.rnn.pad_sequence([]), RuntimeError, "received an empty list of sequences"),
    "pad-side": (lambda lib: lib.nn.utils.rnn.pad_sequence([x5(lib, 2, 1)], padding_side="middle"), RuntimeError,
                 "Expected padding_side to be one of left or right, but got middle."),
    "pad-not-iterable": (lambda lib: lib.nn.utils.rnn.pad_sequence(5), RuntimeError,
                         "pad_sequence: Expected iterable for input sequences"),
    "pad-trailing": (lambda lib: lib.nn.utils.rnn.pad_sequence([x5(lib, 2, 3), x5(lib, 3, 4)]), RuntimeError, None),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_pytorch(case):
    """Each bad call raises PyTorch's exception with PyTorch's message (where one is given),
    and PyTorch itself does, where installed."""
    call, kind, message = ERRORS[case]
    for lib in (tg, torch) if torch is not None else (tg,):
        with pytest.raises(kind, match=message):
            call(lib)


def test_errors_of_our_own():
    """What PyTorch does not check (a length beyond the padded input, which it reads past
    the end of) or reports with an unrelated error (a pair where a tensor belongs)."""
    with pytest.raises(RuntimeError, match="a length of 5 is more than the 4 time steps"):
        pack_padded_sequence(tg.randn(4, 3, 2), [4, 5, 2], enforce_sorted=False)
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors"):
        pack_padded_sequence(tg.randn(4, 0, 2), [])
    with pytest.raises(TypeError, match=r"LSTM: hx must be a tuple \(h_0, c_0\)"):
        nn.LSTM(2, 3)(tg.randn(5, 4, 2), tg.zeros(1, 4, 3))
    with pytest.raises(TypeError, match="GRU: the initial hidden state must be a Tensor, got tuple"):
        nn.GRU(2, 3)(tg.randn(5, 4, 2), (tg.zeros(1, 4, 3),))
    with pytest.raises(TypeError, match=r"LSTMCell: hx must be a tuple \(h, c\)"):
        nn.LSTMCell(2, 3)(tg.randn(4, 2), tg.zeros(4, 3))
    with pytest.raises(RuntimeError, match="LSTM: the initial state's dtype"):
        nn.LSTM(2, 3)(tg.randn(5, 4, 2), (tg.zeros(1, 4, 3), tg.zeros(1, 4, 3, dtype=tg.float64)))
    for sizes in ([2, 3], [2, 0, 1], [3, 1], [[2, 1]]):
        bad = PackedSequence(tg.randn(3, 2), tg.tensor(sizes))
        with pytest.raises(RuntimeError, match="PackedSequence: batch_sizes .* do not describe its data of shape"):
            nn.GRU(2, 3)(bad)
        with pytest.raises(RuntimeError, match="PackedSequence: batch_sizes"):
            pad_packed_sequence(bad)
    with pytest.raises(RuntimeError, match="GRUCell: input and hidden states of dtype"):
        nn.GRUCell(2, 3)(tg.randn(4, 2, dtype=tg.float64))
