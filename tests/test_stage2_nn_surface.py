"""The PyTorch surface of stage2's nn a learner reaches for: activations and losses against
numpy and central differences on every engine; buffers, registration, weight tying,
containers and nn.init by their behaviour."""
import math
from statistics import NormalDist

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor.nn import init

from .engines import ENGINES, engine_params
from .gradcheck import gradcheck


# ---- buffers, registration, tying ----------------------------------------------------------
class Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("running_mean", tg.zeros(2))
        self.register_buffer("steps", tg.tensor(0))                # an int64 buffer
        self.register_buffer("mask", tg.ones(2), persistent=False)
        self.register_buffer("unset", None)


class Tied(nn.Module):
    """A language model's input embedding and output layer sharing one weight."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.stats = Stats()
        self.head = nn.Linear(3, 5, bias=False)
        self.head.weight = self.emb.weight


def test_buffers_are_state_but_not_parameters(tmp_path):
    m = Tied()
    assert [n for n, _ in m.named_buffers()] == ["stats.running_mean", "stats.steps", "stats.mask"]
    assert len(list(m.buffers())) == 3 and all(not b.requires_grad for b in m.buffers())
    assert "stats.running_mean" not in dict(m.named_parameters())
    sd = m.state_dict()
    assert list(sd) == ["emb.weight", "stats.running_mean", "stats.steps", "stats.lin.weight",
                        "stats.lin.bias", "head.weight"]   # PyTorch's order: own state, then children
    with tg.no_grad():
        m.stats.running_mean.fill_(7.0)
        m.stats.steps.fill_(3)
    tg.save(m.state_dict(), tmp_path / "m.tg")
    fresh = Tied()
    fresh.load_state_dict(tg.load(tmp_path / "m.tg"))
    assert fresh.stats.running_mean.tolist() == [7.0, 7.0] and fresh.stats.steps.item() == 3
    assert fresh.stats.mask.tolist() == [1.0, 1.0]                 # not saved, not loaded
    with pytest.raises(RuntimeError, match="Unexpected key.*'stats.mask'"):
        fresh.load_state_dict({**sd, "stats.mask": tg.zeros(2)})


def test_weight_tying_is_trained_once_saved_twice_and_kept_on_load(tmp_path):
    tg.manual_seed(0)
    m = Tied()
    assert m.head.weight is m.emb.weight
    names = [n for n, _ in m.named_parameters()]
    assert "emb.weight" in names and "head.weight" not in names    # yielded once
    sd = m.state_dict()
    assert sd["head.weight"].tolist() == sd["emb.weight"].tolist()
    tg.save(sd, tmp_path / "tied.tg")
    tg.manual_seed(1)
    fresh = Tied()
    fresh.load_state_dict(tg.load(tmp_path / "tied.tg"))
    assert fresh.head.weight is fresh.emb.weight                   # still one Parameter
    assert fresh.emb.weight.tolist() == m.emb.weight.tolist()
    opt = tg.optim.SGD(fresh.parameters(), lr=0.1)
    fresh.head(fresh.emb(tg.tensor([1, 2]))).sum().backward()
    opt.step()
    assert fresh.head.weight.tolist() == fresh.emb.weight.tolist() != m.emb.weight.tolist()


def test_to_moves_and_converts_buffers():
    m = Stats()
    m.to(tg.float64)
    assert m.running_mean.dtype is tg.float64 and m.mask.dtype is tg.float64
    assert m.steps.dtype is tg.int64 and m.lin.weight.dtype is tg.float64   # ints keep theirs


@pytest.mark.stage3
@pytest.mark.device("cpu")
def test_to_device_moves_buffers_with_parameters():
    import stage3_native  # noqa: F401  (registers "cpu")
    m = Tied().to("cpu")
    assert {t.device for t in [*m.parameters(), *m.buffers()]} == {"cpu"}
    assert m.head.weight is m.emb.weight


def test_register_checks_names_and_values():
    m = Stats()
    for bad, error, match in [(lambda: m.register_buffer("a.b", tg.zeros(1)), KeyError, "contain"),
                              (lambda: m.register_buffer("", tg.zeros(1)), KeyError, "empty"),
                              (lambda: m.register_buffer(3, tg.zeros(1)), TypeError, "should be a string"),
                              (lambda: m.register_buffer("lin", tg.zeros(1)), KeyError, "'lin' already exists"),
                              (lambda: m.register_buffer("forward", tg.zeros(1)), KeyError, "already exists"),
                              (lambda: m.register_buffer("b", [1.0]), TypeError, "'list' object to buffer 'b'"),
                              (lambda: m.register_buffer("b", nn.Parameter(tg.zeros(1))), TypeError,
                               "register_parameter"),
                              (lambda: m.register_parameter("p", tg.zeros(1)), TypeError, "nn.Parameter or None"),
                              (lambda: m.register_parameter("running_mean", nn.Parameter(tg.zeros(1))), KeyError,
                               "already exists"),
                              (lambda: m.add_module("sub", tg.zeros(1)), TypeError, "is not a Module subclass"),
                              (lambda: m.add_module("training", nn.ReLU()), KeyError, "already exists")]:
        with pytest.raises(error, match=match):
            bad()
    m.register_buffer("running_mean", tg.ones(2))                  # re-registering replaces
    m.register_parameter("scale", nn.Parameter(tg.ones(1)))
    m.add_module("act", nn.ReLU())
    m.register_module("extra", nn.Linear(1, 1))
    assert [n for n, _ in m.named_parameters()] == ["scale", "lin.weight", "lin.bias",
                                                    "extra.weight", "extra.bias"]
    assert [n for n, _ in m.named_children()] == ["lin", "act", "extra"]


# ---- containers ----------------------------------------------------------------------------
def test_apply_visits_every_module_children_first():
    m = nn.Sequential(Tied(), nn.ModuleDict({"a": nn.ReLU(), "b": nn.Sequential(nn.Tanh())}))
    seen = []
    m.apply(seen.append)
    assert len(seen) == len(list(m.modules())) == 10 and seen[-1] is m
    assert {id(x) for x in seen} == {id(x) for x in m.modules()}


def test_module_dict():
    d = nn.ModuleDict({"q": nn.Linear(2, 2)})
    d["k"] = nn.Linear(2, 3, bias=False)
    d.update([("v", nn.Linear(2, 1))])
    assert list(d) == list(d.keys()) == ["q", "k", "v"] and "k" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["q.weight", "q.bias", "k.weight", "v.weight", "v.bias"]
    assert isinstance(d.pop("v"), nn.Linear) and len(d) == 2
    del d["k"]
    assert list(d.items())[0][0] == "q"
    with pytest.raises(TypeError, match=r"ModuleDict\['x'\]: expected a Module, got Tensor"):
        d["x"] = tg.zeros(1)
    with pytest.raises(KeyError, match="non-empty string without '.'"):
        d["a.b"] = nn.ReLU()
    with pytest.raises(KeyError, match=r"has no key 'z'; its keys are \['q'\]"):
        d["z"]


def test_parameter_list_and_dict(tmp_path):
    pl = nn.ParameterList([tg.zeros(2), nn.Parameter(tg.ones(3))])
    pl.append(tg.ones(1))
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in pl) and len(pl) == 3
    pd = nn.ParameterDict({"scale": tg.ones(2)})
    pd["shift"] = tg.zeros(2)
    owner = nn.Module()
    owner.pl, owner.pd = pl, pd
    assert list(owner.state_dict()) == ["pl.0", "pl.1", "pl.2", "pd.scale", "pd.shift"]
    (pl[0].sum() + (pd["scale"] * 3).sum()).backward()
    assert pl[0].grad.tolist() == [1.0, 1.0] and pd["scale"].grad.tolist() == [3.0, 3.0]
    tg.save(owner.state_dict(), tmp_path / "p.tg")
    with tg.no_grad():
        pd["scale"].fill_(0.0)
    owner.load_state_dict(tg.load(tmp_path / "p.tg"))
    assert pd["scale"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match=r"ParameterList\[3\]: expected a Parameter or a Tensor, got float"):
        pl.append(1.0)
    with pytest.raises(TypeError, match="got ReLU"):
        pd["act"] = nn.ReLU()


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


# ---- activations and losses ----------------------------------------------------------------
TENSOR_ENGINES = engine_params([e for e in ENGINES if e.stage != "stage1"])
TARGET = np.array([2, 0, 3])                  # classes of the (3, 4) inputs below
IGNORED = np.array([2, -100, 3])              # the middle sample ignored
CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])


def softplus_ref(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def nll_ref(x, target, weight, reduction):
    kept = target != -100
    t = np.where(kept, target, 0)
    w = weight[t] * kept
    losses = -x[np.arange(len(t)), t] * w
    return {"none": losses, "sum": losses.sum(), "mean": losses.sum() / w.sum()}[reduction]


def _on(x, values, dtype=None):
    return tg.tensor(np.asarray(values).tolist(), dtype=dtype, device=x.device)


PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])   # class probabilities


# name: (function of float64 tensors, numpy's answer for the same arrays)
FUNCTIONS = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "LeakyReLU": (lambda x: nn.LeakyReLU()(x), lambda x: np.where(x > 0, x, 0.01 * x)),
    "elu": (lambda x: F.elu(x, alpha=1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x))),
    "ELU": (lambda x: nn.ELU()(x), lambda x: np.where(x > 0, x, np.expm1(x))),
    "SiLU": (lambda x: nn.SiLU()(x), lambda x: x / (1 + np.exp(-x))),
    "prelu_channels": (lambda x: F.prelu(x, _on(x, [0.1, -0.2, 0.3, 2.0], tg.float64)),
                       lambda x: np.where(x > 0, x, np.array([0.1, -0.2, 0.3, 2.0]) * x)),
    "PReLU": (lambda x: nn.PReLU(dtype=tg.float64, device=x.device)(x), lambda x: np.where(x > 0, x, 0.25 * x)),
    "Softplus": (lambda x: nn.Softplus(beta=2, threshold=3)(x), lambda x: softplus_ref(x, 2, 3)),
    "normalize": (lambda x: F.normalize(x), lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)),
    "normalize_p3_dim0": (lambda x: F.normalize(x, p=3, dim=0),
                          lambda x: x / (np.abs(x) ** 3).sum(0, keepdims=True) ** (1 / 3)),
    **{f"nll_loss_{r}": ((lambda r: lambda x: F.nll_loss(x, _on(x, IGNORED), _on(x, CLASS_WEIGHT, tg.float64),
                                                         reduction=r))(r),
                         (lambda r: lambda x: nll_ref(x, IGNORED, CLASS_WEIGHT, r))(r))
       for r in ("none", "sum", "mean")},
    "nll_loss_plain": (lambda x: F.nll_loss(x, _on(x, TARGET)),
                       lambda x: nll_ref(x, TARGET, np.ones(4), "mean")),
    "cross_entropy_probabilities": (
        lambda x: F.cross_entropy(x, _on(x, PROBS, tg.float64), weight=_on(x, CLASS_WEIGHT, tg.float64),
                                  label_smoothing=0.1),
        lambda x: -(np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)) * (PROBS * 0.9 + 0.1 / 4)
                    * CLASS_WEIGHT).sum(1).mean()),
    "huber_loss": (lambda x: F.huber_loss(x, _on(x, np.ones((3, 4)), tg.float64), delta=1.5),
                   lambda x: np.mean(np.where(np.abs(x - 1) < 1.5, 0.5 * (x - 1) ** 2, 1.5 * (np.abs(x - 1) - 0.75)))),
    "embedding": (lambda w: F.embedding(_on(w, [[1, 0], [1, 2]]), w),
                  lambda w: w[np.array([[1, 0], [1, 2]])]),
}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("engine", TENSOR_ENGINES)
def test_forward_matches_numpy_and_gradient_central_differences(engine, name):
    fn, reference = FUNCTIONS[name]
    x = np.random.default_rng(0).uniform(-3, 3, size=(3, 4))
    value = gradcheck(engine, fn, [x])
    np.testing.assert_allclose(value, reference(x), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("engine", TENSOR_ENGINES)
@pytest.mark.parametrize("shape, slopes", [((2, 3, 4), 3), ((2, 3), 1), ((5,), 1), ((2, 2, 2, 3), 2)])
def test_prelu_slopes_learn_per_channel(engine, shape, slopes):
    rng = np.random.default_rng(2)
    x, w = rng.uniform(-2, 2, size=shape), rng.uniform(0.1, 0.5, size=(slopes,))
    wide = w.reshape(slopes, *[1] * (len(shape) - 2)) if slopes > 1 else w
    value = gradcheck(engine, F.prelu, [x, w])
    np.testing.assert_allclose(value, np.where(x > 0, x, wide * x), rtol=1e-12)
    m = nn.PReLU(slopes, init=0.1)
    assert [n for n, _ in m.named_parameters()] == ["weight"] and m.weight.tolist() == [pytest.approx(0.1)] * slopes
    assert repr(m) == f"PReLU(num_parameters={slopes})"


def test_prelu_errors():
    with pytest.raises(ValueError, match=r"mismatch of parameter numbers and input channel size: weight has 2 "
                                         r"slopes, the input of shape \(4, 3\) has 3 channels"):
        F.prelu(tg.zeros(4, 3), tg.zeros(2))
    with pytest.raises(ValueError, match=r"weight must be 1-D \(one slope per channel\), got shape \(1, 1\)"):
        F.prelu(tg.zeros(4, 3), tg.zeros(1, 1))
    with pytest.raises(TypeError, match="input and weight must be Tensors, got Tensor and float"):
        F.prelu(tg.zeros(4, 3), 0.25)
    with pytest.raises(ValueError, match="num_parameters must be a positive int, got 0"):
        nn.PReLU(0)
    with pytest.raises(TypeError, match="must be a number"):
        nn.PReLU(init="0.25")


def test_embedding_padding_row_gets_no_gradient_and_errors():
    w = tg.tensor(np.arange(12.0).reshape(4, 3).tolist(), dtype=tg.float64, requires_grad=True)
    F.embedding(tg.tensor([[1, 3], [3, 0]]), w, padding_idx=-1).sum().backward()
    assert array(w.grad).tolist() == [[1] * 3, [1] * 3, [0] * 3, [0] * 3]   # row 3: padding
    with pytest.raises(IndexError, match="index 4 is out of range for a table of 4 rows"):
        F.embedding(tg.tensor([4]), w)
    with pytest.raises(TypeError, match="expected row numbers"):
        F.embedding(tg.tensor([1.0]), w)
    with pytest.raises(ValueError, match="padding_idx must be an int in"):
        F.embedding(tg.tensor([1]), w, padding_idx=4)
    with pytest.raises(ValueError, match="max_norm.* not supported"):
        F.embedding(tg.tensor([1]), w, max_norm=1.0)


def test_nll_loss_shapes_module_and_errors():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 5))                                 # (N, C, d): C second
    t = np.array([[0, 2, 1, 1, 0], [2, 2, 0, 1, 0]])
    moved = np.moveaxis(x, 1, -1).reshape(-1, 3)
    expected = nll_ref(moved, t.ravel(), np.ones(3), "none").reshape(2, 5)
    got = F.nll_loss(tg.tensor(x.tolist(), dtype=tg.float64), tg.tensor(t.tolist()), reduction="none")
    np.testing.assert_allclose(array(got), expected, rtol=1e-12)
    logits = tg.tensor(rng.normal(size=(4, 3)).tolist())
    target = tg.tensor([0, 2, 1, 1])
    assert nn.NLLLoss()(F.log_softmax(logits, dim=1), target).item() == pytest.approx(
        F.cross_entropy(logits, target).item(), rel=1e-6)
    assert F.nll_loss(logits[0], target[0]).shape == ()            # one unbatched sample
    assert math.isnan(F.nll_loss(logits, tg.tensor([-100] * 4)).item())   # all ignored: 0 / 0
    with pytest.raises(IndexError, match=r"target 3 at position 1 is not a class index: the input has 3"):
        F.nll_loss(logits, tg.tensor([0, 3, 1, 1]))
    with pytest.raises(ValueError, match=r"target of shape \(N, \.\.\.\)"):
        F.nll_loss(logits, tg.tensor([0, 1]))
    with pytest.raises(TypeError, match="expected class indices"):
        F.nll_loss(logits, tg.zeros(4))
    with pytest.raises(ValueError, match=r"weight must be a tensor of shape \(3,\)"):
        F.nll_loss(logits, target, weight=tg.ones(4))
    with pytest.raises(ValueError, match="reduction must be"):
        nn.NLLLoss(reduction="avg")
    with pytest.raises(ValueError, match="size_average and reduce are deprecated"):
        F.nll_loss(logits, target, None, True)              # PyTorch's positions


def test_activation_and_normalize_edge_cases():
    x = tg.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=tg.float64, requires_grad=True)
    out = F.normalize(x, dim=1)
    assert array(out).tolist() == [[0.0, 0.0], [0.6, 0.8]]        # a zero vector stays zero
    out.sum().backward()
    assert np.isfinite(array(x.grad)).all()
    assert array(F.normalize(x, p=float("inf"), dim=1)).tolist() == [[0.0, 0.0], [0.75, 1.0]]
    big = tg.tensor([800.0, -1.0], dtype=tg.float64, requires_grad=True)
    F.elu(big).sum().backward()                                     # e^800 is never taken
    assert array(big.grad).tolist() == [1.0, math.exp(-1.0)]
    for bad in (lambda: F.leaky_relu(x, "0.1"), lambda: nn.ELU(alpha=None)):
        with pytest.raises(TypeError, match="must be a number"):
            bad()
    with pytest.raises(ValueError, match="p must be positive"):
        F.normalize(x, p=0)
    with pytest.raises(ValueError, match="beta must be non-zero"):
        nn.Softplus(beta=0)
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)"


def test_identity_flatten_unflatten():
    x = tg.randn(2, 12)
    assert nn.Identity(54, unused="x")(x) is x
    y = nn.Unflatten(1, (3, -1))(x)
    assert y.shape == (2, 3, 4) and nn.Flatten()(y).tolist() == x.tolist()
    assert nn.Unflatten(-1, [2, 6])(x).shape == (2, 2, 6)
    with pytest.raises(TypeError, match="unflattened_size must be a non-empty tuple"):
        nn.Unflatten(1, 12)
    with pytest.raises(IndexError, match=r"dim 2 is out of range for an input of shape \(2, 12\)"):
        nn.Unflatten(2, (3, 4))(x)


# ---- nn.init -------------------------------------------------------------------------------
def check_moments(values, mean, var, mu4):
    """The sample mean and (biased) variance of n draws are within 5 standard errors of
    the distribution's: sd(mean) = sqrt(var / n), sd(variance) ~ sqrt((mu4 - var^2) / n),
    mu4 the fourth central moment. 5 standard errors: a false alarm about once in 10^6."""
    n = values.size
    assert abs(values.mean() - mean) < 5 * math.sqrt(var / n)
    assert abs(values.var() - var) < 5 * math.sqrt((mu4 - var ** 2) / n)


def uniform_moments(bound):                   # on [-bound, bound]: var (2b)^2/12, mu4 (2b)^4/80
    return 0.0, (2 * bound) ** 2 / 12, (2 * bound) ** 4 / 80


def normal_moments(std):
    return 0.0, std ** 2, 3 * std ** 4


def test_init_distributions_have_their_moments():
    tg.manual_seed(0)
    w = tg.zeros(64, 128)                      # fan_in 128, fan_out 64, 8192 draws
    k = 1 / math.sqrt(128)
    relu_std = math.sqrt(2) * k
    cases = [
        (lambda: init.uniform_(w, -0.5, 0.5), uniform_moments(0.5), 0.5),
        (lambda: init.normal_(w, 0.0, 0.2), normal_moments(0.2), None),
        (lambda: init.xavier_uniform_(w), uniform_moments(math.sqrt(6 / 192)), math.sqrt(6 / 192)),
        (lambda: init.xavier_normal_(w, gain=2.0), normal_moments(2 * math.sqrt(2 / 192)), None),
        (lambda: init.kaiming_uniform_(w, nonlinearity="relu"), uniform_moments(math.sqrt(3) * relu_std),
         math.sqrt(3) * relu_std),
        (lambda: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"),
         normal_moments(math.sqrt(2 / 64)), None),
    ]
    for fill, (mean, var, mu4), bound in cases:
        assert fill() is w
        values = array(w).ravel()
        check_moments(values, mean, var, mu4)
        if bound is not None:
            assert np.abs(values).max() <= bound * (1 + 1e-6)


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    tg.manual_seed(1)
    w = init.trunc_normal_(tg.zeros(8192), mean=1.0, std=2.0, a=-1.0, b=3.0)   # +-1 std
    values = array(w)
    assert values.min() >= -1.0 and values.max() <= 3.0
    phi, z = NormalDist().pdf(1.0), 2 * NormalDist().cdf(1.0) - 1   # density at 1, mass inside
    var = 4 * (1 - 2 * phi / z)                 # a symmetric truncation: the mean stays 1
    check_moments(values - 1.0, 0.0, var, 3 * var ** 2)   # the normal's mu4 bounds the truncated's


def test_init_is_seeded_in_place_and_matches_linear():
    p = nn.Parameter(tg.zeros(8, 16))
    tg.manual_seed(3)
    assert init.kaiming_normal_(p) is p
    first = p.tolist()
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    tg.manual_seed(3)
    assert init.kaiming_normal_(p).tolist() == first
    tg.manual_seed(4)
    assert init.kaiming_normal_(p).tolist() != first
    tg.manual_seed(5)
    layer = nn.Linear(16, 8)
    tg.manual_seed(5)                          # Linear's rule is kaiming_uniform_(a=sqrt 5)
    np.testing.assert_allclose(array(init.kaiming_uniform_(p, a=math.sqrt(5))), array(layer.weight), rtol=1e-6)
    assert init.constant_(p, 0.25).tolist() == [[0.25] * 16] * 8
    assert init.zeros_(p).sum().item() == 0 and init.ones_(p).sum().item() == 128


def test_calculate_gain_fans_and_errors():
    assert init.calculate_gain("linear") == init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == 5 / 3 and init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("selu") == 0.75
    conv = tg.zeros(8, 4, 3, 3)                 # fan_in 4*9 = 36, fan_out 8*9 = 72
    tg.manual_seed(0)
    bound = math.sqrt(3) * math.sqrt(2) / 6
    assert np.abs(array(init.kaiming_uniform_(conv, nonlinearity="relu"))).max() <= bound * (1 + 1e-6)
    for bad, error, match in [(lambda: init.calculate_gain("swish"), ValueError, "unsupported nonlinearity 'swish'"),
                              (lambda: init.calculate_gain("leaky_relu", "x"), ValueError, "not a valid number"),
                              (lambda: init.xavier_uniform_(tg.zeros(5)), ValueError, "fewer than 2 dimensions"),
                              (lambda: init.kaiming_normal_(conv, mode="fan"), ValueError, "mode 'fan' not supported"),
                              (lambda: init.normal_(tg.zeros(2, dtype=tg.int64)), TypeError, "floating-point"),
                              (lambda: init.uniform_([1.0]), TypeError, "expected a Tensor, got list"),
                              (lambda: init.uniform_(conv, 1, 0), ValueError, "a <= b"),
                              (lambda: init.trunc_normal_(conv, std=0), ValueError, "std > 0")]:
        with pytest.raises(error, match=match):
            bad()
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(tg.zeros(0, 3))


def test_module_dict_items_are_attributes_too():
    d = nn.ModuleDict(dict(wte=nn.Embedding(5, 3), h=nn.ModuleList([nn.Linear(3, 3)])))
    assert d.wte is d["wte"] and d.h[0] is d["h"][0]
    d.wte.weight = nn.Parameter(tg.zeros(5, 3))          # reached through the attribute, as a GPT ties weights
    assert d["wte"].weight.tolist() == [[0.0] * 3] * 5
    with pytest.raises(AttributeError, match="'ModuleDict' object has no attribute or key 'wpe'"):
        d.wpe
    p = nn.ParameterDict({"scale": tg.ones(2)})
    assert p.scale is p["scale"]


def test_attention_scale_must_be_a_number():
    q = tg.zeros(2, 2)
    with pytest.raises(TypeError, match="scale must be a number or None, got str"):
        F.scaled_dot_product_attention(q, q, q, scale="0.5")
    assert F.scaled_dot_product_attention(q, q, q, scale=2).shape == (2, 2)


def test_cross_entropy_probability_targets_and_huber_errors():
    x = tg.zeros(2, 3)
    assert F.cross_entropy(x, tg.ones(2, 3) / 3, reduction="none").shape == (2,)
    assert F.cross_entropy(x[0], tg.ones(3) / 3).shape == ()                      # one sample
    assert nn.CrossEntropyLoss()(x, tg.ones(2, 3) / 3).item() == pytest.approx(math.log(3))
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0, got 2"):
        F.cross_entropy(x, tg.ones(2, 3), label_smoothing=2)
    with pytest.raises(TypeError, match="expected class indices"):               # float, not the logits' shape
        F.cross_entropy(x, tg.ones(2))
    with pytest.raises(ValueError, match="delta must be a positive number"):
        F.huber_loss(x, x, delta=0)
    with pytest.raises(ValueError, match="HuberLoss: delta must be a positive number, got -1"):
        nn.HuberLoss(delta=-1)
    assert repr(nn.HuberLoss(delta=0.5)) == "HuberLoss(reduction='mean', delta=0.5)"


def test_deepcopy_copies_values_not_storage():
    import copy
    model = Tied()
    twin = copy.deepcopy(model)
    assert twin.emb.weight is twin.head.weight and twin.emb.weight is not model.emb.weight   # still tied
    assert isinstance(twin.emb.weight, nn.Parameter) and twin.emb.weight.requires_grad
    assert twin.emb.weight.tolist() == model.emb.weight.tolist()
    with tg.no_grad():
        twin.emb.weight.add_(1.0)
    assert twin.emb.weight.tolist() != model.emb.weight.tolist()
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(model.emb.weight * 2)
    ln = nn.LayerNorm(3, bias=False)
    assert ln.bias is None and [n for n, _ in ln.named_parameters()] == ["weight"]
    assert ln(tg.tensor([[1.0, 2.0, 3.0]])).sum().item() == pytest.approx(0.0, abs=1e-6)


# ---- inplace=True -----------------------------------------------------------------------------
def relu_ref(v):
    return max(v, 0.0)


def leaky_ref(v):
    return v if v > 0 else 0.1 * v


# (the in-place call, numpy's answer element by element, the out-of-place function)
INPLACE = [(lambda x: F.relu(x, inplace=True), relu_ref, F.relu),
           (lambda x: nn.ReLU(inplace=True)(x), relu_ref, F.relu),
           (lambda x: F.leaky_relu(x, 0.1, inplace=True), leaky_ref, lambda x: F.leaky_relu(x, 0.1)),
           (lambda x: nn.LeakyReLU(0.1, inplace=True)(x), leaky_ref, lambda x: F.leaky_relu(x, 0.1)),
           (lambda x: nn.ELU(inplace=True)(x), lambda v: v if v > 0 else math.expm1(v), F.elu),
           (lambda x: nn.SiLU(inplace=True)(x), lambda v: v / (1 + math.exp(-v)), F.silu),
           (lambda x: F.dropout(x, 0.0, inplace=True), lambda v: v, lambda x: x)]


@pytest.mark.parametrize("apply, reference, _", INPLACE)
def test_inplace_writes_into_the_input(apply, reference, _):
    data = np.array([[-2.0, -0.5], [0.0, 3.0]])
    x = tg.tensor(data.tolist(), dtype=tg.float64)
    view = x[1]                                           # another view of the same storage
    assert apply(x) is x
    np.testing.assert_allclose(array(x), np.vectorize(reference)(data), rtol=1e-12)
    np.testing.assert_allclose(array(view), np.vectorize(reference)(data)[1], rtol=1e-12)


@pytest.mark.parametrize("apply, reference, out_of_place", INPLACE)
def test_inplace_in_the_graph_gives_a_new_tensor_with_the_gradient(apply, reference, out_of_place):
    data = np.array([[-2.0, -0.5], [0.5, 3.0]])
    w, twin = (tg.tensor(data.tolist(), dtype=tg.float64, requires_grad=True) for _ in range(2))
    h = w * 1.0                                           # in the graph, not a leaf
    out = apply(h)
    np.testing.assert_allclose(array(out), np.vectorize(reference)(data), rtol=1e-12)
    np.testing.assert_array_equal(array(h), data)        # h is others' input: left as it was
    (out * out).sum().backward()
    out_twin = out_of_place(twin)
    (out_twin * out_twin).sum().backward()
    np.testing.assert_allclose(array(w.grad), array(twin.grad), rtol=1e-12)


def test_inplace_refuses_a_leaf_and_bumps_the_version():
    leaf = tg.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad is being used in an in-place"):
        F.relu(leaf, inplace=True)
    with tg.no_grad():
        assert F.relu(leaf, inplace=True) is leaf         # under no_grad: written, as PyTorch
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    x = tg.tensor([-1.0, 1.0])
    y = (w * x).sum()                                     # the product saved x for w's gradient
    F.relu(x, inplace=True)
    with pytest.raises(RuntimeError, match="modified in place afterwards"):
        y.backward()
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)" and repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1, inplace=False)"
