"""tg.compile(fullgraph=True) over the operations a training step commonly uses: each case,
forward and backward (and an optimizer's or scheduler's step where it has one), is called
four times on device "cpu" (a warm-up, a capture, then replays) on new inputs each time,
and gives eager's outputs, gradients and final state bit for bit; the last call replays.

No case reads a value into Python: the range checks of indices and targets, and the
checks of a probability, are made by the kernels that read them, as PyTorch's are. An
operation whose output's shape depends on the data (a boolean mask, nonzero, unique)
cannot be captured: that is a graph break, here as in PyTorch.
"""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor.compiled import GraphBreak
from stage2_tensor.compiled.compiled import Replay

from .engines import device_params

CALLS = 4
pytestmark = pytest.mark.parametrize("device", device_params("cpu"))


def square_sum(out):
    return (out * out).sum()


def differentiated(fn, *inputs):
    """A step: fn's outputs, and the gradients of the square sum of its floating outputs
    with respect to the inputs that require grad and to ``fn``'s parameters (a module)."""
    params = list(fn.parameters()) if isinstance(fn, nn.Module) else []
    outs = fn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    outs = [o for o in outs if isinstance(o, tg.Tensor)]
    wrt = [t for t in inputs if isinstance(t, tg.Tensor) and t.requires_grad] + params
    differentiable = [square_sum(o) for o in outs if o.requires_grad]
    grads = tg.autograd.grad(sum(differentiable), wrt) if differentiable and wrt else ()
    return [o.detach() for o in outs] + list(grads)


# ---- the cases: make(device) -> (step, the arguments of each call, the state to compare) ----

def module(build, *shapes, train=True, ints=None):
    """A module's forward and backward on float inputs of ``shapes`` (that require grad),
    or on int64 ones below ``ints``."""
    def make(device):
        m = build().to(device)
        m.train(train)

        def args():
            if ints is not None:
                return tuple(tg.randint(0, ints, s, device=device) for s in shapes)
            return tuple(tg.randn(*s, device=device, requires_grad=True) for s in shapes)
        return (lambda *xs: differentiated(m, *xs)), [args() for _ in range(CALLS)], [m]
    return make


def function(fn, *makers):
    """fn's forward and backward; each maker(device) gives one argument of a call."""
    def make(device):
        def args():
            return tuple(mk(device) for mk in makers)
        return (lambda *xs: differentiated(fn, *xs)), [args() for _ in range(CALLS)], []
    return make


def floats(*shape, grad=True, low=None, high=None):
    def mk(device):
        if low is None:
            t = tg.randn(*shape, device=device)
        else:
            t = tg.rand(*shape, device=device) * (high - low) + low
        return t.requires_grad_(grad)
    return mk


def longs(high, *shape, low=0):
    return lambda device: tg.randint(low, high, shape, device=device)


def signs(*shape):
    return lambda device: tg.randint(0, 2, shape, device=device).float() * 2 - 1


def mask(*shape):
    return lambda device: tg.rand(*shape, device=device) > 0.5


class MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=True)


MODULES = {
    "Linear": module(lambda: nn.Linear(5, 3), (4, 5)),
    "Conv1d": module(lambda: nn.Conv1d(2, 3, 3, padding=1), (2, 2, 7)),
    "Conv2d": module(lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1), (2, 2, 6, 6)),
    "ConvTranspose2d": module(lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), (2, 2, 4, 4)),
    "BatchNorm1d-train": module(lambda: nn.BatchNorm1d(3), (5, 3)),
    "BatchNorm1d-eval": module(lambda: nn.BatchNorm1d(3), (5, 3), train=False),
    "BatchNorm2d-train": module(lambda: nn.BatchNorm2d(3), (2, 3, 4, 4)),
    "BatchNorm2d-eval": module(lambda: nn.BatchNorm2d(3), (2, 3, 4, 4), train=False),
    "LayerNorm": module(lambda: nn.LayerNorm(6), (3, 6)),
    "GroupNorm": module(lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "Embedding": module(lambda: nn.Embedding(10, 4), (3, 5), ints=10),
    "EmbeddingBag-mean": module(lambda: nn.EmbeddingBag(10, 4, mode="mean"), (3, 4), ints=10),
    "EmbeddingBag-sum": module(lambda: nn.EmbeddingBag(10, 4, mode="sum"), (3, 4), ints=10),
    "EmbeddingBag-max": module(lambda: nn.EmbeddingBag(10, 4, mode="max"), (3, 4), ints=10),
    "Dropout": module(lambda: nn.Dropout(0.3), (4, 6)),
    "MaxPool2d": module(lambda: nn.MaxPool2d(2), (2, 2, 6, 6)),
    "AvgPool2d": module(lambda: nn.AvgPool2d(3, stride=2, padding=1), (2, 2, 6, 6)),
    "AdaptiveAvgPool2d": module(lambda: nn.AdaptiveAvgPool2d((2, 3)), (2, 2, 5, 7)),
    "Upsample-nearest": module(lambda: nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
    "Upsample-bilinear": module(lambda: nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    "ReLU": module(nn.ReLU, (4, 5)),
    "GELU": module(nn.GELU, (4, 5)),
    "GELU-tanh": module(lambda: nn.GELU(approximate="tanh"), (4, 5)),
    "SiLU": module(nn.SiLU, (4, 5)),
    "Tanh": module(nn.Tanh, (4, 5)),
    "Softmax": module(lambda: nn.Softmax(dim=-1), (4, 5)),
    "LogSoftmax": module(lambda: nn.LogSoftmax(dim=1), (4, 5)),
    "MultiheadAttention": module(MHA, (2, 5, 8)),
    "TransformerEncoderLayer": module(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1,
                                                                        batch_first=True), (2, 5, 8)),
    "TransformerEncoderLayer-eval": module(lambda: nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                           (2, 5, 8), train=False),
}

FUNCTIONS = {
    "scaled_dot_product_attention": function(
        F.scaled_dot_product_attention, floats(2, 2, 5, 4), floats(2, 2, 5, 4), floats(2, 2, 5, 4)),
    "scaled_dot_product_attention-causal": function(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        floats(2, 2, 5, 4), floats(2, 2, 5, 4), floats(2, 2, 5, 4)),
    "cross_entropy": function(F.cross_entropy, floats(6, 4), longs(4, 6)),
    "cross_entropy-label_smoothing": function(lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
                                              floats(6, 4), longs(4, 6)),
    "cross_entropy-ignore_index": function(lambda x, y: F.cross_entropy(x, y, ignore_index=1),
                                           floats(6, 4), longs(4, 6)),
    "cross_entropy-weight": function(lambda x, y, w: F.cross_entropy(x, y, weight=w),
                                     floats(6, 4), longs(4, 6), floats(4, grad=False, low=0.5, high=2)),
    "cross_entropy-all": function(
        lambda x, y, w: F.cross_entropy(x, y, weight=w, ignore_index=2, label_smoothing=0.2),
        floats(6, 4), longs(4, 6), floats(4, grad=False, low=0.5, high=2)),
    "cross_entropy-3d": function(F.cross_entropy, floats(2, 4, 3), longs(4, 2, 3)),
    "cross_entropy-probabilities": function(lambda x, p: F.cross_entropy(x, p.softmax(dim=1)),
                                            floats(6, 4), floats(6, 4, grad=False)),
    "nll_loss": function(lambda x, y: F.nll_loss(x.log_softmax(dim=1), y), floats(6, 4), longs(4, 6)),
    "nll_loss-weight-ignore": function(
        lambda x, y, w: F.nll_loss(x.log_softmax(dim=1), y, weight=w, ignore_index=0, reduction="sum"),
        floats(6, 4), longs(4, 6), floats(4, grad=False, low=0.5, high=2)),
    "mse_loss": function(F.mse_loss, floats(4, 3), floats(4, 3, grad=False)),
    "l1_loss": function(F.l1_loss, floats(4, 3), floats(4, 3, grad=False)),
    "smooth_l1_loss": function(lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), floats(4, 3), floats(4, 3)),
    "huber_loss": function(lambda a, b: F.huber_loss(a, b, delta=0.5), floats(4, 3), floats(4, 3)),
    "binary_cross_entropy": function(lambda p, y: F.binary_cross_entropy(p.sigmoid(), y),
                                     floats(4, 3), floats(4, 3, grad=False, low=0, high=1)),
    "binary_cross_entropy-weight": function(lambda p, y, w: F.binary_cross_entropy(p.sigmoid(), y, weight=w),
                                            floats(4, 3), floats(4, 3, grad=False, low=0, high=1),
                                            floats(3, grad=False, low=0, high=1)),
    "binary_cross_entropy_with_logits": function(
        lambda x, y, w: F.binary_cross_entropy_with_logits(x, y, pos_weight=w),
        floats(4, 3), floats(4, 3, grad=False, low=0, high=1), floats(3, grad=False, low=0.5, high=2)),
    "kl_div": function(lambda x, y: F.kl_div(x.log_softmax(dim=1), y.softmax(dim=1), reduction="batchmean"),
                       floats(4, 3), floats(4, 3)),
    "kl_div-log_target": function(
        lambda x, y: F.kl_div(x.log_softmax(dim=1), y.log_softmax(dim=1), reduction="batchmean", log_target=True),
        floats(4, 3), floats(4, 3)),
    "cosine_embedding_loss": function(lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1),
                                      floats(4, 5), floats(4, 5), signs(4)),
    "margin_ranking_loss": function(lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2),
                                    floats(6), floats(6), signs(6)),
    "ctc_loss": function(
        lambda x, y: F.ctc_loss(x.log_softmax(dim=2), y, (6, 6), (3, 2)),
        floats(6, 2, 4), longs(4, 2, 3, low=1)),
    "gather": function(lambda x, i: x.gather(1, i), floats(3, 4), longs(4, 3, 2)),
    "scatter": function(lambda x, i, s: x.scatter(1, i, s), floats(3, 4), longs(4, 3, 2), floats(3, 2)),
    "scatter_add": function(lambda x, i, s: x.scatter_add(1, i, s), floats(3, 4), longs(4, 3, 2), floats(3, 2)),
    "index_select": function(lambda x, i: x.index_select(0, i), floats(5, 3), longs(5, 4)),
    "index_add": function(lambda x, i, s: x.index_add(0, i, s), floats(5, 3), longs(5, 4), floats(4, 3)),
    "take_along_dim": function(lambda x, i: tg.take_along_dim(x, i, dim=1), floats(3, 4), longs(4, 3, 2)),
    "x[idx]": function(lambda x, i: x[i], floats(5, 3), longs(5, 4)),
    "x[:, idx]": function(lambda x, i: x[:, i], floats(3, 5), longs(5, 4)),
    "x[idx, idx]": function(lambda x, i, j: x[i, j], floats(5, 3), longs(5, 4), longs(3, 4)),
    "x[idx] = v": function(lambda x, i, v: x.index_put((i,), v), floats(5, 3), longs(5, 2), floats(2, 3)),
    "x[idx] += v": function(lambda x, i, v: x.index_put((i,), v, accumulate=True), floats(5, 3), longs(5, 4),
                            floats(4, 3)),
    "embedding": function(F.embedding, longs(10, 3, 4), floats(10, 5)),
    "embedding_bag": function(lambda i, w: F.embedding_bag(i, w, mode="max"), longs(10, 3, 4), floats(10, 5)),
    "max_unpool2d": function(lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
                             floats(1, 2, 4, 4)),
    "multi_margin_loss": function(F.multi_margin_loss, floats(4, 5), longs(5, 4)),
    "multilabel_margin_loss": function(F.multilabel_margin_loss, floats(3, 4), longs(4, 3, 4, low=-1)),
    "one_hot": function(lambda x, i: x * F.one_hot(i, 5), floats(4, 5), longs(5, 4)),
    "cat": function(lambda a, b: tg.cat([a, b], dim=1), floats(2, 3), floats(2, 4)),
    "stack": function(lambda a, b: tg.stack([a, b]), floats(2, 3), floats(2, 3)),
    "split": function(lambda a: a.split([1, 3], dim=1), floats(2, 4)),
    "chunk": function(lambda a: a.chunk(2, dim=0), floats(4, 3)),
    "where": function(lambda c, a, b: tg.where(c, a, b), mask(3, 4), floats(3, 4), floats(3, 4)),
    "clamp": function(lambda a: a.clamp(-0.5, 0.5), floats(3, 4)),
    "topk": function(lambda a: a.topk(2, dim=1), floats(3, 5)),
    "sort": function(lambda a: a.sort(dim=1, descending=True), floats(3, 5)),
    "argmax": function(lambda a: a.argmax(dim=1), floats(3, 5)),
    "cumsum": function(lambda a: a.cumsum(dim=1), floats(3, 5)),
    "masked_fill": function(lambda a, m: a.masked_fill(m, 0.0), floats(3, 4), mask(3, 4)),
    "integer //, %": function(lambda a, b: (a // b, a % 3, a // 2), longs(9, 4), longs(9, 4, low=1)),
    "multinomial": function(lambda x: tg.multinomial(x.softmax(-1), 3), floats(2, 5)),
    "bernoulli": function(lambda x: x * tg.bernoulli(x.sigmoid()), floats(3, 4)),
}


def optimizer(build, scheduler=None, clip=None):
    """A training step: an MLP's loss, backward, optional clipping, the optimizer's step and
    the scheduler's."""
    def make(device):
        model = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3)).to(device)
        opt = build(model.parameters())
        sched = scheduler(opt) if scheduler else None

        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            norm = clip(model.parameters()) if clip else None
            opt.step()
            if sched:
                sched.step()
            return [loss.detach()] + ([norm] if norm is not None else [])
        calls = [(tg.randn(4, 5, device=device), tg.randint(0, 3, (4,), device=device)) for _ in range(CALLS)]
        return step, calls, [model, opt]
    return make


def sgd(params):
    return tg.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)


OPTIMIZERS = {
    "SGD": optimizer(sgd),
    "SGD-plain": optimizer(lambda p: tg.optim.SGD(p, lr=0.1)),
    "Adam": optimizer(lambda p: tg.optim.Adam(p, lr=1e-2)),
    "Adam-amsgrad": optimizer(lambda p: tg.optim.Adam(p, lr=1e-2, amsgrad=True, weight_decay=1e-2)),
    "AdamW": optimizer(lambda p: tg.optim.AdamW(p, lr=1e-2)),
    "RMSprop": optimizer(lambda p: tg.optim.RMSprop(p, lr=1e-2, momentum=0.5, centered=True)),
    "Adagrad": optimizer(lambda p: tg.optim.Adagrad(p, lr=1e-2)),
    "Adadelta": optimizer(lambda p: tg.optim.Adadelta(p, lr=0.5)),
    "clip_grad_norm_": optimizer(sgd, clip=lambda p: nn.utils.clip_grad_norm_(p, 0.5)),
    "clip_grad_value_": optimizer(sgd, clip=lambda p: nn.utils.clip_grad_value_(p, 0.1)),
    "StepLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5)),
    "MultiStepLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.MultiStepLR(o, milestones=[1, 2])),
    "ExponentialLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)),
    "CosineAnnealingLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3)),
    "LinearLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=2)),
    "OneCycleLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=10)),
    "LambdaLR": optimizer(sgd, lambda o: tg.optim.lr_scheduler.LambdaLR(o, lambda s: 1 / (s + 1))),
}

CASES = {**MODULES, **FUNCTIONS, **OPTIMIZERS}


def state(objects):
    """The tensors of modules and optimizers, as numpy arrays, by name."""
    out = {}
    for k, obj in enumerate(objects):
        if isinstance(obj, nn.Module):
            items = obj.state_dict().items()
        else:
            items = [(f"{i}.{name}", v) for i, s in obj.state_dict()["state"].items() for name, v in s.items()]
            items += [(f"lr{i}", g["lr"]) for i, g in enumerate(obj.param_groups)]
        for name, v in items:
            out[f"{k}.{name}"] = v.detach().numpy().copy() if isinstance(v, tg.Tensor) else np.asarray(v)
    return out


def run(make, device, compiled, monkeypatch=None):
    """Every call's outputs and the final state; compiled, also whether the last call replayed."""
    tg.manual_seed(0)
    step, calls, objects = make(device)
    fn = tg.compile(step, fullgraph=True) if compiled else step
    replayed = []
    if compiled:
        original = Replay.__call__

        def spy(self, tensors):
            replayed.append(len(outputs))
            return original(self, tensors)
        monkeypatch.setattr(Replay, "__call__", spy)
    outputs = []
    for args in calls:
        outputs.append([t.numpy().copy() for t in fn(*args)])
    return outputs, state(objects), replayed


@pytest.mark.parametrize("name", CASES)
def test_a_compiled_step_replays_as_eager(name, device, monkeypatch):
    eager, eager_state, _ = run(CASES[name], device, False)
    compiled, compiled_state, replayed = run(CASES[name], device, True, monkeypatch)
    assert replayed and replayed[-1] == CALLS - 1, "the last call did not replay"
    for k, (a, b) in enumerate(zip(eager, compiled)):
        assert len(a) == len(b)
        for j, (x, y) in enumerate(zip(a, b)):
            np.testing.assert_array_equal(x, y, err_msg=f"call {k}, output {j}")
    assert eager_state.keys() == compiled_state.keys()
    for key in eager_state:
        np.testing.assert_array_equal(eager_state[key], compiled_state[key], err_msg=key)


# ---- what cannot be captured: an output whose shape depends on the data ---------------------

BREAKS = {
    "x[mask]": function(lambda x, m: x[m], floats(3, 4), mask(3, 4)),
    "masked_select": function(lambda x, m: x.masked_select(m), floats(3, 4), mask(3, 4)),
    "nonzero": function(lambda m: m.nonzero(), mask(3, 4)),
    "unique": function(lambda i: i.unique(), longs(4, 6)),
    "one_hot(num_classes=-1)": function(F.one_hot, longs(4, 6)),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_data_dependent_shape_is_a_graph_break(name, device):
    tg.manual_seed(0)
    step, calls, _ = BREAKS[name](device)
    fn = tg.compile(step, fullgraph=True)
    fn(*calls[0])                                   # the warm-up runs eagerly
    with pytest.raises(GraphBreak, match="read into Python"):
        fn(*calls[1])


# ---- the checks PyTorch's kernels make are kept: a replay given bad data fails ---------------

def data(*values, dtype=None):
    return lambda device: tg.tensor(values, dtype=dtype, device=device)


def plain(*shape, **kwargs):
    return floats(*shape, grad=False, **kwargs)


def bce_input(*values):
    return lambda device: tg.tensor(values, device=device).reshape(2, 2)


CHECKS = {   # (step, its arguments: good ones, then bad ones of the same shapes and dtypes)
    "gather": (lambda x, i: x.gather(1, i), [plain(2, 3), data([0, 2], [1, 1])],
               [plain(2, 3), data([0, 3], [1, 1])]),
    "gather-negative": (lambda x, i: x.gather(1, i), [plain(2, 3), data([0, 2], [1, 1])],
                        [plain(2, 3), data([0, 2], [-1, 1])]),
    "scatter_add": (lambda x, i, s: x.scatter_add(0, i, s), [plain(3), data(0, 2), plain(2)],
                    [plain(3), data(0, 3), plain(2)]),
    "nll_loss": (lambda x, y: F.nll_loss(x, y), [plain(2, 3), data(0, 2)], [plain(2, 3), data(-1, 2)]),
    "cross_entropy-label_smoothing": (lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
                                      [plain(2, 3), data(0, 2)], [plain(2, 3), data(0, 3)]),
    "embedding": (F.embedding, [data(1, 3), plain(4, 2)], [data(1, 4), plain(4, 2)]),
    "embedding_bag": (F.embedding_bag, [data([1, 3]), plain(4, 2)], [data([-1, 3]), plain(4, 2)]),
    "one_hot": (lambda i: F.one_hot(i, 3), [data(0, 2)], [data(0, 3)]),
    "binary_cross_entropy": (F.binary_cross_entropy, [bce_input(0.5, 1.0, 0.0, 0.2), plain(2, 2, low=0, high=1)],
                             [bce_input(0.5, 1.5, 0.0, 0.2), plain(2, 2, low=0, high=1)]),
    "binary_cross_entropy-nan": (F.binary_cross_entropy, [bce_input(0.5, 1.0, 0.0, 0.2), plain(2, 2)],
                                 [bce_input(0.5, float("nan"), 0.0, 0.2), plain(2, 2)]),
    "multi_margin_loss": (F.multi_margin_loss, [plain(2, 3), data(0, 2)], [plain(2, 3), data(3, 2)]),
    "ctc_loss": (lambda x, y: F.ctc_loss(x.log_softmax(2), y, (3,), (2,)), [plain(3, 1, 4), data([1, 3])],
                 [plain(3, 1, 4), data([1, 4])]),
    "floor_divide": (lambda a, b: a // b, [data(4, 5), data(2, 3)], [data(4, 5), data(2, 0)]),
    "multinomial": (lambda p: tg.multinomial(p, 1), [data(0.5, 0.5)], [data(0.5, -0.5)]),
    "bernoulli": (tg.bernoulli, [data(0.5, 1.0)], [data(0.5, 1.5)]),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_a_replay_given_bad_data_fails(name, device):
    step, good, bad = CHECKS[name]
    tg.manual_seed(0)
    fn = tg.compile(step, fullgraph=True)
    args = [mk(device) for mk in good]
    for _ in range(3):
        fn(*args)
    with pytest.raises(RuntimeError, match="out of range"):
        fn(*[mk(device) for mk in bad])
