"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode as context managers,
decorators and (set_grad_enabled) a plain call, and the mode being per thread, as in
PyTorch: two threads training their own models give what they give one after the other."""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params()


def records(device="python"):
    """Whether an operation on a tensor that requires grad records its graph right now."""
    return (tg.ones(2, device=device, requires_grad=True) * 2).requires_grad


@pytest.fixture(autouse=True)
def grad_mode_restored():
    """A failing test must not leave grad mode off for the tests after it."""
    yield
    tg.set_grad_enabled(True)


def test_context_managers_nest_and_restore():
    with tg.no_grad():
        assert not tg.is_grad_enabled() and not records()
        with tg.enable_grad():
            assert tg.is_grad_enabled() and records()
        with tg.set_grad_enabled(True):
            assert records()
        assert not records()
    with tg.set_grad_enabled(mode=False):
        assert not records()
    with tg.inference_mode():
        assert not records()
        with tg.inference_mode(False):              # leaving inference mode enables grad
            assert records()
        assert not records()
    assert tg.is_grad_enabled() and records()


def test_modes_are_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with tg.no_grad():
            1 / 0
    assert tg.is_grad_enabled()


def test_set_grad_enabled_as_a_function():
    tg.set_grad_enabled(False)
    assert not tg.is_grad_enabled() and not records()
    tg.set_grad_enabled(True)
    assert tg.is_grad_enabled() and records()


@pytest.mark.parametrize("mode", [1, None, "no"])
def test_set_grad_enabled_and_inference_mode_take_a_bool(mode):
    with pytest.raises(TypeError, match="expected True or False"):
        tg.set_grad_enabled(mode)
    with pytest.raises(TypeError, match="expected True or False"):
        tg.inference_mode(mode)
    assert tg.is_grad_enabled()


def test_decorators_with_and_without_parentheses():
    @tg.no_grad()
    def off():
        return records()

    @tg.no_grad
    def off_bare():
        return records()

    @tg.inference_mode
    def off_inference():
        return records()

    @tg.set_grad_enabled(False)
    def off_set():
        return records()

    @tg.enable_grad()
    def on():
        return records()

    assert tg.is_grad_enabled()                    # decorating changed nothing (set_grad_enabled)
    assert off.__name__ == "off"
    assert not off() and not off_bare() and not off_inference() and not off_set()
    with tg.no_grad():
        assert on()
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()


def test_a_recursive_decorated_function_restores_the_mode():
    """Each call enters its own copy of the decorator: a shared one would keep the inner
    call's previous mode (off) and leave grad off after the outer call."""
    @tg.no_grad()
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(3) == 3
    assert tg.is_grad_enabled() and records()


def test_grad_mode_is_per_thread():
    """A thread inside no_grad leaves the others recording; a new thread starts enabled."""
    inside, leave = threading.Event(), threading.Event()
    seen = {}

    def evaluate():
        with tg.no_grad():
            inside.set()
            leave.wait(10)
            seen["worker"] = records()

    worker = threading.Thread(target=evaluate)
    worker.start()
    inside.wait(10)
    seen["main"] = records()
    leave.set()
    worker.join()
    assert seen == {"main": True, "worker": False}

    with tg.no_grad():
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(records).result()
        assert not tg.is_grad_enabled()


def training_run(device, seed, steps=25):
    """A small classifier and its optimizer; returns a function that trains it and returns,
    per step, the loss, the gradients and an evaluation under no_grad."""
    tg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).to(device=device, dtype=tg.float64)
    x = tg.randn(16, 4, dtype=tg.float64, device=device)
    y = tg.tensor([i % 3 for i in range(16)], device=device)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def run():
        history = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads = [p.grad.tolist() for p in model.parameters()]
            opt.step()
            with tg.no_grad():
                evaluation = model(x).sum().item()
            history.append((loss.item(), grads, evaluation))
        return history
    return run


@pytest.mark.parametrize("device", DEVICES)
def test_two_threads_train_as_they_would_one_after_the_other(device):
    alone = [training_run(device, seed)() for seed in (1, 2)]
    runs = [training_run(device, seed) for seed in (1, 2)]
    start = threading.Barrier(2)                    # neither finishes before the other starts

    def train(run):
        start.wait(10)
        return run()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)                     # switch threads as often as possible
    try:
        with ThreadPoolExecutor(2) as pool:
            together = [f.result() for f in [pool.submit(train, run) for run in runs]]
    finally:
        sys.setswitchinterval(interval)
    assert together == alone                        # bit for bit: the same operations
    assert tg.is_grad_enabled()
