"""torch's submodules as stage2_tensor's, importable as modules: random (seeds, the
generator's state saved and restored), testing.assert_close (PyTorch's tolerances and
message), utils.checkpoint (recomputed in backward, the same gradients), jit (the model
unchanged), backends and cuda (switches and queries)."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.backends.cudnn as cudnn
import stage2_tensor.nn as nn
from stage2_tensor import random as tg_random
from stage2_tensor.cuda.amp import GradScaler
from stage2_tensor.testing import assert_close
from stage2_tensor.utils.checkpoint import checkpoint, checkpoint_sequential

pytestmark = pytest.mark.stage2


def test_rng_state_round_trips_and_seeds_are_remembered():
    tg.manual_seed(7)
    assert tg_random.initial_seed() == 7
    state = tg.get_rng_state()
    assert state.dtype is tg.uint8 and state.shape == (tg_random.STATE_BYTES,)
    first = (tg.rand(4).tolist(), tg.randn(3).tolist())
    tg.set_rng_state(state)
    assert (tg.rand(4).tolist(), tg.randn(3).tolist()) == first
    drawn = tg_random.seed()
    assert tg_random.initial_seed() == drawn and tg.seed() != drawn
    with pytest.raises(RuntimeError, match="expected a state of"):
        tg.set_rng_state(tg.zeros(3, dtype=tg.uint8))
    with pytest.raises(TypeError, match="uint8"):
        tg.set_rng_state(tg.zeros(tg_random.STATE_BYTES))
    bad = state.clone()
    bad[2496:2500] = 255                                   # the position word, out of range
    with pytest.raises(RuntimeError, match="not a generator's state"):
        tg.set_rng_state(bad)


def test_assert_close_tolerances_and_message():
    assert_close(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0 + 1e-6]))           # float32: rtol 1.3e-6, atol 1e-5
    with pytest.raises(AssertionError) as info:
        assert_close(tg.tensor([1.0, 2.0, 3.0]), tg.tensor([1.0, 2.5, 3.0]))
    assert str(info.value).startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                                      "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                                      "Greatest relative difference: 0.2")
    with pytest.raises(AssertionError, match="(?s)Tensor-likes are not equal!.*at index \\(1, 1\\)"):
        assert_close(tg.tensor([[1, 2], [3, 4]]), tg.tensor([[1, 2], [3, 5]]))
    x64 = tg.tensor([1.0], dtype=tg.float64)
    with pytest.raises(AssertionError):
        assert_close(x64, x64 + 1e-6)                                           # float64: 1e-7
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match"):
        assert_close(tg.ones(2), tg.ones(2, dtype=tg.float64))
    with pytest.raises(AssertionError, match="attribute 'shape' do not match"):
        assert_close(tg.ones(2), tg.ones(3))
    with pytest.raises(AssertionError, match="Scalars are not close!"):
        assert_close(1.0, 1.1)
    nan = tg.tensor([float("nan")])
    with pytest.raises(AssertionError, match="Greatest absolute difference: nan"):
        assert_close(nan, nan)
    assert_close(nan, nan, equal_nan=True)
    assert_close([tg.ones(1), 2], [tg.ones(1), 2])
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        assert_close(tg.ones(1), tg.ones(1), rtol=1.0)
    with pytest.raises(AssertionError, match="^mine$"):
        assert_close(tg.ones(1), tg.zeros(1), msg="mine")


def _model():
    tg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Dropout(0.3), nn.Linear(4, 2))


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gives_the_gradients_of_the_plain_run(use_reentrant):
    model = _model()
    x = tg.randn(5, 3, dtype=tg.float32, requires_grad=True)
    tg.manual_seed(1)
    model(x).square().sum().backward()
    want = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.zero_grad()
    x.grad = None
    tg.manual_seed(1)
    out = checkpoint(model, x, use_reentrant=use_reentrant)
    assert out.grad_fn.name == "Checkpoint"
    out.square().sum().backward()                           # dropout's mask drawn again, the same
    for got, w in zip([p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()], want):
        np.testing.assert_allclose(got, w, rtol=1e-6)
    model.zero_grad()
    tg.manual_seed(1)
    checkpoint_sequential(model, 2, x).square().sum().backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(), want[0], rtol=1e-6)


def test_jit_returns_what_it_is_given():
    model = _model()
    assert tg.jit.script(model) is model and tg.jit.trace(model, tg.ones(1, 3)) is model
    assert tg.jit.script()(len) is len and not tg.jit.is_scripting()
    with pytest.raises(TypeError, match="expected a Module or a function"):
        tg.jit.trace(3, None)


def test_backends_and_cuda_are_modules_with_the_same_switches():
    tg.backends.cudnn.benchmark = True
    try:
        assert cudnn.benchmark is True and tg.backends.cudnn is cudnn
    finally:
        cudnn.benchmark = False
    assert not cudnn.is_available() and tg.backends.cuda.matmul.allow_tf32 is False
    assert tg.cuda.is_available() in (True, False) and tg.cuda.device_count() == int(tg.cuda.is_available())
    assert GradScaler is tg.amp.GradScaler and tg.cuda.amp.GradScaler is GradScaler


def test_pytorchs_module_layout_names_the_same_classes():
    """torch.nn.modules.rnn.LSTM and the rest (a saved model's safe list spells them so),
    importable as modules too; each name PyTorch gives a class there is one of nn's."""
    import importlib

    from stage2_tensor.nn.layout import LAYOUT
    assert nn.modules.rnn.LSTM is nn.LSTM and nn.modules.sparse.Embedding is nn.Embedding
    assert nn.modules.linear.NonDynamicallyQuantizableLinear is nn.Linear
    assert importlib.import_module("stage2_tensor.nn.modules.dropout").Dropout is nn.Dropout
    for name, classes in LAYOUT.items():
        sub = getattr(nn.modules, name)
        for cls in classes.replace(",", " ").split():
            assert isinstance(getattr(sub, cls), type) and issubclass(getattr(sub, cls), nn.Module), (name, cls)

