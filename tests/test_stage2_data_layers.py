"""stage2_tensor.utils.data (Dataset, TensorDataset, DataLoader, default_collate), Generator
and randperm, and the layers nn.Upsample, nn.Dropout1d/2d/3d, F.pixel_shuffle and
nn.PixelShuffle, nn.MultiheadAttention: against numpy or a direct definition, gradients by
central differences on the python and cpu engines, PyTorch as an optional oracle."""
import collections
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.utils.data
from stage2_tensor.nn.attention import multi_head_attention_forward
from stage2_tensor.utils.data import DataLoader, Dataset, TensorDataset, default_collate

from .engines import engine_params, engines_on
from .gradcheck import gradcheck

ENGINES_ = engine_params(engines_on("python", "cpu"))


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
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(TensorDataset(x), persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(TensorDataset(x), prefetch_factor=2)
    with pytest.raises(TypeError, match="worker_init_fn must be callable, got int"):
        DataLoader(TensorDataset(x), num_workers=1, worker_init_fn=1)


def test_worker_options_are_accepted_and_batches_stay_the_same():
    x, y = data()                 # pytorch/examples' accelerator settings: workers, pinned memory
    loader = DataLoader(TensorDataset(x, y), batch_size=2, num_workers=1, persistent_workers=True,
                        pin_memory=True, prefetch_factor=2, worker_init_fn=print)
    plain = DataLoader(TensorDataset(x, y), batch_size=2)
    assert [b[0].tolist() for b in loader] == [b[0].tolist() for b in plain] and len(loader) == 3


# ---- pixel shuffle ---------------------------------------------------------------------------
def shuffle_ref(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // r**2, r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // r**2, h * r, w * r)


def test_pixel_shuffle_against_numpy_and_its_inverse():
    x = np.arange(2 * 8 * 3 * 2, dtype=np.float64).reshape(2, 8, 3, 2)
    t = tg.tensor(x.tolist(), dtype=tg.float64)
    out = F.pixel_shuffle(t, 2)
    assert out.shape == (2, 2, 6, 4) and np.array_equal(array(out), shuffle_ref(x, 2))
    assert np.array_equal(array(nn.PixelShuffle(2)(t)), shuffle_ref(x, 2))
    assert array(F.pixel_unshuffle(out, 2)).tolist() == x.tolist()
    assert array(nn.PixelUnshuffle(2)(out)).tolist() == x.tolist()
    assert np.array_equal(array(F.pixel_shuffle(t[0], 2)), shuffle_ref(x[0], 2))   # (C, H, W)
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    with pytest.raises(ValueError, match=r"channel dimension \(8\).*divisible by upscale_factor squared \(9\)"):
        F.pixel_shuffle(t, 3)
    with pytest.raises(ValueError, match="height and width.*divisible by downscale_factor"):
        F.pixel_unshuffle(t, 2)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        F.pixel_shuffle(t[0, 0], 1)
    with pytest.raises(ValueError, match="upscale_factor must be a positive int"):
        nn.PixelShuffle(0)


def test_pixel_shuffle_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=(2, 3, 18, 2, 4))
    t = tg.tensor(x.tolist(), dtype=tg.float64)
    expected = torch.nn.functional.pixel_shuffle(torch.tensor(x), 3).numpy()
    assert np.array_equal(array(F.pixel_shuffle(t, 3)), expected)
    expected = torch.nn.functional.pixel_unshuffle(torch.tensor(x), 2).numpy()
    assert np.array_equal(array(F.pixel_unshuffle(t, 2)), expected)


@pytest.mark.parametrize("engine", ENGINES_)
def test_pixel_shuffle_gradients(engine):
    x = np.random.default_rng(1).normal(size=(1, 4, 2, 1))
    value = gradcheck(engine, lambda t: F.pixel_unshuffle(F.pixel_shuffle(t, 2) * t.sum(), 2), [x])
    np.testing.assert_allclose(value, x * x.sum(), rtol=1e-12)


# ---- channel dropout -------------------------------------------------------------------------
def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    tg.manual_seed(0)
    x = np.random.default_rng(2).uniform(1, 2, size=(40, 50, 2, 3))
    t = tg.tensor(x.tolist(), dtype=tg.float64, requires_grad=True)
    layer = nn.Dropout2d(0.3)
    out = layer(t)
    ratio = array(out) / x
    per_channel = ratio.reshape(40, 50, 6)
    assert np.allclose(per_channel, per_channel[..., :1])            # one decision per (n, c)
    assert set(np.round(np.unique(ratio), 12)) == {0.0, round(1 / 0.7, 12)}
    dropped = (per_channel[..., 0] == 0).mean()
    assert abs(dropped - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 2000)       # 5 standard errors
    out.sum().backward()
    np.testing.assert_allclose(array(t.grad), ratio, rtol=1e-12)      # dx = dy * mask
    layer.eval()
    assert layer(t) is t
    assert repr(layer) == "Dropout2d(p=0.3, inplace=False)"


def test_channel_dropout_seeding_shapes_and_errors():
    x = tg.ones(3, 4, 2, 2)
    tg.manual_seed(7)
    a = F.dropout2d(x, 0.5)
    tg.manual_seed(7)
    assert F.dropout2d(x, 0.5).tolist() == a.tolist()
    assert F.dropout2d(x, 0.0) is x and F.dropout2d(x, 0.5, training=False) is x
    assert array(F.dropout2d(x, 1.0)).sum() == 0
    with pytest.warns(UserWarning, match=r"3D input.*\(N, C, L\)"):
        three = array(F.dropout2d(tg.ones(2, 3, 4), 0.5))
    assert np.allclose(three, three[..., :1])
    one = array(nn.Dropout1d(0.5)(tg.ones(4, 5, 3)))
    assert np.allclose(one, one[..., :1])
    cube = array(nn.Dropout3d(0.5)(tg.ones(2, 3, 2, 2, 2))).reshape(2, 3, 8)
    assert np.allclose(cube, cube[..., :1])
    with pytest.raises(ValueError, match=r"3-D \(C, \.\.\.\) or 4-D \(N, C, \.\.\.\)"):
        F.dropout2d(tg.ones(2, 2, 2, 2, 2), 0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)
    x = tg.ones(2, 3, 2, 2)
    assert nn.Dropout2d(0.5, inplace=True)(x) is x                  # written into x, by channel
    written = array(x).reshape(2, 3, 4)
    assert np.allclose(written, written[..., :1]) and set(np.unique(written)) <= {0.0, 2.0}


# ---- Upsample --------------------------------------------------------------------------------
def test_upsample_is_interpolate():
    x = tg.tensor(np.random.default_rng(3).normal(size=(1, 2, 3, 4)).tolist())
    cases = [(dict(scale_factor=2), dict(scale_factor=2.0)),
             (dict(size=(5, 7), mode="bilinear", align_corners=True),
              dict(size=(5, 7), mode="bilinear", align_corners=True)),
             (dict(scale_factor=(1.5, 2), mode="bilinear"),
              dict(scale_factor=(1.5, 2.0), mode="bilinear"))]
    for layer_args, fn_args in cases:
        assert nn.Upsample(**layer_args)(x).tolist() == F.interpolate(x, **fn_args).tolist()
    assert array(nn.Upsample(scale_factor=2)(x))[0, 1, 5, 7] == array(x)[0, 1, 2, 3]
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(3, 4), mode="bilinear")) == "Upsample(size=(3, 4), mode='bilinear')"
    with pytest.raises(ValueError, match="either size or scale_factor"):
        nn.Upsample()
    with pytest.raises(ValueError, match="mode must be"):
        nn.Upsample(scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners only applies"):
        nn.Upsample(scale_factor=2, align_corners=True)


# ---- MultiheadAttention ----------------------------------------------------------------------
def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(q, k, v, w, b, wo, bo, heads, mask=0.0):
    """Sequence-first numpy multi-head attention: (out (L, N, E), weights (N, H, L, S))."""
    (L, N, E), S, hd = q.shape, k.shape[0], q.shape[-1] // heads

    def split(x, i, n):
        return (x @ w[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]).reshape(n, N, heads, hd).transpose(1, 2, 0, 3)

    qh, kh, vh = split(q, 0, L), split(k, 1, S), split(v, 2, S)
    weights = softmax(qh @ kh.swapaxes(-1, -2) / math.sqrt(hd) + mask)
    out = (weights @ vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    return out @ wo.T + bo, weights


def mha(E=4, H=2, **kw):
    tg.manual_seed(0)
    return nn.MultiheadAttention(E, H, dtype=tg.float64, **kw)


def weights_of(m):
    return [array(p) for p in (m.in_proj_weight, m.in_proj_bias, m.out_proj.weight, m.out_proj.bias)]


def inputs(L=3, S=4, N=2, E=4, seed=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(L, N, E)), rng.normal(size=(S, N, E)), rng.normal(size=(S, N, E))


def f64(x):
    return tg.tensor(np.asarray(x).tolist(), dtype=tg.float64)


def test_multihead_attention_parameters_and_initialisation():
    m = nn.MultiheadAttention(8, 2)
    assert [n for n, _ in m.named_parameters()] == ["in_proj_weight", "in_proj_bias",
                                                    "out_proj.weight", "out_proj.bias"]
    assert m.in_proj_weight.shape == (24, 8) and isinstance(m.out_proj, nn.Linear)
    assert array(m.in_proj_bias).tolist() == [0.0] * 24 and array(m.out_proj.bias).tolist() == [0.0] * 8
    w = array(m.in_proj_weight)
    bound = math.sqrt(6 / (8 + 24))                     # xavier_uniform_: fan_in 8, fan_out 24
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert [n for n, _ in nn.MultiheadAttention(4, 1, bias=False).named_parameters()] == \
        ["in_proj_weight", "out_proj.weight"]


def test_multihead_attention_against_numpy_with_masks():
    m = mha()
    q, k, v = inputs()
    attn_mask = np.array([[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=bool)   # True: hidden
    padding = np.array([[0, 0, 0, 0], [0, 1, 0, 0]], dtype=bool)
    additive = np.where(attn_mask, -np.inf, 0)[None, None] + np.where(padding, -np.inf, 0)[:, None, None]
    expected, weights = mha_ref(q, k, v, *weights_of(m), 2, additive)
    out, w = m(f64(q), f64(k), f64(v), key_padding_mask=tg.tensor(padding.tolist()),
               attn_mask=tg.tensor(attn_mask.tolist()))
    np.testing.assert_allclose(array(out), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(array(w), weights.mean(1), rtol=1e-12, atol=1e-14)
    float_mask = f64(np.where(attn_mask, -np.inf, 0.0))
    out2, w2 = m(f64(q), f64(k), f64(v), attn_mask=float_mask, average_attn_weights=False)
    expected2, weights2 = mha_ref(q, k, v, *weights_of(m), 2, np.where(attn_mask, -np.inf, 0))
    np.testing.assert_allclose(array(out2), expected2, rtol=1e-12, atol=1e-14)
    assert w2.shape == (2, 2, 3, 4)
    np.testing.assert_allclose(array(w2), weights2, rtol=1e-12, atol=1e-14)
    per_head = np.random.default_rng(5).normal(size=(4, 3, 4))           # (N H, L, S), additive
    out3, _ = m(f64(q), f64(k), f64(v), attn_mask=f64(per_head))
    np.testing.assert_allclose(array(out3), mha_ref(q, k, v, *weights_of(m), 2,
                                                    per_head.reshape(2, 2, 3, 4))[0], rtol=1e-12)
    assert m(f64(q), f64(k), f64(v), need_weights=False)[1] is None


def test_multihead_attention_batch_first_unbatched_and_dropout():
    m, first = mha(), mha(batch_first=True)
    q, k, v = inputs()
    out, w = m(f64(q), f64(k), f64(v))
    out_bf, w_bf = first(*(f64(x.transpose(1, 0, 2)) for x in (q, k, v)))
    np.testing.assert_allclose(array(out_bf), array(out).transpose(1, 0, 2), rtol=1e-12)
    np.testing.assert_allclose(array(w_bf), array(w), rtol=1e-12)
    one, w_one = m(f64(q[:, 0]), f64(k[:, 0]), f64(v[:, 0]))               # unbatched (L, E)
    np.testing.assert_allclose(array(one), array(out)[:, 0], rtol=1e-12)
    assert w_one.shape == (3, 4)
    dropping = mha(dropout=0.5)
    _, dropped = dropping(f64(q), f64(k), f64(v), average_attn_weights=False)
    sums = array(dropped).sum(-1)
    assert not np.allclose(sums, 1.0)                                      # weights dropped out
    kept = 2 * array(all_heads(dropping, q, k, v))                         # 1 / (1 - p) = 2
    assert np.all(np.isclose(array(dropped), 0) | np.isclose(array(dropped), kept, rtol=1e-12))
    dropping.eval()
    np.testing.assert_allclose(array(dropping(f64(q), f64(k), f64(v))[0]), array(out), rtol=1e-12)


def all_heads(m, q, k, v):
    """m's attention weights per head without dropout (in eval mode)."""
    training = m.training
    m.eval()
    w = m(f64(q), f64(k), f64(v), average_attn_weights=False)[1]
    m.train(training)
    return w


def test_multihead_attention_errors():
    with pytest.raises(ValueError, match=r"embed_dim \(6\) must be divisible by num_heads \(4\)"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="kdim and vdim"):
        nn.MultiheadAttention(4, 2, kdim=3)
    with pytest.raises(ValueError, match="add_bias_kv is not supported"):
        nn.MultiheadAttention(4, 2, add_bias_kv=True)
    m = mha()
    q, k, v = (f64(x) for x in inputs())
    with pytest.raises(ValueError, match=r"attn_mask must be of shape \(3, 4\) or \(4, 3, 4\)"):
        m(q, k, v, attn_mask=tg.zeros(4, 3, dtype=tg.float64))
    with pytest.raises(ValueError, match=r"key_padding_mask must be of shape \(2, 4\)"):
        m(q, k, v, key_padding_mask=tg.tensor([[True] * 3] * 2))
    with pytest.raises(ValueError, match="sequence first unless batch_first"):
        m(q, k[:, :1], v)
    with pytest.raises(ValueError, match="must all be 3-D"):
        m(q, k[:, 0], v)
    with pytest.raises(RuntimeError, match="is_causal is a hint"):
        m(q, k, v, is_causal=True)
    with pytest.raises(TypeError, match="bool or floating-point"):
        m(q, k, v, attn_mask=tg.zeros(3, 4, dtype=tg.int64))


def test_multihead_attention_matches_pytorch():
    torch = pytest.importorskip("torch")
    m = mha(batch_first=True)
    ref = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p, w in zip((ref.in_proj_weight, ref.in_proj_bias, ref.out_proj.weight, ref.out_proj.bias),
                        weights_of(m)):
            p.copy_(torch.tensor(w))
    q, k, v = (x.transpose(1, 0, 2) for x in inputs())
    padding = np.array([[0, 0, 1, 0], [1, 0, 0, 0]], dtype=bool)
    causal = np.triu(np.ones((3, 4), dtype=bool), 1)
    for average in (True, False):
        expected = ref(*(torch.tensor(x) for x in (q, k, v)), key_padding_mask=torch.tensor(padding),
                       attn_mask=torch.tensor(causal), average_attn_weights=average)
        got = m(f64(q), f64(k), f64(v), key_padding_mask=tg.tensor(padding.tolist()),
                attn_mask=tg.tensor(causal.tolist()), average_attn_weights=average)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(array(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES_)
def test_multihead_attention_gradients(engine):
    rng = np.random.default_rng(6)
    q, k, v = inputs(L=2, S=3, N=1)
    params = [rng.normal(size=(12, 4)), rng.normal(size=12), rng.normal(size=(4, 4)), rng.normal(size=4)]
    mask = tg.tensor([[False, True, False], [False, False, False]], device=engine.device)

    def fn(q, k, v, w, b, wo, bo):
        out, weights = multi_head_attention_forward(q, k, v, 2, w, b, wo, bo, attn_mask=mask)
        return out + weights.sum()

    value = gradcheck(engine, fn, [q, k, v, *params])
    out, weights = mha_ref(q, k, v, *params, 2, np.where(array(mask), -np.inf, 0))
    np.testing.assert_allclose(value, out + weights.mean(1).sum(), rtol=1e-10)


def test_samplers_pick_the_indices():
    x, y = data()
    seq = [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=2,
                                              sampler=stage2_tensor.utils.data.SequentialSampler(x))]
    assert seq == [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=2)]
    g = tg.Generator().manual_seed(5)
    shuffled = [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=5, shuffle=True, generator=g)]
    g = tg.Generator().manual_seed(5)                # shuffle=True is a RandomSampler with that generator
    sampled = [b[0].tolist() for b in DataLoader(TensorDataset(x), batch_size=5, sampler=tg.utils.data.RandomSampler(
        x, generator=g))]
    assert shuffled == sampled and sorted(map(tuple, shuffled[0])) == sorted(map(tuple, x.tolist()))
    endless = tg.utils.data.RandomSampler(x, replacement=True, num_samples=int(1e10))   # minGPT's stream
    loader = DataLoader(TensorDataset(x, y), batch_size=3, sampler=endless)
    assert len(loader) == math.ceil(1e10 / 3)
    batches = iter(loader)
    for _ in range(4):                                # read lazily: nothing of 1e10 is listed
        xb, yb = next(batches)
        assert xb.shape == (3, 2) and yb.shape == (3,)
    counts = collections.Counter(tg.utils.data.RandomSampler(x, replacement=True, num_samples=5000))
    assert set(counts) <= set(range(5)) and all(abs(c - 1000) < 5 * math.sqrt(1000 * 0.8) for c in counts.values())
    twice = list(tg.utils.data.RandomSampler(x, num_samples=7))     # one permutation, then 2 of the next
    assert sorted(twice[:5]) == list(range(5)) and len(twice) == 7
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(TensorDataset(x), shuffle=True, sampler=endless)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        tg.utils.data.RandomSampler(x, num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        tg.utils.data.RandomSampler(x, replacement=1)


def test_pytorchs_module_paths_import():
    # minGPT: from torch.utils.data.dataloader import DataLoader (and dataset, sampler)
    from stage2_tensor.utils.data.dataloader import DataLoader as loader_class
    from stage2_tensor.utils.data.dataset import Dataset as dataset_class
    from stage2_tensor.utils.data.sampler import RandomSampler as sampler_class
    assert loader_class is DataLoader and dataset_class is Dataset and sampler_class is tg.utils.data.RandomSampler
