"""nn.TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
TransformerDecoder and Transformer: each against the same computation written in numpy
from the model's own weights (post-norm and pre-norm, both layouts, bool and float masks,
key padding), the stacks' layer copies, the causal mask, the errors, a gradient check on a
small layer; PyTorch's layers as an optional oracle (its weights loaded by state_dict name)."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

from .engines import engine_params, engines_on
from .gradcheck import gradcheck

pytestmark = pytest.mark.stage2

E, H, FF = 8, 2, 16


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def f64(x):
    return tg.tensor(np.asarray(x).tolist(), dtype=tg.float64)


def weights(model):
    return {k: array(v) for k, v in model.state_dict().items()}


# ---- the same computation in numpy ---------------------------------------------------------
def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, w, prefix, eps=1e-5):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps) * w[prefix + ".weight"]
    return out + w.get(prefix + ".bias", 0.0)


def linear(x, w, prefix):
    return x @ w[prefix + ".weight"].T + w.get(prefix + ".bias", 0.0)


def additive(mask):
    """A bool mask (True hides) as -inf / 0; a float mask as it is."""
    if mask is None:
        return 0.0
    mask = np.asarray(mask)
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def attention(q, kv, w, prefix, mask=None, padding=None):
    """Batch-first (N, L, E) queries over (N, S, E) keys and values."""
    (N, L, _), S, hd = q.shape, kv.shape[1], E // H
    wi, bi = w[prefix + ".in_proj_weight"], w.get(prefix + ".in_proj_bias", np.zeros(3 * E))

    def heads(x, i, n):
        return (x @ wi[i * E:(i + 1) * E].T + bi[i * E:(i + 1) * E]).reshape(N, n, H, hd).transpose(0, 2, 1, 3)

    scores = heads(q, 0, L) @ heads(kv, 1, S).swapaxes(-1, -2) / math.sqrt(hd) + additive(mask)
    if padding is not None:
        scores = scores + additive(padding)[:, None, None, :]
    out = (softmax(scores) @ heads(kv, 2, S)).transpose(0, 2, 1, 3).reshape(N, L, E)
    return linear(out, w, prefix + ".out_proj")


def relu(x):
    return np.maximum(x, 0)


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def feed_forward(x, w, p, act):
    return linear(act(linear(x, w, p + "linear1")), w, p + "linear2")


def encoder_layer(x, w, p="", norm_first=False, act=relu, mask=None, padding=None):
    def sa(y):
        return attention(y, y, w, p + "self_attn", mask, padding)
    if norm_first:
        x = x + sa(layer_norm(x, w, p + "norm1"))
        return x + feed_forward(layer_norm(x, w, p + "norm2"), w, p, act)
    x = layer_norm(x + sa(x), w, p + "norm1")
    return layer_norm(x + feed_forward(x, w, p, act), w, p + "norm2")


def decoder_layer(x, memory, w, p="", norm_first=False, act=relu, tgt_mask=None, memory_mask=None,
                  tgt_padding=None, memory_padding=None):
    def sa(y):
        return attention(y, y, w, p + "self_attn", tgt_mask, tgt_padding)

    def ca(y):
        return attention(y, memory, w, p + "multihead_attn", memory_mask, memory_padding)
    if norm_first:
        x = x + sa(layer_norm(x, w, p + "norm1"))
        x = x + ca(layer_norm(x, w, p + "norm2"))
        return x + feed_forward(layer_norm(x, w, p + "norm3"), w, p, act)
    x = layer_norm(x + sa(x), w, p + "norm1")
    x = layer_norm(x + ca(x), w, p + "norm2")
    return layer_norm(x + feed_forward(x, w, p, act), w, p + "norm3")


def sequences(*lengths, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, length, E)) for length in lengths]


def run(model, *xs, batch_first=True, **kw):
    """The model on batch-first numpy inputs, fed in its own layout; batch-first numpy out."""
    if batch_first:
        return array(model(*(f64(x) for x in xs), **kw))
    out = model(*(f64(x.transpose(1, 0, 2)) for x in xs), **kw)
    return array(out).transpose(1, 0, 2)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def make(cls, *args, **kw):
    tg.manual_seed(0)
    return cls(*args, dropout=0.0, dtype=tg.float64, **kw)


# ---- layers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation, act", [("relu", relu), ("gelu", gelu), (F.gelu, gelu)])
def test_encoder_layer_is_attention_then_feed_forward(norm_first, batch_first, activation, act):
    layer = make(nn.TransformerEncoderLayer, E, H, FF, activation=activation,
                 batch_first=batch_first, norm_first=norm_first)
    (x,) = sequences(5)
    close(run(layer, x, batch_first=batch_first), encoder_layer(x, weights(layer), "", norm_first, act))


@pytest.mark.parametrize("bool_masks", [True, False])
def test_encoder_layer_masks(bool_masks):
    layer = make(nn.TransformerEncoderLayer, E, H, FF, batch_first=True)
    (x,) = sequences(4)
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)
    padding = np.array([[False, False, False, True], [False, True, False, False]])
    if not bool_masks:                       # the same masks as additive floats
        mask, padding = additive(mask), additive(padding)
    got = run(layer, x, src_mask=f64(mask) if not bool_masks else tg.tensor(mask.tolist()),
              src_key_padding_mask=f64(padding) if not bool_masks else tg.tensor(padding.tolist()))
    close(got, encoder_layer(x, weights(layer), mask=mask, padding=padding))


def test_encoder_layer_without_bias_and_unbatched():
    layer = make(nn.TransformerEncoderLayer, E, H, FF, bias=False)
    assert not [n for n in layer.state_dict() if n.endswith("bias")]
    (x,) = sequences(3, n=1)
    close(array(layer(f64(x[0]))), encoder_layer(x, weights(layer))[0])   # (S, E) in, (S, E) out


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_attends_to_itself_then_to_memory(norm_first):
    layer = make(nn.TransformerDecoderLayer, E, H, FF, batch_first=True, norm_first=norm_first)
    tgt, memory = sequences(3, 5)
    causal = array(nn.Transformer.generate_square_subsequent_mask(3))
    padding = np.array([[False] * 4 + [True], [False] * 5])
    got = run(layer, tgt, memory, tgt_mask=f64(causal), memory_key_padding_mask=tg.tensor(padding.tolist()))
    close(got, decoder_layer(tgt, memory, weights(layer), "", norm_first, tgt_mask=causal,
                             memory_padding=padding))


# ---- stacks and the whole model ---------------------------------------------------------------
def test_encoder_stacks_copies_of_the_layer_then_norm():
    layer = make(nn.TransformerEncoderLayer, E, H, FF, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E, dtype=tg.float64))
    first, second = encoder.layers
    assert first.linear1.weight is not second.linear1.weight            # copies, not one layer
    np.testing.assert_array_equal(array(first.linear1.weight), array(layer.linear1.weight))
    with tg.no_grad():
        second.linear1.weight.mul_(0.5)                                  # the copies differ from here
    (x,) = sequences(4)
    w = weights(encoder)
    h = encoder_layer(encoder_layer(x, w, "layers.0."), w, "layers.1.")
    close(run(encoder, x), layer_norm(h, w, "norm"))


def test_transformer_is_encoder_then_decoder():
    model = make(nn.Transformer, d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=2,
                 dim_feedforward=FF)
    src, tgt = sequences(5, 3)
    causal = nn.Transformer.generate_square_subsequent_mask(3)
    padding = np.array([[False] * 4 + [True], [False] * 5])
    got = run(model, src, tgt, batch_first=False, tgt_mask=causal,
              src_key_padding_mask=tg.tensor(padding.tolist()),
              memory_key_padding_mask=tg.tensor(padding.tolist()))
    w = weights(model)
    memory = src
    for i in range(2):
        memory = encoder_layer(memory, w, f"encoder.layers.{i}.", padding=padding)
    memory = layer_norm(memory, w, "encoder.norm")
    out = tgt
    for i in range(2):
        out = decoder_layer(out, memory, w, f"decoder.layers.{i}.", tgt_mask=array(causal),
                            memory_padding=padding)
    close(got, layer_norm(out, w, "decoder.norm"))


def test_transformer_initialises_matrices_xavier_uniform():
    tg.manual_seed(0)
    model = nn.Transformer(d_model=E, nhead=H, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF)
    w = weights(model)
    bound = math.sqrt(6 / (E + FF))                   # linear1: fan_in E, fan_out FF
    assert np.abs(w["encoder.layers.0.linear1.weight"]).max() <= bound
    assert np.abs(w["encoder.layers.0.linear1.weight"]).max() > 0.8 * bound
    assert (w["encoder.norm.weight"] == 1).all() and (w["encoder.layers.0.linear1.bias"] != 0).any()


def test_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype is tg.float32
    assert mask.tolist() == [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf], [0.0, 0.0, 0.0]]
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=tg.float64).dtype is tg.float64


def test_causal_hint_needs_the_mask_and_is_detected_from_it():
    layer = make(nn.TransformerEncoderLayer, E, H, FF)
    (x,) = sequences(3)
    with pytest.raises(RuntimeError, match="is_causal is a hint"):
        layer(f64(x), is_causal=True)
    seen = []
    encoder = nn.TransformerEncoder(layer, 1)
    original = encoder.layers[0].forward
    encoder.layers[0].forward = lambda *a, **kw: seen.append(kw["is_causal"]) or original(*a, **kw)
    encoder(f64(x), mask=nn.Transformer.generate_square_subsequent_mask(2))     # (S, N, E): S = 2
    encoder(f64(x), mask=tg.zeros(2, 2))
    assert seen == [True, False]


def test_errors_name_what_is_wrong():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
    with pytest.raises(ValueError, match="num_layers must be a positive int"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF), 0)
    model = nn.Transformer(d_model=E, nhead=H, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        model(tg.zeros(3, 2, E), tg.zeros(3, 1, E))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to d_model"):
        model(tg.zeros(3, 2, E), tg.zeros(3, 2, E + 1))


@pytest.mark.parametrize("engine", engine_params(engines_on("python", "cpu")))
def test_encoder_layer_gradients(engine):
    tg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=tg.float64, batch_first=True,
                                       device=engine.device)
    x = np.random.default_rng(1).normal(size=(1, 3, 4))
    gradcheck(engine, lambda t: layer(t, src_mask=tg.zeros(3, 3, dtype=tg.float64, device=engine.device)), [x])


# ---- PyTorch as the oracle --------------------------------------------------------------------
def _torch_twin(torch, model, make_twin):
    twin = make_twin(torch).double()
    twin.load_state_dict({k: torch.tensor(v) for k, v in weights(model).items()})
    return twin


@pytest.mark.parametrize("norm_first, activation, bias", [(False, "relu", True), (True, "gelu", False)])
def test_transformer_matches_pytorch(norm_first, activation, bias):
    torch = pytest.importorskip("torch")
    settings = dict(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                    activation=activation, batch_first=True, norm_first=norm_first, bias=bias)
    model = make(nn.Transformer, **settings)
    twin = _torch_twin(torch, model, lambda torch: torch.nn.Transformer(dropout=0.0, **settings))
    src, tgt = sequences(5, 4)
    padding = np.array([[False] * 4 + [True], [False] * 5])
    causal = np.triu(np.ones((4, 4), dtype=bool), 1)
    want = twin(torch.tensor(src), torch.tensor(tgt), tgt_mask=torch.tensor(causal),
                src_key_padding_mask=torch.tensor(padding), memory_key_padding_mask=torch.tensor(padding))
    got = run(model, src, tgt, tgt_mask=tg.tensor(causal.tolist()),
              src_key_padding_mask=tg.tensor(padding.tolist()),
              memory_key_padding_mask=tg.tensor(padding.tolist()))
    close(got, want.detach().numpy())


def test_encoder_matches_pytorch_with_a_float_mask():
    torch = pytest.importorskip("torch")
    layer = make(nn.TransformerEncoderLayer, E, H, FF)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E, dtype=tg.float64))
    twin = _torch_twin(torch, encoder, lambda torch: torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0), 2, norm=torch.nn.LayerNorm(E),
        enable_nested_tensor=False))
    (x,) = sequences(4)
    mask = np.random.default_rng(3).normal(size=(4, 4))
    want = twin(torch.tensor(x.transpose(1, 0, 2)), mask=torch.tensor(mask))
    close(run(encoder, x, batch_first=False, mask=f64(mask)), want.detach().numpy().transpose(1, 0, 2))
