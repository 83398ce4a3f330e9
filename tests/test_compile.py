"""tg.compile: a step captured once and replayed gives eager's results, bit for bit where the
replay runs eager's kernels (every device: "python" runs the function as written, "cpu" and
the CUDA devices capture and replay it); recompiles on new inputs; graph breaks run eagerly
or raise."""
import warnings

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor.compiled import CompiledFunction, GraphBreak, config
from stage2_tensor.compiled.compiled import Replay

from .engines import device_params

DEVICES = device_params("python", "cpu", "cuda-emu", "cuda")
CAPTURING = device_params("cpu", "cuda-emu", "cuda")       # the devices with a capture(inputs)
STEPS = 4


@pytest.fixture(autouse=True, scope="module")
def _kernels(kernel_cache):
    """The fused kernels the plans generate go to a folder of this module's."""
    yield


def replays(compiled):
    """How many of a compiled function's keys replay a plan."""
    fn = compiled._compiled if isinstance(compiled, nn.Module) else compiled
    return sum(isinstance(e, Replay) for e in fn.entries.values())


def train(make, device, compiled, steps=STEPS):
    """The losses and final parameters of ``steps`` steps of make(device) -> (step, model),
    the step compiled or not, from seed 0."""
    tg.manual_seed(0)
    step, model, data = make(device)
    run = tg.compile(step) if compiled else step
    losses = [run(*data).detach().numpy().copy() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def assert_same(eager, compiled, device):
    """The same bits, but on a GPU: there the additions of an atomicAdd land in another
    order at each run (the embedding's and pooling's backward), eager's own runs included."""
    for a, b in zip(eager, compiled, strict=True):
        if device == "cuda":
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)


def same_as_eager(make, device, steps=STEPS):
    eager_losses, eager_params, _ = train(make, device, False, steps)
    losses, params, run = train(make, device, True, steps)
    assert_same(eager_losses + eager_params, losses + params, device)
    return run


def mlp(device):
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3)).to(device)
    opt = tg.optim.Adam(model.parameters(), lr=1e-2)
    x, y = tg.randn(8, 12, device=device), tg.randint(0, 3, (8,), device=device)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, model, (x, y)


def cnn(device):
    """Convolution, BatchNorm's running statistics (state changed in place), SGD with
    momentum, a scheduler stepping inside the step, gradient clipping."""
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 3 * 3, 5)).to(device)
    opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = tg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    x, y = tg.randn(6, 2, 6, 6, device=device), tg.randint(0, 5, (6,), device=device)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        return loss
    return step, model, (x, y)


def gpt(device):
    from stage4_models.gpt import GPT, GPTConfig
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.1), device=device)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-2)
    idx = tg.randint(0, 11, (3, 8), device=device)

    def step(idx, targets):
        _, loss = model(idx, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss
    return step, model, (idx, tg.roll(idx, 1, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [mlp, cnn, gpt])
def test_a_compiled_training_step_is_eagers(make, device):
    run = same_as_eager(make, device)
    assert replays(run) == (0 if device == "python" else 1)


@pytest.mark.parametrize("device", CAPTURING)
def test_new_shapes_compile_again_and_each_replays(device):
    tg.manual_seed(0)
    model = nn.Linear(5, 2).to(device)
    run = tg.compile(lambda x: model(x).relu().sum(dim=1))
    with tg.no_grad():
        for n in (4, 4, 4, 3, 3, 3, 4):
            x = tg.randn(n, 5, device=device)
            np.testing.assert_array_equal(run(x).numpy(), model(x).relu().sum(dim=1).numpy())
    assert replays(run) == 2


@pytest.mark.parametrize("device", CAPTURING)
def test_outputs_are_new_tensors_at_every_call(device):
    model = nn.Linear(3, 1).to(device)
    run = tg.compile(lambda x: model(x) * 2)
    x = tg.ones(2, 3, device=device)
    with tg.no_grad():
        outs = [run(x) for _ in range(4)]
        before = outs[2].numpy().copy()
        model.weight.add_(1.0)                      # the next replay reads the new weights
        after, expected = run(x), model(x) * 2
    np.testing.assert_array_equal(outs[2].numpy(), before)
    np.testing.assert_array_equal(after.numpy(), expected.numpy())
    assert after.storage.buffer is not outs[2].storage.buffer


@pytest.mark.parametrize("device", CAPTURING)
def test_buffers_inside_a_list_argument_are_followed(device):
    """cat hands C its inputs' buffers as one list: a replay passes the new ones there."""
    run = tg.compile(lambda x, y: tg.cat([x * 2, y]) + 1)
    for _ in range(4):
        x, y = tg.randn(2, 3, device=device), tg.randn(1, 3, device=device)
        np.testing.assert_array_equal(run(x, y).numpy(), (tg.cat([x * 2, y]) + 1).numpy())
    assert replays(run) == 1


@pytest.mark.parametrize("device", CAPTURING)
def test_a_value_read_into_python_is_a_graph_break(device):
    model = nn.Linear(3, 1).to(device)

    def step(x):
        y = model(x)
        return y * 2 if y.sum().item() > 0 else y       # .item() decides the branch

    run = tg.compile(step)
    x = tg.randn(4, 3, device=device)
    with tg.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_array_equal(run(x).numpy(), step(x).numpy())
    assert any("graph break" in str(w.message) and "test_compile.py" in str(w.message) for w in caught)
    assert replays(run) == 0
    strict = tg.compile(step, fullgraph=True)
    with tg.no_grad():
        strict(x)                                   # the warm-up runs eagerly
        with pytest.raises(GraphBreak, match=r"item\(\) > 0"):
            strict(x)


@pytest.mark.parametrize("device", CAPTURING)
def test_the_cache_is_bounded(device, monkeypatch):
    monkeypatch.setattr(config, "cache_size_limit", 2)
    run = tg.compile(lambda x: x * 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in (1, 1, 2, 2, 3, 3):
            x = tg.ones(n, device=device)
            np.testing.assert_array_equal(run(x).numpy(), np.full(n, 3.0, np.float32))
    assert len(run.entries) == 2 and any("cache_size_limit" in str(w.message) for w in caught)


@pytest.mark.parametrize("device", CAPTURING)
def test_an_index_out_of_range_at_replay_is_an_error(device):
    emb = nn.Embedding(4, 2).to(device)
    run = tg.compile(lambda i: emb(i) * 1)
    with tg.no_grad():
        for _ in range(3):
            run(tg.tensor([0, 3], device=device))
        with pytest.raises(RuntimeError, match="out of range"):
            run(tg.tensor([0, 4], device=device))


@pytest.mark.parametrize("device", CAPTURING)
def test_a_compiled_module(device):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).to(device)
    compiled = tg.compile(model)
    assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in model.state_dict()]
    model.note = "the model's own attribute"
    assert isinstance(compiled._compiled, CompiledFunction) and compiled.note is model.note
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    x = tg.randn(5, 4, device=device)
    with tg.no_grad():
        for _ in range(3):
            np.testing.assert_array_equal(compiled(x).numpy(), model(x).numpy())
    assert replays(compiled) == 1


def test_compile_takes_pytorchs_arguments():
    def double(x):
        return x * 2
    assert tg.compile(double, disable=True) is double
    assert isinstance(tg.compile(mode="reduce-overhead")(double), CompiledFunction)
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        tg.compile(double, mode="fastest")
    with pytest.raises(TypeError, match="expected a Module or a function"):
        tg.compile(3)


def same_through_a_compiled_model(make, step, device):
    """STEPS calls of step(forward, opt, *data) (make(device) -> (model, opt, data)), forward
    the model or tg.compile(model), from seed 0: the losses and final parameters the same
    both ways. Returns the compiled model."""
    def run(compiled):
        tg.manual_seed(0)
        model, opt, data = make(device)
        forward = tg.compile(model) if compiled else model
        losses = [step(forward, opt, *data).detach().numpy().copy() for _ in range(STEPS)]
        return losses + [p.detach().numpy().copy() for p in model.parameters()], forward

    eager, _ = run(False)
    compiled, forward = run(True)
    assert_same(eager, compiled, device)
    return forward


@pytest.mark.parametrize("device", DEVICES)
def test_training_through_a_compiled_module(device):
    """model = tg.compile(model): its forward and backward captured, the loss taken outside
    it and from both of its outputs; gradients accumulate as autograd's."""
    def make(device):
        model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.25), nn.Linear(8, 3)).to(device)
        return model, tg.optim.SGD(model.parameters(), lr=0.1), (tg.randn(5, 6, device=device),)

    def step(forward, opt, x):
        opt.zero_grad()
        out = forward(x)
        loss = out.square().mean() + (out[:, :1] * 2).sum()
        loss.backward()
        forward(x).sum().backward()                 # a second forward's backward accumulates
        opt.step()
        return loss

    forward = same_through_a_compiled_model(make, step, device)
    # two keys: the parameters' gradients are None at the first forward of a step, not at the second
    assert replays(forward) == (0 if device == "python" else 2)


@pytest.mark.parametrize("device", CAPTURING)
def test_a_compiled_gpt_with_tied_weights_trains_as_eager(device):
    """nanoGPT's pattern: model = tg.compile(model), the loss from the model's second output;
    its embedding and output layer share one parameter, which gets one gradient."""
    def make(device):
        _, model, data = gpt(device)
        return model, tg.optim.AdamW(model.parameters(), lr=1e-2), data

    def step(forward, opt, idx, targets):
        _, loss = forward(idx, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    forward = same_through_a_compiled_model(make, step, device)
    assert replays(forward) == 1


@pytest.mark.parametrize("device", CAPTURING)
def test_a_compiled_model_inside_a_compiled_step(device):
    """The inner compiled function is part of the outer one's capture (PyTorch inlines it)."""
    def make(device):
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2)).to(device)
        inner = tg.compile(model)
        opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        x = tg.randn(3, 4, device=device)

        def step(x):
            opt.zero_grad()
            loss = inner(x).square().mean()
            loss.backward()
            opt.step()
            return loss
        return step, model, (x,)
    run = same_as_eager(make, device, steps=5)
    assert replays(run) == 1


def test_the_memory_plan_shares_blocks_between_lives_that_do_not_meet():
    from stage3_native.capture import memory
    spans = {"a": (0, 1), "b": (1, 3), "c": (2, 2), "d": (4, 5), "e": (4, 6)}
    sizes = {"a": 100, "b": 50, "c": 100, "d": 40, "e": 120}
    where, blocks = memory.pack(spans, sizes)
    for u in spans:
        for v in spans:
            meet = not (spans[u][1] < spans[v][0] or spans[v][1] < spans[u][0])
            if u != v and meet:
                assert where[u] != where[v]
            if where[u] == where[v]:
                assert blocks[where[u]] >= max(sizes[u], sizes[v])
    assert where["c"] == where["a"] and len(blocks) == 3      # c after a; d in b's; e a new one


def layer_norm_gelu(device):
    """LayerNorm written in ops, then GELU: chains of element-wise ops, forward and backward,
    between the reductions."""
    tg.manual_seed(0)
    x = tg.randn(32, 40, device=device, dtype=tg.float64).requires_grad_()
    w = (1 + 0.1 * tg.randn(40, device=device, dtype=tg.float64)).requires_grad_()

    def step(x, w):
        for t in (x, w):
            t.grad = None
        centered = x - x.mean(-1, keepdim=True)
        var = (centered * centered).mean(-1, keepdim=True)
        y = F.gelu(centered / (var + 1e-5).sqrt() * w + 0.5, approximate="tanh")
        loss = (y * y).sum()
        loss.backward()
        return loss.detach(), x.grad, w.grad
    return step, (x, w)


@pytest.mark.parametrize("device", device_params("cpu"))
@pytest.mark.parametrize("dtype", [tg.float32, tg.float64])
def test_fused_element_wise_runs_give_eagers_bits(device, dtype, monkeypatch):
    from stage3_native.capture import fusion
    step, (x, w) = layer_norm_gelu(device)
    x, w = (t.detach().to(dtype).requires_grad_() for t in (x, w))
    want = [t.numpy().copy() for t in step(x, w)]
    plans = {}
    for enabled in (False, True):
        monkeypatch.setattr(fusion, "enabled", enabled)
        run = tg.compile(step)
        for _ in range(4):
            got = run(x, w)
            for a, b in zip(want, got, strict=True):
                np.testing.assert_array_equal(a, b.numpy())
        (plans[enabled],) = [e.plan for e in run.entries.values() if isinstance(e, Replay)]
    fused = [s for s, _ in plans[True].segments for s in s if getattr(s, "name", "").startswith("fused")]
    assert fused and plans[True].launches < plans[False].launches
    assert plans[True].unshared_bytes < plans[False].unshared_bytes     # intermediates never made


def test_a_run_ends_where_a_member_reads_an_intermediate_transposed(kernel_cache):
    """x.exp() read as a transposed view by the add: not element by element, so not fused
    with it; the plan still gives eager's values."""
    x = tg.randn(40, 40)
    run = tg.compile(lambda x: (x.exp().t() + x).neg())
    want = (x.exp().t() + x).neg().numpy()
    for _ in range(3):
        np.testing.assert_array_equal(run(x).numpy(), want)
    (replay,) = [e for e in run.entries.values() if isinstance(e, Replay)]
    names = [s.name for s, _ in replay.plan.segments for s in s]
    assert names[0] == "tg_unary_f32" and names[1].startswith("fused add neg"), names


FUSABLE = {
    "a slice, a column broadcast, a number": lambda x, b: ((x[:, 1:] * b[:, :1] + 2.0).tanh() - x[:, :-1]).exp(),
    "a row broadcast and a 0-d tensor": lambda x, b: (x * b[0] - x.mean()).relu().sqrt(),
    "one intermediate read twice": lambda x, b: (lambda s: s * s + s)(x.sigmoid()),
    "a transposed operand": lambda x, b: (x.t() * b + b).abs().log1p(),
}


@pytest.mark.parametrize("device", device_params("cpu"))
@pytest.mark.parametrize("case", FUSABLE)
def test_fusion_reads_views_broadcasts_and_numbers(device, case):
    fn = FUSABLE[case]
    x, b = tg.randn(48, 48, device=device), tg.randn(48, 48, device=device)
    run = tg.compile(fn, fullgraph=True)
    for _ in range(3):
        np.testing.assert_array_equal(run(x, b).numpy(), fn(x, b).numpy())
    (replay,) = [e for e in run.entries.values() if isinstance(e, Replay)]
    assert any(getattr(s, "name", "").startswith("fused") for s, _ in replay.plan.segments for s in s)


@pytest.mark.parametrize("device", device_params("cpu"))
def test_a_captured_step_needs_less_memory_than_its_buffers(device):
    tg.manual_seed(0)
    step, _, data = gpt(device)
    run = tg.compile(step)
    for _ in range(3):
        run(*data)
    (replay,) = [e for e in run.entries.values() if isinstance(e, Replay)]
    assert 0 < sum(replay.plan.block_sizes) < replay.plan.unshared_bytes


@pytest.mark.parametrize("device", device_params("cpu"))
def test_threads_replaying_one_plan(device):
    """The plan's blocks serve one replay at a time (the C calls release the GIL: threads do
    interleave)."""
    import threading
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 256))
    model.to(device)
    run = tg.compile(lambda x: model(x).tanh() * 2)
    inputs = [tg.randn(128, 256, device=device) for _ in range(8)]
    with tg.no_grad():
        expected = [(model(x).tanh() * 2).numpy() for x in inputs]
        for _ in range(3):
            run(inputs[0])
        got, errors = {}, []

        def work(k):
            try:
                with tg.no_grad():                  # grad mode belongs to a thread
                    work_on(k)
            except Exception as error:              # noqa: BLE001  (reported below)
                errors.append(error)

        def work_on(k):
            for _ in range(10):
                for i in range(k, len(inputs), 2):
                    got[i] = run(inputs[i]).numpy()

        threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for i, want in enumerate(expected):
        np.testing.assert_array_equal(got[i], want)


@pytest.mark.parametrize("device", device_params("cpu"))
def test_a_capture_records_its_own_threads_kernels_only(device):
    import threading
    import time
    tg.manual_seed(0)
    model = nn.Linear(16, 16).to(device)
    x = tg.randn(8, 16, device=device)
    def f(x):
        y = model(x)
        time.sleep(0.01)                            # the other thread runs meanwhile
        return (y * 3).relu()

    alone = tg.compile(f)
    with tg.no_grad():
        for _ in range(3):
            alone(x)
    run = tg.compile(f)
    stop, done = threading.Event(), []

    def eager_work():                               # kernels of its own, all through the capture
        a = tg.randn(64, 64, device=device)
        while not stop.is_set():
            a = (a @ a).tanh()
        done.append(True)

    worker = threading.Thread(target=eager_work)
    worker.start()
    try:
        with tg.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("error")          # a graph break would warn
            outs = [run(x).numpy() for _ in range(5)]
            want = (model(x) * 3).relu().numpy()
    finally:
        stop.set()
        worker.join()
    assert done and replays(run) == 1
    (captured,), (reference,) = ([e for e in f.entries.values() if isinstance(e, Replay)] for f in (run, alone))
    assert captured.plan.launches == reference.plan.launches
    for out in outs:
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("device", device_params("cpu"))
def test_a_compiled_method_of_two_modules_replays_each_ones_state(device):
    """@tg.compile on a method: two instances are two states, never one's plan on the other's."""
    class Scaled(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.linear = nn.Linear(3, 3)
            self.k = k

        @tg.compile
        def forward(self, x):
            return self.linear(x) * 2

    tg.manual_seed(0)
    a, b = Scaled(1).to(device), Scaled(2).to(device)
    x = tg.randn(2, 3, device=device)
    with tg.no_grad():
        want = {id(m): (m.linear(x) * 2).numpy() for m in (a, b)}
        for _ in range(4):
            for m in (a, b, b, a):
                np.testing.assert_array_equal(m(x).numpy(), want[id(m)])
