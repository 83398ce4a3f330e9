"""The Python boundary guards the kernels (backend.py, "What a kernel may assume"): a layout,
a gradient, an optimizer's state or a checkpoint that does not fit is refused with an error
naming it, before any kernel sees it.

Each test reproduces a bug the boundary prevents. Refusing a tensor, a ``.grad`` or a state
dict is tested in this process: unchecked, they would be accepted (the test fails with "DID
NOT RAISE"), and nothing would crash until a kernel ran. Backend methods handed views whose
shapes disagree would crash the process unchecked (a C kernel reading or writing outside a
buffer), so they run in a child process, and a crash is reported as an assertion about that
case.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.optim as optim
from stage2_tensor import backend
from stage2_tensor.tensor import Storage

from .engines import DEVICES, NATIVE, device_marks, device_params

ROOT = Path(__file__).resolve().parents[1]
CPUS = device_params("python", "cpu", "cpu:lazy")    # .grad and optimizer state: checked in stage2, not by a kernel


# ---- views inside their storage ---------------------------------------------------------------
@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("shape, strides, offset, problem", [
    ((10**6,), (10**6,), 0, r"reaches element 999999000000, beyond its storage of 4 elements"),
    ((5,), (1,), 0, r"reaches element 4, beyond its storage of 4 elements"),
    ((2,), (1,), 3, r"reaches element 4, beyond"),
    ((2, 2), (2, 2), 0, r"reaches element 4, beyond"),
    ((-1,), (1,), 0, r"has a negative size"),
    ((2,), (-1,), 1, r"has a negative stride"),
    ((2,), (1,), -1, r"has a negative offset"),
    ((2, 2), (1,), 0, r"needs one stride per dimension"),
])
def test_a_view_beyond_its_storage_is_refused(device, shape, strides, offset, problem):
    t = tg.arange(4.0, device=device)
    with pytest.raises(ValueError, match=rf"a view of shape .* with strides .* and offset .* {problem}"):
        tg.Tensor(t.storage, shape, strides, offset)


@pytest.mark.parametrize("device", device_params())
def test_views_up_to_the_end_of_the_storage_are_allowed(device):
    t = tg.arange(4.0, device=device)
    assert tg.Tensor(t.storage, (2,), (2,), 1).tolist() == [1.0, 3.0]       # its last element
    assert tg.Tensor(t.storage, (3, 2), (1, 0), 1).sum().item() == 12.0      # stride 0
    assert tg.Tensor(t.storage, (0, 5), (100, 100), 50).numel() == 0         # empty: reads nothing
    assert tg.Tensor(t.storage, (2, 2)).tolist() == [[0.0, 1.0], [2.0, 3.0]]  # row-major strides


@pytest.mark.parametrize("device", device_params())
def test_from_buffer_needs_a_buffer_large_enough(device):
    buffer = backend.get(device).from_flat([1.0, 2.0, 3.0, 4.0], tg.float32)
    with pytest.raises(ValueError, match=r"shape \(10, 10\) .* beyond its storage of 4 elements"):
        tg.Tensor.from_buffer(buffer, (10, 10), tg.float32, device)
    with pytest.raises(ValueError, match=r"has a negative size"):
        tg.Tensor.from_buffer(buffer, (-2, -2), tg.float32, device)
    assert tg.Tensor.from_buffer(buffer, (2, 2), tg.float32, device).tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("device", device_params(*NATIVE))
def test_native_buffers_are_measured_in_bytes(device):
    """A native kernel reads a buffer as the view's dtype: 16 bytes hold 2 float64s."""
    t = tg.arange(4.0, device=device)
    with pytest.raises(ValueError, match=r"reaches element 2, beyond its storage of 2 elements"):
        tg.Tensor(t.storage, (3,), dtype=tg.float64)


@pytest.mark.stage3
def test_a_storage_made_by_hand_keeps_the_device_limits():
    import stage3_native  # noqa: F401
    buffer = backend.get("cpu").from_flat([1.0], tg.float32)
    with pytest.raises(ValueError, match="at most 16 dimensions"):
        tg.Tensor(Storage(buffer, "cpu"), (1,) * 17)
    for device in ("cpu", "cpu:lazy"):
        with pytest.raises(TypeError, match=f"device '{device}' cannot use a list as a buffer"):
            tg.Tensor(Storage([1.0, 2.0], device), (2,))


# ---- sizes: ints, none negative, within int64 (strides.check_shape) ---------------------------
@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("shape", [(2**32, 2**31), (2**63,), (2**62, 4), (0, 2**64)])
def test_a_view_of_more_elements_than_int64_holds_is_refused(device, shape):
    """A view of stride 0 reads one element however large its shape: ones(1) expanded to
    (2**32, 2**31), if accepted, would give 0.0 for its sum, mean and max (the kernels'
    int64 element count wraps around). Such a view is refused where it would be made,
    by expand or as the layout given to Tensor (PyTorch's as_strided), before any kernel."""
    x = tg.ones(1, device=device)
    with pytest.raises(RuntimeError, match=rf"expand\(\): a tensor of shape {re.escape(str(shape))} "
                                           r"would have \d+ elements; .* at most 2\*\*63 - 1"):
        x.expand(*shape)
    with pytest.raises(RuntimeError, match=r"Tensor\(\): a tensor of shape .* at most 2\*\*63 - 1"):
        tg.Tensor(x.storage, shape, (0,) * len(shape))
    with pytest.raises(RuntimeError, match=r"reshape\(\): a tensor of shape \(0, 18446744073709551616\)"):
        tg.ones(0, device=device).reshape(0, 2**64)     # no elements, but a size no kernel holds
    # up to the limit, views are made (their shapes only: reading 2**62 elements takes years)
    assert x.expand(2**63 - 1).shape == (2**63 - 1,) and x.expand(2**31, 2**31).numel() == 2**62
    assert tg.Tensor(x.storage, (2**62, 1), (0, 0)).numel() == 2**62
    assert x.expand(2**10, 2**10).sum().item() == 2**20


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("make, error, message", [
    # as PyTorch: -1 keeps an existing dimension's size and means nothing for a new one
    (lambda x: x[:1].expand(-1, 3), ValueError,
     r"expand: the expanded size of the tensor \(-1\) isn't allowed in a leading, non-existing dimension 0"),
    (lambda x: x[:1].expand(-2), ValueError, r"expand\(\): trying to create a tensor with negative dimension -2"),
    (lambda x: x[:1].expand(3, -2), ValueError, r"negative dimension -2: \(3, -2\)"),
    (lambda x: x.reshape(-2, -2), ValueError, "negative size other than -1"),
    (lambda x: x.view(-1, -4), ValueError, "negative size other than -1"),
    (lambda x: tg.zeros(2, -1, device=x.device), ValueError,
     r"zeros\(\): trying to create a tensor with negative dimension -1: \(2, -1\)"),
    (lambda x: tg.ones((-3,), device=x.device), ValueError, r"ones\(\): .* negative dimension -3"),
    (lambda x: tg.empty(-1, device=x.device), ValueError, r"empty\(\): .* negative dimension -1"),
    (lambda x: tg.full((2, -5), 1.5, device=x.device), ValueError, r"full\(\): .* negative dimension -5"),
    (lambda x: tg.rand(-3, device=x.device), ValueError, r"rand\(\): .* negative dimension -3"),
    (lambda x: tg.randn(1, -1, device=x.device), ValueError, r"randn\(\): .* negative dimension -1"),
    (lambda x: tg.uniform((-2,), device=x.device), ValueError, r"uniform\(\): .* negative dimension -2"),
    (lambda x: tg.normal(-2, device=x.device), ValueError, r"normal\(\): .* negative dimension -2"),
    (lambda x: tg.randint(0, 3, (-1,), device=x.device), ValueError, r"randint\(\): .* negative dimension -1"),
    (lambda x: x.new_zeros(-1), ValueError, r"zeros\(\): .* negative dimension -1"),
    (lambda x: x.new_ones(2, -2), ValueError, r"ones\(\): .* negative dimension -2"),
    (lambda x: x.repeat(-1), ValueError, "repeats must be non-negative ints"),
    (lambda x: tg.Tensor(x.storage, (-1,), (1,)), ValueError, "has a negative size"),
    # a size that is not an int is refused at once, naming the argument (as PyTorch's parser)
    (lambda x: x.reshape(2.5, 4.8), TypeError,
     r"reshape\(\): argument 'shape' must be a tuple of ints, but found element of type float at pos 0"),
    (lambda x: x.view(3, 4.0), TypeError, r"view\(\): argument 'shape' .* type float at pos 1"),
    (lambda x: x[:1].expand(2.5), TypeError, r"expand\(\): argument 'size' .* type float at pos 0"),
    (lambda x: tg.zeros(2.5, device=x.device), TypeError, r"zeros\(\): argument 'size' .* type float at pos 0"),
    (lambda x: tg.full(("2",), 0.0, device=x.device), TypeError, r"full\(\): argument 'size' .* type str"),
])
def test_sizes_from_the_caller_are_checked_where_they_come_in(device, make, error, message):
    """Unchecked, each would make a tensor of shape (-1, 3) with numel -3, or of float
    sizes (reshape(2.5, 4.8), since 2.5 * 4.8 == 12), or fail later with an error naming
    no argument."""
    x = tg.arange(12.0, device=device)
    with pytest.raises(error, match=message):
        make(x)
    assert x[:1].expand(3, -1).shape == (3, 1) and x.expand(2, -1).shape == (2, 12)   # -1 keeps


# ---- .grad ----------------------------------------------------------------------------------
@pytest.mark.parametrize("device", CPUS)
def test_grad_assignment_is_checked_as_in_pytorch(device):
    p = tg.zeros(1024, 1024, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match=r"assigned grad has data of a different size: shape "
                                           r"\(1,\), the tensor has shape \(1024, 1024\)"):
        p.grad = tg.zeros(1, device=device)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        p.grad = tg.zeros(1024, 1024, dtype=tg.float64, device=device)
    other = "python" if device != "python" else "cpu"
    with pytest.raises(RuntimeError, match="assigned grad has data located on a different device"):
        p.grad = tg.zeros(1024, 1024, device=other)
    with pytest.raises(TypeError, match="expected to be a Tensor or None but got grad of type list"):
        p.grad = [0.0]
    assert p.grad is None                               # nothing was assigned
    optim.SGD([p], lr=0.1).step()                       # no gradient: nothing to update
    g = tg.ones(1024, 1024, device=device)
    p.grad = g
    assert p.grad is g
    p.grad = None
    assert p.grad is None


# ---- optimizer state --------------------------------------------------------------------------
def _adam_with_state(device, shape=(1024, 1024)):
    p = tg.zeros(*shape, requires_grad=True, device=device)
    opt = optim.Adam([p], lr=0.1)
    p.grad = tg.ones(*shape, device=device)
    opt.step()
    return p, opt


@pytest.mark.slow          # seconds of compiles or runs: make test-slow
@pytest.mark.parametrize("device", CPUS)
def test_optimizer_state_of_the_wrong_shape_is_refused(device):
    p, opt = _adam_with_state(device)
    saved = opt.state_dict()
    saved["state"][0]["exp_avg"] = tg.zeros(4)
    saved["state"][0]["exp_avg_sq"] = tg.zeros(4)
    with pytest.raises(ValueError, match=r"Adam.load_state_dict: parameter 0 \(shape \(1024, 1024\)\): "
                                         r"exp_avg has shape \(4,\), expected the parameter's \(1024, 1024\)"):
        opt.load_state_dict(saved)
    assert opt.state[p]["exp_avg"].shape == (1024, 1024)         # unchanged
    sgd = optim.SGD([p], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"momentum_buffer has shape \(3,\)"):
        sgd.load_state_dict({"state": {0: {"momentum_buffer": tg.zeros(3)}},
                             "param_groups": sgd.state_dict()["param_groups"]})


def _case(name, change, error, message):
    return pytest.param(change, error, message, id=name)


@pytest.mark.stage2
@pytest.mark.parametrize("change, error, message", [
    _case("step nan", lambda sd: sd["state"][0].update(step=float("nan")), ValueError,
          r"step must be a whole number of steps \(an int64\), got nan"),
    _case("step past int64", lambda sd: sd["state"][0].update(step=1 << 63), ValueError,
          r"step must be a whole number"),
    _case("step negative", lambda sd: sd["state"][0].update(step=-1), ValueError, r"step must be a whole number"),
    _case("step fraction", lambda sd: sd["state"][0].update(step=2.5), ValueError, r"step must be a whole number"),
    _case("step text", lambda sd: sd["state"][0].update(step="3"), ValueError, r"step must be a whole number"),
    _case("state not a tensor", lambda sd: sd["state"][0].update(exp_avg=[0.0] * 4), TypeError,
          r"exp_avg must be a tensor, got list"),
    _case("state missing", lambda sd: sd["state"][0].pop("exp_avg_sq"), ValueError,
          r"its state lacks \['exp_avg_sq'\]"),
    _case("another optimizer's state", lambda sd: sd["state"][0].update(momentum_buffer=tg.zeros(2, 2)),
          ValueError, r"unknown state \['momentum_buffer'\]; Adam keeps \['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq', 'step'\]"),
    _case("no such parameter", lambda sd: sd["state"].update({7: {}}), ValueError,
          r"state for parameter 7, but this optimizer has parameters 0 to 0"),
    _case("one group too many", lambda sd: sd["param_groups"].append(sd["param_groups"][0]), ValueError,
          "different number of parameter groups"),
    _case("group of another size", lambda sd: sd["param_groups"][0].update(params=[0, 1]), ValueError,
          "doesn't match the size of optimizer's group"),
    _case("not a state dict", lambda sd: sd.pop("state"), ValueError, r"expected what state_dict\(\) returns"),
])
def test_optimizer_load_state_dict_names_what_does_not_fit(change, error, message):
    p, opt = _adam_with_state("python", (2, 2))
    saved = opt.state_dict()
    change(saved)
    lr_before = opt.param_groups[0]["lr"]
    saved.get("param_groups", [{}])[0]["lr"] = 123.0
    with pytest.raises(error, match=message):
        opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == lr_before and opt.state[p]["step"] == 1   # untouched


@pytest.mark.stage3
def test_optimizer_state_moves_to_the_parameters_device_and_dtype():
    import stage3_native  # noqa: F401
    p = tg.zeros(2, 2, requires_grad=True, device="cpu")
    opt = optim.Adam([p])
    state = {"step": tg.tensor(3.0), "exp_avg": tg.ones(2, 2, dtype=tg.float64),
             "exp_avg_sq": tg.ones(2, 2, dtype=tg.float64).T}
    opt.load_state_dict({"state": {"0": state}, "param_groups": opt.state_dict()["param_groups"]})
    loaded = opt.state[p]
    assert loaded["step"] == 3 and type(loaded["step"]) is int           # as PyTorch saves it: a tensor
    for key in ("exp_avg", "exp_avg_sq"):
        assert (loaded[key].device, loaded[key].dtype, loaded[key].tolist()) == ("cpu", tg.float32, [[1.0, 1.0]] * 2)
    p.grad = tg.ones(2, 2, device="cpu")
    opt.step()
    assert loaded["step"] == 4 and state["exp_avg"].tolist() == [[1.0, 1.0]] * 2   # a copy was updated


# ---- module checkpoints -----------------------------------------------------------------------
@pytest.mark.stage2
def test_module_load_state_dict_checks_each_value():
    net = nn.Linear(3, 2)
    bad = {"weight": [[0.0] * 3] * 2, "bias": tg.zeros(2, dtype=tg.float64)}
    with pytest.raises(RuntimeError, match=r'While copying the parameter named "weight", expected '
                                           r"a Tensor from checkpoint but received list"):
        net.load_state_dict(bad)
    counts = nn.Linear(3, 2)
    counts.bias = nn.Parameter(tg.zeros(2, dtype=tg.int64), requires_grad=False)
    with pytest.raises(RuntimeError, match=r"dtype mismatch for bias: copying a param of dtype "
                                           r"tracegrad.float32 from checkpoint into one of dtype tracegrad.int64"):
        counts.load_state_dict({"weight": tg.zeros(2, 3), "bias": tg.tensor([1.5, 2.5])})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got list"):
        net.load_state_dict([])
    net.load_state_dict({"weight": tg.ones(2, 3, dtype=tg.float64), "bias": tg.tensor([1, 2])})
    assert net.weight.dtype is tg.float32 and net.bias.tolist() == [1.0, 2.0]   # converted


@pytest.mark.stage3
def test_module_load_state_dict_copies_across_devices():
    import stage3_native  # noqa: F401
    net = nn.Linear(2, 1).to(device="cpu")
    net.load_state_dict({"weight": tg.tensor([[1.0, 2.0]]), "bias": tg.tensor([3.0])})
    assert net.weight.device == "cpu" and net(tg.ones(1, 2, device="cpu")).tolist() == [[6.0]]


# ---- backend methods handed views that disagree, in a child process ---------------------------
def _views(device, *shapes, dtype=tg.float32):
    return [tg.ones(*shape, dtype=dtype, device=device).as_view() for shape in shapes]


def _index(device, n):
    return tg.tensor([i % 4 for i in range(n)], device=device).as_view()


# name: (call on backend be and device d, the error's message, whether "python" checks it too)
KERNEL_CASES = {
    "index_add src shorter than its index": (
        lambda be, d: be.index_add((4, 3), 0, _index(d, 4000), *_views(d, (2, 3))),
        r"index_add: src has shape \(2, 3\), expected \(4000, 3\)", True),
    "index_add dim out of range": (
        lambda be, d: be.index_add((4, 3), 2, _index(d, 4), *_views(d, (4, 3))),
        r"index_add: dim 2 is not a dimension of a 2-d view", True),
    "write from a shorter source": (
        lambda be, d: be.write(*_views(d, (100000,), (1,))),
        r"write: src has shape \(1,\), expected \(100000,\)", True),
    "sgd_update gradient of another shape": (
        lambda be, d: be.sgd_update(*[[v] for v in _views(d, (100000,), (1,))], [None], 0.1, 0, 0, 0, [False], False),
        r"sgd_update: grads\[0\] has shape \(1,\), expected \(100000,\)", True),
    "sgd_update momentum without a buffer": (
        lambda be, d: be.sgd_update(*[[v] for v in _views(d, (8,), (8,))], [None], 0.1, 0.9, 0, 0, [False], False),
        r"sgd_update: velocities\[0\] is None, expected a view of its parameter's shape \(8,\)", True),
    "sgd_update lists of different lengths": (
        lambda be, d: be.sgd_update(_views(d, (8,), (8,)), _views(d, (8,)), [None, None], 0.1, 0, 0, 0,
                                    [False, False], False),
        r"sgd_update: 2 parameters but 1 grads", True),
    "adam_update state of another shape": (
        lambda be, d: be.adam_update(*[[v] for v in _views(d, (100000,), (100000,), (4,), (4,))],
                                     0.1, 0.9, 0.999, 1e-8, 0, False, [1]),
        r"adam_update: ms\[0\] has shape \(4,\), expected \(100000,\)", True),
    "binary operands of different shapes": (
        lambda be, d: be.binary("add", *_views(d, (100000,), (1,)), tg.float32),
        r"binary: b has shape \(1,\), expected \(100000,\)", False),
    "where operands of different shapes": (
        lambda be, d: be.where(*_views(d, (100000,), dtype=tg.bool), *_views(d, (100000,), (1,)), tg.float32),
        r"where: b has shape \(1,\), expected \(100000,\)", False),
    "matmul inner sizes": (
        lambda be, d: be.matmul(*_views(d, (200, 300), (5, 400)), tg.float32),
        r"matmul: expected a \(\.\.\., m, k\) and b \(\.\.\., k, n\) .* got shapes \(200, 300\) and \(5, 400\)", False),
    "matmul batch sizes": (
        lambda be, d: be.matmul(*_views(d, (9, 20, 30), (1, 30, 40)), tg.float32),
        r"matmul: .* got shapes \(9, 20, 30\) and \(1, 30, 40\)", False),
    "matmul bias length": (
        lambda be, d: be.matmul(*_views(d, (20, 30), (30, 4000)), tg.float32, *_views(d, (1,))),
        r"matmul: bias must have shape \(4000,\), got \(1,\)", False),
    "reduce dim out of range": (
        lambda be, d: be.reduce("sum", *_views(d, (1000,)), (1,), tg.float32),
        r"reduce: dim 1 is not a dimension of a 1-d view", False),
    "reduce a dim twice": (
        lambda be, d: be.reduce("sum", *_views(d, (1000,)), (0, 0), tg.float32),
        r"reduce: dims \(0, 0\) name a dimension twice", False),
    "cumsum dim out of range": (
        lambda be, d: be.cumsum(*_views(d, (1000,)), 1, tg.float32),
        r"cumsum: dim 1 is not a dimension of a 1-d view", False),
    "index_select dim out of range": (
        lambda be, d: be.index_select(*_views(d, (1000,)), 1, _index(d, 4)),
        r"index_select: dim 1 is not a dimension of a 1-d view", False),
    "softmax dim out of range": (
        lambda be, d: be.softmax(*_views(d, (1000,)), 1, False, tg.float32),
        r"softmax: dim 1 is not a dimension", False),
    "softmax_backward gradient of another shape": (
        lambda be, d: be.softmax_backward(*_views(d, (1,), (100000,)), 0, False, tg.float32),
        r"softmax_backward: grad has shape \(1,\), expected \(100000,\)", False),
    "cross_entropy fewer targets than rows": (
        lambda be, d: be.cross_entropy(*_views(d, (100000, 3)), _index(d, 2), "mean", -100, tg.float32),
        r"cross_entropy: targets has shape \(2,\), expected \(100000,\)", False),
    "cross_entropy unknown reduction": (
        lambda be, d: be.cross_entropy(*_views(d, (2, 3)), _index(d, 2), "max", -100, tg.float32),
        r"cross_entropy: reduction must be one of", False),
    "cross_entropy_backward one scale for many rows": (
        lambda be, d: be.cross_entropy_backward(*_views(d, (100000, 3)), _index(d, 100000),
                                                *_views(d, (2,)), None, -100, tg.float32),
        r"cross_entropy_backward: scale has shape \(2,\), expected \(100000,\)", False),
    "cross_entropy_backward a count of several values": (
        lambda be, d: be.cross_entropy_backward(*_views(d, (100000, 3)), _index(d, 100000),
                                                *_views(d, (100000,), (100000,)), -100, tg.float32),
        r"cross_entropy_backward: kept has shape \(100000,\), expected \(\)", False),
    "mse_loss operands of different shapes": (
        lambda be, d: be.mse_loss(*_views(d, (100000,), (1,)), "mean", tg.float32),
        r"mse_loss: b has shape \(1,\), expected \(100000,\)", False),
    "mse_loss_backward gradient of another shape": (
        lambda be, d: be.mse_loss_backward(*_views(d, (100000,), (2,)), 1.0, tg.float32),
        r"mse_loss_backward: grad has shape \(2,\), expected \(100000,\)", False),
    "dropout probability out of range": (
        lambda be, d: be.dropout(*_views(d, (10,)), 1, 1.5, tg.float32),
        r"dropout: p must be in \[0, 1\), got 1.5", False),
    "layer_norm weight shorter than a row": (
        lambda be, d: be.layer_norm(*_views(d, (4, 100000), (1,)), None, 1e-5, tg.float32),
        r"layer_norm: weight has shape \(1,\), expected \(100000,\)", False),
    "layer_norm_backward fewer statistics than rows": (
        lambda be, d: be.layer_norm_backward(*_views(d, (100000, 4), (100000, 4), (1,), (1,)), None, tg.float32),
        r"layer_norm_backward: mean has shape \(1,\), expected \(100000,\)", False),
}


def run_kernel_cases(device, names):
    """In the child: each case in turn, one JSON line before and one after it."""
    import stage3_native  # noqa: F401
    be = backend.get(device)
    for name in names:
        print(json.dumps({"start": name}), flush=True)
        call = KERNEL_CASES[name][0]
        try:
            result = call(be, device)
            if device == "cpu:lazy":                     # what was recorded (and is kept) runs now
                stage3_native.lazy.realize_all(backend.get("cpu"))
            del result
            outcome = {"returned": True}
        except Exception as err:
            outcome = {"error": type(err).__name__, "message": str(err)}
        print(json.dumps({"case": name, **outcome}), flush=True)


_outcomes = {}


def kernel_outcome(device, name):
    """What case `name` did on `device`, from one child process per device (run once for
    the module); a case that crashes its child is recorded as such and the rest continue
    in a new child."""
    if device not in _outcomes:
        results, pending = {}, [n for n, (_, _, on_python) in KERNEL_CASES.items()
                                if on_python or device != "python"]
        while pending:
            code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.test_boundary "
                    f"import run_kernel_cases; run_kernel_cases({device!r}, {pending!r})")
            child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                   cwd=ROOT, env=dict(os.environ, TRACEGRAD_NUM_THREADS="1"))
            for line in child.stdout.splitlines():
                record = json.loads(line)
                if "case" in record:
                    results[record["case"]] = record
            started = [json.loads(line)["start"] for line in child.stdout.splitlines() if '"start"' in line]
            crashed = started[-1] if started and started[-1] not in results else None
            if crashed is None and child.returncode != 0:
                raise AssertionError(f"the child process failed:\n{child.stderr[-3000:]}")
            if crashed is not None:
                results[crashed] = {"crashed": child.returncode, "stderr": child.stderr[-500:]}
            pending = [n for n in pending if n not in results]
        _outcomes[device] = results
    return _outcomes[device][name]


def _kernel_params():
    for device in DEVICES:
        marks = device_marks(device)
        for name, (_, _, on_python) in KERNEL_CASES.items():
            if on_python or device != "python":
                yield pytest.param(device, name, marks=marks, id=f"{device}-{name.replace(' ', '_')}")


@pytest.mark.parametrize("device, name", list(_kernel_params()))
def test_a_kernel_is_never_handed_views_that_disagree(device, name):
    outcome = kernel_outcome(device, name)
    assert "crashed" not in outcome, f"{name} crashed the process on {device}: {outcome}"
    assert outcome.get("error") == "ValueError", f"{name} on {device}: {outcome}"
    assert re.search(KERNEL_CASES[name][1], outcome["message"]), outcome["message"]
