"""stage4's GPT (stage4_models/gpt) against an independent numpy forward pass, central
differences and PyTorch (when installed), on a tiny model, on devices "python" and "cpu"."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
from stage4_models.gpt import GPT, GPTConfig

from .engines import device_params

pytestmark = pytest.mark.stage4

DEVICES = device_params("python", "cpu", "cpu:lazy")
CONFIG = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8)


def make_model(device, dtype=None, seed=0, std=0.5):
    """The tiny GPT with every parameter redrawn N(0, std^2) (LayerNorm weights around 1):
    GPT-2's small initial weights make every attention pattern nearly uniform, and the
    comparisons would not notice a wrong mask or scale. std=None keeps GPT-2's initialisation."""
    tg.seed(seed)
    model = GPT(CONFIG, device=device, dtype=dtype)
    if std is not None:
        rng = np.random.default_rng(seed)
        with tg.no_grad():
            for name, p in model.named_parameters():
                values = rng.normal(1.0 if ".ln_" in name else 0.0, std, size=p.shape)
                p.copy_(tg.tensor(values.tolist(), dtype=p.dtype, device=p.device))
    return model


def tokens(device, B=2, T=8, seed=1):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, CONFIG.vocab_size, size=(B, T))
    targets = rng.integers(0, CONFIG.vocab_size, size=(B, T))
    return tg.tensor(idx.tolist(), device=device), tg.tensor(targets.tolist(), device=device)


def weights(model):
    return {k: np.array(v.numpy(), dtype=np.float64) for k, v in model.state_dict().items()}


# ---- an independent forward pass in numpy ----------------------------------------------------

def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_gpt(W, idx, n_layer, n_head):
    B, T = idx.shape
    x = W["transformer.wte.weight"][idx] + W["transformer.wpe.weight"][:T]
    C = x.shape[-1]
    hd = C // n_head
    causal = np.tril(np.ones((T, T), dtype=bool))
    for i in range(n_layer):
        def p(name, i=i):
            return W[f"transformer.h.{i}.{name}"]
        h = np_layer_norm(x, p("ln_1.weight"), p("ln_1.bias"))
        qkv = h @ p("attn.c_attn.weight").T + p("attn.c_attn.bias")
        q, k, v = (qkv[..., j * C:(j + 1) * C].reshape(B, T, n_head, hd).transpose(0, 2, 1, 3)
                   for j in range(3))
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        att = np.where(causal, att, -np.inf)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + y @ p("attn.c_proj.weight").T + p("attn.c_proj.bias")
        h = np_layer_norm(x, p("ln_2.weight"), p("ln_2.bias"))
        h = h @ p("mlp.c_fc.weight").T + p("mlp.c_fc.bias")
        h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))  # GPT-2's GELU
        x = x + h @ p("mlp.c_proj.weight").T + p("mlp.c_proj.bias")
    x = np_layer_norm(x, W["transformer.ln_f.weight"], W["transformer.ln_f.bias"])
    return x @ W["lm_head.weight"].T


def np_cross_entropy(logits, targets):
    z = logits.reshape(-1, logits.shape[-1])
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -logp[np.arange(len(z)), targets.reshape(-1)].mean()


# ---- tests ---------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_logits_and_loss_match_numpy(device):
    model = make_model(device)
    idx, targets = tokens(device)
    logits, loss = model(idx, targets)
    assert logits.shape == (2, 8, CONFIG.vocab_size) and logits.device == device
    expected = np_gpt(weights(model), idx.numpy(), CONFIG.n_layer, CONFIG.n_head)
    np.testing.assert_allclose(logits.detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loss.item(), np_cross_entropy(expected, targets.numpy()), rtol=1e-5)
    assert model(idx).shape == logits.shape                       # without targets: logits only
    short = model(idx[:, :3])                                      # shorter sequences work too
    np.testing.assert_allclose(short.detach().numpy(), expected[:, :3], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_match_central_differences(device):
    model = make_model(device, dtype=tg.float64)
    idx, targets = tokens(device, B=1, T=6)
    _, loss = model(idx, targets)
    loss.backward()
    params = dict(model.named_parameters())
    checked = {"transformer.wte.weight": [(3, 1), (idx.tolist()[0][0], 4)],   # also the LM head
               "transformer.wpe.weight": [(2, 5)],
               "transformer.h.0.attn.c_attn.weight": [(1, 2), (9, 3), (20, 7)],  # q, k, v rows
               "transformer.h.1.mlp.c_fc.bias": [(5,)],
               "transformer.h.1.ln_2.weight": [(6,)]}
    eps = 1e-6
    for name, positions in checked.items():
        p = params[name]
        assert p.dtype is tg.float64
        grad = p.grad.numpy()
        for pos in positions:
            original = p.detach()[pos].item()
            losses = []
            for value in (original + eps, original - eps):
                p.detach()[pos] = value
                with tg.no_grad():
                    losses.append(model(idx, targets)[1].item())
            p.detach()[pos] = original
            numeric = (losses[0] - losses[1]) / (2 * eps)
            assert grad[pos] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, pos)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loss_without_logits_equals_the_plain_loss(device, dtype):
    """GPT.loss (F.linear_cross_entropy: on "cpu" the vocabulary-chunk kernels) gives
    model(idx, targets)[1] and the same gradient for every parameter, -1 targets left out
    as there: float64 to 1e-12, float32 within its noise (the two paths add in other orders)."""
    dt = getattr(tg, dtype)
    idx, targets = tokens(device, B=3, T=8)
    targets[0, :3] = -1
    results = []
    for plain in (True, False):
        model = make_model(device, dtype=dt)
        loss = model(idx, targets)[1] if plain else model.loss(idx, targets)
        loss.backward()
        results.append([loss.item()] + [p.grad.numpy() for p in model.parameters()])
    tol = 1e-12 if dtype == "float64" else 1e-5
    for plain, fused in zip(*results):
        np.testing.assert_allclose(fused, plain, rtol=tol, atol=tol * np.abs(plain).max())
    with pytest.raises(ValueError, match=r"GPT.loss: targets must be a tensor of idx's shape \(3, 8\)"):
        make_model(device).loss(idx, targets[:, :4])


@pytest.mark.parametrize("device", DEVICES)
def test_causality_future_tokens_do_not_change_earlier_logits(device):
    model = make_model(device)
    idx, _ = tokens(device)
    changed = idx.tolist()
    for row in changed:
        row[5] = (row[5] + 1) % CONFIG.vocab_size
    before = model(idx).detach().numpy()
    after = model(tg.tensor(changed, device=device)).detach().numpy()
    np.testing.assert_allclose(after[:, :5], before[:, :5], rtol=0, atol=1e-6)
    assert np.abs(after[:, 5:] - before[:, 5:]).max() > 1e-4       # the change does reach later ones


@pytest.mark.parametrize("device", DEVICES)
def test_lm_head_shares_the_token_embedding(device):
    model = make_model(device)
    wte = model.transformer.wte.weight
    assert model.lm_head.weight is wte and wte.storage is model.lm_head.weight.storage
    names = [n for n, _ in model.named_parameters()]
    assert "transformer.wte.weight" in names and "lm_head.weight" not in names   # trained once
    state = model.state_dict()
    assert state["lm_head.weight"].storage is state["transformer.wte.weight"].storage
    model.to(dtype=tg.float64)                                    # moving keeps them one
    assert model.lm_head.weight.storage is model.transformer.wte.weight.storage
    idx, targets = tokens(device)
    model(idx, targets)[1].backward()
    assert model.lm_head.weight.grad is wte.grad                  # both uses add into one grad


@pytest.mark.parametrize("device", DEVICES)
def test_sequence_longer_than_block_size_raises(device):
    model = make_model(device)
    idx = tg.zeros(1, 9, dtype=tg.int64, device=device)
    with pytest.raises(ValueError, match=r"length 9.*block size.* is 8"):
        model(idx)


def test_config_sizes_are_checked_where_the_config_is_made():
    """n_head 0 would be a ZeroDivisionError inside a layer: every size is checked by GPTConfig."""
    sizes = dict(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8)
    with pytest.raises(ValueError, match=r"GPTConfig: n_head must be at least 1, got 0"):
        GPTConfig(**{**sizes, "n_head": 0})
    with pytest.raises(ValueError, match=r"n_embd \(8\) must be a multiple of n_head \(3\)"):
        GPTConfig(**{**sizes, "n_head": 3})
    with pytest.raises(TypeError, match=r"GPTConfig: block_size must be an int, got 8.0"):
        GPTConfig(**{**sizes, "block_size": 8.0})
    with pytest.raises(TypeError, match=r"GPTConfig: n_layer must be an int, got True"):
        GPTConfig(**{**sizes, "n_layer": True})


def test_parameter_count_and_initialisation():
    model = make_model("python", std=None)
    V, T, L, C = CONFIG.vocab_size, CONFIG.block_size, CONFIG.n_layer, CONFIG.n_embd
    # embeddings, per block 2 LayerNorms + qkv + attn proj + MLP (4C and back), final LayerNorm
    per_block = 2 * 2 * C + (C * 3 * C + 3 * C) + (C * C + C) + (C * 4 * C + 4 * C) + (4 * C * C + C)
    assert per_block == 12 * C * C + 13 * C
    assert model.num_parameters() == V * C + T * C + L * per_block + 2 * C == 1912
    W = weights(model)
    assert all(not W[k].any() for k in W if k.endswith("bias") and ".ln_" not in k)
    assert (W["transformer.ln_f.weight"] == 1).all() and not W["transformer.ln_f.bias"].any()
    assert 0.01 < W["transformer.h.0.mlp.c_fc.weight"].std() < 0.03
    tg.seed(0)
    big = GPT(GPTConfig(vocab_size=64, block_size=8, n_layer=8, n_head=2, n_embd=32))
    residual = np.array(big.transformer.h[0].mlp.c_proj.weight.detach().tolist())
    assert residual.std() == pytest.approx(0.02 / math.sqrt(16), rel=0.1)


@pytest.mark.parametrize("device", DEVICES)
def test_matches_torch_forward_and_every_gradient(device):
    torch = pytest.importorskip("torch")
    model = make_model(device, dtype=tg.float64)
    idx, targets = tokens(device)
    logits, loss = model(idx, targets)
    loss.backward()
    W = {k: torch.tensor(v, requires_grad=True) for k, v in weights(model).items()
         if k != "lm_head.weight"}
    W["lm_head.weight"] = W["transformer.wte.weight"]
    ti, tt = torch.tensor(idx.tolist()), torch.tensor(targets.tolist())
    B, T = ti.shape
    C, H = CONFIG.n_embd, CONFIG.n_head
    ln = lambda x, n: torch.nn.functional.layer_norm(x, (C,), W[n + ".weight"], W[n + ".bias"])  # noqa: E731
    lin = lambda x, n: torch.nn.functional.linear(x, W[n + ".weight"], W[n + ".bias"])  # noqa: E731
    x = W["transformer.wte.weight"][ti] + W["transformer.wpe.weight"][:T]
    for i in range(CONFIG.n_layer):
        n = f"transformer.h.{i}."
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2)
                   for t in lin(ln(x, n + "ln_1"), n + "attn.c_attn").split(C, dim=2))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + lin(y.transpose(1, 2).reshape(B, T, C), n + "attn.c_proj")
        h = torch.nn.functional.gelu(lin(ln(x, n + "ln_2"), n + "mlp.c_fc"), approximate="tanh")
        x = x + lin(h, n + "mlp.c_proj")
    t_logits = ln(x, "transformer.ln_f") @ W["lm_head.weight"].T
    t_loss = torch.nn.functional.cross_entropy(t_logits.view(B * T, -1), tt.view(-1))
    t_loss.backward()
    np.testing.assert_allclose(logits.detach().numpy(), t_logits.detach().numpy(), rtol=1e-10, atol=1e-12)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), W[name].grad.numpy(), rtol=1e-8, atol=1e-12,
                                   err_msg=name)
