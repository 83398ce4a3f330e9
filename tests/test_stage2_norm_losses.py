"""Normalization (stage2_tensor/normalization_functions.py, nn/normalization.py) and the
losses of stage2_tensor/loss_functions.py with cross_entropy's weight and label_smoothing:
values against numpy in float64, gradients by central differences on every stage2 and stage3 engine,
BatchNorm's running statistics, modes and buffers, each bad argument named, and PyTorch
as an oracle where it is installed."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

from .engines import ENGINES, engine_params
from .gradcheck import gradcheck

ENGINES_ = engine_params([e for e in ENGINES if e.stage != "stage1"])
RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4, 2))                   # (N, C, L)
W, B = RNG.uniform(0.5, 1.5, size=4), RNG.normal(size=4)
EPS = 1e-5


def const(a, like):
    """A float64 tensor on like's device that takes no gradient (running statistics...)."""
    return tg.tensor(np.asarray(a).tolist(), dtype=tg.float64, device=like.device)


def np_norm(x, axes, eps=EPS):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def per_channel(v, ndim):
    return v.reshape(-1, *([1] * (ndim - 2)))


def np_group_norm(x, groups, w, b):
    g = np_norm(x.reshape(x.shape[0], groups, -1), (2,)).reshape(x.shape)
    return g * per_channel(w, x.ndim) + per_channel(b, x.ndim)


def np_log_softmax(x, axis=1):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


RUNNING_MEAN, RUNNING_VAR = RNG.normal(size=4), RNG.uniform(0.5, 2, size=4)

# name: (the call on tensors, its numpy definition, the inputs it differentiates)
NORMS = {
    "batch_norm_training": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: np_norm(x, (0, 2)) * per_channel(w, 3) + per_channel(b, 3), [X, W, B]),
    "batch_norm_eval": (
        lambda x, w, b: F.batch_norm(x, const(RUNNING_MEAN, x), const(RUNNING_VAR, x), w, b),
        lambda x, w, b: ((x - per_channel(RUNNING_MEAN, 3)) / np.sqrt(per_channel(RUNNING_VAR, 3) + EPS)
                         * per_channel(w, 3) + per_channel(b, 3)), [X, W, B]),
    "batch_norm_2d_no_affine": (
        lambda x: F.batch_norm(x, None, None, training=True, eps=0.1),
        lambda x: np_norm(x, (0, 2, 3), eps=0.1), [X.reshape(3, 2, 2, 2)]),
    "instance_norm": (
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        lambda x, w, b: np_norm(x, (2,)) * per_channel(w, 3) + per_channel(b, 3), [X, W, B]),
    "group_norm": (
        lambda x, w, b: F.group_norm(x, 2, w, b),
        lambda x, w, b: np_group_norm(x, 2, w, b), [X, W, B]),
    "layer_norm_two_dims": (
        lambda x, w, b: F.layer_norm(x, (4, 2), w, b),
        lambda x, w, b: np_norm(x, (1, 2)) * w + b, [X, X[0] + 1, X[1]]),
    "rms_norm": (
        lambda x, w: F.rms_norm(x, (4, 2), w, eps=1e-6),
        lambda x, w: x / np.sqrt((x * x).mean(axis=(1, 2), keepdims=True) + 1e-6) * w, [X, X[0]]),
}

P = 1 / (1 + np.exp(-X[:2]))                      # probabilities in (0.1, 0.9) or so
Y = RNG.uniform(size=P.shape)                     # soft targets
ROW_W = RNG.uniform(0.5, 2, size=(4, 1))          # a weight broadcast over the last dim
POS_W = RNG.uniform(0.5, 3, size=2)               # one per class, the last dim
LOGITS = RNG.normal(size=(5, 4))
CLASSES = np.array([2, 0, 3, 3, 1])
CLASS_W = RNG.uniform(0.5, 2, size=4)


def _bce(x, y, w):
    return -w * (y * np.log(x) + (1 - y) * np.log(1 - x))


def _bce_logits(x, y, w, pw):
    return w * ((1 - y) * x + (1 + (pw - 1) * y) * np.log1p(np.exp(-x)))


def _smooth_l1(d, beta):
    d = np.abs(d)
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def np_cross_entropy(logits, target, weight, smoothing, reduction, ignore=-100):
    """PyTorch's formula: (1 - s) nll + (s / C) smooth, "mean" over the weights of the
    targets that are not ignored."""
    logp = np_log_softmax(logits)
    c = logits.shape[1]
    w = np.ones(c) if weight is None else weight
    kept = target != ignore
    picked = np.where(kept, target, 0)
    wt = w[picked] * kept
    nll = -np.take_along_axis(logp, picked[:, None], 1)[:, 0] * wt
    smooth = -(logp * w).sum(1) * kept
    if reduction == "mean":
        return ((1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()) / wt.sum()
    losses = (1 - smoothing) * nll + smoothing / c * smooth
    return losses.sum() if reduction == "sum" else losses


def _classes(x):
    return tg.tensor(CLASSES.tolist(), device=x.device)


LOSSES = {
    "binary_cross_entropy": (
        lambda x: F.binary_cross_entropy(x, const(Y, x), const(ROW_W, x), reduction="sum"),
        lambda x: _bce(x, Y, ROW_W).sum(), [P]),
    "binary_cross_entropy_none": (
        lambda x: F.binary_cross_entropy(x, const(Y, x), reduction="none"),
        lambda x: _bce(x, Y, 1), [P]),
    "bce_with_logits": (
        lambda x: F.binary_cross_entropy_with_logits(x, const(Y, x)),
        lambda x: _bce_logits(x, Y, 1, 1).mean(), [X[:2] * 5]),
    "bce_with_logits_weights": (
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, const(ROW_W, x), reduction="none",
                                                        pos_weight=const(POS_W, x)),
        lambda x, y: _bce_logits(x, y, ROW_W, POS_W), [X[:2] * 5, Y]),
    "l1_loss": (lambda x, y: F.l1_loss(x, y), lambda x, y: np.abs(x - y).mean(), [X, X[::-1]]),
    "smooth_l1_loss": (
        lambda x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.8),
        lambda x, y: _smooth_l1(x - y, 0.8), [X, X[::-1]]),
    **{f"cross_entropy_weight_smoothing_{r}": (
        (lambda r: lambda x: F.cross_entropy(x, _classes(x), const(CLASS_W, x), reduction=r,
                                             label_smoothing=0.3))(r),
        (lambda r: lambda x: np_cross_entropy(x, CLASSES, CLASS_W, 0.3, r))(r), [LOGITS])
       for r in ("mean", "sum", "none")},
    "cross_entropy_ignore_weight": (
        lambda x: F.cross_entropy(x, tg.tensor([2, -100, 3, 3, 1], device=x.device),
                                  const(CLASS_W, x), ignore_index=-100),
        lambda x: np_cross_entropy(x, np.array([2, -100, 3, 3, 1]), CLASS_W, 0.0, "mean"), [LOGITS]),
    "cross_entropy_spatial_smoothing": (
        lambda x: F.cross_entropy(x, tg.tensor([[1, 0], [3, 2]], device=x.device), label_smoothing=0.1),
        lambda x: np_cross_entropy(x.transpose(0, 2, 1).reshape(4, 4), np.array([1, 0, 3, 2]),
                                   None, 0.1, "mean"), [LOGITS[:4].reshape(2, 4, 2)]),
}
CASES = {**NORMS, **LOSSES}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("engine", ENGINES_)
def test_values_match_numpy_and_gradients_match_central_differences(engine, name):
    fn, definition, inputs = CASES[name]
    got = gradcheck(engine, fn, [np.array(a, dtype=np.float64) for a in inputs])
    np.testing.assert_allclose(got, definition(*inputs), rtol=1e-10, atol=1e-12)


# ---- BatchNorm: running statistics, modes, buffers ----------------------------------------
def batches(n=3):
    rng = np.random.default_rng(1)
    return [rng.normal(2.0, 3.0, size=(4, 3, 2)) for _ in range(n)]


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("engine", ENGINES_)
def test_batchnorm_running_statistics_follow_pytorchs_rule(engine, momentum):
    """r <- (1 - m) r + m s with the unbiased variance; momentum=None: the plain average of
    the batches so far. eval() normalizes with them; train() with the batch again."""
    bn = nn.BatchNorm1d(3, momentum=momentum, dtype=tg.float64, device=engine.device)
    mean, var = np.zeros(3), np.ones(3)
    for k, x in enumerate(batches(), start=1):
        out = bn(engine.leaf(x))
        np.testing.assert_allclose(out.detach().numpy(), np_norm(x, (0, 2)), rtol=1e-10, atol=1e-12)
        m = 1 / k if momentum is None else momentum
        mean = (1 - m) * mean + m * x.mean(axis=(0, 2))
        var = (1 - m) * var + m * x.var(axis=(0, 2), ddof=1)
        np.testing.assert_allclose(bn.running_mean.detach().numpy(), mean, rtol=1e-12)
        np.testing.assert_allclose(bn.running_var.detach().numpy(), var, rtol=1e-12)
        assert bn.num_batches_tracked.item() == k and bn.num_batches_tracked.dtype is tg.int64
    x = batches(1)[0]
    out = bn.eval()(engine.leaf(x)).detach().numpy()
    want = (x - mean[:, None]) / np.sqrt(var[:, None] + EPS)
    np.testing.assert_allclose(out, want, rtol=1e-10)
    assert bn.num_batches_tracked.item() == 3                      # eval counts nothing
    np.testing.assert_allclose(bn.running_mean.detach().numpy(), mean, rtol=1e-12)


def test_batchnorm_without_running_stats_uses_the_batch_in_both_modes():
    bn = nn.BatchNorm2d(2, affine=False, track_running_stats=False, dtype=tg.float64).eval()
    x = batches(1)[0].reshape(4, 2, 3, 1)
    assert bn.running_mean is None and list(bn.state_dict()) == [] and list(bn.parameters()) == []
    np.testing.assert_allclose(bn(tg.tensor(x.tolist(), dtype=tg.float64)).detach().numpy(),
                               np_norm(x, (0, 2, 3)), rtol=1e-10)


def test_batchnorm_state_dict_round_trip_keeps_the_buffers():
    bn = nn.BatchNorm1d(3, dtype=tg.float64)
    for x in batches(2):
        bn(tg.tensor(x.tolist(), dtype=tg.float64))
    state = bn.state_dict()
    assert list(state) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    other = nn.BatchNorm1d(3, dtype=tg.float64)
    other.load_state_dict(state)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_array_equal(getattr(other, name).detach().numpy(), state[name].detach().numpy())
    x = tg.tensor(batches(1)[0].tolist(), dtype=tg.float64)
    np.testing.assert_array_equal(other.eval()(x).detach().numpy(), bn.eval()(x).detach().numpy())


def test_instance_norm_running_stats_are_the_batch_average_of_the_instances():
    inorm = nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.5, dtype=tg.float64)
    x = batches(1)[0]
    inorm(tg.tensor(x.tolist(), dtype=tg.float64))
    np.testing.assert_allclose(inorm.running_mean.detach().numpy(), 0.5 * x.mean(axis=2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(inorm.running_var.detach().numpy(),
                               0.5 + 0.5 * x.var(axis=2, ddof=1).mean(0), rtol=1e-12)
    out = inorm.eval()(tg.tensor(x.tolist(), dtype=tg.float64)).detach().numpy()
    want = (x - inorm.running_mean.detach().numpy()[:, None]) / np.sqrt(inorm.running_var.detach().numpy()[:, None] + EPS)
    np.testing.assert_allclose(out, want, rtol=1e-10)
    unbatched = nn.InstanceNorm1d(3, dtype=tg.float64)(tg.tensor(x[0].tolist(), dtype=tg.float64))
    np.testing.assert_allclose(unbatched.detach().numpy(), np_norm(x[0], (1,)), rtol=1e-10)


def test_modules_match_their_functions():
    x = tg.tensor(X.tolist(), dtype=tg.float64)
    gn = nn.GroupNorm(2, 4, dtype=tg.float64)
    np.testing.assert_allclose(gn(x).detach().numpy(), np_group_norm(X, 2, np.ones(4), np.zeros(4)), rtol=1e-10)
    rms = nn.RMSNorm([4, 2], dtype=tg.float64)
    want = X / np.sqrt((X * X).mean(axis=(1, 2), keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(rms(x).detach().numpy(), want, rtol=1e-10)
    assert [n for n, _ in rms.named_parameters()] == ["weight"]
    target = tg.tensor(CLASSES.tolist())
    ce = nn.CrossEntropyLoss(weight=tg.tensor(CLASS_W.tolist(), dtype=tg.float64), label_smoothing=0.3)
    np.testing.assert_allclose(ce(tg.tensor(LOGITS.tolist(), dtype=tg.float64), target).item(),
                               np_cross_entropy(LOGITS, CLASSES, CLASS_W, 0.3, "mean"), rtol=1e-10)
    assert list(ce.state_dict()) == ["weight"]                     # a buffer, as in PyTorch
    p, y = (tg.tensor(a.tolist(), dtype=tg.float64) for a in (P, Y))
    assert nn.BCELoss(reduction="sum")(p, y).item() == F.binary_cross_entropy(p, y, reduction="sum").item()
    assert nn.BCEWithLogitsLoss()(p, y).item() == F.binary_cross_entropy_with_logits(p, y).item()
    assert nn.L1Loss()(p, y).item() == F.l1_loss(p, y).item()
    assert nn.SmoothL1Loss(beta=0.5)(p, y).item() == F.smooth_l1_loss(p, y, beta=0.5).item()


def test_saturated_probabilities_and_logits_stay_finite():
    """log is clamped to -100 (PyTorch's), so p = 0 or 1 gives 100, and its gradient is 0,
    not nan; logits of +-1000 give exact losses; a logit of exactly 0 has gradient
    sigmoid(0) - y."""
    p = tg.tensor([0.0, 1.0, 0.5], dtype=tg.float64, requires_grad=True)
    loss = F.binary_cross_entropy(p, tg.tensor([1.0, 0.0, 1.0], dtype=tg.float64), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 100.0, np.log(2)], rtol=1e-15)
    loss.sum().backward()
    assert np.isfinite(p.grad.detach().numpy()).all()
    z = tg.tensor([1000.0, -1000.0, 0.0], dtype=tg.float64, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(z, tg.tensor([0.0, 1.0, 0.25], dtype=tg.float64),
                                              reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, 1000.0, np.log(2)], rtol=1e-15)
    loss.sum().backward()
    np.testing.assert_allclose(z.grad.detach().numpy(), [1.0, -1.0, 0.25], rtol=1e-15)


def test_unchanged_cross_entropy_paths_still_agree():
    """Without weight or smoothing, (N, C) logits take the fused kernel; the composite path
    (weight all ones) gives the same numbers."""
    logits, target = tg.tensor(LOGITS.tolist(), dtype=tg.float64), tg.tensor(CLASSES.tolist())
    ones = tg.ones(4, dtype=tg.float64)
    for r in ("mean", "sum", "none"):
        np.testing.assert_allclose(F.cross_entropy(logits, target, ones, reduction=r).detach().numpy(),
                                   F.cross_entropy(logits, target, reduction=r).detach().numpy(), rtol=1e-13)


@pytest.mark.parametrize("engine", ENGINES_)
def test_cross_entropy_of_only_ignored_targets(engine):
    """Every target ignore_index (-100 by default): the mean is nan (0 / 0) and the sum 0,
    as in PyTorch, and the gradient is 0 either way (on the fused kernel of each device)."""
    x = engine.leaf(LOGITS)
    targets = tg.tensor([-100] * LOGITS.shape[0], device=x.device)
    loss = F.cross_entropy(x, targets)
    assert np.isnan(engine.value(loss))
    engine.backward(loss, np.array(1.0))
    assert not engine.grad(x).any()
    assert engine.value(F.cross_entropy(x, targets, reduction="sum")) == 0.0
    assert not engine.value(F.cross_entropy(x, targets, reduction="none")).any()


def test_cross_entropy_takes_the_fused_kernel_with_ignored_targets():
    """-100 in the targets, or a class as ignore_index, stays one kernel each way: no masked
    composite (per-sample losses, a mask, a sum and a division)."""
    x = tg.tensor(LOGITS.tolist(), dtype=tg.float64, requires_grad=True)
    for target, ignore_index in (([2, -100, 3, 3, 1], -100), ([2, 0, 3, 0, 1], 0)):
        loss = F.cross_entropy(x, tg.tensor(target), ignore_index=ignore_index)
        assert type(loss.grad_fn).__name__ == "CrossEntropy"
        want = np_cross_entropy(LOGITS, np.array(target), None, 0.0, "mean", ignore=ignore_index)
        np.testing.assert_allclose(loss.item(), want, rtol=1e-13)


# ---- bad arguments ------------------------------------------------------------------------
def _x():
    return tg.tensor(X.tolist(), dtype=tg.float64)


BAD = [
    (lambda: F.batch_norm(_x(), None, None, training=False), ValueError, "running_mean and running_var"),
    (lambda: F.batch_norm(_x(), tg.zeros(3), tg.ones(4), training=True), ValueError,
     r"running_mean must be None or a tensor of shape \(4,\)"),
    (lambda: F.batch_norm(_x(), None, None, training=True, eps=-1e-5), ValueError, "eps must be a non-negative"),
    (lambda: F.batch_norm(_x(), None, None, training=True, momentum=2), ValueError, r"momentum must be a number in \[0, 1\]"),
    (lambda: F.batch_norm(_x()[:1, :, :1], None, None, training=True), ValueError,
     "more than 1 value per channel"),
    (lambda: F.batch_norm(tg.zeros(4), None, None, training=True), ValueError, r"shape \(N, C, ...\)"),
    (lambda: F.group_norm(_x(), 3), ValueError, "num_groups must be a positive int dividing the number of channels 4"),
    (lambda: F.group_norm(_x(), 2, tg.ones(2)), ValueError, r"weight must be None or a tensor of shape \(4,\)"),
    (lambda: F.instance_norm(_x()[:, :, :1]), ValueError, "more than 1 spatial element"),
    (lambda: F.instance_norm(_x(), use_input_stats=False), ValueError, "running_mean and running_var"),
    (lambda: F.rms_norm(_x(), (2, 4)), ValueError, r"normalized_shape \(2, 4\) must be the last dimensions"),
    (lambda: F.rms_norm(_x(), 2, tg.ones(3)), ValueError, r"weight must be None or a tensor of shape \(2,\)"),
    (lambda: nn.GroupNorm(3, 4), ValueError, r"num_channels \(4\) must be divisible by num_groups \(3\)"),
    (lambda: nn.BatchNorm1d(0), ValueError, "num_features must be a positive int"),
    (lambda: nn.BatchNorm1d(3, eps=-1), ValueError, "eps must be a non-negative"),
    (lambda: nn.BatchNorm2d(4)(_x()), ValueError, r"expected a 4D input, got shape \(3, 4, 2\)"),
    (lambda: nn.BatchNorm1d(3)(_x()), ValueError, r"expected 3 channels, got input of shape \(3, 4, 2\)"),
    (lambda: nn.RMSNorm(0), ValueError, "normalized_shape must be a positive int"),
    (lambda: F.binary_cross_entropy(_x(), _x()), ValueError, r"probability in \[0, 1\]"),
    (lambda: F.binary_cross_entropy(_x().sigmoid(), _x()[0]), ValueError, r"target of shape \(4, 2\) must have"),
    (lambda: F.binary_cross_entropy_with_logits(_x(), _x(), pos_weight=tg.ones(3)), ValueError,
     r"pos_weight of shape \(3,\) does not broadcast"),
    (lambda: F.binary_cross_entropy_with_logits(_x(), _x(), reduction="avg"), ValueError, "reduction must be"),
    (lambda: F.smooth_l1_loss(_x(), _x(), beta=-1), ValueError, "beta must be a non-negative"),
    (lambda: F.l1_loss(_x(), _x(), size_average=True), ValueError, "deprecated"),
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, 1]), label_smoothing=1.5), ValueError,
     "label_smoothing must be between 0.0 and 1.0"),
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, 1]), tg.ones(2)), ValueError,
     r"weight must be a tensor of shape \(3,\)"),
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, 1]), "sum"), TypeError, "pass reduction='sum' by keyword"),
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, 3]), tg.ones(3)), IndexError,
     "target 3 at position 1 is not a class index"),
    (lambda: F.cross_entropy(tg.zeros(2, 3, 2), tg.tensor([0, 1])), ValueError, r"target of shape \(N, d...\)"),
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, 1]), ignore_index=1.0), TypeError,
     "ignore_index must be an int"),
    (lambda: F.cross_entropy(tg.zeros(3, 3), tg.tensor([0, -100, -1])), IndexError,
     "target -1 at position 2 is not a class index"),         # -100 is ignored, -1 is not
    (lambda: F.cross_entropy(tg.zeros(2, 3), tg.tensor([0, -100]), ignore_index=None), IndexError,
     "target -100 at position 1 is not a class index"),       # None: nothing ignored
    (lambda: nn.CrossEntropyLoss(label_smoothing=-0.1), ValueError, "label_smoothing must be between"),
    (lambda: nn.SmoothL1Loss(beta=-1), ValueError, "beta must be a non-negative"),
    (lambda: nn.BCELoss(reduction="avg"), ValueError, "reduction must be"),
]


@pytest.mark.parametrize("call,error,match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_arguments_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---- PyTorch as an oracle -----------------------------------------------------------------
def test_pytorch_agrees():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    t, T = torch.tensor, lambda a: tg.tensor(np.asarray(a).tolist(), dtype=tg.float64)
    close = lambda a, b: np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)  # noqa: E731
    ours, theirs = nn.BatchNorm1d(3, momentum=None, dtype=tg.float64), torch.nn.BatchNorm1d(3, momentum=None).double()
    for x in batches():
        close(ours(T(x)), theirs(t(x)))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        close(getattr(ours, name), getattr(theirs, name))
    x = batches(1)[0]
    close(ours.eval()(T(x)), theirs.eval()(t(x)))
    rm, rv, trm, trv = T(np.zeros(4)), T(np.ones(4)), t(np.zeros(4)), t(np.ones(4))
    close(F.instance_norm(T(X), rm, rv, T(W), T(B), momentum=0.3),
          TF.instance_norm(t(X), trm, trv, t(W), t(B), momentum=0.3))
    close(rm, trm)
    close(rv, trv)
    close(F.group_norm(T(X), 4, T(W), T(B), eps=1e-3), TF.group_norm(t(X), 4, t(W), t(B), eps=1e-3))
    close(F.rms_norm(T(X), (2,)), TF.rms_norm(t(X), (2,)))
    close(F.binary_cross_entropy(T(P), T(Y), T(ROW_W)), TF.binary_cross_entropy(t(P), t(Y), t(ROW_W)))
    close(F.binary_cross_entropy_with_logits(T(X[:2]), T(Y), T(ROW_W), pos_weight=T(POS_W), reduction="sum"),
          TF.binary_cross_entropy_with_logits(t(X[:2]), t(Y), t(ROW_W), pos_weight=t(POS_W), reduction="sum"))
    close(F.smooth_l1_loss(T(X), T(X[::-1]), beta=0.5), TF.smooth_l1_loss(t(X), t(X[::-1].copy()), beta=0.5))
    target = np.array([2, -100, 3, 3, 1])
    for r in ("mean", "sum", "none"):
        for weight in (None, CLASS_W):
            ce = nn.CrossEntropyLoss(None if weight is None else T(weight), reduction=r, label_smoothing=0.2)
            tce = torch.nn.CrossEntropyLoss(None if weight is None else t(weight), reduction=r, label_smoothing=0.2)
            close(ce(T(LOGITS), tg.tensor(target.tolist())), tce(t(LOGITS), t(target)))
    # the fused kernel (no weight, no smoothing): -100 by default, a class, all ignored
    for target, ignore in (([2, -100, 3, 3, 1], -100), ([2, 0, 3, 0, 1], 0), ([-100] * 5, -100)):
        for r in ("mean", "sum", "none"):
            x, tx = T(LOGITS).requires_grad_(), t(LOGITS).requires_grad_()
            ours = F.cross_entropy(x, tg.tensor(target), ignore_index=ignore, reduction=r)
            theirs = TF.cross_entropy(tx, t(target), ignore_index=ignore, reduction=r)
            close(ours, theirs)
            ours.sum().backward()
            theirs.sum().backward()
            close(x.grad, tx.grad)
