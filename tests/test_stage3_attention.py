"""Fused attention (stage2_tensor/fused_attention.py, device "cpu"'s csrc/attention.c, which
"cpu:lazy" records): on every device with the kernels, forward against numpy in float64,
gradients against central differences, both kernel variants, the fused path against the
plain composite, the GPT's two paths, and bad input refused before it reaches C; the
devices without them keep the composite. The variants and SIMD levels are device "cpu"'s."""

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import backend, fused_attention
from stage4_models.gpt import GPT, GPTConfig

from .engines import device_params, engines_on
from .gradcheck import gradcheck

pytestmark = pytest.mark.stage3

FUSED = device_params(kernel="attention")
EPS = {tg.float32: np.finfo(np.float32).eps, tg.float64: np.finfo(np.float64).eps}
NP = {tg.float32: np.float32, tg.float64: np.float64}


def pytest_generate_tests(metafunc):
    """A test of the kernels runs on each device with them: on device "cpu" with both, the
    flash-attention blocks and the per-row reference; on "cpu:lazy", which records cpu's
    calls, with the blocks (the default)."""
    if "variant" in metafunc.fixturenames:
        metafunc.parametrize("device, variant", [
            pytest.param(p.values[0], name, marks=p.marks, id=f"{name}-{p.id}")
            for p in FUSED for name in ("blocked", "naive") if p.id == "cpu" or name == "blocked"],
            indirect=["variant"])


@pytest.fixture
def variant(request, monkeypatch):
    """Device "cpu"'s attention kernels for the test (pytest_generate_tests)."""
    monkeypatch.setattr(backend.get("cpu"), "attention_variant", request.param)
    return request.param


def reference(q, k, v, offset, scale):
    """(out, lse) in float64 by the definition: softmax(scale q k^T + mask) v, query i
    seeing keys 0 .. i + offset (offset None: all)."""
    x = scale * q @ np.swapaxes(k, -1, -2)
    t, s = x.shape[-2:]
    if offset is not None:
        x = np.where(np.arange(s) <= np.arange(t)[:, None] + offset, x, -np.inf)
    m = x.max(-1, keepdims=True)
    e = np.exp(x - m)
    total = e.sum(-1, keepdims=True)
    return (e / total) @ v, (m + np.log(total))[..., 0]


def tensors(rng, dtype, *shapes, device="cpu"):
    return [tg.from_numpy(rng.standard_normal(s).astype(NP[dtype]), device=device) for s in shapes]


# T = 1, 7, 64, 130 (one block, a partial one, exactly one, two and a bit); head dims 8, 32,
# 64; B * H from 1 to 8; the keys as many as the queries (training) or more (a cache).
SHAPES = [(1, 1, 1, 1, 8), (2, 3, 7, 7, 8), (1, 2, 64, 64, 32), (2, 4, 130, 130, 32),
          (1, 1, 130, 130, 64), (2, 2, 7, 12, 64), (1, 3, 64, 130, 8), (1, 2, 65, 200, 128)]


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("mask", ["none", "causal", "cache"])
def test_forward_against_numpy(device, variant, dtype, shape, mask):
    b, h, t, s, d = shape
    e = d // 2 + 1                                  # values of another width than the keys
    offset = {"none": None, "causal": 0, "cache": s - t}[mask]
    rng = np.random.default_rng(t * d + s)
    q, k, v = tensors(rng, dtype, (b, h, t, d), (b, h, s, d), (b, h, s, e), device=device)
    scale = d ** -0.5
    out, lse = backend.get(device).attention(q.as_view(), k.as_view(), v.as_view(), offset, scale, dtype)
    # 4-D queries: the buffer holds (B, T, H, e), the heads interleaved
    out = tg.Tensor.from_buffer(out, (b, t, h, e), dtype, device).numpy().swapaxes(1, 2)
    lse = tg.Tensor.from_buffer(lse, (b, h, t), dtype, device).numpy()
    want, want_lse = reference(*(x.numpy().astype(np.float64) for x in (q, k, v)), offset, scale)
    # Each score is a sum of d products, each weight an exponential of one, each output a
    # sum over up to s keys: (d + s) roundings, relative to the values' size (the weights
    # sum to 1) or to the lse's.
    tol = (d + s) * EPS[dtype]
    np.testing.assert_allclose(out, want, rtol=0, atol=tol * np.abs(v.numpy()).max())
    np.testing.assert_allclose(lse, want_lse, rtol=0, atol=tol * max(1.0, np.abs(want_lse).max()))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [((2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 3)),    # training
                                   ((1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 2)),    # more keys
                                   ((2, 6, 3), (2, 4, 3), (2, 4, 5))],            # more queries, 3-D
                         ids=["self", "more_keys", "more_queries"])
def test_gradients_against_central_differences(device, variant, shape, causal):
    """float64, through F.scaled_dot_product_attention's fused path."""
    def fn(q, k, v):
        assert fused_attention.fused(q, k, v)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    rng = np.random.default_rng(3)
    gradcheck(*engines_on(device), fn, [rng.standard_normal(s) for s in shape], rtol=1e-6, atol=1e-8,
              reference=lambda q, k, v: reference(q, k, v, 0 if causal else None, q.shape[-1] ** -0.5)[0])


def test_a_scale_and_a_long_causal_sequence_against_central_differences(device, variant):
    """Three query blocks over three key blocks (T = 130 crosses two block edges), a scale of
    the caller's: the blocks' online softmax and the backward's recomputed weights."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 130, 2)) for _ in range(3))
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7)  # noqa: E731
    gradcheck(*engines_on(device), fn, [q, k, v], rtol=1e-6, atol=1e-8,
              reference=lambda q, k, v: reference(q, k, v, 0, 0.7)[0])


def plain(q, k, v, causal):
    """The composite every device runs: the weights, then @ v."""
    return F.attention_weights(q, k, None, causal) @ v


@pytest.mark.parametrize("hd", [16, 8, 40])                  # whole vectors, halves, both
@pytest.mark.parametrize("causal", [False, True])
def test_fused_equals_the_composite_in_float32(device, variant, causal, hd):
    """The GPT's layout: q, k, v three head views of one (B, T, 3C) projection (read in place
    by the kernels), the gradient arriving through the heads' transpose back to (B, T, C)."""
    B, T, H = 3, 70, 4
    rng = np.random.default_rng(5)
    qkv = rng.standard_normal((B, T, 3 * H * hd)).astype(np.float32)
    up = rng.standard_normal((B, T, H * hd)).astype(np.float32)
    results = []
    for fn in (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
               lambda q, k, v: plain(q, k, v, causal)):
        x = tg.from_numpy(qkv, device=device).requires_grad_()
        q, k, v = (t.view(B, T, H, hd).transpose(1, 2) for t in x.split(H * hd, dim=2))
        y = fn(q, k, v).transpose(1, 2).reshape(B, T, H * hd)
        (y * tg.from_numpy(up, device=device)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    (y_fused, g_fused), (y_plain, g_plain) = results
    # both float32 computations of the same sums, in another order: T + hd roundings each
    tol = (T + hd) * EPS[tg.float32]
    np.testing.assert_allclose(y_fused, y_plain, rtol=0, atol=tol * np.abs(qkv).max())
    np.testing.assert_allclose(g_fused, g_plain, rtol=0, atol=tol * np.abs(g_plain).max())


def test_outputs_interleave_the_heads_so_that_concatenating_them_is_a_view(device, variant):
    """(B, H, T, e) results whose buffer holds (B, T, H, e), as PyTorch's CPU kernel gives
    them: the heads side by side again is a view; the gradients are laid out alike."""
    q, k, v = (tg.ones(2, 3, 5, 4, device=device).requires_grad_() for _ in range(3))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert y.shape == (2, 3, 5, 4) and y.transpose(1, 2).is_contiguous()
    y.transpose(1, 2).reshape(2, 5, 12).sum().backward()
    for t in (q, k, v):
        assert t.grad.shape == (2, 3, 5, 4) and t.grad.transpose(1, 2).is_contiguous()
    np.testing.assert_allclose(v.grad.numpy()[0, 0, :, 0], [137 / 60, 77 / 60, 47 / 60, 9 / 20, 1 / 5])


def test_the_two_variants_agree_on_a_strided_float32_batch():
    rng = np.random.default_rng(6)
    q, k, v = tensors(rng, tg.float32, (2, 130, 3, 32), (2, 150, 3, 32), (2, 150, 3, 32))
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))     # rows 3 * 32 apart, heads 32 apart
    cpu = backend.get("cpu")
    outs = []
    for name in ("naive", "blocked"):
        cpu.attention_variant = name
        try:
            out, lse = cpu.attention(q.as_view(), k.as_view(), v.as_view(), 20, 0.2, tg.float32)
        finally:
            cpu.attention_variant = "blocked"
        outs.append((tg.Tensor.from_buffer(out, (2, 3, 130, 32), tg.float32, "cpu").numpy(),
                     tg.Tensor.from_buffer(lse, (2, 3, 130), tg.float32, "cpu").numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=0, atol=(32 + 150) * EPS[tg.float32] * 4)


def both_variants(q, k, v, grad, offset, scale, dtype):
    """{variant: [out, lse, dq, dk, dv]} of the kernels on (B, H, T, d) views, as the
    buffers they fill; both backward passes take the naive forward's out and lse."""
    cpu = backend.get("cpu")
    (b, h, t, _), e = q.shape, v.shape[-1]
    results = {}
    try:
        for name in ("naive", "blocked"):
            cpu.attention_variant = name
            results[name] = list(cpu.attention(q.as_view(), k.as_view(), v.as_view(), offset, scale, dtype))
        out = tg.Tensor.from_buffer(results["naive"][0], (b, t, h, e), dtype, "cpu").transpose(1, 2)
        lse = tg.Tensor.from_buffer(results["naive"][1], (b, h, t), dtype, "cpu")
        for name in ("naive", "blocked"):
            cpu.attention_variant = name
            results[name] += cpu.attention_backward(grad.as_view(), q.as_view(), k.as_view(), v.as_view(),
                                                    out.as_view(), lse.as_view(), offset, scale, dtype)
    finally:
        cpu.attention_variant = "blocked"
    return {name: [tg.Tensor.from_buffer(x, (len(x),), dtype, "cpu").numpy() for x in buffers]
            for name, buffers in results.items()}


# (B, H, T, S, d, e, offset): head dims that fill whole vectors, half ones and leave tails at
# every width (2 to 16 lanes); fewer rows than a register tile, rows past a block of 64;
# keys in two blocks and a part under a cache's offset
LEVEL_CASES = [(1, 2, 7, 7, 3, 5, 0), (2, 3, 70, 70, 8, 8, 0), (1, 2, 70, 70, 40, 24, None),
               (1, 1, 5, 133, 13, 67, 128), (1, 2, 130, 130, 64, 1, 0), (1, 1, 66, 66, 16, 20, 0)]


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64], ids=lambda d: d.name)
def test_the_blocked_kernels_equal_the_naive_ones_at_every_simd_level(simd_level, dtype):
    """Each SIMD level has its own copy of the blocks' tile products, its vectors the level's
    width and half that (csrc/attention_tile_t.h, attention_kernel_t.h): every copy against
    the naive kernels, forward and backward, over shapes that reach each of its column and
    row cases."""
    for b, h, t, s, d, e, offset in LEVEL_CASES:
        rng = np.random.default_rng(t * d + e)
        q, k, v, grad = tensors(rng, dtype, (b, h, t, d), (b, h, s, d), (b, h, s, e), (b, h, t, e))
        got = both_variants(q, k, v, grad, offset, d ** -0.5, dtype)
        # sums of d, e and s terms (scores, dp, the sums over keys): as many roundings,
        # relative to each result's largest entry (the naive kernels sum in double)
        tol = (d + e + s) * EPS[dtype]
        for name, a, want in zip(["out", "lse", "dq", "dk", "dv"], got["blocked"], got["naive"]):
            np.testing.assert_allclose(a, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()),
                                       err_msg=f"{name} of {(b, h, t, s, d, e, offset)} at {simd_level}")


@pytest.mark.parametrize("device", device_params(lacking="attention"))
def test_devices_without_the_kernels_keep_the_composite(device):
    q = tg.ones(1, 2, 3, 4, device=device)
    assert not fused_attention.fused(q, q, q)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_allclose(out.numpy(), np.ones((1, 2, 3, 4)))


@pytest.mark.parametrize("device", FUSED)
def test_what_the_fused_path_does_not_take_goes_to_the_composite(device):
    q = tg.ones(2, 3, 4, device=device)
    assert fused_attention.fused(q, q, q)
    assert not fused_attention.fused(q, q.double(), q.double())           # mixed dtypes
    assert not fused_attention.fused(q, q[:1], q[:1])                      # batch broadcast
    assert not fused_attention.fused(q.half(), q.half(), q.half())         # half: the composite
    assert not fused_attention.fused(q[:, :0], q, q)                       # nothing to compute
    mask = tg.ones(3, 3, dtype=tg.bool, device=device)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)  # a mask: the composite
    np.testing.assert_allclose(out.numpy(), np.ones((2, 3, 4)))
    assert F.scaled_dot_product_attention(q, q[:1], q[:1]).shape == (2, 3, 4)   # broadcast


@pytest.mark.parametrize("device", FUSED)
def test_bad_inputs_are_refused_with_clear_errors(device):
    q = tg.ones(2, 3, 4, device=device)
    with pytest.raises(TypeError, match="one floating dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(TypeError, match="one floating dtype"):
        F.scaled_dot_product_attention(q.long(), q.long(), q.long())
    with pytest.raises(ValueError, match=r"key \(\.\.\., S, d\)"):
        F.scaled_dot_product_attention(q, tg.ones(2, 3, 5, device=device), q)
    with pytest.raises(ValueError, match=r"value \(\.\.\., S, e\)"):
        F.scaled_dot_product_attention(q, q, tg.ones(2, 5, 4, device=device))
    with pytest.raises(ValueError, match="at least 2-D"):
        F.scaled_dot_product_attention(tg.ones(4, device=device), q, q)
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.scaled_dot_product_attention(q, [[1.0]], q)


@pytest.mark.parametrize("device", FUSED)
def test_the_kernels_contracts_stop_bad_views_before_c(device):
    be = backend.get(device)
    q, k = tg.ones(2, 3, 4, device=device), tg.ones(3, 3, 4, device=device)
    with pytest.raises(ValueError, match="same batch dimensions"):
        be.attention(q.as_view(), k.as_view(), k.as_view(), None, 0.5, tg.float32)
    with pytest.raises(ValueError, match="S >= 1"):
        e = tg.ones(2, 0, 4, device=device)
        be.attention(q.as_view(), e.as_view(), e.as_view(), None, 0.5, tg.float32)
    for causal in (-1, True, 0.5):
        with pytest.raises(ValueError, match="offset >= 0"):
            be.attention(q.as_view(), q.as_view(), q.as_view(), causal, 0.5, tg.float32)
    with pytest.raises(ValueError, match="finite"):
        be.attention(q.as_view(), q.as_view(), q.as_view(), None, float("nan"), tg.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        be.attention(q.as_view(), q.as_view(), q.as_view(), None, 0.5, tg.int64)
    out, lse = tg.ones(2, 3, 4, device=device), tg.ones(2, 3, device=device)
    with pytest.raises(ValueError, match="lse has shape"):
        be.attention_backward(q.as_view(), q.as_view(), q.as_view(), q.as_view(), out.as_view(),
                               out.as_view(), None, 0.5, tg.float32)
    with pytest.raises(ValueError, match="grad has shape"):
        be.attention_backward(lse.as_view(), q.as_view(), q.as_view(), q.as_view(), out.as_view(),
                               lse.as_view(), None, 0.5, tg.float32)


@pytest.mark.stage4
@pytest.mark.parametrize("device", FUSED)
def test_gpt_loss_and_gradients_equal_on_both_paths(device):
    """The same model and batch through the fused kernels and through the explicit path
    (keep_attention: the attention figure's), in float32."""
    config = GPTConfig(vocab_size=11, block_size=70, n_layer=2, n_head=2, n_embd=16)
    tg.seed(0)
    model = GPT(config, device=device)
    rng = np.random.default_rng(0)
    idx, targets = (tg.from_numpy(rng.integers(0, 11, (3, 70)), device=device) for _ in range(2))
    results = []
    for keep in (False, True):
        for block in model.transformer.h:
            block.attn.keep_attention = keep
        model.zero_grad()
        _, loss = model(idx, targets)
        loss.backward()
        assert (model.transformer.h[0].attn.last_attention is not None) == keep
        results.append((loss.item(), [p.grad.numpy().copy() for p in model.parameters()]))
    (fused_loss, fused_grads), (plain_loss, plain_grads) = results
    assert fused_loss == pytest.approx(plain_loss, rel=1e-5)
    for a, b in zip(fused_grads, plain_grads):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * max(1e-3, np.abs(b).max()))


@pytest.mark.stage4
@pytest.mark.parametrize("device", FUSED)
def test_gpt_generation_with_the_cache_equals_without(device):
    """Generation runs the fused kernels on the prompt (causal) and on each new token (all
    keys of the cache): the same greedy tokens as the uncached explicit loop."""
    config = GPTConfig(vocab_size=13, block_size=32, n_layer=2, n_head=2, n_embd=16)
    tg.seed(1)
    model = GPT(config, device=device)
    prompt = tg.tensor([[1, 2, 3, 4, 5]], device=device)
    cached = model.generate(prompt, 20, greedy=True, use_cache=True)
    for block in model.transformer.h:
        block.attn.keep_attention = True
    uncached = model.generate(prompt, 20, greedy=True, use_cache=False)
    assert cached.tolist() == uncached.tolist()


@pytest.mark.stage4
@pytest.mark.parametrize("device", FUSED)
def test_gpt_several_new_positions_after_the_cache_see_the_right_keys(device):
    """A second chunk of T > 1 tokens after cached ones (the kernels' causal offset: query i
    of the chunk sees keys 0 .. past + i): the logits of a full forward pass on the explicit
    path, position by position."""
    from stage4_models.gpt.kv_cache import KVCache
    config = GPTConfig(vocab_size=13, block_size=32, n_layer=2, n_head=2, n_embd=16)
    tg.seed(2)
    model = GPT(config, device=device)
    idx = tg.tensor([[1, 5, 2, 7, 3, 3, 9, 0, 4]], device=device)
    cache = KVCache()
    first = model(idx[:, :5], cache=cache)
    second = model(idx[:, 5:], cache=cache)
    assert model.transformer.h[0].attn.last_attention is None          # fused, both chunks
    for block in model.transformer.h:
        block.attn.keep_attention = True
    full = model(idx)
    got = np.concatenate([first.detach().numpy(), second.detach().numpy()], axis=1)
    np.testing.assert_allclose(got, full.detach().numpy(), rtol=0, atol=1e-5)


@pytest.mark.parametrize("offset", [None, 0, 20])
def test_gradients_over_several_tiles_equal_the_composite_in_float64(device, variant, offset):
    """Three query tiles over three key tiles with vectors' tails (d 40, e 24), under no mask,
    the causal one and a cache's offset (queries the last 130 of 150 keys would be offset 20):
    the blocked backward's staircase of skipped products against the composite's gradients,
    to float64 rounding."""
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 130, 40), (2, 3, 150, 40), (2, 3, 150, 24))]
    up = rng.standard_normal((2, 3, 130, 24))
    mask = None if offset is None else tg.from_numpy(
        np.arange(150) <= np.arange(130)[:, None] + offset, device=device)
    grads = []
    for fused in (True, False):
        q, k, v = (tg.from_numpy(a, device=device).requires_grad_() for a in arrays)
        y = fused_attention.attention(q, k, v, offset) if fused else plain_masked(q, k, v, mask)
        (y * tg.from_numpy(up, device=device)).sum().backward()
        grads.append([y.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=0, atol=200 * EPS[tg.float64] * max(1.0, np.abs(b).max()))


def plain_masked(q, k, v, mask):
    return F.attention_weights(q, k, mask) @ v
