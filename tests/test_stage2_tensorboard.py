"""stage2_tensor.utils.tensorboard: without tensorboardX its import says what to do; with
it (a stand-in recording the calls, and the real package where installed) SummaryWriter's
add_* methods read tracegrad's tensors as numbers and numpy arrays; add_graph says to draw
tracegrad's graph instead."""
import importlib
import sys
import types

import numpy as np
import pytest

import stage2_tensor as tg

pytestmark = pytest.mark.stage2

MODULE = "stage2_tensor.utils.tensorboard"


def _import_with(monkeypatch, tensorboardX):
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    monkeypatch.setitem(sys.modules, "tensorboardX", tensorboardX)   # None: the import fails
    return importlib.import_module(MODULE)


def test_without_tensorboardx_the_import_says_what_to_do(monkeypatch):
    with pytest.raises(ImportError, match=r"pip install tensorboardX.*log the numbers yourself"):
        _import_with(monkeypatch, None)


class Recorder:
    """tensorboardX.SummaryWriter's stand-in: what each add_* call received."""

    def __init__(self, logdir=None, **kwargs):
        self.logdir, self.calls = logdir, []

    def add_scalar(self, tag, scalar_value, global_step=None):
        self.calls.append((tag, scalar_value, global_step))

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None):
        self.calls.append((main_tag, tag_scalar_dict, global_step))

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow"):
        self.calls.append((tag, values, global_step))

    def add_graph(self, model, input_to_model=None):
        raise AssertionError("not reached: tracegrad's writer answers itself")


def test_add_methods_read_tensors_as_numbers_and_arrays(monkeypatch):
    fake = types.ModuleType("tensorboardX")
    fake.SummaryWriter = Recorder
    writer = _import_with(monkeypatch, fake).SummaryWriter("runs/x")
    w = tg.tensor([[1.0, 2.0]], requires_grad=True)
    writer.add_scalar("loss", (w * 2).sum(), 3)
    writer.add_scalars("parts", {"a": tg.tensor(0.5), "b": 1.5}, global_step=4)
    writer.add_histogram("w", w, 5)
    (tag, value, step), (_, parts, _), (_, values, _) = writer.calls
    assert (tag, value, step) == ("loss", 6.0, 3) and isinstance(value, float)
    assert parts == {"a": 0.5, "b": 1.5}
    assert isinstance(values, np.ndarray) and values.tolist() == [[1.0, 2.0]]
    with pytest.raises(NotImplementedError, match=r"stage2_tensor.viz.draw\(loss\)"):
        writer.add_graph(object(), w)


def test_the_real_tensorboardx_writes_an_event_file(tmp_path):
    pytest.importorskip("tensorboardX")
    sys.modules.pop(MODULE, None)
    from stage2_tensor.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(str(tmp_path))
    writer.add_scalar("train/loss", tg.tensor(0.25), 1)
    writer.add_histogram("weights", tg.randn(50), 1)
    writer.close()
    events = list(tmp_path.glob("events.out.tfevents.*"))
    assert len(events) == 1 and b"train/loss" in events[0].read_bytes()
