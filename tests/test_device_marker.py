"""The suite's own bookkeeping (conftest.py): the tests of a device this machine cannot run
are deselected but one, which skips saying why and how many; slow tests run only when asked."""
from types import SimpleNamespace

import pytest

from . import conftest


class Item:
    """What the hook reads of a collected test: its device markers; what it writes: a marker."""
    def __init__(self, *devices):
        self.devices, self.added = devices, []

    def iter_markers(self, name):
        return [pytest.mark.device(d).mark for d in self.devices] if name == "device" else []

    def add_marker(self, marker):
        self.added.append(marker.mark)


def set_aside(items, monkeypatch):
    """Run the hook on `items` where only "cuda" cannot run; what it deselected."""
    monkeypatch.setattr(conftest, "unavailable_reason", lambda device: "no GPU" if device == "cuda" else None)
    deselected = []
    config = SimpleNamespace(hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    conftest.pytest_collection_modifyitems(config, items)
    return deselected


def test_one_skip_stands_for_every_test_of_a_device_that_cannot_run(monkeypatch):
    on_python, first, plain, second, third = Item("python"), Item("cuda"), Item(), Item("cuda"), Item("cuda")
    items = [on_python, first, plain, second, third]
    assert set_aside(items, monkeypatch) == [second, third]
    assert items == [on_python, first, plain]
    [skip] = first.added
    assert skip.name == "skip"
    assert skip.kwargs["reason"] == "device 'cuda' cannot run here (no GPU): its 3 tests are not run"
    assert on_python.added == plain.added == []


def test_where_every_device_runs_nothing_is_set_aside(monkeypatch):
    items = [Item("python"), Item("cpu"), Item()]
    kept = list(items)
    assert set_aside(items, monkeypatch) == []
    assert items == kept and all(item.added == [] for item in items)


class Marked:
    def __init__(self, slow, device=None):
        self.slow, self.device = slow, device

    def get_closest_marker(self, name):
        return pytest.mark.slow.mark if name == "slow" and self.slow else None

    def iter_markers(self, name):
        return [pytest.mark.device(self.device).mark] if name == "device" and self.device else []


def test_slow_tests_run_only_when_asked():
    fast, slow = Marked(False), Marked(True)
    items = [fast, slow]
    assert conftest.SlowTests.set_aside("", items) == [slow] and items == [fast]
    items = [fast, slow]
    assert conftest.SlowTests.set_aside("stage4", items) == [slow] and items == [fast]
    items = [fast, slow]
    assert conftest.SlowTests.set_aside("slow", items) == [] and items == [fast, slow]


def test_the_cuda_checks_are_slow_tests():
    """make test leaves the CUDA devices' tests to make test-slow, as it does tests marked slow."""
    cpu, emulated, gpu = Marked(False, "cpu"), Marked(False, "cuda-emu"), Marked(False, "cuda")
    items = [cpu, emulated, gpu]
    assert conftest.SlowTests.set_aside("", items) == [emulated, gpu] and items == [cpu]
    items = [cpu, emulated, gpu]
    assert conftest.SlowTests.set_aside("slow", items) == [] and items == [cpu, emulated, gpu]
