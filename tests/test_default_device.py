"""The default device (PyTorch's get_default_device / set_default_device): where tensors and
modules made without a device live. "cpu" when stage3's plugin provides it, as PyTorch's
default is its CPU; "python" with stage2 alone."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend
from tests.engines import device_params

pytestmark = [pytest.mark.stage2, pytest.mark.stage3]      # stage2's default, stage3 installed


@pytest.fixture(autouse=True)
def installed_default(monkeypatch):
    """Each test starts from the installed default and leaves it so."""
    monkeypatch.setattr(backend, "_default_device", None)


def test_the_native_cpu_is_the_default_where_installed():
    assert tg.get_default_device() == "cpu" and tg.get_default_device().type == "cpu"
    made = [tg.zeros(2), tg.tensor([1.0]), tg.arange(3), tg.randn(2), tg.from_numpy(np.ones(2)),
            tg.nn.Linear(2, 3).weight, tg.nn.Embedding(5, 2).weight]
    assert {t.device for t in made} == {"cpu"}


def test_stage2_alone_keeps_python(monkeypatch):
    monkeypatch.setattr(backend, "available", lambda name: name == "python")
    assert tg.get_default_device() == "python"
    assert tg.ones(3).device == "python"


def test_set_default_device_and_the_with_block():
    tg.set_default_device("python")
    assert tg.zeros(2).device == "python" and tg.nn.Linear(2, 2).bias.device == "python"
    with tg.device("cpu:lazy"):
        assert tg.zeros(1).device == "cpu:lazy"
        with tg.device("cpu"):
            assert tg.full((2,), 3.0).device == "cpu"
        assert tg.get_default_device() == "cpu:lazy"
    assert tg.ones(1).device == "python"
    assert tg.ones(1, device="cpu").device == "cpu"            # a named device still wins
    tg.set_default_device(None)
    assert tg.get_default_device() == "cpu"


def test_an_unknown_device_is_refused_when_set():
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        tg.set_default_device("gpu")
    assert tg.get_default_device() == "cpu"


def test_repr_names_a_device_only_when_not_the_default():
    assert repr(tg.tensor([1.0, 2.0])) == "tensor([1.0, 2.0])"
    assert repr(tg.tensor([1.0], device="python")) == "tensor([1.0], device='python')"
    tg.set_default_device("python")
    assert repr(tg.tensor([1.0], device="cpu")) == "tensor([1.0], device='cpu')"


@pytest.mark.parametrize("device", device_params("python", "cpu"))
def test_tensor_copies_what_it_is_given(device):
    """torch.tensor copies a tensor or a numpy array, also where the device could share it."""
    a = tg.tensor([1.0, 2.0], device=device)
    b = tg.tensor(a)
    b[0] = 5.0
    array = np.zeros(3, dtype=np.float32)
    t = tg.tensor(array, device=device)
    array[0] = 7.0
    assert a.tolist() == [1.0, 2.0] and t.tolist() == [0.0, 0.0, 0.0]
