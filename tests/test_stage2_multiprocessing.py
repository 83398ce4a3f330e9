"""torch.multiprocessing (stage2_tensor.multiprocessing) and share_memory_: Python's
multiprocessing names; a model in shared memory trained by other processes ("hogwild"),
forked and (slow) spawned; tensors pickled by value; the errors for device "python", for a
shared tensor sent through a queue and for a tensor inside a graph."""
import multiprocessing
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.multiprocessing as mp
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F

from .engines import device_params

pytestmark = pytest.mark.stage2

CPU = device_params("cpu")


def train(rank, model, steps):
    """A hogwild worker: its own optimizer, the shared parameters."""
    tg.manual_seed(rank)
    opt = tg.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = tg.randn(16, 2, device="cpu")
        loss = F.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()


def fails(rank):
    raise SystemExit(3 if rank == 1 else 0)


def test_it_is_pythons_multiprocessing():
    assert mp.Process is multiprocessing.Process and mp.Queue is multiprocessing.Queue
    assert mp.get_context is multiprocessing.get_context and tg.multiprocessing is mp


@pytest.mark.parametrize("device", CPU)
def test_share_memory_keeps_the_tensor_and_its_values(device):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(device)
    before = [t.tolist() for t in model.state_dict().values()]
    weight = model[0].weight
    assert not weight.is_shared()
    assert model.share_memory() is model
    assert model[0].weight is weight and weight.is_shared() and model[1].running_mean.is_shared()
    assert [t.tolist() for t in model.state_dict().values()] == before
    assert weight.share_memory_() is weight                     # already shared: nothing moves


def _run(context, model, workers=2, steps=150):
    processes = [context.Process(target=train, args=(rank, model, steps)) for rank in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    assert [p.exitcode for p in processes] == [0] * workers


@pytest.mark.parametrize("device", CPU)
def test_forked_processes_train_the_shared_model(device):
    tg.manual_seed(0)
    model = nn.Linear(2, 1).to(device).share_memory()
    _run(multiprocessing.get_context("fork"), model)
    np.testing.assert_allclose(model.weight.tolist(), [[1.0, 1.0]], atol=1e-3)   # learned y = x0 + x1
    unshared = nn.Linear(2, 1).to(device)
    start = unshared.weight.tolist()
    _run(multiprocessing.get_context("fork"), unshared, workers=1, steps=5)
    assert unshared.weight.tolist() == start                   # a child's copy, not ours


@pytest.mark.slow
@pytest.mark.parametrize("device", CPU)
def test_spawned_processes_train_the_shared_model(device):
    tg.manual_seed(0)
    model = nn.Linear(2, 1).to(device).share_memory()
    _run(mp.get_context("spawn"), model)
    np.testing.assert_allclose(model.weight.tolist(), [[1.0, 1.0]], atol=1e-3)


def test_spawn_runs_fn_with_its_rank_and_reports_a_failure():
    with pytest.raises(RuntimeError, match="spawn: process 1 terminated with exit code 3"):
        mp.spawn(fails, nprocs=2, start_method="fork")
    with pytest.raises(ValueError, match="nprocs must be a positive int"):
        mp.spawn(fails, nprocs=0)


def test_device_python_cannot_share():
    with pytest.raises(RuntimeError, match=r"device 'python' keeps its elements in Python arrays.*"
                                           r"model.to\('cpu'\).share_memory\(\)"):
        tg.zeros(2, device="python").share_memory_()


@pytest.mark.parametrize("device", ["python", *CPU])
def test_pickle_sends_values(device):
    t = tg.tensor([[1.5, -2.0]], device=device).T                # a view: its values are sent
    back = pickle.loads(pickle.dumps(t))
    assert back.tolist() == [[1.5], [-2.0]] and back.device == device and back.dtype is tg.float32
    p = nn.Parameter(tg.ones(2, dtype=tg.float64, device=device))
    q = pickle.loads(ForkingPickler.dumps(p))                  # not shared: by value
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.dtype is tg.float64 and q.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        pickle.dumps(p * 2)


@pytest.mark.parametrize("device", CPU)
def test_a_shared_tensor_is_not_sent_through_a_queue(device):
    t = tg.zeros(2, device=device).share_memory_()
    with pytest.raises(RuntimeError, match="through a Queue or a Pipe it would arrive as a copy"):
        ForkingPickler.dumps(t)
    assert pickle.loads(pickle.dumps(t)).tolist() == [0.0, 0.0]    # plain pickle: a copy
