"""stage2's nn: modules, layers and losses against numpy and central differences."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

from .engines import ENGINES
from .gradcheck import gradcheck

pytestmark = pytest.mark.stage2

STAGE2 = next(e for e in ENGINES if e.name == "stage2-python")


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def f64(a, requires_grad=False):
    return tg.tensor(np.asarray(a, dtype=np.float64).tolist(), dtype=tg.float64,
                     requires_grad=requires_grad)


# ---- Linear -------------------------------------------------------------------------------
def test_linear_forward_matches_numpy():
    layer = nn.Linear(3, 2, dtype=tg.float64)
    W, b = array(layer.weight), array(layer.bias)
    assert W.shape == (2, 3) and b.shape == (2,)
    X = np.random.default_rng(0).normal(size=(2, 4, 3))            # a leading batch of 2
    np.testing.assert_allclose(array(layer(f64(X))), X @ W.T + b, rtol=1e-12)
    np.testing.assert_allclose(array(layer(f64(X[0, 0]))), X[0, 0] @ W.T + b, rtol=1e-12)
    no_bias = nn.Linear(3, 2, bias=False, dtype=tg.float64)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    np.testing.assert_allclose(array(no_bias(f64(X))), X @ array(no_bias.weight).T, rtol=1e-12)


def test_linear_init_bounds_and_seed():
    tg.seed(3)
    layer = nn.Linear(16, 8)
    k = 1 / math.sqrt(16)
    values = np.concatenate([array(layer.weight).ravel(), array(layer.bias)])
    assert layer.weight.dtype is tg.float32 and layer.weight.requires_grad
    assert np.all(np.abs(values) <= k)
    assert values.max() > 0.8 * k and values.min() < -0.8 * k        # spread over the interval
    tg.seed(3)
    assert np.array_equal(array(nn.Linear(16, 8).weight), array(layer.weight))
    tg.seed(4)
    assert not np.array_equal(array(nn.Linear(16, 8).weight), array(layer.weight))


def test_linear_rejects_wrong_input_width():
    with pytest.raises(ValueError, match=r"Linear\(3, 2\) expects inputs of shape \(\.\.\., 3\), got \(4, 5\)"):
        nn.Linear(3, 2)(tg.zeros(4, 5))


# ---- Module machinery ----------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Dropout(0.5))
        self.heads = [nn.Linear(4, 3), nn.Linear(4, 1)]              # a plain list is found
        self.named = {"norm": nn.LayerNorm(4)}                       # so is a dict
        self.blocks = nn.ModuleList([nn.Linear(4, 4)])
        self.tied = self.heads[0]                                    # shared: counted once
        self.scale = tg.ones(1)                                      # not a Parameter

    def forward(self, x):
        return self.heads[0](self.named["norm"](self.body(x)))


EXPECTED_NAMES = ["body.0.weight", "body.0.bias", "heads.0.weight", "heads.0.bias",
                  "heads.1.weight", "heads.1.bias", "named.norm.weight", "named.norm.bias",
                  "blocks.0.weight", "blocks.0.bias"]


def test_named_parameters_walk_attributes_lists_and_dicts():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == EXPECTED_NAMES
    assert len(list(net.parameters())) == len(EXPECTED_NAMES)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert [n for n, _ in net.named_children()] == ["body", "heads.0", "heads.1", "named.norm",
                                                     "blocks"]                   # tied: once
    assert [n for n, _ in net.named_modules()][:5] == ["", "body", "body.0", "body.1", "body.2"]
    assert len(list(net.modules())) == 10                            # the shared head once
    assert isinstance(net.body[0], nn.Linear) and len(net.body) == 3
    assert len(net.body[:2]) == 2 and isinstance(net.body[:2], nn.Sequential)


def test_train_eval_and_zero_grad_reach_every_submodule():
    net = Net()
    assert net.training and net.body[2].training
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(tg.randn(3, 2)).sum().backward()
    assert net.heads[0].weight.grad is not None
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_to_converts_parameters_in_place():
    net = Net()
    params = list(net.parameters())
    assert net.to(tg.float64) is net
    assert [p.dtype for p in net.parameters()] == [tg.float64] * len(params)
    assert all(a is b for a, b in zip(params, net.parameters()))      # same objects
    assert net.to(device="python") is net and net.double().float().body[0].weight.dtype is tg.float32


def test_state_dict_round_trip():
    tg.seed(0)
    a, b = Net(), Net()
    sd = a.state_dict()
    assert list(sd) == EXPECTED_NAMES + ["tied.weight", "tied.bias"]    # as PyTorch: every name
    assert not any(t.requires_grad for t in sd.values())
    b.load_state_dict(sd)
    x = tg.randn(5, 2)
    a.eval(), b.eval()
    assert a(x).tolist() == b(x).tolist()
    assert b.body[0].weight.storage is not a.body[0].weight.storage   # copied, not shared


def test_load_state_dict_errors_name_the_keys_and_shapes():
    net = Net()
    sd = net.state_dict()
    del sd["heads.1.bias"]
    sd["extra.weight"] = tg.zeros(2)
    sd["body.0.weight"] = tg.zeros(5, 2)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    message = str(err.value)
    assert "Error(s) in loading state_dict for Net" in message
    assert "Missing key(s) in state_dict: 'heads.1.bias'" in message
    assert "Unexpected key(s) in state_dict: 'extra.weight'" in message
    assert ("size mismatch for body.0.weight: copying a param with shape (5, 2) from "
            "checkpoint, the shape in current model is (4, 2)") in message
    sd["body.0.weight"] = tg.ones(4, 2)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["heads.1.bias"] and result.unexpected_keys == ["extra.weight"]
    assert net.body[0].weight.tolist() == [[1.0, 1.0]] * 4


def test_parameter_and_repr():
    p = nn.Parameter(tg.zeros(2))
    assert p.requires_grad and p.is_leaf and repr(p).startswith("Parameter containing:")
    with pytest.raises(RuntimeError, match="only floating point"):
        nn.Parameter(tg.zeros(2, dtype=tg.int64))
    assert "(0): Linear(in_features=2, out_features=4, bias=True)" in repr(Net())


# ---- LayerNorm -----------------------------------------------------------------------------
def layer_norm_ref(x, axes, w, b, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def test_layer_norm_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(2.0, 3.0, size=(2, 3, 4))
    ln = nn.LayerNorm(4, dtype=tg.float64)
    assert array(ln.weight).tolist() == [1.0] * 4 and array(ln.bias).tolist() == [0.0] * 4
    with tg.no_grad():
        ln.weight.copy_(f64(rng.normal(size=4)))
        ln.bias.copy_(f64(rng.normal(size=4)))
    expected = layer_norm_ref(x, -1, array(ln.weight), array(ln.bias))
    np.testing.assert_allclose(array(ln(f64(x))), expected, rtol=1e-10, atol=1e-12)
    two = nn.LayerNorm((3, 4), eps=1e-3, dtype=tg.float64)            # over the last two dims
    np.testing.assert_allclose(array(two(f64(x))), layer_norm_ref(x, (1, 2), 1.0, 0.0, 1e-3),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"normalized_shape \(5,\) does not match .* \(2, 3, 4\)"):
        nn.LayerNorm(5)(f64(x))


def test_layer_norm_gradient_by_central_differences():
    rng = np.random.default_rng(1)
    inputs = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=4)]
    gradcheck(STAGE2, lambda x, w, b: F.layer_norm(x, 4, w, b), inputs, rng)


# ---- Dropout -------------------------------------------------------------------------------
def test_dropout_train_and_eval():
    x = tg.ones(40, 50, requires_grad=True)
    drop = nn.Dropout(0.3)
    tg.seed(0)
    y = drop(x)
    values = np.array(y.detach().tolist())
    kept = values != 0
    assert set(np.unique(values).tolist()) == {0.0, np.float32(1 / 0.7).item()}   # inverted scaling
    assert abs(1 - kept.mean() - 0.3) < 0.03                                     # about p dropped
    assert abs(values.mean() - 1) < 0.05                                         # mean kept
    y.sum().backward()
    np.testing.assert_array_equal(np.array(x.grad.tolist()) != 0, kept)          # same mask
    tg.seed(0)
    assert drop(x).tolist() == y.tolist()                                        # seeded
    assert drop.eval()(x) is x and F.dropout(x, 0.3, training=False) is x
    assert F.dropout(x, 0.0) is x and F.dropout(x, 1.0).sum().item() == 0
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# ---- Embedding -----------------------------------------------------------------------------
def test_embedding_gradient_adds_up_for_repeated_indices():
    emb = nn.Embedding(5, 3, dtype=tg.float64)
    idx = np.array([[1, 3, 1], [1, 0, 4]])
    out = emb(tg.tensor(idx.tolist()))
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(array(out), array(emb.weight)[idx])
    upstream = np.random.default_rng(0).normal(size=(2, 3, 3))
    (out * f64(upstream)).sum().backward()
    expected = np.zeros((5, 3))
    np.add.at(expected, idx, upstream)                  # row 1 gets three contributions
    np.testing.assert_allclose(array(emb.weight.grad), expected, rtol=1e-12)
    assert array(emb.weight.grad)[2].tolist() == [0, 0, 0]


# ---- losses --------------------------------------------------------------------------------
def log_softmax_ref(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_value_and_gradient_match_numpy(reduction):
    rng = np.random.default_rng(0)
    z, y = rng.normal(size=(5, 4)) * 3, np.array([0, 3, 1, 3, 2])
    logits = f64(z, requires_grad=True)
    loss = F.cross_entropy(logits, tg.tensor(y.tolist()), reduction=reduction)
    per_sample = -log_softmax_ref(z)[np.arange(5), y]
    expected = {"mean": per_sample.mean(), "sum": per_sample.sum(), "none": per_sample}[reduction]
    np.testing.assert_allclose(array(loss), expected, rtol=1e-12)
    loss.sum().backward()
    grad = np.exp(log_softmax_ref(z)) - np.eye(4)[y]                # softmax - one_hot
    np.testing.assert_allclose(array(logits.grad), grad / 5 if reduction == "mean" else grad,
                               rtol=1e-10, atol=1e-12)


def test_cross_entropy_is_stable_and_matches_its_module():
    logits = tg.tensor([[1000.0, 0.0], [0.0, -1000.0], [5.0, 5.0]], dtype=tg.float64)
    target = tg.tensor([1, 0, 1])
    loss = F.cross_entropy(logits, target, reduction="none")
    np.testing.assert_allclose(array(loss), [1000.0, 0.0, math.log(2)], rtol=1e-12)
    assert nn.CrossEntropyLoss()(logits, target).item() == F.cross_entropy(logits, target).item()
    assert F.cross_entropy(logits[0], target[0]).shape == ()            # one unbatched sample


def test_cross_entropy_errors():
    logits = tg.zeros(4, 3)
    with pytest.raises(ValueError, match=r"logits of shape \(4, 3\) and target of shape \(3,\)"):
        F.cross_entropy(logits, tg.tensor([0, 1, 2]))
    with pytest.raises(TypeError, match="expected class indices .* got a float32 tensor"):
        F.cross_entropy(logits, tg.zeros(4))
    with pytest.raises(IndexError, match=r"target 3 at position 3 is not a class index: the "
                                         r"logits have 3 classes \(0 to 2\)"):
        F.cross_entropy(logits, tg.tensor([0, 1, 2, 3]))
    with pytest.raises(IndexError, match="target -1 at position 0 is not a class index"):
        F.cross_entropy(logits, tg.tensor([-1, 1, 2, 0]))
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(logits, tg.tensor([0, 1, 2, 0]), reduction="avg")


def test_mse_loss():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    x = f64(a, requires_grad=True)
    loss = F.mse_loss(x, f64(b))
    assert loss.item() == pytest.approx(((a - b) ** 2).mean(), rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(array(x.grad), 2 * (a - b) / a.size, rtol=1e-12)
    assert F.mse_loss(x, f64(b), reduction="sum").item() == pytest.approx(((a - b) ** 2).sum())
    assert nn.MSELoss(reduction="none")(x, f64(b)).shape == (4, 2)
    with pytest.warns(UserWarning, match=r"target size \(4,\) is different from input size \(4, 1\)"):
        F.mse_loss(tg.zeros(4, 1), tg.zeros(4))


# ---- activations ---------------------------------------------------------------------------
def test_activation_modules_and_functions():
    z = np.linspace(-2, 2, 6).reshape(2, 3)
    x = f64(z)
    np.testing.assert_allclose(array(nn.ReLU()(x)), np.maximum(z, 0))
    np.testing.assert_allclose(array(nn.Tanh()(x)), np.tanh(z), rtol=1e-12)
    np.testing.assert_allclose(array(nn.Sigmoid()(x)), 1 / (1 + np.exp(-z)), rtol=1e-12)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(array(nn.GELU()(x)), 0.5 * z * (1 + erf(z / math.sqrt(2))), rtol=1e-12)
    np.testing.assert_allclose(array(nn.Softmax(dim=1)(x)), np.exp(log_softmax_ref(z)), rtol=1e-12)
    np.testing.assert_allclose(array(nn.LogSoftmax(dim=1)(x)), log_softmax_ref(z), rtol=1e-12)
    assert array(F.relu(x)).tolist() == array(nn.ReLU()(x)).tolist()
    assert nn.Flatten()(tg.zeros(2, 3, 4)).shape == (2, 12)
    assert F.one_hot(tg.tensor([2, 0])).tolist() == [[0, 0, 1], [1, 0, 0]]


def test_gelu_tanh_approximation_and_bad_values():
    z = np.linspace(-5, 5, 11)
    x = f64(z)
    gpt2 = 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))
    np.testing.assert_allclose(array(nn.GELU(approximate="tanh")(x)), gpt2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(array(F.gelu(x, approximate="tanh")), gpt2, rtol=1e-12, atol=1e-15)
    exact = array(F.gelu(x, approximate="none"))
    assert np.abs(exact - gpt2).max() > 1e-5                  # two different functions
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    for bad in ("Tanh", "erf", None):
        with pytest.raises(ValueError, match=rf"approximate={bad!r}.*'none', 'tanh'"):
            nn.GELU(approximate=bad)
        with pytest.raises(ValueError, match=r"'none', 'tanh'"):
            F.gelu(x, approximate=bad)


def test_apply_and_requires_grad_():
    net = Net()
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 4          # children first, self last

    def init(m):
        if isinstance(m, nn.Linear):
            with tg.no_grad():
                m.weight.fill_(0.5)
    net.apply(init)
    assert net.blocks[0].weight.tolist()[0] == [0.5] * 4
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
