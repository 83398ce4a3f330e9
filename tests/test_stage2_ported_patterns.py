"""Patterns from public PyTorch programs that a learner ports by changing the imports
(stage2_tensor/README.md, "Ported programs", lists them): written here in our own words, small, on
devices python and cpu, so that what those programs rely on stays working.

* a GPT: a ModuleDict of layers reached as attributes, ``apply`` of an initialiser, a causal
  mask as a non-persistent buffer filled with ``masked_fill``, one weight tied to two
  layers (trained and counted once), the last position read as ``logits[:, [-1], :]``,
  top-k filtering written ``logits[logits < v[:, [-1]]] = -inf``, sampling with multinomial;
* a convolutional classifier trained with Adadelta and StepLR (pytorch/examples' mnist);
* a DataLoader over an endless RandomSampler, gradient clipping and a disabled GradScaler
  (minGPT's and nanoGPT's loops), and the manual update ``param -= lr * param.grad``.
"""
import math

import numpy as np
import pytest

import stage2_tensor as torch
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim
from stage2_tensor.optim.lr_scheduler import StepLR
from stage2_tensor.utils.data import DataLoader, RandomSampler, TensorDataset

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")


class SelfAttention(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        # lower triangle: query i sees keys 0..i; recomputed, so not saved
        self.register_buffer("causal", torch.tril(torch.ones(context, context)).view(1, 1, context, context),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(self.causal[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).contiguous().view(B, T, C))


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, width=8, heads=2, context=6, layers=2):
        super().__init__()
        self.context = context
        self.body = nn.ModuleDict(dict(
            tokens=nn.Embedding(vocab, width),
            positions=nn.Embedding(context, width),
            blocks=nn.ModuleList([nn.Sequential(nn.LayerNorm(width), SelfAttention(width, heads, context))
                                  for _ in range(layers)]),
            norm=nn.LayerNorm(width)))
        self.head = nn.Linear(width, vocab, bias=False)
        self.body.tokens.weight = self.head.weight                  # tied: one matrix, two roles
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.body.tokens(idx) + self.body.positions(pos)
        for block in self.body.blocks:
            x = x + block(x)
        x = self.body.norm(x)
        if targets is None:
            return self.head(x[:, [-1], :]), None                   # the last position only
        logits = self.head(x)
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    @torch.no_grad()
    def generate(self, idx, steps, top_k):
        for _ in range(steps):
            logits, _ = self(idx[:, -self.context:])
            logits = logits[:, -1, :]
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


@pytest.mark.parametrize("device", DEVICES)
def test_a_gpt_built_the_way_public_code_builds_it_trains_and_samples(device, tmp_path):
    torch.manual_seed(0)
    model = TinyGPT().to(device)
    names = [n for n, _ in model.named_parameters()]
    assert "body.tokens.weight" in names and "head.weight" not in names       # the tied matrix, once, first name
    assert sum(p.numel() for p in model.parameters()) == 11 * 8 + 6 * 8 + 2 * (2 * 8 + 8 * 24 + 24 + 8 * 8 + 8) + 2 * 8
    assert "body.blocks.0.1.causal" not in model.state_dict()                  # non-persistent buffer
    std = float(np.std(model.head.weight.detach().numpy()))
    assert 0.01 < std < 0.03                                                    # apply(init) reached it
    data = torch.tensor([[(3 * i + j) % 11 for j in range(7)] for i in range(4)], device=device)
    x, y = data[:, :-1], data[:, 1:].clone()
    y[0, 0] = -1                                                                # an ignored target
    opt = optim.AdamW(model.parameters(), lr=3e-2, weight_decay=0.0)
    losses = []
    for _ in range(25):
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(11), abs=0.05)                  # uniform at the start
    assert losses[-1] < 0.5 * losses[0]                                         # the +3 pattern is learned
    assert model.body.tokens.weight is model.head.weight
    out = model.generate(data[:2, :2], steps=5, top_k=1)                        # top-1: greedy
    assert out.shape == (2, 7)
    assert out[0].tolist()[2:] == [(3 * 0 + j) % 11 for j in range(2, 7)]
    torch.save(model.state_dict(), tmp_path / "gpt.pt")
    again = TinyGPT().to(device)
    again.load_state_dict(torch.load(tmp_path / "gpt.pt"))
    assert again.body.tokens.weight is again.head.weight                      # still tied after loading
    np.testing.assert_allclose(again(x)[0].detach().numpy(), model(x)[0].detach().numpy(), rtol=1e-6)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(8 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = torch.flatten(self.dropout(x), 1)
        return F.log_softmax(self.fc(x), dim=1)


@pytest.mark.parametrize("device", DEVICES)
def test_a_cnn_trained_with_adadelta_and_step_lr(device):
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    labels = np.arange(24) % 3
    images = rng.normal(size=(24, 1, 8, 8)) * 0.3
    images[np.arange(24), 0, labels * 2, :] += 2.0                              # the class is a bright row
    loader = DataLoader(TensorDataset(torch.from_numpy(images.astype(np.float32)), torch.from_numpy(labels)),
                        batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
    model = SmallCNN().to(torch.device(device))
    optimizer = optim.Adadelta(model.parameters(), lr=5.0)   # Adadelta's first steps are ~sqrt(eps): a large lr
    scheduler = StepLR(optimizer, step_size=3, gamma=0.7)
    epoch_losses = []
    for _ in range(9):
        model.train()
        total = 0.0
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(data)
        epoch_losses.append(total / len(loader.dataset))
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(5.0 * 0.7 ** 3)
    assert epoch_losses[-1] < 0.3 * epoch_losses[0]
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            pred = model(data.to(device)).argmax(dim=1, keepdim=True)
            correct += pred.eq(target.to(device).view_as(pred)).sum().item()
    assert correct >= 20                                                        # of 24


@pytest.mark.parametrize("device", DEVICES)
def test_an_endless_sampler_loop_with_clipping_and_a_disabled_scaler(device):
    torch.manual_seed(2)
    x = torch.randn(32, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.25
    loader = DataLoader(TensorDataset(x, y), batch_size=8,
                        sampler=RandomSampler(x, replacement=True, num_samples=int(1e10)))
    model = nn.Linear(3, 1).to(device)
    opt = optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    batches = iter(loader)
    for step in range(150):
        xb, yb = next(batches)
        loss = F.mse_loss(model(xb.to(device)), yb.to(device))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        assert math.isfinite(float(norm))
        scaler.step(opt)
        scaler.update()
    np.testing.assert_allclose(model.weight.detach().numpy(), [[1.0, -2.0, 0.5]], atol=1e-2)
    with torch.no_grad():                                                       # the manual update
        for p in model.parameters():
            before = p.data_ptr()
            p -= 0.0 * p
            assert p.data_ptr() == before
    assert f"{loss:.3f}" == f"{loss.item():.3f}"
