"""stage2_tensor.utils.data (Dataset, TensorDataset, DataLoader, default_collate), Generator
and randperm: batches, order, collation and errors against their direct definition."""
import collections

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.utils.data
from stage2_tensor.utils.data import DataLoader, Dataset, TensorDataset, default_collate


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def data(n=5):
    x = tg.arange(2 * n).float().reshape(n, 2)
    return x, tg.arange(n) * 10


# ---- DataLoader ------------------------------------------------------------------------------
def test_reachable_as_pytorch_spells_it():
    assert tg.utils.data is stage2_tensor.utils.data
    assert tg.utils.data.DataLoader is DataLoader


def test_batches_in_order_len_and_drop_last():
    x, y = data()
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    batches = list(loader)
    assert len(loader) == 3 == len(batches)
    assert all(isinstance(b, list) and len(b) == 2 for b in batches)   # PyTorch: a list per batch
    assert [b[1].tolist() for b in batches] == [[0, 10], [20, 30], [40]]
    assert batches[2][0].tolist() == [[8.0, 9.0]] and batches[0][0].shape == (2, 2)
    assert batches[0][1].dtype is tg.int64
    dropped = DataLoader(TensorDataset(x, y), batch_size=2, drop_last=True)
    assert len(dropped) == 2 == len(list(dropped))
    assert len(DataLoader(TensorDataset(x), batch_size=5, drop_last=True)) == 1
    assert len(DataLoader(TensorDataset(x), batch_size=6, drop_last=True)) == 0
    assert len(DataLoader(TensorDataset(x), batch_size=6)) == 1
    assert [b[0].shape for b in DataLoader(TensorDataset(x))] == [(1, 2)] * 5   # batch_size=1


def test_gathered_batches_equal_stacked_samples():
    x, y = data(7)
    for shuffle in (False, True):
        loaders = [DataLoader(TensorDataset(x, y), batch_size=3, shuffle=shuffle,
                              generator=tg.Generator().manual_seed(4), collate_fn=c)
                   for c in (None, lambda b: default_collate(b))]     # gathered, then stacked
        fast, slow = (list(loader) for loader in loaders)
        assert len(fast) == len(slow) == 3
        for a, b in zip(fast, slow):
            assert [t.tolist() for t in a] == [t.tolist() for t in b]
            assert [t.dtype for t in a] == [t.dtype for t in b]


def epoch_order(loader):
    return [v // 10 for b in loader for v in b[1].tolist()]


def test_shuffle_is_a_permutation_repeated_by_the_seed():
    x, y = data(10)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
    tg.manual_seed(3)
    first, second = epoch_order(loader), epoch_order(loader)
    assert sorted(first) == list(range(10)) and first != second   # a new order each epoch
    tg.manual_seed(3)
    assert epoch_order(loader) == first and epoch_order(loader) == second
    seeded = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True,
                        generator=tg.Generator().manual_seed(0))
    again = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True,
                       generator=tg.Generator().manual_seed(0))
    assert epoch_order(seeded) == epoch_order(again) != list(range(10))


def test_a_generator_leaves_the_package_stream_alone():
    tg.manual_seed(0)
    expected = tg.rand(4).tolist()
    tg.manual_seed(0)
    g = tg.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    perm = tg.randperm(6, generator=g)
    assert perm.dtype is tg.int64 and sorted(perm.tolist()) == list(range(6))
    assert tg.rand(4).tolist() == expected
    assert tg.randperm(6, generator=tg.Generator().manual_seed(5)).tolist() == perm.tolist()
    with pytest.raises(TypeError, match="seed must be an int"):
        tg.Generator().manual_seed(1.5)
    with pytest.raises(ValueError, match="non-negative int"):
        tg.randperm(-1)


Sample = collections.namedtuple("Sample", "image label")


class Records(Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        return {"x": tg.full((2,), float(i)), "label": i, "weight": i / 2, "name": f"s{i}",
                "pair": (i, tg.tensor([i, -i])), "flag": i > 0}


def test_default_collate_of_dicts_tuples_numbers_and_strings():
    (batch,) = list(DataLoader(Records(), batch_size=3))
    assert batch["x"].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    assert batch["label"].tolist() == [0, 1, 2] and batch["label"].dtype is tg.int64
    assert batch["weight"].tolist() == [0.0, 0.5, 1.0] and batch["weight"].dtype is tg.float64
    assert batch["name"] == ["s0", "s1", "s2"]
    assert batch["flag"].dtype is tg.bool and batch["flag"].tolist() == [False, True, True]
    numbers, pairs = batch["pair"]                           # a tuple collates to a list
    assert isinstance(batch["pair"], list) and numbers.tolist() == [0, 1, 2]
    assert pairs.tolist() == [[0, 0], [1, -1], [2, -2]]
    collated = default_collate([Sample(tg.zeros(2), 1), Sample(tg.ones(2), 0)])
    assert isinstance(collated, Sample) and collated.label.tolist() == [1, 0]
    assert collated.image.shape == (2, 2)
    assert default_collate([np.ones(2), np.zeros(2)]).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    loader = DataLoader(Records(), batch_size=2, collate_fn=lambda b: [s["label"] for s in b])
    assert list(loader) == [[0, 1], [2]]


def test_bad_arguments_are_named():
    x, y = data()
    with pytest.raises(ValueError, match=r"size mismatch.*\[5, 4\]"):
        TensorDataset(x, y[:4])
    with pytest.raises(TypeError, match="argument 1 must be a Tensor"):
        TensorDataset(x, [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            DataLoader(TensorDataset(x), batch_size=bad)
    with pytest.raises(TypeError, match="generator must be a stage2_tensor.Generator"):
        DataLoader(TensorDataset(x), shuffle=True, generator=3)
    with pytest.raises(TypeError, match="map-style"):
        DataLoader([1, 2, 3].__iter__())
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([tg.zeros(2), tg.zeros(3)])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object()])
    with pytest.raises(NotImplementedError, match="must define __getitem__"):
        Dataset()[0]
