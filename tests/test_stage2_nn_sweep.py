"""The rest of PyTorch's nn a ported program calls (values and gradients in the op table's
nn_* rows, tests/nn_surface_rows.py): here the random activations by their definitions,
the in-place forms, the modules (their parameters, state_dict names and outputs against F
or numpy), the padding modules against numpy's pad, lazy modules, nn.Buffer, and the
errors PyTorch raises for bad input."""
import math
import warnings

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

from .engines import device_params


def t64(values):
    return tg.tensor(np.asarray(values).tolist(), dtype=tg.float64)


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a.tolist() if hasattr(a, "tolist") else a, dtype=float),
                               np.asarray(b, dtype=float), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4)) * 2


# ---- the random activations ------------------------------------------------------------------
def test_rrelu_draws_slopes_in_training_and_takes_their_mean_in_evaluation():
    x = t64(-np.abs(X) - 0.1)
    tg.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = np.array(y.tolist()) / np.array(x.tolist())
    assert slopes.min() >= 0.1 and slopes.max() < 0.3 and len(np.unique(slopes)) == slopes.size
    tg.manual_seed(3)
    close(F.rrelu(x, 0.1, 0.3, training=True), y.tolist())                  # the package's generator
    close(F.rrelu(x, 0.1, 0.3), np.array(x.tolist()) * 0.2)
    m = nn.RReLU(0.1, 0.3)
    close(m.eval()(x), np.array(x.tolist()) * 0.2)
    leaf = x.clone().requires_grad_(True)
    tg.manual_seed(5)
    out = F.rrelu(leaf, 0.1, 0.3, training=True)
    out.sum().backward()
    close(leaf.grad, np.array(out.tolist()) / np.array(x.tolist()))          # each element's slope


def test_gumbel_softmax_soft_and_hard():
    logits = t64(X.reshape(6, 4)).requires_grad_(True)
    tg.manual_seed(1)
    soft = F.gumbel_softmax(logits, tau=0.5)
    close(soft.sum(-1), np.ones(6))
    assert (np.array(soft.tolist()) > 0).all()
    tg.manual_seed(1)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = np.array(hard.tolist())
    assert ((h == 0) | (h == 1)).all() and (h.sum(-1) == 1).all()
    assert (h.argmax(-1) == np.array(soft.tolist()).argmax(-1)).all()       # the same noise, seeded
    weights = t64(RNG.normal(size=(6, 4)))
    (hard * weights).sum().backward()
    straight_through = logits.grad.tolist()
    logits.grad = None
    tg.manual_seed(1)
    (F.gumbel_softmax(logits, tau=0.5) * weights).sum().backward()
    close(straight_through, logits.grad.tolist())                           # the soft sample's gradient
    tg.manual_seed(2)
    assert F.gumbel_softmax(logits, dim=0).shape == (6, 4)
    close(F.gumbel_softmax(logits, dim=0).sum(0), np.ones(4))


ALPHA = 1.7580993408473766


def test_alpha_dropout_by_its_definition():
    x = t64(X)
    assert F.alpha_dropout(x, 0.2) is x and F.alpha_dropout(x, 0.0, training=True) is x
    p = 0.25
    a = 1 / math.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
    tg.manual_seed(4)
    y = np.array(F.alpha_dropout(x, p, training=True).tolist())
    kept = np.isclose(y, a * X + ALPHA * a * p, rtol=0, atol=1e-12)
    dropped = np.isclose(y, -ALPHA * a * (1 - p), rtol=0, atol=1e-12)
    assert (kept | dropped).all() and kept.any() and dropped.any()
    tg.manual_seed(4)
    y = np.array(F.feature_alpha_dropout(x, p, training=True).tolist())
    per_channel = np.isclose(y, a * X + ALPHA * a * p, rtol=0, atol=1e-12).all(-1)
    whole = np.isclose(y, -ALPHA * a * (1 - p), rtol=0, atol=1e-12).all(-1)
    assert (per_channel | whole).all()                                       # whole channels
    close(F.alpha_dropout(x, 1.0, training=True), np.zeros_like(X))
    m = nn.AlphaDropout(0.5)
    assert m.eval()(x) is x and "p=0.5" in repr(m)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FeatureAlphaDropout(1.5)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(t64([1.0, 2.0]), 0.5, training=True)


def test_selu_and_alpha_dropout_keep_mean_and_variance():
    tg.manual_seed(0)
    x = tg.randn(200000, dtype=tg.float64)
    y = F.alpha_dropout(F.selu(x), 0.2, training=True)
    assert abs(y.mean().item()) < 0.02 and abs(y.var().item() - 1) < 0.03


# ---- in-place forms -------------------------------------------------------------------------
@pytest.mark.parametrize("name, args, reference", [
    ("relu_", (), lambda x: np.maximum(x, 0)),
    ("elu_", (0.5,), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("celu_", (2.0,), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    ("selu_", (), lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    ("leaky_relu_", (0.2,), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("hardtanh_", (-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    ("threshold_", (0.1, 9.0), lambda x: np.where(x > 0.1, x, 9.0)),
    ("rrelu_", (), lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2)),
])
def test_in_place_forms_write_into_the_input(name, args, reference):
    x = t64(X)
    out = getattr(F, name)(x, *args)
    assert out is x
    close(x, reference(X))


@pytest.mark.parametrize("fn", [F.relu6, F.hardsigmoid, F.hardswish, F.mish, F.selu, F.celu, F.hardtanh])
def test_inplace_flag(fn):
    x = t64(X)
    expected = fn(x).tolist()
    assert fn(x, inplace=True) is x
    close(x, expected)


# ---- activation modules ---------------------------------------------------------------------
@pytest.mark.parametrize("module, function", [
    (nn.ReLU6(), F.relu6), (nn.Hardtanh(-2.0, 0.5), lambda x: F.hardtanh(x, -2.0, 0.5)),
    (nn.Hardsigmoid(), F.hardsigmoid), (nn.Hardswish(), F.hardswish), (nn.Mish(), F.mish),
    (nn.SELU(), F.selu), (nn.CELU(0.5), lambda x: F.celu(x, 0.5)), (nn.Softsign(), F.softsign),
    (nn.LogSigmoid(), F.logsigmoid), (nn.Tanhshrink(), F.tanhshrink), (nn.Softmin(1), lambda x: F.softmin(x, 1)),
    (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3)), (nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3)),
    (nn.Threshold(0.2, -1.0), lambda x: F.threshold(x, 0.2, -1.0)), (nn.GLU(1), lambda x: F.glu(x, 1)),
    (nn.LocalResponseNorm(2), lambda x: F.local_response_norm(x, 2)),
    (nn.Softmax2d(), lambda x: F.softmax(x, -3)),
])
def test_activation_modules_are_their_functions(module, function):
    x = t64(X.reshape(2, 4, 3))
    close(module(x), function(x).tolist())
    assert list(module.state_dict()) == []


def test_softmin_and_softmax2d_dims():
    x = t64(X)
    close(F.softmin(x), F.softmax(-x, 0).tolist())                        # 3-d: PyTorch's implicit dim 0
    close(F.softmin(x[0]), F.softmax(-x[0], 1).tolist())
    close(nn.Softmax2d()(x).sum(0), np.ones((3, 4)))
    with pytest.raises(ValueError, match="3 or 4"):
        nn.Softmax2d()(x[0])


def test_activation_errors():
    x = t64(X)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(x, 1)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 1.0, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(x, -0.5)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1)
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(x[0], 2)
    with pytest.raises(TypeError, match="must be a number"):
        F.celu(x, "1")


# ---- losses ---------------------------------------------------------------------------------
A, B, C = (RNG.normal(size=(4, 5)) for _ in range(3))
Y = np.array([1.0, -1.0, 1.0, -1.0])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_loss_reductions(reduction):
    a, b, y = t64(A), t64(B), t64(Y)
    per = {
        "margin": np.maximum(0, -Y * (A[:, 0] - B[:, 0]) + 0.1),
        "soft": np.log1p(np.exp(-np.sign(B) * A)),
        "poisson": np.exp(A) - np.abs(B) * A,
        "hinge": np.where(np.sign(B) == 1, A, np.maximum(0, 1 - A)),
    }
    got = {
        "margin": F.margin_ranking_loss(a[:, 0], b[:, 0], y, margin=0.1, reduction=reduction),
        "soft": F.soft_margin_loss(a, b.sign(), reduction=reduction),
        "poisson": F.poisson_nll_loss(a, b.abs(), reduction=reduction),
        "hinge": F.hinge_embedding_loss(a, b.sign(), reduction=reduction),
    }
    for name, values in per.items():
        want = values if reduction == "none" else values.sum() if reduction == "sum" else values.mean()
        close(got[name], want)


def test_loss_modules_are_their_functions():
    a, b, c, y = t64(A), t64(B), t64(C), t64(Y)
    labels = tg.tensor([1, 0, 4, 2])
    weight = t64([1.0, 2.0, 0.5, 1.5, 1.0])
    pairs = [
        (nn.KLDivLoss(reduction="batchmean")(a.log_softmax(1), b.softmax(1)),
         F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean")),
        (nn.MarginRankingLoss(0.2)(a[:, 0], b[:, 0], y), F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.2)),
        (nn.HingeEmbeddingLoss(0.5)(a, b.sign()), F.hinge_embedding_loss(a, b.sign(), 0.5)),
        (nn.CosineEmbeddingLoss(0.1, reduction="sum")(a, b, y), F.cosine_embedding_loss(a, b, y, 0.1, reduction="sum")),
        (nn.TripletMarginLoss(p=1, swap=True)(a, b, c), F.triplet_margin_loss(a, b, c, p=1, swap=True)),
        (nn.TripletMarginWithDistanceLoss(margin=0.5)(a, b, c), F.triplet_margin_loss(a, b, c, margin=0.5)),
        (nn.SoftMarginLoss()(a, b.sign()), F.soft_margin_loss(a, b.sign())),
        (nn.MultiLabelSoftMarginLoss(weight)(a, (b > 0).double()),
         F.multilabel_soft_margin_loss(a, (b > 0).double(), weight)),
        (nn.MultiMarginLoss(p=2, weight=weight)(a, labels), F.multi_margin_loss(a, labels, p=2, weight=weight)),
        (nn.MultiLabelMarginLoss()(a, tg.tensor([[1, -1, 0, 0, 0]] * 4)),
         F.multilabel_margin_loss(a, tg.tensor([[1, -1, 0, 0, 0]] * 4))),
        (nn.PoissonNLLLoss(log_input=False, full=True)(b.abs(), a.abs()),
         F.poisson_nll_loss(b.abs(), a.abs(), log_input=False, full=True)),
        (nn.GaussianNLLLoss(full=True)(a, b, c.abs()), F.gaussian_nll_loss(a, b, c.abs(), full=True)),
        (nn.CosineSimilarity(0)(a, b), F.cosine_similarity(a, b, 0)),
        (nn.PairwiseDistance(1.0, keepdim=True)(a, b), F.pairwise_distance(a, b, 1.0, keepdim=True)),
    ]
    for module_value, function_value in pairs:
        close(module_value, function_value.tolist())
    assert list(nn.MultiMarginLoss(weight=weight).state_dict()) == ["weight"]
    assert list(nn.MultiLabelSoftMarginLoss(weight).state_dict()) == ["weight"]


def test_kl_div_mean_warns_and_log_target_agrees():
    p, q = t64(A).log_softmax(1), t64(B).log_softmax(1)
    with pytest.warns(UserWarning, match="batchmean"):
        mean = F.kl_div(p, q.exp())
    close(mean, (np.exp(q.tolist()) * (np.array(q.tolist()) - np.array(p.tolist()))).mean())
    close(F.kl_div(p, q, reduction="sum", log_target=True), F.kl_div(p, q.exp(), reduction="sum").tolist())
    zero_target = F.kl_div(p, t64(np.zeros((4, 5))), reduction="sum")       # 0 log 0 = 0
    assert zero_target.item() == 0.0


def test_gaussian_nll_variance_shapes_and_clamp():
    a, b = t64(A), t64(B)
    var = t64(np.abs(C)).requires_grad_(True)
    close(F.gaussian_nll_loss(a, b, 0.5, reduction="sum"),
          (0.5 * (np.log(0.5) + (A - B) ** 2 / 0.5)).sum())
    tiny = t64(np.full((4, 5), 1e-9)).requires_grad_(True)
    F.gaussian_nll_loss(a, b, tiny, reduction="sum").backward()
    # the value at the clamped 1e-6, the gradient as if unclamped: d/dv of (log v + d^2 / v) / 2 at v = 1e-6
    close(tiny.grad, 0.5 * (1 / 1e-6 - (A - B) ** 2 / 1e-12), tol=1e-6)
    F.gaussian_nll_loss(a, b, var[:, :1]).backward()                        # one variance per row
    assert var.grad.shape == (4, 5)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(a, b, t64(np.ones((4, 2))))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(a, b, -1.0)


def test_loss_errors():
    a, b = t64(A), t64(B)
    with pytest.raises(RuntimeError, match="same dimension"):
        F.margin_ranking_loss(a[:, 0], b, t64(Y))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(a, tg.tensor([0, 1, 2, 3]), p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(a, tg.tensor([0, 1, 2, 5]))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(a, tg.tensor([[0, 7, -1, 0, 0]] * 4))
    with pytest.raises(TypeError, match="class indices"):
        F.multi_margin_loss(a, t64([0.0, 1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.kl_div(a, b, reduction="avg")
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, b, b, margin=0.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_loss(a, b, b[0])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors"):
        F.pdist(a.unsqueeze(0))
    with pytest.raises(ValueError, match="reduction"):
        nn.SoftMarginLoss(reduction="avg")
    with pytest.raises(ValueError, match="deprecated"):
        F.soft_margin_loss(a, b, size_average=True)


def test_distance_edge_cases():
    x = t64([[0.0, 0.0], [3.0, 4.0]])
    close(F.cosine_similarity(x, x), [0.0, 1.0])                            # a zero vector: 0, not nan
    close(F.pairwise_distance(t64(1.0), t64(3.0)), 2.0 - 1e-6)
    assert F.pdist(t64(np.ones((1, 3)))).shape == (0,)
    close(F.pdist(x, p=0), [2.0])                                           # p = 0 counts differences
    leaf = x.clone().requires_grad_(True)
    F.pdist(leaf).sum().backward()
    close(leaf.grad, [[-0.6, -0.8], [0.6, 0.8]])


# ---- padding modules --------------------------------------------------------------------------
NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", ["Zero", "Constant", "Reflection", "Replication", "Circular"])
def test_padding_modules_against_numpy(kind, n):
    x = RNG.normal(size=(2, 3, 4, 5)[:1 + n] if n < 3 else (1, 3, 4, 5))
    sizes = (1, 2, 2, 0, 1, 2)[:2 * n]
    cls = getattr(nn, f"{kind}Pad{n}d")
    module = cls(sizes, 1.5) if kind == "Constant" else cls(sizes)
    assert module.padding == sizes
    widths = [(0, 0)] * (x.ndim - n) + [(sizes[2 * d], sizes[2 * d + 1]) for d in reversed(range(n))]
    if kind in ("Zero", "Constant"):
        want = np.pad(x, widths, constant_values=1.5 if kind == "Constant" else 0.0)
    else:
        want = np.pad(x, widths, mode=NUMPY_MODE[{"Reflection": "reflect", "Replication": "replicate",
                                                   "Circular": "circular"}[kind]])
    close(module(t64(x)), want)
    assert (cls(2, 0.0) if kind == "Constant" else cls(2)).padding == (2,) * (2 * n)


def test_padding_module_errors():
    with pytest.raises(ValueError, match="4 ints"):
        nn.ZeroPad2d((1, 2, 3))
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.ReflectionPad2d(1)(t64(np.ones((3, 3))))


# ---- pooling --------------------------------------------------------------------------------
def test_adaptive_max_pool_indices_pick_the_maxima():
    for n, shape, out in ((1, (2, 3, 7), 3), (2, (2, 3, 5, 7), (2, 4)), (3, (1, 3, 5, 7), (2, 3, 2))):
        xs = t64(RNG.normal(size=shape))
        values, where = getattr(F, f"adaptive_max_pool{n}d")(xs, out, return_indices=True)
        planes = np.array(xs.tolist()).reshape(*shape[:-n], -1)
        picked = np.take_along_axis(planes, np.array(where.tolist()).reshape(*shape[:-n], -1), -1)
        close(values.reshape(*shape[:-n], -1), picked)
        module = getattr(nn, f"AdaptiveMaxPool{n}d")(out, return_indices=True)
        close(module(xs)[1], where.tolist())


def test_max_unpool_inverts_max_pool_where_it_can():
    x = t64(np.abs(RNG.normal(size=(1, 2, 4, 6))) + 0.1)      # positive: the zeros around are no maxima
    y, where = F.max_pool2d(x, 2, return_indices=True)
    up = nn.MaxUnpool2d(2)(y, where)
    assert up.shape == x.shape
    close(F.max_pool2d(up, 2), y.tolist())
    close(F.max_unpool2d(y, where, 2, output_size=(1, 2, 5, 7)).shape, (1, 2, 5, 7))
    with pytest.raises(ValueError, match="output_size"):
        F.max_unpool2d(y, where, 2, output_size=(9, 9))
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, where + 100, 2)
    with pytest.raises(TypeError, match="int64"):
        F.max_unpool2d(y, where.double(), 2)


def test_pool_modules():
    x = t64(np.abs(RNG.normal(size=(1, 2, 4, 4, 6))) + 0.1)
    close(nn.MaxPool3d(2)(x), F.max_pool3d(x, 2).tolist())
    close(nn.AvgPool3d(2, stride=1)(x), F.avg_pool3d(x, 2, stride=1).tolist())
    close(nn.AdaptiveAvgPool3d((1, 2, 3))(x), F.adaptive_avg_pool3d(x, (1, 2, 3)).tolist())
    close(nn.LPPool2d(3, 2)(x[0]), np.cbrt(F.avg_pool2d(x[0] ** 3, 2).tolist()) * np.cbrt(4))
    close(nn.LPPool1d(1, 3)(x[0, :, 0]), (F.avg_pool1d(x[0, :, 0], 3) * 3).tolist())
    close(F.lp_pool2d(x[0], math.inf, 2), F.max_pool2d(x[0].abs(), 2).tolist())
    values, where = F.max_pool3d_with_indices(x, 2)
    close(nn.MaxUnpool3d(2)(values, where).sum(), values.sum().item())
    assert F.max_pool1d_with_indices(x[0, :, 0], 2)[1].dtype is tg.int64


# ---- layers ---------------------------------------------------------------------------------
def test_module_parameters_and_state_dict_names_are_pytorchs():
    names = {
        nn.Bilinear(2, 3, 4): ["weight", "bias"],
        nn.Bilinear(2, 3, 4, bias=False): ["weight"],
        nn.EmbeddingBag(5, 3): ["weight"],
        nn.BatchNorm3d(3): ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"],
        nn.InstanceNorm3d(3, affine=True): ["weight", "bias"],
        nn.ConvTranspose3d(2, 3, 2): ["weight", "bias"],
        nn.DataParallel(nn.Linear(2, 3)): ["module.weight", "module.bias"],
        nn.Fold(4, 2): [], nn.Unfold(2): [], nn.ChannelShuffle(2): [], nn.ZeroPad2d(1): [],
    }
    for module, expected in names.items():
        assert list(module.state_dict()) == expected, type(module).__name__
    assert nn.Bilinear(2, 3, 4).weight.shape == (4, 2, 3)
    assert nn.ConvTranspose3d(2, 6, (1, 2, 3), groups=2).weight.shape == (2, 3, 1, 2, 3)
    bound = 1 / math.sqrt(2)
    assert np.abs(np.array(nn.Bilinear(2, 30, 40).weight.tolist())).max() <= bound


def test_layer_modules_compute_their_functions():
    x1, x2 = t64(RNG.normal(size=(3, 2))), t64(RNG.normal(size=(3, 4)))
    m = nn.Bilinear(2, 4, 5).double()
    close(m(x1, x2), F.bilinear(x1, x2, m.weight, m.bias).tolist())
    close(m(x1, x2), np.einsum("bi,oij,bj->bo", x1.tolist(), m.weight.tolist(), x2.tolist()) + m.bias.tolist())
    bag = nn.EmbeddingBag(6, 3, mode="max", padding_idx=2)
    assert bag.weight[2].tolist() == [0.0, 0.0, 0.0]
    close(bag(tg.tensor([[1, 2], [2, 2]])), [np.max(bag.weight[[1]].tolist(), 0), [0.0] * 3])
    x = t64(RNG.normal(size=(1, 2, 4, 5)))
    close(nn.Fold((4, 5), 2)(nn.Unfold(2)(x)), F.fold(F.unfold(x, 2), (4, 5), 2).tolist())
    close(nn.ChannelShuffle(2)(t64(np.arange(4.0).reshape(1, 4, 1))).reshape(-1), [0.0, 2.0, 1.0, 3.0])
    close(nn.UpsamplingBilinear2d(scale_factor=2)(x),
          F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True).tolist())
    close(nn.UpsamplingNearest2d(size=(8, 10))(x), F.interpolate(x, size=(8, 10)).tolist())
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        close(F.upsample_bilinear(x, size=(6, 6)), F.interpolate(x, (6, 6), mode="bilinear", align_corners=True).tolist())
        close(F.upsample_nearest(x, scale_factor=2), F.interpolate(x, scale_factor=2).tolist())
    dp = nn.DataParallel(nn.Linear(5, 2).double())
    close(dp(x), dp.module(x).tolist())
    assert dp.device_ids == []
    z = t64(RNG.normal(size=(2, 3, 2, 2, 2)))
    close(nn.BatchNorm3d(3).double()(z).mean((0, 2, 3, 4)), np.zeros(3))
    close(nn.InstanceNorm3d(3)(z).mean((2, 3, 4)), np.zeros((2, 3)))


def test_layer_errors():
    with pytest.raises(RuntimeError, match="input2 size does not match weight size"):
        F.bilinear(t64(np.ones((2, 3))), t64(np.ones((2, 4))), t64(np.ones((5, 3, 3))))
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(t64(np.ones((1, 6, 2))), 4)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(t64(np.ones((1, 3, 3))), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(t64(np.ones((1, 2, 3))), (1, 1, 2), align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(t64(np.ones((1, 2, 3))), (1, 1, 2, 2))
    w = t64(np.ones((5, 2)))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(tg.tensor([1, 2, 3]), w, tg.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(tg.tensor([[1, 2]]), w, mode="mean", per_sample_weights=t64([[1.0, 1.0]]))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(tg.tensor([[1, 2]]), w, tg.tensor([0]))
    with pytest.raises(IndexError, match="out of range"):
        F.embedding_bag(tg.tensor([[1, 5]]), w)
    with pytest.raises(ValueError, match="non-decreasing"):
        F.embedding_bag(tg.tensor([1, 2, 3]), w, tg.tensor([0, 2, 1]))


def test_affine_grid_identity_is_the_normalized_pixel_centres():
    theta = t64([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = np.array(F.affine_grid(theta, (1, 1, 2, 4), align_corners=False).tolist())
    close(grid[0, :, :, 0], [[-0.75, -0.25, 0.25, 0.75]] * 2)
    close(grid[0, :, :, 1], [[-0.5] * 4, [0.5] * 4])
    cube = F.affine_grid(t64(np.eye(4)[None, :3]), (1, 1, 2, 3, 4), align_corners=True)
    assert cube.shape == (1, 2, 3, 4, 3)
    close(cube[0, :, 0, 0, 2], [-1.0, 1.0])


# ---- lazy modules, Buffer, parameter --------------------------------------------------------
def test_lazy_modules_infer_their_input_size_at_the_first_call():
    m = nn.LazyLinear(4)
    weight = m.weight
    assert isinstance(weight, nn.UninitializedParameter) and m.has_uninitialized_params()
    optimizer = tg.optim.SGD(m.parameters(), lr=0.1)
    y = m(tg.randn(2, 3))
    assert type(m) is nn.Linear and m.in_features == 3 and y.shape == (2, 4)
    assert m.weight is weight and type(weight) is nn.Parameter and weight.shape == (4, 3)
    assert list(m.state_dict()) == ["weight", "bias"]
    y.sum().backward()
    before = weight.tolist()
    optimizer.step()                                                         # the optimizer holds the real tensor
    assert weight.tolist() != before
    conv = nn.LazyConv2d(5, 3, padding=1, bias=False)
    conv.eval()
    assert conv(tg.randn(1, 2, 4, 4)).shape == (1, 5, 4, 4)
    assert type(conv) is nn.Conv2d and conv.weight.shape == (5, 2, 3, 3) and conv.bias is None
    assert not conv.training
    assert nn.LazyConv1d(2, 3)(tg.randn(4, 7)).shape == (2, 5)              # unbatched (C, L)
    assert nn.LazyConvTranspose1d(2, 3, stride=2)(tg.randn(1, 4, 5)).shape == (1, 2, 11)
    norm = nn.LazyBatchNorm1d()
    norm(tg.randn(4, 6))
    assert type(norm) is nn.BatchNorm1d and norm.running_mean.shape == (6,) and norm.num_features == 6
    assert list(norm.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    inst = nn.LazyInstanceNorm2d(affine=True)
    assert inst(tg.randn(3, 2, 2)).shape == (3, 2, 2) and inst.weight.shape == (3,)


def test_buffer_assignment_registers_a_buffer():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.stats = nn.Buffer(tg.zeros(2))
            self.cache = nn.Buffer(tg.ones(3), persistent=False)

    m = Model()
    assert type(m.stats) is tg.Tensor
    assert [n for n, _ in m.named_buffers()] == ["stats", "cache"]
    assert list(m.state_dict()) == ["stats", "lin.weight", "lin.bias"]
    assert nn.parameter.Parameter is nn.Parameter
    p = nn.parameter.UninitializedParameter()
    p.materialize((2, 3), dtype=tg.float64)
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype is tg.float64 and p.requires_grad
    b = nn.UninitializedBuffer()
    b.materialize(4)
    assert type(b) is tg.Tensor and b.shape == (4,)


# ---- nn.utils ---------------------------------------------------------------------------------
def test_parameters_to_vector_and_back():
    m = nn.Linear(2, 3)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (9,)
    close(vec, np.concatenate([np.ravel(m.weight.tolist()), m.bias.tolist()]))
    nn.utils.vector_to_parameters(tg.arange(9, dtype=tg.float32), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] and m.bias.tolist() == [6.0, 7.0, 8.0]
    with pytest.raises(ValueError, match="9 elements"):
        nn.utils.vector_to_parameters(tg.zeros(8), m.parameters())


def test_clip_grad_value():
    m = nn.Linear(2, 2)
    (m(tg.ones(1, 2)) * 100).sum().backward()
    nn.utils.clip_grad_value_(m.parameters(), 0.5)
    assert max(abs(v) for p in m.parameters() for v in np.ravel(p.grad.tolist())) == 0.5
    p = tg.zeros(4, dtype=tg.float64, requires_grad=True)
    p.grad = t64([1.0, -3.0, math.nan, 0.2])
    nn.utils.clip_grad_value_(p, 0.5)                   # one tensor; nan stays nan, as clamp keeps it
    close(p.grad, [0.5, -0.5, math.nan, 0.2])
    nn.utils.clip_grad_value_([p], -0.25)               # min > max: clamp gives max, as PyTorch's
    close(p.grad, [-0.25, -0.25, math.nan, -0.25])


def _reading(self, *args):
    raise AssertionError("clip_grad_norm_ read a value back")


def _pnorm(values, p):
    return np.abs(values).max() if p == math.inf else (np.abs(values) ** p).sum() ** (1 / p)


@pytest.mark.parametrize("device", device_params("python", "cpu", "cpu:lazy"))
@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.0])
def test_clip_grad_norm_scales_by_pytorchs_coefficient_without_reading_a_value(device, norm_type, monkeypatch):
    grads = [RNG.normal(size=s) for s in ((3, 4), (5,), ())]
    total = _pnorm([_pnorm(g, norm_type) for g in grads], norm_type)
    params = [tg.zeros(*g.shape, dtype=tg.float64, device=device, requires_grad=True) for g in grads]
    params.append(tg.zeros(2, dtype=tg.float64, device=device, requires_grad=True))    # no grad: left out
    for max_norm in (total * 2, total / 2, 0.0, -1.0):       # above, below, and PyTorch's unchecked <= 0
        for p, g in zip(params, grads):
            p.grad = tg.tensor(g.tolist(), dtype=tg.float64, device=device)
        with monkeypatch.context() as m:
            for name in ("item", "tolist", "numpy", "__bool__", "__float__"):
                m.setattr(tg.Tensor, name, _reading)
            norm = nn.utils.clip_grad_norm_((p for p in params), max_norm, norm_type)
        assert isinstance(norm, tg.Tensor) and norm.shape == () and norm.dtype is tg.float64
        assert norm.device == device
        close(norm, total)
        for p, g in zip(params, grads):
            close(p.grad, g * min(max_norm / (total + 1e-6), 1.0))


def test_clip_grad_norm_edge_cases():
    p = tg.zeros(2, requires_grad=True)
    assert nn.utils.clip_grad_norm_(p, 1.0).tolist() == 0.0 and nn.utils.clip_grad_norm_([], 1.0).shape == ()
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((q for q in []), 1.0)
    p.grad = tg.tensor([3.0, 4.0])
    norm = nn.utils.clip_grad_norm_(p, 1.0)                     # one tensor, float32: the norm is too
    assert norm.dtype is tg.float32 and f"{norm:.3f}" == "5.000"
    close(p.grad, np.float32(1.0) / np.float32(5.0 + 1e-6) * np.array([3.0, 4.0], dtype=np.float32), 1e-7)
    wide = tg.zeros(1, dtype=tg.float64, requires_grad=True)
    wide.grad = t64([12.0])
    p.grad = tg.tensor([3.0, 4.0])
    norm = nn.utils.clip_grad_norm_([p, wide], 26.0, "inf")     # mixed dtypes: promoted, as PyTorch's stack
    assert norm.dtype is tg.float64 and norm.item() == 12.0
    close(wide.grad, [12.0])
    p.grad = tg.tensor([3.0, math.nan])
    with pytest.raises(RuntimeError, match="total norm of order 2.0 .* is non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert math.isnan(nn.utils.clip_grad_norm_(p, 1.0, foreach=True).item())
    assert all(math.isnan(v) for v in p.grad.tolist())          # scaled by the nan norm, as PyTorch


def test_weight_norm_splits_length_and_direction():
    m = nn.Linear(3, 4).double()
    w = np.array(m.weight.tolist())
    nn.utils.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"] and type(m).__name__ == "Linear"
    close(m.weight_g, np.linalg.norm(w, axis=1, keepdims=True))
    close(m.weight, w)
    x = t64(RNG.normal(size=(2, 3)))
    m(x).sum().backward()
    # d/dg of sum(x (g v / |v|)^T) per row: (sum of x) . v / |v|
    close(m.weight_g.grad, (np.array(x.tolist()).sum(0) @ w.T / np.linalg.norm(w, axis=1))[:, None])
    nn.utils.remove_weight_norm(m)
    assert type(m) is nn.Linear and list(m.state_dict()) == ["bias", "weight"]
    close(m.weight, w)
    whole = nn.utils.weight_norm(nn.Linear(3, 4), dim=None)
    assert whole.weight_g.shape == ()


def test_spectral_norm_divides_by_the_largest_singular_value():
    conv = nn.Conv2d(2, 3, 2).double()
    nn.utils.spectral_norm(conv, n_power_iterations=30)
    assert list(conv.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    conv(t64(RNG.normal(size=(1, 2, 3, 3))))
    w = np.array(conv.weight.tolist()).reshape(3, -1)
    assert abs(np.linalg.svd(w)[1][0] - 1) < 1e-9
    conv.eval()
    close(conv.weight.reshape(3, -1), w)                                    # eval: u and v as they are
    nn.utils.remove_spectral_norm(conv)
    assert type(conv) is nn.Conv2d and list(conv.state_dict()) == ["bias", "weight"]


def test_parametrize_symmetric_weight():
    P = nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()

    layer = nn.Linear(3, 3).double()
    P.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and P.type_before_parametrizations(layer) is nn.Linear
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert P.is_parametrized(layer) and P.is_parametrized(layer, "weight") and not P.is_parametrized(layer, "bias")
    w = np.array(layer.weight.tolist())
    close(w, w.T)
    layer(t64(RNG.normal(size=(2, 3)))).sum().backward()
    assert layer.parametrizations.weight.original.grad is not None
    layer.weight = t64(np.arange(9.0).reshape(3, 3))                         # stored as its right inverse
    close(layer.weight, np.triu(np.arange(9.0).reshape(3, 3)) + np.triu(np.arange(9.0).reshape(3, 3), 1).T)
    with P.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    P.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and list(layer.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(layer, "weight", nn.Flatten(0))


def test_ctc_loss_impossible_targets_unbatched_and_errors():
    lp = t64(RNG.normal(size=(3, 2, 4))).log_softmax(-1)
    targets = tg.tensor([[1, 1], [2, 3]])
    losses = F.ctc_loss(lp, targets, [3, 1], [2, 2], reduction="none")       # 1 frame cannot hold 2 labels
    assert math.isfinite(losses[0].item()) and losses[1].item() == math.inf
    assert F.ctc_loss(lp, targets, [3, 1], [2, 2], reduction="none", zero_infinity=True)[1].item() == 0.0
    close(nn.CTCLoss(reduction="sum", zero_infinity=True)(lp, targets, [3, 1], [2, 2]), losses[0].item())
    one = F.ctc_loss(lp[:, 0], targets[0], 3, 2, reduction="none")
    close(one, losses[0].item())
    # a single frame and label: -log p(label)
    close(F.ctc_loss(lp[:1], tg.tensor([[3], [2]]), [1, 1], [1, 1], reduction="none"),
          [-lp[0, 0, 3].item(), -lp[0, 1, 2].item()])
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 3"):
        F.ctc_loss(lp, targets, [4, 1], [2, 2])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, targets, [3, 3], [2, 2], blank=4)
    with pytest.raises(IndexError, match="classes 0 to 3"):
        F.ctc_loss(lp, tg.tensor([[1, 7], [2, 3]]), [3, 3], [2, 2])
    with pytest.raises(RuntimeError, match="at least 3 at dimension 1"):
        F.ctc_loss(lp, targets, [3, 3], [3, 2])


def test_grid_sample_identity_nearest_and_errors():
    x = t64(RNG.normal(size=(2, 3, 4, 5)))
    for align in (False, True):
        theta = t64(np.tile([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], (2, 1, 1)))
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
        close(F.grid_sample(x, grid, align_corners=align), x.tolist(), tol=1e-12)
        close(F.grid_sample(x, grid, mode="nearest", align_corners=align), x.tolist())
    # pixel 1.5 (between columns 1 and 2) rounds to 2, halves to even
    at_half = t64([[[[2 * 1.5 / 4 - 1, -1.0]]]])
    close(F.grid_sample(x[:1], at_half, mode="nearest", align_corners=True).reshape(-1), np.array(x.tolist())[0, :, 0, 2])
    outside = t64([[[[3.0, 3.0]]]])
    close(F.grid_sample(x[:1], outside, align_corners=False).reshape(-1), np.zeros(3))
    close(F.grid_sample(x[:1], outside, padding_mode="border", align_corners=True).reshape(-1),
          np.array(x.tolist())[0, :, 3, 4])
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, t64(np.zeros((2, 1, 1, 2))), padding_mode="wrap")
    with pytest.raises(RuntimeError, match="expected grid of shape"):
        F.grid_sample(x, t64(np.zeros((1, 1, 1, 2))))


def test_sync_batchnorm_cross_map_lrn_and_nll_loss_2d():
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.ModuleList([nn.BatchNorm1d(3)]))
    keys = list(model.state_dict())
    bn = model[1]
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model and type(model[1]) is nn.SyncBatchNorm and type(model[2][0]) is nn.SyncBatchNorm
    assert list(model.state_dict()) == keys and model[1].weight is bn.weight
    x = tg.randn(4, 3, 2, 2)
    close(model[1](x), F.batch_norm(x, None, None, bn.weight, bn.bias, training=True).tolist(), tol=1e-6)
    x = t64(RNG.normal(size=(1, 4, 2, 3)))
    close(nn.CrossMapLRN2d(3, alpha=0.1)(x), F.local_response_norm(x, 3, alpha=0.1).tolist())
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        nn.CrossMapLRN2d(3)(x[0])
    logp = x.log_softmax(1)
    target = tg.tensor([[[0, 1, 3], [2, 2, 1]]])
    close(nn.NLLLoss2d()(logp, target), F.nll_loss(logp, target).item())
